"""Idle workers on paper: an executor that scores every batch for real in this process but
keeps a *virtual* clock, as if ``workers`` idle cores ran the batches, so ``accelsim bench
--search`` can say what speed-up the search's scheduling allows on a machine it does not have.

Each candidate is screened once, alone, and its CPU seconds are its cost from then on (a batch
costs the sum of its candidates', a repeated schedule in a batch nothing). A batch submitted at
virtual time ``t`` starts when the worker that is free first is free (the order of submission,
as a process pool takes them) and ends its cost later; waiting for a batch moves the clock to its
end. The parent is one more serial resource: the CPU seconds it spends between calls (encoding,
merging, the mappers) advance the clock too. Transfers and start-up cost nothing here, so the
figure is an upper bound for local processes on idle cores.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Hashable, Sequence

from accelsim.search.executors import MIN_BATCH_CANDIDATES, Batch
from accelsim.search.models import ModelTask, Screened, screen_batch


class VirtualWorkers:
    """An executor (:class:`accelsim.search.executors.Executor`) of ``workers`` virtual idle
    workers; ``costs`` (candidate -> (CPU seconds, result)) may be shared between instances, so
    each candidate is measured once. Batched as local workers are."""

    min_batch_candidates = MIN_BATCH_CANDIDATES

    def __init__(self, workers: int, costs: dict[tuple[str, tuple], tuple[float, Screened]]):
        self.workers = workers
        self.costs = costs
        self.now = 0.0  # virtual seconds
        self.busy_seconds = 0.0  # the workers' (virtual) seconds of work
        self.parent_seconds = 0.0  # the parent's CPU seconds between calls
        self._free = [0.0] * workers  # when each worker is free (a heap)
        self._flight: list[tuple[float, int, Hashable, list[Screened]]] = []  # (end, order, tag, result)
        self._order = 0
        self._left: float | None = None  # process time when the parent last got control back

    def _parent(self) -> None:
        if self._left is not None:
            spent = time.process_time() - self._left
            self.now += spent
            self.parent_seconds += spent

    def _back(self) -> None:
        self._left = time.process_time()

    def _single(self, task: ModelTask, dataflow: Sequence) -> tuple[float, Screened]:
        key = (task.layer.name, tuple(dataflow))
        if key not in self.costs:
            start = time.process_time()
            out = screen_batch(task, [dataflow])[0]
            self.costs[key] = (time.process_time() - start, out)
        return self.costs[key]

    def _run(self, task: ModelTask, batch: Batch) -> tuple[float, list[Screened]]:
        """(virtual end, result) of ``batch`` started on the worker free first."""
        seen: set[str] = set()
        out, cost = [], 0.0
        for dataflow in batch:
            seconds, screened = self._single(task, dataflow)
            if screened.legal and screened.key in seen:  # as screen_batch: scored once per batch
                out.append(Screened(screened.key, True, None))
                continue
            seen.add(screened.key)
            out.append(screened)
            cost += seconds
        start = max(self.now, heapq.heappop(self._free))
        heapq.heappush(self._free, start + cost)
        self.busy_seconds += cost
        return start + cost, out

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        self._parent()
        done = [self._run(task, batch) for batch in batches]
        self.now = max([self.now, *(end for end, _ in done)])
        self._back()
        return [out for _, out in done]

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        self._parent()
        end, out = self._run(task, batch)
        heapq.heappush(self._flight, (end, self._order, tag, out))
        self._order += 1
        self._back()

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        self._parent()
        end, _, tag, out = heapq.heappop(self._flight)
        self.now = max(self.now, end)
        self._back()
        return tag, out

    def drop(self) -> None:
        self._flight.clear()

    def close(self) -> None:
        self.drop()
