"""What every step of a tile schedule moves and computes: the per-step demand both timing
models read (the simulator step by step, the analytical model as one table over all cases).

For each step this derives the MACs and compute cycles, the operand words the distribution
network must deliver (only what is not already in a PE's L1; one transfer per multicast group),
the partial-sum read-backs at the start of a revisited output tile, and the output drains
(spatial reduction groups) at the end of an output tile; :mod:`accelsim.mapping.tiles` the
DRAM traffic of each L2 tile. :meth:`ScheduleProfile.table` gives the demand of a batch of
cases as columns (a :class:`DemandTable`, one numpy array per field), independent of the
networks' bandwidths; :meth:`ScheduleProfile.demand` a step's demand as a record with the
serialization cycles at the options' bandwidths.

Cost does not grow with the number of steps or of PEs (see :mod:`accelsim.mapping.geometry`):
all steps of one *case* (one class of indices per loop) have the same demand, computed once,
and within a step the PEs of one *class* (one interval of sub-units per cluster level) are
translates of each other, so a demand is computed on one representative per class and
weighted by the class size. Multicast and reduction groups (PEs holding the same tensor box)
are counted from how far each tensor's box moves per sub-unit at each level: where distinct
sub-units always hold distinct boxes the count is a product of interval sizes, elsewhere the
representatives' boxes are enumerated.

Counting rules (also in the README):
- an idle PE keeps its L1 contents; a tile already resident is not fetched again, only the part
  of the new tile outside the old one is (for the operands the PEs reuse from step to step,
  ``ProfileOptions.reused_operands``; the others are sent whole every step);
- a PE drains its output tile at the end of every run of steps over that tile in which it did
  any work; PEs draining the same tile together are reduced spatially first;
- an output tile revisited later (a reduction loop outside its tile loops) is spilled as partial
  sums to L2 and read back at the start of the next visit; likewise at L2 to DRAM.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import product
from math import ceil, prod
from typing import Any

import numpy as np

from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.forwarding import NeighbourLinks
from accelsim.mapping.geometry import (
    Boxes,
    LoopClass,
    UnitClasses,
    boxes,
    enumerate_cases,
    every_index_classes,
    loop_classes,
    loop_points,
    loop_indices,
    loop_strides,
    output_dims,
    pe_index,
    previous_active,
    step_loop_indices,
    unit_classes,
    unit_velocity,
    volume,
)
from accelsim.mapping.ports import CollectionBus, PortLoads, WritePorts, class_members
from accelsim.mapping.runs import VisitOrder, class_of, output_loop_structure
from accelsim.mapping.tiles import TileSchedule
from accelsim.workload.operators import OPERAND_ROLES

ENUMERATION_LIMIT = 1 << 16  # sub-unit tuples enumerated at most to prove boxes distinct
BATCH_STEPS = 4096  # steps whose new cases are computed together


@dataclass(frozen=True)
class TransferSet:
    """Deliveries of one tensor in one step.

    ``transfers`` packets; ``words`` distinct words sent (= L2 reads); ``dest_words`` words
    written into L1s (the step's time on the network is its :attr:`StepDemand.ingress_cycles`).
    """

    transfers: int = 0
    words: int = 0
    dest_words: int = 0
    packet_words: tuple[int, ...] = ()  # per packet, only in per-PE detail


@dataclass(frozen=True)
class StepDemand:
    """Everything one step of the schedule needs (counts in words, times in cycles)."""

    macs: int
    active_pes: int
    max_pe_macs: int
    input: TransferSet
    weight: TransferSet
    readback: TransferSet  # partial sums returned from L2 to the PEs at a run start
    drain_groups: int  # distinct output tiles drained after this step
    drain_words: int  # words written to L2 after reduction
    drain_pe_words: int  # words read out of PE L1s
    drain_max_group: int  # largest spatial reduction group (PEs)
    drain_partial: bool  # the drained tiles are partial sums (revisited later)
    reduction_serial_cycles: int  # busy cycles of the egress network for the drains
    tile_first: bool  # first step of an L2 tile
    tile_last: bool  # last step of an L2 tile
    # busy cycles of the distribution network for input, weight and read-back together (they
    # share its ports; see ProfileOptions)
    ingress_cycles: int
    pe_macs: tuple[int, ...] = ()  # per used PE, only in per-PE detail
    drain_group_words: tuple[int, ...] = ()  # per reduction group, only in per-PE detail
    forwarded_words: int = 0  # input words PEs took from their neighbours (ProfileOptions.forwarding)
    # cycles the SRAM's write queue needs beyond the busiest collection-bus line (a latency;
    # ProfileOptions.write_bus)
    drain_queue_cycles: int = 0
    # rows and columns of the array up to the farthest PE the step uses (ProfileOptions.fill_used)
    used_rows: int = 0
    used_cols: int = 0


def compute_cycles(max_pe_macs: Any, macs_per_pe_per_cycle: int, ingress_cycles: Any, on_arrival: bool) -> Any:
    """Per step, the cycles its MACs take after its last operand word has arrived (the step's
    ``ingress_cycles`` on the distribution network). The busiest PE needs ``m =
    ceil(max_pe_macs / macs_per_pe_per_cycle)`` cycles; by default they all follow the arrival.
    ``on_arrival`` (``pe_array.multiply_on_arrival``): the PE multiplies each operand in the
    cycle it arrives (STONNE's multiplier multiplies and passes the product on within the
    cycle), one cycle after another from the transfer's first, so only ``m - ingress_cycles``
    follow it (none when the transfer is at least as long). Integers or integer arrays alike
    (the simulator gives one step, the analytical model all cases)."""
    macs = -(-max_pe_macs // macs_per_pe_per_cycle)
    if not on_arrival:
        return macs
    return np.minimum(macs, np.maximum(0, macs - ingress_cycles))


def unique_rows(table: np.ndarray) -> list[list[int]]:
    """The distinct rows of the integer ``table`` in lexicographic order, as
    ``np.unique(table, axis=0)`` gives them (by :func:`first_rows`)."""
    return table[first_rows(table)[0]].tolist()


KEY_LIMIT = 2 ** 62  # mixed-radix keys stay below this (int64 without overflow)


def first_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of the distinct rows of the integer ``table`` (rows, columns) in lexicographic order,
    the index of each one's first occurrence, and for every row the number of its distinct
    row: ``np.unique(table, axis=0, return_index=True, return_inverse=True)[1:]``. Rows are
    read as mixed-radix numbers (column ``j`` less its least
    value, radix its span), so 1-D uniques of integers replace a sort of rows (several times
    faster). Columns are taken in chunks whose key fits ``KEY_LIMIT``; where the key so far
    and the next chunk's would not fit together, each is first replaced by its rank among
    its distinct values (which sorts as it does, and spans at most the rows). The row sort
    where one column alone spans ``KEY_LIMIT``."""
    low = table.min(axis=0) if len(table) else None
    spans = [] if low is None else [hi - lo + 1 for lo, hi in zip(low.tolist(), table.max(axis=0).tolist())]
    if low is None or max(spans, default=1) >= KEY_LIMIT:  # no rows, or a column too wide for a key
        _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
        return first, inverse.ravel()
    shifted = table - low
    keys, span = np.zeros(len(table), dtype=np.int64), 1
    j = 0
    while j < len(spans):
        chunk, chunk_span = [], 1
        while j < len(spans) and chunk_span * spans[j] < KEY_LIMIT:
            chunk.append(j)
            chunk_span *= spans[j]
            j += 1
        weights = [prod(spans[c] for c in chunk[i + 1:]) for i in range(len(chunk))]
        chunk_keys = shifted[:, chunk] @ np.array(weights, dtype=np.int64)
        if span * chunk_span >= KEY_LIMIT:
            keys = np.unique(keys, return_inverse=True)[1].ravel()
            span = int(keys.max()) + 1
        if span * chunk_span >= KEY_LIMIT:
            chunk_keys = np.unique(chunk_keys, return_inverse=True)[1].ravel()
            chunk_span = int(chunk_keys.max()) + 1
        keys, span = keys * chunk_span + chunk_keys, span * chunk_span
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.ravel()


@dataclass(frozen=True)
class ProfileOptions:
    """How data moves: multicast or one packet per PE, and the bandwidths (words/cycle).
    ``detail`` keeps per-PE and per-packet lists for the per-PE engine; ``exact`` treats every
    loop index and every sub-unit as its own class (for mappings whose windows overlap or leave
    gaps, ``--unchecked``).

    ``reused_operands``: the operands a PE keeps in its L1 from one step to the next (only
    the part of a tile it does not hold yet is sent); any other operand is sent whole at every
    step that uses it (``hw.l1.reused_operands``).

    A step's operand words (every tensor, read-backs included) share the distribution
    network: it takes ``ceil(distinct words / noc_bandwidth)`` cycles (the bandwidth capped by
    L2's reads), and with ``ports`` > 1 at least as many as its busiest port needs: port p
    feeds PEs ``[p * port_block_pes, (p + 1) * port_block_pes)`` at
    ``port_bandwidth_words_per_cycle``, and a multicast group costs its words once on each port
    that feeds one of its PEs. A step's drains share the reduction network's width:
    ``ceil(words after reduction / egress_bandwidth)``, or with ``write_ports`` they leave
    through fixed ports as they are ready (:class:`~accelsim.mapping.ports.WritePorts`), or with
    ``write_bus`` through MAERI's collection-bus lines into STONNE's write queue
    (:class:`~accelsim.mapping.ports.CollectionBus`).
    ``forwarding``: input words a PE's neighbour held in the previous step are forwarded over
    their link, not sent (:mod:`accelsim.mapping.forwarding`). ``l2_bypass``: operands L2 does
    not keep; each step's packets of them are read from DRAM instead of L2 (the words and
    their timing on the network are unchanged; see :mod:`accelsim.mapping.tiles`)."""

    multicast: bool
    noc_bandwidth_words_per_cycle: float
    egress_bandwidth_words_per_cycle: float
    detail: bool = False
    exact: bool = False
    ports: int = 1
    port_block_pes: int = 1
    port_bandwidth_words_per_cycle: float = 1.0
    # operands a PE keeps in L1 from step to step; the others are sent whole every step
    reused_operands: frozenset[str] = frozenset(OPERAND_ROLES)
    # fixed one-word write ports of the reduction network (0: drains share its width), PE
    # (row, col) of a rows x cols array wired to port (row * cols + col) % write_ports; with
    # ``wavefront`` (a systolic array) PE (row, col) is done row + col cycles after PE (0, 0)
    write_ports: int = 0
    array_rows: int = 1
    array_cols: int = 1
    wavefront: bool = False
    forwarding: bool = False
    # the write ports are MAERI's collection-bus lines (reduction_noc.write_ports: collection_bus)
    write_bus: bool = False
    # the ports carry a ragged tile's zero padding, and the inputs of a ragged output tile's
    # padded positions are read from L2 too (distribution_noc.pads_ragged_tiles)
    pad_ragged: bool = False
    # record each step's used rows and columns (distribution_noc.fill: used)
    fill_used: bool = False
    # operands L2 does not keep (hw.l2.keeps): their step words come from DRAM, not L2
    # (accelsim.mapping.tiles, "Bypass")
    l2_bypass: frozenset[str] = frozenset()


# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Groups:
    """Transfers of one kind in a batch of cases, as blocks of identical groups: block ``i``
    is ``n[i]`` groups of ``words[i]`` words, each of ``members[i]`` PEs, in case ``case[i]``.
    A group is one packet: a multicast to the PEs that want the same box, or a spatial
    reduction of the PEs that drain the same output tile. Per-case sums take the number of
    cases."""

    case: np.ndarray
    n: np.ndarray
    words: np.ndarray
    members: np.ndarray

    def _per_case(self, values: np.ndarray, cases: int) -> np.ndarray:
        return np.bincount(self.case, weights=values, minlength=cases).astype(np.int64)

    def count(self, cases: int) -> np.ndarray:
        """Groups (packets) per case."""
        return self._per_case(self.n, cases)

    def total(self, cases: int) -> np.ndarray:
        """Words per case."""
        return self._per_case(self.n * self.words, cases)

    def max_members(self, cases: int) -> np.ndarray:
        """The largest group's PEs per case (0: none)."""
        out = np.zeros(cases, dtype=np.int64)
        np.maximum.at(out, self.case, self.members)
        return out


_NO_GROUPS = Groups(*(np.zeros(0, dtype=np.int64),) * 4)


@dataclass(frozen=True)
class DemandTable:
    """The demand of a batch of iteration cases as columns (arrays of length ``len(self)``;
    words, MACs and PEs; no cycles, which depend on the networks' bandwidths).

    Per case: its representative step (``steps``) and loop indices (``rep``, cases x loops);
    MACs, PEs at work, the busiest PE's MACs, the most words of all tensors one PE holds
    (``peak_pe_words``); per operand the packets sent (``sent``, one per multicast group) and
    the words written into L1s; the partial sums read back at the start of a revisited output
    tile (``readback``, ``reads_back``: the step starts such a run; ``readback_source_steps``:
    steps back to the end of the previous visit, 0 where none is read); the drains after
    spatial reduction at the end of an output run (``drained``, ``run_end``; ``drains``: some
    PE drained), the words read out of the PEs (``drain_pe_words``) and whether they are
    partial sums; whether the step is the first or last of its L2 tile; with several root
    ports (see ``ProfileOptions``), the words on the busiest one; the input words PEs took
    from their neighbours (``forwarded``; 0 without forwarding), which are in
    ``delivered_words`` but not in ``sent``.
    """

    steps: np.ndarray
    rep: np.ndarray
    macs: np.ndarray
    active_pes: np.ndarray
    max_pe_macs: np.ndarray
    peak_pe_words: np.ndarray
    sent: dict[str, Groups]
    delivered_words: dict[str, np.ndarray]
    readback: Groups
    reads_back: np.ndarray
    readback_source_steps: np.ndarray
    drained: Groups
    run_end: np.ndarray
    drains: np.ndarray
    drain_pe_words: np.ndarray
    drain_partial: np.ndarray
    tile_first: np.ndarray
    tile_last: np.ndarray
    # words on the distribution network's busiest root port (all tensors; 0 with one port)
    busiest_port_words: np.ndarray
    # cycles of the drains through fixed write ports (ProfileOptions.write_ports; 0 without)
    drain_port_cycles: np.ndarray
    # further cycles of the SRAM's write queue behind a collection bus (ProfileOptions.write_bus)
    drain_queue_cycles: np.ndarray
    # rows and columns up to the farthest used PE (ProfileOptions.fill_used; 0 without)
    used_rows: np.ndarray
    used_cols: np.ndarray
    # input words forwarded from a neighbouring PE instead of sent (ProfileOptions.forwarding)
    forwarded: np.ndarray

    def __len__(self) -> int:
        return len(self.steps)

    def egress_cycles(self, egress_words_per_cycle: float) -> np.ndarray:
        """Per case, the reduction network's busy cycles for the drains: through fixed write
        ports where the network has them, else ``ceil(words after reduction / width)``; 0
        where nothing drains."""
        shared = np.ceil(self.drained.total(len(self)) / egress_words_per_cycle).astype(np.int64)
        return np.where(self.drain_port_cycles > 0, self.drain_port_cycles, shared)


class _Grouping:
    """Counts PEs holding identical boxes of one tensor among the PE classes, case by case.

    A PE of class ``c`` with sub-unit tuple ``u`` holds, per tensor axis, ``V u + k_c`` for the
    tensor's per-level velocity ``V`` (:func:`~accelsim.mapping.geometry.unit_velocity`) and a
    class constant ``k_c``; two PEs hold the same box iff these agree (extents agree within a
    class). Only levels with a non-zero velocity (*relevant* levels) can tell PEs apart: where
    distinct relevant sub-unit tuples always hold distinct boxes (``injective``), a class's
    groups are the product of its relevant interval sizes; elsewhere the tuples are enumerated.
    """

    def __init__(self, cm: CompiledMapping, role: str, classes: UnitClasses, exact: bool):
        self.velocity = unit_velocity(cm, role)
        self.relevant = [lv for lv in range(len(cm.levels)) if self.velocity[lv].any()]
        self.classes = classes
        units = [cm.levels[lv].units for lv in self.relevant]
        self.injective = not exact and _injective(self.velocity[self.relevant], units)
        irrelevant = [lv for lv in range(len(cm.levels)) if lv not in self.relevant]
        self.weight = classes.size[:, irrelevant].prod(axis=1)  # PEs per relevant tuple
        self.tuples = classes.size[:, self.relevant].prod(axis=1)  # relevant tuples per class
        self.moved: list[np.ndarray] = []  # per class, V (u - first) of its relevant tuples u
        if not self.injective:
            for c in range(len(classes)):
                ranges = [np.arange(classes.size[c, lv]) for lv in self.relevant]
                tuples = list(product(*ranges))
                grid = np.array(tuples, dtype=np.int64).reshape(len(tuples), len(self.relevant))
                self.moved.append(grid @ self.velocity[self.relevant])

    def groups(self, case: np.ndarray, klass: np.ndarray, keys: np.ndarray, moving: np.ndarray,
               words: np.ndarray) -> Groups:
        """Groups among rows (``case``, ``klass``) of a batch: ``keys`` (rows, k * axes) are
        ``k`` box corners of each class's representative, ``moving`` (rows, k) says which
        corners move with the sub-unit (a missing previous box does not), ``words`` per row
        (equal for PEs of one group)."""
        if len(case) == 0:
            return _NO_GROUPS
        cls = self.classes
        axes = self.velocity.shape[1]
        mask = np.repeat(moving, axes, axis=1).astype(np.int64)
        shift = cls.first[klass] @ self.velocity  # (rows, axes): V u of each representative
        norm = keys - np.tile(shift, moving.shape[1]) * mask
        if self.injective:
            first, inverse = first_rows(np.column_stack([case, norm, cls.interval[klass][:, self.relevant]]))
            members = np.bincount(inverse, weights=self.weight[klass], minlength=len(first)).astype(np.int64)
            return Groups(case[first], self.tuples[klass[first]], words[first].astype(np.int64), members)
        # enumerate the relevant sub-unit tuples of every row: a box is the representative's
        # moved by V (u - first)
        counts = self.tuples[klass]
        row = np.repeat(np.arange(len(case)), counts)
        moved = np.concatenate([self.moved[k] for k in klass])  # (tuples, axes), row by row
        table = keys[row] + np.tile(moved, moving.shape[1]) * mask[row]
        first, inverse = first_rows(np.column_stack([case[row], table]))
        members = np.bincount(inverse, weights=self.weight[klass][row], minlength=len(first)).astype(np.int64)
        return Groups(case[row][first], np.ones(len(first), dtype=np.int64), words[row][first].astype(np.int64),
                       members)


def _full_row_rank(matrix: np.ndarray) -> bool:
    """Whether the integer ``matrix``'s rows are linearly independent (exact: Gaussian
    elimination over the rationals)."""
    rows = [[Fraction(int(v)) for v in row] for row in matrix]
    rank, cols = 0, len(rows[0]) if rows else 0
    for c in range(cols):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][c] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][c] != 0:
                factor = rows[r][c] / rows[rank][c]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank])]
        rank += 1
    return rank == len(rows)


def _injective(velocity: np.ndarray, units: list[int]) -> bool:
    """Whether ``u -> velocity^T u`` is one-to-one on the sub-unit tuples (levels given by the
    rows of ``velocity``, level l ranging over ``[0, units[l])``)."""
    moving = [lv for lv, n in enumerate(units) if n > 1]  # a level with one sub-unit never varies
    if not moving:
        return True
    size = prod(units)
    if _full_row_rank(velocity[moving]):  # a linear map of full row rank is one-to-one everywhere
        return True
    if size <= ENUMERATION_LIMIT:
        grid = np.stack(np.meshgrid(*(np.arange(n, dtype=np.int64) for n in units), indexing="ij"), -1)
        values = grid.reshape(-1, len(units)) @ velocity
        return len(np.unique(values, axis=0)) == size
    # mixed radix along one axis: each level's step exceeds everything the finer levels span
    for a in range(velocity.shape[1]):
        order = sorted(range(len(units)), key=lambda lv: velocity[lv, a])
        span, ok = 0, True
        for lv in order:
            if velocity[lv, a] <= span:
                ok = False
                break
            span += velocity[lv, a] * (units[lv] - 1)
        if ok:
            return True
    raise NotImplementedError(
        f"cannot tell whether {size} sub-unit tuples hold distinct boxes (velocities {velocity.tolist()})")


# ------------------------------------------------------------------------------------------
class ScheduleProfile:
    """The work list of a compiled mapping: the demand of any step (one computation per case,
    cached) and of any L2 tile.

    ``l1_required_words`` (the largest per-PE footprint of all three tensors in one step: the
    first step's first PE, whose windows are all full) and ``l2_required_words`` (the largest
    data of one level-0 iteration: the least L2 the mapping needs) are known at construction.
    """

    def __init__(self, cm: CompiledMapping, opts: ProfileOptions, l2_capacity_words: int):
        self.cm = cm
        self.opts = opts
        exact = opts.exact
        self.points = loop_points(cm)
        self.loop_classes: list[list[LoopClass]] = (
            every_index_classes(cm) if exact else
            [loop_classes(p, loop.trips) for p, loop in zip(self.points, cm.loops)])
        self.class_starts = [[c.first for c in cls] for cls in self.loop_classes]
        self.strides = loop_strides(cm)
        self.links = NeighbourLinks(cm) if opts.forwarding else None
        self.units = unit_classes(cm, exact)
        if self.links is not None:  # every member's neighbour a translate of the representative's
            self.units = self.links.classes(self.units)
        self.groupings = {role: _Grouping(cm, role, self.units, exact) for role in cm.nest.tensors}
        self.run_steps, self.outer_red = output_loop_structure(cm)
        self.visits = VisitOrder(cm)
        self.tiles = TileSchedule(cm, l2_capacity_words, exact, opts.l2_bypass)
        self.steps_per_tile = self.tiles.steps_per_tile
        self.l2_required_words = self.tiles.l2_required_words
        self.l1_required_words = self._footprint_at_start()
        self._demands: dict[tuple[int, ...], StepDemand] = {}
        self._ports: PortLoads | None = None  # built when a multi-port network first needs it
        self._write_ports: WritePorts | CollectionBus | None = None  # likewise for fixed write ports
        self._starts = [np.array(starts, dtype=np.int64) for starts in self.class_starts]
        self._firsts = self._starts  # a class's representative is its first index
        if opts.l2_bypass:
            self._stream_bypassed()

    def _stream_bypassed(self) -> None:
        """Give the L2 tiles the DRAM words of the operands L2 does not keep: per tile case,
        the words of those operands sent in the steps of one of its tiles (all steps of a case
        send alike; the tile loops are the outermost loops, with the same classes in the tile
        schedule's view), one run per packet."""
        tiles = self.tiles
        k = tiles.tile_loops
        if [i for i, loop in enumerate(self.cm.loops) if loop.level == 0][:k] != list(range(k)):
            raise AssertionError("the L2 tile loops are not the outermost loops of the nest")
        cases = enumerate_cases(self.loop_classes)
        table = self.table(cases.klass)
        n = len(table)
        prefixes = [tuple(row[:k]) for row in cases.klass.tolist()]
        words: dict[tuple[int, ...], dict[str, int]] = {}
        runs: dict[tuple[int, ...], int] = {}
        for role in sorted(self.opts.l2_bypass):
            sent = cases.count * table.sent[role].total(n)
            packets = cases.count * table.sent[role].count(n)
            for case, w, p in zip(prefixes, sent.tolist(), packets.tolist()):
                words.setdefault(case, {r: 0 for r in self.opts.l2_bypass})[role] += w
                runs[case] = runs.get(case, 0) + p
        # the sums are over every tile of the case: one tile's share
        for case, per_role in words.items():
            tiles_in_case = prod(self.loop_classes[i][c].count for i, c in enumerate(case))
            if any(w % tiles_in_case for w in per_role.values()):
                raise AssertionError(f"tile case {case}: the tiles of one case read different bypassed words")
            for role in per_role:
                per_role[role] //= tiles_in_case
            runs[case] //= tiles_in_case
        tiles.stream(words, runs)

    # ---------------------------------------------------------------- structure
    def case(self, indices: list[int]) -> tuple[int, ...]:
        """The class number along each loop of a step given by its loop indices."""
        return tuple(class_of(starts, i) for starts, i in zip(self.class_starts, indices))

    def demand(self, step: int, case: tuple[int, ...] | None = None) -> StepDemand:
        """The demand of ``step`` (``case``: its case, if known). A case not known yet is
        computed together with the other new cases of the next ``BATCH_STEPS`` steps."""
        if case is None:
            case = self.case(step_loop_indices(self.cm, step))
        found = self._demands.get(case)
        if found is None:
            steps = np.arange(step, min(step + BATCH_STEPS, self.cm.steps), dtype=np.int64)
            indices = loop_indices(self.cm, steps)
            table = np.column_stack([np.searchsorted(starts, i, side="right") - 1
                                     for starts, i in zip(self._starts, indices)]).astype(np.int64) \
                if indices else np.zeros((1, 0), dtype=np.int64)
            fresh = [row for row in unique_rows(table)
                     if tuple(row) not in self._demands]
            for row, demand in zip(fresh, self._demands_of(np.array(fresh, dtype=np.int64).reshape(len(fresh), -1))):
                self._demands[tuple(row)] = demand
            found = self._demands[case]
        return found

    # ---------------------------------------------------------------- per case
    def table(self, cases: np.ndarray) -> DemandTable:
        """The demand of ``cases`` (rows of class numbers per loop), computed together, as
        columns; each case is evaluated on its representative step (every loop at its class's
        first index)."""
        cm, opts, cls = self.cm, self.opts, self.units
        nest = cm.nest
        n, loops = cases.shape
        rep = np.zeros((n, loops), dtype=np.int64)
        for i in range(loops):
            rep[:, i] = self._firsts[i][cases[:, i]]
        steps = rep @ np.array(self.strides, dtype=np.int64) if loops else np.zeros(n, dtype=np.int64)
        idx = [rep[:, i:i + 1] for i in range(loops)]
        units = cls.units()
        cur = boxes(cm, idx, units)
        padded = boxes(cm, idx, units, padded=True) if opts.pad_ragged and opts.ports > 1 else None
        act = cur.active
        vol = cur.volume()
        count = cls.count
        prev_idx, has_prev = previous_active(cm, rep, units, self.points)
        prev = boxes(cm, prev_idx, units)
        read = self._read_boxes(idx, prev_idx, units, cur, prev)
        classes = len(cls)
        case_of = np.repeat(np.arange(n), classes)
        class_of_row = np.tile(np.arange(classes), n)
        moving_prev = np.repeat(has_prev, classes)

        def flat(a: np.ndarray) -> np.ndarray:  # (axes, n, classes) -> (n * classes, axes)
            return a.reshape(a.shape[0], -1).T

        sent, delivered = {}, {}
        forwarded = np.zeros(n, dtype=np.int64)
        on_ports: list[tuple] = []  # what the distribution network's ports carry, tensor by tensor
        for role in OPERAND_ROLES:
            reused = role in opts.reused_operands  # else nothing is kept from the previous step
            rcur, rprev = read[role]
            act = rcur.active
            lo, hi = rcur.tensor(nest, role)
            plo, phi = rprev.tensor(nest, role)
            inter = volume(np.maximum(lo, plo), np.minimum(hi, phi))
            new = np.where(act, volume(lo, hi) - np.where(has_prev[:, None] & reused, inter, 0), 0)
            kept = moving_prev & reused
            absent = ~kept[:, None]  # no previous box: a constant marker instead
            keys = np.concatenate([flat(lo), flat(hi), np.where(absent, -1, flat(plo)),
                                   np.where(absent, -1, flat(phi))], axis=1)
            moving = np.column_stack([np.ones_like(kept), np.ones_like(kept), kept, kept])
            fetched = new
            if role == "input" and self.links is not None:
                fwd = self.links.forwarded(lo, hi, plo, phi, np.broadcast_to(has_prev[:, None], act.shape),
                                           reused, prev_idx, steps[:, None], units)
                got = np.where(act, fwd.words, 0)
                fetched = new - got
                forwarded = (count[None, :] * got).sum(axis=1)
                # what the neighbour forwards tells PEs apart, as their own previous box does
                linked = fwd.valid.ravel()[:, None]
                keys = np.concatenate([keys, np.where(linked, flat(fwd.lo), -1), np.where(linked, flat(fwd.hi), -1)],
                                      axis=1)
                moving = np.column_stack([moving, linked[:, 0], linked[:, 0]])
            sel = fetched.ravel() > 0
            sent[role] = self._groups(role, case_of[sel], class_of_row[sel], keys[sel], moving[sel],
                                      fetched.ravel()[sel], opts.multicast)
            delivered[role] = (count[None, :] * new).sum(axis=1)
            on_port = fetched
            if padded is not None:  # the padding of a clipped tile, wherever the tile is sent
                on_port = fetched + np.where(fetched > 0, volume(*padded.tensor(nest, role)) - volume(lo, hi), 0)
            on_ports.append((role, case_of[sel], class_of_row[sel], keys[sel], moving[sel], on_port.ravel()[sel],
                             opts.multicast))
        act = cur.active
        footprint = sum(np.where(act, volume(*cur.tensor(nest, role)), 0) for role in nest.tensors)

        # ---- outputs: a run is the steps over one output tile
        run_start = steps % self.run_steps == 0
        run_end = ((steps + 1) % self.run_steps == 0) | (steps == cm.steps - 1)
        revisit = np.asarray((rep[:, self.outer_red] > 0).any(axis=1)) if self.outer_red else np.zeros(n, dtype=bool)
        last_visit = (rep[:, self.outer_red] == [cm.loops[i].trips - 1 for i in self.outer_red]).all(axis=1) \
            if self.outer_red else np.ones(n, dtype=bool)
        olo, ohi = cur.tensor(nest, "output")
        sel = (act & (run_start & revisit)[:, None]).ravel()
        both = np.ones((int(sel.sum()), 2), dtype=bool)
        rkeys, rwords = np.concatenate([flat(olo), flat(ohi)], axis=1)[sel], volume(olo, ohi).ravel()[sel]
        readback = self._groups("output", case_of[sel], class_of_row[sel], rkeys, both, rwords, True)
        on_ports.append(("output", case_of[sel], class_of_row[sel], rkeys, both, rwords, True))
        # a PE drains if it worked in the run: by the prefix property, iff it works at its start
        start_rep = rep.copy()
        start_rep[:, [i for i in range(loops) if self.strides[i] < self.run_steps]] = 0
        first = boxes(cm, [start_rep[:, i:i + 1] for i in range(loops)], units)
        slo, shi = first.tensor(nest, "output")
        svol = volume(slo, shi)
        worked = first.active & run_end[:, None]
        sel = worked.ravel()
        both = np.ones((int(sel.sum()), 2), dtype=bool)
        dkeys = np.concatenate([flat(slo), flat(shi)], axis=1)[sel]
        drained = self._groups("output", case_of[sel], class_of_row[sel], dkeys, both, svol.ravel()[sel], True)
        drain_pe_words = (count[None, :] * np.where(worked, svol, 0)).sum(axis=1)
        readback_words = readback.total(n)
        tile_pos = steps % self.steps_per_tile
        port_cycles, queue_cycles = self._drain_port_cycles(n, case_of[sel], class_of_row[sel], dkeys,
                                                            svol.ravel()[sel])
        return DemandTable(
            steps=steps, macs=(count[None, :] * vol).sum(axis=1), active_pes=(count[None, :] * act).sum(axis=1),
            max_pe_macs=vol.max(axis=1, initial=0), peak_pe_words=np.asarray(footprint).max(axis=1, initial=0),
            sent=sent, delivered_words=delivered, readback=readback, drained=drained,
            drain_pe_words=drain_pe_words, drains=drain_pe_words > 0,
            drain_partial=(drained.count(n) > 0) & ~last_visit,
            readback_source_steps=self.visits.steps_back(steps, readback_words > 0),
            tile_first=tile_pos == 0, tile_last=tile_pos == self.steps_per_tile - 1,
            reads_back=run_start & revisit, run_end=run_end, rep=rep,
            busiest_port_words=self._busiest_port_words(n, on_ports),
            drain_port_cycles=port_cycles, drain_queue_cycles=queue_cycles,
            **self._used_extent(act),
            forwarded=forwarded,
        )

    def _read_boxes(self, idx: list[np.ndarray], prev_idx: list[np.ndarray], units: list[np.ndarray],
                    cur: Boxes, prev: Boxes) -> dict[str, tuple[Boxes, Boxes]]:
        """Per operand, the boxes the PEs are sent (now, at their previous step): ``cur`` and
        ``prev``, except the input with ``pad_ragged``, whose boxes keep a ragged output tile's
        padded positions (STONNE reads the whole input window of an output tile from SRAM,
        checking only the filter and channel folds' ends)."""
        read = {role: (cur, prev) for role in OPERAND_ROLES}
        if self.opts.pad_ragged:
            keep = output_dims(self.cm.nest)
            read["input"] = (boxes(self.cm, idx, units, padded=True, pad_dims=keep),
                             boxes(self.cm, prev_idx, units, padded=True, pad_dims=keep))
        return read

    def _demands_of(self, cases: np.ndarray) -> list[StepDemand]:
        """The demands of ``cases`` (rows of class numbers per loop) as records, with the
        networks' busy cycles at the options' bandwidths: a step's operand words share the
        distribution network (at least its busiest port's words over the port's width), its
        drains the reduction network's width."""
        opts = self.opts
        t = self.table(cases)
        n = len(t)
        bw, ebw = opts.noc_bandwidth_words_per_cycle, opts.egress_bandwidth_words_per_cycle
        words = t.sent["input"].total(n) + t.sent["weight"].total(n) + t.readback.total(n)
        ingress = np.maximum(np.ceil(words / bw), np.ceil(t.busiest_port_words / opts.port_bandwidth_words_per_cycle))
        columns = {
            "macs": t.macs, "active_pes": t.active_pes, "max_pe_macs": t.max_pe_macs,
            "drain_groups": t.drained.count(n), "drain_words": t.drained.total(n), "drain_pe_words": t.drain_pe_words,
            "drain_max_group": t.drained.max_members(n),
            "reduction_serial_cycles": t.egress_cycles(ebw),
            "drain_partial": t.drain_partial, "tile_first": t.tile_first, "tile_last": t.tile_last,
            "ingress_cycles": ingress.astype(np.int64), "forwarded_words": t.forwarded,
            "drain_queue_cycles": t.drain_queue_cycles, "used_rows": t.used_rows, "used_cols": t.used_cols,
        }
        plain = {k: v.tolist() for k, v in columns.items()}
        sets_of = {
            name: [a.tolist() for a in (g.count(n), g.total(n), dest)]
            for name, g, dest in (("input", t.sent["input"], t.delivered_words["input"]),
                                  ("weight", t.sent["weight"], t.delivered_words["weight"]),
                                  ("readback", t.readback, t.readback.total(n)))}
        out = []
        for i in range(n):
            demand = StepDemand(
                input=TransferSet(*(a[i] for a in sets_of["input"])),
                weight=TransferSet(*(a[i] for a in sets_of["weight"])),
                readback=TransferSet(*(a[i] for a in sets_of["readback"])),
                **{k: v[i] for k, v in plain.items()},
            )
            if opts.detail:
                idx = [t.rep[i:i + 1, j:j + 1] for j in range(t.rep.shape[1])]
                prev_idx, has_prev = previous_active(self.cm, t.rep[i:i + 1], self.units.units(), self.points)
                demand = self._with_detail(demand, idx, prev_idx, bool(has_prev[0]), bool(t.reads_back[i]),
                                           bool(t.run_end[i]), int(t.steps[i]))
            out.append(demand)
        return out

    def _busiest_port_words(self, n: int, on_ports: list[tuple]) -> np.ndarray:
        """Per case, the words on the distribution network's busiest root port (0 with one
        port): a multicast group's words once on each port whose block holds one of its PEs."""
        opts = self.opts
        if opts.ports == 1:
            return np.zeros(n, dtype=np.int64)
        if self._ports is None:
            self._ports = PortLoads(self.cm, self.units, opts.port_block_pes, opts.ports)
        loads = np.zeros((n, opts.ports), dtype=np.int64)
        for role, case, klass, keys, moving, words_each, multicast in on_ports:
            self._ports.add(loads, self.groupings[role].velocity, case, klass, keys, moving, words_each, multicast)
        return loads.max(axis=1)

    def _used_extent(self, active: np.ndarray) -> dict[str, np.ndarray]:
        """Per case (rows of ``active``, cases x PE classes): rows and columns of the array up to
        its farthest used PE (PE ``p`` at row ``p % rows``, column ``p // rows``); zeros unless
        ``fill_used``."""
        n = len(active)
        if not self.opts.fill_used:
            return {"used_rows": np.zeros(n, dtype=np.int64), "used_cols": np.zeros(n, dtype=np.int64)}
        rows = self.opts.array_rows
        _, pes = class_members(self.cm, self.units)
        far_row = np.array([int((p % rows).max(initial=-1)) + 1 for p in pes], dtype=np.int64)
        far_col = np.array([int((p // rows).max(initial=-1)) + 1 for p in pes], dtype=np.int64)
        return {"used_rows": np.where(active, far_row[None, :], 0).max(axis=1, initial=0),
                "used_cols": np.where(active, far_col[None, :], 0).max(axis=1, initial=0)}

    def _drain_port_cycles(self, n: int, case: np.ndarray, klass: np.ndarray, keys: np.ndarray,
                           words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per case, the drains' cycles through the fixed write ports (0 without them) and the
        further cycles of the write queue behind a collection bus (0 without one)."""
        opts = self.opts
        velocity = self.groupings["output"].velocity
        none = np.zeros(n, dtype=np.int64)
        if opts.write_ports == 0:
            return none, none
        if opts.write_bus:
            if not isinstance(self._write_ports, CollectionBus):
                self._write_ports = CollectionBus(self.cm, self.units, opts.write_ports, self.cm.num_pes)
            return self._write_ports.drain(n, velocity, case, klass, keys, words)
        if not isinstance(self._write_ports, WritePorts):
            self._write_ports = WritePorts(self.cm, self.units, opts.write_ports, opts.array_rows, opts.array_cols,
                                           opts.wavefront)
        return self._write_ports.drain_cycles(n, velocity, case, klass, keys, words), none

    def _groups(self, role: str, case: np.ndarray, klass: np.ndarray, keys: np.ndarray, moving: np.ndarray,
                words: np.ndarray, multicast: bool) -> Groups:
        if not multicast:  # one packet per PE
            ones = np.ones(len(case), dtype=np.int64)
            return Groups(case, self.units.count[klass], words.astype(np.int64), ones)
        return self.groupings[role].groups(case, klass, keys, moving, words)

    def _footprint_at_start(self) -> int:
        """Words of all three tensors in the first PE's L1 at the first step (every window
        full, hence the largest footprint of any PE at any step)."""
        cm = self.cm
        zero = [np.zeros((1, 1), dtype=np.int64)] * len(cm.loops)
        first = boxes(cm, zero, [np.zeros((1, 1), dtype=np.int64)] * len(cm.levels))
        return int(sum(volume(*first.tensor(cm.nest, role))[0, 0] for role in cm.nest.tensors))

    # ---------------------------------------------------------------- per-PE detail
    def _with_detail(self, demand: StepDemand, idx: list[np.ndarray], prev_idx: list[np.ndarray],
                     prev_valid: bool, reads_back: bool, drains: bool, step: int) -> StepDemand:
        """The demand with per-PE MACs and per-packet word lists, computed PE by PE (apart from
        the class sums, which they must reproduce; forwarded words too)."""
        cm, opts, nest = self.cm, self.opts, self.cm.nest
        cls = self.units
        pes, units = _member_pes(cm, cls)
        # each member PE at the step and at its class's previous step
        member_prev = [np.repeat(p, cls.count, axis=1) for p in prev_idx]
        cur = boxes(cm, idx, [u[None, :] for u in units])
        padded = boxes(cm, idx, [u[None, :] for u in units], padded=True) if opts.pad_ragged else None
        prev = boxes(cm, member_prev, [u[None, :] for u in units])
        read = self._read_boxes(idx, member_prev, [u[None, :] for u in units], cur, prev)
        pe_macs = np.zeros(cm.used_pes, dtype=np.int64)
        pe_macs[pes] = cur.volume()[0]
        packets: dict[str, tuple[int, ...]] = {}
        port = pes // opts.port_block_pes
        port_load = np.zeros(opts.ports, dtype=np.int64)  # counted PE by PE
        forwarded = 0
        for role in OPERAND_ROLES:
            kept = prev_valid and role in opts.reused_operands
            rcur, rprev = read[role]
            lo, hi = (a[:, 0, :] for a in rcur.tensor(nest, role))
            plo, phi = (a[:, 0, :] for a in rprev.tensor(nest, role))
            inter = volume(np.maximum(lo, plo), np.minimum(hi, phi)) if kept else 0
            new = np.where(rcur.active[0], volume(lo, hi) - inter, 0)
            keys = np.concatenate([lo.T, hi.T] + ([plo.T, phi.T] if kept else []), axis=1)
            if role == "input" and self.links is not None:  # PE by PE: each member's own neighbour
                fwd = self.links.forwarded(lo, hi, plo, phi, np.full(lo.shape[1:], prev_valid),
                                           role in opts.reused_operands, [p[0] for p in member_prev], np.array(step), units)
                got = np.where(rcur.active[0], fwd.words, 0)
                new = new - got
                forwarded = int(got.sum())
                keys = np.concatenate([keys, np.where(fwd.valid[:, None], fwd.lo.T, -1),
                                       np.where(fwd.valid[:, None], fwd.hi.T, -1)], axis=1)
            packets[role] = _packet_words(keys, new, new > 0, opts.multicast)
            on_port = new
            if padded is not None:  # a clipped tile's padding, as the class table counts it
                pad_lo, pad_hi = (a[:, 0, :] for a in padded.tensor(nest, role))
                on_port = new + np.where(new > 0, volume(pad_lo, pad_hi) - volume(lo, hi), 0)
            _add_port_words(port_load, keys, on_port, new > 0, port, opts.multicast)
        olo, ohi = (a[:, 0, :] for a in cur.tensor(nest, "output"))
        readback: tuple[int, ...] = ()
        if reads_back:
            okeys = np.concatenate([olo.T, ohi.T], axis=1)
            readback = _packet_words(okeys, volume(olo, ohi), cur.active[0], True)
            _add_port_words(port_load, okeys, volume(olo, ohi), cur.active[0], port, True)
        drain_words: tuple[int, ...] = ()
        if drains:
            start = [i.copy() for i in idx]
            for i in range(len(cm.loops)):
                if self.strides[i] < self.run_steps:
                    start[i] = np.zeros_like(start[i])
            first = boxes(cm, start, [u[None, :] for u in units])
            slo, shi = (a[:, 0, :] for a in first.tensor(nest, "output"))
            drain_words = _packet_words(np.concatenate([slo.T, shi.T], axis=1), volume(slo, shi), first.active[0], True)
        sets = {role: TransferSet(ts.transfers, ts.words, ts.dest_words, packets[role])
                for role, ts in (("input", demand.input), ("weight", demand.weight))}
        detailed = replace(
            demand, input=sets["input"], weight=sets["weight"],
            readback=TransferSet(demand.readback.transfers, demand.readback.words, demand.readback.dest_words,
                                 readback),
            pe_macs=tuple(pe_macs.tolist()), drain_group_words=drain_words,
        )
        _check_detail(detailed, int(pe_macs.sum()), forwarded)
        words = demand.input.words + demand.weight.words + demand.readback.words
        ingress = ceil(words / opts.noc_bandwidth_words_per_cycle)
        if opts.ports > 1:
            ingress = max(ingress, ceil(int(port_load.max()) / opts.port_bandwidth_words_per_cycle))
        if ingress != demand.ingress_cycles:
            raise AssertionError(f"per-PE port loads {port_load.tolist()} give {ingress} ingress cycles, "
                                 f"the classes {demand.ingress_cycles}")
        return detailed


def _member_pes(cm: CompiledMapping, cls: UnitClasses) -> tuple[np.ndarray, list[np.ndarray]]:
    """Every member PE (class by class) and its sub-unit index at each level."""
    per_level: list[list[np.ndarray]] = [[] for _ in cm.levels]
    for c in range(len(cls)):
        ranges = [np.arange(cls.first[c, lv], cls.first[c, lv] + cls.size[c, lv]) for lv in range(len(cm.levels))]
        grid = np.meshgrid(*ranges, indexing="ij")
        for lv, g in enumerate(grid):
            per_level[lv].append(g.ravel())
    units = [np.concatenate(u) if u else np.zeros(0, dtype=np.int64) for u in per_level]
    return pe_index(cm, units), units


def _packet_words(keys: np.ndarray, words: np.ndarray, sel: np.ndarray, multicast: bool) -> tuple[int, ...]:
    """Words of each packet: one per distinct key among the selected PEs (multicast), else one
    per selected PE."""
    idx = np.nonzero(sel)[0]
    if not multicast or len(idx) == 0:
        return tuple(int(w) for w in words[idx])
    _, first = np.unique(keys[idx], axis=0, return_index=True)
    return tuple(int(w) for w in words[idx][np.sort(first)])


def _add_port_words(load: np.ndarray, keys: np.ndarray, words: np.ndarray, sel: np.ndarray, port: np.ndarray,
                    multicast: bool) -> None:
    """Add the selected PEs' words to their ports' ``load``: a multicast group (PEs of one
    key) once per port it reaches, else every PE's words."""
    idx = np.nonzero(sel)[0]
    if multicast and len(idx):
        _, first = np.unique(np.column_stack([keys[idx], port[idx]]), axis=0, return_index=True)
        idx = idx[first]
    np.add.at(load, port[idx], words[idx])


def _check_detail(d: StepDemand, macs: int, forwarded: int) -> None:
    """The per-PE lists must add up to the class sums (two computations of one step)."""
    problems = []
    if macs != d.macs:
        problems.append(f"per-PE MACs {macs} != {d.macs}")
    if forwarded != d.forwarded_words:
        problems.append(f"per-PE forwarded words {forwarded} != {d.forwarded_words}")
    for name, ts in (("input", d.input), ("weight", d.weight), ("read-back", d.readback)):
        if len(ts.packet_words) != ts.transfers or sum(ts.packet_words) != ts.words:
            problems.append(f"{name} packets {len(ts.packet_words)}/{sum(ts.packet_words)} words != "
                            f"{ts.transfers}/{ts.words}")
    if len(d.drain_group_words) != d.drain_groups or sum(d.drain_group_words) != d.drain_words:
        problems.append(f"drain groups {len(d.drain_group_words)}/{sum(d.drain_group_words)} words != "
                        f"{d.drain_groups}/{d.drain_words}")
    if problems:
        raise AssertionError("per-PE detail disagrees with the class sums: " + "; ".join(problems))
