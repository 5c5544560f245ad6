"""Reader for SCALE-Sim's ``COMPUTE_REPORT.csv``.

SCALE-Sim (v2 and v3) writes one row per layer::

    LayerID, Total Cycles (incl. prefetch), Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,

(every line ends with a trailing comma; v2 has no ``Total Cycles (incl. prefetch)`` column).
``Total Cycles`` includes the stall cycles; SCALE-Sim's compute cycles are ``Total Cycles -
Stall Cycles``. The reader returns typed columns with snake_case names and adds
``compute_cycles``.
"""

from __future__ import annotations

from pathlib import Path

from accelsim.input_files import read_csv_rows
from accelsim.errors import InputError

# SCALE-Sim header -> (our column name, type)
COMPUTE_REPORT_COLUMNS: dict[str, tuple[str, type]] = {
    "LayerID": ("layer_id", int),
    "Total Cycles (incl. prefetch)": ("total_cycles_incl_prefetch", int),
    "Total Cycles": ("total_cycles", int),
    "Stall Cycles": ("stall_cycles", int),
    "Overall Util %": ("overall_util_percent", float),
    "Mapping Efficiency %": ("mapping_efficiency_percent", float),
    "Compute Util %": ("compute_util_percent", float),
}
REQUIRED = ("LayerID", "Total Cycles", "Stall Cycles")



def read_compute_report(path: str | Path):
    """A pandas DataFrame of a SCALE-Sim ``COMPUTE_REPORT.csv``: one row per layer with
    ``layer_id``, ``total_cycles_incl_prefetch`` (when present), ``total_cycles``,
    ``stall_cycles``, ``compute_cycles`` (= total - stall), and the three percentages.

    Raises InputError naming the file, line and column for a missing file, an unknown or
    missing column, a short row or a value that is not a number.
    """
    import pandas as pd

    source = str(path)
    rows = read_csv_rows(path, "SCALE-Sim compute report")
    if not rows:
        raise InputError("empty file; expected SCALE-Sim's COMPUTE_REPORT.csv header "
                         f"({', '.join(COMPUTE_REPORT_COLUMNS)})", source=source)
    header_line, header = rows[0]
    for name in header:
        if name not in COMPUTE_REPORT_COLUMNS:
            raise InputError(f"unknown column {name!r}; a COMPUTE_REPORT.csv has "
                             f"{', '.join(COMPUTE_REPORT_COLUMNS)}", source=source, line=header_line)
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; is this SCALE-Sim's COMPUTE_REPORT.csv?",
                         source=source, line=header_line)
    records = []
    for line, cells in rows[1:]:
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} values ({', '.join(header)}), got {len(cells)}",
                             source=source, line=line)
        record = {}
        for name, cell in zip(header, cells):
            column, kind = COMPUTE_REPORT_COLUMNS[name]
            try:
                value = kind(cell)
            except ValueError:
                expected = "an integer" if kind is int else "a number"
                raise InputError(f"column {name!r}: expected {expected}, got {cell!r}",
                                 source=source, line=line) from None
            record[column] = value
        if record["stall_cycles"] > record["total_cycles"]:
            raise InputError(f"Stall Cycles {record['stall_cycles']} exceed Total Cycles "
                             f"{record['total_cycles']}", source=source, line=line)
        record["compute_cycles"] = record["total_cycles"] - record["stall_cycles"]
        records.append(record)
    columns = [COMPUTE_REPORT_COLUMNS[n][0] for n in header] + ["compute_cycles"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    for name in header:
        column, kind = COMPUTE_REPORT_COLUMNS[name]
        frame[column] = frame[column].astype("int64" if kind is int else "float64")
    frame["compute_cycles"] = frame["compute_cycles"].astype("int64")
    return frame
