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

Alongside every value travels a count of the MACs it contains, so the report can tell MACs
never executed from MACs executed but lost on the way. Every transfer's word count is compared
with the timing model's own count for the same transfer; a difference is reported as an
inconsistency (the values would then not ride on the timed transfers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import cast

import numpy as np
from numpy.lib.stride_tricks import as_strided

from accelsim.functional.operands import Operands
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import loop_indices, step_boxes, tensor_box
from accelsim.mapping.demand import ScheduleProfile, StepDemand
from accelsim.mapping.runs import output_loop_structure
from accelsim.workload.operators import OPERAND_ROLES

MAX_LOGGED_PER_KIND = 5  # problem messages kept per kind (all are counted)


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


@dataclass
class _Accumulator:
    """One PE's output tile during a run: origin, partial sums, MACs held per element."""

    lo: list[int]
    values: np.ndarray
    macs: np.ndarray


_L1Copy = tuple[list[int], list[int], np.ndarray]  # box (lo, hi per tensor axis) and its values


@dataclass
class _StepView:
    """One step's active PEs, each one's box per tensor ((lo, hi) lists) and its window
    ((starts, extents) per loop-nest dimension)."""

    active: list[int]
    boxes: dict[str, dict[int, tuple[list[int], list[int]]]]
    window: dict[int, tuple[list[int], list[int]]]


class DatapathValues:
    """Receives the engine's value hooks and moves operand and partial-sum values with them."""

    def __init__(self, cm: CompiledMapping, operands: Operands, reduction_network: bool):
        self.cm = cm
        self.nest = nest = cm.nest
        self.operands = operands
        self.reduction_network = reduction_network
        self.dims = list(nest.dims)
        self.red_dims = set(nest.reduction_dims)
        self.acc_dtype = operands.accumulator
        steps = cm.steps
        self.sb = step_boxes(cm, 0, steps)
        self.boxes = {role: tensor_box(nest, role, self.sb.start, self.sb.extent) for role in nest.tensors}
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
        # DRAM
        self.dram = {"input": operands.input, "weight": operands.weight}
        out_shape = nest.extents("output")
        self.dram_out: np.ndarray = np.zeros(out_shape, dtype=self.acc_dtype)
        self.dram_out_macs = np.zeros(out_shape, dtype=np.int64)
        self.dram_out_written = np.zeros(out_shape, dtype=bool)
        # L2: operand tiles by index (mask, values); one output array with its state
        self.l2: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {role: {} for role in OPERAND_ROLES}
        self.l2_prev_tile: int | None = None
        self.l2_out: np.ndarray = np.zeros(out_shape, dtype=self.acc_dtype)
        self.l2_out_macs = np.zeros(out_shape, dtype=np.int64)
        self.l2_out_valid = np.zeros(out_shape, dtype=bool)
        self.l2_out_unread = np.zeros(out_shape, dtype=bool)
        # L1: per PE its latest operand copy (lo, hi, values) per tensor, each step's copies
        # until the step computes, the partial sums read back for it, its accumulator
        self.l1: dict[str, dict[int, _L1Copy]] = {role: {} for role in OPERAND_ROLES}
        self.pending: dict[int, dict[int, dict[str, _L1Copy]]] = {}
        self.seeds: dict[tuple[int, int], _Accumulator] = {}
        self.acc: dict[int, _Accumulator] = {}
        self.to_drain: dict[int, list[tuple[int, _Accumulator]]] = {}
        # MAC coverage of the iteration space: times each MAC was executed
        self.coverage = np.zeros(tuple(nest.dims.values()), dtype=np.int32)
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
            lo, hi = self.tile_boxes[role][0][:, tile], self.tile_boxes[role][1][:, tile]
            if (hi < lo).any():  # no sub-unit works in this tile: L2 keeps what it had
                if prev is not None:
                    self.l2[role][tile] = self.l2[role][prev]
                continue
            valid = True
            source = self.dram[role]
            mask = np.zeros(source.shape, dtype=bool)
            values = np.zeros_like(source)
            region = _slices(lo, hi)
            mask[region] = True
            values[region] = source[region]
            fetched = int(np.prod(hi - lo + 1))
            if prev is not None:
                plo, phi = self.tile_boxes[role][0][:, prev], self.tile_boxes[role][1][:, prev]
                ov = _overlap(lo, hi, plo, phi)
                if ov is not None:
                    kept = _slices(*ov)
                    pmask, pvalues = self.l2[role][prev]
                    mask[kept] = pmask[kept]
                    values[kept] = pvalues[kept]
                    fetched -= int(np.prod(ov[1] - ov[0] + 1))
            self._agree(f"L2 tile {tile}: {role} words fetched from DRAM", fetched, td.read_words[role])
            self.l2[role][tile] = (mask, values)
        if valid:
            self.l2_prev_tile = tile
            for role in OPERAND_ROLES:  # tiles before the previous one have left L2
                for old in [i for i in self.l2[role] if i < tile - 1]:
                    del self.l2[role][old]
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
        copies = self.pending.setdefault(t, {pe: {} for pe in view.active})
        for role in OPERAND_ROLES:
            boxes = view.boxes[role]
            words = sum(self._deliver(role, t, pe, tile, *boxes[pe], copies[pe]) for pe in view.active)
            self._agree(f"step {t}: {role} words written into L1s", words, getattr(demand, role).dest_words)
        if self.run_start[t] and self.revisit[t]:
            self._read_back(t, view, demand)

    def computed(self, t: int) -> None:
        copies = self.pending.pop(t)
        view = self.views.pop(t)
        if self.run_start[t]:
            for pe, acc in self.acc.items():
                self.log.add("discarded", f"step {t}: {_pes([pe])} still held partial sums of output "
                             f"{self._box_text(acc)} at the start of a new output run; discarded",
                             int(acc.macs.sum()))
            self.acc = {}
        for pe, operands in copies.items():
            self._mac(t, pe, operands, *view.window[pe], view.boxes["output"][pe][0])
        if self.run_end[t] and self.acc:
            self.to_drain[t] = sorted(self.acc.items())
            self.acc = {}

    def drained(self, t: int, demand: StepDemand) -> None:
        groups: dict[tuple, list[tuple[int, _Accumulator]]] = {}
        for pe, acc in self.to_drain.pop(t, []):
            groups.setdefault((tuple(acc.lo), acc.values.shape), []).append((pe, acc))
        words = 0
        for members in groups.values():
            words += members[0][1].values.size
            if self.reduction_network:
                total = _Accumulator(members[0][1].lo, cast(np.ndarray, sum(a.values for _, a in members)),
                                     cast(np.ndarray, sum(a.macs for _, a in members)))
                self._store(t, [pe for pe, _ in members], total)
            else:
                for pe, acc in members:
                    self._store(t, [pe], acc)
        self._agree(f"step {t}: output tiles drained", len(groups), demand.drain_groups)
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

    # ------------------------------------------------------------------ transfers
    def _view(self, t: int) -> _StepView:
        """Step ``t``'s active PEs, their boxes and windows as plain Python lists."""
        view = self.views.get(t)
        if view is None:
            active = np.nonzero(self.sb.active[t])[0]
            pes = active.tolist()
            boxes = {role: dict(zip(pes, zip(lo[:, t, active].T.tolist(), hi[:, t, active].T.tolist())))
                     for role, (lo, hi) in self.boxes.items()}
            starts = np.stack([self.sb.start[d][t, active] for d in self.dims], axis=1).tolist()
            extents = np.stack([self.sb.extent[d][t, active] for d in self.dims], axis=1).tolist()
            view = self.views[t] = _StepView(pes, boxes, dict(zip(pes, zip(starts, extents))))
        return view

    def _deliver(self, role: str, t: int, pe: int, tile: int, lo: list[int], hi: list[int], copy: dict) -> int:
        """Fill PE ``pe``'s L1 with its ``role`` box of step ``t``; return the words sent."""
        prev = self.l1[role].get(pe)
        if prev is not None and prev[0] == lo and prev[1] == hi:  # all of it is resident
            copy[role] = prev
            return 0
        region = _slices(lo, hi)
        live = self.l2[role].get(tile)
        if live is None:  # the tile never arrived in L2
            values = np.zeros([b - a + 1 for a, b in zip(lo, hi)], dtype=self.dram[role].dtype)
            absent = np.ones(values.shape, dtype=bool)
        else:
            values = live[1][region].copy()
            absent = ~live[0][region]
        words = values.size
        if prev is not None:
            plo, phi, pvalues = prev
            olo, ohi = [max(a, b) for a, b in zip(lo, plo)], [min(a, b) for a, b in zip(hi, phi)]
            if all(a <= b for a, b in zip(olo, ohi)):
                here = tuple(slice(a - low, b - low + 1) for a, b, low in zip(olo, ohi, lo))
                values[here] = pvalues[tuple(slice(a - low, b - low + 1) for a, b, low in zip(olo, ohi, plo))]
                absent[here] = False
                words -= prod(b - a + 1 for a, b in zip(olo, ohi))
        if absent.any():
            values[absent] = 0
            self.log.add("not_resident", f"step {t}: {_pes([pe])} needed {int(absent.sum())} {role} words "
                         f"that L2 tile {tile} does not hold (read as 0)", int(absent.sum()))
        self.l1[role][pe] = copy[role] = (lo, hi, values)
        return words

    def _read_back(self, t: int, view: _StepView, demand: StepDemand) -> None:
        """Partial sums of a revisited output tile from L2 into the PEs starting the run."""
        seen: set[tuple] = set()
        words = 0
        for pe in view.active:
            lo, hi = view.boxes["output"][pe]
            key = tuple(lo + hi)
            if key in seen:
                continue  # the group's first PE seeds the accumulation
            seen.add(key)
            region = _slices(lo, hi)
            valid = self.l2_out_valid[region]
            words += valid.size
            if not valid.all():
                self.log.add("missing_partial_sums",
                             f"step {t}: {_pes([pe])} read back {_sums(int((~valid).sum()))} of "
                             f"output {self._region_text(lo, hi)} that L2 does not hold (read as 0)",
                             int((~valid).sum()))
            self.seeds[(t, pe)] = _Accumulator(list(lo), np.where(valid, self.l2_out[region], 0).astype(self.acc_dtype),
                                               np.where(valid, self.l2_out_macs[region], 0))
            self.l2_out_unread[region] = False
        self._agree(f"step {t}: partial-sum words read back from L2", words, demand.readback.words)

    def _mac(self, t: int, pe: int, operands: dict, starts: list[int], extents: list[int], olo: list[int]) -> None:
        """PE ``pe`` computes its box of step ``t`` from its own L1 copies."""
        # each operand seen over the PE's window: element (i_1..i_n) of the window is at
        # sum over tensor axes of coefficient * i_d from the L1 copy's first element (which
        # holds the window's start), so a strided view reads it without copying
        gathered = []
        for role in OPERAND_ROLES:
            values = operands[role][2]
            strides = [sum(c * values.strides[a] for a, c in terms) for terms in self.plans[role]]
            gathered.append(as_strided(values, shape=extents, strides=strides, writeable=False))
        a, b = gathered
        products = a + b if self.adds else a * b
        partial = products.sum(axis=self.red_axes, dtype=self.acc_dtype)
        partial = partial.transpose(self.out_perm)
        self.coverage[tuple(slice(s, s + e) for s, e in zip(starts, extents))] += 1
        acc = self.acc.get(pe)
        if acc is not None and (acc.lo != olo or acc.values.shape != partial.shape):
            self.log.add("discarded", f"step {t}: {_pes([pe])} moved from output {self._box_text(acc)} to "
                         f"another output tile without draining; its partial sums were discarded",
                         int(acc.macs.sum()))
            acc = None
        if acc is None:
            acc = self.seeds.pop((t, pe), None) or _Accumulator(
                list(olo), np.zeros(partial.shape, dtype=self.acc_dtype), np.zeros(partial.shape, dtype=np.int64))
            self.acc[pe] = acc
        acc.values += partial
        acc.macs += prod(e for i, e in enumerate(extents) if i in self.red_axes)

    def _store(self, t: int, pes: list[int], acc: _Accumulator) -> None:
        """Write a drained output tile into L2."""
        region = _slices(acc.lo, [a + e - 1 for a, e in zip(acc.lo, acc.values.shape)])
        lost = self.l2_out_unread[region] & (self.l2_out_macs[region] > 0)
        if lost.any():
            why = "" if self.reduction_network else " (no reduction network: partial sums of one output are not added)"
            self.log.add("overwritten",
                         f"step {t}: the drain of {_pes(pes)} overwrote {_sums(int(lost.sum()))} of output "
                         f"{self._box_text(acc)} in L2 that were never read back{why}; they held "
                         f"{int(self.l2_out_macs[region][lost].sum())} MACs",
                         int(self.l2_out_macs[region][lost].sum()))
        self.l2_out[region] = acc.values
        self.l2_out_macs[region] = acc.macs
        self.l2_out_valid[region] = True
        self.l2_out_unread[region] = True

    # ------------------------------------------------------------------ helpers
    def _agree(self, what: str, functional: int, timed: int) -> None:
        if functional != timed:
            self.log.add("inconsistent", f"{what}: values moved {functional}, the timing model counts {timed}")

    def _region_text(self, lo, hi) -> str:
        names = [axis[0][0] for axis in self.nest.tensors["output"]]
        return "[" + ", ".join(f"{n}={a}" if a == b else f"{n}={a}..{b}" for n, a, b in zip(names, lo, hi)) + "]"

    def _box_text(self, acc: _Accumulator) -> str:
        return self._region_text(acc.lo, [a + e - 1 for a, e in zip(acc.lo, acc.values.shape)])
