"""Systolic neighbour links: data enters at the array's edges and moves one hop per cycle, each
PE forwarding what it received (a multicast along its row or column). The row edge and the
column edge are fed in the same cycles: a step's words of every tensor share the edges'
combined width, and each hop's register holds one step's data."""

from __future__ import annotations

from accelsim.hw.noc.base import distribution_kind


@distribution_kind
class Systolic:
    kind = "systolic"
    always_multicast = True
    registers_steps = True
    wavefront = True

    def hops(self, rows: int, cols: int) -> int:
        return rows + cols - 1

    def ports(self, pes: int, bandwidth_words_per_cycle: float) -> int:
        return 1
