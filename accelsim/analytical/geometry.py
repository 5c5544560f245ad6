"""Where every PE's box lies at a given loop iteration, and which iterations behave alike.

This is the analytical model's own reading of a :class:`CompiledMapping` (it shares no code
with the simulator's step enumeration): a PE's box at loop indices ``idx`` is found by walking
the cluster levels, and the indices of each loop are partitioned into *classes* of iterations
that move and compute the same amounts (MAESTRO's initial / steady / edge cases). Along one loop,
behaviour changes only where a window of some PE becomes partial or empty (a ragged edge, a
last fold that leaves sub-units idle), so a class is either one such breakpoint (or the first
or last index) or the run of indices strictly between two of them; every member of a run is a
translate of its representative (the run's first index), whose predecessor lies in the same
run or is the breakpoint before it.

Activity is a *prefix* property: with the outer loops fixed, the iterations of a loop in which
a PE works are its first ``a`` ones (windows are clipped only at their parent's end), so the
last iteration before ``t`` in which a PE worked is found by one decrement, not a search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from math import ceil

import numpy as np

from accelsim.mapping.compile import CompiledMapping

Index = list[np.ndarray]  # one array per loop, broadcastable to (cases, pes)


@dataclass(frozen=True)
class Boxes:
    """Boxes of ``pes`` at some iterations: start and extent per dimension, arrays (cases,
    pes); extents are 0 where the PE is idle."""

    start: dict[str, np.ndarray]
    extent: dict[str, np.ndarray]
    active: np.ndarray
    _tensors: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def tensor(self, cm: CompiledMapping, role: str) -> tuple[np.ndarray, np.ndarray]:
        """lo/hi index of tensor ``role`` per axis: arrays (axes, cases, pes)."""
        if role not in self._tensors:
            lo, hi = [], []
            for axis in cm.nest.tensors[role]:
                lo.append(sum(c * self.start[d] for d, c in axis))
                hi.append(sum(c * (self.start[d] + self.extent[d] - 1) for d, c in axis))
            self._tensors[role] = (np.stack(lo), np.stack(hi))
        return self._tensors[role]


def volume(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Words of boxes given per axis (axes first)."""
    return np.prod(np.clip(hi - lo + 1, 0, None), axis=0)


def boxes_at(cm: CompiledMapping, idx: Index, pes: np.ndarray) -> Boxes:
    """Every PE's box at loop indices ``idx`` (one array per loop, shape (cases, 1) or
    (cases, pes)). A sub-unit works on window ``fold * units + i`` of its level."""
    cases = max((np.shape(i)[0] for i in idx), default=1)
    shape = (cases, len(pes))
    loop_of = {(loop.level, d): i for i, loop in enumerate(cm.loops) for d in loop.dims}
    start = {d: np.zeros(shape, dtype=np.int64) for d in cm.nest.dims}
    extent = {d: np.full(shape, n, dtype=np.int64) for d, n in cm.nest.dims.items()}
    active = np.ones(shape, dtype=bool)
    span = cm.used_pes
    for li, level in enumerate(cm.levels):
        local = pes % span
        active &= (local < level.units * level.unit_pes)[None, :]
        unit = (local // level.unit_pes)[None, :]
        span = level.unit_pes
        fi = loop_of.get((li, level.spatial[0].dim)) if level.spatial else None
        window = (idx[fi] if fi is not None else 0) * level.units + unit
        active &= window < level.spatial_windows
        for ld in level.directives:
            if ld.kind == "temporal":
                ti = loop_of.get((li, ld.dim))
                if ti is None:
                    continue
                offset = idx[ti] * ld.offset
            else:
                offset = window * ld.offset
            start[ld.dim] = start[ld.dim] + offset
            extent[ld.dim] = np.clip(np.minimum(ld.size, extent[ld.dim] - offset), 0, None)
    for d in cm.nest.dims:
        active &= extent[d] > 0
    extent = {d: np.where(active, e, 0) for d, e in extent.items()}
    return Boxes(start, extent, active)


# ------------------------------------------------------------------------------------------
def _parent_extents(cm: CompiledMapping) -> list[dict[str, set[int]]]:
    """Per level, the extents a parent tile of each dimension can have (full or ragged)."""
    sets = {d: {n} for d, n in cm.nest.dims.items()}
    per_level = []
    for level in cm.levels:
        per_level.append({d: set(s) for d, s in sets.items()})
        for ld in level.directives:
            new: set[int] = set()
            for e in sets[ld.dim]:
                if ld.offset == 0:
                    new.add(min(ld.size, e))
                    continue
                if e >= ld.size:
                    new.add(ld.size)
                rest = e - _first_short_window(e, ld.size, ld.offset) * ld.offset
                if rest > 0:
                    new.add(min(rest, ld.size))
            sets[ld.dim] = new
    return per_level


def _first_short_window(extent: int, size: int, offset: int) -> int:
    """Index of the first window (size, advancing by offset) not wholly inside ``extent``."""
    return (extent - size) // offset + 1 if extent >= size else 0


def loop_points(cm: CompiledMapping) -> list[list[int]]:
    """Per loop, sorted indices where behaviour may change: 0, the last index, and every index
    at which some PE's window becomes partial or empty (or a fold leaves sub-units idle)."""
    parents = _parent_extents(cm)
    points = []
    for loop in cm.loops:
        level = cm.levels[loop.level]
        extents = parents[loop.level]
        found = {0, loop.trips - 1}
        if loop.kind == "temporal":
            ld = next(d for d in level.directives if d.dim == loop.dims[0])
            for e in extents[ld.dim]:
                found |= {_first_short_window(e, ld.size, ld.offset), ceil(e / ld.offset)}
        else:
            windows = {level.spatial_windows}
            for ld in level.spatial:
                if ld.offset > 0:
                    for e in extents[ld.dim]:
                        windows |= {_first_short_window(e, ld.size, ld.offset), ceil(e / ld.offset)}
            for w in windows:
                found |= {w // level.units, w // level.units + 1}
        points.append(sorted(p for p in found if 0 <= p < loop.trips))
    return points


@dataclass(frozen=True)
class LoopClass:
    """Indices ``first .. first + count - 1`` of one loop that behave alike."""

    first: int
    count: int


def loop_classes(points: list[int], trips: int) -> list[LoopClass]:
    """Each point alone, and the run strictly between consecutive points."""
    classes = []
    for p, nxt in zip(points, points[1:] + [trips]):
        classes.append(LoopClass(p, 1))
        if nxt - p > 1:
            classes.append(LoopClass(p + 1, nxt - p - 1))
    return classes


@dataclass(frozen=True)
class Cases:
    """The iteration cases of a nest: representative indices (cases, loops), occurrences, and
    for every case its class number along each loop (cases, loops)."""

    rep: np.ndarray
    count: np.ndarray
    klass: np.ndarray

    def __len__(self) -> int:
        return len(self.count)


def enumerate_cases(classes: list[list[LoopClass]]) -> Cases:
    """All combinations of per-loop classes."""
    combos = list(product(*(range(len(c)) for c in classes)))
    klass = np.array(combos, dtype=np.int64).reshape(len(combos), len(classes))
    rep = np.array([[classes[i][k].first for i, k in enumerate(combo)] for combo in combos],
                   dtype=np.int64).reshape(len(combos), len(classes))
    count = np.array([int(np.prod([classes[i][k].count for i, k in enumerate(combo)], dtype=np.int64))
                      for combo in combos], dtype=np.int64)
    return Cases(rep, count, klass)


def columns(rep: np.ndarray) -> Index:
    """A (cases, loops) index matrix as one (cases, 1) array per loop."""
    return [rep[:, i:i + 1] for i in range(rep.shape[1])]


def last_active(cm: CompiledMapping, idx: Index, first_free: int, pes: np.ndarray,
                points: list[list[int]]) -> Index:
    """Set loops ``first_free ..`` (in order) to the last iteration in which each PE works,
    given the loops before them; ``idx`` supplies the fixed outer loops. Activity is constant
    between consecutive points and a prefix, so only each run's last index is tried."""
    cases = max((np.shape(i)[0] for i in idx), default=1)
    out = [np.broadcast_to(i, (cases, len(pes))).copy() for i in idx]
    for li in range(first_free, len(cm.loops)):
        trips = cm.loops[li].trips
        ends = sorted({p - 1 for p in points[li] if p > 0} | {trips - 1})
        best = np.full((cases, len(pes)), -1, dtype=np.int64)
        for end in ends:
            trial = out[:li] + [np.full((cases, len(pes)), end, dtype=np.int64)] + \
                [np.zeros((cases, len(pes)), dtype=np.int64)] * (len(cm.loops) - li - 1)
            best = np.where(boxes_at(cm, trial, pes).active, end, best)
        out[li] = np.maximum(best, 0)
    return out


def previous_active(cm: CompiledMapping, rep: np.ndarray, pes: np.ndarray,
                    points: list[list[int]]) -> tuple[Index, np.ndarray]:
    """For each case's representative step t: the indices of the last step before t in which
    each PE worked (valid for PEs working at t), and whether t has a predecessor at all."""
    n, loops = rep.shape
    nonzero = rep > 0
    has_prev = nonzero.any(axis=1)
    innermost = np.where(has_prev, loops - 1 - np.argmax(nonzero[:, ::-1], axis=1), -1) if loops else \
        np.full(n, -1)
    out = [np.broadcast_to(rep[:, i:i + 1], (n, len(pes))).copy() for i in range(loops)]
    for j in range(loops):
        rows = np.nonzero(innermost == j)[0]
        if len(rows) == 0:
            continue
        idx = [o[rows] for o in out[:j]] + [out[j][rows] - 1]
        filled = last_active(cm, idx + [np.zeros((len(rows), len(pes)), dtype=np.int64)] * (loops - j - 1),
                             j + 1, pes, points)
        for i in range(loops):
            out[i][rows] = filled[i]
    return out, has_prev

