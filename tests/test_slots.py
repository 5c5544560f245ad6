"""The engine's pools and queues (:mod:`accelsim.sim.slots`) against SimPy's Container and Store:
the same processes, with delays drawn so that many events fall on one cycle, resume in the same
order at the same cycles with the same values (differential, hypothesis)."""

from __future__ import annotations

from typing import Any

import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.sim.slots import Fifo, Slots

delays = st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=12)


def _pipeline(ours: bool, taken: list[int], producers: list[list[int]]) -> list[tuple[Any, ...]]:
    """One taker takes a buffer (then frees it ``taken[i]`` cycles later in a process of its own)
    and an item, as the engine's distribution and computation do; each producer puts an item
    after each of its delays. Returns who resumed when, with what."""
    env = simpy.Environment()
    pool: Any = Slots(env, 2, 2, one_taker_of_one=True) if ours else simpy.Container(env, capacity=2, init=2)
    queue: Any = Fifo(env) if ours else simpy.Store(env)
    log: list[tuple[Any, ...]] = []
    items = sum(len(p) for p in producers)

    def free(i: int, d: int):
        yield env.timeout(d)
        pool.put(1)
        log.append((env.now, "freed", i, pool.level))

    def taker():
        for i in range(items):
            yield pool.get(1)
            log.append((env.now, "slot", i, pool.level))
            env.process(free(i, taken[i % len(taken)]))
            item = yield queue.get()
            log.append((env.now, "item", item))

    def producer(name: int, ds: list[int]):
        for j, d in enumerate(ds):
            yield env.timeout(d)
            queue.put((name, j))
            log.append((env.now, "put", name, j, len(queue.items)))

    env.process(taker())
    for name, ds in enumerate(producers):
        env.process(producer(name, ds))
    env.run()
    return log


@settings(max_examples=60, deadline=None)
@given(taken=delays, producers=st.lists(delays, min_size=1, max_size=3))
def test_one_taker_same_order_as_simpy(taken: list[int], producers: list[list[int]]) -> None:
    """A pool taken from one buffer at a time and a queue, each by one process: the puts whose
    events are left out change nothing."""
    assert _pipeline(True, taken, producers) == _pipeline(False, taken, producers)


def _takers(ours: bool, wants: list[list[tuple[int, int]]], fills: list[int]) -> list[tuple[Any, ...]]:
    """Several processes each take ``amount`` words from one pool of 5 and give them back
    ``delay`` cycles later, and one adds 2 words after each of ``fills`` cycles, waiting for
    room (SimPy's full semantics: waiting gets and puts, in order)."""
    env = simpy.Environment()
    pool: Any = Slots(env, 5, 3) if ours else simpy.Container(env, capacity=5, init=3)
    log: list[tuple[Any, ...]] = []

    def user(name: int, plan: list[tuple[int, int]]):
        for amount, delay in plan:
            yield pool.get(amount)
            log.append((env.now, name, "got", amount, pool.level))
            yield env.timeout(delay)
            yield pool.put(amount)
            log.append((env.now, name, "put", amount, pool.level))

    def filler():
        for delay in fills:
            yield env.timeout(delay)
            yield pool.put(2)
            log.append((env.now, "filler", pool.level))

    for name, plan in enumerate(wants):
        env.process(user(name, plan))
    env.process(filler())
    env.run()
    return log


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(1, 5), st.integers(0, 2)), min_size=1, max_size=6),
                min_size=1, max_size=4), delays)
def test_several_takers_same_order_as_simpy(wants: list[list[tuple[int, int]]], fills: list[int]) -> None:
    """Takers of several words at a time, puts that must wait for room: every event kept."""
    assert _takers(True, wants, fills) == _takers(False, wants, fills)
