"""Enumerate the tile schedule: for every step and every PE, the box of the loop nest it owns.

A *step* is one iteration of the flattened loop nest of a :class:`CompiledMapping`. In one step
every PE holds a box (a start and an extent per canonical dimension); an idle PE's box has an
extent of 0. Boxes are produced for a contiguous range of steps at a time as numpy arrays of
shape ``(steps, pes)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from accelsim.mapping.compile import CompiledMapping


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
