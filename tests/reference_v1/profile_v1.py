"""Test-only reference: the per-PE profile as it was before issue 9 (frozen copy).

What every step of a tile schedule moves and computes: the simulator's work list.

For each step this derives, from the PEs' boxes, the MACs and compute cycles, the operand words
the distribution network must deliver (only what is not already in a PE's L1; one transfer per
multicast group), the partial-sum read-backs at the start of a revisited output tile, and the
output drains (spatial reduction groups) at the end of an output tile. For each L2 tile (the
data of the innermost level-0 loops that fit L2) it derives the DRAM traffic. Consecutive steps with identical
demands are run-length encoded, so the engine receives ``(StepDemand, repeat)`` pairs.

Counting rules (also in the README):
- an idle PE keeps its L1 contents; a tile already resident is not fetched again, only the part
  of the new tile outside the old one is;
- a PE drains its output tile at the end of every run of steps over that tile in which it did
  any work; PEs draining the same tile together are reduced spatially first;
- an output tile revisited later (a reduction loop outside its tile loops) is spilled as partial
  sums to L2 and read back at the start of the next visit; likewise at L2 to DRAM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Iterator

import numpy as np

from accelsim.mapping.compile import CompiledMapping, Level

# ---- the step enumeration of mapping/steps.py as it was (frozen with this reference)
@dataclass
class StepBoxes:
    """Boxes of steps ``first .. first+count-1`` for all used PEs."""

    first: int
    start: dict[str, np.ndarray]  # dim -> (count, pes) int64
    extent: dict[str, np.ndarray]  # dim -> (count, pes) int64, 0 where idle
    active: np.ndarray  # (count, pes) bool

    @property
    def count(self) -> int:
        return self.active.shape[0]


def loop_strides(cm: CompiledMapping) -> list[int]:
    """Steps between consecutive iterations of each loop (outermost first)."""
    strides = []
    for i in range(len(cm.loops)):
        strides.append(prod(loop.trips for loop in cm.loops[i + 1 :]))
    return strides


def loop_indices(cm: CompiledMapping, steps: np.ndarray) -> list[np.ndarray]:
    """Index of every loop at each of ``steps`` (1-D int64 array)."""
    return [(steps // s) % loop.trips for s, loop in zip(loop_strides(cm), cm.loops)]


def unit_indices(cm: CompiledMapping, pes: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Sub-unit index of each PE at every level, and whether the PE belongs to a sub-unit at
    every level (a cluster size that does not divide its parent leaves PEs out)."""
    indices, member = [], np.ones(len(pes), dtype=bool)
    span = cm.used_pes
    for level in cm.levels:
        local = pes % span
        member &= local < level.units * level.unit_pes
        indices.append(local // level.unit_pes)
        span = level.unit_pes
    return indices, member


def step_boxes(cm: CompiledMapping, first: int, count: int, pes: np.ndarray | None = None) -> StepBoxes:
    """Boxes for ``count`` steps starting at ``first`` (all used PEs unless ``pes`` given)."""
    if pes is None:
        pes = np.arange(cm.used_pes, dtype=np.int64)
    steps = np.arange(first, first + count, dtype=np.int64)
    idx = loop_indices(cm, steps)
    loop_of = {(loop.level, d): i for i, loop in enumerate(cm.loops) for d in loop.dims}
    units, member = unit_indices(cm, pes)
    shape = (count, len(pes))
    start = {d: np.zeros(shape, dtype=np.int64) for d in cm.nest.dims}
    extent = {d: np.full(shape, size, dtype=np.int64) for d, size in cm.nest.dims.items()}
    active = np.broadcast_to(member, shape).copy()
    for li, level in enumerate(cm.levels):
        # sub-unit i works on window fold*units + i; a level without SpatialMap has one
        # window, so only its first sub-unit works (the others would repeat its MACs)
        fi = loop_of.get((li, level.spatial[0].dim)) if level.spatial else None
        fold = idx[fi][:, None] if fi is not None else np.zeros((count, 1), dtype=np.int64)
        window = fold * level.units + units[li][None, :]
        active &= window < level.spatial_windows
        for ld in level.directives:
            if ld.kind == "temporal":
                ti = loop_of.get((li, ld.dim))
                if ti is None:
                    continue  # a single window starting at 0 covering the extent
                offset = (idx[ti] * ld.offset)[:, None]
            else:
                offset = window * ld.offset
            start[ld.dim] = start[ld.dim] + offset
            extent[ld.dim] = np.clip(np.minimum(ld.size, extent[ld.dim] - offset), 0, None)
    for d in cm.nest.dims:
        active &= extent[d] > 0
    for d in cm.nest.dims:
        extent[d] = np.where(active, extent[d], 0)
    return StepBoxes(first, start, extent, active)


OPERANDS = ("input", "weight")
MAX_CHUNK_ELEMENTS = 1 << 18  # steps x PEs per numpy chunk


@dataclass(frozen=True)
class TransferSet:
    """Deliveries of one tensor in one step.

    ``transfers`` packets; ``words`` distinct words sent (= L2 reads); ``dest_words`` words
    written into L1s.
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
    ingress_cycles: int  # (issue 17) the distribution network's cycles for the step's words
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
    """How data moves: multicast or one packet per PE, and the bandwidths (words/cycle) used
    to size packets. ``detail`` keeps per-PE and per-packet lists for the per-PE engine."""

    multicast: bool
    noc_bandwidth_words_per_cycle: float
    egress_bandwidth_words_per_cycle: float
    detail: bool = False
    # (issue 17) a step's words share the width; with several root ports, port p feeds PEs
    # [p * port_block_pes, (p + 1) * port_block_pes) and a multicast group costs its words once
    # on every port it reaches: max(ceil(words / bandwidth), ceil(busiest port / port width))
    exact: bool = False
    ports: int = 1
    port_block_pes: int = 1
    port_bandwidth_words_per_cycle: float = 1.0


# ------------------------------------------------------------------------------------------
def tensor_box(cm: CompiledMapping, role: str, sb: StepBoxes) -> tuple[np.ndarray, np.ndarray]:
    """lo/hi index per tensor axis: arrays (axes, steps, pes)."""
    lo, hi = [], []
    for axis in cm.nest.tensors[role]:
        lo.append(sum(c * sb.start[d] for d, c in axis))
        hi.append(sum(c * (sb.start[d] + sb.extent[d] - 1) for d, c in axis))
    return np.stack(lo), np.stack(hi)


def _volume(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.prod(np.clip(hi - lo + 1, 0, None), axis=0)


def _ceil_div(a: np.ndarray, b: float) -> np.ndarray:
    return np.ceil(a / b).astype(np.int64)


_HASH_WEIGHTS = np.random.default_rng(20261121).integers(1, 2**62, size=64, dtype=np.int64) | 1


def _groups(rows: np.ndarray, keys: np.ndarray, distinct: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group entries by (row, key): (row of each group, index of its first entry, size).
    Without ``distinct`` every entry is its own group.

    Keys are hashed to one int64 for speed; the grouping is then verified exactly and falls
    back to a full row comparison if two different keys ever share a hash.
    """
    if len(rows) == 0 or not distinct:
        return rows, np.arange(len(rows)), np.ones(len(rows), dtype=np.int64)
    table = np.column_stack([rows, keys])
    with np.errstate(over="ignore"):
        hashed = table @ _HASH_WEIGHTS[: table.shape[1]]
    _, first, inverse, counts = np.unique(hashed, return_index=True, return_inverse=True, return_counts=True)
    if not np.array_equal(table, table[first[inverse.ravel()]]):
        _, first, counts = np.unique(table, axis=0, return_index=True, return_counts=True)
    return rows[first], first, counts


def _per_row_sums(rows: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, rows, values)
    return out


def _per_row_max(rows: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int64)
    np.maximum.at(out, rows, values)
    return out


class _Carry:
    """Per-PE state carried from one chunk of steps to the next."""

    def __init__(self, cm: CompiledMapping):
        pes = cm.used_pes
        self.valid = np.zeros(pes, dtype=bool)
        self.boxes = {
            role: (np.zeros((len(axes), pes), dtype=np.int64), np.zeros((len(axes), pes), dtype=np.int64))
            for role, axes in cm.nest.tensors.items()
        }
        self.run_active = np.zeros(pes, dtype=bool)


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


class ScheduleProfile:
    """The work list of a compiled mapping: step demands (streamed) and L2 tile demands.

    ``l1_required_words`` (largest per-PE footprint of all three tensors in one step) is
    complete once :meth:`steps` has been exhausted; ``l2_required_words`` (the largest data
    of one level-0 iteration: the least L2 the mapping needs) and ``tiles`` (the L2 tiles
    actually used, see :func:`_tile_demands`) are known at construction.
    """

    def __init__(self, cm: CompiledMapping, opts: ProfileOptions, l2_capacity_words: int):
        self.cm = cm
        self.opts = opts
        self.l1_required_words = 0
        self.tiles, self.steps_per_tile, self.l2_required_words = _tile_demands(cm, l2_capacity_words)
        self.visits = VisitOrder(cm)

    def steps(self) -> Iterator[tuple[StepDemand, int]]:
        """(demand, repeat) for the whole schedule, consecutive equal demands merged."""
        cm = self.cm
        total = cm.steps
        run_steps, outer_red = output_loop_structure(cm)
        chunk = max(1, MAX_CHUNK_ELEMENTS // max(cm.used_pes, 1))
        carry = _Carry(cm)
        pending: StepDemand | None = None
        repeat = 0
        first = 0
        while first < total:
            n = min(chunk, total - first)
            for d, count in self._chunk(step_boxes(cm, first, n), carry, run_steps, outer_red):
                if d == pending:
                    repeat += count
                else:
                    if pending is not None:
                        yield pending, repeat
                    pending, repeat = d, count
            first += n
        if pending is not None:
            yield pending, repeat

    def _chunk(self, sb: StepBoxes, carry: _Carry, run_steps: int, outer_red: list[int]) -> list[tuple[StepDemand, int]]:
        cm, opts = self.cm, self.opts
        n, pes = sb.active.shape
        steps = np.arange(sb.first, sb.first + n, dtype=np.int64)
        act = sb.active
        macs_pe = np.ones((n, pes), dtype=np.int64)
        for d in cm.nest.dims:
            macs_pe *= sb.extent[d]

        # boxes stacked under the carried box (row 0): ff_idx[t] is the stack row of the PE's
        # last active box at or before step t, prev_idx[t] the same strictly before t
        rowid = np.where(act, np.arange(1, n + 1)[:, None], 0)
        ff_idx = np.maximum.accumulate(rowid, axis=0)
        prev_idx = np.vstack([np.zeros((1, pes), dtype=np.int64), ff_idx[:-1]])
        prev_valid = (prev_idx > 0) | carry.valid[None, :]
        boxes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        footprint = np.zeros((n, pes), dtype=np.int64)
        for role in cm.nest.tensors:
            lo, hi = tensor_box(cm, role, sb)
            footprint += np.where(act, _volume(lo, hi), 0)
            clo, chi = carry.boxes[role]
            boxes[role] = (np.concatenate([clo[:, None, :], lo], axis=1), np.concatenate([chi[:, None, :], hi], axis=1))
        if footprint.size:
            self.l1_required_words = max(self.l1_required_words, int(footprint.max()))

        sets: dict[str, tuple] = {}
        port_load = np.zeros((n, opts.ports), dtype=np.int64)  # (issue 17) words per root port
        packets: list = []  # per tensor (input, weight, read-back): per step packet words
        for role in OPERANDS:
            slo, shi = boxes[role]
            lo, hi = slo[:, 1:], shi[:, 1:]
            plo, phi = _take(slo, prev_idx), _take(shi, prev_idx)
            inter = np.prod(np.clip(np.minimum(hi, phi) - np.maximum(lo, plo) + 1, 0, None), axis=0)
            new = np.where(act, _volume(lo, hi) - np.where(prev_valid, inter, 0), 0)
            srow, spe = np.nonzero(new > 0)
            pv = prev_valid[srow, spe][:, None]
            keys = np.concatenate(
                [lo[:, srow, spe].T, hi[:, srow, spe].T,
                 np.where(pv, plo[:, srow, spe].T, -1), np.where(pv, phi[:, srow, spe].T, -1)], axis=1)
            words = new[srow, spe]
            grow, gfirst, _ = _groups(srow, keys, opts.multicast)
            gwords = words[gfirst]
            sets[role] = self._transfer_sets(n, grow, gwords, _per_row_sums(srow, words, n))
            _port_load(port_load, srow, keys, words, spe // opts.port_block_pes, opts.multicast)
            packets.append(_split(gwords, grow, n) if opts.detail else None)

        # ---- outputs: a run is the steps over one output tile --------------------------
        olo, ohi = _take(boxes["output"][0], ff_idx), _take(boxes["output"][1], ff_idx)
        ovol = _volume(olo, ohi)
        run_start = steps % run_steps == 0
        run_end = ((steps + 1) % run_steps == 0) | (steps == cm.steps - 1)
        idx = loop_indices(cm, steps)
        revisit = np.zeros(n, dtype=bool)
        last_visit = np.ones(n, dtype=bool)
        for i in outer_red:
            revisit |= idx[i] > 0
            last_visit &= idx[i] == cm.loops[i].trips - 1
        # which PEs worked in the current run so far: an OR restarted at run starts
        done = np.cumsum(act, axis=0, dtype=np.int64)
        start_row = np.maximum.accumulate(np.where(run_start, np.arange(n), -1))
        before = np.where((start_row > 0)[:, None], done[np.maximum(start_row - 1, 0)], 0)
        worked_any = np.where((start_row >= 0)[:, None], done - before > 0, carry.run_active[None, :] | (done > 0))
        carry.run_active = worked_any[-1].copy()

        drow, dpe = np.nonzero(worked_any & run_end[:, None])
        dkeys = np.concatenate([olo[:, drow, dpe].T, ohi[:, drow, dpe].T], axis=1)
        grow, gfirst, gsize = _groups(drow, dkeys, True)
        gwords = ovol[drow, dpe][gfirst]
        drain_groups = _per_row_sums(grow, np.ones(len(grow), dtype=np.int64), n)
        drain_words = _per_row_sums(grow, gwords, n)
        drain_pe_words = _per_row_sums(drow, ovol[drow, dpe], n)
        drain_max = _per_row_max(grow, gsize, n)
        drain_serial = _ceil_div(drain_words, opts.egress_bandwidth_words_per_cycle)
        drain_lists = _split(gwords, grow, n) if opts.detail else [()] * n

        rrow, rpe = np.nonzero(act & (run_start & revisit)[:, None])
        rkeys = np.concatenate([olo[:, rrow, rpe].T, ohi[:, rrow, rpe].T], axis=1)
        grow, gfirst, _ = _groups(rrow, rkeys, True)
        rwords = ovol[rrow, rpe][gfirst]
        readback = self._transfer_sets(n, grow, rwords, _per_row_sums(grow, rwords, n))
        _port_load(port_load, rrow, rkeys, ovol[rrow, rpe], rpe // opts.port_block_pes, True)
        ingress = _ceil_div(sets["input"][1] + sets["weight"][1] + readback[1], opts.noc_bandwidth_words_per_cycle)
        if opts.ports > 1:
            ingress = np.maximum(ingress, _ceil_div(port_load.max(axis=1), opts.port_bandwidth_words_per_cycle))
        packets.append(_split(rwords, grow, n) if opts.detail else None)

        # ---- carry to the next chunk ----------------------------------------------------
        last = ff_idx[-1][None, :]
        for role, (slo, shi) in boxes.items():
            carry.boxes[role] = (_take(slo, last)[:, 0, :].copy(), _take(shi, last)[:, 0, :].copy())
        carry.valid = carry.valid | act.any(axis=0)

        per_top = self.steps_per_tile
        top_first = steps % per_top == 0
        top_last = (steps + 1) % per_top == 0
        partial = (drain_groups > 0) & ~last_visit
        scalars = np.column_stack([
            macs_pe.sum(axis=1), act.sum(axis=1), macs_pe.max(axis=1),
            *sets["input"], *sets["weight"], *readback,
            drain_groups, drain_words, drain_pe_words, drain_max, partial, drain_serial, top_first, top_last,
            ingress,
        ])
        if opts.detail:
            changes = np.arange(n)
        else:
            changes = np.nonzero(np.r_[True, np.any(scalars[1:] != scalars[:-1], axis=1)])[0]
        ends = np.r_[changes[1:], n]
        rows = scalars[changes].tolist()
        pe_macs = [tuple(macs_pe[t].tolist()) for t in changes] if opts.detail else None
        out = []
        for i, (t, row) in enumerate(zip(changes.tolist(), rows)):
            sets_t = [TransferSet(*row[3 + 3 * j: 6 + 3 * j], packets[j][t] if opts.detail else ()) for j in range(3)]
            demand = StepDemand(
                row[0], row[1], row[2], sets_t[0], sets_t[1], sets_t[2],
                row[12], row[13], row[14], row[15], bool(row[16]), row[17], bool(row[18]), bool(row[19]), row[20],
                pe_macs[i] if opts.detail else (), drain_lists[t],
            )
            out.append((demand, int(ends[i] - t)))
        return out

    def _transfer_sets(self, n: int, grow: np.ndarray, gwords: np.ndarray,
                       dest: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-step (packets, distinct words, delivered words) from packets (row, words) and
        per-row delivered words."""
        return (
            _per_row_sums(grow, np.ones(len(grow), dtype=np.int64), n),
            _per_row_sums(grow, gwords, n),
            dest,
        )


def _port_load(load: np.ndarray, rows: np.ndarray, keys: np.ndarray, words: np.ndarray, port: np.ndarray,
               multicast: bool) -> None:
    """(issue 17) Add each (step row, PE) entry's words to its PE's port; a multicast group (one
    key in one row) once per port it reaches."""
    if multicast and len(rows):
        _, first = np.unique(np.column_stack([rows, keys, port]), axis=0, return_index=True)
        rows, words, port = rows[first], words[first], port[first]
    np.add.at(load, (rows, port), words)


def _take(arr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """arr (axes, rows, pes) indexed along rows by idx (k, pes) -> (axes, k, pes)."""
    pes = arr.shape[2]
    flat = idx * pes + np.arange(pes)
    return arr.reshape(arr.shape[0], -1)[:, flat]


def _split(values: np.ndarray, rows: np.ndarray, n: int) -> list[tuple[int, ...]]:
    """Group ``values`` by their ``rows`` into n tuples (entry order kept)."""
    out: list[list[int]] = [[] for _ in range(n)]
    for r, v in zip(rows.tolist(), values.tolist()):
        out[r].append(v)
    return [tuple(x) for x in out]


# ------------------------------------------------------------------------------------------
def _top_level_mapping(cm: CompiledMapping) -> CompiledMapping:
    """The schedule seen from L2: level 0 only, one 'PE' per top-level sub-unit."""
    l0 = cm.levels[0]
    return CompiledMapping(
        cm.layer, cm.nest, (Level(l0.units, 1, l0.directives),),
        tuple(loop for loop in cm.loops if loop.level == 0), l0.units, cm.source,
    )


def _runs(extents: list[int], full: list[int], layout: tuple[int, ...]) -> int:
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


def _delta_runs(lo, hi, plo, phi, full: list[int], layout: tuple[int, ...]) -> int:
    """Runs of the part of box (lo, hi) outside box (plo, phi): exact when the boxes differ
    along one axis (a sliding or stepping tile), else the whole new box."""
    ext = [int(h - low + 1) for low, h in zip(lo, hi)]
    if plo is None:
        return _runs(ext, full, layout)
    differ = [a for a in range(len(ext)) if lo[a] != plo[a] or hi[a] != phi[a]]
    if len(differ) == 1:
        a = differ[0]
        overlap = max(0, min(hi[a], phi[a]) - max(lo[a], plo[a]) + 1)
        ext[a] -= overlap
    return _runs(ext, full, layout)


def _tile_demands(cm: CompiledMapping, l2_capacity_words: int) -> tuple[list[TileDemand], int, int]:
    """DRAM traffic of every L2 tile in order, the steps per L2 tile, and the smallest L2 tile
    the mapping needs (one level-0 iteration) in words.

    L2 holds the union of the data of as many innermost level-0 loops as fit in
    ``l2_capacity_words`` (a double-buffered L2 offers half its size); the level-0 loops
    outside them step from one L2 tile to the next.
    """
    top = _top_level_mapping(cm)
    n = top.steps
    nest = cm.nest
    big = np.iinfo(np.int64).max
    parts: dict[str, list] = {role: [] for role in nest.tensors}
    any_active = []
    chunk = max(1, MAX_CHUNK_ELEMENTS // max(top.used_pes, 1))
    for first in range(0, n, chunk):
        sb = step_boxes(top, first, min(chunk, n - first))
        for role in nest.tensors:
            lo, hi = tensor_box(cm, role, sb)
            parts[role].append((np.where(sb.active[None], lo, big).min(axis=2),
                                np.where(sb.active[None], hi, -1).max(axis=2)))
        any_active.append(sb.active.any(axis=1))
    boxes = {role: (np.concatenate([p[0] for p in ps], axis=1), np.concatenate([p[1] for p in ps], axis=1))
             for role, ps in parts.items()}
    act = np.concatenate(any_active)
    loops0 = top.loops

    def tiles_for(k: int) -> tuple[dict, np.ndarray, np.ndarray]:
        inner = prod(loop.trips for loop in loops0[k:])
        groups = n // inner
        out, words = {}, np.zeros(groups, dtype=np.int64)
        for role, (lo, hi) in boxes.items():
            tlo = lo.reshape(lo.shape[0], groups, inner).min(axis=2)
            thi = hi.reshape(hi.shape[0], groups, inner).max(axis=2)
            out[role] = (tlo, thi)
            words += np.prod(np.clip(thi - tlo + 1, 0, None), axis=0)
        valid = act.reshape(groups, inner).any(axis=1)
        return out, np.where(valid, words, 0), valid

    minimum = int(tiles_for(len(loops0))[1].max()) if n else 0
    for k in range(len(loops0) + 1):
        tile_boxes, words, valid = tiles_for(k)
        if words.max() <= l2_capacity_words or k == len(loops0):
            break
    dram_view = CompiledMapping(cm.layer, nest, top.levels, loops0[:k], top.num_pes, cm.source)
    steps_per_tile = cm.steps_per_top_step * prod(loop.trips for loop in loops0[k:])
    return _tile_sequence(dram_view, tile_boxes, valid), steps_per_tile, minimum


def _tile_sequence(view: CompiledMapping, tile_boxes: dict, valid: np.ndarray) -> list[TileDemand]:
    """TileDemands of consecutive L2 tiles (boxes per tensor, indexed by the view's loops)."""
    nest = view.nest
    full = {role: nest.extents(role) for role in nest.tensors}
    n = len(valid)
    run_steps, outer_red = output_loop_structure(view)
    visits = VisitOrder(view)
    idx = [i.tolist() for i in loop_indices(view, np.arange(n, dtype=np.int64))]
    lists = {role: (lo.T.tolist(), hi.T.tolist()) for role, (lo, hi) in tile_boxes.items()}
    demands: list[TileDemand] = []
    prev: dict[str, tuple | None] = {role: None for role in nest.tensors}
    for t in range(n):
        reads = {role: 0 for role in nest.tensors}
        runs = {role: 0 for role in nest.tensors}
        if not valid[t]:
            demands.append(TileDemand(reads, runs, 0, 0))
            continue
        for role in OPERANDS:
            lo, hi = lists[role][0][t], lists[role][1][t]
            vol = prod(h - low + 1 for low, h in zip(lo, hi))
            p = prev[role]
            inter = 0 if p is None else prod(max(0, min(h, ph) - max(low, pl) + 1) for low, h, pl, ph in zip(lo, hi, *p))
            reads[role] = vol - inter
            if vol > inter:
                runs[role] = _delta_runs(lo, hi, *(p if p is not None else (None, None)), full[role], nest.layout(role))
            prev[role] = (lo, hi)
        olo, ohi = lists["output"][0][t], lists["output"][1][t]
        oext = [h - low + 1 for low, h in zip(olo, ohi)]
        ovol = prod(oext)
        oruns = _runs(oext, full["output"], nest.layout("output"))
        revisit = any(idx[i][t] > 0 for i in outer_red)
        start = t % run_steps == 0
        end = (t + 1) % run_steps == 0 or t == n - 1
        source = -1
        if start and revisit:
            reads["output"], runs["output"] = ovol, oruns
            source = visits.previous_end(t)
            while source >= 0 and not valid[source]:  # no work there: nothing written back
                source = visits.previous_end(source)
        boxes = {role: (lists[role][0][t], lists[role][1][t]) for role in nest.tensors}
        demands.append(TileDemand(reads, runs, ovol if end else 0, oruns if end else 0, boxes, source))
    return demands
