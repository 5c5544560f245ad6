"""The register files' traffic of one step, for traces: per register file inside the PE and
per tensor it keeps, the words read and written in the step by all its PEs.

The counting rules are :mod:`accelsim.mapping.inner_levels`' (one home), applied to one
step's PE boxes instead of the layer's box classes: each distinct box shape of the step's
active PEs is counted once (its fills cached across steps) and weighted by how many PEs hold it; an
operand a level holds whole is filled, as L1 is, by the words the step delivered into the PEs'
L1s (the step's ``dest_words``). Summed over a layer's steps, the counts equal the layer's
``inner_accesses`` (tested in ``tests/test_inner_levels_trace.py``).
"""

from __future__ import annotations

from math import prod
from typing import Callable, NamedTuple

import numpy as np

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.demand import StepDemand
from accelsim.mapping.geometry import step_boxes
from accelsim.mapping.inner_levels import box_fills, inner_tiling, level_accesses

BATCH_STEPS = 1024  # steps whose PE boxes are computed together


class RegisterFileAccess(NamedTuple):
    """Words of ``tensor`` read and written at register file ``level`` in one step."""

    level: str
    tensor: str
    read: int
    write: int


class RegisterFileSteps:
    """Per step, the accesses of ``hw``'s register files under ``cm``; ``demand`` gives a
    step's :class:`~accelsim.mapping.demand.StepDemand` (the engine's schedule profile). Steps
    are asked for in order; their boxes are computed ``BATCH_STEPS`` at a time."""

    def __init__(self, cm: CompiledMapping, hw: HardwareSpec, demand: Callable[[int], StepDemand]):
        self.cm = cm
        self.tiling = inner_tiling(cm, hw)
        self.demand = demand
        self._by_shape: dict[tuple[int, ...], dict[str, dict[str, int]]] = {}
        self._batch: dict[int, list[tuple[tuple[int, ...], int]]] = {}  # step -> (box shape, PEs holding it)

    def _shapes(self, step: int) -> list[tuple[tuple[int, ...], int]]:
        """The distinct box shapes of the step's active PEs and how many PEs hold each."""
        if step not in self._batch:
            dims = list(self.cm.nest.dims)
            count = min(BATCH_STEPS, self.cm.steps - step)
            b = step_boxes(self.cm, step, count)
            ext = np.stack([b.extent[d] for d in dims], axis=-1)[b.active]  # (active (step, PE) pairs, dims)
            at = np.broadcast_to(np.arange(count)[:, None], b.active.shape)[b.active]
            shapes, inverse = np.unique(_keys(ext, [self.cm.nest.dims[d] + 1 for d in dims]), return_inverse=True)
            pairs, n = np.unique(at * len(shapes) + inverse.reshape(-1), return_counts=True)
            first = np.zeros(len(shapes), dtype=np.int64)
            first[inverse.reshape(-1)] = np.arange(len(ext))
            rows = ext[first].tolist()
            self._batch = {step + i: [] for i in range(count)}
            for pair, k in zip(pairs.tolist(), n.tolist()):
                self._batch[step + pair // len(shapes)].append((tuple(rows[pair % len(shapes)]), k))
        return self._batch[step]

    def accesses(self, step: int) -> list[RegisterFileAccess]:
        """The step's reads and writes, innermost level first, tensors in ``input``, ``weight``,
        ``output`` order (every tensor each level keeps, zeros included)."""
        cm, dims = self.cm, list(self.cm.nest.dims)
        fills = {lv.name: {r: 0 for r in lv.keeps} for lv in self.tiling.levels}
        macs = 0
        for shape, n in self._shapes(step):
            per = self._by_shape.get(shape)
            if per is None:
                per = self._by_shape[shape] = box_fills(cm, self.tiling, dict(zip(dims, shape)))
            macs += n * prod(shape)
            for level, words in per.items():
                for r, w in words.items():
                    fills[level][r] += n * w
        whole = [(lv.name, r) for lv in self.tiling.levels for r in lv.whole]
        if whole:
            d = self.demand(step)
            delivered = {"input": d.input.dest_words, "weight": d.weight.dest_words}
            for level, r in whole:
                fills[level][r] = delivered[r]
        t = level_accesses(cm.nest, self.tiling, fills, macs)
        return [RegisterFileAccess(level, r, t.reads[level][r], t.writes[level][r])
                for level in t.reads for r in ("input", "weight", "output") if r in t.reads[level]]


def _keys(rows: np.ndarray, radices: list[int]) -> np.ndarray:
    """One integer per row of ``rows`` (values below ``radices``, per column) that differs
    exactly where rows differ: mixed-radix digits, or where those would not fit in int64,
    each row's index among the distinct rows."""
    if prod(radices) >= 1 << 62:
        return np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
    out = np.zeros(len(rows), dtype=np.int64)
    for j, radix in enumerate(radices):
        out = out * radix + rows[:, j]
    return out
