"""Reading other tools' CSV files (MAESTRO results, SCALE-Sim topologies and reports)."""

from __future__ import annotations

import csv
from pathlib import Path

from accelsim.errors import InputError


def read_csv_rows(path: str | Path, what: str) -> list[tuple[int, list[str]]]:
    """The non-blank rows of a CSV file as ``(line number, cells)``: cells stripped of blanks,
    trailing empty cells (a trailing comma) dropped. ``what`` names the file's kind in the
    InputError raised when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(path)) from None
    rows = []
    for line, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row]
        while cells and cells[-1] == "":
            cells.pop()
        if cells:
            rows.append((line, cells))
    return rows
