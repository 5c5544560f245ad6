"""Run the simulator on a mapping file or on a network under a named style.

These are the functions the CLI calls; they are also the Python API::

    from accelsim.api import simulate_network
    result = simulate_network("resnet18", "eyeriss_like", "nvdla_like")
    result.to_frame()
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from accelsim.budget import Budget
from accelsim.functional import FunctionalReport, check_dtype, check_size, simulate_functional
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import (Job, OverflowWarning, fits, jobs_from_maestro, jobs_from_mapping_file,
                                   jobs_from_network, prepare, to_maestro)
from accelsim.model_options import check_mode
from accelsim.results import LayerResult, NetworkResult
from accelsim.sim.engine import ProgressHook, SimOptions
from accelsim.sim.network import Repeats, RunObserver, run_jobs

__all__ = ["Job", "OverflowWarning", "RunObserver", "analyze_jobs", "jobs_from_maestro", "jobs_from_mapping_file",
           "jobs_from_network", "prepare",
           "run_jobs", "run_jobs_functional", "simulate_maestro", "simulate_network", "to_maestro"]


def analyze_jobs(network: str, jobs: Sequence[Job], hw: HardwareSpec, mode: str = "maestro",
                 allow_overflow: bool = False, observer: RunObserver | None = None,
                 check: Callable[[CompiledMapping], None] | None = None) -> NetworkResult:
    """Estimate every job with the analytical model (:mod:`accelsim.analytical`); all jobs
    are compiled and checked (``check``, e.g. a memory budget) first, ``observer`` hears each
    layer start and end (see :func:`run_jobs`); repeated layers are estimated once."""
    from accelsim.analytical import analyze_layer

    checked = check_mode(mode)
    compiled = [prepare(job, hw, allow_overflow) for job in jobs]
    if check is not None:
        for cm in compiled:
            check(cm)
    watch = observer or RunObserver()
    results = []
    repeats = Repeats()
    for index, cm in enumerate(compiled):
        watch.layer_started(index, cm)
        result = repeats.result(jobs[index], cm, lambda c: analyze_layer(c, hw, checked))
        result.overflowed = allow_overflow and not fits(cm, hw)
        results.append(result)
        watch.layer_finished(index, result)
    return NetworkResult(network, results)


def run_jobs_functional(network: str, jobs: Sequence[Job], hw: HardwareSpec, options: SimOptions = SimOptions(),
                        dtype: str = "int8", seed: int = 0, allow_overflow: bool = False,
                        observer: RunObserver | None = None,
                        check: Callable[[CompiledMapping], None] | None = None,
                        reports: list[FunctionalReport] | None = None, budget: Budget = Budget(),
                        ) -> tuple[NetworkResult, list[FunctionalReport]]:
    """Like :func:`run_jobs`, with values riding on the transfers and each layer's output
    checked (see :mod:`accelsim.functional`); ``options.check_legality=False`` also compiles
    mappings that fail the coverage checks. Layers estimated over ``budget`` are refused up
    front (and by ``check``, a further check). ``reports`` (returned) receives each layer's report as the
    layer ends, before ``observer`` hears of it."""
    reports = [] if reports is None else reports
    checked_dtype = check_dtype(dtype)

    def run_layer(index: int, cm: CompiledMapping, progress: ProgressHook | None) -> LayerResult:
        result, report = simulate_functional(cm, hw, options, checked_dtype, seed, progress, budget)
        reports.append(report)
        return result

    def checks(cm: CompiledMapping) -> None:
        check_size(cm, budget)
        if check is not None:
            check(cm)

    return run_jobs(network, jobs, hw, options, allow_overflow, observer, run_layer, checks), reports


def simulate_network(network: str, hw: str | HardwareSpec, style: str, mode: str = "realistic",
                     layer: str | None = None) -> NetworkResult:
    """Simulate a network (bundled name or YAML path) under a named style."""
    options = SimOptions(mode=check_mode(mode))
    spec = load_hardware(hw) if isinstance(hw, str) else hw
    name, jobs = jobs_from_network(network, style, spec, layer)
    return run_jobs(name, jobs, spec, options)


def simulate_maestro(path: str | Path, hw: str | HardwareSpec, mode: str = "realistic",
                     layer: str | None = None, allow_overflow: bool = False) -> NetworkResult:
    """Simulate the layers of a MAESTRO mapping file."""
    options = SimOptions(mode=check_mode(mode))
    spec = load_hardware(hw) if isinstance(hw, str) else hw
    name, jobs = jobs_from_maestro(path, layer)
    return run_jobs(name, jobs, spec, options, allow_overflow)
