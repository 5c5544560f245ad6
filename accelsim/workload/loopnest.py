"""The canonical loop nest every model reads: iteration dimensions, tensor index projections and
DRAM layouts, with no knowledge of which operator produced it.

A tensor index is a sum of ``coefficient * dimension`` terms, e.g. the input row of a
convolution is ``stride_y * Y' + R``; the operator catalog (:mod:`accelsim.workload.operators`)
says which terms each operator's tensors have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Mapping

Term = tuple[str, int]  # (dimension, coefficient)
Axis = tuple[Term, ...]  # index = sum(coefficient * dimension)


def axis_distinct(axis: Axis, sizes: Mapping[str, int]) -> int:
    """Distinct values of ``sum(c * d)`` over ``d`` in ``range(sizes[d])``: a plain range, or
    ``stride * Y' + R`` whose filter window leaves gaps when it is narrower than the stride."""
    if len(axis) == 2:
        (d1, c1), (d2, c2) = sorted(axis, key=lambda term: -term[1])
        if c2 == 1 and sizes[d2] < c1:
            return sizes[d1] * sizes[d2]
    return sum(c * (sizes[d] - 1) for d, c in axis) + 1


@dataclass(frozen=True)
class LoopNest:
    """Canonical iteration space of one operator.

    ``dims`` maps each iteration dimension to its size (in loop order of the operator's
    definition); ``tensors`` maps each role to its index axes.
    """

    dims: dict[str, int]
    tensors: dict[str, tuple[Axis, ...]]
    # DRAM layout per tensor: its axes from outermost to innermost (contiguous) in memory
    layouts: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def layout(self, role: str) -> tuple[int, ...]:
        """Axis order in DRAM, outermost first (row-major in ``tensors`` order by default)."""
        return self.layouts.get(role, tuple(range(len(self.tensors[role]))))

    @property
    def reduction_dims(self) -> tuple[str, ...]:
        """Dimensions that do not index the output (summed over)."""
        out = {d for axis in self.tensors["output"] for d, _ in axis}
        return tuple(d for d in self.dims if d not in out)

    def extents(self, role: str, sizes: Mapping[str, int] | None = None) -> tuple[int, ...]:
        """Span of each index axis of tensor ``role`` (largest index + 1) over a box of ``sizes``
        per dimension (default: the whole nest). A strided axis spans gaps too."""
        sizes = self.dims if sizes is None else sizes
        return tuple(sum(c * (sizes[d] - 1) for d, c in axis) + 1 for axis in self.tensors[role])

    def tensor_words(self, role: str) -> int:
        """Number of distinct elements of tensor ``role`` touched by the whole nest."""
        return prod(axis_distinct(axis, self.dims) for axis in self.tensors[role])
