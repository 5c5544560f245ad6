"""What each iteration case moves: words into and out of the PEs, and L2 tiles from DRAM.

For every case of the flattened nest (see :mod:`accelsim.mapping.geometry`) this evaluates
the representative step once: each PE's new operand words (its box minus the part it already
holds from the last step it worked in), one transfer per distinct (box, previous box) where the
network multicasts, the output tiles drained at the end of a run over a tile (one per distinct
tile after spatial reduction) and partial sums read back at the start of a revisited tile. The
same evaluation at level 0, with the level-0 sub-units as the PEs and the union of their boxes
over the innermost level-0 loops as one L2 tile, gives the DRAM traffic.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import cast

import numpy as np

from accelsim.mapping.compile import CompiledMapping, Level
from accelsim.mapping.geometry import (
    Cases,
    LoopClass,
    boxes,
    columns,
    enumerate_cases,
    last_active,
    loop_classes,
    loop_points,
    member_units,
    pe_index,
    previous_active,
    volume,
)
from accelsim.workload.operators import OPERAND_ROLES


@dataclass(frozen=True)
class StepCases:
    """Per case (arrays of length ``len(cases)``): MACs, the busiest PE's MACs, operand packets
    sent (one per multicast group) and words delivered per tensor, partial sums read back, and
    output packets drained after reduction (one per reduction group) and words read out of
    the PEs (``drain_pe_words``)."""

    cases: Cases
    classes: list[list[LoopClass]]  # per loop, the classes ``cases`` combines
    macs: np.ndarray
    max_pe_macs: np.ndarray
    sent: dict[str, Packets]
    delivered_words: dict[str, np.ndarray]
    readback: Packets
    drained: Packets
    drain_pe_words: np.ndarray
    drains: np.ndarray  # bool: the step ends a run over an output tile in which PEs worked
    readback_source_steps: np.ndarray  # steps back to the drain whose partial sums are read back
    l1_required_words: int
    drain_max_group: np.ndarray  # PEs in the largest spatial reduction group drained
    busiest_port_words: np.ndarray  # words on the distribution network's busiest root port


@dataclass(frozen=True)
class Packets:
    """Transfers of one kind in every case: the case of each packet and its words."""

    rows: np.ndarray
    words: np.ndarray
    n: int

    def total(self) -> np.ndarray:
        """Words per case."""
        return np.bincount(self.rows, weights=self.words, minlength=self.n).astype(np.int64)


def _packets(rows: np.ndarray, keys: np.ndarray, words: np.ndarray, n: int, merge: bool) -> Packets:
    """One packet per distinct (case, key) entry (``merge``: a multicast), else per entry."""
    if merge and len(rows):  # rows as opaque byte strings: one 1-D sort instead of a lexicographic one
        table = np.ascontiguousarray(np.column_stack([rows, keys]).astype(np.int64))
        _, first = np.unique(table.view(np.dtype((np.void, table.itemsize * table.shape[1]))).ravel(),
                             return_index=True)
        rows, words = rows[first], words[first]
    return Packets(rows.astype(np.int64), words.astype(np.int64), n)


def _port_words(load: np.ndarray, rows: np.ndarray, keys: np.ndarray, words: np.ndarray, port: np.ndarray,
                multicast: bool) -> None:
    """Add to ``load`` (cases, ports) the words of entries (case ``rows``, box ``keys``, PE on
    ``port``): a multicast group once per port it reaches, else every entry."""
    if multicast and len(rows):
        _, first = np.unique(np.column_stack([rows, keys, port]), axis=0, return_index=True)
        rows, words, port = rows[first], words[first], port[first]
    np.add.at(load, (rows, port), words)


def _largest_group(rows: np.ndarray, keys: np.ndarray, n: int) -> np.ndarray:
    """Per case, the most entries sharing one key (the largest reduction group; 0: none)."""
    out = np.zeros(n, dtype=np.int64)
    if len(rows):
        _, inverse, counts = np.unique(np.column_stack([rows, keys]), axis=0, return_inverse=True,
                                       return_counts=True)
        np.maximum.at(out, rows, counts[inverse.ravel()])
    return out


def output_structure(cm: CompiledMapping) -> tuple[int, list[int]]:
    """(index of the innermost loop that changes the output tile or -1, reduction loops
    outside it): a run over one output tile is one iteration of the loops inside."""
    flags = cm.loop_kind_flags()
    out_loops = [i for i, (out, _) in enumerate(flags) if out]
    innermost = max(out_loops) if out_loops else -1
    return innermost, [i for i in range(max(innermost, 0)) if flags[i][1]]


def _previous_visit(trips: list[int], rep: np.ndarray, revisits: np.ndarray, inner: list[int],
                    outer_red: list[int]) -> np.ndarray:
    """Per case (rows of ``rep``, indices of loops of ``trips`` trips) that ``revisits`` its
    output tile, how many iterations back the previous visit's run (over the ``inner`` loops)
    ended: the same output loop indices with the outer reduction loops one earlier; 0 elsewhere."""
    stride = [prod(trips[i + 1:]) for i in range(len(trips))]
    run = prod(trips[i] for i in inner)
    source = np.zeros(len(rep), dtype=np.int64)
    for c in np.nonzero(revisits)[0]:
        j = max(i for i in outer_red if rep[c, i] > 0)
        back = stride[j] - sum((trips[i] - 1) * stride[i] for i in outer_red if i > j)
        source[c] = back - run + 1
    return source


def step_cases(cm: CompiledMapping, multicast: bool, ports: int = 1, block_pes: int = 1) -> StepCases:
    """Evaluate every iteration case of the whole nest once; with ``ports`` > 1 also the words
    of each case on the busiest root port of the distribution network (port p feeds PEs
    ``[p * block_pes, (p + 1) * block_pes)``)."""
    points = loop_points(cm)
    classes = [loop_classes(p, loop.trips) for p, loop in zip(points, cm.loops)]
    cases = enumerate_cases(classes)
    n, loops = cases.rep.shape
    pes = member_units(cm)
    cur = boxes(cm, columns(cases.rep), pes)
    act = cur.active
    macs_pe = np.ones(act.shape, dtype=np.int64)
    for d in cm.nest.dims:
        macs_pe *= cur.extent[d]
    footprint = cast(np.ndarray, sum(np.where(act, volume(*cur.tensor(cm.nest, r)), 0) for r in cm.nest.tensors))
    prev_idx, has_prev = previous_active(cm, cases.rep, pes, points)
    prev = boxes(cm, prev_idx, pes)
    prev_valid = has_prev[:, None] & act

    port_of = np.asarray(pe_index(cm, pes)).ravel() // block_pes if ports > 1 else np.zeros(len(pes[0][0]), dtype=np.int64)
    port_words = np.zeros((n, ports), dtype=np.int64)
    sent, delivered = {}, {}
    for role in OPERAND_ROLES:
        lo, hi = cur.tensor(cm.nest, role)
        plo, phi = prev.tensor(cm.nest, role)
        inter = volume(np.maximum(lo, plo), np.minimum(hi, phi))
        new = np.where(act, volume(lo, hi) - np.where(prev_valid, inter, 0), 0)
        rows, pe = np.nonzero(new > 0)
        pv = prev_valid[rows, pe][:, None]
        keys = np.concatenate([lo[:, rows, pe].T, hi[:, rows, pe].T,
                               np.where(pv, plo[:, rows, pe].T, -1), np.where(pv, phi[:, rows, pe].T, -1)], axis=1)
        words = new[rows, pe]
        sent[role] = _packets(rows, keys, words, n, multicast)
        _port_words(port_words, rows, keys, words, port_of[pe], multicast)
        delivered[role] = new.sum(axis=1)

    # output runs: the loops inside the innermost output loop sweep one output tile
    innermost, outer_red = output_structure(cm)
    inner = list(range(innermost + 1, loops))
    run_start = (cases.rep[:, inner] == 0).all(axis=1)
    trips = np.array([cm.loops[i].trips - 1 for i in inner], dtype=np.int64)
    drains = (cases.rep[:, inner] == trips).all(axis=1)
    revisit = (cases.rep[:, outer_red] > 0).any(axis=1) if outer_red else np.zeros(n, dtype=bool)

    olo, ohi = cur.tensor(cm.nest, "output")
    rows, pe = np.nonzero(act & (run_start & revisit)[:, None])
    okeys = np.concatenate([olo[:, rows, pe].T, ohi[:, rows, pe].T], axis=1)
    readback = _packets(rows, okeys, volume(olo, ohi)[rows, pe], n, True)
    _port_words(port_words, rows, okeys, volume(olo, ohi)[rows, pe], port_of[pe], True)

    # a PE drains if it worked in the run: by the prefix property, iff it works at its start
    start_rep = cases.rep.copy()
    start_rep[:, inner] = 0
    first = boxes(cm, columns(start_rep), pes)
    slo, shi = first.tensor(cm.nest, "output")
    svol = volume(slo, shi)
    rows, pe = np.nonzero(first.active & drains[:, None])
    skeys = np.concatenate([slo[:, rows, pe].T, shi[:, rows, pe].T], axis=1)
    drained = _packets(rows, skeys, svol[rows, pe], n, True)
    drain_pe_words = _packets(rows, skeys, svol[rows, pe], n, False).total()
    drain_group = _largest_group(rows, skeys, n)
    drains &= drain_pe_words > 0  # a run in which no PE worked drains nothing
    # a read-back waits for the drain that ended the previous visit to its tile
    source = _previous_visit([loop.trips for loop in cm.loops], cases.rep, readback.total() > 0, inner, outer_red)
    return StepCases(
        cases, classes, macs_pe.sum(axis=1), macs_pe.max(axis=1, initial=0), sent, delivered, readback,
        drained, drain_pe_words, drains, source, int(footprint.max(initial=0)), drain_group,
        port_words.max(axis=1),
    )


# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TileCases:
    """L2 tiles: per tile case, DRAM words read per tensor (output: partial sums read back)
    and output words written back; ``tile_loops`` level-0 loops step from tile to tile."""

    cases: Cases
    read_words: dict[str, np.ndarray]
    write_words: np.ndarray
    read_runs: np.ndarray  # contiguous pieces the reads form in DRAM (all tensors)
    write_runs: np.ndarray
    partial_sums_source: np.ndarray  # tiles back to the write-back whose partial sums are read
    tile_loops: int
    l2_required_words: int  # the largest tile of one level-0 iteration: what L2 must hold at least


def _top_level(cm: CompiledMapping) -> CompiledMapping:
    """Level 0 alone, one 'PE' per level-0 sub-unit: the schedule as L2 sees it."""
    l0 = cm.levels[0]
    loops = tuple(loop for loop in cm.loops if loop.level == 0)
    return CompiledMapping(cm.layer, cm.nest, (Level(l0.units, 1, l0.directives),), loops, l0.units, cm.source)


def _tile_boxes(top: CompiledMapping, tile_idx: np.ndarray, k: int, points: list[list[int]]) -> dict[str, tuple]:
    """Union box per tensor of the tiles whose first ``k`` loop indices are the rows of
    ``tile_idx``: lowest corner at the inner loops' first iteration, highest at each unit's
    last one (indices only grow along a loop)."""
    n = tile_idx.shape[0]
    units = [np.arange(top.used_pes, dtype=np.int64)[None, :]]
    zeros = [np.zeros((n, 1), dtype=np.int64)] * (len(top.loops) - k)
    low = boxes(top, columns(tile_idx) + zeros, units)
    high_idx = last_active(top, columns(tile_idx) + zeros, k, units, points)
    high = boxes(top, high_idx, units)
    big = np.iinfo(np.int64).max
    out = {}
    for role in top.nest.tensors:
        lo = np.where(low.active[None], low.tensor(top.nest, role)[0], big).min(axis=2)
        hi = np.where(high.active[None], high.tensor(top.nest, role)[1], -1).max(axis=2)
        out[role] = (lo, hi)
    return out


def _delta_runs(cm: CompiledMapping, role: str, box: tuple, previous: tuple, has_prev: np.ndarray) -> np.ndarray:
    """Contiguous DRAM pieces of the part of each tile box outside the previous one (the whole
    box where they differ along more than one axis), in the tensor's channel-last layout: the
    innermost axes a box spans whole merge into one piece with the next one out."""
    nest = cm.nest
    full = nest.extents(role)
    lo, hi = box
    plo, phi = previous
    out = np.zeros(lo.shape[1], dtype=np.int64)
    for i in range(lo.shape[1]):
        ext = (hi[:, i] - lo[:, i] + 1).tolist()
        differ = [a for a in range(len(ext)) if lo[a, i] != plo[a, i] or hi[a, i] != phi[a, i]]
        if has_prev[i] and len(differ) == 1:
            a = differ[0]
            ext[a] -= max(0, min(hi[a, i], phi[a, i]) - max(lo[a, i], plo[a, i]) + 1)
        runs, whole = 1, True
        for axis in reversed(nest.layout(role)):
            if whole:
                whole = ext[axis] == full[axis]
            else:
                runs *= ext[axis]
        out[i] = runs
    return out


def tile_cases(cm: CompiledMapping, l2_capacity_words: int) -> TileCases:
    """L2 holds the union of as many innermost level-0 loops as fit ``l2_capacity_words``;
    the level-0 loops outside them step from one L2 tile to the next."""
    top = _top_level(cm)
    points = loop_points(top)
    classes = [loop_classes(p, loop.trips) for p, loop in zip(points, top.loops)]

    def tiles(k: int) -> tuple[Cases, dict[str, tuple], np.ndarray]:
        cases = enumerate_cases(classes[:k])
        boxes = _tile_boxes(top, cases.rep, k, points)
        return cases, boxes, cast(np.ndarray, sum(volume(*b) for b in boxes.values()))

    loops0 = len(top.loops)
    finest = tiles(loops0)  # one level-0 iteration per tile: the smallest tiles
    for k in range(loops0 + 1):
        cases, boxes, words = finest if k == loops0 else tiles(k)
        if words.max() <= l2_capacity_words or k == loops0:
            break
    n = len(cases)
    rep = cases.rep
    nonzero = rep > 0
    has_prev = nonzero.any(axis=1)
    prev = rep.copy()
    if k:
        innermost = k - 1 - np.argmax(nonzero[:, ::-1], axis=1)
        for row in np.nonzero(has_prev)[0]:
            j = innermost[row]
            prev[row, j] -= 1
            prev[row, j + 1:] = [top.loops[i].trips - 1 for i in range(j + 1, k)]
    prev_boxes = _tile_boxes(top, prev, k, points)
    reads = {}
    runs = np.zeros(n, dtype=np.int64)
    for role in OPERAND_ROLES:
        lo, hi = boxes[role]
        plo, phi = prev_boxes[role]
        inter = np.where(has_prev, volume(np.maximum(lo, plo), np.minimum(hi, phi)), 0)
        reads[role] = volume(lo, hi) - inter
        runs += np.where(reads[role] > 0, _delta_runs(cm, role, (lo, hi), (plo, phi), np.asarray(has_prev)), 0)
    view = CompiledMapping(cm.layer, cm.nest, top.levels, top.loops[:k], top.num_pes, cm.source)
    innermost_out, outer_red = output_structure(view)
    inner = list(range(innermost_out + 1, k))
    start = (rep[:, inner] == 0).all(axis=1)
    end = (rep[:, inner] == np.array([top.loops[i].trips - 1 for i in inner], dtype=np.int64)).all(axis=1)
    revisit = (rep[:, outer_red] > 0).any(axis=1) if outer_red else np.zeros(n, dtype=bool)
    ovol = volume(*boxes["output"])
    reads["output"] = np.where(start & revisit, ovol, 0)
    # partial sums read back from DRAM wait for the write-back of the previous visit's tile
    source = _previous_visit([loop.trips for loop in top.loops[:k]], rep, reads["output"] > 0, inner, outer_red)
    oruns = _delta_runs(cm, "output", boxes["output"], boxes["output"], np.zeros(n, dtype=bool))
    runs += np.where(start & revisit, oruns, 0)
    return TileCases(cases, reads, np.where(end, ovol, 0), runs, np.where(end, oruns, 0), source, k,
                     int(finest[2].max()))
