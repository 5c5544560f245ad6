"""``none``: no off-chip memory. The layer's operands are in L2 when it starts and its outputs
stay there (STONNE's SDMemory holds every operand and STONNE has no DRAM), so a transfer
between "DRAM" and L2 takes no cycles, in every mode; the words are still counted."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from accelsim.hw.dram.base import dram_kind

if TYPE_CHECKING:
    from accelsim.hw.spec import DRAMSpec


@dram_kind
class NoDram:
    kind = "none"
    off_chip = False

    def busy_cycles(self, dram: DRAMSpec, clock_mhz: float, nbytes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """0: nothing crosses a chip boundary."""
        return np.zeros(np.shape(nbytes))

    def latency_cycles(self, dram: DRAMSpec) -> int:
        return 0
