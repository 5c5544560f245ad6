"""The simulation context: one SimPy environment and the resources several layer simulations share.

A :class:`SimContext` is made outside a layer's simulation and handed to it, so several layer
simulations (one per sub-accelerator of a system, :mod:`accelsim.system`) can run on one clock
and contend for one off-chip channel, cycle by cycle. A lone layer (``simulate``) makes its own.

Warps (:mod:`accelsim.sim.warp`) shift the whole clock, so they are exact only while one
simulation owns every pending event. The context counts its *tenants* (a lone simulation, or a
sub-accelerator's driver process from its first job to its last) and the warps of the
simulations running; a warp takes checkpoints only while it is the *solo* one (one tenant, one
simulation running). Every change of either forgets all snapshots, so two snapshots a warp
compares were both taken while it ran alone, with nothing started in between.
"""

from __future__ import annotations

import heapq
from heapq import heappop
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import simpy

if TYPE_CHECKING:  # the warps of the simulations running on this context
    from accelsim.sim.warp import Origin, Warp


class SimContext:
    """One clock (``env``, cycles), the off-chip ``channel`` every simulation on it uses for its
    DMA transfers (one at a time, granted in request order: ``simpy.Resource``, or in priority
    order: ``simpy.PriorityResource``), and who is running."""

    def __init__(self, env: simpy.Environment | None = None, channel: simpy.Resource | None = None):
        self.env = env if env is not None else simpy.Environment()
        self.channel = channel if channel is not None else simpy.Resource(self.env, 1)
        self.tenants = 0
        self.running: list[Warp] = []
        self.solo: Warp | None = None  # the warp allowed to take checkpoints, if any

    # ------------------------------------------------------------------ who is running
    def enter(self) -> None:
        """A tenant (a lone simulation or a sub-accelerator's driver) begins."""
        self.tenants += 1
        self._changed()

    def leave(self) -> None:
        """A tenant has ended."""
        self.tenants -= 1
        self._changed()

    def attach(self, warp: Warp) -> None:
        """A simulation with this warp starts running."""
        self.running.append(warp)
        self._changed()

    def detach(self, warp: Warp) -> None:
        """The simulation with this warp has ended."""
        self.running.remove(warp)
        self._changed()

    def _changed(self) -> None:
        for warp in self.running:
            warp.forget()
        self.solo = self.running[0] if self.tenants == 1 and len(self.running) == 1 else None

    # ------------------------------------------------------------------ the clock
    def run(self) -> None:
        """Process every event; at the first moment with no event left at the current cycle
        after the solo simulation reached a checkpoint, let its warp take it."""
        env = self.env
        event: Any  # SimPy marks an event processed by setting its callbacks (typed as a list) to None
        while True:
            queue = env._queue  # noqa: SLF001 (a warp's shift replaces it)
            warp = self.solo
            if warp is not None and warp.pending and (not queue or queue[0][0] > env._now):  # noqa: SLF001
                warp.take()
                queue = env._queue  # noqa: SLF001
            if not queue:
                return
            # SimPy's Environment.step, inline: the next event's callbacks; a failed event
            # that no callback defused ends the run with its exception
            env._now, _, _, event = heappop(queue)  # noqa: SLF001
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            if not event._ok and not hasattr(event, "_defused"):  # noqa: SLF001
                exc = type(event._value)(*event._value.args)  # noqa: SLF001
                exc.__cause__ = event._value  # noqa: SLF001
                raise exc

    def pending(self, origin: Origin, label: Callable[[Any, int], tuple],
                offchip: Callable[[tuple], bool]) -> Queue:
        """The event queue in firing order: every event relative to ``origin`` (cycles after
        it, priority, who each event wakes, by ``label(callback, tile)``); the same for the
        events that wake an on-chip process only; and those that wake only the off-chip side
        (``offchip(label)`` of each callback's label) as they stand, (cycle, priority, SimPy's
        event id)."""
        every, onchip, off = [], [], []
        tile = origin.tile
        for at, priority, eid, event in sorted(self.env._queue):  # noqa: SLF001 (SimPy's event queue)
            labels = tuple(label(cb, tile) for cb in event.callbacks or ())
            entry = (at - origin.cycle, priority, labels)
            every.append(entry)
            if labels and all(offchip(x) for x in labels):
                off.append((int(at), priority, eid))
            else:
                onchip.append(entry)
        return Queue(tuple(every), tuple(onchip), tuple(off))

    def shift(self, cycles: int, keep: frozenset[int] = frozenset()) -> None:
        """Move the clock and every pending event ``cycles`` on (only for the solo warp), except
        the events whose ids are in ``keep``: they stay where they are."""
        env = self.env
        env._now += cycles  # noqa: SLF001
        env._queue = [(at + cycles if eid not in keep else at, priority, eid, event)  # noqa: SLF001
                      for at, priority, eid, event in env._queue]  # noqa: SLF001
        if keep:  # a uniform shift keeps SimPy's heap order; one that leaves events behind may not
            heapq.heapify(env._queue)  # noqa: SLF001


@dataclass(frozen=True)
class Queue:
    """The event queue as a warp compares it (see :meth:`SimContext.pending`): ``every`` event
    and the ``onchip`` ones relative to a checkpoint, the ``offchip`` ones as they stand."""

    every: tuple
    onchip: tuple
    offchip: tuple
