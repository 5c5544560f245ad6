"""A shared bus: one hop to every PE; multicast if the hardware says so."""

from __future__ import annotations

from accelsim.hw.noc.base import distribution_kind


@distribution_kind
class Bus:
    kind = "bus"
    always_multicast = False
    packed = False
    registers_steps = False

    def hops(self, rows: int, cols: int) -> int:
        return 1
