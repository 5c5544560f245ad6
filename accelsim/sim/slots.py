"""The engine's buffer pools and queues: SimPy's ``Container`` and ``Store`` semantics, cheaper.

:class:`Slots` (a pool of buffers or words) and :class:`Fifo` (a first-in first-out queue of
unbounded size) grant and schedule the events ``simpy.Container`` and ``simpy.Store`` do, in
the same order, at the same cycles and priorities (so a simulation's event order and every
number it reports are the same): a put succeeds at once where it fits and its event, when
processed, grants the waiting gets (the first one only for a queue); a get succeeds at once
where it can and its event, when processed, grants the waiting puts (a queue of unbounded size
never has any). What they leave out is SimPy's generic request machinery (a request class per
operation, its context manager, the process that made it), which the engine never uses; each
operation builds one plain event instead.

They also leave out a put's event where processing it can do nothing: when a single process
takes from the queue (or takes one buffer at a time from the pool) and it is not waiting at
the put. It cannot then ask again before that event would have been processed (it waits for
its own get, granted at once and so processed after the put's), and its one get meanwhile
succeeds at once, so the event would find no get waiting. An event whose processing does
nothing changes no other event's place in the order (SimPy orders by cycle, priority, then
creation), so the events left are processed in the same order as before.
:class:`ObservedSlots` also reports how many buffers are in use after every change.
"""

from __future__ import annotations

from heapq import heappush
from typing import Any, Callable

import simpy
from simpy.events import NORMAL


class Granted(simpy.Event):
    """A put or get of ``amount`` words or buffers (a pool; 0 for a queue); succeeds once
    granted. Its ``callbacks``: the resource's trigger of the other side, if any."""

    def __init__(self, env: simpy.Environment, callbacks: list[Callable[[Any], None]], amount: int = 0):
        self.env = env
        self.callbacks = callbacks
        self.amount = amount


def _grant(env: simpy.Environment, event: Granted, value: Any = None) -> None:
    """``event.succeed(value)`` (the event is known to be pending), as SimPy schedules it: now,
    normal priority, after every event scheduled so far."""
    event._ok = True  # noqa: SLF001 (SimPy's event and queue fields, as Event.succeed sets them)
    event._value = value  # noqa: SLF001
    heappush(env._queue, (env._now, NORMAL, next(env._eid), event))  # noqa: SLF001


class Slots:
    """``capacity`` buffers (or words), ``init`` of them free (the ``level``), as
    ``simpy.Container``: ``get(n)`` takes ``n`` once they are free, ``put(n)`` returns them."""

    def __init__(self, env: simpy.Environment, capacity: int, init: int, one_taker_of_one: bool = False):
        self.env = env
        self.capacity = capacity
        self.level = init
        # one process takes from the pool, one buffer at a time: a put needs no event while it
        # does not wait (see the module's docstring)
        self.one_taker_of_one = one_taker_of_one
        self.put_queue: list[Granted] = []
        self.get_queue: list[Granted] = []

    def changed(self) -> None:
        """The level has changed (nothing to tell here)."""

    def put(self, amount: int) -> Granted:
        event = Granted(self.env, [self._trigger_get], amount)
        if self.put_queue:
            self.put_queue.append(event)
            self._trigger_put(None)
        elif self.capacity - self.level >= amount:
            self.level += amount
            self.changed()
            if self.get_queue or not self.one_taker_of_one:
                _grant(self.env, event)
        else:
            self.put_queue.append(event)
        return event

    def get(self, amount: int) -> Granted:
        event = Granted(self.env, [self._trigger_put], amount)
        if self.get_queue:
            self.get_queue.append(event)
            self._trigger_get(None)
        elif self.level >= amount:
            self.level -= amount
            self.changed()
            _grant(self.env, event)
        else:
            self.get_queue.append(event)
        return event

    def _trigger_put(self, _: Any) -> None:
        """Grant the waiting puts in order while they fit (SimPy's ``_trigger_put``)."""
        queue = self.put_queue
        while queue and self.capacity - self.level >= queue[0].amount:
            event = queue.pop(0)
            self.level += event.amount
            self.changed()
            _grant(self.env, event)

    def _trigger_get(self, _: Any) -> None:
        """Grant the waiting gets in order while there are enough (SimPy's ``_trigger_get``)."""
        queue = self.get_queue
        while queue and self.level >= queue[0].amount:
            event = queue.pop(0)
            self.level -= event.amount
            self.changed()
            _grant(self.env, event)


class ObservedSlots(Slots):
    """``capacity`` free buffers; ``report(in_use)`` is called with the number of buffers in
    use whenever a get or put is granted."""

    def __init__(self, env: simpy.Environment, capacity: int, report: Callable[[int], None],
                 one_taker_of_one: bool = False):
        super().__init__(env, capacity, capacity, one_taker_of_one)
        self._report = report

    def changed(self) -> None:
        self._report(self.capacity - self.level)


class Fifo:
    """A queue of unbounded size that one process takes from, as ``simpy.Store``: ``put(item)``
    appends at once, ``get()`` takes the oldest item once there is one; ``items``: those
    waiting, oldest first."""

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.items: list[Any] = []
        self.get_queue: list[Granted] = []

    def put(self, item: Any) -> None:
        """Append ``item``; its event only where the taker waits (see the module's docstring)."""
        self.items.append(item)
        if self.get_queue:
            _grant(self.env, Granted(self.env, [self._trigger_get]))

    def get(self) -> Granted:
        event = Granted(self.env, [])
        if not self.get_queue and self.items:  # granted at once, as the trigger would
            _grant(self.env, event, self.items.pop(0))
        else:
            self.get_queue.append(event)
            self._trigger_get(None)
        return event

    def _trigger_get(self, _: Any) -> None:
        """Grant the first waiting get an item, if there is one (SimPy's Store grants one get
        per trigger)."""
        if self.get_queue and self.items:
            _grant(self.env, self.get_queue.pop(0), self.items.pop(0))
