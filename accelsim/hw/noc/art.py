"""MAERI's augmented reduction tree (ART) with its accumulation buffer, as STONNE builds it
(``ASNetwork``, ``AccumulationBuffer``, ``CollectionBus``): the multipliers are the leaves of a
binary tree of adder switches, so every product crosses at least the leaf adder of its
multiplier pair, and the partial sums of g multipliers meet after ``max(1, ceil(log2 g))``
levels, where a plain adder ``tree`` has none for one PE. (The accumulator the buffer keeps
for the adder switch and the collection-bus line after it are ``reduction_noc.
write_latency_cycles``.) The drains of one step go through parallel subtrees, sharing the
network's width (or its fixed write ports, ``reduction_noc.write_ports``)."""

from __future__ import annotations

from math import ceil, log2

from accelsim.hw.noc.base import reduction_kind


@reduction_kind
class AugmentedReductionTree:
    kind = "art"
    exists = True

    def hops(self, group_pes: int) -> int:
        return max(1, ceil(log2(max(1, group_pes))))
