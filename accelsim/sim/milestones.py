"""When numbered results are in place: partial sums drained at a step (in L2) or an L2 tile's
write-back (in DRAM), for the processes that must not read them earlier.

A result is *announced* with the cycle it is in place (its *landing*). Partial sums are also
*promised* (by the compute process, in step order) before they are announced (by the drain),
and ``reach(n)`` says every result below ``n`` that will ever exist has been promised, so a
wait for one that was never promised returns at once: it does not exist.

Announcements come one by one, or as *lattices* when the engine skips a periodic block of
steps (:mod:`accelsim.sim.engine`, warp): ``base + sum(i_d * key_stride_d)`` lands at
``cycle + sum(i_d * cycle_stride_d)`` for ``0 <= i_d < count_d`` (outer dimension first, each
stride larger than everything the inner ones span).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterator

import simpy


class Lattice:
    """Results ``base + sum(i_d * key_stride_d)`` in place at ``cycle + sum(i_d * cycle_stride_d)``
    for every ``0 <= i_d < count_d``; ``dims`` = ((count, key_stride, cycle_stride), ...),
    outermost first; ``last_key``: the largest member, ``last_cycle``: the latest landing of
    any member. Never changed once made (a plain class: a dataclass's frozen constructor cost
    more than the rest of an announcement)."""

    __slots__ = ("base", "cycle", "dims", "last_key", "last_cycle")

    def __init__(self, base: int, cycle: int, dims: tuple[tuple[int, int, int], ...] = ()):
        self.base = base
        self.cycle = cycle
        self.dims = dims
        if dims:
            self.last_key = base + sum((n - 1) * k for n, k, _ in dims)
            self.last_cycle = cycle + sum((n - 1) * max(0, c) for n, _, c in dims)
        else:
            self.last_key = base
            self.last_cycle = cycle

    def cycle_of(self, key: int) -> int | None:
        """Landing of result ``key`` if it is a member, else None."""
        rest = key - self.base
        if rest < 0:
            return None
        cycle = self.cycle
        for count, key_stride, cycle_stride in self.dims:
            i = rest // key_stride
            if i >= count:
                return None
            rest -= i * key_stride
            cycle += i * cycle_stride
        return cycle if rest == 0 else None

    def landing_after(self, cycle: int, limit: int) -> Iterator[tuple[int, int]]:
        """Members (key, landing) that land after ``cycle``, at most ``limit`` + 1 of them."""
        found = 0
        stack = [(0, self.base, self.cycle)]
        while stack:
            d, key, at = stack.pop()
            if d == len(self.dims):
                if at > cycle:
                    yield key, at
                    found += 1
                    if found > limit:
                        return
                continue
            count, key_stride, cycle_stride = self.dims[d]
            top = at + sum((n - 1) * max(0, c) for n, _, c in self.dims[d:])
            if top <= cycle:
                continue  # nothing below lands after ``cycle``
            for i in range(count - 1, -1, -1):
                stack.append((d + 1, key + i * key_stride, at + i * cycle_stride))

    def repeated(self, count: int, key_stride: int, cycle_stride: int) -> "Lattice":
        """``count`` copies of this lattice, the first ``key_stride`` and ``cycle_stride`` on
        from it, each further one as far on again."""
        return Lattice(self.base + key_stride, self.cycle + cycle_stride,
                       ((count, key_stride, cycle_stride),) + self.dims)


class Milestones:
    """Announced results. ``log`` holds every announcement in order (a single result is a
    lattice without dimensions), for the engine to replicate a skipped block's."""

    def __init__(self, env: simpy.Environment, in_key_order: bool):
        self.env = env
        # partial sums are announced in step order (the drain process is first in, first out),
        # which lets a wait see at once that everything up to a key has landed
        self.in_key_order = in_key_order
        self.log: list[Lattice] = []
        self.single: dict[int, int] = {}  # key -> landing of single results
        self.lattices: list[Lattice] = []  # the log's lattices with dimensions
        self.spans: list[tuple[int, int]] = []  # per lattice, its first and last key
        self.reach_by: list[int] = []  # per lattice, the largest last key of it and all before it
        self.first_keys: list[int] = []  # per log entry (in key order when in_key_order)
        self.landed_by: list[int] = []  # per log entry, the latest landing of it and all before
        self.promised: set[int] = set()  # promised and not yet announced
        self.reached = 0
        self.news = env.event()
        self.ahead: list[Lattice] = []  # log entries some member of which may not have landed yet

    # ------------------------------------------------------------------ recording
    def promise(self, key: int) -> None:
        self.promised.add(key)

    def reach(self, key: int) -> None:
        self.reached = key
        self._tell()

    def announce(self, key: int, cycle: int) -> None:
        self.promised.discard(key)
        self.single[key] = cycle
        self._append(Lattice(key, cycle))
        self._tell()

    def add(self, lattice: Lattice) -> None:
        """Record a lattice of results (a skipped block's announcements)."""
        self.lattices.append(lattice)
        self.spans.append((lattice.base, lattice.last_key))
        self.reach_by.append(max(self.reach_by[-1], lattice.last_key) if self.reach_by else lattice.last_key)
        self._append(lattice)

    def _append(self, lattice: Lattice) -> None:
        self.log.append(lattice)
        self.ahead.append(lattice)
        self.first_keys.append(lattice.base)
        before = self.landed_by[-1] if self.landed_by else -1
        self.landed_by.append(max(before, lattice.last_cycle))

    def _tell(self) -> None:
        if self.news.callbacks:  # someone waits
            self.news.succeed()
            self.news = self.env.event()

    # ------------------------------------------------------------------ queries
    def landed_through(self, key: int, now: int) -> bool:
        """Every result up to ``key`` that exists is in place at ``now`` (needs announcements
        in key order, as partial sums come)."""
        if not self.in_key_order or key >= self.reached or any(p <= key for p in self.promised):
            return False
        i = bisect_right(self.first_keys, key)
        return i == 0 or self.landed_by[i - 1] <= now

    def cycle_of(self, key: int) -> int | None:
        """When result ``key`` is in place, if it has been announced."""
        found = self.single.get(key)
        if found is not None:
            return found
        spans, reach_by = self.spans, self.reach_by
        for i in range(len(spans) - 1, -1, -1):  # the latest first; a key beyond a span is no member
            if reach_by[i] < key:
                break  # no lattice up to this one reaches the key
            first, last = spans[i]
            if first <= key <= last:
                found = self.lattices[i].cycle_of(key)
                if found is not None:
                    return found
        return None

    def may_come(self, key: int) -> bool:
        """Result ``key`` is not announced but may still be (promised, or not yet reached)."""
        return key >= self.reached or key in self.promised

    def landing_after(self, cycle: int, limit: int = 256) -> list[tuple[int, int]] | None:
        """(key, landing) of announced results not in place at ``cycle``, in key order; None
        when there are more than ``limit``."""
        self.ahead = [lattice for lattice in self.ahead if lattice.last_cycle > cycle]
        out: list[tuple[int, int]] = []
        for lattice in self.ahead:
            out += lattice.landing_after(cycle, limit)
            if len(out) > limit:
                return None
        return sorted(out)
