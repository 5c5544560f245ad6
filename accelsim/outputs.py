"""Result files that survive and say what produced them.

:class:`ResultFiles` keeps a run's ``--json`` and ``--csv`` valid at every moment: as layers
finish both files are rewritten whole (:func:`~accelsim.output_files.write_atomic`; after the
first layer, then at most about once a second, and at the end), so Ctrl-C, SIGTERM or a full
disk leaves every finished layer in valid files, and a crash every layer finished before the
last rewrite; a stopped run adds a last entry marking the layer it stopped in. :class:`Provenance` (tool version,
command, input files with their SHA-256, style, mode, ``--set`` overrides, the resolved
hardware's SHA-256) goes into every JSON object and every CSV row.

JSON: a list with one object per layer: the layer's fields plus ``status`` (``complete``, or
``interrupted`` with ``stopped_by`` for the layer a run stopped in) and ``provenance``. CSV:
MAESTRO's ``Neural Network Name`` and ``Layer Number`` first, the layer's row, ``Status``, then
the provenance columns, and a last row with ``Status`` ``total`` (the network's sums).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from accelsim import __version__
from accelsim.hw.spec import HardwareSpec
from accelsim.input_files import read_bytes
from accelsim.output_files import is_stdout, spreadsheet_safe, write_atomic
from accelsim.results import STALL_CAUSES, TENSORS, LayerResult, LevelAccesses, NetworkResult, TensorAccesses

COMPLETE, INTERRUPTED, TOTAL = "complete", "interrupted", "total"
# what each role of an input file is called in messages
ROLES = {"hardware": "hardware file", "mapping": "mapping file", "network": "network file",
         "scalesim_config": "SCALE-Sim config", "topology": "SCALE-Sim topology", "maestro_csv": "MAESTRO CSV",
         "scalesim_report": "SCALE-Sim report"}


def file_sha256(path: str | Path, what: str = "input file") -> str:
    """SHA-256 of a file's bytes (hex); InputError (naming the file as ``what``) when it cannot
    be read."""
    return hashlib.sha256(read_bytes(path, what)).hexdigest()


def hardware_sha256(hw: HardwareSpec) -> str:
    """SHA-256 of the resolved hardware spec (every field, after ``--set``), as canonical JSON."""
    return hashlib.sha256(json.dumps(hw.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class InputFile:
    """A file a run read: its role (``mapping``, ``network``, ``hardware``, ...), path and hash."""

    role: str
    path: str
    sha256: str

    @classmethod
    def of(cls, role: str, path: str | Path) -> "InputFile":
        return cls(role, str(path), file_sha256(path, ROLES.get(role, "input file")))


@dataclass(frozen=True)
class Provenance:
    """What produced a result: enough to rerun it and to tell two runs apart."""

    command: str  # e.g. "simulate"
    network: str
    hardware: str  # the spec's name
    hardware_sha256: str
    mode: str
    style: str | None = None
    overrides: tuple[str, ...] = ()
    inputs: tuple[InputFile, ...] = ()
    model: str = "simulator"
    accelsim_version: str = __version__
    options: dict[str, Any] = field(default_factory=dict)  # further options that change results

    def to_dict(self) -> dict[str, Any]:
        return {
            "accelsim_version": self.accelsim_version, "command": self.command, "model": self.model,
            "network": self.network, "style": self.style, "mode": self.mode, "hardware": self.hardware,
            "hardware_sha256": self.hardware_sha256, "overrides": list(self.overrides),
            "inputs": [{"role": f.role, "path": f.path, "sha256": f.sha256} for f in self.inputs],
            "options": dict(self.options),
        }

    def csv_columns(self) -> dict[str, Any]:
        """The provenance as flat CSV columns (lists joined with ``;``)."""
        return {
            "accelsim Version": self.accelsim_version, "Command": self.command, "Style": self.style or "",
            "Hardware SHA-256": self.hardware_sha256, "Overrides": ";".join(self.overrides),
            "Inputs": ";".join(f"{f.role}={f.path}" for f in self.inputs),
            "Input SHA-256": ";".join(f"{f.role}={f.sha256}" for f in self.inputs),
            "Options": ";".join(f"{k}={v}" for k, v in self.options.items()),
        }


def total_result(network: NetworkResult) -> LayerResult:
    """The network's layers summed into one ``TOTAL`` result: counts, cycles and energy added,
    required buffer sizes and PEs used at their largest, utilization weighted by cycles, the
    multicast factor over all words."""
    layers = network.layers
    first = layers[0]
    summary = network.summary()
    accesses: dict[str, TensorAccesses] = {t: TensorAccesses(**summary["accesses"][t]) for t in TENSORS}
    noc_words = sum(r.noc_words for r in layers)
    delivered = sum(r.noc_delivered_words for r in layers)
    breakdown: dict[str, float] = {}
    inner: dict[str, dict[str, LevelAccesses]] = {}
    for r in layers:
        for part, value in r.energy_breakdown_pj.items():
            breakdown[part] = breakdown.get(part, 0.0) + value
        for level, per in r.inner_accesses.items():
            for tensor, la in per.items():
                total = inner.setdefault(level, {}).setdefault(tensor, LevelAccesses())
                total.read += la.read
                total.write += la.write
    return LayerResult(
        layer="TOTAL", op="", hw=first.hw, mode=first.mode, cycles=summary["cycles"], macs=summary["macs"],
        num_pes=first.num_pes, used_pes=max(r.used_pes for r in layers),
        pe_utilization=summary["pe_utilization"],
        compute_busy_cycles=sum(r.compute_busy_cycles for r in layers),
        stall_cycles={c: summary["stall_cycles"][c] for c in STALL_CAUSES}, energy_pj=summary["energy_pj"],
        energy_breakdown_pj=breakdown, accesses=accesses, noc_words=noc_words, noc_delivered_words=delivered,
        multicast_factor=delivered / noc_words if noc_words else 0.0,
        egress_words=sum(r.egress_words for r in layers),
        l1_required_bytes=max(r.l1_required_bytes for r in layers),
        l2_required_bytes=max(r.l2_required_bytes for r in layers),
        l1_size_bytes=first.l1_size_bytes, l2_size_bytes=first.l2_size_bytes,
        steps=sum(r.steps for r in layers), events=sum(r.events for r in layers),
        wall_seconds=sum(r.wall_seconds for r in layers), model=first.model,
        compute_bound_cycles=sum(r.compute_bound_cycles for r in layers),
        dram_bound_cycles=sum(r.dram_bound_cycles for r in layers),
        overflowed=any(r.overflowed for r in layers), inner_accesses=inner, inner_loops={})


def csv_text(rows: list[dict[str, Any]], columns: Sequence[str] | None = None, header: bool = True) -> str:
    """Rows as CSV text; the header (left out without ``header``) holds ``columns`` (default:
    every column in order of first appearance) and a row without a column leaves it empty. Text
    cells a spreadsheet would run as a formula are quoted
    (:func:`~accelsim.output_files.spreadsheet_safe`)."""
    if columns is None:
        seen: dict[str, None] = {}
        for row in rows:
            seen.update(dict.fromkeys(row))
        columns = list(seen)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), restval="", lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows({k: spreadsheet_safe(v) if isinstance(v, str) else v for k, v in row.items()} for row in rows)
    return out.getvalue()


def layer_total_row(results: Sequence[LayerResult]) -> dict[str, Any]:
    """The total row of a list of layer results."""
    return total_result(NetworkResult("", list(results))).to_row()


class ResultFiles:
    """A run's ``--json`` and ``--csv`` (None: not asked for), rewritten as layers finish.

    ``add(obj, row, item)`` records a finished layer: its JSON object, its CSV row and the item
    ``total_row`` sums for the CSV's total row (a list of the items so far -> a row). Each
    layer is serialized once, when it is added; the files are rewritten (whole, atomically)
    after the first layer, then after a layer once :data:`REWRITE_SECONDS` or
    :data:`REWRITE_COST_FACTOR` times the last rewrite's duration (whichever is longer) have
    passed since the last rewrite, and by :meth:`stop` and :meth:`close`: rewriting costs at
    most a small share of the run however many layers it has, and a run of slow layers still
    rewrites after each."""

    def __init__(self, json_path: str | None, csv_path: str | None, provenance: Provenance,
                 total_row: Callable[[list[Any]], dict[str, Any]] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.json_path = json_path
        self.csv_path = csv_path
        self.provenance = provenance
        self.total_row = total_row
        self._provenance_dict = provenance.to_dict()
        self._provenance_columns = provenance.csv_columns()
        self.items: list[Any] = []
        self._json_pieces: list[str] = []  # each object as an element of the JSON list
        self._csv = _CsvRows()
        self.stopped: tuple[str, str] | None = None  # (layer, cause)
        self._written = 0  # layers in the files
        self.rewrites = Rewrites(clock)

    @property
    def paths(self) -> list[str]:
        """The files written (standard output left out)."""
        return [p for p in (self.json_path, self.csv_path) if p is not None and not is_stdout(p)]

    @property
    def layers(self) -> int:
        """Finished layers recorded."""
        return len(self.items)

    def add(self, obj: dict[str, Any], row: dict[str, Any], item: Any = None) -> None:
        """Record a finished layer (and rewrite the files when due)."""
        if self.json_path is not None:
            self._json_pieces.append(_json_element({**obj, "status": COMPLETE, "provenance": self._provenance_dict}))
        if self.csv_path is not None:
            self._csv.add(self._row(str(obj.get("layer", "")), row, COMPLETE))
        self.items.append(item)
        if self.rewrites.due():
            self.write()

    def add_result(self, result: LayerResult, extra: dict[str, Any] | None = None) -> None:
        """Record a finished layer's :class:`LayerResult` (``extra``: more JSON fields)."""
        self.add({**result.to_dict(), **(extra or {})}, result.to_row(), result)

    def stop(self, layer: str, cause: str) -> None:
        """The run stopped in ``layer`` (``cause``: SIGINT, SIGTERM, out of memory, ...): mark
        it after the finished layers and rewrite the files."""
        self.stopped = (layer, cause)
        self.write(final=True)

    def close(self) -> None:
        """The run has ended: rewrite the files if a finished layer is not in them yet."""
        if self._written < len(self.items) or is_stdout(self.json_path) or is_stdout(self.csv_path):
            self.write(final=True)

    def _row(self, layer: str, row: dict[str, Any], status: str) -> dict[str, Any]:
        body = {k: v for k, v in row.items() if k != "Layer Number"}
        return {"Neural Network Name": self.provenance.network, "Layer Number": layer, **body, "Status": status,
                **self._provenance_columns}

    def _json_text(self) -> str:
        pieces = self._json_pieces
        if self.stopped is not None:
            layer, cause = self.stopped
            pieces = pieces + [_json_element({"layer": layer, "status": INTERRUPTED, "stopped_by": cause,
                                              "provenance": self._provenance_dict})]
        return ("[\n" + ",\n".join(pieces) + "\n]\n") if pieces else "[]\n"

    def _csv_text(self) -> str:
        last = []
        if self.stopped is not None:
            last.append(self._row(self.stopped[0], {"Stopped By": self.stopped[1]}, INTERRUPTED))
        if self.total_row is not None and self.items:
            last.append(self._row("TOTAL", self.total_row(self.items), TOTAL))
        return self._csv.text(last)

    def write(self, final: bool = False) -> None:
        """Rewrite both files with everything recorded so far (atomically); standard output
        (``-``) gets its text once, when the run has ended or stopped (``final``)."""
        with self.rewrites.timed():
            if self.json_path is not None and (final or not is_stdout(self.json_path)):
                write_atomic(self.json_path, self._json_text())
            if self.csv_path is not None and (final or not is_stdout(self.csv_path)):
                write_atomic(self.csv_path, self._csv_text())
        self._written = len(self.items)


REWRITE_SECONDS = 1.0  # the least time between two rewrites of a run's result files
REWRITE_COST_FACTOR = 20.0  # ... and at least this many times the last rewrite's duration


class Rewrites:
    """When files rewritten whole as a run goes on are due again: at once the first time, then
    once :data:`REWRITE_SECONDS` or :data:`REWRITE_COST_FACTOR` times the last rewrite's
    duration (whichever is longer) have passed, so rewriting stays a small share of the run."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.next = 0.0  # clock reading from which a rewrite is due

    def due(self) -> bool:
        return self.clock() >= self.next

    @contextmanager
    def timed(self) -> Iterator[None]:
        """Around a rewrite: the next one is due after the wait its duration sets."""
        start = self.clock()
        yield
        end = self.clock()
        self.next = end + max(REWRITE_SECONDS, REWRITE_COST_FACTOR * (end - start))


def _json_element(obj: dict[str, Any]) -> str:
    """``obj`` as ``json.dumps`` writes it as an element of a list with ``indent=2``."""
    return "\n".join("  " + line for line in json.dumps(obj, indent=2).split("\n"))


class _CsvRows:
    """CSV rows serialized once each: the header holds every column in order of first
    appearance (a row bringing a new column re-serializes the others, which leave it empty)."""

    def __init__(self) -> None:
        self.columns: dict[str, None] = {}
        self.rows: list[dict[str, Any]] = []
        self.lines: list[str] = []

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if row.keys() - self.columns.keys():
            self.columns.update(dict.fromkeys(row))
            self.lines = [self._line(r) for r in self.rows]
        else:
            self.lines.append(self._line(row))

    def _line(self, row: dict[str, Any]) -> str:
        return csv_text([row], list(self.columns), header=False)

    def text(self, last: list[dict[str, Any]]) -> str:
        """The CSV of the rows added and then ``last`` (not kept)."""
        columns = dict(self.columns)
        for row in last:
            columns.update(dict.fromkeys(row))
        if len(columns) != len(self.columns):
            return csv_text(self.rows + last)
        return "".join([csv_text([], list(columns)), *self.lines, *(self._line(r) for r in last)])
