"""Results of other tools, as metrics per layer (see accelsim.compare.metrics).

MAESTRO's CSV (``--print_res_csv_file=true``) has one row per layer, layers named in the
column ``Layer Number``, columns separated by ``", "`` (so the names carry leading blanks,
``L2 SRAM Size Req (Bytes)`` two of them, which we strip), rows sometimes ending in a comma,
and per tensor (``input``, ``filter``, ``output``) the columns ``<tensor> l1 read``,
``<tensor> l1 write``, ``<tensor> l2 read``, ``<tensor> l2 write``. It has no DRAM counts. Its
``L1/L2 SRAM Size Req (Bytes)`` columns hold element counts (mapped volumes, doubled for double
buffering), so we multiply them by the word size. MAESTRO appends to an existing CSV on every
run, so a layer that appears twice is refused rather than guessed. accelsim's own CSV (``simulate
--csv``, recognised by its ``accelsim Version`` column) reads the same way, with its sizes
already in bytes and only its ``complete`` rows taken. A name written with a leading single quote
before ``=``, ``+``, ``-`` or ``@`` (how accelsim's CSVs keep spreadsheets from running it) is
read without the quote.

SCALE-Sim's ``COMPUTE_REPORT.csv`` numbers layers 0, 1, ... in topology order
(``LayerID``); we match them to the layers of the network in order. Our cycles include the
first fetch from DRAM, so they are held against ``Total Cycles (incl. prefetch)`` where the
report has it (v3), else ``Total Cycles``; compute cycles are ``Total Cycles - Stall Cycles``
and stall cycles the rest.
"""

from __future__ import annotations

from math import isfinite
from pathlib import Path
from typing import Sequence

from accelsim.compare.metrics import Metrics
from accelsim.input_files import read_csv_rows, shown
from accelsim.output_files import from_spreadsheet_safe
from accelsim.errors import InputError

MAESTRO_TENSOR = {"input": "input", "filter": "weight", "output": "output"}
MAESTRO_REQUIRED = ("Layer Number", "Runtime (Cycles)")
_MAESTRO_COLUMNS = {
    "Runtime (Cycles)": "cycles",
    "Num MACs": "macs",
    **{f"{theirs} {level} {kind}": f"{ours}.{level}_{kind}"
       for theirs, ours in MAESTRO_TENSOR.items() for level in ("l1", "l2") for kind in ("read", "write")},
}
_MAESTRO_SIZES = {"L1 SRAM Size Req (Bytes)": "l1_required_bytes", "L2 SRAM Size Req (Bytes)": "l2_required_bytes"}
# A CSV written by ``accelsim simulate/analyze --csv`` has this column: its sizes are bytes and
# only its rows with Status ``complete`` are layers (not the total or a stopped layer).
ACCELSIM_CSV_COLUMN = "accelsim Version"


def read_maestro_csv(path: str | Path, word_size_bytes: int) -> dict[str, Metrics]:
    """Metrics per layer name, in file order, from a MAESTRO result CSV.

    Raises InputError (file and line) for a missing file, missing ``Layer Number`` or
    ``Runtime (Cycles)`` columns, a row of the wrong length, a value that is not a finite number
    of at least 0 (``nan``, ``inf``, ``1e400``, ``-5``) or a layer named twice.
    """
    found: dict[str, Metrics] = {}
    for layer, metrics, line in read_maestro_rows(path, word_size_bytes):
        if layer in found:
            raise InputError(f"layer {layer!r} appears twice (MAESTRO appends to an existing CSV on every run; "
                             "keep one run's rows)", source=str(path), line=line)
        found[layer] = metrics
    return found


def read_maestro_rows(path: str | Path, word_size_bytes: int) -> list[tuple[str, Metrics, int]]:
    """(layer name, metrics, line) per row of a MAESTRO result CSV, in file order (a name may
    repeat); errors as :func:`read_maestro_csv`."""
    source = str(path)
    rows = read_csv_rows(path, "MAESTRO CSV")
    if not rows:
        raise InputError("empty file; expected MAESTRO's result CSV (columns Layer Number, Runtime (Cycles), ...)",
                         source=source)
    header_line, header = rows[0]
    missing = [name for name in MAESTRO_REQUIRED if name not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; is this a MAESTRO result CSV? "
                         f"found: {', '.join(header[:8])}{', ...' if len(header) > 8 else ''}",
                         source=source, line=header_line)
    index: dict[str, int] = {}
    for i, name in enumerate(header):
        index.setdefault(name, i)  # MAESTRO repeats "Compute Delay (Min)"; we read neither
    wanted = {**_MAESTRO_COLUMNS, **_MAESTRO_SIZES}
    ours = ACCELSIM_CSV_COLUMN in index  # accelsim's own CSV: sizes in bytes, a status per row
    if ours and "Status" not in index:
        raise InputError(f"an accelsim CSV (it has the column {ACCELSIM_CSV_COLUMN!r}) without the column "
                         "'Status'; write it again with accelsim simulate --csv", source=source, line=header_line)
    found: list[tuple[str, Metrics, int]] = []
    for line, cells in rows[1:]:
        if ours:  # our rows end where their last non-empty cell does (read_csv_rows drops the rest)
            if len(cells) > len(header):
                raise InputError(f"expected at most {len(header)} values (one per header column), got "
                                 f"{len(cells)}", source=source, line=line)
            cells = cells + [""] * (len(header) - len(cells))
            if cells[index["Status"]] != "complete":
                continue  # the total row, or the layer a run was stopped in
        elif len(cells) != len(header):
            raise InputError(f"expected {len(header)} values (one per header column), got {len(cells)}",
                             source=source, line=line)
        layer = from_spreadsheet_safe(cells[index["Layer Number"]])
        metrics: Metrics = {}
        for column, metric in wanted.items():
            if column not in index:
                continue
            cell = cells[index[column]]
            try:
                value = float(cell)
            except ValueError:
                value = float("nan")
            if not isfinite(value) or value < 0:
                raise InputError(f"column {column!r} of layer {shown(layer)}: expected a number of at least 0, "
                                 f"got {shown(cell)}", source=source, line=line)
            if column in _MAESTRO_SIZES and not ours:
                value *= word_size_bytes
            metrics[metric] = int(value) if value.is_integer() else value
        found.append((layer, metrics, line))
    return found


def maestro_metrics(path: str | Path, word_size_bytes: int, layers: Sequence[str],
                    network_layers: Sequence[str] | None = None, positions: Sequence[int] | None = None
                    ) -> list[Metrics]:
    """The MAESTRO CSV's metrics of ``layers``, in their order. When the file's rows are the
    network's layers in order (``network_layers``, default ``layers``; names compared as MAESTRO
    prints them, cut at '-' and '>'), rows are matched by position (``positions`` of ``layers``
    in the network, default 0, 1, ...), so repeated names work; otherwise by name, and a layer
    the file lacks or a name it repeats is an InputError."""
    from accelsim.maestro.report import maestro_name

    rows = read_maestro_rows(path, word_size_bytes)
    network = list(network_layers or layers)
    if len(rows) == len(network) and all(row[0] in (name, maestro_name(name)) for name, row in zip(network, rows)):
        return [rows[p][1] for p in (positions if positions is not None else range(len(layers)))]
    table = read_maestro_csv(path, word_size_bytes)
    absent = [name for name in layers if name not in table]
    if absent:
        hint = ""
        if table and all(name.isdigit() for name in table):
            hint = (" (this CSV numbers its layers, as MAESTRO's older interface does; matching needs "
                    "the layer names its current interface writes)")
        raise InputError(f"no row for layer(s) {', '.join(absent)}; the file's layers are: "
                         + (", ".join(table) or "none") + hint, source=str(path))
    return [table[name] for name in layers]


def scalesim_metrics(path: str | Path, network_layers: Sequence[str], layers: Sequence[str]) -> dict[str, Metrics]:
    """The metrics of ``layers`` from a SCALE-Sim COMPUTE_REPORT.csv, whose row ``LayerID = i``
    is layer i of ``network_layers`` (the whole network, in order): ``cycles`` (Total Cycles,
    incl. prefetch where reported), ``compute_cycles`` (Total Cycles - Stall Cycles),
    ``stall_cycles`` (the rest) and ``pe_utilization`` (Overall Util % / 100)."""
    from accelsim.scalesim.report import read_compute_report

    frame = read_compute_report(path)
    ids = [int(i) for i in frame["layer_id"]]
    if sorted(ids) != list(range(len(network_layers))):
        raise InputError(f"LayerIDs {ids[:6]}{' ...' if len(ids) > 6 else ''} do not number the network's "
                         f"{len(network_layers)} layers 0..{len(network_layers) - 1}; layers are matched by "
                         "order, so the report must come from the same network", source=str(path))
    by_name: dict[str, Metrics] = {}
    for record in frame.to_dict("records"):
        cycles = int(record.get("total_cycles_incl_prefetch", record["total_cycles"]))
        compute = int(record["compute_cycles"])
        metrics: Metrics = {"cycles": cycles, "compute_cycles": compute, "stall_cycles": cycles - compute}
        if "overall_util_percent" in record:
            metrics["pe_utilization"] = float(record["overall_util_percent"]) / 100.0
        by_name[network_layers[int(record["layer_id"])]] = metrics
    return {name: by_name[name] for name in layers}
