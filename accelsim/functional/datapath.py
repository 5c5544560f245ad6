"""Values riding on the timing model's transfers: DRAM -> L2 -> L1 -> MACs -> drains -> DRAM.

:class:`DatapathValues` receives the engine's value hooks (``LayerSimulation(values=...)``) at the
simulated moment each transfer happens and moves numpy values exactly as the transfer says:

- ``tile_loaded(i)`` (the DMA starts reading L2 tile ``i``): the tile's operand box becomes
  resident in L2. Only the part outside the previous tile comes from DRAM; the overlap is kept
  from the previous tile's L2 copy (the timing model's delta rule). Partial sums the tile reads
  back are copied from DRAM's output (which holds only what write-backs put there).
- ``delivered(step)`` (the distribution network has sent a step's operands): each active
  PE's L1 gets its new operand box: the overlap with its previous L1 box is kept from that L1
  copy, the rest is taken from the resident L2 tile; words L2 does not hold are flagged and
  read as 0. Partial sums read back at the start of a revisited output tile are copied from L2
  into one PE per group of PEs sharing that tile (the one with the lowest index; the others
  start from 0, so a reduction over the group adds the old partial sum once).
- ``computed(step)``: every active PE multiplies (adds, for a residual add) the operands
  of *its own L1 copy for that step* over its box and accumulates into its output accumulator,
  which lives from the PE's first step in an output run to the drain at the run's end.
- ``drained(step)`` (the reduction network has sent a step's drains): the accumulators
  of the PEs draining the same output tile are summed (a reduction network exists) or written
  one after another (none: the last write wins), and stored into L2. Overwriting a partial
  sum in L2 that nobody read back is flagged with the MACs it held.
- ``written_back(i)``: the output box of L2 tile ``i`` goes to DRAM, where L2 holds it.

An operand L2 bypasses (``bypass``, the hardware's ``l2.bypassed``) never enters L2: a tile
holds none of it, and each step's new words of it come to the PEs' L1s from DRAM, which holds
every word, so none is read as 0. Its words written into L1s are compared per step as for the
others; the tile's DMA read of it (the packets sent, a multicast packet once) is not a count
the values follow, so it is not compared.

Alongside every value travels a count of the MACs it contains, so the report can tell MACs
never executed from MACs executed but lost on the way. Every transfer's word count is compared
with the timing model's own count for the same transfer; a difference is reported as an
inconsistency (the values would then not ride on the timed transfers).

**How it is held.** Operand words never change, so a copy of an operand in L2 or L1 holds,
word for word, either DRAM's value or 0 where it was read from a buffer that did not hold it.
A copy is therefore kept as its box plus the words it read as 0 (an L2 tile: which words it
holds, with a prefix-sum table to count the absent words of any box when that is not simply
the tile's box; an L1 copy: per PE, its box and, only when some were, its zeroed words), and a
PE computes from DRAM's values over its window with its zeroed words set to 0: the same
numbers the copies would hold. Partial sums do change and are held as values: one row per PE
of an accumulator table (padded to the largest output tile a PE can hold), L2's and DRAM's
output arrays. Each hook works on all of a step's PEs at once in numpy; PEs whose windows
have one shape are computed together, a step's drains and read-backs are stored and read
together unless their tiles overlap (then one after another, in the order above), and the
problem messages are logged in the order a PE-by-PE walk would log them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import product
from math import prod
from typing import Callable, Iterator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from accelsim.functional.operands import Operands
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import StepBoxes, loop_indices, pe_extent_bound, step_boxes, tensor_box
from accelsim.mapping.demand import ScheduleProfile, StepDemand
from accelsim.mapping.runs import output_loop_structure
from accelsim.workload.operators import OPERAND_ROLES

MAX_LOGGED_PER_KIND = 5  # problem messages kept per kind (all are counted)
STEP_CHUNK_PAIRS = 1 << 16  # (step, PE) pairs whose boxes are computed at a time


@dataclass
class ProblemLog:
    """What went wrong on the way, by kind: events, the amount involved (words or MACs, as
    each message says) and the first few messages."""

    events: dict[str, int] = field(default_factory=dict)
    amounts: dict[str, int] = field(default_factory=dict)
    messages: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, message: str, amount: int = 1) -> None:
        self.events[kind] = self.events.get(kind, 0) + 1
        self.amounts[kind] = self.amounts.get(kind, 0) + amount
        kept = self.messages.setdefault(kind, [])
        if len(kept) < MAX_LOGGED_PER_KIND:
            kept.append(message)

    def lines(self) -> list[str]:
        """The kept messages by kind, each kind followed by how many more there were."""
        out = []
        for kind in sorted(self.messages):
            out += self.messages[kind]
            more = self.events[kind] - len(self.messages[kind])
            if more:
                out.append(f"... and {more} more {kind.replace('_', ' ')} events")
        return out


def _slices(lo, hi) -> tuple[slice, ...]:
    return tuple(slice(int(a), int(b) + 1) for a, b in zip(lo, hi))


def _overlap(lo, hi, plo, phi):
    """(lo, hi) of the intersection of two boxes, or None."""
    olo, ohi = np.maximum(lo, plo), np.minimum(hi, phi)
    return (olo, ohi) if (ohi >= olo).all() else None


def _sums(n: int) -> str:
    return f"{n} partial sum" + ("" if n == 1 else "s")


def _pes(pes) -> str:
    pes = list(pes)
    return f"PE {pes[0]}" if len(pes) == 1 else f"PEs {', '.join(map(str, pes))}"


@lru_cache(maxsize=256)
def _box_offsets(shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """Flat offsets of the elements of a box of ``shape`` whose axis ``i`` advances
    ``strides[i]`` elements: an int64 array of ``shape`` (shared: not to be written)."""
    out = np.zeros(shape, dtype=np.int64)
    for i, (n, s) in enumerate(zip(shape, strides)):
        out += (np.arange(n, dtype=np.int64) * s).reshape([n if j == i else 1 for j in range(len(shape))])
    out.flags.writeable = False
    return out


def _element_strides(a: np.ndarray) -> np.ndarray:
    return np.array([s // a.itemsize for s in a.strides], dtype=np.int64)


def _first_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``keys`` (n, k) grouped by equal value: (first row of each group, in order of
    first appearance; the group of each row, numbered in that order)."""
    if len(keys) == 0 or (keys == keys[0]).all():
        return np.zeros(min(len(keys), 1), dtype=np.int64), np.zeros(len(keys), dtype=np.int64)
    bounds = keys.max(axis=0) + 1  # keys are non-negative: one integer per row where it fits
    if prod(bounds.tolist()) < 1 << 62:
        weights = np.cumprod(np.concatenate([[1], bounds[:0:-1]]))[::-1]
        _, first, inverse = np.unique(keys @ weights, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


def _nth(members: Callable[[int], list[int]], row: int, _: int) -> list[int]:
    """``members(row)`` whatever row is asked (a tile stored on its own)."""
    return members(row)


@dataclass
class _StepView:
    """One step's active PEs (ascending), each one's box per tensor (lo, hi: arrays (axes,
    PEs)) and its window (start, extent: arrays (dimensions, PEs))."""

    active: np.ndarray
    lo: dict[str, np.ndarray]
    hi: dict[str, np.ndarray]
    start: np.ndarray
    extent: np.ndarray


@dataclass
class _Tiles:
    """Output tiles of some PEs (rows): origin and extent per output axis (arrays (rows,
    axes)), partial sums and MACs held per element, flattened in the tile's own shape and
    padded to the largest tile a PE can hold (arrays (rows, width))."""

    pes: np.ndarray
    lo: np.ndarray
    extent: np.ndarray
    values: np.ndarray
    macs: np.ndarray


@dataclass
class _Copies:
    """The operand copies of one tensor in every PE's L1: box (lo, hi: arrays (axes, PEs)),
    whether the PE holds one, and the words of it that were read as 0 (by PE; none in a
    correct run)."""

    lo: np.ndarray
    hi: np.ndarray
    held: np.ndarray
    zeroed: dict[int, np.ndarray] = field(default_factory=dict)


class DatapathValues:
    """Receives the engine's value hooks and moves operand and partial-sum values with them."""

    def __init__(self, cm: CompiledMapping, operands: Operands, reduction_network: bool,
                 bypass: frozenset[str] = frozenset()):
        self.cm = cm
        self.bypass = bypass  # operands L2 does not keep: L1s take them from DRAM
        self.nest = nest = cm.nest
        self.operands = operands
        self.reduction_network = reduction_network
        self.dims = list(nest.dims)
        self.red_dims = set(nest.reduction_dims)
        self.acc_dtype = operands.accumulator
        steps, pes = cm.steps, cm.used_pes
        self.chunk_steps = max(1, STEP_CHUNK_PAIRS // max(pes, 1))
        self.chunk: StepBoxes | None = None
        run_steps, outer_red = output_loop_structure(cm)
        t = np.arange(steps, dtype=np.int64)
        self.run_start = t % run_steps == 0
        self.run_end = ((t + 1) % run_steps == 0) | (t == steps - 1)
        idx = loop_indices(cm, t)
        self.revisit = np.zeros(steps, dtype=bool)
        for i in outer_red:
            self.revisit |= idx[i] > 0
        out_dims = [d for d in self.dims if d not in self.red_dims]
        self.out_perm = [out_dims.index(axis[0][0]) for axis in nest.tensors["output"]]
        self.red_axes = tuple(i for i, d in enumerate(self.dims) if d in self.red_dims)
        # per loop-nest dimension, the (tensor axis, coefficient) terms it appears in
        self.plans = {role: [[(a, c) for a, axis in enumerate(nest.tensors[role]) for dim, c in axis if dim == d]
                             for d in self.dims]
                      for role in OPERAND_ROLES}
        self.adds = cm.layer.operator.combine == "add"  # a residual add adds its operands
        self.views: dict[int, _StepView] = {}
        # DRAM: operands (never written) and the output with its state
        self.dram = {"input": np.ascontiguousarray(operands.input), "weight": np.ascontiguousarray(operands.weight)}
        self.dram_strides = {role: _element_strides(a) for role, a in self.dram.items()}
        out_shape = nest.extents("output")
        self.dram_out: np.ndarray = np.zeros(out_shape, dtype=self.acc_dtype)
        self.dram_out_macs = np.zeros(out_shape, dtype=np.int64)
        self.dram_out_written = np.zeros(out_shape, dtype=bool)
        self.out_strides = _element_strides(self.dram_out)
        # L2: which operand words each tile holds (its values are DRAM's there); one output array
        # with its state
        self.l2: dict[str, dict[int, np.ndarray]] = {role: {} for role in OPERAND_ROLES}
        self.l2_absent: dict[str, dict[int, np.ndarray | None]] = {role: {} for role in OPERAND_ROLES}
        self.l2_box: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {role: {} for role in OPERAND_ROLES}
        self.l2_prev_tile: int | None = None
        self.l2_out: np.ndarray = np.zeros(out_shape, dtype=self.acc_dtype)
        self.l2_out_macs = np.zeros(out_shape, dtype=np.int64)
        self.l2_out_valid = np.zeros(out_shape, dtype=bool)
        self.l2_out_unread = np.zeros(out_shape, dtype=bool)
        # L1: per PE its latest operand copy per tensor; each step's zeroed words until the
        # step computes; the partial sums read back for a step; every PE's accumulator
        self.l1 = {role: _Copies(np.zeros((len(nest.tensors[role]), pes), dtype=np.int64),
                                 np.zeros((len(nest.tensors[role]), pes), dtype=np.int64),
                                 np.zeros(pes, dtype=bool)) for role in OPERAND_ROLES}
        self.pending: dict[int, dict[str, dict[int, np.ndarray]]] = {}
        self.seeds: dict[int, _Tiles] = {}
        bound = pe_extent_bound(cm)
        width = prod(sum(c * (bound[d] - 1) for d, c in axis) + 1 for axis in nest.tensors["output"])
        axes = len(out_shape)
        self.acc = _Tiles(np.arange(pes), np.zeros((pes, axes), dtype=np.int64), np.zeros((pes, axes), dtype=np.int64),
                          np.zeros((pes, width), dtype=self.acc_dtype), np.zeros((pes, width), dtype=np.int64))
        self.acc_live = np.zeros(pes, dtype=bool)
        self.acc_order = np.zeros(pes, dtype=np.int64)  # when each live accumulator was started
        self.acc_started = 0
        self.to_drain: dict[int, _Tiles] = {}
        # MAC coverage of the iteration space: times each MAC was executed (widened when a
        # count would overflow)
        self.coverage = np.zeros(tuple(nest.dims.values()), dtype=np.uint8)
        self.cov_strides = _element_strides(self.coverage)
        self.log = ProblemLog()

    # ------------------------------------------------------------------ hooks
    def start(self, profile: ScheduleProfile) -> None:
        """The engine's work list is known: each L2 tile's box per tensor (the timing model's
        own ``TileDemand.boxes``), as (lo, hi) arrays of shape (axes, tiles)."""
        self.tiles = profile.tiles
        self.steps_per_tile = profile.steps_per_tile
        self.tile_boxes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for role, axes in self.nest.tensors.items():
            empty = ([0] * len(axes), [-1] * len(axes))  # a tile in which no sub-unit works
            boxes = [self.tiles.demand(i).boxes.get(role, empty) for i in range(self.tiles.count)]
            self.tile_boxes[role] = (np.array([lo for lo, _ in boxes], dtype=np.int64).T.reshape(len(axes), -1),
                                     np.array([hi for _, hi in boxes], dtype=np.int64).T.reshape(len(axes), -1))

    def tile_loaded(self, tile: int) -> None:
        td = self.tiles.demand(tile)
        prev = self.l2_prev_tile
        valid = False
        for role in OPERAND_ROLES:
            if role in self.bypass:
                continue
            lo, hi = self.tile_boxes[role][0][:, tile], self.tile_boxes[role][1][:, tile]
            if (hi < lo).any():  # no sub-unit works in this tile: L2 keeps what it had
                if prev is not None:
                    self.l2[role][tile] = self.l2[role][prev]
                    if prev in self.l2_box[role]:
                        self.l2_box[role][tile] = self.l2_box[role][prev]
                continue
            valid = True
            mask = np.zeros(self.dram[role].shape, dtype=bool)
            mask[_slices(lo, hi)] = True
            fetched = int(np.prod(hi - lo + 1))
            whole = True  # whether L2 holds every word of the tile's box (and only those)
            if prev is not None:
                plo, phi = self.tile_boxes[role][0][:, prev], self.tile_boxes[role][1][:, prev]
                ov = _overlap(lo, hi, plo, phi)
                if ov is not None:
                    kept = _slices(*ov)
                    mask[kept] = self.l2[role][prev][kept]
                    whole = bool(mask[kept].all())
                    fetched -= int(np.prod(ov[1] - ov[0] + 1))
            if whole:
                self.l2_box[role][tile] = (lo, hi)
            self._agree(f"L2 tile {tile}: {role} words fetched from DRAM", fetched, td.read_words[role])
            self.l2[role][tile] = mask
        if valid:
            self.l2_prev_tile = tile
            for role in OPERAND_ROLES:  # tiles before the previous one have left L2
                for old in [i for i in self.l2[role] if i < tile - 1]:
                    del self.l2[role][old]
                    self.l2_absent[role].pop(old, None)
                    self.l2_box[role].pop(old, None)
        if td.read_words["output"]:
            lo, hi = self.tile_boxes["output"][0][:, tile], self.tile_boxes["output"][1][:, tile]
            region = _slices(lo, hi)
            self._agree(f"L2 tile {tile}: partial sums read back from DRAM",
                        int(np.prod(hi - lo + 1)), td.read_words["output"])
            stale = ~self.dram_out_written[region]
            if stale.any():
                self.log.add("read_before_write",
                             f"L2 tile {tile} read back {_sums(int(stale.sum()))} of output "
                             f"{self._region_text(lo.tolist(), hi.tolist())} from DRAM before a write-back put them there",
                             int(stale.sum()))
            self.l2_out[region] = self.dram_out[region]
            self.l2_out_macs[region] = self.dram_out_macs[region]
            self.l2_out_valid[region] = self.dram_out_written[region]
            self.l2_out_unread[region] = False

    def delivered(self, t: int, demand: StepDemand) -> None:
        tile = t // self.steps_per_tile
        view = self._view(t)
        zeroed = self.pending[t] = {}
        for role in OPERAND_ROLES:
            words = self._deliver(role, t, view, tile)
            copies = self.l1[role]
            if copies.zeroed:
                active = set(view.active.tolist())
                zeroed[role] = {pe: zero for pe, zero in copies.zeroed.items() if pe in active}
            else:
                zeroed[role] = {}
            self._agree(f"step {t}: {role} words written into L1s", words, getattr(demand, role).dest_words)
        if self.run_start[t] and self.revisit[t]:
            self._read_back(t, view, demand)

    def computed(self, t: int) -> None:
        zeroed = self.pending.pop(t)
        view = self.views.pop(t)
        seeds = self.seeds.pop(t, None)
        acc = self.acc
        if self.run_start[t]:
            for pe in self._live_in_order():
                self.log.add("discarded", f"step {t}: {_pes([pe])} still held partial sums of output "
                             f"{self._tile_text(acc, pe)} at the start of a new output run; discarded",
                             int(acc.macs[pe].sum()))
            self.acc_live[:] = False
        pes = view.active
        olo, oext = view.lo["output"].T, (view.hi["output"] - view.lo["output"] + 1).T
        live = self.acc_live[pes]
        moved = live & ((acc.lo[pes] != olo).any(axis=1) | (acc.extent[pes] != oext).any(axis=1))
        for pe in pes[moved].tolist():
            self.log.add("discarded", f"step {t}: {_pes([pe])} moved from output {self._tile_text(acc, pe)} to "
                         f"another output tile without draining; its partial sums were discarded",
                         int(acc.macs[pe].sum()))
        fresh = ~live | moved
        started = pes[~live]
        self.acc_order[started] = self.acc_started + np.arange(len(started))
        self.acc_started += len(started)
        new = pes[fresh]
        acc.lo[new], acc.extent[new] = olo[fresh], oext[fresh]
        acc.values[new] = 0
        acc.macs[new] = 0
        self.acc_live[pes] = True
        if seeds is not None:  # partial sums read back seed the accumulators they start
            take = np.isin(seeds.pes, new)
            acc.values[seeds.pes[take]] = seeds.values[take]
            acc.macs[seeds.pes[take]] = seeds.macs[take]
        _, group = _first_rows(view.extent.T)
        for k in range(int(group.max()) + 1 if len(group) else 0):
            members = np.nonzero(group == k)[0]
            self._mac(view, members, zeroed)
        if self.run_end[t] and self.acc_live.any():
            done = np.nonzero(self.acc_live)[0]
            self.to_drain[t] = _Tiles(done, acc.lo[done], acc.extent[done], acc.values[done], acc.macs[done])
            self.acc_live[:] = False

    def drained(self, t: int, demand: StepDemand) -> None:
        tiles = self.to_drain.pop(t, None)
        groups = 0
        words = 0
        if tiles is not None:
            first, group = _first_rows(np.concatenate([tiles.lo, tiles.extent], axis=1))
            groups = len(first)
            words = int(np.prod(tiles.extent[first], axis=1).sum())
            if self.reduction_network:
                values: np.ndarray = np.zeros((groups, tiles.values.shape[1]), dtype=self.acc_dtype)
                macs = np.zeros((groups, tiles.macs.shape[1]), dtype=np.int64)
                order = np.argsort(group, kind="stable")  # each group's members in PE order
                starts = np.searchsorted(group[order], np.arange(groups))
                rank = np.arange(len(order)) - starts[group[order]]
                for r in range(int(rank.max()) + 1):  # the r-th member of every group, as the network adds them
                    rows = order[rank == r]
                    values[group[rows]] += tiles.values[rows]
                    macs[group[rows]] += tiles.macs[rows]
                self._store(t, lambda k: tiles.pes[group == k].tolist(), _Tiles(tiles.pes[first], tiles.lo[first], tiles.extent[first], values, macs))
            else:  # each group's members one after another
                order = np.argsort(group, kind="stable")
                self._store(t, lambda row: [int(tiles.pes[order[row]])],
                            _Tiles(tiles.pes[order], tiles.lo[order], tiles.extent[order], tiles.values[order],
                                   tiles.macs[order]))
        self._agree(f"step {t}: output tiles drained", groups, demand.drain_groups)
        self._agree(f"step {t}: output words written to L2 by drains", words, demand.drain_words)

    def written_back(self, tile: int) -> None:
        lo, hi = self.tile_boxes["output"][0][:, tile], self.tile_boxes["output"][1][:, tile]
        region = _slices(lo, hi)
        self._agree(f"L2 tile {tile}: output words written back to DRAM",
                    int(np.prod(hi - lo + 1)), self.tiles.demand(tile).write_words)
        held = self.l2_out_valid[region]
        self.dram_out[region][held] = self.l2_out[region][held]
        self.dram_out_macs[region][held] = self.l2_out_macs[region][held]
        self.dram_out_written[region] |= held
        self.l2_out_valid[region] = False  # L2 moves on to the next tile
        self.l2_out_unread[region] = False

    # ------------------------------------------------------------------ boxes
    def step_chunks(self) -> Iterator[StepBoxes]:
        """Every step's boxes of every used PE, a few thousand (step, PE) pairs at a time."""
        for first in range(0, self.cm.steps, self.chunk_steps):
            yield step_boxes(self.cm, first, min(self.chunk_steps, self.cm.steps - first))

    def _view(self, t: int) -> _StepView:
        """Step ``t``'s active PEs, their boxes and windows."""
        view = self.views.get(t)
        if view is None:
            sb = self.chunk
            if sb is None or not sb.first <= t < sb.first + sb.count:
                first = t - t % self.chunk_steps
                sb = self.chunk = step_boxes(self.cm, first, min(self.chunk_steps, self.cm.steps - first))
            row = t - sb.first
            active = np.nonzero(sb.active[row])[0]
            start = {d: sb.start[d][row, active] for d in self.dims}
            extent = {d: sb.extent[d][row, active] for d in self.dims}
            lo, hi = {}, {}
            for role in self.nest.tensors:
                lo[role], hi[role] = tensor_box(self.nest, role, start, extent)
            view = self.views[t] = _StepView(active, lo, hi, np.stack([start[d] for d in self.dims]),
                                             np.stack([extent[d] for d in self.dims]))
        return view

    # ------------------------------------------------------------------ transfers
    def _deliver(self, role: str, t: int, view: _StepView, tile: int) -> int:
        """Fill the active PEs' L1s with their ``role`` boxes of step ``t``; return the words
        sent. A copy keeps the overlap with the PE's previous copy and takes the rest from the
        resident L2 tile (DRAM for a bypassed operand); words that tile does not hold are read
        as 0 (and flagged)."""
        copies, pes = self.l1[role], view.active
        lo, hi = view.lo[role], view.hi[role]
        plo, phi, held = copies.lo[:, pes], copies.hi[:, pes], copies.held[pes]
        new = ~(held & (lo == plo).all(axis=0) & (hi == phi).all(axis=0))  # else all of it is resident
        olo, ohi = np.maximum(lo, plo), np.minimum(hi, phi)
        kept = held & new & (olo <= ohi).all(axis=0)
        size = np.prod(hi - lo + 1, axis=0)
        sent = np.where(new, size - np.where(kept, np.prod(ohi - olo + 1, axis=0), 0), 0)
        mask = self.l2[role].get(tile)
        if role in self.bypass:  # from DRAM, which holds every word
            absent = np.zeros_like(sent)
        else:
            absent = sent if mask is None else self._absent(role, tile, lo, hi) - np.where(kept, self._absent(
                role, tile, olo, ohi), 0)
        old = np.array([pe in copies.zeroed for pe in pes.tolist()], dtype=bool) if copies.zeroed else \
            np.zeros(len(pes), dtype=bool)
        for g in np.nonzero(new & ((absent > 0) | (kept & old)))[0].tolist():
            pe, region = int(pes[g]), _slices(lo[:, g], hi[:, g])
            zero = np.ones([b - a + 1 for a, b in zip(lo[:, g], hi[:, g])], dtype=bool) if mask is None \
                else ~mask[region]
            if kept[g]:
                here = tuple(slice(a - b, c - b + 1) for a, c, b in zip(olo[:, g], ohi[:, g], lo[:, g]))
                zero[here] = False
            count = int(zero.sum())
            if kept[g] and old[g]:
                there = tuple(slice(a - b, c - b + 1) for a, c, b in zip(olo[:, g], ohi[:, g], plo[:, g]))
                zero[here] |= copies.zeroed[pe][there]
            if count:
                self.log.add("not_resident", f"step {t}: {_pes([pe])} needed {count} {role} words "
                             f"that L2 tile {tile} does not hold (read as 0)", count)
            copies.zeroed[pe] = zero
        for pe in pes[new & (absent == 0) & ~(kept & old) & old].tolist():
            del copies.zeroed[pe]
        changed = pes[new]
        copies.lo[:, changed], copies.hi[:, changed], copies.held[changed] = lo[:, new], hi[:, new], True
        return int(sent.sum())

    def _absent(self, role: str, tile: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Words of each box (lo, hi: arrays (axes, boxes)) that L2 tile ``tile`` does not hold,
        from the tile's box where L2 holds exactly that, else from a table of prefix sums of its
        absent words (None: it holds every word)."""
        box = self.l2_box[role].get(tile)
        if box is not None:
            inside = np.clip(np.minimum(hi, box[1][:, None]) - np.maximum(lo, box[0][:, None]) + 1, 0, None)
            return np.prod(hi - lo + 1, axis=0) - np.prod(inside, axis=0)
        if tile not in self.l2_absent[role]:
            table: np.ndarray | None = None
            absent = ~self.l2[role][tile]
            if absent.any():
                table = np.zeros([n + 1 for n in absent.shape], dtype=np.int64)
                inner = table[tuple(slice(1, None) for _ in absent.shape)]
                inner[...] = absent
                for axis in range(absent.ndim):
                    np.cumsum(inner, axis=axis, out=inner)
            self.l2_absent[role][tile] = table
        table = self.l2_absent[role][tile]
        if table is None:
            return np.zeros(lo.shape[1], dtype=np.int64)
        count = np.zeros(lo.shape[1], dtype=np.int64)
        for corner in product((0, 1), repeat=lo.shape[0]):
            index = tuple(np.where(c, hi[a] + 1, lo[a]) for a, c in enumerate(corner))
            sign = 1 if (lo.shape[0] - sum(corner)) % 2 == 0 else -1
            count += sign * table[index]
        return count

    def _read_back(self, t: int, view: _StepView, demand: StepDemand) -> None:
        """Partial sums of a revisited output tile from L2 into the PEs starting the run (the
        first PE of each group sharing a tile; the others start from 0)."""
        lo, hi = view.lo["output"], view.hi["output"]
        first, _ = _first_rows(np.concatenate([lo, hi]).T)
        tiles = _Tiles(view.active[first], lo[:, first].T, (hi - lo + 1)[:, first].T,
                       np.zeros((len(first), self.acc.values.shape[1]), dtype=self.acc_dtype),
                       np.zeros((len(first), self.acc.macs.shape[1]), dtype=np.int64))
        missing = np.zeros(len(first), dtype=np.int64)
        for rows, index in self._tile_indices(tiles):
            valid = self.l2_out_valid.flat[index]
            missing[rows] = (~valid).sum(axis=1)
            width = index.shape[1]
            tiles.values[rows, :width] = np.where(valid, self.l2_out.flat[index], 0)
            tiles.macs[rows, :width] = np.where(valid, self.l2_out_macs.flat[index], 0)
            self.l2_out_unread.flat[index] = False
        for row in np.nonzero(missing)[0].tolist():
            self.log.add("missing_partial_sums",
                         f"step {t}: {_pes([int(tiles.pes[row])])} read back {_sums(int(missing[row]))} of "
                         f"output {self._tile_text(tiles, row)} that L2 does not hold (read as 0)",
                         int(missing[row]))
        self.seeds[t] = tiles
        self._agree(f"step {t}: partial-sum words read back from L2", int(np.prod(tiles.extent, axis=1).sum()),
                    demand.readback.words)

    def _mac(self, view: _StepView, members: np.ndarray, zeroed: dict[str, dict[int, np.ndarray]]) -> None:
        """PEs ``members`` (positions in the step's active PEs, windows of one shape) compute
        their boxes from their own L1 copies and accumulate into their accumulators."""
        shape = tuple(int(e) for e in view.extent[:, members[0]])
        pes = view.active[members]
        gathered = []
        for role in OPERAND_ROLES:
            # element (i_1..i_n) of a window is at sum over tensor axes of coefficient * i_d
            # from the box's first element
            values = self.dram[role]
            tstrides = self.dram_strides[role]
            first = (view.lo[role][:, members] * tstrides[:, None]).sum(axis=0)
            steps = [sum(c * int(tstrides[a]) for a, c in terms) for terms in self.plans[role]]
            window = values.reshape(-1)[first.reshape((-1,) + (1,) * len(shape)) + _box_offsets(shape, tuple(steps))]
            for row, pe in enumerate(pes.tolist() if zeroed[role] else []):
                zero = zeroed[role].get(pe)
                if zero is not None:  # words read as 0 into this PE's copy
                    strides = [sum(c * zero.strides[a] for a, c in terms) for terms in self.plans[role]]
                    window[row][as_strided(zero, shape=shape, strides=strides, writeable=False)] = 0
            gathered.append(window)
        a, b = gathered
        products = a + b if self.adds else a * b
        sums = products.sum(axis=tuple(1 + i for i in self.red_axes), dtype=self.acc_dtype)
        sums = sums.transpose([0] + [1 + i for i in self.out_perm]).reshape(len(pes), -1)
        width = sums.shape[1]
        self.acc.values[pes, :width] += sums
        self.acc.macs[pes, :width] += prod(e for i, e in enumerate(shape) if i in self.red_axes)
        first = (view.start[:, members] * self.cov_strides[:, None]).sum(axis=0)
        index = (first.reshape((-1,) + (1,) * len(shape)) + _box_offsets(shape, tuple(self.cov_strides.tolist()))).reshape(-1)
        flat = self.coverage.reshape(-1)
        if int(flat[index].max()) + len(pes) > np.iinfo(flat.dtype).max:  # a count would overflow
            self.coverage = self.coverage.astype(np.promote_types(flat.dtype, np.int16 if flat.itemsize == 1 else
                                                                  np.int32 if flat.itemsize == 2 else np.int64))
            flat = self.coverage.reshape(-1)
        np.add.at(flat, index, flat.dtype.type(1))

    def _store(self, t: int, members: Callable[[int], list[int]], tiles: _Tiles) -> None:
        """Write drained output tiles (rows, in order; ``members(row)``: the PEs a row came
        from) into L2. Tiles that overlap are written one after another."""
        indices = list(self._tile_indices(tiles))
        flat = np.sort(np.concatenate([index.reshape(-1) for _, index in indices]))
        if (flat[1:] == flat[:-1]).any():
            for row in range(len(tiles.pes)):
                one = slice(row, row + 1)
                self._store(t, partial(_nth, members, row), _Tiles(tiles.pes[one], tiles.lo[one], tiles.extent[one],
                                                                   tiles.values[one], tiles.macs[one]))
            return
        lost = np.zeros(len(tiles.pes), dtype=np.int64)
        lost_macs = np.zeros(len(tiles.pes), dtype=np.int64)
        for rows, index in indices:
            old_macs = self.l2_out_macs.flat[index]
            gone = self.l2_out_unread.flat[index] & (old_macs > 0)
            lost[rows], lost_macs[rows] = gone.sum(axis=1), np.where(gone, old_macs, 0).sum(axis=1)
        for row in np.nonzero(lost)[0].tolist():
            why = "" if self.reduction_network else " (no reduction network: partial sums of one output are not added)"
            self.log.add("overwritten",
                         f"step {t}: the drain of {_pes(members(row))} overwrote {_sums(int(lost[row]))} of output "
                         f"{self._tile_text(tiles, row)} in L2 that were never read back{why}; they held "
                         f"{int(lost_macs[row])} MACs", int(lost_macs[row]))
        for rows, index in indices:
            width = index.shape[1]
            self.l2_out.flat[index] = tiles.values[rows, :width]
            self.l2_out_macs.flat[index] = tiles.macs[rows, :width]
            self.l2_out_valid.flat[index] = True
            self.l2_out_unread.flat[index] = True

    # ------------------------------------------------------------------ helpers
    def _tile_indices(self, tiles: _Tiles) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Per shape of output tile: (rows of ``tiles``, flat index into the output of each
        row's elements in the tile's own order: array (rows, elements))."""
        _, group = _first_rows(tiles.extent)
        for k in range(int(group.max()) + 1 if len(group) else 0):
            rows = np.nonzero(group == k)[0]
            shape = tuple(int(e) for e in tiles.extent[rows[0]])
            first = (tiles.lo[rows] * self.out_strides).sum(axis=1)
            yield rows, first[:, None] + _box_offsets(shape, tuple(self.out_strides.tolist())).reshape(1, -1)

    def _live_in_order(self) -> list[int]:
        """PEs holding an accumulator, in the order they started it."""
        live = np.nonzero(self.acc_live)[0]
        return live[np.argsort(self.acc_order[live], kind="stable")].tolist()

    def undrained(self) -> Iterator[tuple[int, str, int]]:
        """Accumulators never drained: (PE, output tile, MACs held), those still in a PE (in
        the order they started) then those whose drain never came (by step, then PE)."""
        for pe in self._live_in_order():
            yield pe, self._tile_text(self.acc, pe), int(self.acc.macs[pe].sum())
        for tiles in self.to_drain.values():
            for row, pe in enumerate(tiles.pes.tolist()):
                yield pe, self._tile_text(tiles, row), int(tiles.macs[row].sum())

    def _agree(self, what: str, functional: int, timed: int) -> None:
        if functional != timed:
            self.log.add("inconsistent", f"{what}: values moved {functional}, the timing model counts {timed}")

    def _region_text(self, lo, hi) -> str:
        names = [axis[0][0] for axis in self.nest.tensors["output"]]
        return "[" + ", ".join(f"{n}={a}" if a == b else f"{n}={a}..{b}" for n, a, b in zip(names, lo, hi)) + "]"

    def _tile_text(self, tiles: _Tiles, row: int) -> str:
        lo = tiles.lo[row].tolist()
        return self._region_text(lo, [a + e - 1 for a, e in zip(lo, tiles.extent[row].tolist())])
