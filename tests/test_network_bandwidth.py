"""Network bandwidth in words per cycle (issue 17).

A step's operand words share the distribution network's width; a tree has one-word root ports,
each feeding a fixed block of PEs, so a step takes as long as its busiest port; a multicast
costs one slot on each port it reaches. Hand cases derive each step's network cycles; a
property test checks that more distribution or reduction bandwidth never adds cycles.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.sim.engine import LayerSimulation, SimOptions, simulate_layer
from accelsim.workload.ops import Layer, OpType

from test_properties import hardware, layers  # noqa: E402  (tests/ is on sys.path)

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _t(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _s(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


GEMM = Layer.build("G", OpType.GEMM, {"M": 4, "N": 16, "K": 64})
# step (m, n): PE k multiplies A[m, k] by B[k, n]; the adder tree sums the 64 products
K_ACROSS_PES = (_t(1, 1, "M"), _t(1, 1, "N"), _s(1, 1, "K"))


def _tree_hw(bandwidth: float, pes: int = 64, *extra: str):
    """A MAERI-like array: a distribution tree of ``bandwidth`` words/cycle, an adder tree,
    L2 holding the layer and reading as fast as any tree here asks."""
    return load_hardware("maestro_default", [
        f"pe_array.count={pes}", "l1.size_bytes=4096", "l2.size_bytes=1048576",
        "l2.read_bandwidth_words_per_cycle=4096", "l2.write_bandwidth_words_per_cycle=4096",
        "distribution_noc.kind=tree", "distribution_noc.multicast=true",
        f"distribution_noc.bandwidth_words_per_cycle={bandwidth}", "reduction_noc.kind=tree",
        "dram.bandwidth_bytes_per_cycle=4096", *extra])


@pytest.mark.parametrize("bandwidth, first, steady", [(8, 16, 8), (64, 2, 1), (512, 1, 1), (4, 32, 16)])
def test_tree_ports_give_each_step_its_busiest_port(bandwidth, first, steady):
    """64 PEs, step (m, n) sends B[:, n] (64 words, one to each PE: unicast) and, when m
    changes (n = 0), A[m, :] (64 more words, one to each PE). With P = min(bandwidth, 64)
    ports of bandwidth / P words per cycle, each port feeds 64 / P PEs:
    - bandwidth 8: 8 ports of 1 word, 8 PEs each: 8 words per port per step (8 cycles), 16
      when A is sent too;
    - bandwidth 64: 64 ports of one PE: 1 word per port (1 cycle), 2 with A;
    - bandwidth 512: still 64 ports (one per PE), 8 words/cycle each: 1 cycle, and with A
      max(ceil(128 / 512), ceil(2 / 8)) = 1;
    - bandwidth 4: 4 ports of 16 PEs: 16 cycles, 32 with A."""
    hw = _tree_hw(bandwidth)
    cm = compile_mapping(GEMM, list(K_ACROSS_PES), hw.num_pes)
    profile = LayerSimulation(cm, hw).profile_options
    assert profile.ports == min(bandwidth, 64)
    sim = LayerSimulation(cm, hw)
    sim.run()
    got = [sim.profile.demand(step).ingress_cycles for step in range(cm.steps)]
    expected = [first if step % 16 == 0 else steady for step in range(cm.steps)]
    assert got == expected


def test_cycles_move_with_the_distribution_bandwidth():
    """The issue's example: 64 unicast words per step. Packet by packet the run cost the same
    at 8, 64 and 512 words/cycle; now the steps' network cycles add up to 4 x 16 + 60 x 8 =
    544 at 8 words/cycle, 4 x 2 + 60 x 1 = 68 at 64 and 64 x 1 = 64 at 512, and the run takes
    that plus 10 cycles: the first L2 fetch (2), the tree's ceil(log2 64) = 6 levels of
    latency before the last step computes (1) and drains (1). The analytical model agrees."""
    for bandwidth, network in ((8, 544), (64, 68), (512, 64)):
        hw = _tree_hw(bandwidth)
        cm = compile_mapping(GEMM, list(K_ACROSS_PES), hw.num_pes)
        sim = simulate_layer(cm, hw)
        assert sim.cycles == network + 2 + 6 + 1 + 1
        assert analyze_layer(cm, hw, "realistic").cycles == sim.cycles


def test_a_multicast_costs_one_slot_per_port_it_reaches():
    """FC with K across 8 PEs: every step sends the same input word to all 8 PEs (a multicast)
    and one weight to each (unicast). 2 ports of 4 PEs: the input costs 1 slot on each, the
    weights 4 each: 5 words on each port (1 word/cycle): 5 cycles; a bus of the same 2
    words/cycle sends 1 + 8 = 9 words: 5 cycles too; at 8 ports: 2 words on each port,
    ceil(9 / 8) = 2 cycles."""
    layer = Layer.build("F", OpType.FC, {"K": 8, "C": 4})
    for kind, bandwidth, expected in (("tree", 2, 5), ("bus", 2, 5), ("tree", 8, 2), ("bus", 8, 2), ("tree", 4, 3)):
        hw = _tree_hw(bandwidth, 8, f"distribution_noc.kind={kind}", "reduction_noc.kind=none")
        cm = compile_mapping(layer, [_t(1, 1, "C"), _s(1, 1, "K")], hw.num_pes)
        sim = LayerSimulation(cm, hw)
        sim.run()
        assert [sim.profile.demand(s).ingress_cycles for s in range(cm.steps)] == [expected] * 4, (kind, bandwidth)


def _with(hw: HardwareSpec, section: str, field: str, value: float) -> HardwareSpec:
    """``hw`` with one field of one section replaced."""
    return hw.model_copy(update={section: getattr(hw, section).model_copy(update={field: value})})


@st.composite
def bandwidth_cases(draw):
    layer = draw(layers, label="layer")
    hw = draw(hardware(), label="hw")
    try:
        dataflow = style_mapping(draw(st.sampled_from(sorted(STYLES)), label="style"), layer, hw)
        cm = compile_mapping(layer, dataflow, hw.num_pes)
    except (InputError, MappingError):
        assume(False)
    network = draw(st.sampled_from(["distribution_noc", "reduction_noc"]), label="network")
    factor = draw(st.sampled_from([2, 4, 16]), label="factor")
    return cm, hw, network, factor


@SETTINGS
@given(case=bandwidth_cases())
def test_more_bandwidth_never_adds_cycles(case):
    """Raising the distribution or the reduction network's bandwidth (L2's ports raised with
    it, so they do not cap it) never makes a layer slower, in the simulator or the analytical
    model."""
    cm, hw, network, factor = case
    bandwidth = getattr(hw, network).bandwidth_words_per_cycle
    l2 = "read_bandwidth_words_per_cycle" if network == "distribution_noc" else "write_bandwidth_words_per_cycle"
    base = _with(hw, "l2", l2, 1000000)
    wider = _with(base, network, "bandwidth_words_per_cycle", bandwidth * factor)
    try:
        slow, fast = simulate_layer(cm, base), simulate_layer(cm, wider)
    except MappingError:
        assume(False)
    assert fast.cycles <= slow.cycles
    assert analyze_layer(cm, wider, "realistic").cycles <= analyze_layer(cm, base, "realistic").cycles


# ------------------------------------------------------------------------------------------
# the controller's tile barrier (hw.controller.tile_barrier)


def test_output_tile_barrier_exposes_fill_and_drain_per_tile():
    """STONNE's case tpu8_16x16x32_dn16 written one k per step (TemporalMap(1,1) K): 4 output
    tiles of 8 x 8 on the 8 x 8 mesh, 32 steps each. Without the barrier the tiles overlap: the
    next tile's operands enter while the last one drains. With it every tile waits for the
    previous one's 64 outputs to land (drain: 64 words over 16 words/cycle = 4 cycles, then the
    chain's 7 hops), and its first operands need the mesh's 15 hops again, so each of the 3
    later tiles adds at least 15 + 4 cycles; the analytical model charges the same. (The
    preset's write ports are set to one shared width here: the barrier alone is tested.)"""
    layer = Layer.build("G", OpType.GEMM, {"M": 16, "N": 16, "K": 32})
    dataflow = [_t(8, 8, "M"), _s(1, 1, "N"), _t(1, 1, "K"), ClusterDirective(8, 0), _s(1, 1, "M")]
    cycles = {}
    for barrier in ("none", "output_tile"):
        hw = load_hardware("stonne_tpu", ["reduction_noc.bandwidth_words_per_cycle=16",
                                          "reduction_noc.write_ports=shared", f"controller.tile_barrier={barrier}"])
        cm = compile_mapping(layer, dataflow, hw.num_pes)
        cycles[barrier] = simulate_layer(cm, hw).cycles
        assert analyze_layer(cm, hw, "realistic").cycles == cycles[barrier]
        assert simulate_layer(cm, hw, SimOptions(mode="maestro")).cycles == \
            simulate_layer(cm, _with(hw, "controller", "tile_barrier", "none"), SimOptions(mode="maestro")).cycles
    assert cycles["output_tile"] >= cycles["none"] + 3 * (15 + 4)


@st.composite
def barrier_cases(draw):
    layer = draw(layers, label="layer")
    hw = draw(hardware(), label="hw")
    try:
        dataflow = style_mapping(draw(st.sampled_from(sorted(STYLES)), label="style"), layer, hw)
        cm = compile_mapping(layer, dataflow, hw.num_pes)
    except (InputError, MappingError):
        assume(False)
    return cm, hw, draw(st.sampled_from(["output_tile", "weight_tile"]), label="barrier")


@SETTINGS
@given(case=barrier_cases())
def test_a_tile_barrier_never_saves_cycles_and_every_engine_agrees(case):
    """A barrier only holds steps back: never fewer cycles than without it, the same counts;
    the warped, unwarped and per-PE engines agree on it; the analytical model charges it too."""
    cm, hw, barrier = case
    held = _with(hw, "controller", "tile_barrier", barrier)
    try:
        free, result = simulate_layer(cm, hw), simulate_layer(cm, held)
    except MappingError:
        assume(False)
    assert result.cycles >= free.cycles
    assert result.accesses == free.accesses
    for options in (SimOptions(fast_forward=False), SimOptions(per_pe=True)):
        assert simulate_layer(cm, held, options).cycles == result.cycles
    assert analyze_layer(cm, held, "realistic").cycles >= analyze_layer(cm, hw, "realistic").cycles


@pytest.mark.parametrize("rn_bw, drain", [(64, 1), (16, 1), (8, 1), (4, 5), (2, 19), (1, 50)])
def test_interleaved_write_ports_drain_along_the_wavefront(rn_bw, drain):
    """One 8 x 8 output tile (GEMM 8x8x16 one k per step) on stonne_tpu, whose write ports are
    interleaved: PE (row, col) is done row + col cycles after PE (0, 0) (14 for the last) and
    writes through port (8 row + col) % rn_bw, one word per cycle. rn_bw 8: port = col, its 8
    words ready one per cycle from col, so port 7 ends at 7 + 8 = 15, one cycle after the last
    PE is done: drain 1 (so do 16 and 64). rn_bw 4: port 3 holds columns 3 and 7, 16 words ready
    from cycle 3, ending at 3 + 16 = 19: drain 19 - 14 = 5. rn_bw 2: port 1 holds 32 words from
    cycle 1: 33 - 14 = 19. rn_bw 1: 64 words from 0: 64 - 14 = 50. With one shared width the
    drain is ceil(64 / rn_bw) after the last PE; the cycles differ by exactly that, and the
    analytical model charges the same. (STONNE: 35, 35, 35, 39, 53, 83 cycles, i.e. +0, +0, +0,
    +4, +18, +48 over rn_bw 64.)"""
    layer = Layer.build("G", OpType.GEMM, {"M": 8, "N": 8, "K": 16})
    dataflow = [_t(8, 8, "M"), _s(1, 1, "N"), _t(1, 1, "K"), ClusterDirective(8, 0), _s(1, 1, "M")]
    cycles = {}
    for wiring in ("interleaved", "shared"):
        hw = load_hardware("stonne_tpu", [f"reduction_noc.bandwidth_words_per_cycle={rn_bw}",
                                          f"reduction_noc.write_ports={wiring}"])
        cm = compile_mapping(layer, dataflow, hw.num_pes)
        cycles[wiring] = simulate_layer(cm, hw).cycles
        assert analyze_layer(cm, hw, "realistic").cycles == cycles[wiring]
    assert cycles["shared"] - cycles["interleaved"] == -(-64 // rn_bw) - drain
