"""Simulate a network: every job compiled and checked first, then each layer in order."""

from __future__ import annotations

from typing import Callable, Sequence

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job, prepare
from accelsim.results import LayerResult, NetworkResult
from accelsim.sim.engine import SimOptions, simulate_layer

LayerRunner = Callable[[int, CompiledMapping], LayerResult]


def run_jobs(network: str, jobs: Sequence[Job], hw: HardwareSpec, options: SimOptions = SimOptions(),
             allow_overflow: bool = False, progress: Callable[[LayerResult], None] | None = None,
             run_layer: LayerRunner | None = None,
             check: Callable[[CompiledMapping], None] | None = None) -> NetworkResult:
    """Simulate every job in order. All jobs are compiled and checked first (``check``: a
    further check raising InputError), so a bad layer is reported before any simulation time
    is spent; ``progress`` gets each layer's result. ``run_layer(index, compiled)`` replaces
    the plain simulation (tracing, functional runs)."""
    compiled = [prepare(job, hw, allow_overflow, options.check_legality) for job in jobs]
    if check is not None:
        for cm in compiled:
            check(cm)
    results = []
    for index, cm in enumerate(compiled):
        results.append(simulate_layer(cm, hw, options) if run_layer is None else run_layer(index, cm))
        if progress is not None:
            progress(results[-1])
    return NetworkResult(network, results)
