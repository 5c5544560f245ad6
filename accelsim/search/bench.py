"""``accelsim bench --search``: how fast candidates are screened, and how well workers scale.

Scenario: for each layer of MARVEL's 15 (``--quick``: three of them) on ``eyeriss_like``, the
mappings the five named styles give it (scored in this process), then a fixed set of random
genomes of the layer's default search space (seeded), scored by the analytical model in
realistic mode, as a search screens them: each layer's genomes are proposed ``SEARCH_BATCH`` at a
time (GAMMA's default population) by a mapper that has them in a list, through the search loop
(:func:`accelsim.search.run.search_steps`), every layer's search at once on the workers
(:func:`accelsim.search.overlap.run_overlapped`, as ``accelsim search`` runs them): in this process (1 worker), then by 2, 4, ...
local worker processes up to the cores this process may run on (its affinity mask), then by a
Dask LocalCluster of as many single-threaded workers when ``distributed`` is installed. Then the simulator re-ranks each
layer's ten best legal schedules, as a two-stage search does. Figures: candidates per second
(every candidate, legal or not: a search pays for all of them), the speed-up over 1 worker,
whether every executor returned the same rows (wall times aside), the share of the time
spent in the parent process (encoding, merging, building frames) rather than waiting for the
workers, and the parent process's CPU seconds (every thread's: with a LocalCluster, Dask's
scheduler and the workers' nannies run there too). Beside them, the peer that bounds them: as many independent processes as cores, each
screening the same part of the scenario at once with no parent (:func:`_ceiling`), against one
such process alone: where busy cores slow each other (shared caches, memory, clock), no executor
can reach N times one process. The load average is printed with them: the figures are only comparable at similar
loads; on a shared machine the speed-ups are capped by the cores other jobs leave free.

Last, the projection: the same searches on 2, 4, 8 and 16 *virtual* idle workers
(:mod:`accelsim.search.replay`: each candidate's cost measured once, alone, in this process; the
parent's own time counted), once with the layers one after another, each request waited for as a
whole (how searches ran before the layers overlapped), once overlapped as now: the speed-up the
scheduling allows where the cores are idle, whatever this machine has. Then ``accelsim search``
itself (:func:`accelsim.search.session.run_search`: GAMMA, the named styles, ``candidates.parquet``
written as it goes) projected the same way, where the parent also runs the mapper and writes
the output directory.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.hw.loader import load_hardware
from accelsim.search.candidates import Candidate
from accelsim.search.evaluate import COLUMNS, Evaluator
from accelsim.search.executors import Batch, Executor, InProcess, LocalProcesses, available_cores
from accelsim.search.models import ModelTask, Screened
from accelsim.search.overlap import drive, run_overlapped
from accelsim.search.replay import VirtualWorkers
from accelsim.search.run import LayerSearch, search_steps, top_k
from accelsim.search.session import SearchSettings, run_search
from accelsim.search.space import SearchSpace
from accelsim.workload.tables import load_network

QUICK_LAYERS = ("L3_Bottleneck4_3_2", "L8_CONV2_2_2", "L13_CONV5_1_3")
RERANK_K = 10
SEARCH_BATCH = 50  # candidates per ask, as GAMMA's default population
PROJECTED_WORKERS = (2, 4, 8, 16)
SESSION_BUDGET = 200  # schedules a layer of the projected accelsim search
_SAME = [c for c in COLUMNS if c != "wall_seconds"]


class _Timed:
    """An executor that adds up the wall seconds spent in it: waiting for the workers (and, in
    this process, scoring)."""

    def __init__(self, inner: Executor):
        self.inner = inner
        self.workers = inner.workers
        self.min_batch_candidates = inner.min_batch_candidates
        self.seconds = 0.0

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        start = time.perf_counter()
        try:
            return self.inner.map_batches(task, batches)
        finally:
            self.seconds += time.perf_counter() - start

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        start = time.perf_counter()
        try:
            self.inner.submit(task, batch, tag)
        finally:
            self.seconds += time.perf_counter() - start

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        start = time.perf_counter()
        try:
            return self.inner.next_done()
        finally:
            self.seconds += time.perf_counter() - start

    def drop(self) -> None:
        self.inner.drop()

    def close(self) -> None:
        self.inner.close()


class _Listed:
    """A mapper proposing a fixed list of candidates, ``SEARCH_BATCH`` at a time."""

    name = "listed"

    def __init__(self, candidates: Sequence[Candidate]):
        self.candidates, self.next = list(candidates), 0

    def ask(self) -> list[Candidate]:
        batch = self.candidates[self.next:self.next + SEARCH_BATCH]
        self.next += len(batch)
        return batch

    def tell(self, frame: pd.DataFrame) -> None:
        pass

    def info(self) -> dict[str, Any]:
        return {"candidates": len(self.candidates)}


def _candidates(per_layer: int, quick: bool) -> list[tuple]:
    hw = load_hardware("eyeriss_like")
    layers = load_network("marvel15").layers
    if quick:
        layers = tuple(layer for layer in layers if layer.name in QUICK_LAYERS)
    out = []
    for i, layer in enumerate(layers):
        rng = random.Random(i)
        space = SearchSpace.default(layer, hw.num_pes)
        out.append((layer, [space.random_genome(rng) for _ in range(per_layer)]))
    return out


def _style_work(quick: bool) -> list[tuple]:
    """Per layer, the mappings the five named styles give it (those that map it)."""
    from accelsim.errors import InputError
    from accelsim.mapping.styles import STYLES, style_mapping

    hw = load_hardware("eyeriss_like")
    out = []
    for layer in load_network("marvel15").layers:
        if quick and layer.name not in QUICK_LAYERS:
            continue
        mappings = []
        for style in STYLES:
            try:
                mappings.append(style_mapping(style, layer, hw))
            except InputError:
                continue
        out.append((layer, mappings))
    return out


def _search(work: list[tuple], executor: Executor, model: str = "analytical",
            overlapped: bool = True) -> list[LayerSearch]:
    """Search each layer of ``work`` through its list of candidates on ``executor``: every layer
    at once, or (``overlapped`` False) one after another; in layer order."""
    hw = load_hardware("eyeriss_like")
    found: dict[int, LayerSearch] = {}
    evaluators = [Evaluator(hw, layer, model=model, executor=executor) for layer, _ in work]
    screenings = (search_steps(ev, _Listed(candidates), max(1, len(candidates)))
                  for ev, (_, candidates) in zip(evaluators, work))
    if overlapped:
        run_overlapped(screenings, executor, found.__setitem__)
    else:
        found = dict(enumerate(drive(screening, executor) for screening in screenings))
    return [found[i] for i in sorted(found)]


def _score(work: list[tuple], executor: Executor, model: str = "analytical") -> tuple[float, float, pd.DataFrame]:
    """(wall seconds, share of them in the parent, rows: each new schedule once, in layer order)
    of :func:`_search` on ``executor``."""
    timed = _Timed(executor)
    start = time.perf_counter()
    found = _search(work, timed, model)
    wall = time.perf_counter() - start
    return wall, (wall - timed.seconds) / wall, pd.concat([layer.frame for layer in found], ignore_index=True)


def worker_counts(cores: int) -> list[int]:
    """2, 4, 8, ... below ``cores``, and ``cores`` itself (none for one core)."""
    counts, n = [], 2
    while n < cores:
        counts.append(n)
        n *= 2
    return counts + ([cores] if cores > 1 else [])


def run_search_bench(quick: bool = False) -> Iterator[str]:
    """Run the scenario; yield one printable line per executor and the comparisons."""
    work = _candidates(40 if quick else 100, quick)
    n = sum(len(genomes) for _, genomes in work)
    cores = available_cores()
    yield (f"screening {n} random genomes of {len(work)} marvel15 layers on eyeriss_like (analytical, realistic); "
           f"{cores} cores, load average {os.getloadavg()[0]:.1f}")
    styles = _style_work(quick)
    styles_wall, _, _ = _score(styles, InProcess())
    count = sum(len(mappings) for _, mappings in styles)
    yield f"the five named styles' mappings ({count}): {count / styles_wall:,.1f} candidates/s in 1 process"
    cpu0 = time.process_time()
    one_wall, one_parent, one = _score(work, InProcess())
    one_cpu = time.process_time() - cpu0
    runs = int((one["status"] == "ok").sum())
    yield (f"1 process: {one_wall:.1f} s ({one_cpu:.1f} s CPU), {n / one_wall:,.1f} candidates/s "
           f"({n / one_cpu:,.1f} per CPU second), {runs / one_wall:,.1f} model runs/s ({runs} legal, "
           f"{int((one['status'] == 'skipped').sum())} over the work budget); "
           f"compile, check and scoring {100 * (1 - one_parent):.0f}%, the rest {100 * one_parent:.0f}%")
    for workers in worker_counts(cores):
        pool = LocalProcesses(workers)
        try:
            line = _against_one(f"{workers} local workers", work, pool, n, one_wall, one)
        finally:
            pool.close()
        yield line
    if cores > 1:
        yield _ceiling(quick, cores)
    yield from _dask(work, n, one_wall, one, cores)
    yield from _projection(work)
    yield from _search_projection(quick)
    yield from _rerank(one)
    yield f"load average after: {os.getloadavg()[0]:.1f}"


ALONE_PER_LAYER = 30  # genomes a layer that each independent process screens (the first of the scenario's)
TOGETHER_START_SECONDS = 300  # the most the independent processes wait for each other to start


def _screen_alone(quick: bool, start: Any, seconds: Any) -> None:
    """An independent process: screen the first ``ALONE_PER_LAYER`` genomes of each layer in
    this process once ``start`` (a barrier) lets every such process go; put the wall seconds."""
    work = [(layer, genomes[:ALONE_PER_LAYER]) for layer, genomes in _candidates(100, quick)]
    _score(work[:1], InProcess())
    start.wait()
    began = time.perf_counter()
    _score(work, InProcess())
    seconds.put(time.perf_counter() - began)


def _together(quick: bool, n: int) -> list[float]:
    """The wall seconds of ``n`` independent processes screening the same work at once."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    # a process that fails before the barrier breaks it for the others after this long, not never
    start, seconds = context.Barrier(n, timeout=TOGETHER_START_SECONDS), context.SimpleQueue()
    processes = [context.Process(target=_screen_alone, args=(quick, start, seconds)) for _ in range(n)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    failed = [process.exitcode for process in processes if process.exitcode != 0]
    if failed:
        raise RuntimeError(f"{len(failed)} of {n} independent screening processes failed (exit status {failed[0]})")
    return [seconds.get() for _ in range(n)]


def _ceiling(quick: bool, cores: int) -> str:
    """How much ``cores`` busy cores slow each other here: the same screening in ``cores``
    independent processes at once (no parent, no coordination) against one alone; the speed-up
    no executor can pass on this machine, ``sum(alone / together)``."""
    alone = _together(quick, 1)[0]
    together = _together(quick, cores)
    ceiling = sum(alone / t for t in together)
    return (f"{cores} independent processes screening the same candidates at once, no parent: each at "
            f"{alone / max(together):.2f}-{alone / min(together):.2f}x its speed alone; "
            f"the most {cores} workers can reach here: {ceiling:.2f}x")


def _dask(work: list[tuple], n: int, one_wall: float, one: pd.DataFrame, cores: int) -> Iterator[str]:
    try:
        import distributed  # noqa: F401 - whether it is installed
    except ImportError:
        yield "Dask: not installed (pip install 'accelsim[distributed]')"
        return
    from accelsim.search.executors import DaskExecutor, local_cluster

    for workers in worker_counts(cores):
        with local_cluster(workers) as client:
            line = _against_one(f"Dask LocalCluster, {workers} workers", work, DaskExecutor(client), n, one_wall, one)
        yield line


def _against_one(label: str, work: list[tuple], executor: Executor, n: int, one_wall: float,
                 one: pd.DataFrame) -> str:
    """``label``'s line: ``work`` (``n`` candidates) scored on ``executor``, against the 1-worker
    run (``one_wall`` seconds, rows ``one``)."""
    _score(work[:1], executor)  # start-up (spawning, imports) is paid once, not measured
    cpu0 = time.process_time()
    wall, parent, rows = _score(work, executor)
    cpu = time.process_time() - cpu0
    return (f"{label}: {wall:.1f} s, {n / wall:,.1f} candidates/s, speed-up "
            f"{one_wall / wall:.2f}x; rows identical: {one[_SAME].equals(rows[_SAME])}; "
            f"time in the parent {100 * parent:.0f}%, its CPU {cpu:.2f} s")


def _projection(work: list[tuple]) -> Iterator[str]:
    """The speed-ups on 2, 4, 8, 16 virtual idle workers (:mod:`accelsim.search.replay`), layers
    one after another against overlapped."""
    costs: dict = {}
    one = VirtualWorkers(1, costs)
    _search(work, one, overlapped=False)
    for workers in PROJECTED_WORKERS:
        line = []
        for overlapped in (False, True):
            virtual = VirtualWorkers(workers, costs)
            _search(work, virtual, overlapped=overlapped)
            line.append(f"{one.now / virtual.now:.2f}x (workers busy {100 * virtual.busy_seconds / (workers * virtual.now):.0f}%, "
                        f"parent {100 * virtual.parent_seconds / virtual.now:.0f}%)")
        yield (f"projected on {workers} idle workers (each candidate's cost measured here, transfers free): "
               f"layers one after another {line[0]}, layers overlapped {line[1]}")


def _search_projection(quick: bool) -> Iterator[str]:
    """``accelsim search`` itself (GAMMA, ``SESSION_BUDGET`` schedules a layer, the named styles
    first, ``candidates.parquet`` written as it goes) on 1, then 2-16 virtual idle workers: the
    parent's share with a real mapper and the output directory's writing, which the listed
    scenario above leaves out."""
    settings = SearchSettings("eyeriss_like", network="marvel15", budget=SESSION_BUDGET,
                              layer=QUICK_LAYERS[1] if quick else None)
    costs: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        one = VirtualWorkers(1, costs)
        run_search(settings, Path(tmp) / "one", one)
        line = []
        for workers in PROJECTED_WORKERS:
            virtual = VirtualWorkers(workers, costs)
            run_search(settings, Path(tmp) / f"w{workers}", virtual)
            line.append(f"{one.now / virtual.now:.2f}x (workers busy "
                        f"{100 * virtual.busy_seconds / (workers * virtual.now):.0f}%, parent "
                        f"{100 * virtual.parent_seconds / virtual.now:.0f}%)")
    yield (f"accelsim search, gamma, {SESSION_BUDGET} schedules of {settings.layer or 'each of the 15 layers'}, "
           f"projected on {' / '.join(map(str, PROJECTED_WORKERS))} idle workers: {' / '.join(line)}")


def _rerank(screened: pd.DataFrame) -> Iterator[str]:
    """The simulator on each layer's ``RERANK_K`` best screened schedules, in this process."""
    work = [(layer, top_k(screened[screened["layer"] == layer.name], RERANK_K)["dataflow"].tolist())
            for layer in load_network("marvel15").layers if (screened["layer"] == layer.name).any()]
    n = sum(len(dataflows) for _, dataflows in work)
    cpu0 = time.process_time()
    wall, _, rows = _score(work, InProcess(), model="sim")
    cpu = time.process_time() - cpu0
    yield (f"two-stage re-rank, the simulator on each layer's {RERANK_K} best ({n}): {wall:.1f} s ({cpu:.1f} s CPU), "
           f"{n / wall:,.1f} candidates/s ({n / cpu:,.1f} per CPU second), "
           f"{int((rows['status'] == 'ok').sum())} simulated")
