"""How steps and L2 tiles overlap: a max-plus recurrence over the loop nest, in closed form per
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
stall counter by the same amounts, and the last moved every time it moved by one amount (see
:func:`_uniform_shift`; the max-plus system has become periodic), the remaining repetitions are added
as that many shifts instead of being evaluated, so the cost grows with the number of classes,
not of steps. A stretch of skipped repetitions answers the read-backs that reach into it
(:func:`_completion`). Where a block's steps read drains back from before their repetition, or
its tiles write-backs (:attr:`_Open.reach`, :attr:`_Open.tile_reach`), the skipped repetitions'
read-backs are checked first (:func:`_reads_repeat`): each must hold its step (tile's fetch)
back as the compared repetition's did, a repetition's shift later, or not at all. Known gap:
the read-backs of repetitions skipped within the compared one (an inner block's) are not
checked so. Write-backs still queued at a skip are carried over to the last skipped repetition;
the tiles skipped and theirs are answered from the last tiles before them whose write-backs
were sent (:meth:`Pipeline._skip_tiles`).

The nest is compiled once into a flat program (runs of steps, L2 tiles' beginnings and ends,
repeated blocks' openings and closings) that one loop executes with the steps' state in local
variables: most blocks run one or two steps, so the cost of a step is the recurrence itself,
not the calls and the state's loads and stores around it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import islice
from operator import itemgetter
from typing import Sequence

from accelsim.mapping.geometry import LoopClass

# a step case as Pipeline._execute reads it: ingress, operand latency, compute, egress, drains,
# read-back source, barrier, landing, tile_first, tile_last
StepCase = tuple[int, int, int, int, bool, int, bool, int, bool, bool]


@dataclass(frozen=True)
class StepDelays:
    """Per step case (cycles): ingress, compute, egress, whether it drains, and how many steps
    back lies the drain whose partial sums it reads back (0: none); ``landing``: cycles from a
    drain's last word leaving the PEs to its sums being in L2 (the reduction network's depth;
    empty: none)."""

    ingress: Sequence[int]
    compute: Sequence[int]
    egress: Sequence[int]
    drains: Sequence[bool]
    readback_source: Sequence[int]
    landing: Sequence[int] = ()
    barrier: Sequence[bool] = ()  # the controller holds the step until every drain so far landed
    latency: Sequence[int] = ()  # the operands' network latency per case (empty: Timing's)


@dataclass(frozen=True)
class Timing:
    """Buffering and latencies (cycles): L1 and L2 buffers (2 when double-buffered), operands'
    network latency, cycles between a step's last MAC and its drain (MAC pipeline), DRAM
    latency per transfer, and whether outputs share the distribution network.
    ``register_stages``: steps whose operands may wait on the network's hop registers (systolic
    links: one step per hop), on top of L1's operand buffers. ``l2_space_words``: see
    :class:`Pipeline`."""

    l1_buffers: int = 2
    l2_buffers: int = 2
    ingress_latency: int = 0
    drain_delay: int = 0
    dram_latency: int = 0
    shared_network: bool = False
    register_stages: int = 0
    # l2.prefetch free_space: L2's words (0: off); a tile's fetch may begin while the tile
    # before it is in use when that tile's words and its own new ones fit in them
    l2_space_words: int = 0


@dataclass(frozen=True, slots=True)
class _Tile:
    """Program op: L2 tile case ``tile`` begins (its fetch) or, with ``end``, ends (its
    write-back is queued)."""

    tile: int
    end: bool


@dataclass(frozen=True, slots=True)
class _Open:
    """Program op: the ops up to the matching :data:`_CLOSE` are a block run ``times`` times;
    ``tiles``: the block steps from L2 tile to L2 tile (else it runs steps within one tile, so
    only the steps' state can move); ``reach``: how many steps before a repetition's first the
    furthest read-back of its steps looks (0: none looks before it, see :func:`_reaches`);
    ``tile_reach``: the same of its tiles' read-backs of spilled partial sums, in tiles."""

    times: int
    tiles: bool
    reach: int = 0
    tile_reach: int = 0


class _Close:
    """Program op: the end of the innermost open block."""


_CLOSE = _Close()
# blocks run at most this many times are unrolled: the first repetition has none to be
# compared with and the last two always run, so no repetition of theirs can be skipped
_UNROLLED = 3
# a nest compiled for Pipeline._execute: runs of steps (their cases in order), tiles, blocks
_Op = tuple[StepCase, ...] | _Tile | _Open | _Close


# completion times (steps' drains, tiles' write-backs) recorded beyond the look-ups' window
# before the older ones are forgotten
_FORGET_AFTER = 1024


def _forget(recorded: dict[int, int], keep: int) -> None:
    """Forget all but the newest ``keep + 1`` of ``recorded``'s completion times (numbers in
    increasing order): once the newest is ``n``, look-ups go back at most to ``n + 1 - keep``,
    and the older numbers lie below it (memory only: a layer may evaluate millions of steps)."""
    for number in list(islice(recorded, len(recorded) - keep - 1)):
        del recorded[number]


def _shift(recorded: dict[int, int], first: int, per_repeat: int, cycles: int, times: int) -> None:
    """After ``times`` skipped repetitions of ``per_repeat`` numbers each shifting times by
    ``cycles``: the last repetition's completion times (numbers from ``first``; ``recorded``
    holds numbers in increasing order) are recorded again as the last skipped one would have
    recorded them. Numbers older than the skipped ones stay; the other skipped repetitions' are
    not recorded but answered by :func:`_completion` from the stretches :func:`_skip` records."""
    moved = []
    for number in reversed(recorded):
        if number < first:
            break
        moved.append(number)
    numbers, cycles = times * per_repeat, times * cycles
    for number in reversed(moved):
        recorded[number + numbers] = recorded[number] + cycles


# a stretch of skipped repetitions' completion numbers: [first, end), each repetition
# ``per_repeat`` numbers, each ``cycles`` later than the one before; answered from the repetition
# after ``end`` (recorded, :func:`_shift`) or, where given, from the completions of the
# ``per_repeat`` numbers before ``first`` (anchors, None where a number completed nothing)
Skipped = tuple[int, int, int, int, tuple[int | None, ...] | None]


def _completion(recorded: dict[int, int], skipped: list[Skipped], number: int) -> int | None:
    """The completion time of ``number``: recorded, else :func:`_skipped_completion`'s."""
    time = recorded.get(number)
    return time if time is not None else _skipped_completion(recorded, skipped, number)


def _stretch(skipped: list[Skipped], number: int) -> Skipped | None:
    """The stretch of skipped repetitions that holds ``number`` (None: none does; ``skipped`` is
    in increasing order, the stretches disjoint)."""
    at = bisect_right(skipped, number, key=itemgetter(0)) - 1
    if at >= 0 and number < skipped[at][1]:
        return skipped[at]
    return None


def _skipped_completion(recorded: dict[int, int], skipped: list[Skipped], number: int) -> int | None:
    """The completion time of a number not recorded: within a stretch of skipped repetitions that
    of the same number in the repetition after the stretch, earlier by a repetition's cycles for
    each repetition between, or in the one before, later so (None: the number completed nothing,
    e.g. a step that does not drain)."""
    stretch = _stretch(skipped, number)
    return None if stretch is None else _stretch_completion(recorded, skipped, stretch, number)


def _stretch_completion(recorded: dict[int, int], skipped: list[Skipped], stretch: Skipped, number: int) -> int | None:
    """The completion time of ``number`` within ``stretch`` (see :func:`_skipped_completion`)."""
    first, end, per_repeat, cycles, anchors = stretch
    if anchors is not None:  # the same number in the repetition before the stretch, a repetition's cycles each
        anchor = anchors[(number - first) % per_repeat]
        return None if anchor is None else anchor + ((number - first) // per_repeat + 1) * cycles
    back = (end - number + per_repeat - 1) // per_repeat
    later = _completion(recorded, skipped, number + back * per_repeat)
    return None if later is None else later - back * cycles


def _holds(late: int, binding: bool, ready: int, free: int) -> bool:
    """Whether a landing ``late`` cycles after a repetition's shift holds the step back as a
    read-back that found ``ready`` for a step free at ``free`` did (``binding``: ready > free)."""
    return late == ready if binding else late <= free


# an open block's state in Pipeline._execute, saved while a block inside it runs: where its body
# begins, its repetitions (all, run so far), whether over tiles, the state vectors before the
# current repetition and the one before, its read-backs' reach, whether an enclosing block
# records read-backs, where its repetition's begin in the list, the same of its tiles, and its
# current repetition's first step and tile
_Saved = tuple[int, int, bool, int, tuple[int, ...] | None, tuple[int, ...] | None, int, bool, int, int, bool, int,
               int, int]

# a read-back as a repetition made it: the step it read (steps' numbers), the time the step could
# have begun without it (cycles) and the drain's landing it found (0: none)
Read = tuple[int, int, int]


def _skipped_reads(reads: list[Read], per_repeat: int, shift: int, left: int, before: int) -> list[Read]:
    """The read-backs the ``left`` repetitions skipped after the one that made ``reads`` make,
    as :func:`_reads_repeat` found they do (each repetition ``per_repeat`` numbers and ``shift``
    cycles later; a read-back that held its step back holds it back as long, one that did not
    does not), those whose numbers lie before ``before`` (an enclosing block's repetition's
    first): they stand for the skipped repetitions when that block's are checked."""
    skipped: list[Read] = []
    for target, free, ready in reads:
        count = min(left, (before - 1 - target) // per_repeat)
        if count > 0:
            skipped += [(target + m * per_repeat, free + m * shift, ready + m * shift) for m in range(1, count + 1)]
    return skipped


def _reads_repeat(reads: list[Read], first: int, per_repeat: int, left: int, shift: int, land_shift: int,
                  landed_by: int | None, landed: dict[int, int], skipped: list[Skipped], delay: int = 0,
                  pending_from: int | None = None, landed_late: int | None = None) -> bool:
    """Whether the ``left`` repetitions after the one of numbers ``first`` to ``first +
    per_repeat - 1`` (steps, or tiles) read back as its ``reads`` did, each ``shift`` cycles
    later: a read-back whose number lies before ``first`` becomes, ``m`` repetitions later, one of
    the number ``per_repeat * m`` later, and must hold its step (tile's fetch) back exactly as
    long after its start, or not at all. Completions (``landed``, ``skipped``; each waited for
    ``delay`` cycles more) before ``first`` are looked up: recorded, or in a skipped stretch,
    where they grow linearly, so its two ends decide; none is, where every completion before
    ``first`` (all by ``landed_by``; None: not known) came before the step was free. Once the number lies in the
    repetition compared or later, its completion grows by ``land_shift`` a repetition (the skip's
    own assumption), so the first such repetition and the last decide. ``pending_from``: the
    first number whose completion is still to come (a write-back queued): where one is needed,
    that of the repetition before, ``land_shift`` earlier, stands for it in the repetition
    compared; before ``first``, the repetitions are not taken to repeat. ``landed_late``: every
    completion in the repetition compared came by then (None: not known); where that is a
    repetition's shift or more before a read-back found its step free, it holds none back."""
    for target, free, ready in reads:
        if target >= first:  # within the repetition: it repeats as the repetition does
            continue
        binding = ready > free
        crossing = -((target - first) // per_repeat)  # the first repetition whose number is not before first
        m, last = 1, min(left, crossing - 1)
        if not binding and landed_by is not None and landed_by <= free:  # none before first holds it back
            if landed_late is not None and landed_late - shift <= free and land_shift <= shift:
                continue  # nor one in the repetition compared, nor (growing no faster) a later one
            m = last + 1
        while m <= last:
            number = target + m * per_repeat
            if number < 0:  # before the layer: no completion, until its first number
                if binding:
                    return False
                m = -(target // per_repeat)
                continue
            time = landed.get(number)
            stretch = _stretch(skipped, number) if time is None and skipped else None
            until = m  # the last repetition whose number lies in the stretch, its completion linear in m
            if stretch is not None:
                time = _stretch_completion(landed, skipped, stretch, number)
                if stretch[2] == per_repeat:
                    until = min(last, m + (stretch[1] - 1 - number) // per_repeat)
            if time is None:
                if binding or pending_from is not None and (stretch[1] + stretch[2] if stretch else number + 1) > pending_from:
                    return False
            elif not (_holds(time + delay - m * shift, binding, ready, free)
                      and _holds(time + delay + (until - m) * (stretch[3] if stretch else 0) - until * shift, binding,
                                 ready, free)):
                return False
            m = until + 1
        if crossing <= left:
            number = target + crossing * per_repeat
            time = _completion(landed, skipped, number)
            if time is None and pending_from is not None and number >= pending_from:
                time = _completion(landed, skipped, number - per_repeat)
                if time is None or number - per_repeat >= pending_from:
                    return False
                time += land_shift
            if time is None:
                if binding:
                    return False
            elif not (_holds(time + delay - crossing * shift, binding, ready, free)
                      and _holds(time + delay + (left - crossing) * land_shift - left * shift, binding, ready, free)):
                return False
    return True


def _skip(skipped: list[Skipped], first: int, end: int, per_repeat: int, cycles: int, times: int, reach: int,
          start: int | None = None, anchors: tuple[int | None, ...] | None = None) -> None:
    """Record that ``times`` repetitions of ``per_repeat`` numbers, each shifting times by
    ``cycles``, were skipped after the repetition of the numbers ``first`` to ``end - 1``: the
    stretches skipped within that repetition (the newest, recorded since it began) are skipped
    within each, so the last skipped one's copy is recorded too (as :func:`_shift` records its
    completions), and the numbers from ``start`` (``end``: the skipped ones) up to the last
    skipped repetition form a stretch, answered from the last skipped repetition or, with
    ``anchors``, from the completions of the ``per_repeat`` numbers before ``start``.
    ``skipped`` stays in increasing order: the new stretch lies after the repetition's own
    (``start`` after them), the copies after it. The oldest stretches no look-up can reach any
    more (all below ``reach``) are forgotten."""
    within = bisect_left(skipped, first, key=itemgetter(0))
    numbers, later = times * per_repeat, times * cycles
    copies = [(a + numbers, b + numbers, period, shift, None if marks is None else
               tuple(None if mark is None else mark + later for mark in marks))
              for a, b, period, shift, marks in skipped[within:]]
    start = end if start is None else start
    if start < first + numbers:
        skipped.append((start, first + numbers, per_repeat, cycles, anchors))
    skipped += copies
    if skipped and skipped[0][1] <= reach:
        del skipped[:bisect_right(skipped, reach, key=itemgetter(1))]


def _times(steps: int, length: int, tiles: bool) -> list[int]:
    """The places of event times in a state vector of ``length`` laid out as :func:`_uniform_shift`
    says (the rest are counters)."""
    times = [1, 2, 3, 4, *range(9, steps)]
    if tiles:
        times += range(steps + 1, length)
    return times


def _uniform_shift(now: tuple[int, ...], before: tuple[int, ...], steps: int, tiles: bool) -> int | None:
    """The one amount (cycles; 0: none moved) by which the repetition that took the state from
    ``before`` to ``now`` (vectors as :meth:`Pipeline._execute` builds them: counters at 0, 5-8
    and, with ``tiles``, at ``steps``; the rest event times) moved every event time it moved,
    where it left the others no later than the earliest it moved; else None.

    Two repetitions that shift each value alike are not enough for the rest to repeat: where a
    time grows faster than another it is compared with, it overtakes it and the repetitions
    change (a mapping of the search bench's scenario came out 190 cycles short that way, see
    tests/test_pipeline.py). Times that all move together keep their order; a time left behind,
    no later than every moving one, is not chosen by a maximum with them."""
    times = _times(steps, len(now), tiles)
    moved = 0
    for i in times:
        shift = now[i] - before[i]
        if shift:
            if moved and shift != moved:
                return None
            moved = shift
    if not moved:
        return 0
    earliest = min(now[i] for i in times if now[i] != before[i])
    return moved if all(now[i] <= earliest for i in times if now[i] == before[i]) else None


def _reaches(program: list[_Op], read_source: Sequence[int]) -> list[_Op]:
    """``program`` with each block's :attr:`_Open.reach` and :attr:`_Open.tile_reach`: the most
    steps (tiles) before a repetition's first that one of its read-backs looks (a step ``o``
    steps into the repetition reading back ``source`` steps looks ``source - o`` before it; a
    tile reading back ``read_source`` tiles likewise; a block within, at its first repetition).
    ``read_source``: per tile case, tiles back to its spilled partial sums (0: none)."""
    # per open block: its _Open's place, its steps and tiles so far in one repetition, its reaches so far
    frames: list[list[int]] = [[-1, 0, 0, 0, 0]]
    for pc, op in enumerate(program):
        frame = frames[-1]
        if type(op) is tuple:
            for o, case in enumerate(op, frame[1]):
                if case[5] and case[5] - o > frame[3]:
                    frame[3] = case[5] - o
            frame[1] += len(op)
        elif type(op) is _Tile:
            if not op.end:
                if read_source[op.tile] and read_source[op.tile] - frame[2] > frame[4]:
                    frame[4] = read_source[op.tile] - frame[2]
                frame[2] += 1
        elif type(op) is _Open:
            frames.append([pc, 0, 0, 0, 0])
        else:
            at, steps, tiles, reach, tile_reach = frames.pop()
            block = program[at]
            assert type(block) is _Open
            program[at] = _Open(block.times, block.tiles, reach, tile_reach)
            outer = frames[-1]
            outer[3] = max(outer[3], reach - outer[1])
            outer[4] = max(outer[4], tile_reach - outer[2])
            outer[1] += block.times * steps
            outer[2] += block.times * tiles
    return program


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
    # step -> its drain landed (when read-backs look drains up), in increasing step order
    landed: dict[int, int] = field(default_factory=dict)
    tile: int = 0  # tiles done
    # tile -> its write-back sent (when tiles read partial sums back), in increasing tile order
    write_done: dict[int, int] = field(default_factory=dict)

    resident_words: int = 0  # words of the last tile begun (prefetch)

    def __post_init__(self) -> None:
        self.distributed = [0] * self.l2_tiles
        self.computed = [0] * self.operand_slots
        self.drained = [0] * self.l1_buffers

    def tile_vector(self) -> tuple[int, ...]:
        """The event times and counters that only L2 tiles move: tiles done, the last
        write-back, the DRAM channel, the tiles handed out, the pending write-backs' readiness,
        the current tile's fetch and arrival."""
        return (self.tile, self.written, self.channel_free, *self.distributed, *[w[0] for w in self.writes],
                self.fetched, self.arrived)

    def load_tiles(self, values: Sequence[int]) -> None:
        """Set the state from a :meth:`tile_vector` of the same shape."""
        self.tile, self.written, self.channel_free = values[0], values[1], values[2]
        i = 3 + len(self.distributed)
        self.distributed = list(values[3:i])
        for w in self.writes:
            w[0] = values[i]
            i += 1
        self.fetched, self.arrived = values[i], values[i + 1]


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
        self.keep_landed = max(delays.readback_source, default=0)  # drains read back at most this far
        self.keep_written = max(read_source, default=0)  # write-backs read back at most this far
        # stretches of skipped repetitions whose drains (tiles' write-backs) are not recorded
        self.skipped_landed: list[Skipped] = []
        self.skipped_written: list[Skipped] = []
        # while an open block's tiles read back before its repetitions, their read-backs (see
        # _reads_repeat; the steps' are kept in _execute)
        self.tile_reads: list[Read] = []
        self.record_tiles = False

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
            done = _completion(s.write_done, self.skipped_written, source)
            ready = 0 if done is None else done + self.t.dram_latency
            if self.record_tiles:
                self.tile_reads.append((source, request, ready))
            request = max(request, ready)
        while s.writes and max(s.writes[0][0], s.written) < request:
            self._write(*s.writes.pop(0))
        s.channel_free = s.fetched = max(s.channel_free, request) + self.read_cycles[tile]
        s.arrived = s.fetched + (self.t.dram_latency if self.read_cycles[tile] else 0)

    def _end_tile(self, tile: int, noc_free: int, land_free: int) -> None:
        """The tile's steps are done: its buffer is distributed once the network is free
        (``noc_free``), its write-back is ready once its drains have landed (``land_free``)."""
        s = self.s
        s.distributed = s.distributed[1:] + [noc_free]
        s.writes.append([land_free, self.write_cycles[tile], s.tile])
        s.tile += 1

    def _write(self, ready: int, cycles: int, number: int) -> None:
        """Write-back of tile ``number``, asked for once it is ready and the previous one is done."""
        s = self.s
        if cycles:
            s.channel_free = max(s.channel_free, ready, s.written) + cycles
            s.written = s.channel_free
            if self.keep_written:
                s.write_done[number] = s.written
                if len(s.write_done) > self.keep_written + _FORGET_AFTER:
                    _forget(s.write_done, self.keep_written)

    # ---------------------------------------------------------------- steps
    def _delays(self) -> list[tuple[int, int, int, int, bool, int, bool, int]]:
        """Per step case, its delays as :meth:`_execute` reads them (a :data:`StepCase` without
        its place in the L2 tile): ingress, the operands' network latency (0 when nothing is
        sent), compute, egress, whether it drains, the read-back's source (steps back; 0:
        none), whether the tile barrier holds it, the landing delay."""
        d = self.d
        n = len(d.ingress)
        latency = d.latency or [self.t.ingress_latency] * n
        return [(ingress, lat if ingress else 0, compute, egress, bool(drains), source, bool(barrier), landing)
                for ingress, lat, compute, egress, drains, source, barrier, landing in
                zip(d.ingress, latency, d.compute, d.egress, d.drains, d.readback_source, d.barrier or [False] * n,
                    d.landing or [0] * n)]

    def _program(self, classes: list[list[LoopClass]], case_of: dict[tuple, int], tile_loops: int,
                 tile_of: dict[tuple, int]) -> list[_Op]:
        """The nest (see :meth:`run`) as :meth:`_execute`'s program: each L2 tile's steps lie
        between its two :class:`_Tile` ops; a class run more than :data:`_UNROLLED` times is a
        block between :class:`_Open` and :data:`_CLOSE`; a class run fewer times has its
        repetitions spliced into its parent's sequence (the same steps in the same order: none
        of them could be skipped); consecutive steps form one run."""
        program: list[_Op] = []
        run: list[StepCase] = []  # steps since the last other op
        delays = self._delays()
        depth = len(classes)

        def flush() -> None:
            if run:
                program.append(tuple(run))
                run.clear()

        def emit(op: _Op) -> None:
            if type(op) is tuple:
                run.extend(op)
            else:
                flush()
                program.append(op)

        def walk(level: int, prefix: tuple, first: bool, last: bool) -> None:
            """Loops from ``level`` on below the class numbers ``prefix``; ``first``/``last``:
            the classes so far of the loops within an L2 tile are their first/last."""
            if level == tile_loops:
                tile = tile_of[prefix]
                emit(_Tile(tile, False))
            if level == depth:
                run.append(delays[case_of[prefix]] + (first, last))
            else:
                within = level >= tile_loops
                final = len(classes[level]) - 1
                steps = level + 1 == depth != tile_loops  # each class's body is one step, no tile
                for i, c in enumerate(classes[level]):
                    inner = prefix + (i,)
                    body_first, body_last = first and (i == 0 or not within), last and (i == final or not within)
                    if c.count > _UNROLLED:
                        emit(_Open(c.count, not within))
                        walk(level + 1, inner, body_first, body_last)
                        emit(_CLOSE)
                    elif steps:  # (walk's steps, without the call)
                        run.extend([delays[case_of[inner]] + (body_first, body_last)] * c.count)
                    elif c.count == 1:
                        walk(level + 1, inner, body_first, body_last)
                    else:  # the body once, taken off the program, then as many times as the class runs
                        flush()
                        mark = len(program)
                        walk(level + 1, inner, body_first, body_last)
                        flush()
                        body = program[mark:]
                        del program[mark:]
                        before = program[-1] if program else None
                        if type(before) is tuple:  # the steps before the body join its first ones
                            run.extend(before)
                            program.pop()
                        for _ in range(c.count):
                            for op in body:
                                emit(op)
            if level == tile_loops:
                emit(_Tile(tile, True))

        walk(0, (), True, True)
        flush()
        return _reaches(program, self.read_source)

    def _execute(self, program: list[_Op]) -> None:
        """Run the program: its steps, tiles and blocks in order; a block run ``times`` times
        runs its body, and once two repetitions shift the state alike, the remaining ones but
        the last (which meets the next block) are added as shifts. The steps' state is kept in
        local variables for the whole run (this loop is where the model spends its time); a
        block within one tile compares only that state, one over tiles the tiles' too."""
        s = self.s
        drain_delay, shared, keep = self.t.drain_delay, self.t.shared_network, self.keep_landed
        landed, skipped_landed = s.landed, self.skipped_landed
        computed, drained, arrived, tile_writes = s.computed, s.drained, s.arrived, False
        noc_free, compute_free, drain_free, land_free = s.noc_free, s.compute_free, s.drain_free, s.land_free
        stall_dram, stall_noc, stall_reduction, busy, step = s.stall_dram, s.stall_noc, s.stall_reduction, s.busy, s.step
        # the innermost block being run: where its body begins, its repetitions (all and run so
        # far), whether it runs over tiles, and while its repetitions are compared, the state's
        # vector before the current one and before the previous one; the enclosing ones' on
        # ``blocks``
        body, times, tiles, repeated = 0, 1, False, 0
        before: tuple[int, ...] | None = None
        prior: tuple[int, ...] | None = None
        # and how far its read-backs look before a repetition's first step, whether an enclosing
        # block's look before theirs (then ``reads`` keeps their read-backs too), the current
        # repetition's first read-back in ``reads``; the same of its tiles (self.tile_reads)
        reach, outer_reads, mark, tile_reach, outer_tile_reads, tile_mark = 0, False, 0, 0, False, 0
        blocks: list[_Saved] = []
        # while an open block's read-backs look before its repetitions (``record``), the read-backs
        # made that look before the current repetition's first step (``first``; those within it
        # repeat with it, see _reads_repeat) and those of repetitions skipped within it
        # (_skipped_reads); its first tile (``first_tile``)
        reads: list[Read] = []
        record, first, first_tile = False, 0, 0
        pc, end = 0, len(program)
        while pc < end:
            op = program[pc]
            pc += 1
            if type(op) is tuple:
                for ingress, latency, compute, egress, drains, source, barrier, landing, tile_first, tile_last in op:
                    # free = max(noc_free, computed[0], arrived on a tile's first step)
                    free = computed[0]
                    if noc_free > free:
                        free = noc_free
                    if tile_first and arrived > free:
                        free = arrived
                    start = free
                    if source:  # partial sums in L2
                        ready = landed.get(step - source)
                        if ready is None:
                            ready = (_skipped_completion(landed, skipped_landed, step - source) or 0) \
                                if skipped_landed else 0
                        if record and step - source < first:
                            reads.append((step - source, start, ready))
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
                        if keep:  # the drains read-backs may wait for
                            landed[step] = land
                            if len(landed) > keep + _FORGET_AFTER:
                                _forget(landed, keep)
                    step += 1
                continue
            if type(op) is _Tile:
                if op.end:
                    self._end_tile(op.tile, noc_free, land_free)
                else:
                    tile_writes = self.write_cycles[op.tile] > 0
                    self._begin_tile(op.tile)
                    arrived = s.arrived
                continue
            if type(op) is _Open:
                blocks.append((body, times, tiles, repeated, before, prior, reach, outer_reads, mark, tile_reach,
                               outer_tile_reads, tile_mark, first, first_tile))
                body, times, tiles, repeated, before, prior = pc, op.times, op.tiles, 0, None, None
                first, first_tile = step, s.tile
                reach, outer_reads, mark = op.reach, record, len(reads)
                record = record or reach > 0
                tile_reach, outer_tile_reads, tile_mark = op.tile_reach, self.record_tiles, len(self.tile_reads)
                self.record_tiles = outer_tile_reads or tile_reach > 0
                measure = times > 2  # the last two repetitions run as they are: nothing left to skip
            else:
                repeated += 1
                measure = before is not None  # the repetition just run is compared
            if measure:
                now = (step, drain_free, noc_free, compute_free, land_free, stall_dram, stall_noc, stall_reduction,
                       busy, *computed, *drained)
                if tiles:
                    now += s.tile_vector()
                left = times - repeated - 1
                # the repetition just run shifted the state as the one before it did (now - before ==
                # before - prior, value by value; drain_free's and noc_free's first: where they
                # mostly differ, as step's never do)
                if prior is not None and before is not None and left > 0 \
                        and drain_free - before[1] == before[1] - prior[1] and noc_free - before[2] == before[2] - prior[2] \
                        and len(now) == len(before) == len(prior):
                    for v, b, p in zip(now, before, prior):
                        if v - b != b - p:
                            break
                    else:
                        k = 9 + len(computed)
                        steps = k + len(drained)
                        shift = _uniform_shift(now, before, steps, tiles)
                        if shift is not None and not (
                                tiles and self.keep_written and self._queued_across(before[steps])) and (
                                reach <= 0 and tile_reach <= 0
                                or self._reads_repeat(now, before, steps, shift, left, reads[mark:] if reach > 0 else [],
                                                      tile_mark if tile_reach > 0 else -1)):
                            if outer_reads and reach > 0 or outer_tile_reads and tile_reach > 0:
                                self._stand_in(blocks[-1], reads, mark, tile_mark, step - before[0],
                                               s.tile - before[steps] if tiles else 0, shift, left,
                                               outer_reads and reach > 0, outer_tile_reads and tile_reach > 0)
                            if keep:  # before[:2]: the repetition's first step and drain_free before it
                                _shift(landed, before[0], step - before[0], drain_free - before[1], left)
                                _skip(skipped_landed, before[0], step, step - before[0], drain_free - before[1], left,
                                      step - keep)
                            shifted = [v + left * (v - b) for v, b in zip(now, before)]
                            if tiles:  # before[steps:steps + 2]: the tile and written before it
                                tiles_run = s.tile - before[steps]
                                if self.keep_written:
                                    self._skip_tiles(before[steps], tiles_run, s.written - before[steps + 1], left)
                                for w in s.writes:
                                    w[2] += left * tiles_run
                                s.load_tiles(shifted[steps:])  # (the body begins with a tile: it sets arrived)
                            step, drain_free, noc_free, compute_free, land_free, stall_dram, stall_noc, stall_reduction, \
                                busy = shifted[:9]
                            computed, drained = shifted[9:k], shifted[k:steps]
                            repeated += left
                prior = before
                # the next repetition is compared unless it is one of the last two
                before = now if times - repeated > 2 else None
            if repeated < times:
                pc, first, first_tile = body, step, s.tile
                if record:
                    if not outer_reads:  # none but the next repetition's read-backs will be looked at
                        reads.clear()
                    mark = len(reads)
                if self.record_tiles:
                    if not outer_tile_reads:
                        self.tile_reads.clear()
                    tile_mark = len(self.tile_reads)
            else:
                if record and not outer_reads:
                    reads.clear()
                if self.record_tiles and not outer_tile_reads:
                    self.tile_reads.clear()
                body, times, tiles, repeated, before, prior, reach, outer_reads, mark, tile_reach, outer_tile_reads, \
                    tile_mark, first, first_tile = blocks.pop()
                record = outer_reads or reach > 0
                self.record_tiles = outer_tile_reads or tile_reach > 0
        s.computed, s.drained = computed, drained
        s.noc_free, s.compute_free, s.drain_free, s.land_free = noc_free, compute_free, drain_free, land_free
        s.stall_dram, s.stall_noc, s.stall_reduction, s.busy, s.step = stall_dram, stall_noc, stall_reduction, busy, step

    def _stand_in(self, enclosing: _Saved, reads: list[Read], mark: int, tile_mark: int, steps: int, tiles: int,
                  shift: int, left: int, step_reads: bool, tile_reads: bool) -> None:
        """Add the read-backs of ``left`` repetitions skipped after the one whose steps' read-backs
        are ``reads[mark:]`` and tiles' ``self.tile_reads[tile_mark:]`` (each repetition
        ``steps`` steps, ``tiles`` tiles and ``shift`` cycles later; :func:`_skipped_reads`) to the
        read-backs of the ``enclosing`` block (its state as :meth:`_execute` saved it), for its
        check: where its current repetition will be compared with a repetition left to skip, or a
        block further out records them."""
        (_, times, _, repeated, before, prior, reach, outer_reads, _, tile_reach, outer_tile_reads, _, first,
         first_tile) = enclosing
        compared = before is not None and prior is not None and times - repeated > 2
        if step_reads and (outer_reads or reach > 0 and compared):
            reads += _skipped_reads(reads[mark:], steps, shift, left, first)
        if tile_reads and (outer_tile_reads or tile_reach > 0 and compared):
            self.tile_reads += _skipped_reads(self.tile_reads[tile_mark:], tiles, shift, left, first_tile)

    def _queued_across(self, first: int) -> bool:
        """Whether write-backs queued since before tile ``first`` (its repetition's first) would
        be answered by a stretch (:meth:`_skip_tiles`) across one skipped within the repetition:
        then its repetitions are not skipped."""
        s = self.s
        return bool(s.writes) and s.writes[0][2] < first and bool(self.skipped_written) \
            and self.skipped_written[-1][0] >= first

    def _skip_tiles(self, first: int, per_repeat: int, cycles: int, times: int) -> None:
        """Record the write-backs of ``times`` repetitions of ``per_repeat`` tiles skipped after
        the one from tile ``first``, each ``cycles`` later than the one before (:func:`_shift`,
        :func:`_skip`). Write-backs still queued are carried over to the last skipped repetition
        (its own are sent later and recorded then); theirs and the skipped ones up to it are
        answered from the last ``per_repeat`` tiles before them all sent, not from the last
        skipped repetition, whose own may still be queued when a read-back asks."""
        s = self.s
        end = first + per_repeat
        _shift(s.write_done, first, per_repeat, cycles, times)
        start = min(s.writes[0][2], end) if s.writes else end
        anchors = tuple(_completion(s.write_done, self.skipped_written, number)
                        for number in range(start - per_repeat, start))
        _skip(self.skipped_written, first, end, per_repeat, cycles, times, s.tile - self.keep_written, start, anchors)

    def _reads_repeat(self, now: tuple[int, ...], before: tuple[int, ...], steps: int, shift: int, left: int,
                      reads: list[Read], tile_mark: int) -> bool:
        """Whether the ``left`` repetitions after the one that took the state from ``before`` to
        ``now`` (vectors as in :meth:`_execute`; ``steps``: their layout), moving every time it
        moved by ``shift``, read back as it did (:func:`_reads_repeat`): its steps' ``reads``
        and, with ``tile_mark`` >= 0, its tiles' (``self.tile_reads`` from there)."""
        s = self.s
        if reads and not _reads_repeat(reads, before[0], now[0] - before[0], left, shift, now[1] - before[1], before[4],
                                       s.landed, self.skipped_landed, landed_late=now[4]):
            return False
        if tile_mark < 0:
            return True
        first = before[steps]
        pending_from = s.writes[0][2] if s.writes else None
        written_by: int | None = -self.t.dram_latency  # every write-back of a tile before first was sent by then
        if pending_from is not None and pending_from < first:
            written_by = None  # one is still queued
        else:
            for number in reversed(s.write_done):  # the last one's (the channel sends them in order)
                if number < first:
                    written_by = s.write_done[number]
                    break
        return _reads_repeat(self.tile_reads[tile_mark:], first, s.tile - first, left, shift,
                             s.written - before[steps + 1],
                             None if written_by is None else written_by + self.t.dram_latency, s.write_done,
                             self.skipped_written, self.t.dram_latency, pending_from)

    def run(self, classes: list[list[LoopClass]], case_of: dict[tuple, int], tile_loops: int,
            tile_of: dict[tuple, int]) -> int:
        """Execute the nest (``case_of``: class numbers of all loops -> step case; the first
        ``tile_loops`` loops step from L2 tile to L2 tile, ``tile_of`` -> tile case) and return
        the cycles until the last output is written back."""
        self._execute(self._program(classes, case_of, tile_loops, tile_of))
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
