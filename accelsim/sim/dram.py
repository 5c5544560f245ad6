"""Cost of one DMA transfer between DRAM and L2, in accelerator cycles."""

from __future__ import annotations

from math import ceil

from accelsim.hw.spec import HardwareSpec


def dma_cycles(hw: HardwareSpec, words: int, runs: int, ideal: bool) -> tuple[int, int]:
    """(cycles the DRAM channel is busy, further cycles until the data has arrived).

    ``runs`` is the number of contiguous pieces the words form in DRAM. ``ideal`` (MAESTRO's
    assumption) charges bytes over bandwidth only. ``simple`` rounds every run up to whole
    bursts and adds the latency once per transfer; ``dmazerunner`` charges
    ``setup + per_byte * bytes`` DMA cycles per run at the DMA clock.
    """
    if words <= 0:
        return 0, 0
    dram = hw.dram
    nbytes = words * hw.word_size_bytes
    runs = max(1, runs)
    if ideal:
        return ceil(nbytes / dram.bandwidth_bytes_per_cycle), 0
    if dram.model == "dmazerunner":
        dma_clock = dram.dma_clock_mhz or hw.clock_mhz
        dma = runs * dram.setup_dma_cycles + dram.dma_cycles_per_byte * nbytes
        return ceil(dma * hw.clock_mhz / dma_clock), 0
    run_bytes = ceil(nbytes / runs)
    bursts = runs * ceil(run_bytes / dram.burst_bytes)
    return ceil(bursts * dram.burst_bytes / dram.bandwidth_bytes_per_cycle), dram.latency_cycles
