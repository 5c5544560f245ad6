"""Lower bounds on a layer's cycles, and the check that an estimate respects them.

- compute: every MAC needs a multiplier-cycle: ``ceil(MACs / (PEs x MACs per PE per cycle))``;
- off-chip: bytes crossing the DRAM interface over its bandwidth:
  ``ceil(DRAM bytes / DRAM bandwidth in bytes per cycle)``.

Each result (simulator or analytical model) carries both, the off-chip one for the bytes that
result itself moves (:func:`fill_bounds`); :func:`lower_bounds` gives the physical bounds of a
layer, independent of any mapping, where the off-chip bytes are the compulsory ones (each
distinct element of every tensor crosses once). No estimate may fall below either.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from accelsim.hw.dram import DRAM_KINDS
from accelsim.hw.spec import HardwareSpec
from accelsim.results import LayerResult
from accelsim.workload.operators import TENSOR_ROLES
from accelsim.workload.ops import Layer


def compute_bound_cycles(macs: int, hw: HardwareSpec) -> int:
    """``ceil(MACs / (PEs * MACs per PE per cycle))``: the whole array busy every cycle."""
    return -(-macs // (hw.num_pes * hw.pe_array.macs_per_pe_per_cycle))  # exact for any size


def dram_bound_cycles(dram_bytes: int, hw: HardwareSpec) -> int:
    """``ceil(DRAM bytes / DRAM bandwidth)``: the off-chip channel busy every cycle (0 without
    off-chip memory, ``dram.model: none``)."""
    if not DRAM_KINDS[hw.dram.model].off_chip:
        return 0
    return ceil(dram_bytes / hw.dram.bandwidth_bytes_per_cycle)


def fill_bounds(result: LayerResult, hw: HardwareSpec) -> LayerResult:
    """Set ``result``'s two bound fields from its MACs and DRAM accesses; returns it."""
    dram_words = sum(a.dram_read + a.dram_write for a in result.accesses.values())
    result.compute_bound_cycles = compute_bound_cycles(result.macs, hw)
    result.dram_bound_cycles = dram_bound_cycles(dram_words * hw.word_size_bytes, hw)
    return result


def bound_violations(result: LayerResult) -> list[str]:
    """One message per lower bound the result's cycles fall below (empty if none)."""
    problems = []
    for name, bound in (("compute", result.compute_bound_cycles), ("off-chip", result.dram_bound_cycles)):
        if result.cycles < bound:
            problems.append(f"layer {result.layer!r}: {result.cycles} cycles is below the {name} "
                            f"bound of {bound} cycles ({result.model} model)")
    return problems


@dataclass(frozen=True)
class LowerBounds:
    """Physical lower bounds of one layer on one hardware, in cycles."""

    compute_cycles: int
    dram_cycles: int

    @property
    def cycles(self) -> int:
        return max(self.compute_cycles, self.dram_cycles)


def compulsory_dram_bytes(layer: Layer, word_size_bytes: int) -> int:
    """Bytes every execution moves across the DRAM interface: each distinct element of every
    tensor once."""
    nest = layer.loop_nest()
    return sum(nest.tensor_words(role) for role in TENSOR_ROLES) * word_size_bytes


def lower_bounds(layer: Layer, hw: HardwareSpec) -> LowerBounds:
    """The compute and compulsory off-chip lower bounds of ``layer`` on ``hw``."""
    return LowerBounds(compute_bound_cycles(layer.macs, hw),
                       dram_bound_cycles(compulsory_dram_bytes(layer, hw.word_size_bytes), hw))
