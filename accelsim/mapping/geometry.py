"""The geometry of a mapping: which box of the iteration space every sub-unit holds at every
loop index, and which loop indices and which sub-units behave alike.

This is mapping semantics, read the same way by every model (the simulator's profile, the
analytical model, functional execution, traces); each keeps its own cost arithmetic.

**Steps and loop indices.** A step is one iteration of the flattened nest of a
:class:`~accelsim.mapping.compile.CompiledMapping` (``cm.loops``, outermost first); step ``s``
has index ``(s // stride_i) % trips_i`` in loop ``i``.

**Sub-units and PEs.** At cluster level ``l`` a PE belongs to sub-unit ``u_l`` in
``[0, units_l)``; a PE is identified by its tuple ``(u_0, ..., u_{L-1})`` and its index is
``sum(u_l * unit_pes_l)``. PEs that a non-dividing ``Cluster`` size leaves over belong to no
tuple and never work.

**Boxes.** Sub-unit ``u`` of level ``l`` works on window ``fold * units_l + u`` of the level's
spatial maps (a level without SpatialMap has one window: only its first sub-unit works) and on
the current window of each temporal map; windows are clipped by the parent tile (ragged
edges) and a sub-unit whose window is empty in some dimension is idle. A PE's box is the
intersection over the levels: a start and an extent per loop-nest dimension (extent 0: idle).

**Classes of loop indices.** Along one loop, behaviour changes only where some window becomes
partial or empty (for any parent extent the level can see) or a last fold leaves sub-units
idle; each such index (and the first and last) is a class of its own, and the run strictly
between two of them is one class whose members are translates of each other. A *case* is one
class per loop; all steps of a case move and compute the same amounts.

**Classes of sub-units.** Along one level, a sub-unit's behaviour at every step depends only on
comparisons ``fold * units + u < X`` for a few thresholds ``X`` (window counts, first partial
window, for every parent extent), so cutting ``[0, units)`` at ``X mod units`` gives intervals
of sub-units that behave identically at every step. A *PE class* is one interval per level;
its PEs are translates of each other: same extents, same activity, same reuse.

**Activity is a prefix.** With the outer loops fixed, the iterations of a loop in which a
sub-unit works are its first ``a`` ones (windows are clipped only at their parent's end), so
the last step before ``t`` in which a PE worked is found by one decrement, not a search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import product
from math import ceil, prod

import numpy as np

from accelsim.mapping.compile import CompiledMapping, Level
from accelsim.workload.loopnest import Axis
from accelsim.workload.ops import LoopNest

Index = list[np.ndarray]  # one int64 array per loop, broadcastable to (cases, n)
Units = list[np.ndarray]  # one int64 array per level, broadcastable to (cases, n)


# ------------------------------------------------------------------------------------------
# loops and steps
def loop_strides(cm: CompiledMapping) -> list[int]:
    """Steps between consecutive iterations of each loop (outermost first)."""
    return [prod(loop.trips for loop in cm.loops[i + 1:]) for i in range(len(cm.loops))]


def loop_indices(cm: CompiledMapping, steps: np.ndarray) -> list[np.ndarray]:
    """Index of every loop at each of ``steps`` (1-D int64 array)."""
    return [(steps // s) % loop.trips for s, loop in zip(loop_strides(cm), cm.loops)]


def step_loop_indices(cm: CompiledMapping, step: int) -> list[int]:
    """Index of every loop at one step."""
    return [(step // s) % loop.trips for s, loop in zip(loop_strides(cm), cm.loops)]


def columns(rep: np.ndarray) -> Index:
    """A (cases, loops) index matrix as one (cases, 1) array per loop."""
    return [rep[:, i:i + 1] for i in range(rep.shape[1])]


# ------------------------------------------------------------------------------------------
# PEs and sub-units
def unit_indices(cm: CompiledMapping, pes: np.ndarray) -> tuple[Units, np.ndarray]:
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


def member_units(cm: CompiledMapping) -> Units:
    """The sub-unit tuples of every member PE, in PE order: one (1, PEs) array per level."""
    units, member = unit_indices(cm, np.arange(cm.used_pes, dtype=np.int64))
    return [u[member][None, :] for u in units]


def pe_index(cm: CompiledMapping, units: Units) -> np.ndarray:
    """PE index of sub-unit tuples (the inverse of :func:`unit_indices` for members)."""
    return sum((u * level.unit_pes for u, level in zip(units, cm.levels)), np.zeros(1, dtype=np.int64))


# ------------------------------------------------------------------------------------------
# boxes
@dataclass(frozen=True)
class Boxes:
    """Boxes of some PEs at some steps: start and extent per loop-nest dimension ``dims``,
    stacked as ``starts`` and ``extents`` (dims, *shape) (shape usually (cases, PEs));
    extents are 0 where the PE is idle."""

    dims: tuple[str, ...]
    starts: np.ndarray
    extents: np.ndarray
    active: np.ndarray
    _tensors: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def start(self) -> dict[str, np.ndarray]:
        """Start of each dimension (arrays of the boxes' shape)."""
        return dict(zip(self.dims, self.starts))

    @cached_property
    def extent(self) -> dict[str, np.ndarray]:
        """Extent of each dimension (arrays of the boxes' shape; 0 where idle)."""
        return dict(zip(self.dims, self.extents))

    def tensor(self, nest: LoopNest, role: str) -> tuple[np.ndarray, np.ndarray]:
        """lo/hi index of tensor ``role`` per axis: arrays (axes, *shape)."""
        if role not in self._tensors:
            self._tensors[role] = _stacked_tensor_box(nest, role, self.dims, self.starts, self.extents)
        return self._tensors[role]

    def volume(self) -> np.ndarray:
        """MACs of each box (0 where idle)."""
        return self.extents.prod(axis=0)


def tensor_box(nest: LoopNest, role: str, start: dict[str, np.ndarray],
               extent: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """lo/hi index per axis of tensor ``role`` over boxes given per dimension: (axes, *shape)."""
    dims = tuple(start)
    return _stacked_tensor_box(nest, role, dims, np.stack([np.asarray(start[d], dtype=np.int64) for d in dims]),
                               np.stack([np.asarray(extent[d], dtype=np.int64) for d in dims]))


@dataclass(frozen=True)
class _AxisTerms:
    """A tensor's axis indices as terms of the dimensions' (stacked in ``dims`` order): each
    axis's first term (``first`` dimension positions, ``scale`` their coefficients (axes, 1),
    None where all are 1) and the further terms ``(axis, dimension position, coefficient)``."""

    first: np.ndarray
    scale: np.ndarray | None
    more: tuple[tuple[int, int, int], ...]


@lru_cache(maxsize=256)
def _axis_terms(axes: tuple[Axis, ...], dims: tuple[str, ...]) -> _AxisTerms:
    """The terms of tensor axes ``axes`` (cached: the few tensors of a run's operators are
    asked for at every box); an axis without terms reads as 0 times the first dimension."""
    pos = {d: i for i, d in enumerate(dims)}
    first, scale, more = [], [], []
    for a, axis in enumerate(axes):
        terms = list(axis) or [(dims[0], 0)]
        first.append(pos[terms[0][0]])
        scale.append(terms[0][1])
        more += [(a, pos[d], c) for d, c in terms[1:]]
    return _AxisTerms(np.array(first, dtype=np.intp),
                      None if all(c == 1 for c in scale) else np.array(scale, dtype=np.int64).reshape(len(axes), 1),
                      tuple(more))


def _stacked_tensor_box(nest: LoopNest, role: str, dims: tuple[str, ...], starts: np.ndarray,
                        extents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tensor_box` of boxes stacked per dimension (dims, *shape): each axis index is
    a sum of coefficient x dimension terms, gathered (first terms) and added (the rest)."""
    terms = _axis_terms(nest.tensors[role], dims)
    flat = starts.reshape(len(dims), -1)
    corners = []
    for point in (flat, flat + extents.reshape(len(dims), -1) - 1):
        index = point[terms.first]
        if terms.scale is not None:
            index *= terms.scale
        for a, d, c in terms.more:
            index[a] += c * point[d]
        corners.append(index.reshape((len(terms.first),) + starts.shape[1:]))
    return corners[0], corners[1]


def volume(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Words of boxes given per axis (axes first); 0 for empty boxes."""
    return np.prod(np.maximum(hi - lo + 1, 0), axis=0)


@dataclass(frozen=True)
class _LevelPlan:
    """What :func:`boxes` does at one level: the loop of its fold (None: one fold), its
    sub-units and window count, the dimensions its directives move (index of the dimension,
    of the loop whose index moves it or None for the sub-unit's window, and the offset), the
    window size of each dimension it clips ((dims, 1): the largest int64 where a directive
    neither moves nor clips) and the dimensions its directives clip."""

    fold_loop: int | None
    units: int
    windows: int
    moves: tuple[tuple[int, int | None, int], ...]
    sizes: np.ndarray
    clipped: tuple[int, ...]


@dataclass(frozen=True)
class _BoxPlan:
    """:func:`boxes`'s reading of a mapping, once per mapping: the dimensions, their extents
    ((dims, 1)) and the levels' plans."""

    dims: tuple[str, ...]
    extents: np.ndarray
    levels: tuple[_LevelPlan, ...]


_PLANS: dict[int, tuple[CompiledMapping, _BoxPlan]] = {}
PLAN_CACHE_LIMIT = 256  # mappings whose box plans are kept (the mapping is held with its plan)


def _box_plan(cm: CompiledMapping) -> _BoxPlan:
    """The plan of ``cm``'s boxes, cached by identity (each level has one directive per
    dimension, so a level's directives move and clip distinct dimensions together)."""
    found = _PLANS.get(id(cm))
    if found is not None and found[0] is cm:
        return found[1]
    loop_of = _loop_of(cm)
    dims = tuple(cm.nest.dims)
    pos = {d: i for i, d in enumerate(dims)}
    big = np.iinfo(np.int64).max
    levels = []
    for li, level in enumerate(cm.levels):
        spatial = level.spatial
        moves: list[tuple[int, int | None, int]] = []
        sizes = [big] * len(dims)
        for ld in level.directives:
            d = pos[ld.dim]
            if sizes[d] != big or any(m[0] == d for m in moves):
                raise AssertionError(f"level {li} has two directives on {ld.dim}")
            if ld.kind == "temporal":
                ti = loop_of.get((li, ld.dim))
                if ti is None:
                    continue  # one window starting at 0 covering the extent
                moves.append((d, ti, ld.offset))
            elif ld.offset:
                moves.append((d, None, ld.offset))
            sizes[d] = ld.size
        levels.append(_LevelPlan(loop_of.get((li, spatial[0].dim)) if spatial else None, level.units,
                                 level.spatial_windows, tuple(moves),
                                 np.array(sizes, dtype=np.int64).reshape(len(dims), 1),
                                 tuple(d for d in range(len(dims)) if sizes[d] != big)))
    plan = _BoxPlan(dims, np.array(list(cm.nest.dims.values()), dtype=np.int64).reshape(len(dims), 1), tuple(levels))
    if len(_PLANS) >= PLAN_CACHE_LIMIT:
        _PLANS.clear()
    _PLANS[id(cm)] = (cm, plan)
    return plan


def boxes(cm: CompiledMapping, idx: Index, units: Units, padded: bool = False,
          pad_dims: frozenset[str] | None = None) -> Boxes:
    """Boxes of sub-unit tuples ``units`` (one array per level) at loop indices ``idx`` (one
    array per loop); all arrays broadcast to one shape. ``padded``: a window clipped at its
    parent's end keeps its full size (the zero padding of a ragged tile, as STONNE sends it),
    in the dimensions ``pad_dims`` (None: every dimension); a sub-unit whose window the
    padding reaches works on padding. All dimensions are computed together, stacked (dims,
    *shape)."""
    shape = np.broadcast_shapes(*(np.shape(i) for i in idx), *(np.shape(u) for u in units))
    plan = _box_plan(cm)
    stacked = (len(plan.dims),) + shape
    column = (len(plan.dims),) + (1,) * len(shape)
    starts = np.zeros(stacked, dtype=np.int64)
    extents = np.empty(stacked, dtype=np.int64)
    extents[...] = plan.extents.reshape(column)
    active = np.ones(shape, dtype=bool)
    for li, level in enumerate(plan.levels):
        window = (idx[level.fold_loop] if level.fold_loop is not None else 0) * level.units + units[li]
        active &= window < level.windows
        if level.moves:
            offsets = np.zeros(stacked, dtype=np.int64)
            for d, loop, offset in level.moves:
                offsets[d] = (window if loop is None else idx[loop]) * offset
            starts += offsets
            extents -= offsets
        sizes = level.sizes.reshape(column)
        np.minimum(extents, sizes, out=extents)
        np.maximum(extents, 0, out=extents)
        if padded:
            pad = [d for d in level.clipped if pad_dims is None or plan.dims[d] in pad_dims]
            if pad:
                worked = extents[pad] > 0
                active &= worked.all(axis=0)
                extents[pad] = np.where(worked, sizes[pad], 0)
    active &= extents.min(axis=0, initial=1) > 0
    extents *= active
    return Boxes(plan.dims, starts, extents, active)


def output_dims(nest: LoopNest) -> frozenset[str]:
    """The loop-nest dimensions that index the output tensor (those of no reduction)."""
    return frozenset(d for axis in nest.tensors["output"] for d, _ in axis)


def pe_boxes(cm: CompiledMapping, idx: Index, pes: np.ndarray) -> Boxes:
    """Boxes of the PEs with indices ``pes`` (1-D) at loop indices ``idx``: (cases, PEs)."""
    units, member = unit_indices(cm, pes)
    b = boxes(cm, idx, [u[None, :] for u in units])
    active = b.active & member[None, :]
    return Boxes(b.dims, b.starts, b.extents * active, active)


def pe_extent_bound(cm: CompiledMapping) -> dict[str, int]:
    """The largest extent a PE's box can have in each loop-nest dimension: the smallest window
    size any level gives the dimension (a box is the intersection of the levels' windows)."""
    return {d: min([n] + [ld.size for level in cm.levels for ld in level.directives if ld.dim == d])
            for d, n in cm.nest.dims.items()}


@dataclass
class StepBoxes:
    """Boxes of steps ``first .. first+count-1`` for some PEs: arrays (count, PEs)."""

    first: int
    start: dict[str, np.ndarray]
    extent: dict[str, np.ndarray]
    active: np.ndarray

    @property
    def count(self) -> int:
        return self.active.shape[0]


def step_boxes(cm: CompiledMapping, first: int, count: int, pes: np.ndarray | None = None) -> StepBoxes:
    """Boxes for ``count`` steps starting at ``first`` (all used PEs unless ``pes`` given)."""
    if pes is None:
        pes = np.arange(cm.used_pes, dtype=np.int64)
    steps = np.arange(first, first + count, dtype=np.int64)
    b = pe_boxes(cm, [i[:, None] for i in loop_indices(cm, steps)], pes)
    shape = (count, len(pes))
    return StepBoxes(first, {d: np.broadcast_to(s, shape) for d, s in b.start.items()},
                     {d: np.broadcast_to(e, shape) for d, e in b.extent.items()}, np.broadcast_to(b.active, shape))


def _loop_of(cm: CompiledMapping) -> dict[tuple[int, str], int]:
    return {(loop.level, d): i for i, loop in enumerate(cm.loops) for d in loop.dims}


# ------------------------------------------------------------------------------------------
# classes of loop indices
def parent_extents(cm: CompiledMapping) -> list[dict[str, set[int]]]:
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
                rest = e - first_short_window(e, ld.size, ld.offset) * ld.offset
                if rest > 0:
                    new.add(min(rest, ld.size))
            sets[ld.dim] = new
    return per_level


def first_short_window(extent: int, size: int, offset: int) -> int:
    """Index of the first window (size, advancing by offset) not wholly inside ``extent``."""
    return (extent - size) // offset + 1 if extent >= size else 0


def _window_thresholds(level: Level, extents: dict[str, set[int]]) -> set[int]:
    """Window indices at which a sub-unit of ``level`` changes behaviour: the level's window
    count and, for every spatial map and parent extent, its first partial and first empty
    window."""
    found = {level.spatial_windows}
    for ld in level.spatial:
        if ld.offset > 0:
            for e in extents[ld.dim]:
                found |= {first_short_window(e, ld.size, ld.offset), ceil(e / ld.offset)}
    return found


def loop_points(cm: CompiledMapping) -> list[list[int]]:
    """Per loop, sorted indices where behaviour may change: 0, the last index, and every index
    at which some PE's window becomes partial or empty (or a fold leaves sub-units idle)."""
    parents = parent_extents(cm)
    points = []
    for loop in cm.loops:
        level = cm.levels[loop.level]
        extents = parents[loop.level]
        found = {0, loop.trips - 1}
        if loop.kind == "temporal":
            ld = next(d for d in level.directives if d.dim == loop.dims[0])
            for e in extents[ld.dim]:
                found |= {first_short_window(e, ld.size, ld.offset), ceil(e / ld.offset)}
        else:
            for w in _window_thresholds(level, extents):
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


def case_count(cm: CompiledMapping) -> int:
    """The number of iteration cases of ``cm`` (the product of its loops' class counts): what
    the analytical model evaluates once each and the simulator profiles once each."""
    return prod(len(loop_classes(points, loop.trips)) for points, loop in zip(loop_points(cm), cm.loops))


def every_index_classes(cm: CompiledMapping) -> list[list[LoopClass]]:
    """One class per loop index: for mappings whose windows overlap or leave gaps
    (``--unchecked``), where runs of indices are no longer translates of each other."""
    return [[LoopClass(i, 1) for i in range(loop.trips)] for loop in cm.loops]


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
    """All combinations of per-loop classes, in lexicographic order (the last loop's class
    fastest, as ``itertools.product`` gives them)."""
    sizes = [len(c) for c in classes]
    n = prod(sizes)
    klass = np.indices(sizes, dtype=np.int64).reshape(len(sizes), n).T
    rep = np.zeros((n, len(sizes)), dtype=np.int64)
    count = np.ones(n, dtype=np.int64)
    for i, loop in enumerate(classes):
        rep[:, i] = np.array([c.first for c in loop], dtype=np.int64)[klass[:, i]]
        count *= np.array([c.count for c in loop], dtype=np.int64)[klass[:, i]]
    return Cases(rep, count, klass)


# ------------------------------------------------------------------------------------------
# classes of sub-units
@dataclass(frozen=True)
class UnitClasses:
    """The member PEs of a mapping partitioned into classes of translates.

    ``first`` and ``size`` (classes, levels): each class is the product over levels of the
    sub-unit intervals ``[first, first + size)``; ``interval`` (classes, levels) numbers the
    interval within its level (0, 1, ... left to right); ``count`` (classes,) = product of
    ``size``. ``first`` is the class's representative sub-unit tuple."""

    first: np.ndarray
    size: np.ndarray
    interval: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.count)

    def units(self) -> Units:
        """The representatives as one (1, classes) array per level."""
        return [self.first[None, :, lv] for lv in range(self.first.shape[1])]


def level_intervals(cm: CompiledMapping, exact: bool = False) -> list[list[tuple[int, int]]]:
    """Per level, the sub-unit intervals ``(first, size)`` that behave alike (``exact``: one
    sub-unit per interval, for mappings whose windows overlap or leave gaps)."""
    parents = parent_extents(cm)
    out = []
    for level, extents in zip(cm.levels, parents):
        if exact:
            cuts = set(range(level.units + 1))
        else:
            cuts = {0, level.units} | {x % level.units for x in _window_thresholds(level, extents)}
        edges = sorted(cuts)
        out.append([(a, b - a) for a, b in zip(edges, edges[1:])])
    return out


def unit_classes(cm: CompiledMapping, exact: bool = False) -> UnitClasses:
    """All PE classes: every combination of one interval per level."""
    per_level = level_intervals(cm, exact)
    combos = list(product(*(range(len(iv)) for iv in per_level)))
    interval = np.array(combos, dtype=np.int64).reshape(len(combos), len(per_level))
    first = np.array([[per_level[lv][k][0] for lv, k in enumerate(c)] for c in combos], dtype=np.int64)
    size = np.array([[per_level[lv][k][1] for lv, k in enumerate(c)] for c in combos], dtype=np.int64)
    first = first.reshape(interval.shape)
    size = size.reshape(interval.shape)
    return UnitClasses(first, size, interval, size.prod(axis=1))


def unit_velocity(cm: CompiledMapping, role: str) -> np.ndarray:
    """(levels, axes): how far each index axis of tensor ``role`` moves when a sub-unit index
    of a level grows by one (sum over the level's spatial maps of coefficient x offset)."""
    axes = cm.nest.tensors[role]
    out = np.zeros((len(cm.levels), len(axes)), dtype=np.int64)
    for lv, level in enumerate(cm.levels):
        for ld in level.spatial:
            for a, axis in enumerate(axes):
                out[lv, a] += sum(c * ld.offset for d, c in axis if d == ld.dim)
    return out


# ------------------------------------------------------------------------------------------
# activity along the nest
def last_active(cm: CompiledMapping, idx: Index, first_free: int | np.ndarray, units: Units,
                points: list[list[int]]) -> Index:
    """Set loops ``first_free ..`` (in order) to the last iteration in which each sub-unit tuple
    works, given the loops before them; ``idx`` supplies the fixed outer loops (arrays
    broadcastable to (cases, n)). ``first_free`` may differ by case (an array (cases,); the
    indices ``idx`` gives at and after a case's first free loop are not read). Activity is
    constant between consecutive points and a prefix, so only each run's last index is tried
    (all of them at once, along a leading axis)."""
    if isinstance(first_free, int):
        shape = np.broadcast_shapes(*(np.shape(i) for i in idx[:first_free]), *(np.shape(u) for u in units))
        out = [np.broadcast_to(i, shape).copy() for i in idx[:first_free]]
        out += [np.zeros(shape, dtype=np.int64) for _ in range(first_free, len(cm.loops))]
        _settle_last_active(cm, out, np.full(shape[:1], first_free, dtype=np.int64), units, points)
        return out
    shape = np.broadcast_shapes(*(np.shape(i) for i in idx), *(np.shape(u) for u in units), (len(first_free), 1))
    out = [np.broadcast_to(i, shape).copy() for i in idx]
    for li, o in enumerate(out):
        o[first_free <= li] = 0
    _settle_last_active(cm, out, first_free, units, points)
    return out


def _settle_last_active(cm: CompiledMapping, out: Index, free_from: np.ndarray, units: Units,
                        points: list[list[int]]) -> None:
    """:func:`last_active` in place on ``out`` (one array per loop, (rows, ...) each) with the
    first free loop given per row (``free_from``, (rows,)); a row's loops from its first free
    one on must be 0. Loop by loop, the rows whose free loops have begun are settled together
    (the loops after the current one are 0 for them)."""
    loops = len(cm.loops)
    zero = np.zeros((1,) * max(len(out[0].shape) if out else 1, 1), dtype=np.int64)
    for li in range(int(free_from.min(initial=loops)), loops):
        sel = free_from <= li
        rows = None if sel.all() else np.nonzero(sel)[0]
        if rows is not None and len(rows) == 0:
            continue
        fixed = out[:li] if rows is None else [o[rows] for o in out[:li]]
        trips = cm.loops[li].trips
        ends = np.array(sorted({p - 1 for p in points[li] if p > 0} | {trips - 1}), dtype=np.int64)
        trial = fixed + [ends.reshape((len(ends),) + zero.shape)] + [zero] * (loops - li - 1)
        active = boxes(cm, trial, units).active  # (ends, rows, ...)
        # the last end at which each tuple works (index 0 where it works at none)
        last = len(ends) - 1 - np.argmax(active[::-1], axis=0)
        settled = np.where(active.any(axis=0), ends[last], 0)
        if rows is None:
            out[li][...] = settled  # in place: the rows keep their shape where the trial's is smaller
        else:
            out[li][rows] = settled


def previous_active(cm: CompiledMapping, rep: np.ndarray, units: Units,
                    points: list[list[int]]) -> tuple[Index, np.ndarray]:
    """For each row of ``rep`` (cases, loops) and each sub-unit tuple of ``units`` (arrays
    (1, n)): the loop indices of the last step before the case's step in which the tuple
    worked (meaningful for tuples working at the case's step), and whether the case's step has
    a predecessor at all (not the first step). The step before has the innermost non-zero
    index one lower and the loops inside it free (they are 0 in ``rep``)."""
    n, loops = rep.shape
    nonzero = rep > 0
    has_prev = np.asarray(nonzero.any(axis=1), dtype=bool)
    innermost = np.where(has_prev, loops - 1 - np.argmax(nonzero[:, ::-1], axis=1), -1) if loops else \
        np.full(n, -1)
    prev = rep - (innermost[:, None] == np.arange(loops)[None, :])
    return last_active(cm, columns(prev), np.where(has_prev, innermost + 1, loops), units, points), has_prev
