"""Warps: a periodic block of steps executed as one exact jump (see :mod:`accelsim.sim.engine`).

The distribution process walks the loop nest with a :class:`LoopCursor`, which gives each
step's demand and says when a step begins an iteration of a loop class that repeats (a
:class:`Checkpoint`). At the first moment with no event left at the current cycle after that,
:meth:`Warp.take` reads the whole simulation state as one canonical value (relative to the
checkpoint's cycle, step and tile) and compares it with the snapshots of the last few
iterations of the same loop; when one matches, the simulation repeats that period for as long
as the inputs it reads repeat, and :meth:`Warp._shift` moves it ``k`` periods on at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from accelsim.mapping.geometry import step_loop_indices
from accelsim.mapping.demand import ScheduleProfile, StepDemand
from accelsim.sim.records import DrainToken, ProcessState, StepToken

if TYPE_CHECKING:  # the simulation whose state the warp reads and moves
    from accelsim.sim.engine import LayerSimulation

MIN_WARP_STEPS = 4  # fewest steps worth a checkpoint's snapshot
MAX_PERIOD_ITERATIONS = 4  # a state may repeat after up to this many iterations of its loop


@dataclass(frozen=True)
class Checkpoint:
    """The start of an iteration of loop ``level`` (``stride`` steps, ``tiles`` L2 tiles per
    iteration) at ``step`` in tile ``tile``; the iterations of its class (with the outer loops
    where they are) span the steps ``class_first .. class_end - 1``."""

    level: int
    step: int
    tile: int
    stride: int
    tiles: int
    class_first: int
    class_end: int


@dataclass
class Snapshot:
    """A checkpoint's canonical state and what a warp needs from it."""

    checkpoint: Checkpoint
    cycle: int
    state: tuple
    counters: list[int]
    trackers: tuple[int, int, int]
    psum_log: int
    wb_log: int


class Warp:
    """The checkpoints of one simulation, their snapshots, and the jumps."""

    def __init__(self, sim: LayerSimulation):
        self.sim = sim
        self.pending: list[Checkpoint] = []
        self.snapshots: dict[int, list[Snapshot]] = {}
        self.warped_steps = 0

    def take(self) -> None:
        """Take the pending checkpoints: compare each with the snapshots of the last
        ``MAX_PERIOD_ITERATIONS`` iterations of its loop and warp when the state repeats;
        otherwise keep it for the next iterations."""
        pending, self.pending = self.pending, []
        for checkpoint in pending:
            if self._oldest_in_flight() < checkpoint.class_first:
                continue  # a step from before the class is still in flight: no repeat yet
            snap = self._snapshot(checkpoint)
            if snap is None:
                continue
            recent = [old for old in self.snapshots.get(checkpoint.level, [])
                      if (checkpoint.step - old.checkpoint.step) % checkpoint.stride == 0
                      and checkpoint.step - old.checkpoint.step <= MAX_PERIOD_ITERATIONS * checkpoint.stride]
            for before in reversed(recent):  # the shortest period first
                if before.state == snap.state and snap.cycle > before.cycle and self._warp(before, snap):
                    # snapshots of this loop and those inside it predate the jump; outer ones
                    # still describe the start of the current outer iteration
                    self.snapshots = {level: kept for level, kept in self.snapshots.items()
                                      if level < checkpoint.level}
                    return
            self.snapshots[checkpoint.level] = (recent + [snap])[-MAX_PERIOD_ITERATIONS:]

    def _snapshot(self, cp: Checkpoint) -> Snapshot | None:
        """The state at a checkpoint as one value relative to its cycle, step and tile; None when
        too many partial sums or write-backs are still on their way to compare it cheaply."""
        sim = self.sim
        env = sim.env
        T, s, t = sim.clock(), cp.step, cp.tile
        compute = sim.states["compute"]
        # a tile's arrival matters only against when the array began waiting for it
        theta = min(T, compute.since) if compute.phase == "ready" else T

        def clamp(cycle: int) -> int:
            return max(cycle - T, 0)

        def step_token(tok: StepToken | None) -> tuple | None:
            if tok is None:
                return None
            return (tok.step - s, id(tok.demand), clamp(tok.arrival),
                    max(tok.l2_arrival, theta) - T if tok.demand.tile_first else 0, tok.held, _rel_tile(tok.tile, t))

        def drain_token(tok: DrainToken | None) -> tuple | None:
            if tok is None:
                return None
            return (tok.step - s, id(tok.demand), clamp(tok.ready_at), _rel_tile(tok.tile, t))

        st = sim.states
        dma_in, dist, drain, dma_out = st["dma_in"], st["distribute"], st["drain"], st["dma_out"]
        waiting = dist.phase.startswith("psum")
        states = (
            (dma_in.phase, dma_in.tile - t, dma_in.key - t if dma_in.phase.startswith("wb") else None),
            (dist.phase, dist.step - s, _rel_tile(dist.tile, t), max(dist.l2_arrival, theta) - T,
             dist.since - T if waiting else None, dist.key - s if waiting else None),
            (compute.phase, compute.since - T if compute.phase == "ready" else None)
            + ((step_token(compute.token), tuple(compute.stalls), compute.held_part, compute.cycles,
                compute.done_at - T if compute.phase == "out_slot" else None)
               if compute.phase in ("compute", "out_slot") else ()),
            (drain.phase, drain_token(drain.token)),
            (dma_out.phase, _rel_tile(dma_out.tile, t) if dma_out.phase in ("dram_request", "dma") else None),
        )
        queue = []
        for at, priority, _, event in sorted(env._queue):  # noqa: SLF001 (SimPy's event queue)
            owners = [self._label(cb, t) for cb in (event.callbacks or [])]
            queue.append((at - T, priority, tuple(owners)))
        psums = sim.partial_sums.landing_after(T)
        wbs = sim.write_backs.landing_after(T)
        if psums is None or wbs is None:
            return None
        state = (
            states, tuple(queue),
            tuple(step_token(x) for x in sim.ready.items),
            tuple(drain_token(x) for x in sim.drain_q.items),
            tuple(_rel_tile(x, t) if x is not None else None for x in sim.wb_q.items),
            tuple((x.tile - t, max(x.cycle, theta) - T) for x in sim.l2_ready.items),
            (sim.l1_slots.level, sim.out_slots.level, sim.l2_slots.level),
            _resource_state(sim.dram, self.sim, t), _resource_state(sim.noc, self.sim, t) if sim.noc else None,
            tuple((k - s, c - T) for k, c in psums), tuple(sorted(p - s for p in sim.partial_sums.promised)),
            sim.partial_sums.reached - s, tuple((k - t, c - T) for k, c in wbs),
        )
        return Snapshot(cp, T, state, sim.count.vector(), sim.track.values(),
                        len(sim.partial_sums.log), len(sim.write_backs.log))

    def _label(self, callback: Any, t: int) -> tuple:
        """Who a pending event wakes: a process by name (a transient one with its tile)."""
        sim = self.sim
        process = getattr(callback, "__self__", None)
        state = sim.owner.get(process) if isinstance(process, simpy.Process) else None
        if state is None:
            return ("?", getattr(callback, "__qualname__", repr(callback)))
        if state.name in ("arrive", "land"):
            return (state.name, _rel_tile(state.tile, t))
        return (state.name,)

    def _oldest_in_flight(self) -> int:
        """The earliest step still held by a process or queued (the pipeline keeps step order)."""
        sim = self.sim
        for tok in (sim.states["drain"].token, sim.drain_q.items[0] if sim.drain_q.items else None,
                    sim.states["compute"].token, sim.ready.items[0] if sim.ready.items else None):
            if tok is not None:
                return tok.step
        return sim.states["distribute"].step

    def _in_flight(self) -> tuple[list[int], list[int], int]:
        """Steps and tiles in flight (held by a process or queued), and the last tile whose
        demand the DMA has read."""
        sim = self.sim
        steps, tiles = [], []
        for tok in list(sim.ready.items) + list(sim.drain_q.items):
            if tok is not None:
                steps.append(tok.step)
                tiles.append(tok.tile)
        for name in ("compute", "drain"):
            tok = sim.states[name].token
            if tok is not None:
                steps.append(tok.step)
                tiles.append(tok.tile)
        steps += list(sim.partial_sums.promised)
        tiles += [x.tile for x in sim.l2_ready.items] + [x for x in sim.wb_q.items if x is not None]
        for state in sim.owner.values():
            if state.name in ("arrive", "land", "distribute") or (
                    state.name == "dma_out" and state.phase in ("dram_request", "dma")):
                tiles.append(state.tile)
        dma_in = sim.states["dma_in"]
        read = dma_in.tile - 1 if dma_in.phase in ("slot", "done") else dma_in.tile
        return steps, [x for x in tiles if x >= 0], read

    def _warp(self, before: Snapshot, now: Snapshot) -> bool:
        """Jump as many periods as the class allows; False if none."""
        sim = self.sim
        cp = now.checkpoint
        period = now.cycle - before.cycle
        q = (cp.step - before.checkpoint.step) // cp.stride  # iterations per period
        m, c = q * cp.stride, q * cp.tiles
        dist = sim.states["distribute"]
        steps, tiles, dma_read = self._in_flight()
        # a step in flight moves k periods on: it must lie in the class, like its new place
        if any(x < cp.class_first for x in steps):
            return False
        # the distribution has read demands up to its step, the DMA tile demands up to
        # ``dma_read``: after the jump they must still lie inside the class
        k = (cp.class_end - 1 - dist.step) // m
        if c:
            tile_class_first = cp.tile - (cp.step - cp.class_first) // cp.stride * cp.tiles
            if any(x < tile_class_first for x in tiles):
                return False
            class_end_tile = cp.tile + (cp.class_end - cp.step) // cp.stride * cp.tiles
            k = min(k, (class_end_tile - 1 - dma_read) // c)
        elif len(sim.write_backs.log) > before.wb_log:
            return False  # a write-back within one tile's iteration cannot repeat
        if k < 1 or k * m < MIN_WARP_STEPS:
            return False
        self._shift(k, m, c, period, before, now)
        return True

    def _shift(self, k: int, m: int, c: int, period: int, before: Snapshot, now: Snapshot) -> None:
        """Move the whole simulation ``k`` periods on (see the module docstring)."""
        sim = self.sim
        env = sim.env
        dt, ds, dc = k * period, k * m, k * c
        # the window's announcements, repeated for the skipped periods
        for milestones, first, key_stride in ((sim.partial_sums, before.psum_log, m),
                                              (sim.write_backs, before.wb_log, c)):
            window = milestones.log[first:]
            for lattice in window:
                milestones.add(lattice.shifted(key_stride, period).repeated(k, key_stride, period))
        sim.partial_sums.promised = {p + ds for p in sim.partial_sums.promised}
        sim.partial_sums.reached += ds
        # every pending event and every cycle, step and tile in flight
        env._now += dt  # noqa: SLF001 (a uniform shift keeps SimPy's heap order)
        env._queue = [(at + dt, priority, eid, event) for at, priority, eid, event in env._queue]  # noqa: SLF001
        for state in sim.owner.values():
            _shift_state(state, dt, ds, dc)
        for tok in sim.ready.items:
            _shift_step_token(tok, dt, ds, dc)
        for tok in sim.drain_q.items:
            if tok is not None:
                _shift_drain_token(tok, dt, ds, dc)
        sim.wb_q.items[:] = [x + dc if x is not None and x >= 0 else x for x in sim.wb_q.items]
        for arrival in sim.l2_ready.items:
            arrival.tile += dc
            arrival.cycle += dt
        # counts: k more periods; latest cycles: those updated in the period move on
        sim.count.add_scaled(now.counters, before.counters, k)
        track = sim.track
        old, new = before.trackers, now.trackers
        track.compute_end += dt if new[0] != old[0] else 0
        track.drain_end += dt if new[1] != old[1] else 0
        track.write_end += dt if new[2] != old[2] else 0
        self.warped_steps += ds
        if sim.progress is not None:
            sim.progress(sim.count.steps_done, sim.cm.steps)

class LoopCursor:
    """The distribution's position in the loop nest: the demand of each step, and whether
    the step begins an iteration of a class worth a checkpoint."""

    def __init__(self, profile: ScheduleProfile, steps_per_tile: int):
        self.profile = profile
        self.cm = profile.cm
        self.steps_per_tile = steps_per_tile
        self.step = -2
        self.idx: list[int] = []
        self.cls: list[int] = []

    def at(self, step: int) -> tuple[StepDemand, Checkpoint | None]:
        profile = self.profile
        advanced = -1
        if step == self.step + 1 and self.idx:
            advanced = self._advance()
        else:
            self.idx = step_loop_indices(self.cm, step)
            self.cls = list(profile.case(self.idx))
        self.step = step
        demand = profile.demand(step, tuple(self.cls))
        if advanced < 0:
            return demand, None
        klass = profile.loop_classes[advanced][self.cls[advanced]]
        i = self.idx[advanced]
        if i == klass.first:
            return demand, None
        stride = profile.strides[advanced]
        class_end = step + (klass.first + klass.count - i) * stride
        if class_end - step - stride < MIN_WARP_STEPS:
            return demand, None
        spt = self.steps_per_tile
        return demand, Checkpoint(advanced, step, step // spt, stride, stride // spt if stride >= spt else 0,
                                  step - (i - klass.first) * stride, class_end)

    def _advance(self) -> int:
        """Move to the next step; the loop that advanced without wrapping (-1 at the end)."""
        loops = self.cm.loops
        classes = self.profile.loop_classes
        for j in range(len(loops) - 1, -1, -1):
            self.idx[j] += 1
            if self.idx[j] < loops[j].trips:
                nxt = self.cls[j] + 1
                if nxt < len(classes[j]) and classes[j][nxt].first == self.idx[j]:
                    self.cls[j] = nxt
                return j
            self.idx[j] = 0
            self.cls[j] = 0
        return -1


def _rel_tile(tile: int, base: int) -> int:
    return tile - base if tile >= 0 else tile


def _resource_state(resource: simpy.Resource, sim: LayerSimulation, t: int) -> tuple:
    """Who holds a resource and who queues for it, in order."""
    def who(request: Any) -> tuple:
        state = sim.owner.get(request.proc)
        return (state.name,) if state is not None else ("?",)
    return tuple(who(r) for r in resource.users), tuple(who(r) for r in resource.queue)


def _shift_state(state: ProcessState, dt: int, ds: int, dc: int) -> None:
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
        _shift_step_token(state.token, dt, ds, dc)
    elif isinstance(state.token, DrainToken):
        _shift_drain_token(state.token, dt, ds, dc)


def _shift_step_token(tok: StepToken, dt: int, ds: int, dc: int) -> None:
    tok.step += ds
    tok.arrival += dt
    if tok.demand.tile_first:
        tok.l2_arrival += dt
    tok.tile += dc


def _shift_drain_token(tok: DrainToken, dt: int, ds: int, dc: int) -> None:
    tok.step += ds
    tok.ready_at += dt
    if tok.tile >= 0:
        tok.tile += dc
