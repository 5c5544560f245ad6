"""What every step of a tile schedule moves and computes: the simulator's work list.

For each step this derives the MACs and compute cycles, the operand words the distribution
network must deliver (only what is not already in a PE's L1; one transfer per multicast group),
the partial-sum read-backs at the start of a revisited output tile, and the output drains
(spatial reduction groups) at the end of an output tile. For each L2 tile (the data of the
innermost level-0 loops that fit L2) it derives the DRAM traffic.

Cost does not grow with the number of steps or of PEs (see :mod:`accelsim.mapping.geometry`):
all steps of one *case* (one class of indices per loop) have the same demand, computed once,
and within a step the PEs of one *class* (one interval of sub-units per cluster level) are
translates of each other, so a demand is computed on one representative per class and
weighted by the class size. Multicast and reduction groups (PEs holding the same tensor box)
are counted from how far each tensor's box moves per sub-unit at each level: where distinct
sub-units always hold distinct boxes the count is a product of interval sizes, elsewhere the
representatives' boxes are enumerated. Tile demands are computed per L2 tile index on demand.

Counting rules (also in the README):
- an idle PE keeps its L1 contents; a tile already resident is not fetched again, only the part
  of the new tile outside the old one is;
- a PE drains its output tile at the end of every run of steps over that tile in which it did
  any work; PEs draining the same tile together are reduced spatially first;
- an output tile revisited later (a reduction loop outside its tile loops) is spilled as partial
  sums to L2 and read back at the start of the next visit; likewise at L2 to DRAM.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product
from math import ceil, prod

import numpy as np

from accelsim.mapping.compile import CompiledMapping, Level
from accelsim.mapping.geometry import (
    LoopClass,
    UnitClasses,
    boxes,
    every_index_classes,
    last_active,
    level_intervals,
    loop_classes,
    loop_points,
    loop_indices,
    loop_strides,
    pe_index,
    previous_active,
    step_loop_indices,
    unit_classes,
    unit_velocity,
    volume,
)
from accelsim.sim.ports import PortLoads
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


@dataclass(frozen=True)
class TileDemand:
    """DRAM traffic of one L2 tile."""

    read_words: dict[str, int]  # input, weight, output (output = partial sums read back)
    read_runs: dict[str, int]  # contiguous runs in DRAM (in each tensor's layout)
    write_words: int  # output words written back at the end of the tile (0 if kept)
    write_runs: int
    # each tensor's box in the tile: (lo, hi) index per tensor axis, inclusive (empty: no work)
    boxes: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict, compare=False)
    # the tile whose write-back put the partial sums read back here into DRAM (-1: none read)
    partial_sums_tile: int = -1


@dataclass(frozen=True)
class ProfileOptions:
    """How data moves: multicast or one packet per PE, and the bandwidths (words/cycle).
    ``detail`` keeps per-PE and per-packet lists for the per-PE engine; ``exact`` treats every
    loop index and every sub-unit as its own class (for mappings whose windows overlap or leave
    gaps, ``--unchecked``).

    A step's operand words (every tensor, read-backs included) share the distribution
    network: it takes ``ceil(distinct words / noc_bandwidth)`` cycles (the bandwidth capped by
    L2's reads), and with ``ports`` > 1 at least as many as its busiest port needs: port p
    feeds PEs ``[p * port_block_pes, (p + 1) * port_block_pes)`` at
    ``port_bandwidth_words_per_cycle``, and a multicast group costs its words once on each port
    that feeds one of its PEs. A step's drains share the reduction network's width:
    ``ceil(words after reduction / egress_bandwidth)``."""

    multicast: bool
    noc_bandwidth_words_per_cycle: float
    egress_bandwidth_words_per_cycle: float
    detail: bool = False
    exact: bool = False
    ports: int = 1
    port_block_pes: int = 1
    port_bandwidth_words_per_cycle: float = 1.0


# ------------------------------------------------------------------------------------------
def output_loop_structure(cm: CompiledMapping) -> tuple[int, list[int]]:
    """(steps per output run, indices of reduction loops outside the innermost output loop)."""
    flags = cm.loop_kind_flags()
    out_loops = [i for i, (out, _) in enumerate(flags) if out]
    innermost = max(out_loops) if out_loops else -1
    run_steps = prod(loop.trips for loop in cm.loops[innermost + 1:])
    outer_red = [i for i in range(innermost) if flags[i][1]]
    return run_steps, outer_red


class VisitOrder:
    """Which earlier step wrote the partial sums that a revisit of an output tile reads back
    (the read-after-write dependency of a read-back)."""

    def __init__(self, cm: CompiledMapping):
        self.run_steps, outer_red = output_loop_structure(cm)
        strides = loop_strides(cm)
        # per outer reduction loop, innermost first: (stride, trips, steps back to the
        # previous visit when this is the innermost such loop past its first iteration)
        self.loops = []
        for k, i in enumerate(outer_red):
            inner = sum((cm.loops[o].trips - 1) * strides[o] for o in outer_red[k + 1:])
            self.loops.append((strides[i], cm.loops[i].trips, strides[i] - inner))
        self.loops.reverse()

    def previous_end(self, step: int) -> int:
        """The last step of the previous visit to the output tile that ``step`` works on (the
        step whose drain put the partial sums this visit reads back in place), or -1 on a
        first visit. The previous visit has the same output loop indices and the outer
        reduction loops' indices one earlier in their own (lexicographic) order."""
        for stride, trips, back in self.loops:
            if (step // stride) % trips:
                return step - step % self.run_steps - back + self.run_steps - 1
        return -1


# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Groups:
    """Transfers of one kind in a batch of cases, as blocks of identical groups: block ``i``
    is ``n[i]`` groups of ``words[i]`` words, each of ``members[i]`` PEs, in case ``case[i]``."""

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
        out = np.zeros(cases, dtype=np.int64)
        np.maximum.at(out, self.case, self.members)
        return out


_NO_GROUPS = _Groups(*(np.zeros(0, dtype=np.int64),) * 4)


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
               words: np.ndarray) -> _Groups:
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
            table = np.column_stack([case, norm, cls.interval[klass][:, self.relevant]])
            _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
            members = np.bincount(inverse.ravel(), weights=self.weight[klass], minlength=len(first)).astype(np.int64)
            return _Groups(case[first], self.tuples[klass[first]], words[first].astype(np.int64), members)
        # enumerate the relevant sub-unit tuples of every row: a box is the representative's
        # moved by V (u - first)
        counts = self.tuples[klass]
        row = np.repeat(np.arange(len(case)), counts)
        moved = np.concatenate([self.moved[k] for k in klass])  # (tuples, axes), row by row
        table = keys[row] + np.tile(moved, moving.shape[1]) * mask[row]
        table = np.column_stack([case[row], table])
        _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
        members = np.bincount(inverse.ravel(), weights=self.weight[klass][row], minlength=len(first)).astype(np.int64)
        return _Groups(case[row][first], np.ones(len(first), dtype=np.int64), words[row][first].astype(np.int64),
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
        self.units = unit_classes(cm, exact)
        self.groupings = {role: _Grouping(cm, role, self.units, exact) for role in cm.nest.tensors}
        self.run_steps, self.outer_red = output_loop_structure(cm)
        self.visits = VisitOrder(cm)
        self.tiles = TileSchedule(cm, l2_capacity_words, exact)
        self.steps_per_tile = self.tiles.steps_per_tile
        self.l2_required_words = self.tiles.l2_required_words
        self.l1_required_words = self._footprint_at_start()
        self._demands: dict[tuple[int, ...], StepDemand] = {}
        self._ports: PortLoads | None = None  # built when a multi-port network first needs it
        self._starts = [np.array(starts, dtype=np.int64) for starts in self.class_starts]
        self._firsts = self._starts  # a class's representative is its first index

    # ---------------------------------------------------------------- structure
    def case(self, indices: list[int]) -> tuple[int, ...]:
        """The class number along each loop of a step given by its loop indices."""
        return tuple(_class_of(starts, i) for starts, i in zip(self.class_starts, indices))

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
            fresh = [row for row in np.unique(table, axis=0).tolist() if tuple(row) not in self._demands]
            for row, demand in zip(fresh, self._demands_of(np.array(fresh, dtype=np.int64).reshape(len(fresh), -1))):
                self._demands[tuple(row)] = demand
            found = self._demands[case]
        return found

    # ---------------------------------------------------------------- per case
    def _demands_of(self, cases: np.ndarray) -> list[StepDemand]:
        """The demands of ``cases`` (rows of class numbers per loop), computed together."""
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
        act = cur.active
        vol = cur.volume()
        count = cls.count
        prev_idx, has_prev = previous_active(cm, rep, units, self.points)
        prev = boxes(cm, prev_idx, units)
        classes = len(cls)
        case_of = np.repeat(np.arange(n), classes)
        class_of = np.tile(np.arange(classes), n)
        moving_prev = np.repeat(has_prev, classes)

        def flat(a: np.ndarray) -> np.ndarray:  # (axes, n, classes) -> (n * classes, axes)
            return a.reshape(a.shape[0], -1).T

        sets = {}
        on_ports: list[tuple] = []  # what the distribution network's ports carry, tensor by tensor
        for role in OPERAND_ROLES:
            lo, hi = cur.tensor(nest, role)
            plo, phi = prev.tensor(nest, role)
            inter = volume(np.maximum(lo, plo), np.minimum(hi, phi))
            new = np.where(act, volume(lo, hi) - np.where(has_prev[:, None], inter, 0), 0)
            absent = ~moving_prev[:, None]  # no previous box: a constant marker instead
            keys = np.concatenate([flat(lo), flat(hi), np.where(absent, -1, flat(plo)),
                                   np.where(absent, -1, flat(phi))], axis=1)
            moving = np.column_stack([np.ones_like(moving_prev), np.ones_like(moving_prev), moving_prev, moving_prev])
            sel = new.ravel() > 0
            groups = self._groups(role, case_of[sel], class_of[sel], keys[sel], moving[sel], new.ravel()[sel],
                                  opts.multicast)
            sets[role] = (groups, (count[None, :] * new).sum(axis=1))
            on_ports.append((role, case_of[sel], class_of[sel], keys[sel], moving[sel], new.ravel()[sel],
                             opts.multicast))

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
        readback = self._groups("output", case_of[sel], class_of[sel], rkeys, both, rwords, True)
        on_ports.append(("output", case_of[sel], class_of[sel], rkeys, both, rwords, True))
        # a PE drains if it worked in the run: by the prefix property, iff it works at its start
        start_rep = rep.copy()
        start_rep[:, [i for i in range(loops) if self.strides[i] < self.run_steps]] = 0
        first = boxes(cm, [start_rep[:, i:i + 1] for i in range(loops)], units)
        slo, shi = first.tensor(nest, "output")
        svol = volume(slo, shi)
        worked = first.active & run_end[:, None]
        sel = worked.ravel()
        both = np.ones((int(sel.sum()), 2), dtype=bool)
        drain = self._groups("output", case_of[sel], class_of[sel],
                             np.concatenate([flat(slo), flat(shi)], axis=1)[sel], both, svol.ravel()[sel], True)
        drain_pe_words = (count[None, :] * np.where(worked, svol, 0)).sum(axis=1)

        ebw = opts.egress_bandwidth_words_per_cycle
        columns = {
            "macs": (count[None, :] * vol).sum(axis=1),
            "active_pes": (count[None, :] * act).sum(axis=1),
            "max_pe_macs": vol.max(axis=1, initial=0),
            "drain_groups": drain.count(n), "drain_words": drain.total(n), "drain_pe_words": drain_pe_words,
            "drain_max_group": drain.max_members(n),
            "reduction_serial_cycles": np.ceil(drain.total(n) / ebw).astype(np.int64),
            "readback": (readback.count(n), readback.total(n), readback.total(n)),
            "ingress_cycles": self._ingress_cycles(
                n, readback.total(n) + sum(groups.total(n) for groups, _ in sets.values()), on_ports),
        }
        for role, (groups, dest) in sets.items():
            columns[role] = (groups.count(n), groups.total(n), dest)
        plain = {k: v.tolist() for k, v in columns.items() if not isinstance(v, tuple)}
        sets_of = {k: [a.tolist() for a in v] for k, v in columns.items() if isinstance(v, tuple)}
        tile_pos = (steps % self.steps_per_tile).tolist()
        out = []
        for i in range(n):
            demand = StepDemand(
                macs=plain["macs"][i], active_pes=plain["active_pes"][i], max_pe_macs=plain["max_pe_macs"][i],
                input=TransferSet(*(a[i] for a in sets_of["input"])),
                weight=TransferSet(*(a[i] for a in sets_of["weight"])),
                readback=TransferSet(*(a[i] for a in sets_of["readback"])),
                drain_groups=plain["drain_groups"][i], drain_words=plain["drain_words"][i],
                drain_pe_words=plain["drain_pe_words"][i], drain_max_group=plain["drain_max_group"][i],
                drain_partial=plain["drain_groups"][i] > 0 and not bool(last_visit[i]),
                reduction_serial_cycles=plain["reduction_serial_cycles"][i],
                tile_first=tile_pos[i] == 0, tile_last=tile_pos[i] == self.steps_per_tile - 1,
                ingress_cycles=plain["ingress_cycles"][i],
            )
            if opts.detail:
                demand = self._with_detail(demand, [r[i:i + 1] for r in idx], [p[i:i + 1] for p in prev_idx],
                                           bool(has_prev[i]), bool(run_start[i] and revisit[i]), bool(run_end[i]))
            out.append(demand)
        return out

    def _ingress_cycles(self, n: int, words: np.ndarray, on_ports: list[tuple]) -> np.ndarray:
        """Per case, the distribution network's busy cycles: the words over the (L2-capped)
        bandwidth, and with several ports at least the busiest port's words over its width."""
        opts = self.opts
        cycles = np.ceil(words / opts.noc_bandwidth_words_per_cycle).astype(np.int64)
        if opts.ports == 1:
            return cycles
        if self._ports is None:
            self._ports = PortLoads(self.cm, self.units, opts.port_block_pes, opts.ports)
        loads = np.zeros((n, opts.ports), dtype=np.int64)
        for role, case, klass, keys, moving, words_each, multicast in on_ports:
            self._ports.add(loads, self.groupings[role].velocity, case, klass, keys, moving, words_each, multicast)
        busiest = np.ceil(loads.max(axis=1) / opts.port_bandwidth_words_per_cycle).astype(np.int64)
        return np.maximum(cycles, busiest)

    def _groups(self, role: str, case: np.ndarray, klass: np.ndarray, keys: np.ndarray, moving: np.ndarray,
                words: np.ndarray, multicast: bool) -> _Groups:
        if not multicast:  # one packet per PE
            ones = np.ones(len(case), dtype=np.int64)
            return _Groups(case, self.units.count[klass], words.astype(np.int64), ones)
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
                     prev_valid: bool, reads_back: bool, drains: bool) -> StepDemand:
        """The demand with per-PE MACs and per-packet word lists, computed PE by PE (apart from
        the class sums, which they must reproduce)."""
        cm, opts, nest = self.cm, self.opts, self.cm.nest
        cls = self.units
        pes, units = _member_pes(cm, cls)
        # each member PE at the step and at its class's previous step
        cur = boxes(cm, idx, [u[None, :] for u in units])
        prev = boxes(cm, [np.repeat(p, cls.count, axis=1) for p in prev_idx], [u[None, :] for u in units])
        pe_macs = np.zeros(cm.used_pes, dtype=np.int64)
        pe_macs[pes] = cur.volume()[0]
        packets: dict[str, tuple[int, ...]] = {}
        port = pes // opts.port_block_pes
        port_load = np.zeros(opts.ports, dtype=np.int64)  # counted PE by PE
        for role in OPERAND_ROLES:
            lo, hi = (a[:, 0, :] for a in cur.tensor(nest, role))
            plo, phi = (a[:, 0, :] for a in prev.tensor(nest, role))
            inter = volume(np.maximum(lo, plo), np.minimum(hi, phi)) if prev_valid else 0
            new = np.where(cur.active[0], volume(lo, hi) - inter, 0)
            keys = np.concatenate([lo.T, hi.T] + ([plo.T, phi.T] if prev_valid else []), axis=1)
            packets[role] = _packet_words(keys, new, new > 0, opts.multicast)
            _add_port_words(port_load, keys, new, new > 0, port, opts.multicast)
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
        detailed = StepDemand(
            demand.macs, demand.active_pes, demand.max_pe_macs, sets["input"], sets["weight"],
            TransferSet(demand.readback.transfers, demand.readback.words, demand.readback.dest_words, readback),
            demand.drain_groups, demand.drain_words, demand.drain_pe_words, demand.drain_max_group,
            demand.drain_partial, demand.reduction_serial_cycles, demand.tile_first, demand.tile_last,
            demand.ingress_cycles, tuple(pe_macs.tolist()), drain_words,
        )
        _check_detail(detailed, int(pe_macs.sum()))
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


def _check_detail(d: StepDemand, macs: int) -> None:
    """The per-PE lists must add up to the class sums (two computations of one step)."""
    problems = []
    if macs != d.macs:
        problems.append(f"per-PE MACs {macs} != {d.macs}")
    for name, ts in (("input", d.input), ("weight", d.weight), ("read-back", d.readback)):
        if len(ts.packet_words) != ts.transfers or sum(ts.packet_words) != ts.words:
            problems.append(f"{name} packets {len(ts.packet_words)}/{sum(ts.packet_words)} words != "
                            f"{ts.transfers}/{ts.words}")
    if len(d.drain_group_words) != d.drain_groups or sum(d.drain_group_words) != d.drain_words:
        problems.append(f"drain groups {len(d.drain_group_words)}/{sum(d.drain_group_words)} words != "
                        f"{d.drain_groups}/{d.drain_words}")
    if problems:
        raise AssertionError("per-PE detail disagrees with the class sums: " + "; ".join(problems))


def _class_of(starts: list[int], index: int) -> int:
    """Number of the class (given by its first indices, ascending) holding ``index``."""
    return bisect_right(starts, index) - 1


# ------------------------------------------------------------------------------------------
def _top_level_mapping(cm: CompiledMapping) -> CompiledMapping:
    """The schedule seen from L2: level 0 only, one 'PE' per top-level sub-unit."""
    l0 = cm.levels[0]
    return CompiledMapping(
        cm.layer, cm.nest, (Level(l0.units, 1, l0.directives),),
        tuple(loop for loop in cm.loops if loop.level == 0), l0.units, cm.source,
    )


def _runs(extents: list[int], full: tuple[int, ...], layout: tuple[int, ...]) -> int:
    """Contiguous runs a box of ``extents`` forms in a tensor of ``full`` sizes stored with
    ``layout`` (axes outermost first, last one contiguous)."""
    runs = 1
    contiguous = True
    for axis in reversed(layout):
        if contiguous:
            contiguous = extents[axis] == full[axis]
            continue
        runs *= extents[axis]
    return runs


def _delta_runs(lo: list[int], hi: list[int], prev: tuple[list[int], list[int]] | None,
                full: tuple[int, ...], layout: tuple[int, ...]) -> int:
    """Runs of the part of box (lo, hi) outside box ``prev``: exact when the boxes differ
    along one axis (a sliding or stepping tile), else the whole new box."""
    ext = [b - a + 1 for a, b in zip(lo, hi)]
    if prev is None:
        return _runs(ext, full, layout)
    plo, phi = prev
    differ = [a for a in range(len(ext)) if lo[a] != plo[a] or hi[a] != phi[a]]
    if len(differ) == 1:
        a = differ[0]
        ext[a] -= max(0, min(hi[a], phi[a]) - max(lo[a], plo[a]) + 1)
    return _runs(ext, full, layout)


class TileSchedule:
    """The L2 tiles of a mapping and the DRAM traffic of each, by tile index.

    L2 holds the union of the data of as many innermost level-0 loops as fit
    ``l2_capacity_words`` (a double-buffered L2 offers half its size); the level-0 loops outside
    them (the *tile loops*) step from one L2 tile to the next. The first tile is the largest
    (windows only shrink at ragged ends), so it decides how many loops fit. ``traffic`` gives a
    tile's counts (computed once per case of the tile loops), ``demand`` also its boxes.
    """

    CACHE_LIMIT = 4096

    def __init__(self, cm: CompiledMapping, l2_capacity_words: int, exact: bool = False):
        self.cm = cm
        self.top = _top_level_mapping(cm)
        top = self.top
        self.points = loop_points(top)
        # the level-0 sub-units that bound a tile: the first and last of every interval of
        # sub-units that behave alike (indices only grow with the sub-unit)
        edges = sorted({u for first, size in level_intervals(top)[0] for u in (first, first + size - 1)})
        self.edge_units = np.array(edges, dtype=np.int64)[None, :]
        loops0 = len(top.loops)
        # the smallest L2 tile is one level-0 iteration; a tile of the first k loops' iterations
        self.l2_required_words = self._union_words(loops0)
        k = next((k for k in range(loops0) if self._union_words(k) <= l2_capacity_words), loops0)
        self.tile_loops = k
        self.view = CompiledMapping(cm.layer, cm.nest, top.levels, top.loops[:k], top.num_pes, cm.source)
        self.count = self.view.steps
        self.steps_per_tile = cm.steps_per_top_step * prod(loop.trips for loop in top.loops[k:])
        self.run_steps, self.outer_red = output_loop_structure(self.view)
        self.visits = VisitOrder(self.view)
        self.full = {role: cm.nest.extents(role) for role in cm.nest.tensors}
        self.view_points = loop_points(self.view)
        self.view_classes = every_index_classes(self.view) if exact else [
            loop_classes(p, loop.trips) for p, loop in zip(self.view_points, self.view.loops)]
        self.view_class_starts = [[c.first for c in cls] for cls in self.view_classes]
        self.view_strides = loop_strides(self.view)
        self._cache: dict[int, TileDemand] = {}
        self._traffic: dict[tuple[int, ...], tuple[TileDemand, int]] = {}

    def _union_words(self, k: int) -> int:
        """Words of all tensors in the first tile when the first ``k`` level-0 loops are tile loops."""
        box = self._union_box([0] * k, k)
        return sum(prod(max(0, b - a + 1) for a, b in zip(lo, hi)) for lo, hi in box.values()) if box else 0

    def _union_box(self, tile_idx: list[int], k: int) -> dict[str, tuple[list[int], list[int]]] | None:
        """Per tensor, the union box of every level-0 sub-unit over the inner level-0 loops of
        the tile whose tile-loop indices are ``tile_idx``; None if no sub-unit works in it.
        The lowest corner is at the inner loops' first iteration and the first sub-unit; the
        highest at each sub-unit's last iteration (indices only grow along a loop and with the
        sub-unit, so the edges of the intervals of alike sub-units suffice)."""
        top = self.top
        nest = top.nest
        rest = len(top.loops) - k
        units = self.edge_units
        fixed = [np.full((1, 1), i, dtype=np.int64) for i in tile_idx] + [np.zeros((1, 1), dtype=np.int64)] * rest
        low = boxes(top, fixed, [units])
        if not low.active.any():
            return None
        high = boxes(top, last_active(top, fixed, k, [units], self.points), [units])
        out = {}
        for role in nest.tensors:
            lo = np.where(low.active[None], low.tensor(nest, role)[0], np.iinfo(np.int64).max).min(axis=2)[:, 0]
            hi = np.where(high.active[None], high.tensor(nest, role)[1], -1).max(axis=2)[:, 0]
            out[role] = ([int(x) for x in lo], [int(x) for x in hi])
        return out

    def _indices(self, tile: int) -> list[int]:
        return step_loop_indices(self.view, tile) if self.tile_loops else []

    def valid(self, tile: int) -> bool:
        """Some level-0 sub-unit works in the tile: the first one does at the inner loops'
        first iteration (the view's boxes keep the inner loops whole)."""
        idx = [np.full((1, 1), i, dtype=np.int64) for i in self._indices(tile)]
        return bool(boxes(self.view, idx, [np.zeros((1, 1), dtype=np.int64)]).active[0, 0])

    def previous_valid(self, tile: int) -> int:
        """The last tile before ``tile`` in which some sub-unit works, or -1."""
        if tile <= 0:
            return -1
        if self.valid(tile - 1):
            return tile - 1
        rep = np.array([self._indices(tile)], dtype=np.int64)
        prev, has_prev = previous_active(self.view, rep, [np.zeros((1, 1), dtype=np.int64)], self.view_points)
        if not has_prev[0]:
            return -1
        strides = loop_strides(self.view)
        found = int(sum(int(p[0, 0]) * s for p, s in zip(prev, strides)))
        return found if self.valid(found) else -1

    def traffic(self, tile: int) -> TileDemand:
        """DRAM traffic of tile ``tile`` without its boxes: the same for every tile of one case
        (one class of indices per tile loop), so computed once per case."""
        idx = self._indices(tile)
        case = tuple(_class_of(starts, i) for starts, i in zip(self.view_class_starts, idx))
        found = self._traffic.get(case)
        if found is None:
            rep = sum(self.view_classes[i][k].first * s for i, (k, s) in enumerate(zip(case, self.view_strides)))
            full = self._demand(rep)
            found = self._traffic[case] = (
                TileDemand(full.read_words, full.read_runs, full.write_words, full.write_runs),
                rep - full.partial_sums_tile if full.partial_sums_tile >= 0 else -1)
        template, back = found
        return template if back < 0 else TileDemand(template.read_words, template.read_runs, template.write_words,
                                                    template.write_runs, partial_sums_tile=tile - back)

    def demand(self, tile: int) -> TileDemand:
        """DRAM traffic of tile ``tile`` with its boxes (cached)."""
        found = self._cache.get(tile)
        if found is None:
            if len(self._cache) >= self.CACHE_LIMIT:
                self._cache.clear()
            found = self._cache[tile] = self._demand(tile)
        return found

    def _demand(self, t: int) -> TileDemand:
        nest = self.cm.nest
        box = self._union_box(self._indices(t), self.tile_loops)
        reads = {role: 0 for role in nest.tensors}
        runs = {role: 0 for role in nest.tensors}
        if box is None:
            return TileDemand(reads, runs, 0, 0)
        p = self.previous_valid(t)
        prev = self._union_box(self._indices(p), self.tile_loops) if p >= 0 else None
        for role in OPERAND_ROLES:
            lo, hi = box[role]
            vol = prod(b - a + 1 for a, b in zip(lo, hi))
            inter = 0 if prev is None else prod(
                max(0, min(b, pb) - max(a, pa) + 1) for a, b, pa, pb in zip(lo, hi, *prev[role]))
            reads[role] = vol - inter
            if vol > inter:
                runs[role] = _delta_runs(lo, hi, None if prev is None else prev[role], self.full[role],
                                         nest.layout(role))
        olo, ohi = box["output"]
        oext = [b - a + 1 for a, b in zip(olo, ohi)]
        ovol = prod(oext)
        oruns = _runs(oext, self.full["output"], nest.layout("output"))
        idx = self._indices(t)
        revisit = any(idx[i] > 0 for i in self.outer_red)
        start = t % self.run_steps == 0
        end = (t + 1) % self.run_steps == 0 or t == self.count - 1
        source = -1
        if start and revisit:
            reads["output"], runs["output"] = ovol, oruns
            source = self.visits.previous_end(t)
            while source >= 0 and not self.valid(source):  # no work there: nothing written back
                source = self.visits.previous_end(source)
        return TileDemand(reads, runs, ovol if end else 0, oruns if end else 0, box, source)
