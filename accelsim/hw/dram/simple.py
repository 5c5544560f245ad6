"""``simple`` DRAM: every contiguous run rounded up to whole bursts, moved at the channel's
bandwidth, and a fixed latency per transfer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from accelsim.hw.dram.base import burst_count, dram_kind

if TYPE_CHECKING:
    from accelsim.hw.spec import DRAMSpec


@dram_kind
class SimpleDram:
    kind = "simple"
    off_chip = True

    def busy_cycles(self, dram: DRAMSpec, clock_mhz: float, nbytes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """``runs x ceil(bytes per run / burst)`` bursts at ``bandwidth_bytes_per_cycle``."""
        bursts = burst_count(nbytes, runs, dram.burst_bytes)
        return np.ceil(bursts * dram.burst_bytes / dram.bandwidth_bytes_per_cycle)

    def latency_cycles(self, dram: DRAMSpec) -> int:
        return dram.latency_cycles
