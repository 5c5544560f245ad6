"""``dmazerunner`` DRAM (dMazeRunner's DMA cost): each contiguous run costs ``setup_dma_cycles
+ dma_cycles_per_byte x bytes`` cycles of the DMA clock, converted to accelerator cycles; the
latency is inside that cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from accelsim.hw.dram.base import dram_kind

if TYPE_CHECKING:
    from accelsim.hw.spec import DRAMSpec


@dram_kind
class DMazeRunnerDram:
    kind = "dmazerunner"
    off_chip = True

    def busy_cycles(self, dram: DRAMSpec, clock_mhz: float, nbytes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """``(runs x setup + per_byte x bytes)`` DMA cycles at ``dma_clock_mhz`` (default: the
        accelerator's clock)."""
        dma = runs * dram.setup_dma_cycles + dram.dma_cycles_per_byte * nbytes
        return np.ceil(dma * clock_mhz / (dram.dma_clock_mhz or clock_mhz))

    def latency_cycles(self, dram: DRAMSpec) -> int:
        return 0
