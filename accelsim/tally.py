"""From what a timing model counted to the result it reports: energy from counts and the
:class:`~accelsim.results.LayerResult` both the simulator and the analytical model assemble
(one home, so the two cannot drift apart in anything but their counts and cycles).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from accelsim.bounds import fill_bounds
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.inner_levels import InnerCounts, inner_counts
from accelsim.rates import Rates
from accelsim.results import LayerResult, LevelAccesses, TensorAccesses


@dataclass(frozen=True)
class LayerCounts:
    """What one layer's run counted: cycles (total, computing, stalled by cause), MACs,
    accesses per tensor (words), words carried by the distribution network (each multicast
    once) and written into the PEs' L1s, words leaving the PEs (egress), steps, and the most
    words one PE's L1 and L2 must hold at once (one buffer each)."""

    cycles: int
    compute_busy_cycles: int
    stall_cycles: dict[str, int]
    macs: int
    accesses: dict[str, TensorAccesses]
    noc_words: int
    noc_delivered_words: int
    egress_words: int
    steps: int
    l1_required_words: int
    l2_required_words: int


def energy_breakdown_pj(hw: HardwareSpec, counts: LayerCounts,
                       inner: dict[str, dict[str, LevelAccesses]] | None = None) -> dict[str, float]:
    """Energy (pJ): MACs, accesses at each level (the register files inside the PE, ``inner``,
    by their names, then L1, L2, DRAM), and words moved into or out of the PEs."""
    acc = counts.accesses.values()
    energy = {"mac": counts.macs * hw.energy.mac_pj}
    for lv in hw.inner_levels:
        energy[lv.name] = sum(a.read + a.write for a in (inner or {}).get(lv.name, {}).values()) \
            * hw.inner_energy_pj(lv)
    energy.update({
        "l1": sum(a.l1_read + a.l1_write for a in acc) * hw.l1_energy_pj,
        "l2": sum(a.l2_read + a.l2_write for a in acc) * hw.l2_energy_pj,
        "dram": sum(a.dram_read + a.dram_write for a in acc) * hw.energy.dram_access_pj,
        "noc": (counts.noc_delivered_words + counts.egress_words) * hw.energy.noc_hop_pj,
    })
    return energy


def with_inner_levels(counts: LayerCounts, inner: InnerCounts) -> LayerCounts:
    """``counts`` with L1 read (and, for the output, written) by the register files inside the
    PE instead of once per MAC (see :mod:`accelsim.mapping.inner_levels`)."""
    if inner.macs != counts.macs:
        raise AssertionError(f"inner levels counted {inner.macs} MACs, the model {counts.macs}")
    accesses = {t: replace(a) for t, a in counts.accesses.items()}
    for tensor, words in inner.l1_read.items():
        accesses[tensor].l1_read += words - counts.macs
    for tensor, words in inner.l1_write.items():
        accesses[tensor].l1_write += words - counts.macs
    return replace(counts, accesses=accesses)


def layer_result(cm: CompiledMapping, hw: HardwareSpec, mode: str, rates: Rates, counts: LayerCounts, *,
                 model: str, events: int, wall_seconds: float, exact: bool = False) -> LayerResult:
    """The result of one layer from its counts, with its energy, buffer needs (the words one
    buffer holds times the buffers ``rates`` has) and lower bounds; on a design with register
    files inside the PE, their accesses (counted from the mapping, ``exact``: every loop index
    and sub-unit its own class) and L1's accesses by them."""
    inner_accesses: dict[str, dict[str, LevelAccesses]] = {}
    inner_loops: dict[str, list[str]] = {}
    if hw.inner_levels:
        inner = inner_counts(cm, hw, exact, {t: a.l1_write for t, a in counts.accesses.items()})
        counts = with_inner_levels(counts, inner)
        inner_accesses = {lv: {t: LevelAccesses(inner.reads[lv][t], inner.writes[lv][t]) for t in inner.reads[lv]}
                          for lv in inner.reads}
        inner_loops = {lv.name: list(lv.held) for lv in inner.tiling.levels}
    energy = energy_breakdown_pj(hw, counts, inner_accesses)
    mpc = hw.pe_array.macs_per_pe_per_cycle
    cycles, sent = counts.cycles, counts.noc_words
    return fill_bounds(LayerResult(
        layer=cm.layer.name,
        op=cm.layer.op.value,
        hw=hw.name,
        mode=mode,
        cycles=cycles,
        macs=counts.macs,
        num_pes=hw.num_pes,
        used_pes=cm.used_pes,
        pe_utilization=counts.macs / (hw.num_pes * mpc * cycles) if cycles else 0.0,
        compute_busy_cycles=counts.compute_busy_cycles,
        stall_cycles=counts.stall_cycles,
        energy_pj=sum(energy.values()),
        energy_breakdown_pj=energy,
        accesses=counts.accesses,
        noc_words=sent,
        noc_delivered_words=counts.noc_delivered_words,
        multicast_factor=counts.noc_delivered_words / sent if sent else 1.0,
        egress_words=counts.egress_words,
        l1_required_bytes=counts.l1_required_words * hw.word_size_bytes * rates.l1_buffers,
        l2_required_bytes=counts.l2_required_words * hw.word_size_bytes * rates.l2_buffers,
        l1_size_bytes=hw.l1.size_bytes,
        l2_size_bytes=hw.l2.size_bytes,
        steps=counts.steps,
        events=events,
        wall_seconds=wall_seconds,
        model=model,
        inner_accesses=inner_accesses,
        inner_loops=inner_loops,
    ), hw)
