"""A reduction tree of adders: the partial sums of g PEs meet after ceil(log2 g) hops; the
drains of one step go through parallel subtrees, sharing the network's width."""

from __future__ import annotations

from math import ceil, log2

from accelsim.hw.noc.base import reduction_kind


@reduction_kind
class AdderTree:
    kind = "tree"
    exists = True

    def hops(self, group_pes: int) -> int:
        return ceil(log2(group_pes)) if group_pes > 1 else 0
