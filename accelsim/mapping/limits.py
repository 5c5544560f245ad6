"""The largest layer whose counts every model computes exactly, checked before any model runs.

Both timing models count in 64-bit integers (numpy) and turn word counts into cycles through
float64 divisions, so a count is exact while it stays below ``2**53`` (:data:`EXACT_LIMIT`),
the range in which float64 holds every integer. A layer is refused unless a bound on every
count it can produce stays below that:

* **words**: in a step, a PE's box of any tensor holds at most its MACs x ``stride_y x
  stride_x`` words (an input row window of ``y'`` outputs and ``r`` filter rows spans
  ``stride (y' - 1) + r <= stride y' r`` rows), and the same holds for an L2 tile; so each
  kind of word count (DRAM reads of each operand and of partial sums, DRAM writes, words into
  the PEs per operand and read-backs, words out) is at most ``W = MACs x stride_y x stride_x``,
  and every step computes at least one MAC, so there are at most ``W`` steps.
* **cycles**: every cycle of a run is spent in some activity (a MAC, a word on a network or the
  DRAM channel, a latency or a fixed cost of a transfer), and every transfer carries at least
  one word, so ``cycles <= W x`` :func:`cycles_per_work_word` (the most the hardware can spend
  per MAC, step and word of each kind).

The check is :func:`check_exact`; its message names the layer, the bound and the limit.
"""

from __future__ import annotations

from decimal import Decimal
from math import ceil, log2

from accelsim.errors import InputError
from accelsim.hw.spec import HardwareSpec
from accelsim.workload.ops import Layer

EXACT_LIMIT = 2**53  # every integer below it is exact in float64 and in int64


def work_words(layer: Layer) -> int:
    """``MACs x stride_y x stride_x``: a bound on the words of any one kind of access (exact)."""
    return layer.macs * layer.stride_y * layer.stride_x


def cycles_per_work_word(hw: HardwareSpec) -> float:
    """The most cycles ``hw`` can spend, in any mode, per unit of :func:`work_words`: per MAC
    (the MAC rate) and per step (each step has a MAC: network latency over the farthest hops,
    the MAC pipeline, a systolic fold's fill and drain), plus, for each of the 4 DRAM, 3
    distribution and 1 reduction kinds of word, the slowest rate of its resource and the fixed
    cost of a transfer carrying it (a transfer carries at least one word: rounding up, bursts,
    DRAM latency and DMA setup, the reduction's hops)."""
    pe, noc, red, dram = hw.pe_array, hw.distribution_noc, hw.reduction_noc, hw.dram
    rows, cols = pe.rows or 1, pe.cols or hw.num_pes
    hops = max(rows + cols, ceil(log2(max(2, hw.num_pes))))
    dma_ratio = hw.clock_mhz / (dram.dma_clock_mhz or hw.clock_mhz)
    ingress_bw = min(noc.bandwidth_words_per_cycle, hw.l2.read_bandwidth_words_per_cycle)
    egress_bw = min(red.bandwidth_words_per_cycle, hw.l2.write_bandwidth_words_per_cycle, ingress_bw)
    dram_word = max(hw.word_size_bytes / dram.bandwidth_bytes_per_cycle,
                    dram.dma_cycles_per_byte * hw.word_size_bytes * dma_ratio)
    dram_transfer = max(dram.burst_bytes / dram.bandwidth_bytes_per_cycle + dram.latency_cycles,
                        dram.setup_dma_cycles * dma_ratio)
    per_mac_and_step = (1.0 / pe.macs_per_pe_per_cycle + noc.latency_cycles * hops
                        + pe.mac_pipeline_latency_cycles + 2 * rows + cols + 1)
    return (per_mac_and_step + 4 * (dram_word + dram_transfer + 1) + 3 * (1.0 / ingress_bw + 1)
            + (1.0 / egress_bw + 1 + red.latency_cycles_per_hop))


def cycle_bound(layer: Layer, hw: HardwareSpec) -> float:
    """An upper bound on the cycles (and so on every count) of ``layer`` on ``hw`` (inf beyond
    the float range)."""
    words = work_words(layer)
    return float(words) * cycles_per_work_word(hw) if words < 2**1000 else float("inf")


def _sci(n: int | float) -> str:
    """``n`` in scientific notation with 3 decimals, however large."""
    return f"{Decimal(n):.3e}" if isinstance(n, int) else f"{n:.3e}"


def check_exact(layer: Layer, hw: HardwareSpec) -> None:
    """Refuse (InputError naming the layer's source) a layer whose counts could reach
    :data:`EXACT_LIMIT` on ``hw``."""
    bound = cycle_bound(layer, hw)
    if bound < EXACT_LIMIT:
        return
    strides = "" if (layer.stride_y, layer.stride_x) == (1, 1) else \
        f" x strides {layer.stride_y} x {layer.stride_x}"
    raise InputError(
        f"layer {layer.name!r} is too large to count exactly on {hw.name}: {_sci(layer.macs)} MACs{strides}; "
        f"its cycles could reach {_sci(bound)} ({_sci(work_words(layer))} x at most "
        f"{cycles_per_work_word(hw):.4g} cycles), not below 2^53 = {EXACT_LIMIT:,}, the largest count "
        "accelsim keeps exact; split the layer (e.g. a smaller batch N or fewer output channels K) and add "
        "the parts", source=layer.source or None)
