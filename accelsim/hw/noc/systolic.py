"""Systolic neighbour links: data enters at the array's edge and moves one hop per cycle, each
PE forwarding what it received (a multicast along its row or column). The edge links of one
step share their width, and each hop's register holds one step's data."""

from __future__ import annotations

from accelsim.hw.noc.base import distribution_kind


@distribution_kind
class Systolic:
    kind = "systolic"
    always_multicast = True
    packed = True
    registers_steps = True

    def hops(self, rows: int, cols: int) -> int:
        return rows + cols - 1
