"""The engine's state as the warp's components (:class:`accelsim.sim.warp.Component`).

Each class wraps one kind of part of a :class:`~accelsim.sim.engine.LayerSimulation`: its
processes' records (:class:`Processes`, the warp's pipeline), a queue of step tokens, drain
tokens, tiles or tile arrivals, its buffer pools, a network or the off-chip channel, an
announcement log (partial sums by step, write-backs by tile), and its counters. Each gives its
canonical value relative to a checkpoint's :class:`~accelsim.sim.warp.Origin`, the steps and
tiles it holds, and moves itself by a :class:`~accelsim.sim.warp.Jump`. Times are cycles,
steps index the flattened loop nest, tiles the L2 tiles.
"""

from __future__ import annotations

from typing import Any, Sequence

import simpy

from accelsim.sim.milestones import Milestones
from accelsim.sim.slots import Fifo, Slots
from accelsim.sim.records import Counters, DrainToken, ProcessState, StepToken, TileArrival, Trackers
from accelsim.sim.warp import Checkpoint, InFlight, Jump, Origin


OFFCHIP = frozenset({"dma_in", "dma_out", "arrive"})  # the processes on the off-chip side


class Plain:
    """A component with nothing to mark and nothing that refuses a jump."""

    def mark(self) -> Any:
        return None

    def in_flight(self, flight: InFlight) -> None:
        return None

    def admits(self, jump: Jump, before: Any) -> bool:
        return True


class Processes(Plain):
    """The five pipeline processes (``dma_in``, ``distribute``, ``compute``, ``drain``,
    ``dma_out``) and the transient ones (an L2 tile's ``arrive``, a drain's ``land``), by the
    SimPy process that runs each."""

    def __init__(self, states: dict[str, ProcessState], owner: dict[simpy.Process, ProcessState]):
        self.states = states
        self.owner = owner

    def origin(self, checkpoint: Checkpoint, cycle: int) -> Origin:
        compute = self.states["compute"]
        theta = min(cycle, compute.since) if compute.phase == "ready" else cycle
        return Origin(cycle, checkpoint.step, checkpoint.tile, theta)

    def _state(self, callback: Any) -> ProcessState | None:
        """The record of the process a pending event's callback resumes (None: no process of ours)."""
        process = getattr(callback, "__self__", None)
        return self.owner.get(process) if isinstance(process, simpy.Process) else None

    def label(self, callback: Any, tile: int) -> tuple:
        """Who a pending event wakes: a process by name (a transient one with its tile)."""
        state = self._state(callback)
        if state is None:
            name = getattr(callback, "__qualname__", None)  # repr only where there is none: it is slow
            return ("?", name if name is not None else repr(callback))
        if state.name in ("arrive", "land"):  # None: no tile (-1 is the tile before the origin's)
            return (state.name, state.tile - tile if state.tile >= 0 else None)
        return (state.name,)

    def offchip(self, label: tuple) -> bool:
        """Whether a pending event's callback, by its :meth:`label`, wakes an off-chip process
        (the DMA, an L2 tile's arrival; a callback of no process of ours is labelled ``?``)."""
        return label[0] in OFFCHIP

    def who(self, process: Any) -> tuple:
        """A resource's user or waiter by process name."""
        state = self.owner.get(process)
        return (state.name,) if state is not None else ("?",)

    def canonical(self, origin: Origin) -> tuple:
        T, s = origin.cycle, origin.step
        st = self.states
        dma_in, dist, compute, drain, dma_out = (st[n] for n in ("dma_in", "distribute", "compute", "drain", "dma_out"))
        waiting = dist.phase.startswith("psum")
        return (
            (dma_in.phase, dma_in.tile - origin.tile,
             dma_in.key - origin.tile if dma_in.phase.startswith("wb") else None),
            (dist.phase, dist.step - s, origin.rel_tile(dist.tile), origin.arrival(dist.l2_arrival),
             dist.since - T if waiting else None, dist.key - s if waiting else None),
            (compute.phase, compute.since - T if compute.phase == "ready" else None)
            + ((step_token(compute.token, origin), tuple(compute.stalls), compute.held_part, compute.cycles,
                compute.done_at - T if compute.phase == "out_slot" else None)
               if compute.phase in ("compute", "out_slot") else ()),
            (drain.phase, drain_token(drain.token, origin)),
            (dma_out.phase, origin.rel_tile(dma_out.tile) if dma_out.phase in ("dram_request", "dma") else None),
        )

    def in_flight(self, flight: InFlight) -> None:
        for name in ("compute", "drain"):
            tok = self.states[name].token
            if tok is not None:
                flight.steps.append(tok.step)
                if tok.tile >= 0:
                    flight.tiles.append(tok.tile)
        for state in self.owner.values():
            if (state.name in ("arrive", "land", "distribute") or (
                    state.name == "dma_out" and state.phase in ("dram_request", "dma"))) and state.tile >= 0:
                flight.tiles.append(state.tile)
        dma_in = self.states["dma_in"]
        flight.read_tile = dma_in.tile - 1 if dma_in.phase in ("slot", "done") else dma_in.tile
        flight.read_step = self.states["distribute"].step

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        for state in self.owner.values():
            if not (jump.held and state.name in OFFCHIP):  # a held off-chip side stays as it is
                _shift_state(state, jump)


class StepQueue(Plain):
    """Steps delivered and waiting for the array (:class:`StepToken`)."""

    def __init__(self, store: Fifo):
        self.store = store

    def canonical(self, origin: Origin) -> tuple:
        return tuple(step_token(x, origin) for x in self.store.items)

    def in_flight(self, flight: InFlight) -> None:
        for tok in self.store.items:
            flight.steps.append(tok.step)
            if tok.tile >= 0:
                flight.tiles.append(tok.tile)

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        for tok in self.store.items:
            _shift_step_token(tok, jump)


class DrainQueue(Plain):
    """Computed steps waiting to drain (:class:`DrainToken`; None: the end)."""

    def __init__(self, store: Fifo):
        self.store = store

    def canonical(self, origin: Origin) -> tuple:
        return tuple(drain_token(x, origin) for x in self.store.items)

    def in_flight(self, flight: InFlight) -> None:
        for tok in self.store.items:
            if tok is not None:
                flight.steps.append(tok.step)
                if tok.tile >= 0:
                    flight.tiles.append(tok.tile)

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        for tok in self.store.items:
            if tok is not None:
                _shift_drain_token(tok, jump)


class TileQueue(Plain):
    """Output tiles waiting for their write-back (None: the end)."""

    def __init__(self, store: Fifo):
        self.store = store

    def canonical(self, origin: Origin) -> tuple:
        return tuple(origin.rel_tile(x) if x is not None else None for x in self.store.items)

    def in_flight(self, flight: InFlight) -> None:
        flight.tiles += [x for x in self.store.items if x is not None and x >= 0]

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        self.store.items[:] = [x + jump.tiles if x is not None and x >= 0 else x for x in self.store.items]


class ArrivalQueue(Plain):
    """L2 tiles in place, waiting for the distribution (:class:`TileArrival`)."""

    def __init__(self, store: Fifo):
        self.store = store

    def canonical(self, origin: Origin) -> tuple:
        items: list[TileArrival] = self.store.items
        return tuple((x.tile - origin.tile, origin.arrival(x.cycle)) for x in items)

    def in_flight(self, flight: InFlight) -> None:
        flight.tiles += [x.tile for x in self.store.items if x.tile >= 0]

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        if not jump.tiles:  # the same tiles wait as before the jump, each since it arrived
            return
        for arrival in self.store.items:
            arrival.tile += jump.tiles
            arrival.cycle += jump.cycles


class Pools(Plain):
    """Buffer pools: their levels."""

    def __init__(self, pools: Sequence[Slots]):
        self.pools = list(pools)

    def canonical(self, origin: Origin) -> tuple:
        return tuple(pool.level for pool in self.pools)

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        return None


class Channel(Plain):
    """A network or the off-chip channel: who holds it and who queues for it, in order (None:
    a network one process owns alone)."""

    def __init__(self, resource: simpy.Resource | None, processes: Processes):
        self.resource = resource
        self.processes = processes

    def canonical(self, origin: Origin) -> tuple | str:
        if self.resource is None:
            return "none"
        who = self.processes.who
        return (tuple(who(r.proc) for r in self.resource.users), tuple(who(r.proc) for r in self.resource.queue))

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        return None


class Announcements(Plain):
    """Results announced and not yet in place (:class:`Milestones`): partial sums keyed by
    step, which are also promised in step order (``by_step``), or write-backs keyed by tile."""

    def __init__(self, milestones: Milestones, by_step: bool):
        self.milestones = milestones
        self.by_step = by_step

    def canonical(self, origin: Origin) -> tuple | None:
        ms = self.milestones
        landing = ms.landing_after(origin.cycle)
        if landing is None:
            return None
        if not self.by_step:
            return tuple((k - origin.tile, c - origin.cycle) for k, c in landing)
        s = origin.step
        return (tuple((k - s, c - origin.cycle) for k, c in landing),
                tuple(sorted(p - s for p in ms.promised)), ms.reached - s)

    def mark(self) -> int:
        return len(self.milestones.log)

    def in_flight(self, flight: InFlight) -> None:
        if self.by_step:
            flight.steps += list(self.milestones.promised)

    def admits(self, jump: Jump, before: int) -> bool:
        # a write-back within one tile's iteration cannot repeat
        return self.by_step or jump.period_tiles > 0 or len(self.milestones.log) == before

    def shift(self, jump: Jump, before: int, now: int) -> None:
        """Repeat the period's announcements for the skipped periods (as lattices)."""
        ms = self.milestones
        key_stride = jump.period_steps if self.by_step else jump.period_tiles
        for lattice in ms.log[before:]:
            ms.add(lattice.repeated(jump.periods, key_stride, jump.period_cycles))
        if self.by_step:
            ms.promised = {p + jump.steps for p in ms.promised}
            ms.reached += jump.steps


class Tally(Plain):
    """The counters (a jump adds ``periods`` times one period's counts) and the latest cycles
    (those updated in the period move on by the jump)."""

    def __init__(self, count: Counters, track: Trackers):
        self.count = count
        self.track = track

    def canonical(self, origin: Origin) -> tuple:
        return ()

    def mark(self) -> tuple[list[int], tuple[int, int, int]]:
        return self.count.vector(), self.track.values()

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        self.count.add_scaled(now[0], before[0], jump.periods)
        old, new = before[1], now[1]
        track, dt = self.track, jump.cycles
        track.compute_end += dt if new[0] != old[0] else 0
        track.drain_end += dt if new[1] != old[1] else 0
        track.write_end += dt if new[2] != old[2] else 0


def step_token(tok: StepToken | None, origin: Origin) -> tuple | None:
    """A step token relative to ``origin`` (its L2 arrival only on a tile's first step)."""
    if tok is None:
        return None
    return (tok.step - origin.step, id(tok.demand), origin.after(tok.arrival),
            origin.arrival(tok.l2_arrival) if tok.demand.tile_first else 0, tok.held, origin.rel_tile(tok.tile))


def drain_token(tok: DrainToken | None, origin: Origin) -> tuple | None:
    if tok is None:
        return None
    return (tok.step - origin.step, id(tok.demand), origin.after(tok.ready_at), origin.rel_tile(tok.tile))


def _shift_state(state: ProcessState, jump: Jump) -> None:
    dt, ds, dc = jump.cycles, jump.steps, jump.tiles
    state.step += ds
    if state.tile >= 0:
        state.tile += dc
    if state.key >= 0:
        state.key += dc if state.phase.startswith("wb") else ds
    state.since += dt
    state.start += dt
    state.done_at += dt
    state.l2_arrival += dt
    if isinstance(state.token, StepToken):
        _shift_step_token(state.token, jump)
    elif isinstance(state.token, DrainToken):
        _shift_drain_token(state.token, jump)


def _shift_step_token(tok: StepToken, jump: Jump) -> None:
    tok.step += jump.steps
    tok.arrival += jump.cycles
    if tok.demand.tile_first:
        tok.l2_arrival += jump.cycles
    tok.tile += jump.tiles


def _shift_drain_token(tok: DrainToken, jump: Jump) -> None:
    tok.step += jump.steps
    tok.ready_at += jump.cycles
    if tok.tile >= 0:
        tok.tile += jump.tiles
