"""A shared bus: one hop to every PE; multicast if the hardware says so. The bus is one width:
every word of a step (for any destinations, any tensor) shares its ``bandwidth`` words per
cycle, and a multicast word is sent once."""

from __future__ import annotations

from accelsim.hw.noc.base import distribution_kind


@distribution_kind
class Bus:
    kind = "bus"
    always_multicast = False
    registers_steps = False
    wavefront = False

    def hops(self, rows: int, cols: int) -> int:
        return 1

    def ports(self, pes: int, bandwidth_words_per_cycle: float) -> int:
        return 1
