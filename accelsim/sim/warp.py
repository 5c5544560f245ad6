"""Warps: a periodic block of steps executed as one exact jump (see :mod:`accelsim.sim.engine`).

The distribution process walks the loop nest with a :class:`LoopCursor`, which gives each
step's demand and says when a step begins an iteration of a loop class that repeats (a
:class:`Checkpoint`). At the first moment with no event left at the current cycle after that,
:meth:`Warp.take` reads the whole simulation state as one canonical value (relative to the
checkpoint's cycle, step and tile: an :class:`Origin`) and compares it with the snapshots of
the last few iterations of the same loop; when one matches, the simulation repeats that period
for as long as the inputs it reads repeat, and the warp moves it ``k`` periods on at once (a
:class:`Jump`).

A long off-chip transfer can span many periods of an inner loop: its end, a fixed cycle, is
then a different distance from each checkpoint and the states never repeat. A warp may instead
*hold the off-chip side*: when every pending event of the off-chip processes (the DMA, an L2
tile's arrival) is the same event at the same cycle in both snapshots, the off-chip processes
are in the same state, and the rest repeats relative to the checkpoints, the on-chip side
repeats its period without touching the off-chip side until its first pending event. The jump
then moves only the on-chip side, and only so far that every event it skips or moves stays
before that event; the period may not move to another L2 tile.

The warp knows a simulation only through a small protocol: its state is a list of
:class:`Component` (each process's record, each queue, buffer pool, channel, announcement log
and the counters: :mod:`accelsim.sim.components`), each of which gives its canonical value,
what it holds in flight, and moves itself on; the clock and the event queue belong to the
:class:`~accelsim.sim.context.SimContext`, which lets a warp act only while its simulation
runs alone on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Hashable, Protocol, Sequence

from accelsim.mapping.geometry import step_loop_indices
from accelsim.mapping.demand import ScheduleProfile, StepDemand

if TYPE_CHECKING:  # the clock and event queue the warp moves
    from accelsim.sim.context import SimContext

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


@dataclass(frozen=True)
class Origin:
    """What a canonical state is relative to: the checkpoint's ``cycle``, ``step`` and
    ``tile``, and ``theta``: an L2 tile's arrival matters only against the cycle the array
    began waiting for it (``min(cycle, waiting since)``)."""

    cycle: int
    step: int
    tile: int
    theta: int

    def after(self, cycle: int) -> int:
        """Cycles from the origin to a future ``cycle`` (0 if it has passed)."""
        return max(cycle - self.cycle, 0)

    def arrival(self, cycle: int) -> int:
        """An L2 tile arrival relative to the origin, as the array sees it."""
        return max(cycle, self.theta) - self.cycle

    def rel_tile(self, tile: int) -> int | None:
        """A tile relative to the origin's (None: no tile; -1 is the tile before the origin's)."""
        return tile - self.tile if tile >= 0 else None


@dataclass(frozen=True)
class Jump:
    """``periods`` repetitions of a period of ``period_cycles`` cycles, ``period_steps``
    steps and ``period_tiles`` L2 tiles."""

    periods: int
    period_cycles: int
    period_steps: int
    period_tiles: int
    # the ids of the off-chip events a jump that holds the off-chip side leaves in place (empty:
    # everything moves)
    held: frozenset[int] = frozenset()

    @property
    def cycles(self) -> int:
        return self.periods * self.period_cycles

    @property
    def steps(self) -> int:
        return self.periods * self.period_steps

    @property
    def tiles(self) -> int:
        return self.periods * self.period_tiles


@dataclass
class InFlight:
    """Steps and tiles held by a process or queued, the last step whose demand the
    distribution has read and the last tile whose demand the DMA has read."""

    steps: list[int] = field(default_factory=list)
    tiles: list[int] = field(default_factory=list)
    read_step: int = 0
    read_tile: int = 0


class Component(Protocol):
    """One part of a simulation's state, as the warp sees it."""

    def canonical(self, origin: Origin) -> Hashable | None:
        """Its state relative to ``origin``; None when it cannot be compared cheaply now."""

    def mark(self) -> Any:
        """What a jump needs to know of it at a snapshot (counts, log length), or None."""

    def in_flight(self, flight: InFlight) -> None:
        """Add the steps and tiles it holds to ``flight``."""

    def admits(self, jump: Jump, before: Any) -> bool:
        """Whether it can move ``jump`` on, given its mark at the earlier snapshot."""

    def shift(self, jump: Jump, before: Any, now: Any) -> None:
        """Move every cycle, step and tile it holds ``jump`` on; ``before``, ``now``: its marks
        at the two snapshots one period apart (a count adds ``periods`` x their difference)."""


class Pipeline(Component, Protocol):
    """The component holding the processes: it also places a checkpoint's origin and says
    who a pending event wakes."""

    def origin(self, checkpoint: Checkpoint, cycle: int) -> Origin: ...

    def label(self, callback: Any, tile: int) -> tuple: ...

    def offchip(self, label: tuple) -> bool:
        """Whether a pending event's callback, by its label, wakes an off-chip process (one a
        jump may hold)."""


@dataclass
class Snapshot:
    """A checkpoint's canonical state and the components' marks; ``onchip``: the state with
    only the on-chip events, ``offchip``: the off-chip events as they stand (cycle, priority,
    id), ``onchip_last``: the last on-chip event's cycle relative to the checkpoint (0: none)."""

    checkpoint: Checkpoint
    cycle: int
    state: tuple
    marks: list[Any]
    onchip: tuple
    offchip: tuple
    onchip_last: int


class Warp:
    """The checkpoints of one simulation, their snapshots, and the jumps. ``pipeline`` and
    ``components`` (the pipeline among them) make up its state; ``jumped(steps)`` is told the
    steps each jump skips."""

    def __init__(self, context: SimContext, pipeline: Pipeline, components: Sequence[Component],
                 jumped: Callable[[int], None]):
        self.context = context
        self.pipeline = pipeline
        self.components = list(components)
        self.jumped = jumped
        self.pending: list[Checkpoint] = []
        self.snapshots: dict[int, list[Snapshot]] = {}
        self.warped_steps = 0
        self.held_steps = 0  # of them, skipped holding the off-chip side
        # no checkpoint is worth a snapshot before this cycle (see :meth:`_warp`'s held bound)
        self.quiet_until = 0

    def reach(self, checkpoint: Checkpoint) -> None:
        """The distribution begins an iteration worth a checkpoint (kept only while the
        simulation runs alone on its context)."""
        if self.context.solo is self:
            self.pending.append(checkpoint)

    def forget(self) -> None:
        """Drop every snapshot and pending checkpoint (another simulation started or ended)."""
        self.pending = []
        self.snapshots = {}

    def take(self) -> None:
        """Take the pending checkpoints: compare each with the snapshots of the last
        ``MAX_PERIOD_ITERATIONS`` iterations of its loop and warp when the state repeats;
        otherwise keep it for the next iterations."""
        pending, self.pending = self.pending, []
        if self.context.env.now < self.quiet_until:
            return
        flight = self._in_flight()  # the state does not change until a warp, which ends the loop
        oldest = min(flight.steps) if flight.steps else None
        for checkpoint in pending:
            if oldest is not None and oldest < checkpoint.class_first:
                continue  # a step from before the class is still in flight: no repeat yet
            snap = self._snapshot(checkpoint)
            if snap is None:
                continue
            recent = [old for old in self.snapshots.get(checkpoint.level, [])
                      if (checkpoint.step - old.checkpoint.step) % checkpoint.stride == 0
                      and checkpoint.step - old.checkpoint.step <= MAX_PERIOD_ITERATIONS * checkpoint.stride]
            for before in reversed(recent):  # the shortest period first
                if snap.cycle <= before.cycle:
                    continue
                if before.state == snap.state:
                    held = False
                elif snap.offchip and before.offchip == snap.offchip and before.onchip == snap.onchip:
                    held = True
                else:
                    continue
                if self._warp(before, snap, held, flight):
                    # snapshots of this loop and those inside it predate the jump; outer ones
                    # still describe the start of the current outer iteration
                    self.snapshots = {level: kept for level, kept in self.snapshots.items()
                                      if level < checkpoint.level}
                    return
            self.snapshots[checkpoint.level] = (recent + [snap])[-MAX_PERIOD_ITERATIONS:]

    def _snapshot(self, cp: Checkpoint) -> Snapshot | None:
        """The state at a checkpoint as one value relative to its cycle, step and tile; None when
        a component cannot be compared cheaply now."""
        cycle = int(self.context.env.now)
        origin = self.pipeline.origin(cp, cycle)
        parts = []
        for component in self.components:
            value = component.canonical(origin)
            if value is None:
                return None
            parts.append(value)
        queue = self.context.pending(origin, self.pipeline.label, self.pipeline.offchip)
        onchip_last = queue.onchip[-1][0] if queue.onchip else 0
        return Snapshot(cp, cycle, tuple(parts + [queue.every]), [component.mark() for component in self.components],
                        tuple(parts + [queue.onchip]), queue.offchip, onchip_last)

    def _in_flight(self) -> InFlight:
        flight = InFlight()
        for component in self.components:
            component.in_flight(flight)
        return flight

    def _warp(self, before: Snapshot, now: Snapshot, held: bool, flight: InFlight) -> bool:
        """Jump as many periods as the class allows (``held``: holding the off-chip side; ``flight``:
        what is in flight now); False if none."""
        cp = now.checkpoint
        q = (cp.step - before.checkpoint.step) // cp.stride  # iterations per period
        m, c = q * cp.stride, q * cp.tiles
        if held and (c or cp.tile != before.checkpoint.tile):
            return False  # the off-chip side serves L2 tiles: held, the period must stay in one
        # a step in flight moves k periods on: it must lie in the class, like its new place
        if any(x < cp.class_first for x in flight.steps):
            return False
        # the distribution has read demands up to its step, the DMA tile demands up to
        # ``read_tile``: after the jump they must still lie inside the class
        k = (cp.class_end - 1 - flight.read_step) // m
        if c:
            tile_class_first = cp.tile - (cp.step - cp.class_first) // cp.stride * cp.tiles
            if any(x < tile_class_first for x in flight.tiles):
                return False
            class_end_tile = cp.tile + (cp.class_end - cp.step) // cp.stride * cp.tiles
            k = min(k, (class_end_tile - 1 - flight.read_tile) // c)
        period = now.cycle - before.cycle
        if held:  # every skipped or moved on-chip event stays before the first off-chip one
            first = min(at for at, _, _ in now.offchip)
            before_first = (first - 1 - now.cycle - now.onchip_last) // period
            if before_first < 1:
                # the off-chip event at ``first`` is too near: until it has fired, every snapshot
                # holds it at another distance from its checkpoint, so only a held jump could
                # match, with less room as the clock nears it; skip the checkpoints till then
                # (skipping can only delay a jump, never change a result: every jump is exact)
                self.quiet_until = first
            k = min(k, before_first)
        if k < 1 or k * m < MIN_WARP_STEPS:
            return False
        jump = Jump(k, period, m, c, frozenset(eid for _, _, eid in now.offchip) if held else frozenset())
        pairs = list(zip(self.components, before.marks, now.marks))
        if not all(component.admits(jump, old) for component, old, _ in pairs):
            return False
        for component, old, new in pairs:
            component.shift(jump, old, new)
        self.context.shift(jump.cycles, jump.held)
        self.warped_steps += jump.steps
        self.held_steps += jump.steps if held else 0
        self.jumped(jump.steps)
        return True


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


