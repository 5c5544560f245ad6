"""Run our systolic model on SCALE-Sim inputs: ``accelsim simulate --scalesim-config
X.cfg --topology Y.csv``.

Per layer the result carries our usual :class:`LayerResult` plus, in SCALE-Sim's terms,
``compute_cycles`` (cycles minus all stall cycles: what SCALE-Sim calls Total Cycles minus
Stall Cycles) and ``stall_cycles_total``; the stall cycles are also split by when they occur:
``prefetch`` (before the first computation: the first L2 tile and operands arriving, which
SCALE-Sim does before its cycle 0 and reports only in "Total Cycles (incl. prefetch)"),
``tail`` (after the last computation: drain and write-back) and ``run`` (in between, the part
comparable to SCALE-Sim's Stall Cycles).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from accelsim.mapping.jobs import prepare
from accelsim.scalesim.config import ScaleSimConfig
from accelsim.scalesim.topology import ScaleSimTopology
from accelsim.scalesim.translate import FoldShape, ScaleSimRun, translate
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.sim.network import RunObserver
from accelsim.results import LayerResult


@dataclass
class ScaleSimLayerResult:
    """One layer of a SCALE-Sim-input run: our result and its SCALE-Sim-style cycle split."""

    layer_id: int  # position in the topology, as SCALE-Sim's LayerID
    result: LayerResult
    dataflow: str
    gemm_sizes: dict[str, int]  # the operand matrices: M, N, K
    shape: FoldShape
    fill_drain_cycles_per_fold: int
    prefetch_stall_cycles: int  # before the first computation
    tail_stall_cycles: int  # after the last computation

    @property
    def stall_cycles_total(self) -> int:
        return sum(self.result.stall_cycles.values())

    @property
    def compute_cycles(self) -> int:
        """Cycles minus stall cycles (SCALE-Sim's Total Cycles - Stall Cycles)."""
        return self.result.cycles - self.stall_cycles_total

    @property
    def run_stall_cycles(self) -> int:
        """Stalls between the first and the last computation (SCALE-Sim's Stall Cycles)."""
        return self.stall_cycles_total - self.prefetch_stall_cycles - self.tail_stall_cycles

    def to_dict(self) -> dict[str, Any]:
        d = self.result.to_dict()
        m, n, k = (self.gemm_sizes[x] for x in "MNK")
        d.update({
            "layer_id": self.layer_id,
            "compute_cycles": self.compute_cycles,
            "stall_cycles_total": self.stall_cycles_total,
            "scalesim": {
                "dataflow": self.dataflow, "M": m, "N": n, "K": k,
                "row_folds": self.shape.row_folds, "col_folds": self.shape.col_folds,
                "streamed": self.shape.streamed,
                "fill_drain_cycles_per_fold": self.fill_drain_cycles_per_fold,
                "prefetch_stall_cycles": self.prefetch_stall_cycles,
                "run_stall_cycles": self.run_stall_cycles,
                "tail_stall_cycles": self.tail_stall_cycles,
            },
        })
        return d


class _ComputeSpan:
    """Event sink keeping the first start and last end of the array's computations."""

    def __init__(self) -> None:
        self.first_start: int | None = None
        self.last_end = 0

    def __call__(self, component, kind, start, end, step, tensor, words, pes) -> None:
        if component == "pe_array" and kind == "compute":
            if self.first_start is None:
                self.first_start = start
            self.last_end = max(self.last_end, end)


def simulate_scalesim(config: ScaleSimConfig, topology: ScaleSimTopology,
                      progress: Callable[[ScaleSimLayerResult], None] | None = None,
                      observer: RunObserver | None = None,
                      check: Callable[[CompiledMapping], None] | None = None) -> list[ScaleSimLayerResult]:
    """Run every topology layer on our systolic model of ``config`` (unrolled, so the sink sees
    every computation; fast-forward gives the same cycles). Every layer is compiled and checked
    (``check``, e.g. a budget) first; ``progress`` gets each layer's result, ``observer``
    hears each layer start, its steps and its end."""
    run: ScaleSimRun = translate(config, topology)
    options = SimOptions(systolic_fold=run.fold, fast_forward=False)
    compiled = [prepare(job, run.hw) for job in run.jobs]
    if check is not None:
        for cm in compiled:
            check(cm)
    watch = observer or RunObserver()
    out = []
    for layer_id, (cm, shape) in enumerate(zip(compiled, run.shapes)):
        span = _ComputeSpan()
        watch.layer_started(layer_id, cm)
        result = simulate_layer(cm, run.hw, options, sink=span, progress=watch.steps if observer else None)
        first = span.first_start or 0
        item = ScaleSimLayerResult(layer_id, result, config.dataflow, dict(cm.layer.sizes), shape,
                                   run.fold.fill_drain_cycles, prefetch_stall_cycles=first,
                                   tail_stall_cycles=result.cycles - span.last_end)
        out.append(item)
        watch.layer_finished(layer_id, result)
        if progress is not None:
            progress(item)
    return out
