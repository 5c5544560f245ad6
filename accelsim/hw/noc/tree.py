"""A fat tree from L2 to the PEs: ceil(log2 PEs) levels; multicast if the hardware says so."""

from __future__ import annotations

from math import ceil, log2

from accelsim.hw.noc.base import distribution_kind


@distribution_kind
class Tree:
    kind = "tree"
    always_multicast = False
    packed = False
    registers_steps = False

    def hops(self, rows: int, cols: int) -> int:
        return max(1, ceil(log2(max(2, rows * cols))))
