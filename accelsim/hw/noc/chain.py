"""A store-and-forward chain: the partial sums of g PEs meet after g - 1 hops; the drains of
one step go through parallel chains, sharing the network's width."""

from __future__ import annotations

from accelsim.hw.noc.base import reduction_kind


@reduction_kind
class Chain:
    kind = "chain"
    exists = True

    def hops(self, group_pes: int) -> int:
        return max(0, group_pes - 1)
