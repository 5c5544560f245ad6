"""Neighbour forwarding: input words a PE takes from the next PE of its innermost cluster over a
link between the two, instead of from L2 over the distribution network (MAERI's forwarding
links between multiplier switches, as STONNE models them; hardware option
``distribution_noc.neighbour_forwarding``).

**Rule.** The innermost cluster level's sub-units are single PEs, and sub-unit ``u + 1``
forwards to sub-unit ``u`` of the same cluster (one hop). At step ``s > 0``, a PE that worked
at step ``s - 1`` receives from its neighbour the words of its new input box (the part outside
its own previous box, or all of it where the PE does not keep inputs, ``l1.reused_operands``)
that the neighbour held at step ``s - 1``, where the neighbour worked at
``s - 1`` on an input tile of the same shape as the PE's new one (a window sliding along a chain
of PEs configured alike; a ragged edge breaks the chain, as STONNE turns its links off when the
filter columns do not fold evenly, ``S % T_S != 0``). Those words are not read from L2 and do not cross the distribution network; the
rest of the new box is fetched as without forwarding. A window sliding by one step along the
dimension the innermost cluster spreads (stride-1 convolution with the filter columns across
the PEs) is the case this serves: only the last PE of each cluster fetches the new column.

**Timing.** A forwarded word crosses one link (one cycle). The neighbour holds it from the
moment step ``s - 1``'s operands arrived, so it reaches the PE one cycle after step ``s - 1``
could start computing; step ``s`` starts only after step ``s - 1``'s computation (at least one
cycle), so the hop never delays a step. A link carries as many words per cycle as its PE
computes MACs (each forwarded word is used by at least one MAC of step ``s``), so the links
never limit a step either: neither model charges them cycles.

**Classes.** The demand is computed per class of translate PEs
(:mod:`accelsim.mapping.geometry`); forwarding needs every member's neighbour to be the
translate of the representative's, so each class's interval at the innermost level is split
before its last sub-unit (:meth:`NeighbourLinks.classes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import Index, UnitClasses, Units, boxes, loop_strides, volume


@dataclass(frozen=True)
class Forwarded:
    """What neighbours forward to some PEs at some steps (arrays of one shape, tensor axes
    first where given): the neighbour's previous input box clipped to the PE's current box
    (``lo``, ``hi``), whether a neighbour forwards at all (``valid``: a link, both worked at
    the previous step, the neighbour's box had the shape of the PE's, and the clipped box is
    not empty) and the words forwarded (the clipped
    box minus the PE's own previous box)."""

    lo: np.ndarray
    hi: np.ndarray
    valid: np.ndarray
    words: np.ndarray


class NeighbourLinks:
    """The forwarding links of a compiled mapping's innermost cluster level (none where that
    level's sub-units are not single PEs or it has one sub-unit)."""

    def __init__(self, cm: CompiledMapping):
        self.cm = cm
        self.level = len(cm.levels) - 1
        inner = cm.levels[self.level]
        self.exists = inner.unit_pes == 1 and inner.units > 1
        self.strides = np.array(loop_strides(cm), dtype=np.int64)

    def classes(self, classes: UnitClasses) -> UnitClasses:
        """``classes`` with each interval of the innermost level split before its last
        sub-unit, so that every member's neighbour (sub-unit + 1) is the translate of the
        representative's (interval numbers: ``2 k`` and ``2 k + 1`` for the two parts of
        interval ``k``)."""
        if not self.exists:
            return classes
        lv = self.level
        first, size, interval = [], [], []
        for c in range(len(classes)):
            f, s, k = classes.first[c].copy(), classes.size[c].copy(), classes.interval[c].copy()
            if s[lv] > 1:
                head_size = s.copy()
                head_size[lv] -= 1
                head_interval = k.copy()
                head_interval[lv] = 2 * k[lv]
                first.append(f.copy())
                size.append(head_size)
                interval.append(head_interval)
            last, last_size, last_interval = f.copy(), s.copy(), k.copy()
            last[lv] += s[lv] - 1
            last_size[lv] = 1
            last_interval[lv] = 2 * k[lv] + 1
            first.append(last)
            size.append(last_size)
            interval.append(last_interval)
        f_arr, s_arr, k_arr = (np.array(a, dtype=np.int64).reshape(len(a), classes.first.shape[1])
                               for a in (first, size, interval))
        return UnitClasses(f_arr, s_arr, k_arr, s_arr.prod(axis=1))

    def forwarded(self, lo: np.ndarray, hi: np.ndarray, own_lo: np.ndarray, own_hi: np.ndarray,
                  own_valid: np.ndarray, own_kept: bool, prev_idx: Index, steps: np.ndarray,
                  units: Units) -> Forwarded:
        """For PEs with sub-unit tuples ``units`` whose current input box is ``lo``/``hi`` (axes
        first) at ``steps``, whose own previous box is ``own_lo``/``own_hi`` at loop indices
        ``prev_idx`` (``own_valid``: they have one; ``own_kept``: they keep it in L1, so it is
        not forwarded to them): what their neighbours forward. All arrays broadcast to one shape
        (axes first for the boxes)."""
        cm, lv = self.cm, self.level
        neighbour = list(units)
        neighbour[lv] = units[lv] + 1
        linked = self.exists & (neighbour[lv] < cm.levels[lv].units)
        prev_step = sum((p * int(s) for p, s in zip(prev_idx, self.strides)), np.zeros(1, dtype=np.int64))
        consecutive = own_valid & (prev_step == steps - 1)  # the PE worked at the previous step
        held = boxes(cm, prev_idx, neighbour)
        qlo, qhi = held.tensor(cm.nest, "input")
        clo, chi = np.maximum(lo, qlo), np.minimum(hi, qhi)
        words = volume(clo, chi)
        same_shape = np.all(qhi - qlo == hi - lo, axis=0)
        valid = consecutive & linked & held.active & same_shape & (words > 0)
        own = volume(np.maximum(clo, own_lo), np.minimum(chi, own_hi)) if own_kept else 0
        return Forwarded(clo, chi, valid, np.where(valid, words - own, 0))
