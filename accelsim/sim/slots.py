"""A SimPy buffer pool that reports how many of its buffers are in use after every change."""

from __future__ import annotations

from typing import Callable

import simpy


class ObservedSlots(simpy.Container):
    """``capacity`` free buffers (the container's level); ``report(in_use)`` is called with
    the number of buffers in use whenever a get or put is granted."""

    def __init__(self, env: simpy.Environment, capacity: int, report: Callable[[int], None]):
        super().__init__(env, capacity=capacity, init=capacity)
        self._report = report

    def _do_put(self, event):
        done = super()._do_put(event)
        if done:
            self._report(self.capacity - self.level)
        return done

    def _do_get(self, event):
        done = super()._do_get(event)
        if done:
            self._report(self.capacity - self.level)
        return done
