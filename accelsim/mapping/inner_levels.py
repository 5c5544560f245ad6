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
(ragged) boxes run the same loops with clipped extents.

Counting (words), per level and tensor it keeps; a tensor a level does not keep bypasses it
(its words move between the nearest levels above and below that keep it):

- **fills**: words written in from the level above: the first tile, then at each step of an
  outer loop the part of the new tile outside the previous one (a tile does not outlive its
  step: each step starts with empty register files, a conservative bound where consecutive
  steps share data). An output word enters and leaves once per step (the reduction loops are
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

import numpy as np

from accelsim.errors import MappingError
from accelsim.hw.spec import HardwareSpec, StorageLevelSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import boxes, columns, enumerate_cases, every_index_classes, loop_classes, \
    loop_points, unit_classes
from accelsim.workload.ops import LoopNest


@dataclass(frozen=True)
class InnerLevelTiling:
    """One inner level's share of the intra-step nest: ``held`` the innermost loops (dimension
    names, outermost first) its tile spans, ``keeps`` the tensors it holds, ``tile_words`` its
    tile of those tensors on the largest box (one buffer)."""

    name: str
    keeps: tuple[str, ...]
    held: tuple[str, ...]
    tile_words: int


@dataclass(frozen=True)
class InnerTiling:
    """The mapping inside a PE: the intra-step loop order (outermost first) and, innermost
    first, the loops each inner level holds."""

    order: tuple[str, ...]
    levels: tuple[InnerLevelTiling, ...]


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


def _tile_words(nest: LoopNest, role: str, extents: dict[str, int], held: tuple[str, ...]) -> int:
    sizes = {d: (extents[d] if d in held else 1) for d in nest.dims}
    return prod(nest.extents(role, sizes))


def inner_tiling(cm: CompiledMapping, hw: HardwareSpec) -> InnerTiling:
    """The default per-level tiling of ``hw``'s inner levels for ``cm`` (see the module
    docstring). A level that cannot hold its tile (one word of each tensor it keeps, or the
    loops a level below keeping one of its tensors holds) is a :class:`MappingError` (reason
    ``inner_overflow``) naming the level and the bytes."""
    nest = cm.nest
    order = intra_step_order(nest)
    first = boxes(cm, [np.zeros((1, 1), dtype=np.int64) for _ in cm.loops],
                  [np.zeros((1, 1), dtype=np.int64) for _ in cm.levels])
    largest = {d: int(e.max()) for d, e in first.extent.items()}
    out: list[InnerLevelTiling] = []
    for lv in hw.inner_levels:
        # a level's tile of a tensor contains the tile of the level below that keeps it
        held_count = max((len(t.held) for t in out if set(t.keeps) & set(lv.keeps)), default=0)
        buffers = 2 if lv.double_buffered else 1
        capacity = (lv.size_bytes or 0) // (hw.word_size_bytes * buffers)

        def words(k: int, lv: StorageLevelSpec = lv) -> int:
            held = order[len(order) - k:] if k else ()
            return sum(_tile_words(nest, role, largest, held) for role in lv.keeps if role in nest.tensors)

        if words(held_count) > capacity:
            need = words(held_count) * hw.word_size_bytes * buffers
            raise MappingError(f"layer {cm.layer.name!r}: inner level {lv.name} ({lv.size_bytes} B) cannot hold "
                               f"its tile of {', '.join(lv.keeps)} ({need} B"
                               + (", double-buffered" if buffers == 2 else "") + ")",
                               source=cm.source, reason="inner_overflow")
        while held_count < len(order) and words(held_count + 1) <= capacity:
            held_count += 1
        out.append(InnerLevelTiling(lv.name, tuple(r for r in lv.keeps if r in nest.tensors),
                                    order[len(order) - held_count:] if held_count else (), words(held_count)))
    return InnerTiling(order, tuple(out))


def _fills(nest: LoopNest, role: str, order: tuple[str, ...], held: tuple[str, ...],
           extents: dict[str, int]) -> int:
    """Words of ``role`` a level holding ``held`` fills over one box of ``extents``: the
    first tile, then per step of each outer loop the part of the new tile outside the old."""
    outer = [d for d in order if d not in held]
    spans = nest.extents(role, {d: (extents[d] if d in held else 1) for d in nest.dims})
    tile = prod(spans)
    total = tile
    for j, dim in enumerate(outer):
        if extents[dim] <= 1:
            continue
        steps = prod(extents[d] for d in outer[:j]) * (extents[dim] - 1)
        delta = {d: 0 for d in nest.dims}
        delta[dim] = 1
        for d in outer[j + 1:]:
            delta[d] = -(extents[d] - 1)  # inner outer loops wrap from their last index to 0
        overlap = prod(max(0, span - abs(sum(c * delta[d] for d, c in axis)))
                       for span, axis in zip(spans, nest.tensors[role]))
        total += steps * (tile - overlap)
    return total


def inner_counts(cm: CompiledMapping, hw: HardwareSpec, exact: bool = False) -> InnerCounts:
    """Reads and writes of every inner level of ``hw`` over the whole layer ``cm``: each
    distinct PE box shape counted once, weighted by how many (step, PE) pairs hold it
    (``exact``: every loop index and sub-unit its own class, for ``--unchecked`` mappings)."""
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
    roles = [r for r in ("input", "weight", "output") if r in nest.tensors]
    fills = {lv.name: {r: 0 for r in lv.keeps} for lv in tiling.levels}
    macs = 0
    for row, n in zip(shapes.tolist(), per_shape.tolist()):
        extents = dict(zip(dims, row))
        macs += n * prod(row)
        for lv in tiling.levels:
            for r in lv.keeps:
                fills[lv.name][r] += n * _fills(nest, r, tiling.order, lv.held, extents)
    reads: dict[str, dict[str, int]] = {lv.name: {} for lv in tiling.levels}
    writes: dict[str, dict[str, int]] = {lv.name: {} for lv in tiling.levels}
    l1_read: dict[str, int] = {}
    l1_write: dict[str, int] = {}
    for r in roles:
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
    return InnerCounts(tiling, reads, writes, l1_read, l1_write, macs)
