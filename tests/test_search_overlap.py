"""Overlapping layers' searches on the workers (:mod:`accelsim.search.overlap`): each screening
sees exactly what it sees when run alone, whatever the worker count and the order batches finish
in; with one worker they run one after another; an interruption keeps every started layer's best
so far and ``--resume`` finishes the search."""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.search.executors import DASK_MIN_BATCH_CANDIDATES, MIN_BATCH_CANDIDATES, Batch, DaskExecutor, InProcess
from accelsim.search.models import ModelTask, Screened
from accelsim.search.overlap import (
    BATCHES_PER_WORKER,
    ScreenRequest,
    Screening,
    batches,
    drive,
    run_overlapped,
    split,
)
from test_search_cli import _Interrupt, settings as cli_settings  # noqa: E402  (tests/ is on sys.path)


def test_split_keeps_order_and_sizes():
    """5 items in 2 parts: bounds 5*0//2=0, 5*1//2=2, 5 -> [0, 1] and [2, 3, 4]; more parts than
    items gives one item each; at least one part."""
    assert split([0, 1, 2, 3, 4], 2) == [[0, 1], [2, 3, 4]]
    assert split([0, 1, 2], 8) == [[0], [1], [2]]
    assert split([0, 1, 2], 0) == [[0, 1, 2]]


class _Toy:
    """An executor for screenings of toy requests: a batch's result is one Screened per dataflow,
    keyed by its text; batches finish in the order ``pick`` chooses among those in flight."""

    min_batch_candidates = MIN_BATCH_CANDIDATES

    def __init__(self, workers: int, pick=lambda n: n - 1):
        self.workers, self.pick = workers, pick
        self.flight: list[tuple[Hashable, list[Screened]]] = []
        self.most_in_flight = 0
        self.dropped = False

    @staticmethod
    def _screen(batch: Batch) -> list[Screened]:
        return [Screened(str(d), True, None) for d in batch]

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        return [self._screen(batch) for batch in batches]

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        self.flight.append((tag, self._screen(batch)))
        self.most_in_flight = max(self.most_in_flight, len(self.flight))

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        return self.flight.pop(self.pick(len(self.flight)))

    def drop(self) -> None:
        self.dropped = True
        self.flight.clear()

    def close(self) -> None:
        pass


def _toy_screening(name: str, sizes: list[int], log: list[str]) -> Screening[list[list[str]]]:
    """Requests of ``sizes`` dataflows (each the next of a counter, so a mix-up shows); returns
    the keys it received per request."""
    log.append(f"start {name}")
    seen, n = [], 0
    for size in sizes:
        got = yield ScreenRequest(None, [(f"{name}.{n + i}",) for i in range(size)])  # type: ignore[arg-type]
        seen.append([s.key for s in got])
        n += size
    log.append(f"end {name}")
    return seen


@settings(max_examples=60, deadline=None)
@given(layers=st.lists(st.lists(st.integers(0, 30), max_size=5), min_size=1, max_size=6),
       workers=st.integers(1, 5), seed=st.randoms(use_true_random=False))
def test_overlapped_screenings_see_what_they_see_alone(layers, workers, seed):
    """Whatever the worker count and the order batches finish in, each screening receives its
    own results in request order (what :func:`drive` gives it), and every one finishes once."""
    alone = [drive(_toy_screening(f"L{i}", sizes, []), _Toy(1)) for i, sizes in enumerate(layers)]
    done: dict[int, list[list[str]]] = {}
    executor = _Toy(workers, pick=lambda n: seed.randrange(n))
    run_overlapped((_toy_screening(f"L{i}", sizes, []) for i, sizes in enumerate(layers)), executor,
                   lambda i, value: done.__setitem__(i, value) if i not in done else pytest.fail("twice"))
    assert [done[i] for i in range(len(layers))] == alone
    assert not executor.flight


def test_one_worker_runs_layers_one_after_another():
    log: list[str] = []
    run_overlapped((_toy_screening(n, [3, 2], log) for n in "ABC"), _Toy(1), lambda i, v: None)
    assert log == ["start A", "end A", "start B", "end B", "start C", "end C"]


def test_batches_hold_at_least_the_fewest_candidates():
    """8 parts wanted of 10 dataflows would be batches of 1 or 2; with at least 4 a batch, 10 // 4
    = 2 batches of 5. 3 dataflows: one batch. 40 into 8: 8 batches of 5, as asked."""
    assert MIN_BATCH_CANDIDATES == 4
    assert [len(b) for b in batches(list(range(10)), 8, 4)] == [5, 5]
    assert [len(b) for b in batches(list(range(3)), 8, 4)] == [3]
    assert [len(b) for b in batches(list(range(40)), 8, 4)] == [5] * 8
    assert [x for b in batches(list(range(10)), 8, 4) for x in b] == list(range(10))


def test_dask_batches_hold_more_candidates():
    """Dask's floor is 25 (DASK_MIN_BATCH_CANDIDATES): a 50-candidate ask wanted in 8 parts goes
    out as 50 // 25 = 2 batches of 25; 49 as one batch; 100 in 8 parts as 100 // 25 = 4 of 25."""
    assert DaskExecutor.min_batch_candidates == DASK_MIN_BATCH_CANDIDATES == 25
    assert [len(b) for b in batches(list(range(50)), 8, 25)] == [25, 25]
    assert [len(b) for b in batches(list(range(49)), 8, 25)] == [49]
    assert [len(b) for b in batches(list(range(100)), 8, 25)] == [25] * 4


def test_workers_take_other_layers_batches():
    """Two workers (low water 2 x 2 = 4 batches), requests of 40 dataflows, the latest batch
    finishing first: A's first request goes out as 4 x 2 = 8 batches of 5 (one screening running);
    once fewer than 4 are in flight, B starts, with ceil(8 / 2) = 4 batches per request, while A
    waits for its oldest batch."""
    log: list[str] = []
    executor = _Toy(2)
    run_overlapped((_toy_screening(n, [40, 40], log) for n in "AB"), executor, lambda i, v: None)
    assert log.index("start B") < log.index("end A")
    assert executor.most_in_flight == 2 * BATCHES_PER_WORKER


def test_an_interruption_drops_the_batches_and_closes_the_screenings():
    closed: list[str] = []

    def screening(name: str) -> Screening[None]:
        try:
            yield ScreenRequest(None, [("x",)])  # type: ignore[arg-type]
            yield ScreenRequest(None, [("y",)])  # type: ignore[arg-type]
        finally:
            closed.append(name)

    def stop(i: int, value: object) -> None:
        raise KeyboardInterrupt

    executor = _Toy(2, pick=lambda n: 0)
    with pytest.raises(KeyboardInterrupt):
        run_overlapped((screening(n) for n in "ABCD"), executor, stop)
    assert executor.dropped and sorted(closed) == ["A", "B", "C", "D"]


# --- accelsim search ---------------------------------------------------------------------------

pytest.importorskip("pyarrow")
pytest.importorskip("scipy")

NETWORK = """name: tiny3
layers:
  - {name: conv, type: CONV2D, K: 16, C: 8, R: 3, S: 3, Y: 10, X: 10}
  - {name: fc, type: GEMM, M: 8, N: 16, K: 32}
  - {name: dw, type: DWCONV, K: 8, C: 8, R: 3, S: 3, Y: 8, X: 8}
"""
WALL = ("screen_seconds", "seconds")


class _Backwards(InProcess):
    """Scores in this process like :class:`InProcess`, but claims two workers and hands finished
    batches back latest first: a deterministic overlap of layers."""

    workers = 2

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        return self._done.pop()


@pytest.fixture()
def network(tmp_path: Path) -> Path:
    path = tmp_path / "tiny3.yaml"
    path.write_text(NETWORK, encoding="utf-8")
    return path


def _settings(network: Path, **kw):
    """test_search_cli's settings with a smaller budget and population (three layers here)."""
    return cli_settings(network, **{"budget": 20, "population": 6, **kw})


def _stored(out: Path) -> pd.DataFrame:
    rows = pd.read_parquet(out / "candidates.parquet").drop(columns="wall_seconds")
    return rows.sort_values(["layer", "model", "sample"]).reset_index(drop=True)


def _summary(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    for layer in summary["layers"]:
        for key in WALL:
            layer.pop(key, None)
        if layer.get("best"):
            layer["best"].pop("wall_seconds", None)
    return summary


def _same_search(a: Path, b: Path) -> None:
    assert _stored(a).equals(_stored(b))
    assert (a / "best.m").read_text() == (b / "best.m").read_text()
    assert _summary(a) == _summary(b)


@pytest.mark.parametrize("model", ["analytical", "two-stage"])
def test_overlapped_search_writes_what_one_worker_writes(network, tmp_path, model):
    """Layers searched at once (finished batches handed back latest first) give the same
    candidates.parquet, best.m and summary.json (wall times aside, layers in network order)."""
    from accelsim.search.session import run_search

    s = _settings(network, model=model, top_k=2)
    run_search(s, tmp_path / "one", InProcess())
    run_search(s, tmp_path / "two", _Backwards())
    _same_search(tmp_path / "one", tmp_path / "two")
    assert [layer["layer"] for layer in _summary(tmp_path / "two")["layers"]] == ["conv", "fc", "dw"]


def test_interrupted_overlapped_search_keeps_each_started_layer_and_resumes(network, tmp_path):
    """Stopped after 25 rows with layers in flight: summary.json lists the layers started, in
    network order, those not finished `interrupted` with their best so far; best.m has their
    mappings; --resume (one worker) finishes with the same directory an uninterrupted run writes."""
    from accelsim.search.session import run_search

    s = _settings(network)
    run_search(s, tmp_path / "whole", InProcess())
    broken = tmp_path / "broken"
    with pytest.raises(KeyboardInterrupt):
        run_search(s, broken, _Backwards(), progress=_Interrupt(25))
    layers = json.loads((broken / "summary.json").read_text())["layers"]
    names = [layer["layer"] for layer in layers]
    assert names == [n for n in ("conv", "fc", "dw") if n in names]
    interrupted = [layer for layer in layers if layer["stopped"] == "interrupted"]
    assert len(interrupted) >= 2  # more than one layer was in flight
    rows = _stored(broken)
    for layer in interrupted:
        mine = rows[(rows["layer"] == layer["layer"]) & (rows["status"] == "ok")]
        assert layer["scored"] == (rows["layer"] == layer["layer"]).sum()
        assert (layer["best"] is None) if mine.empty else (layer["best"]["cost"] == mine["cost"].min())
    run_search(s, broken, _Backwards(), resume=True)
    _same_search(tmp_path / "whole", broken)


def test_a_real_pool_and_dask_write_what_one_worker_writes(network, tmp_path):
    """Two local worker processes and a Dask LocalCluster of two workers (as the bench starts it):
    the same directory."""
    pytest.importorskip("distributed")
    from accelsim.search.executors import DaskExecutor, LocalProcesses, local_cluster
    from accelsim.search.session import run_search

    s = _settings(network, budget=12)
    run_search(s, tmp_path / "one", InProcess())
    pool = LocalProcesses(2)
    try:
        run_search(s, tmp_path / "two", pool)
    finally:
        pool.close()
    with local_cluster(2) as client:  # the bench's LocalCluster settings
        run_search(s, tmp_path / "dask", DaskExecutor(client))
    _same_search(tmp_path / "one", tmp_path / "two")
    _same_search(tmp_path / "one", tmp_path / "dask")



def test_virtual_workers_schedule_batches_as_a_pool_would():
    """Two virtual idle workers, batches of cost 3, 1 and 1 (s) submitted at once: the first runs
    0-3 on one worker, the second 0-1 on the other, the third after it, 1-2; they come back at 1,
    2, 3 and the workers were busy 5 of 2 x 3 s. A repeated schedule in a batch costs nothing
    (the 3 s batch is one schedule twice and one of 1 s: 2 + 1). The parent's own CPU time
    between calls is added to the clock: microseconds here."""
    from types import SimpleNamespace

    from accelsim.search.replay import VirtualWorkers

    task = SimpleNamespace(layer=SimpleNamespace(name="L"))
    costs = {("L", ("a",)): (2.0, Screened("A", True, None)), ("L", ("b",)): (1.0, Screened("B", True, None)),
             ("L", ("c",)): (1.0, Screened("C", True, None))}
    virtual = VirtualWorkers(2, costs)
    virtual.submit(task, [("a",), ("a",), ("b",)], "x")  # type: ignore[arg-type]
    virtual.submit(task, [("b",)], "y")  # type: ignore[arg-type]
    virtual.submit(task, [("c",)], "z")  # type: ignore[arg-type]
    order = []
    for _ in range(3):
        tag, _ = virtual.next_done()
        order.append((tag, round(virtual.now, 2)))
    assert order == [("y", 1.0), ("z", 2.0), ("x", 3.0)]
    assert virtual.busy_seconds == 5.0 and virtual.parent_seconds < 0.05
