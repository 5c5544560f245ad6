"""Simulate layers with a trace: one directory per layer holding the chosen formats.

Tracing runs the engine unrolled (``fast_forward=False``) so every step's events are real
ones; results are the same as without tracing except ``events`` (the engine events executed,
which fast-forward lowers) and ``wall_seconds``. ``pe`` detail runs the per-PE engine.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from accelsim.mapping.jobs import Job
from accelsim.output_files import write_atomic
from accelsim.sim.network import RunObserver, run_jobs
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.engine import LayerSimulation, ProgressHook, SimOptions
from accelsim.results import LayerResult, NetworkResult
from accelsim.trace.dram_requests import DramRequestWriter, base_addresses
from accelsim.trace.events import BUFFERS, TraceConfig, TraceRecorder, TraceWriter
from accelsim.trace.perfetto import PerfettoWriter
from accelsim.trace.register_files import RegisterFileSteps
from accelsim.trace.table import TableWriter, has_pyarrow

PERFETTO_FILE = "trace.json"
DRAM_FILE = "dram.trace"
META_FILE = "meta.json"
# the result figures meta.json repeats (those a trace accounts for)
RESULT_FIELDS = ("cycles", "macs", "pe_utilization", "compute_busy_cycles", "stall_cycles", "accesses",
                 "noc_words", "egress_words", "steps")
# and on a design with register files inside the PE, their totals (every level's accesses) and loops
INNER_RESULT_FIELDS = ("level_accesses", "inner_loops")


class ParquetFallbackWarning(UserWarning):
    """pyarrow is absent: the event tables are written as CSV instead of Parquet."""


def layer_dir_name(index: int, layer: str) -> str:
    """``03_conv2_1_b``: layer position and a file-system safe name."""
    return f"{index:02d}_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", layer)


def trace_layer(cm: CompiledMapping, hw: HardwareSpec, options: SimOptions, out_dir: Path,
                config: TraceConfig, progress: ProgressHook | None = None,
                provenance: dict[str, Any] | None = None) -> LayerResult:
    """Simulate one layer, writing its trace files into ``out_dir`` (created). ``meta.json``
    is written first with ``status: "incomplete"`` and rewritten with ``"complete"`` and the
    result at the end, so a layer whose run was stopped says so; ``provenance`` (what ran)
    goes into it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    options = replace(options, fast_forward=False, per_pe=options.per_pe or config.detail == "pe")
    sim = LayerSimulation(cm, hw, options, progress=progress)
    meta = _meta(sim, config)
    meta["status"] = "incomplete"
    if provenance is not None:
        meta["provenance"] = provenance
    _write_meta(out_dir, meta)
    writers, raw, files = _open_writers(sim, config, out_dir, meta)
    register_files = RegisterFileSteps(cm, hw, lambda step: sim.profile.demand(step)).accesses \
        if hw.inner_levels else None
    recorder = TraceRecorder(config, writers, raw, lambda: sim.env.now, register_files)
    sim.sink = recorder
    try:
        result = sim.run()
    finally:
        recorder.close()
    meta["cycles"] = result.cycles
    meta["buffers"] = {name: sim.buffer_capacities[name] for name in BUFFERS}
    meta["files"] = files
    meta["result"] = {k: v for k, v in result.to_dict().items()
                      if k in RESULT_FIELDS or hw.inner_levels and k in INNER_RESULT_FIELDS}
    meta["status"] = "complete"
    _write_meta(out_dir, meta)
    return result


def _write_meta(out_dir: Path, meta: dict) -> None:
    write_atomic(out_dir / META_FILE, json.dumps(meta, indent=1, sort_keys=True) + "\n")


def _meta(sim: LayerSimulation, config: TraceConfig) -> dict:
    """What meta.json says before the run (see traces/README.md)."""
    cm, hw = sim.cm, sim.hw
    return {
        "layer": cm.layer.name, "op": cm.layer.op.value, "hw": hw.name, "mode": sim.options.mode,
        "detail": config.detail, "components": list(config.components), "time_unit": "cycle",
        "clock_mhz": hw.clock_mhz, "num_pes": hw.num_pes,
        "macs_per_pe_per_cycle": hw.pe_array.macs_per_pe_per_cycle, "word_size_bytes": hw.word_size_bytes,
        "bandwidth_words_per_cycle": {
            "distribution_noc": sim.ingress_bw, "reduction_noc": sim.egress_bw,
            "dram": hw.dram.bandwidth_bytes_per_cycle / hw.word_size_bytes,
        },
        "dram_base_addresses": base_addresses(cm.nest, hw.word_size_bytes),
        "dram_burst_bytes": hw.dram.burst_bytes,
    } | ({"l2_bypassed": sorted(hw.l2.bypassed)} if hw.l2.bypassed else {})


def _open_writers(sim: LayerSimulation, config: TraceConfig, out_dir: Path,
                  meta: dict) -> tuple[list[TraceWriter], list[TraceWriter], list[str]]:
    """(filtered writers, raw writers, file names) for the configured formats."""
    writers: list[TraceWriter] = []
    raw: list[TraceWriter] = []
    files: list[str] = []
    if "perfetto" in config.formats:
        title = f"{meta['layer']} on {meta['hw']} ({meta['mode']})"
        other = {k: meta[k] for k in ("layer", "hw", "mode", "time_unit", "clock_mhz")}
        writers.append(PerfettoWriter(out_dir / PERFETTO_FILE, title, other, meta["clock_mhz"],
                                      tuple(lv.name for lv in sim.hw.inner_levels)))
        files.append(PERFETTO_FILE)
    tables = [f for f in ("parquet", "csv") if f in config.formats]
    for fmt in tables:
        parquet = fmt == "parquet" and has_pyarrow()
        if fmt == "parquet" and not parquet:
            warnings.warn("pyarrow is not installed: writing events.csv and counters.csv instead of Parquet",
                          ParquetFallbackWarning, stacklevel=3)
            if "csv" in tables:
                continue
        writers.append(TableWriter(out_dir, parquet))
        ext = "parquet" if parquet else "csv"
        files += [f"events.{ext}", f"counters.{ext}"]
    if "dram" in config.formats:
        raw.append(DramRequestWriter(out_dir / DRAM_FILE, sim.cm.nest, sim.hw, lambda: sim.tiles))
        files.append(DRAM_FILE)
    return writers, raw, files


def trace_jobs(network: str, jobs: Sequence[Job], hw: HardwareSpec, options: SimOptions, trace_dir: Path,
               config: TraceConfig, allow_overflow: bool = False, observer: RunObserver | None = None,
               check: Callable[[CompiledMapping], None] | None = None,
               provenance: dict[str, Any] | None = None) -> NetworkResult:
    """:func:`accelsim.sim.network.run_jobs`, tracing each layer into ``trace_dir/NN_layer``."""
    return run_jobs(network, jobs, hw, options, allow_overflow, observer,
                    lambda index, cm, progress: trace_layer(
                        cm, hw, options, trace_dir / layer_dir_name(index, cm.layer.name), config, progress,
                        provenance),
                    check)
