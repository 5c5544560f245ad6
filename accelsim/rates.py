"""What a timing model charges on given hardware with some effects idealized: the effective
bandwidths (words/cycle), multicast, packing, buffering and latencies (cycles). One home for
both models: the simulator idealizes the effects ``SimOptions`` names (all of them in mode
``maestro``), the analytical model none (``realistic``) or all (``maestro``).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.hw.dram import latency_cycles
from accelsim.hw.noc import DISTRIBUTION_KINDS, REDUCTION_KINDS, port_block_pes
from accelsim.hw.spec import HardwareSpec
from accelsim.model_options import IDEAL_EFFECTS, Mode
from accelsim.workload.operators import OPERAND_ROLES


def idealized(mode: Mode, ideal: frozenset[str] = frozenset()) -> frozenset[str]:
    """The effects replaced by MAESTRO's ideal: all of them in mode ``maestro``, else ``ideal``."""
    return frozenset(IDEAL_EFFECTS) if mode == "maestro" else ideal


@dataclass(frozen=True)
class Rates:
    """The effective rates of one hardware spec with the ``ideal`` effects idealized.

    ``ingress_words_per_cycle`` / ``egress_words_per_cycle``: the distribution and reduction
    networks (outputs use the distribution network's width where there is no reduction
    network), capped by L2's read and write bandwidth unless ``l2_ports`` is ideal; a step's
    words share them; ``ports``: the distribution network's root ports (1 where
    ``packed_ingress`` is ideal), each feeding ``port_block_pes`` PEs at
    ``port_words_per_cycle``; ``shared_egress``: outputs compete with operands on the
    distribution network; ``ingress_latency_cycles``: the distribution network's latency to
    the farthest PE; ``register_stages``: steps in flight on its hop registers (systolic links,
    a pipelined tree), on top of L1's buffers; ``drain_delay_cycles``: the MAC pipeline's depth
    beyond one cycle; ``l1_buffers``, ``l2_buffers``: 2 when double-buffered; ``reused_operands``:
    the operands PEs keep in L1 across steps (all where ``l1_reuse`` is ideal); ``write_ports``:
    the reduction network's fixed one-word write ports (0: one shared width, also where
    ``write_ports`` is ideal or there is no reduction network), ``write_bus``: they are MAERI's
    collection-bus lines (``collection_bus``), else interleaved; ``write_wavefront``: PEs finish
    along the distribution network's wavefront; ``ideal_dram``:
    bytes over bandwidth only; ``dram_latency_cycles``: the DRAM kind's latency per transfer
    (0 where ideal); ``reduction_kind``, ``reduction_hop_latency_cycles``: the reduction
    network's depth (see :meth:`reduction_latency_cycles`); ``tile_barrier``: the controller's
    (``none`` where ``tile_barrier`` is ideal); ``neighbour_forwarding``: the distribution
    network's neighbour links (off where ``neighbour_forwarding`` is ideal, as MAESTRO has none);
    ``l2_prefetch_words``: with ``l2.prefetch: free_space`` on a single-buffered L2, L2's
    capacity in words, within which the next tile's new words may be fetched while the current
    tile is in use (0: off, also wherever double buffering is ideal, as in maestro mode);
    ``multiply_on_arrival``: PEs multiply operands as they arrive (``hw.pe_array``; off where
    ideal, as in maestro mode).
    """

    ideal: frozenset[str]
    multicast: bool
    ingress_words_per_cycle: float
    egress_words_per_cycle: float
    ports: int
    port_block_pes: int
    port_words_per_cycle: float
    shared_egress: bool
    ingress_latency_cycles: int
    # per hop of the distribution network, where a step's fill reaches only the PEs it uses
    # (distribution_noc.fill: used; 0 otherwise or where ideal)
    used_fill_hop_cycles: int
    distribution_kind: str
    register_stages: int
    drain_delay_cycles: int
    l1_buffers: int
    reused_operands: frozenset[str]
    write_ports: int
    write_bus: bool
    write_wavefront: bool
    l2_buffers: int
    ideal_dram: bool
    dram_latency_cycles: int
    ideal_reduction_latency: bool
    reduction_kind: str
    reduction_hop_latency_cycles: int
    reduction_write_latency_cycles: int
    tile_barrier: str
    neighbour_forwarding: bool
    pads_ragged_tiles: bool
    l2_prefetch_words: int = 0
    multiply_on_arrival: bool = False

    def ingress_latency_of(self, used_rows: int, used_cols: int) -> int:
        """A step's operand latency: to the farthest PE it uses (``used_rows`` x ``used_cols``)
        with ``distribution_noc.fill: used``, else :attr:`ingress_latency_cycles`."""
        if not self.used_fill_hop_cycles:
            return self.ingress_latency_cycles
        return self.used_fill_hop_cycles * DISTRIBUTION_KINDS[self.distribution_kind].hops(used_rows, used_cols)

    def reduction_latency_cycles(self, group_pes: int) -> int:
        """Cycles for the partial sums of ``group_pes`` PEs to meet on the way to L2 and be
        written (``reduction_noc.write_latency_cycles``); 0 where ideal or nothing drains (one
        PE crosses no hop except on MAERI's ``art``)."""
        if self.ideal_reduction_latency or group_pes < 1:
            return 0
        hops = REDUCTION_KINDS[self.reduction_kind].hops(group_pes)
        return self.reduction_hop_latency_cycles * hops + self.reduction_write_latency_cycles


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
    ports = 1 if "packed_ingress" in ideal else dist_kind.ports(hw.num_pes, noc.bandwidth_words_per_cycle)
    ingress_latency = 0 if "ingress_latency" in ideal else noc.latency_cycles * dist_kind.hops(pes.rows, pes.cols)
    return Rates(
        ideal=ideal,
        multicast="multicast" in ideal or noc.multicast or dist_kind.always_multicast,
        ingress_words_per_cycle=ingress,
        egress_words_per_cycle=egress,
        ports=ports,
        port_block_pes=port_block_pes(hw.num_pes, ports),
        port_words_per_cycle=noc.bandwidth_words_per_cycle / ports,
        shared_egress=not red_kind.exists and "shared_egress" not in ideal,
        ingress_latency_cycles=ingress_latency,
        used_fill_hop_cycles=noc.latency_cycles if noc.fill == "used" and "ingress_latency" not in ideal else 0,
        distribution_kind=noc.kind,
        register_stages=ingress_latency if dist_kind.registers_steps else 0,
        drain_delay_cycles=0 if "mac_pipeline" in ideal else pes.mac_pipeline_latency_cycles - 1,
        l1_buffers=2 if double_l1 else 1,
        reused_operands=frozenset(OPERAND_ROLES if "l1_reuse" in ideal else hw.l1.reused_operands),
        write_ports=max(1, min(hw.num_pes, int(red.bandwidth_words_per_cycle)))
        if red.write_ports != "shared" and red_kind.exists and "write_ports" not in ideal else 0,
        write_bus=red.write_ports == "collection_bus",
        write_wavefront=dist_kind.wavefront,
        l2_buffers=2 if double_l2 else 1,
        ideal_dram="dram" in ideal,
        dram_latency_cycles=latency_cycles(hw.dram, "dram" in ideal),
        ideal_reduction_latency="reduction_latency" in ideal,
        reduction_kind=red.kind,
        reduction_hop_latency_cycles=red.latency_cycles_per_hop,
        reduction_write_latency_cycles=red.write_latency_cycles,
        tile_barrier="none" if "tile_barrier" in ideal else hw.controller.tile_barrier,
        neighbour_forwarding=noc.neighbour_forwarding and "neighbour_forwarding" not in ideal,
        pads_ragged_tiles=noc.pads_ragged_tiles and "packed_ingress" not in ideal,
        l2_prefetch_words=hw.l2.size_bytes // hw.word_size_bytes
        if hw.l2.prefetch == "free_space" and not double_l2 else 0,
        multiply_on_arrival=pes.multiply_on_arrival and "multiply_on_arrival" not in ideal,
    )
