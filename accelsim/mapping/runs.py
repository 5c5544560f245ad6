"""Runs in a schedule: output runs, the order of visits to an output tile, L2's view of a
mapping, and contiguous runs of a box in DRAM. Mapping semantics both timing models read.

An *output run* is the steps over one output tile: one iteration of the loops inside the
innermost loop that changes the output tile. A reduction loop outside that loop makes the run
*revisit* its tile later; the partial sums of one visit are read back at the start of the next.
"""

from __future__ import annotations

from bisect import bisect_right
from math import prod

import numpy as np

from accelsim.mapping.compile import CompiledMapping, Level
from accelsim.mapping.geometry import loop_strides


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

    def steps_back(self, steps: np.ndarray, reads_back: np.ndarray) -> np.ndarray:
        """Per step of ``steps`` that ``reads_back`` (bool), how many steps back the previous
        visit's run ended (``step - previous_end(step)``); 0 elsewhere."""
        out = np.zeros(len(steps), dtype=np.int64)
        for i in np.nonzero(reads_back)[0]:
            step = int(steps[i])
            out[i] = step - self.previous_end(step)
        return out


def l2_view(cm: CompiledMapping) -> CompiledMapping:
    """The schedule seen from L2: level 0 only, one 'PE' per level-0 sub-unit."""
    l0 = cm.levels[0]
    return CompiledMapping(
        cm.layer, cm.nest, (Level(l0.units, 1, l0.directives),),
        tuple(loop for loop in cm.loops if loop.level == 0), l0.units, cm.source,
    )


def dram_runs(extents: list[int], full: tuple[int, ...], layout: tuple[int, ...]) -> int:
    """Contiguous runs a box of ``extents`` forms in a tensor of ``full`` sizes stored with
    ``layout`` (axes outermost first, last one contiguous): the innermost axes a box spans
    whole merge into one run with the next one out."""
    runs = 1
    contiguous = True
    for axis in reversed(layout):
        if contiguous:
            contiguous = extents[axis] == full[axis]
            continue
        runs *= extents[axis]
    return runs


def delta_runs(lo: list[int], hi: list[int], prev: tuple[list[int], list[int]] | None,
               full: tuple[int, ...], layout: tuple[int, ...]) -> int:
    """Runs of the part of box (lo, hi) outside box ``prev``: exact when the boxes differ
    along one axis (a sliding or stepping tile), else the whole new box."""
    ext = [b - a + 1 for a, b in zip(lo, hi)]
    if prev is None:
        return dram_runs(ext, full, layout)
    plo, phi = prev
    differ = [a for a in range(len(ext)) if lo[a] != plo[a] or hi[a] != phi[a]]
    if len(differ) == 1:
        a = differ[0]
        ext[a] -= max(0, min(hi[a], phi[a]) - max(lo[a], plo[a]) + 1)
    return dram_runs(ext, full, layout)


def class_of(starts: list[int], index: int) -> int:
    """Number of the class (given by its first indices, ascending) holding ``index``."""
    return bisect_right(starts, index) - 1
