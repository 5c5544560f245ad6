"""Parity with the real SCALE-Sim: run both on the same ``.cfg`` and topology, per layer.

``run_parity(cfg_path, topology_path, workdir)`` runs our systolic model
(:mod:`accelsim.scalesim.run`) and the ``scalesim`` package (an optional dependency: ``pip
install 'accelsim[scalesim]'``) and returns one row per layer: SCALE-Sim's and our total,
compute and stall cycles and the relative errors. SCALE-Sim writes its reports under
``workdir`` and prints; its output is captured.

SCALE-Sim is given files normalised from what we read (every section its 3.0.0 reader
requires, topology lines in its convolution form with the trailing comma it expects, an empty
layout file), so both tools see the same numbers. Two shims make scalesim 3.0.0 run under
NumPy >= 2.4, which refuses ``int()`` of a one-element array: its write buffer's (and, with
USER bandwidth, its DRAM read port's) per-request cycle arrays are returned flat. Cycle values
are unchanged.

``python -m accelsim.scalesim.parity DIR`` runs every ``DIR/*.cfg`` on every
``DIR/topologies/*.csv`` and writes ``DIR/parity.csv``.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from pathlib import Path

from accelsim.errors import InputError
from accelsim.scalesim.config import ScaleSimConfig, read_scalesim_config
from accelsim.scalesim.report import read_compute_report
from accelsim.scalesim.run import simulate_scalesim
from accelsim.scalesim.topology import CONV_COLUMNS, ScaleSimTopology, read_topology

PARITY_COLUMNS = (
    "config", "topology", "layer_id", "layer", "dataflow", "M", "N", "K", "folds",
    "scalesim_total_cycles", "scalesim_compute_cycles", "scalesim_stall_cycles",
    "scalesim_total_cycles_incl_prefetch",
    "ours_cycles", "ours_compute_cycles", "ours_stall_cycles",
    "ours_prefetch_stall_cycles", "ours_run_stall_cycles", "ours_tail_stall_cycles",
    "compute_rel_error", "run_stall_diff_cycles", "total_rel_error", "total_incl_prefetch_rel_error",
)


def scalesim_config_text(config: ScaleSimConfig) -> str:
    """A .cfg SCALE-Sim 3.0.0 reads, with the numbers of ``config``."""
    bandwidths = ",".join(str(b) for b in config.bandwidths_words_per_cycle) or "10"
    ifmap_bw, filter_bw = (config.ifmap_dram_bandwidth_words_per_cycle, config.filter_dram_bandwidth_words_per_cycle)
    return "\n".join([
        "[general]", f"run_name = {config.run_name}", "",
        "[architecture_presets]",
        f"ArrayHeight : {config.array_rows}", f"ArrayWidth : {config.array_cols}",
        f"IfmapSramSzkB : {config.ifmap_sram_kb}", f"FilterSramSzkB : {config.filter_sram_kb}",
        f"OfmapSramSzkB : {config.ofmap_sram_kb}",
        "IfmapOffset : 0", "FilterOffset : 10000000", "OfmapOffset : 20000000",
        f"Bandwidth : {bandwidths}", f"Dataflow : {config.dataflow}", "MemoryBanks : 1",
        "ReadRequestBuffer : 512", "WriteRequestBuffer : 512", "",
        "[layout]", "IfmapCustomLayout : False", f"IfmapSRAMBankBandwidth : {ifmap_bw}",
        "IfmapSRAMBankNum : 1", "IfmapSRAMBankPort : 2", "FilterCustomLayout : False",
        f"FilterSRAMBankBandwidth : {filter_bw}", "FilterSRAMBankNum : 1", "FilterSRAMBankPort : 2", "",
        "[sparsity]", "SparsitySupport : false", "SparseRep : ellpack_block", "OptimizedMapping : false",
        "BlockSize : 8", "RandomNumberGeneratorSeed : 40", "",
        "[run_presets]", f"InterfaceBandwidth : {config.bandwidth_mode}", "UseRamulatorTrace : False", "",
    ])


def scalesim_topology_text(topology: ScaleSimTopology) -> str:
    """The topology in SCALE-Sim's convolution form (GEMM rows as SCALE-Sim converts them;
    depthwise layers already split, one channel each, which SCALE-Sim keeps as they are)."""
    lines = [", ".join(CONV_COLUMNS) + ","]
    for layer in topology.layers:
        if layer.stride_width != layer.stride_height:
            raise InputError(f"layer {layer.name!r}: SCALE-Sim's reader takes one stride for both axes; "
                             f"this layer has {layer.stride_height} x {layer.stride_width}",
                             source=topology.source, line=layer.line)
        fields = (layer.name, layer.ifmap_height, layer.ifmap_width, layer.filter_height, layer.filter_width,
                  layer.channels, layer.num_filters, layer.stride_height)
        lines.append(", ".join(str(v) for v in fields) + ",")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def _numpy2_shims(user_bandwidth: bool):
    """Flatten the per-request cycle arrays scalesim 3.0.0 passes to ``int()`` (see module doc)."""
    from scalesim.memory.read_port import read_port
    from scalesim.memory.write_buffer import write_buffer

    patched = [(write_buffer, "service_writes")] + ([(read_port, "service_reads")] if user_bandwidth else [])
    originals = [(cls, name, getattr(cls, name)) for cls, name in patched]

    def flat(method):
        return lambda self, *args, **kwargs: method(self, *args, **kwargs).reshape(-1)

    for cls, name, method in originals:
        setattr(cls, name, flat(method))
    try:
        yield
    finally:
        for cls, name, method in originals:
            setattr(cls, name, method)


def run_scalesim(config: ScaleSimConfig, topology: ScaleSimTopology, workdir: str | Path):
    """Run the real SCALE-Sim in ``workdir`` (quietly); its COMPUTE_REPORT as a DataFrame."""
    from scalesim.scale_sim import scalesim

    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "scalesim.cfg"
    topo = work / "topology.csv"
    layout = work / "layout.csv"
    cfg.write_text(scalesim_config_text(config), encoding="utf-8")
    topo.write_text(scalesim_topology_text(topology), encoding="utf-8")
    layout.write_text("Layer name,\n", encoding="utf-8")
    out = work / "scalesim_out"
    with contextlib.redirect_stdout(io.StringIO()), _numpy2_shims(config.bandwidth_mode == "USER"):
        sim = scalesim(save_disk_space=True, verbose=False, config=str(cfg), topology=str(topo),
                       layout=str(layout), input_type_gemm=False)
        sim.run_scale(top_path=str(out))
    return read_compute_report(out / config.run_name / "COMPUTE_REPORT.csv")


def _rel(ours: float, theirs: float) -> float:
    return (ours - theirs) / theirs if theirs else float("nan")


def run_parity(cfg_path: str | Path, topology_path: str | Path, workdir: str | Path):
    """Per layer, SCALE-Sim's and our cycles (DataFrame with ``PARITY_COLUMNS``).

    ``compute_rel_error``: (ours - SCALE-Sim) / SCALE-Sim compute cycles. SCALE-Sim's stall
    cycles are compared with ours between the first and last computation
    (``run_stall_diff_cycles``); our total with its Total Cycles and with its Total Cycles
    (incl. prefetch), which like ours counts the initial fetch.
    """
    import pandas as pd

    config = read_scalesim_config(cfg_path)
    topology = read_topology(topology_path)
    ours = simulate_scalesim(config, topology)
    theirs = run_scalesim(config, topology, workdir)
    if len(theirs) != len(ours):
        raise InputError(f"SCALE-Sim reported {len(theirs)} layers, we ran {len(ours)}", source=str(topology_path))
    rows = []
    for o, (_, t) in zip(ours, theirs.iterrows()):
        incl_prefetch = int(t.get("total_cycles_incl_prefetch", t.total_cycles))  # v2 reports lack it
        rows.append({
            "config": Path(cfg_path).name, "topology": Path(topology_path).name,
            "layer_id": o.layer_id, "layer": o.result.layer, "dataflow": o.dataflow,
            "M": o.gemm_sizes["M"], "N": o.gemm_sizes["N"], "K": o.gemm_sizes["K"], "folds": o.shape.folds,
            "scalesim_total_cycles": int(t.total_cycles), "scalesim_compute_cycles": int(t.compute_cycles),
            "scalesim_stall_cycles": int(t.stall_cycles),
            "scalesim_total_cycles_incl_prefetch": incl_prefetch,
            "ours_cycles": o.result.cycles, "ours_compute_cycles": o.compute_cycles,
            "ours_stall_cycles": o.stall_cycles_total, "ours_prefetch_stall_cycles": o.prefetch_stall_cycles,
            "ours_run_stall_cycles": o.run_stall_cycles, "ours_tail_stall_cycles": o.tail_stall_cycles,
            "compute_rel_error": _rel(o.compute_cycles, t.compute_cycles),
            "run_stall_diff_cycles": o.run_stall_cycles - int(t.stall_cycles),
            "total_rel_error": _rel(o.result.cycles, t.total_cycles),
            "total_incl_prefetch_rel_error": _rel(o.result.cycles, incl_prefetch),
        })
    return pd.DataFrame(rows, columns=list(PARITY_COLUMNS))


def run_parity_set(directory: str | Path, workdir: str | Path):
    """``run_parity`` for every ``directory/*.cfg`` x ``directory/topologies/*.csv``, concatenated."""
    import pandas as pd

    d = Path(directory)
    frames = []
    for cfg in sorted(d.glob("*.cfg")):
        for topo in sorted((d / "topologies").glob("*.csv")):
            frames.append(run_parity(cfg, topo, Path(workdir) / f"{cfg.stem}__{topo.stem}"))
    if not frames:
        raise InputError("no *.cfg with topologies/*.csv found", source=str(d))
    return pd.concat(frames, ignore_index=True)


def main(argv: list[str] | None = None) -> None:
    """``python -m accelsim.scalesim.parity DIR``: write DIR/parity.csv."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m accelsim.scalesim.parity DIR  (DIR/*.cfg, DIR/topologies/*.csv)")
    with tempfile.TemporaryDirectory() as work:
        frame = run_parity_set(args[0], work)
    out = Path(args[0]) / "parity.csv"
    frame.to_csv(out, index=False, float_format="%.6f")
    print(frame.to_string(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
