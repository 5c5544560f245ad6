"""Output of ``accelsim simulate --scalesim-config X.cfg --topology Y.csv``: the terminal
table and the CSV rows (cycles in cycles, energy in pJ)."""

from __future__ import annotations

from typing import Any

from accelsim.scalesim.config import ScaleSimConfig
from accelsim.scalesim.run import ScaleSimLayerResult
from accelsim.scalesim.topology import ScaleSimTopology
from accelsim.text_table import format_table

# options of ``simulate`` that this path takes; the others belong to --hw runs
ACCEPTED_OPTIONS = ("--json", "--csv", "--force", "--progress", "--max-steps", "--max-memory")


def format_scalesim_table(config: ScaleSimConfig, topology: ScaleSimTopology,
                          results: list[ScaleSimLayerResult]) -> str:
    """A header line and one row per layer (SCALE-Sim's LayerID order) plus a total row."""
    header = ("id", "layer", "M", "N", "K", "folds", "cycles", "compute", "stall", "prefetch", "run", "tail", "util%")
    rows = [(str(r.layer_id), r.result.layer, *(f"{r.gemm_sizes[d]:,}" for d in "MNK"), f"{r.shape.folds:,}",
             f"{r.result.cycles:,}", f"{r.compute_cycles:,}", f"{r.stall_cycles_total:,}",
             f"{r.prefetch_stall_cycles:,}", f"{r.run_stall_cycles:,}", f"{r.tail_stall_cycles:,}",
             f"{100 * r.result.pe_utilization:.1f}") for r in results]
    if len(results) > 1:
        total = [sum(getattr(r, a) for r in results) for a in
                 ("compute_cycles", "stall_cycles_total", "prefetch_stall_cycles", "run_stall_cycles", "tail_stall_cycles")]
        rows.append(("", "TOTAL", "", "", "", "", f"{sum(r.result.cycles for r in results):,}",
                     *(f"{v:,}" for v in total), ""))
    return "\n".join([f"{topology.name} ({topology.form} topology) on SCALE-Sim config {config.run_name}: "
             f"{config.array_rows}x{config.array_cols} {config.dataflow}, SRAM {config.ifmap_sram_kb}/"
             f"{config.filter_sram_kb}/{config.ofmap_sram_kb} kB, {config.bandwidth_mode} DRAM bandwidth "
             f"{config.ifmap_dram_bandwidth_words_per_cycle}/{config.filter_dram_bandwidth_words_per_cycle}/"
             f"{config.ofmap_dram_bandwidth_words_per_cycle} words/cycle",
             format_table(header, rows, left=(1,))])


def scalesim_rows(results: list[ScaleSimLayerResult]) -> list[dict[str, Any]]:
    """CSV rows: SCALE-Sim's COMPUTE_REPORT names for the cycle columns, then our usual row."""
    rows = []
    for r in results:
        row: dict[str, Any] = {
            "LayerID": r.layer_id,
            "Total Cycles": r.result.cycles,
            "Stall Cycles": r.stall_cycles_total,
            "Compute Cycles": r.compute_cycles,
            "Prefetch Stall Cycles": r.prefetch_stall_cycles,
            "Run Stall Cycles": r.run_stall_cycles,
            "Tail Stall Cycles": r.tail_stall_cycles,
            "Dataflow": r.dataflow,
            "Folds": r.shape.folds,
        }
        row.update(r.result.to_row())
        rows.append(row)
    return rows
