"""Test-only oracle: the analytical model's max-plus recurrence as it was before the nest was
compiled into one flat program (accelsim/analytical/pipeline.py at commit 9b706c1), kept
verbatim below this docstring except that it takes StepDelays and Timing from the package, so
that tests/test_pipeline.py can compare the two implementations on generated nests. Nothing
in accelsim imports it.

The original module docstring follows.

How steps and L2 tiles overlap: a max-plus recurrence over the loop nest, in closed form per
repeated block.

Each step case has an ingress delay (its new words over the distribution bandwidth), a compute
delay and an egress delay (its drained words over the reduction bandwidth). With B L1 buffers
(2 when double-buffered) the network loads step ``i`` once step ``i - B`` has computed, so with
two it loads step ``i`` while step ``i - 1`` computes; a step that ends a run over an output
tile hands its outputs to the drain once an output buffer is free (the drain B such steps
earlier has finished). With B L2 buffers the DMA asks for tile ``t`` once tile ``t - 1`` has
arrived and tile ``t - B`` has been distributed (with L2 prefetch into free space, B = 1: tile
``t - 2`` where tile ``t - 1``'s words and tile ``t``'s new words fit in L2, else ``t - 1``);
tile ``t``'s first step waits for it; a tile's
outputs are written back once its last drain and the previous write-back are done; the channel
serves requests in the order made. Partial sums are read back only once they are in place: a
step's read-back waits for the drain that ended the previous visit to its output tile, a tile's
DRAM read of spilled partial sums for their write-back (after every write-back still pending).

The nest is a list of loops, each a list of iteration classes; every repetition of a class
runs the same block of steps. Once two consecutive repetitions shift every event time and every
stall counter by the same amounts (the max-plus system has become periodic), the remaining
repetitions are added as that many shifts instead of being evaluated, so the cost grows with
the number of classes, not of steps.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import partial
from operator import sub
from typing import Callable, Sequence

from accelsim.analytical.pipeline import StepDelays, Timing
from accelsim.mapping.geometry import LoopClass

# whether repetitions that shift the state alike stand for the rest (the rule of 9b706c1, which
# accelsim no longer uses: two repetitions that shift each time alike, by different amounts,
# need not repeat); tests turn it off to compare traversals with every repetition evaluated
SKIP_REPETITIONS = True

# a step case as Pipeline._steps reads it: ingress, operand latency, compute, egress, drains,
# read-back source, barrier, landing, tile_first, tile_last
StepCase = tuple[int, int, int, int, bool, int, bool, int, bool, bool]
# a traversal's parts: (body, times, whether the body only runs steps within one L2 tile), a
# body given as its steps' cases or as a callable
Parts = list[tuple[Callable[[], None] | list[StepCase], int, bool]]


class _Recent:
    """Completion times (cycles) of recent steps or tiles by number, for those that may still be
    looked up: numbers are recorded in increasing order, and once the current number is ``n``
    only numbers from ``n - keep`` on are asked for, so older ones are forgotten as it grows."""

    def __init__(self, keep: int):
        self.keep = keep
        self.times: dict[int, int] = {}
        self.numbers: deque[int] = deque()  # the keys of ``times``, increasing

    def get(self, number: int) -> int:
        return self.times.get(number, 0)

    def __contains__(self, number: int) -> bool:
        return number in self.times

    def __getitem__(self, number: int) -> int:
        return self.times[number]

    def record(self, number: int, cycle: int) -> None:
        """Completion of ``number``, the newest so far; older ones out of reach are forgotten."""
        times, numbers = self.times, self.numbers
        times[number] = cycle
        numbers.append(number)
        oldest = number - self.keep  # ``number`` itself stays, so ``numbers`` never empties here
        while numbers[0] < oldest:
            del times[numbers.popleft()]

    def shift(self, first: int, per_repeat: int, cycles: int, times: int) -> None:
        """After ``times`` skipped repetitions of ``per_repeat`` numbers each shifting times by
        ``cycles``: the last repetition's entries (numbers from ``first``) are recorded again as
        the last skipped one would have recorded them, and entries out of reach of the new end
        are forgotten."""
        moved = []
        for number in reversed(self.numbers):
            if number < first:
                break
            moved.append(number)
        for number in reversed(moved):
            self.times[number + times * per_repeat] = self.times[number] + times * cycles
            self.numbers.append(number + times * per_repeat)
        self._forget_before(first + per_repeat * (times + 1) - self.keep)

    def _forget_before(self, number: int) -> None:
        while self.numbers and self.numbers[0] < number:
            del self.times[self.numbers.popleft()]


@dataclass(slots=True)
class _State:
    """Event times (cycles) and stall counters carried from step to step."""

    l1_buffers: int = 2
    l2_tiles: int = 2  # tiles L2 may hold at once: its buffers, 2 with prefetch
    operand_slots: int = 2  # L1 operand buffers plus hop registers
    channel_free: int = 0  # DRAM channel
    distributed: list[int] = field(default_factory=list)  # the last l2_tiles tiles handed out
    writes: list[list[int]] = field(default_factory=list)  # (ready, cycles) of write-backs not yet made
    written: int = 0  # the DMA has sent the last write-back
    fetched: int = 0  # the DMA has read the current tile
    arrived: int = 0  # the current tile is in L2
    noc_free: int = 0
    compute_free: int = 0
    computed: list[int] = field(default_factory=list)  # the last operand_slots steps computed
    drain_free: int = 0
    land_free: int = 0  # every drain so far has landed in L2
    drained: list[int] = field(default_factory=list)  # the last l1_buffers drains (out buffers)

    stall_dram: int = 0
    stall_noc: int = 0
    stall_reduction: int = 0
    busy: int = 0
    step: int = 0  # steps done
    landed: _Recent = field(default_factory=lambda: _Recent(0))  # step -> its drain done
    tile: int = 0  # tiles done
    write_done: _Recent = field(default_factory=lambda: _Recent(0))  # tile -> its write-back sent

    resident_words: int = 0  # words of the last tile begun (prefetch)

    def __post_init__(self) -> None:
        self.distributed = [0] * self.l2_tiles
        self.computed = [0] * self.operand_slots
        self.drained = [0] * self.l1_buffers

    def step_vector(self) -> list[int]:
        """The part of :meth:`vector` that steps within one L2 tile change (the rest stays)."""
        return [self.noc_free, self.compute_free, *self.computed, self.drain_free, self.land_free, *self.drained,
                self.stall_dram, self.stall_noc, self.stall_reduction, self.busy, self.step]

    def load_steps(self, values: list[int]) -> None:
        """Set the state from a :meth:`step_vector`."""
        self.noc_free, self.compute_free = values[0], values[1]
        i = 2 + len(self.computed)
        self.computed = values[2:i]
        self.drain_free, self.land_free = values[i], values[i + 1]
        i += 2
        self.drained = values[i:i + len(self.drained)]
        i += len(self.drained)
        self.stall_dram, self.stall_noc, self.stall_reduction, self.busy, self.step = values[i:i + 5]

    def vector(self) -> list[int]:
        """Every event time and counter: the L2 tiles' and the DRAM channel's, then
        :meth:`step_vector`."""
        return [self.channel_free, *self.distributed, *[w[0] for w in self.writes], self.written, self.fetched,
                self.arrived, self.tile, *self.step_vector()]

    def load(self, values: list[int]) -> None:
        """Set the state from a :meth:`vector` of the same shape."""
        self.channel_free = values[0]
        i = 1 + len(self.distributed)
        self.distributed = values[1:i]
        for w in self.writes:
            w[0] = values[i]
            i += 1
        self.written, self.fetched, self.arrived, self.tile = values[i:i + 4]
        self.load_steps(values[i + 4:])


class Pipeline:
    """The recurrence over one layer's steps and L2 tiles."""

    def __init__(self, delays: StepDelays, read_cycles: Sequence[int], write_cycles: Sequence[int],
                 read_source: Sequence[int], timing: Timing = Timing(), footprint: Sequence[int] = (),
                 kept: Sequence[int] = ()):
        self.d = delays
        # per tile case, its words in L2 and those kept from the tile before (prefetch only)
        self.footprint = footprint
        self.kept = kept
        self.read_cycles = read_cycles
        self.write_cycles = write_cycles
        self.read_source = read_source  # per tile case: tiles back to the partial sums' write-back
        self.t = timing
        self.s = _State(timing.l1_buffers, 2 if timing.l2_space_words else timing.l2_buffers,
                        timing.l1_buffers + timing.register_stages)
        self._tile_writes = False  # the current tile writes outputs back (its last step drains)
        self.keep_landed = max(delays.readback_source, default=0)  # drains read back at most this far
        self.keep_written = max(read_source, default=0)  # write-backs read back at most this far
        self.s.landed = _Recent(self.keep_landed)
        self.s.write_done = _Recent(self.keep_written)

    # ---------------------------------------------------------------- tiles
    def _begin_tile(self, tile: int) -> None:
        """Fetch the tile: the DMA asks once the previous fetch is done and a buffer is free;
        write-backs that asked earlier go first."""
        s = self.s
        freed = s.distributed[0]  # the tile whose buffer this one takes has been distributed
        if self.t.l2_space_words:  # one tile ahead where the one before and the new words fit
            new = self.footprint[tile] - self.kept[tile]
            if s.resident_words + new > self.t.l2_space_words:
                freed = s.distributed[1]
            s.resident_words = self.footprint[tile]
        request = max(s.fetched, freed)
        if self.read_source[tile]:  # spilled partial sums: not before their write-back
            source = s.tile - self.read_source[tile]
            while s.writes and s.writes[0][2] <= source:
                self._write(*s.writes.pop(0))
            if source in s.write_done:
                request = max(request, s.write_done[source] + self.t.dram_latency)
        while s.writes and max(s.writes[0][0], s.written) < request:
            self._write(*s.writes.pop(0))
        s.channel_free = s.fetched = max(s.channel_free, request) + self.read_cycles[tile]
        s.arrived = s.fetched + (self.t.dram_latency if self.read_cycles[tile] else 0)

    def _end_tile(self, tile: int) -> None:
        s = self.s
        s.distributed = s.distributed[1:] + [s.noc_free]
        s.writes.append([s.land_free, self.write_cycles[tile], s.tile])
        s.tile += 1

    def _write(self, ready: int, cycles: int, number: int) -> None:
        """Write-back of tile ``number``, asked for once it is ready and the previous one is done."""
        s = self.s
        if cycles:
            s.channel_free = max(s.channel_free, ready, s.written) + cycles
            s.written = s.channel_free
            if self.keep_written:
                s.write_done.record(number, s.written)

    # ---------------------------------------------------------------- steps
    def _case(self, case: int, tile_first: bool, tile_last: bool) -> StepCase:
        """One step case's delays, as :meth:`_steps` reads them: ingress, the operands' network
        latency (0 when nothing is sent), compute, egress, whether it drains, the read-back's
        source (steps back; 0: none), whether the tile barrier holds it, the landing delay, and
        whether the step is the first or last of its L2 tile."""
        d = self.d
        ingress = d.ingress[case]
        latency = (d.latency[case] if d.latency else self.t.ingress_latency) if ingress else 0
        return (ingress, latency, d.compute[case], d.egress[case],
                bool(d.drains[case]), d.readback_source[case], bool(d.barrier and d.barrier[case]),
                d.landing[case] if d.landing else 0, tile_first, tile_last)

    def _steps(self, cases: Sequence[StepCase]) -> None:
        """Run steps of the cases ``cases`` (:meth:`_case`) in order. The state's scalars are
        kept in local variables for the whole run (this loop is where the model spends its
        time)."""
        s = self.s
        drain_delay, shared = self.t.drain_delay, self.t.shared_network
        tile_writes, keep = self._tile_writes, self.keep_landed
        landed, record = s.landed.times, s.landed.record
        computed, drained, arrived = s.computed, s.drained, s.arrived
        noc_free, compute_free, drain_free, land_free = s.noc_free, s.compute_free, s.drain_free, s.land_free
        stall_dram, stall_noc, stall_reduction, busy, step = s.stall_dram, s.stall_noc, s.stall_reduction, s.busy, s.step
        for ingress, latency, compute, egress, drains, source, barrier, landing, tile_first, tile_last in cases:
            # free = max(noc_free, computed[0], arrived on a tile's first step)
            free = noc_free
            if computed[0] > free:
                free = computed[0]
            if tile_first and arrived > free:
                free = arrived
            start = free
            if source:  # partial sums in L2
                ready = landed.get(step - source, 0)
                if ready > start:
                    start = ready
            if barrier and land_free > start:  # the controller's tile barrier: every output so far in L2
                start = land_free
            noc_free = start + ingress
            began = noc_free + latency
            if compute_free > began:
                began = compute_free
            waited = began - compute_free
            dram = 0
            if tile_first:  # the wait for the tile's arrival is DRAM's
                dram = arrived - compute_free
                if dram < 0:
                    dram = 0
                elif dram > waited:
                    dram = waited
                stall_dram += dram
            held = waited - dram
            if start - free < held:
                held = start - free
            stall_reduction += held
            stall_noc += waited - dram - held
            done = began + compute
            busy += compute
            del computed[0]
            computed.append(done)
            compute_free = done
            if drains or (tile_last and tile_writes):
                handed = drained[0] if drained[0] > done else done
                stall_reduction += handed - done
                compute_free = handed
                start = handed + drain_delay
                if drain_free > start:
                    start = drain_free
                if shared:  # outputs queue behind the operands on one network
                    if noc_free > start:
                        start = noc_free
                    noc_free = start + egress
                drain_free = start + egress
                del drained[0]
                drained.append(drain_free)
                land = drain_free + landing
                if land > land_free:
                    land_free = land
                if keep:  # a window of the drains read-backs may still wait for
                    record(step, land)
            step += 1
        s.noc_free, s.compute_free, s.drain_free, s.land_free = noc_free, compute_free, drain_free, land_free
        s.stall_dram, s.stall_noc, s.stall_reduction, s.busy, s.step = stall_dram, stall_noc, stall_reduction, busy, step

    # ---------------------------------------------------------------- traversal
    def _sequence(self, parts: Parts) -> Callable[[], None]:
        """A body running each (body, times, steps only) of ``parts`` in order (see
        :meth:`_repeat`); a body given as a list of step cases runs them with :meth:`_steps`,
        and consecutive such lists run once each are merged into one."""
        merged: Parts = []
        for body, times, steps_only in parts:
            last = merged[-1] if merged else None
            if isinstance(body, list) and times == 1 and last and isinstance(last[0], list) and last[1] == 1:
                last[0].extend(body)  # the merged list is this method's own copy (below)
            else:
                merged.append((list(body) if isinstance(body, list) else body, times, steps_only))
        runs = [(partial(self._steps, body) if isinstance(body, list) else body, times, steps_only)
                for body, times, steps_only in merged]
        if len(runs) == 1 and runs[0][1] == 1:
            return runs[0][0]
        repeat = self._repeat

        def run() -> None:
            for body, times, steps_only in runs:
                if times == 1:
                    body()
                else:
                    repeat(body, times, steps_only)

        return run

    def _repeat(self, body: Callable[[], None], times: int, steps_only: bool = False) -> None:
        """Run ``body`` ``times`` times; once two repetitions shift the state alike, add the
        remaining ones (all but the last, which meets the next block) as shifts. ``steps_only``:
        the body runs steps within one L2 tile, so only :meth:`_State.step_vector` can move."""
        s = self.s
        vector, load = (s.step_vector, s.load_steps) if steps_only else (s.vector, s.load)
        done = 0
        previous: list[int] | None = None
        after: list[int] | None = None  # the state after the last repetition, if nothing moved it since
        while done < times:
            if times - done <= 2:  # the last two repetitions run as they are: nothing left to skip
                body()
                done += 1
                continue
            before = after if after is not None else vector()
            first_step, drain_before = s.step, s.drain_free
            first_tile, written_before = s.tile, s.written
            body()
            done += 1
            after = vector()
            deltas = list(map(sub, after, before)) if len(after) == len(before) else None
            left = times - done - 1
            if SKIP_REPETITIONS and deltas is not None and left > 0 and deltas == previous:
                steps, drain_cycles = s.step - first_step, s.drain_free - drain_before
                tiles, write_cycles = s.tile - first_tile, s.written - written_before
                if self.keep_landed:
                    s.landed.shift(first_step, steps, drain_cycles, left)
                if self.keep_written:
                    s.write_done.shift(first_tile, tiles, write_cycles, left)
                load([v + left * dv for v, dv in zip(after, deltas)])
                for w in s.writes:
                    w[2] += left * tiles
                done += left
                after = None
            previous = deltas

    def run(self, classes: list[list[LoopClass]], case_of: dict[tuple, int], tile_loops: int,
            tile_of: dict[tuple, int]) -> int:
        """Execute the nest (``case_of``: class numbers of all loops -> step case; the first
        ``tile_loops`` loops step from L2 tile to L2 tile, ``tile_of`` -> tile case) and return
        the cycles until the last output is written back."""
        last_class = [len(c) - 1 for c in classes]

        def nested(level: int, prefix: tuple, inner: Callable[[int, tuple, Parts], None], out: Parts) -> None:
            """Append the parts of loop ``level``'s classes to ``out`` in order, each running
            ``inner``'s parts; a class run once is spliced into the sequence (same steps, same
            order)."""
            for i, c in enumerate(classes[level]):
                if c.count == 1:
                    inner(level + 1, prefix + (i,), out)
                else:
                    parts: Parts = []
                    inner(level + 1, prefix + (i,), parts)
                    out.append((self._sequence(parts), c.count, inner is block))

        def block(level: int, prefix: tuple, out: Parts) -> None:
            if level < len(classes):
                nested(level, prefix, block, out)
                return
            inner = prefix[tile_loops:]
            first = all(k == 0 for k in inner)
            last = list(inner) == last_class[tile_loops:]
            out.append(([self._case(case_of[prefix], first, last)], 1, True))

        def tiles(level: int, prefix: tuple, out: Parts) -> None:
            if level < tile_loops:
                nested(level, prefix, tiles, out)
                return
            parts: Parts = []
            block(level, prefix, parts)
            tile, steps = tile_of[prefix], self._sequence(parts)

            def whole_tile() -> None:
                self._tile_writes = self.write_cycles[tile] > 0
                self._begin_tile(tile)
                steps()
                self._end_tile(tile)
            out.append((whole_tile, 1, False))

        nest: Parts = []
        tiles(0, (), nest)
        self._sequence(nest)()
        s = self.s
        end = max(s.compute_free, s.land_free)
        for ready, cycles, number in s.writes:
            self._write(ready, cycles, number)
        return max(end, s.written + self.t.dram_latency)

    def stalls(self, cycles: int) -> dict[str, int]:
        """Cycles the array waited, by cause: operands (distribution_noc), the L2 tile and the
        final write-back (dram), a free output buffer and the last drains (reduction)."""
        s = self.s  # the array's timeline: busy + waits = compute_free
        return {
            "compute": 0,
            "distribution_noc": s.stall_noc,
            "reduction": s.stall_reduction + max(0, s.land_free - s.compute_free),
            "dram": s.stall_dram + cycles - max(s.compute_free, s.land_free),
        }
