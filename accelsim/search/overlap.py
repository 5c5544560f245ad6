"""Running screening work on an executor: one search step after another, or several layers'
searches at once so that the workers never wait for one layer's slowest candidate.

A piece of work that needs candidates screened is written as a generator (a *screening*): it
yields a :class:`ScreenRequest` (a model task and the dataflows to screen, in order), receives
their :class:`~accelsim.search.models.Screened` results in the same order, and finally returns
its value. The evaluator (:meth:`accelsim.search.evaluate.Evaluator.rows_steps`), a layer's
search loop (:func:`accelsim.search.run.search_steps`) and a whole layer of ``accelsim search``
are screenings; what runs them decides only *where and when* the batches run, never what the
screening sees, so its value is the same on every executor.

:func:`drive` runs one screening, each request split into ``BATCHES_PER_WORKER`` batches per
worker (of at least the executor's ``min_batch_candidates`` candidates) and waited for as a whole
(:meth:`Executor.map_batches`). :func:`run_overlapped` runs a sequence of screenings (e.g. one per
layer) at once: each request's batches are submitted on their own (:meth:`Executor.submit`), a
screening gets its results when its last batch is back and at once submits its next request, and a
further screening is started (in order) whenever fewer than two batches per worker are in flight,
so the workers that would wait for a request's slowest batch take other layers' batches instead.
With one worker the screenings run one after another, as :func:`drive` would run them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from itertools import count, pairwise
from math import ceil
from typing import Any, TypeVar

from accelsim.mapping.ast import Directive
from accelsim.search.executors import Executor
from accelsim.search.models import ModelTask, Screened

T = TypeVar("T")

# how many batches a request is split into, per worker (a few large batches: each pays one round
# trip, and workers still balance by taking the next batch when done)
BATCHES_PER_WORKER = 4
# another screening starts while fewer than this many batches per worker are in flight
IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True)
class ScreenRequest:
    """Dataflows to compile, check, name and score with ``task`` (in this order)."""

    task: ModelTask
    dataflows: list[tuple[Directive, ...]]


Screening = Generator[ScreenRequest, list[Screened], T]


def split(items: list[Any], parts: int) -> list[list[Any]]:
    """``items`` in ``parts`` consecutive slices of nearly equal length (none empty; fewer
    parts when there are fewer items)."""
    parts = max(1, min(len(items), parts))
    bounds = [len(items) * i // parts for i in range(parts + 1)]
    return [items[a:b] for a, b in pairwise(bounds)]


def batches(dataflows: list[Any], parts: int, fewest: int) -> list[list[Any]]:
    """``dataflows`` split into ``parts`` batches (:func:`split`), or into fewer so that none holds
    fewer than ``fewest`` (one batch when there are fewer dataflows than that)."""
    return split(dataflows, min(parts, max(1, len(dataflows) // fewest)))


def drive(screening: Screening[T], executor: Executor) -> T:
    """Run ``screening`` to its end on ``executor``, each request as ``BATCHES_PER_WORKER``
    batches per worker (one with one worker; :func:`batches`) waited for together; its value."""
    parts = executor.workers * BATCHES_PER_WORKER if executor.workers > 1 else 1
    try:
        request = next(screening)
        while True:
            results = executor.map_batches(request.task, batches(request.dataflows, parts,
                                                                  executor.min_batch_candidates))
            request = screening.send([screened for out in results for screened in out])
    except StopIteration as stop:
        return stop.value


@dataclass
class _Running:
    """A started screening: its position in the sequence, the request in flight and the
    results of its batches that are back (by batch number)."""

    index: int
    screening: Screening[Any]
    batches: int = 0
    results: dict[int, list[Screened]] = field(default_factory=dict)


def run_overlapped(screenings: Iterator[Screening[T]], executor: Executor,
                   on_done: Callable[[int, T], None]) -> None:
    """Run every screening of ``screenings`` (taken in order, a new one only when the workers
    need more work: see the module docstring) on ``executor``; ``on_done(i, value)`` as the
    ``i``-th returns (in the order they finish). Whatever a screening or ``on_done`` raises, or
    an interruption, stops them all: the batches in flight are dropped and the started
    screenings closed."""
    workers = executor.workers
    low_water = IN_FLIGHT_PER_WORKER * workers if workers > 1 else 1
    token = object()  # tags are (token, n): a batch of an earlier, interrupted run is never taken for one of ours
    numbers = count()
    running: dict[int, _Running] = {}  # by position
    flight: dict[tuple[object, int], tuple[_Running, int]] = {}  # tag -> its screening and batch number
    started = 0
    pending = iter(screenings)
    more = True

    def submit(run: _Running, request: ScreenRequest) -> None:
        parts = ceil(workers * BATCHES_PER_WORKER / len(running)) if workers > 1 else 1
        split_up = batches(request.dataflows, parts, executor.min_batch_candidates)
        run.batches, run.results = len(split_up), {}
        for number, batch in enumerate(split_up):
            tag = (token, next(numbers))
            flight[tag] = (run, number)
            executor.submit(request.task, batch, tag)

    def advance(run: _Running, results: list[Screened] | None) -> None:
        """Send ``results`` (None: start it) and submit the next request, or finish."""
        try:
            request = next(run.screening) if results is None else run.screening.send(results)
        except StopIteration as stop:
            del running[run.index]
            on_done(run.index, stop.value)
            return
        submit(run, request)

    try:
        while True:
            while more and len(flight) < low_water:
                screening = next(pending, None)
                if screening is None:
                    more = False
                    break
                run = running[started] = _Running(started, screening)
                started += 1
                advance(run, None)
            if not flight:
                break
            tag, out = executor.next_done()
            if tag not in flight:  # a batch of an earlier, interrupted run on this executor
                continue
            run, number = flight.pop(tag)
            run.results[number] = out
            if len(run.results) == run.batches:
                advance(run, [screened for i in range(run.batches) for screened in run.results[i]])
    except BaseException:
        executor.drop()
        for run in running.values():
            run.screening.close()
        raise
