"""What a timing model charges on given hardware with some effects idealized: the effective
bandwidths (words/cycle), multicast, packing, buffering and latencies (cycles). One home for
both models: the simulator idealizes the effects ``SimOptions`` names (all of them in mode
``maestro``), the analytical model none (``realistic``) or all (``maestro``).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.hw.dram import latency_cycles
from accelsim.hw.noc import DISTRIBUTION_KINDS, REDUCTION_KINDS
from accelsim.hw.spec import HardwareSpec
from accelsim.model_options import IDEAL_EFFECTS, Mode


def idealized(mode: Mode, ideal: frozenset[str] = frozenset()) -> frozenset[str]:
    """The effects replaced by MAESTRO's ideal: all of them in mode ``maestro``, else ``ideal``."""
    return frozenset(IDEAL_EFFECTS) if mode == "maestro" else ideal


@dataclass(frozen=True)
class Rates:
    """The effective rates of one hardware spec with the ``ideal`` effects idealized.

    ``ingress_words_per_cycle`` / ``egress_words_per_cycle``: the distribution and reduction
    networks (outputs use the distribution network's width where there is no reduction
    network), capped by L2's read and write bandwidth unless ``l2_ports`` is ideal;
    ``packed_ingress`` / ``packed_egress``: the network kind's packets of one step share its
    width; ``step_packed_ingress`` / ``step_packed_egress``: one step's words go as one
    transfer (ideal); ``shared_egress``: outputs compete with operands on the distribution
    network; ``ingress_latency_cycles``: the distribution network's latency to the farthest
    PE; ``drain_delay_cycles``: the MAC pipeline's depth beyond one cycle; ``l1_buffers``,
    ``l2_buffers``: 2 when double-buffered; ``ideal_dram``: bytes over bandwidth only;
    ``dram_latency_cycles``: the DRAM kind's latency per transfer (0 where ideal).
    """

    ideal: frozenset[str]
    multicast: bool
    ingress_words_per_cycle: float
    egress_words_per_cycle: float
    packed_ingress: bool
    packed_egress: bool
    step_packed_ingress: bool
    step_packed_egress: bool
    shared_egress: bool
    ingress_latency_cycles: int
    drain_delay_cycles: int
    l1_buffers: int
    l2_buffers: int
    ideal_dram: bool
    dram_latency_cycles: int
    ideal_reduction_latency: bool


def effective_rates(hw: HardwareSpec, ideal: frozenset[str]) -> Rates:
    """The :class:`Rates` of ``hw`` with the ``ideal`` effects (names of
    :data:`~accelsim.model_options.IDEAL_EFFECTS`) idealized."""
    noc, red = hw.distribution_noc, hw.reduction_noc
    dist_kind, red_kind = DISTRIBUTION_KINDS[noc.kind], REDUCTION_KINDS[red.kind]
    ingress = noc.bandwidth_words_per_cycle
    egress = red.bandwidth_words_per_cycle if red_kind.exists else ingress
    if "l2_ports" not in ideal:
        ingress = min(ingress, hw.l2.read_bandwidth_words_per_cycle)
        egress = min(egress, hw.l2.write_bandwidth_words_per_cycle)
    double_l1 = "double_buffering" in ideal or hw.l1.double_buffered
    double_l2 = "double_buffering" in ideal or hw.l2.double_buffered
    pes = hw.pe_array
    return Rates(
        ideal=ideal,
        multicast="multicast" in ideal or noc.multicast or dist_kind.always_multicast,
        ingress_words_per_cycle=ingress,
        egress_words_per_cycle=egress,
        packed_ingress=dist_kind.packed,
        packed_egress=red_kind.packed,
        step_packed_ingress="packed_ingress" in ideal,
        step_packed_egress="packed_egress" in ideal,
        shared_egress=not red_kind.exists and "shared_egress" not in ideal,
        ingress_latency_cycles=0 if "ingress_latency" in ideal else
        noc.latency_cycles * dist_kind.hops(pes.rows, pes.cols),
        drain_delay_cycles=0 if "mac_pipeline" in ideal else pes.mac_pipeline_latency_cycles - 1,
        l1_buffers=2 if double_l1 else 1,
        l2_buffers=2 if double_l2 else 1,
        ideal_dram="dram" in ideal,
        dram_latency_cycles=latency_cycles(hw.dram, "dram" in ideal),
        ideal_reduction_latency="reduction_latency" in ideal,
    )
