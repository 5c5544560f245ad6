"""``accelsim bench --search``: how fast candidates are screened, and how well workers scale.

Scenario: for each layer of MARVEL's 15 (``--quick``: three of them) on ``eyeriss_like``, the
mappings the five named styles give it (scored in this process), then a fixed set of random genomes of the layer's default search space (seeded), scored by the analytical
model in realistic mode, as a search would screen them: first in this process (one core), then
by two local worker processes, then by a Dask LocalCluster of two single-threaded workers when
``distributed`` is installed. Figures: candidates per second (every candidate, legal or not: a
search pays for all of them) and model runs per second, the speed-up of two workers over one,
and whether every executor returned the same rows. The load average is printed with them: the
figures are only comparable at similar loads.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator

import pandas as pd

from accelsim.hw.loader import load_hardware
from accelsim.search.evaluate import COLUMNS, Evaluator
from accelsim.search.executors import Executor, InProcess, LocalProcesses
from accelsim.search.space import SearchSpace
from accelsim.workload.tables import load_network

QUICK_LAYERS = ("L3_Bottleneck4_3_2", "L8_CONV2_2_2", "L13_CONV5_1_3")
_SAME = [c for c in COLUMNS if c != "wall_seconds"]


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


def _score(work: list[tuple], executor: Executor) -> tuple[float, pd.DataFrame]:
    hw = load_hardware("eyeriss_like")
    frames = []
    start = time.perf_counter()
    for layer, genomes in work:
        with Evaluator(hw, layer, executor=executor) as ev:
            frames.append(ev.evaluate(genomes))
    return time.perf_counter() - start, pd.concat(frames, ignore_index=True)


def run_search_bench(quick: bool = False) -> Iterator[str]:
    """Run the scenario; yield one printable line per executor and the comparisons."""
    work = _candidates(40 if quick else 100, quick)
    n = sum(len(genomes) for _, genomes in work)
    yield (f"screening {n} random genomes of {len(work)} marvel15 layers on eyeriss_like (analytical, realistic); "
           f"load average {os.getloadavg()[0]:.1f}")
    styles = _style_work(quick)
    styles_wall, _ = _score(styles, InProcess())
    count = sum(len(mappings) for _, mappings in styles)
    yield f"the five named styles' mappings ({count}): {count / styles_wall:,.1f} candidates/s in 1 process"
    one_wall, one = _score(work, InProcess())
    runs = int((one["status"] == "ok").sum())
    yield (f"1 process: {one_wall:.1f} s, {n / one_wall:,.1f} candidates/s, {runs / one_wall:,.1f} model runs/s "
           f"({runs} legal, {int((one['status'] == 'skipped').sum())} over the work budget)")
    pool = LocalProcesses(2)
    try:
        _score(work[:1], pool)  # start-up (spawning, imports) is not what is measured
        two_wall, two = _score(work, pool)
    finally:
        pool.close()
    yield (f"2 local workers: {two_wall:.1f} s, {n / two_wall:,.1f} candidates/s, speed-up {one_wall / two_wall:.2f}x; "
           f"rows identical: {one[_SAME].equals(two[_SAME])}")
    try:
        import distributed
    except ImportError:
        yield "Dask: not installed (pip install 'accelsim[distributed]')"
        return
    from accelsim.search.executors import DaskExecutor

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        executor = DaskExecutor(client)
        _score(work[:1], executor)
        dask_wall, dask = _score(work, executor)
    yield (f"Dask LocalCluster, 2 workers: {dask_wall:.1f} s, {n / dask_wall:,.1f} candidates/s, speed-up "
           f"{one_wall / dask_wall:.2f}x; rows identical: {one[_SAME].equals(dask[_SAME])}")
    yield f"load average after: {os.getloadavg()[0]:.1f}"
