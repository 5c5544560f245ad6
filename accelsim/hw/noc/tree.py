"""A distribution tree from L2 to the PEs, built as MAERI's (and STONNE's) is: ``bandwidth``
one-word root ports (at least one, at most one per PE), port p feeding a fixed block of
``ceil(PEs / ports)`` neighbouring PEs through its own subtree. A word bound for PEs under k
ports costs one slot on each of those k ports (a multicast inside one subtree costs one), so
a step takes as many cycles as its busiest port; ``ceil(log2 PEs)`` levels of latency, each
level's switches registering one step's words (a pipelined tree: words in flight wait in the
switches, not in the PEs' L1)."""

from __future__ import annotations

from math import ceil, floor, log2

from accelsim.hw.noc.base import distribution_kind


@distribution_kind
class Tree:
    kind = "tree"
    always_multicast = False
    registers_steps = True
    wavefront = False

    def hops(self, rows: int, cols: int) -> int:
        return max(1, ceil(log2(max(2, rows * cols))))

    def ports(self, pes: int, bandwidth_words_per_cycle: float) -> int:
        return max(1, min(pes, floor(bandwidth_words_per_cycle)))
