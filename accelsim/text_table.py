"""Aligned plain-text tables, the one renderer of every table the commands print.

Columns are separated by two spaces; the columns named in ``left`` are left-justified, the
others (numbers) right-justified; trailing blanks are dropped. Cells are shown as given, so a
table can be compared and grepped as plain text (no markup, no wrapping to a terminal width),
except characters that are not printable (a newline or other control character in a layer name
from an ONNX model or a network file), which are shown escaped (``\\n``) by :func:`printable`, so a
name never starts a line of its own (one reading ``error: ...``, say).
"""

from __future__ import annotations

from typing import Collection, Sequence


def printable(text: str) -> str:
    """``text`` with every character that is not printable (newline, carriage return, tab, other
    control characters, line separators) written as its Python escape, e.g. ``\\n``."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def table_lines(rows: Sequence[Sequence[str]], left: Collection[int] = (0,)) -> list[str]:
    """``rows`` (the first one usually the header) as aligned lines."""
    rows = [[printable(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: Collection[int] = (0,)) -> str:
    """A header line and one line per row, aligned (see :func:`table_lines`)."""
    return "\n".join(table_lines([header, *rows], left))
