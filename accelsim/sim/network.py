"""Simulate a network: every job compiled and checked first, then each layer in order."""

from __future__ import annotations

import time
from typing import Callable, Sequence

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job, fits, prepare
from accelsim.model_options import check_mode
from accelsim.results import LayerResult, NetworkResult
from accelsim.sim.engine import ProgressHook, SimOptions, simulate_layer

# (index, compiled layer, the engine's progress hook or None) -> the layer's result
LayerRunner = Callable[[int, CompiledMapping, ProgressHook | None], LayerResult]


class RunObserver:
    """Told what a run of several layers does (the command line's progress display, result
    files and interrupt handling); every method does nothing here."""

    def layer_started(self, index: int, cm: CompiledMapping) -> None:
        """Layer ``index`` (from 0) is about to run."""

    def steps(self, steps_done: int, steps_total: int) -> None:
        """The engine's progress hook for the running layer (``steps_done`` may jump by many)."""

    def layer_finished(self, index: int, result: LayerResult) -> None:
        """Layer ``index`` has ended with ``result``."""


def run_jobs(network: str, jobs: Sequence[Job], hw: HardwareSpec, options: SimOptions = SimOptions(),
             allow_overflow: bool = False, observer: RunObserver | None = None,
             run_layer: LayerRunner | None = None,
             check: Callable[[CompiledMapping], None] | None = None) -> NetworkResult:
    """Simulate every job in order. All jobs are compiled and checked first (``check``: a
    further check raising InputError or ResourceError, e.g. a budget), so a bad layer is
    reported before any simulation time is spent; ``observer`` hears each layer start, its
    steps and its result (with ``overflowed`` set when it does not fit and ran anyway).
    ``run_layer(index, compiled, progress)`` replaces the plain simulation (tracing,
    functional runs). A job repeating an earlier one's shape and dataflow
    (:meth:`~accelsim.mapping.jobs.Job.repeat_key`) is not simulated again in a plain run: it
    gets that result under its own name (:meth:`~accelsim.results.LayerResult.repeated`)."""
    check_mode(options.mode)
    compiled = [prepare(job, hw, allow_overflow, options.check_legality) for job in jobs]
    if check is not None:
        for cm in compiled:
            check(cm)
    watch = observer or RunObserver()
    hook = watch.steps if observer is not None else None
    results = []
    repeats = Repeats()
    for index, cm in enumerate(compiled):
        watch.layer_started(index, cm)
        if run_layer is not None:
            result = run_layer(index, cm, hook)
        else:
            result = repeats.result(jobs[index], cm, lambda c: simulate_layer(c, hw, options, progress=hook))
        result.overflowed = allow_overflow and not fits(cm, hw)
        results.append(result)
        watch.layer_finished(index, result)
    return NetworkResult(network, results)



class Repeats:
    """The results of a run's jobs so far, by :meth:`~accelsim.mapping.jobs.Job.repeat_key`
    (for one hardware spec and one set of options)."""

    def __init__(self) -> None:
        self.known: dict[tuple[object, ...], LayerResult] = {}

    def result(self, job: Job, cm: CompiledMapping, compute: Callable[[CompiledMapping], LayerResult]) -> LayerResult:
        """``compute(cm)`` (``cm``: ``job`` compiled) for the first job of its key; for a repeat,
        the earlier result under ``job``'s layer name."""
        start = time.perf_counter()
        key = job.repeat_key()
        known = self.known.get(key)
        if known is None:
            self.known[key] = known = compute(cm)
            return known
        return known.repeated(job.layer.name, time.perf_counter() - start)
