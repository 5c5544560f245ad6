"""Results files of long measurements (the co-search, pruning and baseline reports): a CSV with
one row per finished unit of work (a scheme, a layer, an optimizer), each row carrying its
provenance, appended as it finishes so that a stopped run keeps what it measured and the same
command goes on from there.

Every row starts with :data:`PROVENANCE_COLUMNS`: ``command`` (the exact command line),
``seed``, ``budgets`` (``name=value`` pairs joined with ``;``: what the run was allowed to
score), ``git_commit`` (``git rev-parse HEAD`` of the working directory, ``-dirty`` appended when
tracked files differ from it, ``unknown`` outside a repository) and ``date_utc`` (when the row
was written, ISO 8601); then the report's own columns. ``accelsim validate`` reads these files
(:func:`read_measurements`) and never runs the measurements.
"""

from __future__ import annotations

import csv
import os
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

from accelsim.errors import InputError
from accelsim.input_files import read_csv_rows

PROVENANCE_COLUMNS = ("command", "seed", "budgets", "git_commit", "date_utc")


def git_commit(directory: Path | None = None) -> str:
    """The commit checked out in ``directory`` (default: the working directory), with
    ``-dirty`` when tracked files differ from it; ``unknown`` when git cannot say."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=directory,
                                 capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("-dirty" if changed else "")


@dataclass(frozen=True)
class RunProvenance:
    """What a measurement ran: the command line, its seed, its budgets (name -> value) and the
    commit it ran from (taken when the run starts, so that editing files during a long run does
    not change what its rows say)."""

    command: str
    seed: int
    budgets: Mapping[str, object]
    commit: str = field(default_factory=git_commit)

    def cells(self) -> dict[str, str]:
        """The provenance columns of a row written now."""
        return {"command": self.command, "seed": str(self.seed),
                "budgets": ";".join(f"{k}={v}" for k, v in self.budgets.items()), "git_commit": self.commit,
                "date_utc": datetime.now(timezone.utc).replace(microsecond=0).isoformat()}


def read_measurements(path: Path, columns: Sequence[str], what: str) -> list[dict[str, str]]:
    """The rows of a results file as dicts (cells as written); an InputError naming the file and
    line when its header lacks one of :data:`PROVENANCE_COLUMNS` + ``columns`` or a row has a
    different number of cells than the header."""
    rows = read_csv_rows(path, what)
    if not rows:
        raise InputError(f"{what}: the file is empty, expected a header row", source=os.fspath(path))
    line, header = rows[0]
    missing = [c for c in (*PROVENANCE_COLUMNS, *columns) if c not in header]
    if missing:
        raise InputError(f"{what}: the header lacks the column(s) {', '.join(missing)}", source=os.fspath(path),
                         line=line)
    out = []
    for line, cells in rows[1:]:
        cells += [""] * (len(header) - len(cells))  # read_csv_rows drops trailing empty cells
        if len(cells) != len(header):
            raise InputError(f"{what}: expected {len(header)} cells as in the header, got {len(cells)}",
                             source=os.fspath(path), line=line)
        out.append(dict(zip(header, cells)))
    return out


class MeasurementFile:
    """A results file written a row at a time. Opening it for a command keeps the rows an
    earlier run of that very command wrote (:attr:`done`); rows of another command in it are an
    InputError (the file would mix two measurements)."""

    def __init__(self, path: Path, columns: Sequence[str], provenance: RunProvenance, what: str):
        self.path = path
        self.columns = (*PROVENANCE_COLUMNS, *columns)
        self.provenance = provenance
        self.done: list[dict[str, str]] = []
        if path.is_file() and path.stat().st_size:
            rows = read_measurements(path, columns, what)
            other = [r["command"] for r in rows if r["command"] != provenance.command]
            if other:
                raise InputError(f"{what}: it holds rows of another command ({other[0]}); remove it or write "
                                 "elsewhere", source=os.fspath(path))
            self.done = rows
        elif not path.parent.is_dir():
            raise InputError(f"{what}: its directory {path.parent.as_posix()} does not exist", source=os.fspath(path))

    def append(self, row: Mapping[str, object]) -> dict[str, str]:
        """Write one row (the report's columns; the provenance is added) and flush it to disk."""
        cells = {**self.provenance.cells(), **{k: "" if v is None else str(v) for k, v in row.items()}}
        new = not (self.path.is_file() and self.path.stat().st_size)
        with self.path.open("a", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, self.columns, lineterminator="\n")
            if new:
                writer.writeheader()
            writer.writerow(cells)
            f.flush()
            os.fsync(f.fileno())
        self.done.append(cells)
        return cells
