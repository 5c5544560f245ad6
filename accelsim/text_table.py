"""Aligned plain-text tables, the one renderer of every table the commands print.

Columns are separated by two spaces; the columns named in ``left`` are left-justified, the
others (numbers) right-justified; trailing blanks are dropped. Cells are shown as given, so a
table can be compared and grepped as plain text (no markup, no wrapping to a terminal width).
"""

from __future__ import annotations

from typing import Collection, Sequence


def table_lines(rows: Sequence[Sequence[str]], left: Collection[int] = (0,)) -> list[str]:
    """``rows`` (the first one usually the header) as aligned lines."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: Collection[int] = (0,)) -> str:
    """A header line and one line per row, aligned (see :func:`table_lines`)."""
    return "\n".join(table_lines([header, *rows], left))
