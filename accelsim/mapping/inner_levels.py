"""The storage levels inside a PE, between its MACs and its L1 (register files): which loops of
a step each level holds, and the words each moves.

In a step a PE computes every MAC of its box (:mod:`accelsim.mapping.geometry`); inside the PE
those MACs run as a loop nest over the box's dimensions, the **intra-step order**: the
dimensions that index the output, outermost, then the reduction dimensions, each group in the
operator's order (for a convolution ``N K Y' X' C R S``), so a partial sum stays in the
innermost level across its whole reduction. An inner level holds the innermost loops of that
nest, whole (its *tile*: every kept tensor's box over those loops); the loops outside it step
its tile. The default rule, the counterpart of L2's, gives each level the most innermost loops
whose tile of the tensors it keeps fits its size (doubled when double-buffered), and never
fewer than a level below it that keeps one of the same tensors; :class:`InnerTiling` records the choice per level, computed on
the largest box a PE holds (the first step's first PE, where every window is full); smaller
(ragged) boxes run the same loops with clipped extents. A mapping may pin the nest instead
(:class:`~accelsim.mapping.compile.InnerPins`, from Timeloop's loops at the levels inside a
PE): L1's own loops outermost, then what each register file adds, so a dimension may be split
over several loops; a loop steps its dimension by the trips of that dimension's loops inside it.

Counting (words), per level and tensor it keeps; a tensor a level does not keep bypasses it
(its words move between the nearest levels above and below that keep it):

- **fills**: words written in from the level above: the first tile, then at each step of an
  outer loop the part of the new tile outside the previous one (a tile does not outlive its
  step: each step starts with empty register files, a conservative bound where consecutive
  steps share data), except for an operand the level holds **whole** (no loop outside it
  indexes the operand: its tile is the step's footprint), which it keeps across steps as L1
  does: its fills are L1's writes of that operand. An output word enters and leaves once per step (the reduction loops are
  innermost), read from the level above even at a run's first step, as L1 counts a read per
  MAC.
- **reads** of an operand: the fills of the level below (the MACs read one word of each
  operand per MAC from the innermost level keeping it); of the output: the level below's
  fills plus the words written back to the level above.
- **writes**: fills, plus for the output the level below's write-backs (one update per MAC at
  the innermost level keeping it).

L1 is then read by the outermost inner level's fills instead of once per MAC (and written by
its output write-backs instead of once per MAC); L2, DRAM, cycles and every other count are
unchanged. Timing: the register files are taken as not limiting (they serve their MACs every
cycle and refill from L1 while the MACs work), so cycles are those of the three outer levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Mapping, Sequence

import numpy as np

from accelsim.errors import MappingError
from accelsim.hw.spec import HardwareSpec, StorageLevelSpec
from accelsim.mapping.compile import CompiledMapping, InnerPins, PinnedLoop
from accelsim.mapping.geometry import boxes, columns, enumerate_cases, every_index_classes, loop_classes, \
    loop_points, unit_classes
from accelsim.workload.ops import LoopNest


@dataclass(frozen=True)
class InnerLevelTiling:
    """One inner level's share of the intra-step nest: ``held`` the innermost loops (outermost
    first) its tile spans, each named by its dimension, or by dimension and trips (``P28``)
    when a pinned nest splits the dimension over several loops; ``depth`` how many innermost
    loops that is; ``keeps`` the tensors it holds; ``tile_words`` its tile of those tensors on
    the largest box (one buffer)."""

    name: str
    keeps: tuple[str, ...]
    held: tuple[str, ...]
    tile_words: int
    depth: int
    whole: tuple[str, ...]  # the operands whose tile is a step's whole footprint (kept across steps)


@dataclass(frozen=True)
class InnerTiling:
    """The mapping inside a PE: the intra-step loop order (dimensions, outermost first), the
    pinned nest's loops on the largest box (outermost first; None: one whole loop per
    dimension in ``order``) and, innermost first, the loops each inner level holds."""

    order: tuple[str, ...]
    levels: tuple[InnerLevelTiling, ...]
    loops: tuple[PinnedLoop, ...] | None = None


@dataclass(frozen=True)
class InnerCounts:
    """What the inner levels of a layer move (words): per level, per tensor it keeps, reads
    and writes; per tensor, L1's reads and writes by the inner levels (``l1_read``,
    ``l1_write``: what replaces L1's per-MAC accesses; absent for a tensor no inner level
    keeps); and the layer's MACs they were counted over."""

    tiling: InnerTiling
    reads: dict[str, dict[str, int]]
    writes: dict[str, dict[str, int]]
    l1_read: dict[str, int]
    l1_write: dict[str, int]
    macs: int


def intra_step_order(nest: LoopNest) -> tuple[str, ...]:
    """The loop order inside a PE's step, outermost first: output dimensions, then reduction
    dimensions, each in the operator's order."""
    red = set(nest.reduction_dims)
    return tuple(d for d in nest.dims if d not in red) + nest.reduction_dims


def _tile_words(nest: LoopNest, role: str, loops: list[PinnedLoop], depth: int) -> int:
    return prod(nest.extents(role, _held_extents(nest, loops, depth)))


def _held_extents(nest: LoopNest, loops: list[PinnedLoop], depth: int) -> dict[str, int]:
    """Per dimension, the extent of the tile spanned by the ``depth`` innermost loops."""
    sizes = {d: 1 for d in nest.dims}
    for loop in loops[len(loops) - depth:] if depth else []:
        sizes[loop.dim] *= loop.trips
    return sizes


def _fail(cm: CompiledMapping, message: str, reason: str) -> MappingError:
    return MappingError(f"layer {cm.layer.name!r}: {message}", source=cm.source, reason=reason)


def _pinned_loops(cm: CompiledMapping, pins: InnerPins, largest: dict[str, int]) -> list[PinnedLoop]:
    """The pinned nest on the largest box, outermost first: the box's rest of a dimension no
    pinned loop covers (one loop each, in the intra-step order), then L1's own loops, then
    each register file's, outermost file first."""
    pinned = list(pins.outer) + [loop for lv in reversed(pins.levels) for loop in lv.loops]
    covered = {d: prod(loop.trips for loop in pinned if loop.dim == d) for d in cm.nest.dims}
    for loop in pinned:
        if loop.dim not in largest or loop.trips < 1:
            raise _fail(cm, f"pinned loop {loop.dim}{loop.trips}: expected a dimension of the layer "
                        f"({', '.join(cm.nest.dims)}) and trips of at least 1", "inner_pins")
    rest = []
    for d in intra_step_order(cm.nest):
        if largest[d] % covered[d]:
            raise _fail(cm, f"the pinned loops over {d} multiply to {covered[d]}, which does not divide its "
                        f"extent {largest[d]} in a PE's step", "inner_pins")
        if largest[d] > covered[d]:
            rest.append(PinnedLoop(d, largest[d] // covered[d]))
    return rest + pinned


def _box_loops(tiling: InnerTiling, extents: dict[str, int], cm: CompiledMapping) -> list[PinnedLoop]:
    """The nest of one box: the default's whole loops, or the pinned loops with a dimension's
    single loop clipped to the box (a dimension split over several loops must fill it)."""
    if tiling.loops is None:
        return [PinnedLoop(d, extents[d]) for d in tiling.order]
    count = {d: sum(loop.dim == d for loop in tiling.loops) for d in extents}
    out = []
    for loop in tiling.loops:
        if count[loop.dim] == 1:
            out.append(PinnedLoop(loop.dim, extents[loop.dim]))
            continue
        whole = prod(other.trips for other in tiling.loops if other.dim == loop.dim)
        if whole != extents[loop.dim]:
            raise _fail(cm, f"a PE's step spans {extents[loop.dim]} of {loop.dim}, where its pinned loops "
                        f"multiply to {whole} (a ragged step cannot split {loop.dim} over register files)",
                        "inner_pins")
        out.append(loop)
    return out


def step_nest(cm: CompiledMapping) -> list[PinnedLoop]:
    """The loop nest of the largest box a PE holds in a step (the first step's first PE),
    outermost first: ``cm.inner_pins``' loops (:func:`_pinned_loops`), else one whole loop per
    dimension in the intra-step order. An inner level of depth k holds the k innermost."""
    first = boxes(cm, [np.zeros((1, 1), dtype=np.int64) for _ in cm.loops],
                  [np.zeros((1, 1), dtype=np.int64) for _ in cm.levels])
    largest = {d: int(e.max()) for d, e in first.extent.items()}
    if cm.inner_pins is not None:
        return _pinned_loops(cm, cm.inner_pins, largest)
    return [PinnedLoop(d, largest[d]) for d in intra_step_order(cm.nest)]


def _label(loop: PinnedLoop, loops: Sequence[PinnedLoop]) -> str:
    return loop.dim if sum(other.dim == loop.dim for other in loops) == 1 else f"{loop.dim}{loop.trips}"


def inner_tiling(cm: CompiledMapping, hw: HardwareSpec) -> InnerTiling:
    """The per-level tiling of ``hw``'s inner levels for ``cm``: the loops ``cm.inner_pins``
    pins, else the default rule (see the module docstring). A level that cannot hold its tile
    (one word of each tensor it keeps, the loops a level below keeping one of its tensors
    holds, or its pinned loops) is a :class:`MappingError` (reason ``inner_overflow``) naming
    the level and the bytes; pins that do not name ``hw``'s register files innermost first or
    do not divide the step box are refused (reason ``inner_pins``). An operand no loop outside
    a level indexes is held whole: the level's tile of it is the step's footprint."""
    nest = cm.nest
    order = intra_step_order(nest)
    pins = cm.inner_pins
    if pins is not None and [p.name for p in pins.levels] != [lv.name for lv in hw.inner_levels]:
        raise _fail(cm, f"the mapping pins loops to {', '.join(p.name for p in pins.levels) or 'no register file'}; "
                    f"{hw.name} has {', '.join(lv.name for lv in hw.inner_levels) or 'none'} (innermost first)",
                    "inner_pins")
    loops = step_nest(cm)
    out: list[InnerLevelTiling] = []
    pinned_depth = 0
    for i, lv in enumerate(hw.inner_levels):
        # a level's tile of a tensor contains the tile of the level below that keeps it
        depth = max((t.depth for t in out if set(t.keeps) & set(lv.keeps)), default=0)
        if pins is not None:
            pinned_depth += len(pins.levels[i].loops)
            depth = pinned_depth
        buffers = 2 if lv.double_buffered else 1
        capacity = (lv.size_bytes or 0) // (hw.word_size_bytes * buffers)

        def words(k: int, lv: StorageLevelSpec = lv) -> int:
            return sum(_tile_words(nest, role, loops, k) for role in lv.keeps if role in nest.tensors)

        if words(depth) > capacity:
            need = words(depth) * hw.word_size_bytes * buffers
            raise _fail(cm, f"inner level {lv.name} ({lv.size_bytes} B) cannot hold its tile of "
                        f"{', '.join(lv.keeps)} ({need} B" + (", double-buffered" if buffers == 2 else "") + ")",
                        "inner_overflow")
        while pins is None and depth < len(loops) and words(depth + 1) <= capacity:
            depth += 1
        held = tuple(_label(loop, loops) for loop in loops[len(loops) - depth:]) if depth else ()
        keeps = tuple(r for r in lv.keeps if r in nest.tensors)
        moving = {loop.dim for loop in loops[:len(loops) - depth] if loop.trips > 1}
        whole = tuple(r for r in keeps if r != "output" and not moving & _indexing(nest, r))
        out.append(InnerLevelTiling(lv.name, keeps, held, words(depth), depth, whole))
    return InnerTiling(order, tuple(out), tuple(loops) if pins is not None else None)


def _indexing(nest: LoopNest, role: str) -> set[str]:
    """The dimensions that index tensor ``role``."""
    return {d for axis in nest.tensors[role] for d, c in axis if c}


def _fills(nest: LoopNest, role: str, loops: list[PinnedLoop], depth: int) -> int:
    """Words of ``role`` a level holding the ``depth`` innermost of ``loops`` (one box's
    nest, outermost first) fills over the box: the first tile, then per step of each outer
    loop the part of the new tile outside the old. A loop steps its dimension's index by the
    trips of that dimension's loops inside it; the outer loops inside it wrap to 0."""
    outer = loops[:len(loops) - depth]
    spans = nest.extents(role, _held_extents(nest, loops, depth))
    tile = prod(spans)

    def stride(j: int) -> int:
        return prod(loop.trips for loop in loops[j + 1:] if loop.dim == loops[j].dim)

    total = tile
    for j, loop in enumerate(outer):
        if loop.trips <= 1:
            continue
        steps = prod(o.trips for o in outer[:j]) * (loop.trips - 1)
        delta = {d: 0 for d in nest.dims}
        delta[loop.dim] += stride(j)
        for k in range(j + 1, len(outer)):
            delta[outer[k].dim] -= (outer[k].trips - 1) * stride(k)  # inner outer loops wrap from their last index to 0
        overlap = prod(max(0, span - abs(sum(c * delta[d] for d, c in axis)))
                       for span, axis in zip(spans, nest.tensors[role]))
        total += steps * (tile - overlap)
    return total


def box_fills(cm: CompiledMapping, tiling: InnerTiling, extents: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """Per inner level and tensor it keeps, the words it fills over one PE box of ``extents``
    (per dimension) in one step (:func:`_fills` over the box's nest; a tensor held whole counts
    as if it were not: :func:`level_accesses`' caller replaces it)."""
    loops = _box_loops(tiling, dict(extents), cm)
    return {lv.name: {r: _fills(cm.nest, r, loops, lv.depth) for r in lv.keeps} for lv in tiling.levels}


@dataclass(frozen=True)
class LevelTraffic:
    """Reads and writes (words) per inner level and tensor it keeps, and per tensor L1's reads
    and writes by the inner levels (absent for a tensor no inner level keeps)."""

    reads: dict[str, dict[str, int]]
    writes: dict[str, dict[str, int]]
    l1_read: dict[str, int]
    l1_write: dict[str, int]


def level_accesses(nest: LoopNest, tiling: InnerTiling, fills: Mapping[str, Mapping[str, int]], macs: int) -> LevelTraffic:
    """The reads and writes of every inner level from its ``fills`` (level -> tensor -> words)
    over ``macs`` MACs (a layer's, or one step's): see the module docstring."""
    reads: dict[str, dict[str, int]] = {lv.name: {} for lv in tiling.levels}
    writes: dict[str, dict[str, int]] = {lv.name: {} for lv in tiling.levels}
    l1_read: dict[str, int] = {}
    l1_write: dict[str, int] = {}
    for r in (r for r in ("input", "weight", "output") if r in nest.tensors):
        below = macs  # what the level below takes: the MACs' one access per MAC
        keepers = [lv for lv in tiling.levels if r in lv.keeps]
        for lv in keepers:
            f = fills[lv.name][r]
            if r == "output":
                reads[lv.name][r] = writes[lv.name][r] = below + f
            else:
                reads[lv.name][r], writes[lv.name][r] = below, f
            below = f
        if keepers:
            l1_read[r] = below
            if r == "output":
                l1_write[r] = below
    return LevelTraffic(reads, writes, l1_read, l1_write)


def inner_counts(cm: CompiledMapping, hw: HardwareSpec, exact: bool = False,
                 l1_writes: Mapping[str, int] | None = None) -> InnerCounts:
    """Reads and writes of every inner level of ``hw`` over the whole layer ``cm``: each
    distinct PE box shape counted once, weighted by how many (step, PE) pairs hold it
    (``exact``: every loop index and sub-unit its own class, for ``--unchecked`` mappings).
    ``l1_writes``: the words of each tensor L1 takes in (its writes); a level holding an operand
    whole keeps it across steps as L1 does, so its fills of it are those (None: every step
    starts with empty levels for every tensor)."""
    nest = cm.nest
    tiling = inner_tiling(cm, hw)
    classes = every_index_classes(cm) if exact else [loop_classes(p, loop.trips)
                                                      for p, loop in zip(loop_points(cm), cm.loops)]
    cases = enumerate_cases(classes)
    units = unit_classes(cm, exact)
    b = boxes(cm, columns(cases.rep), units.units())
    dims = list(nest.dims)
    shape = np.broadcast_shapes(b.active.shape, (len(cases), len(units)))
    ext = np.stack([np.broadcast_to(b.extent[d], shape) for d in dims], axis=-1).reshape(-1, len(dims))
    weight = (cases.count[:, None] * units.count[None, :]).reshape(-1)
    active = np.broadcast_to(b.active, shape).reshape(-1)
    shapes, inverse = np.unique(ext[active], axis=0, return_inverse=True)
    per_shape = np.bincount(inverse.reshape(-1), weights=weight[active], minlength=len(shapes)).astype(np.int64)
    fills = {lv.name: {r: 0 for r in lv.keeps} for lv in tiling.levels}
    macs = 0
    for row, n in zip(shapes.tolist(), per_shape.tolist()):
        macs += n * prod(row)
        for level, per in box_fills(cm, tiling, dict(zip(dims, row))).items():
            for r, words in per.items():
                fills[level][r] += n * words
    if l1_writes is not None:
        for lv in tiling.levels:
            for r in lv.whole:
                fills[lv.name][r] = l1_writes[r]
    t = level_accesses(nest, tiling, fills, macs)
    return InnerCounts(tiling, t.reads, t.writes, t.l1_read, t.l1_write, macs)
