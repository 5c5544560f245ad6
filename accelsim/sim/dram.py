"""Cost of one DMA transfer between DRAM and L2, in accelerator cycles: the DRAM kind's
(:mod:`accelsim.hw.dram`) for one transfer."""

from __future__ import annotations

import numpy as np

from accelsim.hw.dram import latency_cycles, transfer_cycles
from accelsim.hw.spec import HardwareSpec


def dma_cycles(hw: HardwareSpec, words: int, runs: int, ideal: bool) -> tuple[int, int]:
    """(cycles the DRAM channel is busy, further cycles until the data has arrived) for
    ``words`` words in ``runs`` contiguous pieces in DRAM; ``ideal``: MAESTRO's assumption,
    bytes over bandwidth only."""
    if words <= 0:
        return 0, 0
    busy = transfer_cycles(hw.dram, hw.word_size_bytes, hw.clock_mhz, np.array([words]), np.array([runs]), ideal)
    return int(busy[0]), latency_cycles(hw.dram, ideal)
