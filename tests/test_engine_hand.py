"""Small layers whose cycles and access counts are derived by hand, one per network kind.

Common hardware (``_tiny``): DRAM 64 bytes/cycle with 1-byte bursts and no latency, so one
DMA transfer of up to 64 bytes costs 1 cycle; 1-byte words; 1 MAC per PE per cycle, no MAC
pipeline latency; L1 and L2 large enough for everything; distribution network 1 word/cycle
with 1 cycle latency; reduction network 1 word/cycle, 1 cycle per hop.

Rules used in the derivations (README, "Timing and counting rules"):
- a packet holds the network for ceil(words / bandwidth) cycles; on systolic links and on a
  reduction network a step's packets share the width: ceil(total words / bandwidth); latency
  is added to arrival;
- a PE computes a step when its operands have arrived; a step takes ceil(MACs / (MACs/cycle));
- a finished output tile leaves after the step: ceil(words / bandwidth) per reduction group,
  then the reduction depth (tree: ceil(log2 g) hops, chain: g - 1 hops) before it is in L2;
- the last L2 tile's outputs are written back to DRAM after they have landed in L2.
"""

from __future__ import annotations

import pytest

from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective as Cluster
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer


def S(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def T(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _tiny(pes=4, noc="bus", multicast=True, reduction="tree", noc_bw=1, red_bw=1, rows=None, cols=None):
    shape = [f"pe_array.rows={rows}", f"pe_array.cols={cols}"] if rows else [f"pe_array.count={pes}"]
    return load_hardware("maestro_default", shape + [
        "pe_array.macs_per_pe_per_cycle=1", "pe_array.mac_pipeline_latency_cycles=1",
        "l1.size_bytes=4096", "l2.size_bytes=1048576",
        f"l2.read_bandwidth_words_per_cycle={noc_bw}", f"l2.write_bandwidth_words_per_cycle={red_bw}",
        f"distribution_noc.kind={noc}", f"distribution_noc.multicast={str(multicast).lower()}",
        f"distribution_noc.bandwidth_words_per_cycle={noc_bw}", "distribution_noc.latency_cycles=1",
        f"reduction_noc.kind={reduction}", f"reduction_noc.bandwidth_words_per_cycle={red_bw}",
        "reduction_noc.latency_cycles_per_hop=1",
        "dram.model=simple", "dram.bandwidth_bytes_per_cycle=64", "dram.latency_cycles=0", "dram.burst_bytes=1",
        "word_size_bytes=1",
    ])


def _acc(result, tensor):
    return result.accesses[tensor].__dict__


FC4 = Layer.build("fc4", "FC", {"K": 4, "C": 1})


def test_bus_with_multicast():
    """FC with 4 outputs from 1 input, K spread over 4 PEs (SpatialMap(1,1) K), one step.

    DMA: input 1 + weights 4 = 5 bytes -> 1 cycle, L2 ready at 1.
    NoC: the input is one multicast packet (1 cycle), each PE's weight its own (4 cycles):
    cycles 1..6, arrival after 1 cycle of latency at 7. Compute 1 MAC: 7..8.
    Drain: 4 tiles of 1 word, no reduction (group of 1): 4 cycles, 8..12.
    Write-back of 4 output words: 1 cycle, 12..13.  Total 13 cycles.
    Counts: input read once from L2 and written to 4 L1s; outputs read from L1 once per MAC
    (accumulate) plus once to drain.
    """
    hw = _tiny()
    r = simulate_layer(compile_mapping(FC4, [S(1, 1, "K")], hw.num_pes), hw)
    assert r.cycles == 13
    assert r.macs == 4
    assert _acc(r, "input") == dict(l1_read=4, l1_write=4, l2_read=1, l2_write=1, dram_read=1, dram_write=0)
    assert _acc(r, "weight") == dict(l1_read=4, l1_write=4, l2_read=4, l2_write=4, dram_read=4, dram_write=0)
    assert _acc(r, "output") == dict(l1_read=8, l1_write=4, l2_read=4, l2_write=4, dram_read=0, dram_write=4)
    assert r.noc_words == 5 and r.noc_delivered_words == 8
    assert r.compute_busy_cycles == 1
    assert r.stall_cycles == {"compute": 0, "distribution_noc": 6, "reduction": 4, "dram": 2}


def test_bus_without_multicast_sends_the_input_once_per_pe():
    """Same layer and mapping on a bus without multicast: the input goes as 4 packets, so the
    NoC phase takes 8 cycles (1..9), arrival 10, compute 10..11, drain 11..15, write-back
    15..16: 16 cycles. The input is read from L2 four times."""
    hw = _tiny(multicast=False)
    r = simulate_layer(compile_mapping(FC4, [S(1, 1, "K")], hw.num_pes), hw)
    assert r.cycles == 16
    assert _acc(r, "input")["l2_read"] == 4
    assert _acc(r, "input")["l1_write"] == 4


REDUCE4 = Layer.build("reduce4", "FC", {"K": 1, "C": 4})


@pytest.mark.parametrize("kind, cycles", [("tree", 15), ("chain", 16)])
def test_spatial_reduction_tree_and_chain(kind, cycles):
    """One output summed over C = 4 spread across 4 PEs (SpatialMap(1,1) C), one step.

    DMA: 4 inputs + 4 weights = 8 bytes, 1 cycle. NoC: 8 single-word packets, 1..9, arrival
    10. Compute 10..11. Drain: one reduction group of 4 PEs, 1 word: 1 cycle (11..12), then
    the reduction depth: tree ceil(log2 4) = 2 hops -> lands at 14; chain 3 hops -> 15.
    Write-back 1 cycle: 15 (tree) or 16 (chain).
    """
    hw = _tiny(reduction=kind)
    r = simulate_layer(compile_mapping(REDUCE4, [S(1, 1, "C")], hw.num_pes), hw)
    assert r.cycles == cycles
    assert _acc(r, "output") == dict(l1_read=8, l1_write=4, l2_read=1, l2_write=1, dram_read=0, dram_write=1)
    assert r.egress_words == 4


GEMM = Layer.build("gemm", "GEMM", {"M": 3, "N": 2, "K": 2})
TPU_GEMM = [S(1, 1, "N"), T(2, 2, "K"), T(1, 1, "M"), Cluster(2, 0), S(1, 1, "K")]


def test_systolic_weight_stationary_gemm():
    """C[3x2] = A[3x2] B[2x2] on a 2x2 systolic array, weight stationary: PE (n, k) keeps
    B[k][n]; one row of A per step (3 steps); the two PEs of a column reduce over a chain.
    Systolic links: 2 words/cycle shared by a step's packets (each row has its own edge link),
    1 cycle per hop over rows+cols-1 = 3 hops -> latency 3. The reduction chains of the two
    columns also work side by side: 2 words/cycle together.

    The link registers hold steps in flight, so operands may be sent 2 (L1) + 3 (hops) steps
    ahead of the computation.

    DMA: A 6 + B 4 = 10 bytes, 1 cycle, L2 ready at 1.
    Step 0: A[0][0..1] (2 words: 1 cycle) + 4 weights (2 cycles): 1..4, arrival 7, compute 7..8,
      drain 2 groups x 1 word = 1 cycle (8..9), +1 hop -> lands 10.
    Step 1: only A[1][*]: 4..5, arrival 8, compute 8..9, drain 9..10 -> 11.
    Step 2: 5..6, arrival 9, compute 9..10, drain 10..11, lands 12; write-back of 6 words 12..13.
    Total 13 cycles; compute busy 3; stalls: DRAM 1 (first tile) + 1 (write-back), NoC 6,
    reduction 2 (drain after the last computation).
    """
    hw = _tiny(noc="systolic", multicast=False, reduction="chain", noc_bw=2, red_bw=2, rows=2, cols=2)
    r = simulate_layer(compile_mapping(GEMM, TPU_GEMM, hw.num_pes), hw)
    assert r.cycles == 13
    assert r.compute_busy_cycles == 3
    assert r.stall_cycles == {"compute": 0, "distribution_noc": 6, "reduction": 2, "dram": 2}
    assert _acc(r, "input") == dict(l1_read=12, l1_write=12, l2_read=6, l2_write=6, dram_read=6, dram_write=0)
    assert _acc(r, "weight") == dict(l1_read=12, l1_write=4, l2_read=4, l2_write=4, dram_read=4, dram_write=0)
    assert _acc(r, "output") == dict(l1_read=24, l1_write=12, l2_read=6, l2_write=6, dram_read=0, dram_write=6)


def test_maestro_mode_packs_all_operands_into_one_transfer():
    """MAESTRO's assumptions on the FC4 case: 5 operand words at 1 word/cycle = 5 cycles with
    no latency (1..6), compute 6..7, 4 output words 7..11 with no reduction latency, write-back
    11..12: 12 cycles."""
    hw = _tiny()
    r = simulate_layer(compile_mapping(FC4, [S(1, 1, "K")], hw.num_pes), hw, SimOptions(mode="maestro"))
    assert r.cycles == 12


def test_read_back_waits_for_the_previous_visits_drain():
    """GEMM M=1, N=2, K=2 on one PE: TemporalMap(1,1) K; TemporalMap(1,1) N, with a slow
    reduction network (0.25 words/cycle, so L2 takes 0.25 words/cycle too).

    Steps (K, N): s0 (0,0), s1 (0,1), s2 (1,0), s3 (1,1). Every step ends a visit of its 1-word
    output tile, so every step drains (4 cycles, a group of 1 PE: no hop latency); s2 and s3
    revisit the outputs of s0 and s1 and read their partial sums back from L2, which they may
    only do once the drain of that previous visit has landed. L1 holds 2 steps.

    DMA: A 2 + B 4 = 6 bytes, 1 cycle, L2 ready at 1.
    s0: A[0,0] 1..2, B[0,0] 2..3, arrival 4, compute 4..5, drain 5..9 (lands 9).
    s1: A[0,0] kept, B[0,1] 3..4, arrival 5, compute 5..6, drain waits for the network: 9..13.
    s2: an L1 buffer is free at 5 (s0 computed), but its read-back of output N=0 waits for s0's
      drain to land at 9 (without that rule it would be sent at 7..8 and read a partial sum
      L2 does not hold yet): A[0,1] 9..10, B[1,0] 10..11, read-back 11..12, arrival 13,
      compute 13..14, drain 14..18.
    s3: held until s1's drain lands at 13; A[0,1] kept, B[1,1] 13..14, read-back 14..15,
      arrival 16, compute 16..17, drain 18..22. Write-back of 2 words 22..23. Total 23.
    Array: busy 4 (1 per step); stalls: s0 DRAM 1 + NoC 3; s2 waits 6..13, of which the 4
    cycles its read-back was held (5..9) are the reduction's and 3 the NoC's; s3 waits 14..16,
    1 held cycle (12..13) the reduction's and 1 the NoC's; after the last computation the
    drains 17..22 (reduction 5) and the write-back 22..23 (DRAM 1):
    4 + DRAM 2 + NoC 7 + reduction 10 = 23.
    Output counts: L1 reads 4 accumulates + 4 drains, L1 writes 4 MACs + 2 read-backs, L2 reads
    2 read-backs + 2 words written back, L2 writes 4 drained words.
    """
    hw = _tiny(pes=1, red_bw=0.25)
    layer = Layer.build("g", "GEMM", {"M": 1, "N": 2, "K": 2})
    cm = compile_mapping(layer, [T(1, 1, "K"), T(1, 1, "N")], hw.num_pes)
    events = []
    r = simulate_layer(cm, hw, sink=lambda *e: events.append(e))
    assert r.cycles == 23
    assert r.compute_busy_cycles == 4
    assert r.stall_cycles == {"compute": 0, "distribution_noc": 7, "reduction": 10, "dram": 2}
    read_backs = [(e[2], e[3], e[4]) for e in events if e[0] == "distribution_noc" and e[5] == "output"]
    drains = [(e[2], e[3], e[4]) for e in events if e[0] == "reduction_noc"]
    assert read_backs == [(11, 12, 2), (14, 15, 3)]
    assert drains == [(5, 9, 0), (9, 13, 1), (14, 18, 2), (18, 22, 3)]
    assert _acc(r, "output") == dict(l1_read=8, l1_write=6, l2_read=4, l2_write=4, dram_read=0, dram_write=2)
    for options in (SimOptions(per_pe=True), SimOptions(fast_forward=False)):
        assert simulate_layer(cm, hw, options).cycles == 23
