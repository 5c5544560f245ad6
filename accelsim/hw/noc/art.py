"""MAERI's augmented reduction tree (ART) with its accumulation buffer, as STONNE builds it
(``ASNetwork``, ``AccumulationBuffer``, ``CollectionBus``): the multipliers are the leaves of a
binary tree of adder switches, so every product crosses at least the leaf adder of its
multiplier pair, and the partial sums of g multipliers meet after ``max(1, ceil(log2 g))``
levels; the finished sum then passes the accumulator the buffer keeps for its adder switch and
a collection-bus line, one register each, before it is written: ``max(1, ceil(log2 g)) + 2``
hops. The drains of one step go through parallel subtrees, sharing the network's width (or
its fixed write ports, ``reduction_noc.write_ports``)."""

from __future__ import annotations

from math import ceil, log2

from accelsim.hw.noc.base import reduction_kind

# the accumulator and the collection-bus line between an adder switch and the SRAM
OUTPUT_REGISTERS = 2


@reduction_kind
class AugmentedReductionTree:
    kind = "art"
    exists = True

    def hops(self, group_pes: int) -> int:
        return max(1, ceil(log2(max(1, group_pes)))) + OUTPUT_REGISTERS
