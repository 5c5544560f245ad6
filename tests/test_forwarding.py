"""Neighbour forwarding (``distribution_noc.neighbour_forwarding``, accelsim/mapping/forwarding.py):
a hand-derived stride-1 convolution, properties on random layers and mappings, and the option's
place in the spec and in maestro mode."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.results import TENSORS
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer, OpType
from test_properties import compile_or_reject, random_cases, run, style_cases


def _t(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _s(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def _hw(pes: int, forwarding: bool, *extra: str):
    """A MAERI-like array: a one-port distribution tree, an adder tree, L2 holding the layer."""
    return load_hardware("maestro_default", [
        f"pe_array.count={pes}", "l1.size_bytes=4096", "l2.size_bytes=1048576",
        "l2.read_bandwidth_words_per_cycle=64", "l2.write_bandwidth_words_per_cycle=64",
        "distribution_noc.kind=tree", "distribution_noc.multicast=true",
        "distribution_noc.bandwidth_words_per_cycle=1", "reduction_noc.kind=tree",
        f"distribution_noc.neighbour_forwarding={str(forwarding).lower()}",
        "dram.bandwidth_bytes_per_cycle=4096", *extra])


# one output column per step; PE s holds filter column s and input column x + s (STONNE's VN of
# T_S = 3 multipliers, validation/stonne/README.md)
SLIDING = [_t(3, 1, "X"), ClusterDirective(3, 0), _s(1, 1, "X"), _s(1, 1, "S")]


def test_sliding_window_hand_derived():
    """CONV K=C=R=Y=1, S=3, X=6 (4 output columns) on 3 PEs, one output column per step (4 steps).

    Step 0 (x = 0): PE s needs input column s: 3 words from L2 (and the 3 weights, which stay).
    Step x = 1, 2, 3: PE 0 needs column x, which PE 1 held at step x - 1; PE 1 needs x + 1, which
    PE 2 held; PE 2 needs x + 2, held by nobody: 1 word from L2 and 2 forwarded per step.

    Input L2 reads: 3 + 3 x 1 = 6 (each input column once); forwarded: 3 x 2 = 6; input L1
    writes: 4 x 3 = 12 either way. Without forwarding every step reads its 3 new words: 12.
    The network carries inputs and weights: 6 + 3 = 9 words (15 without), and delivers them
    (one PE each): 9 (15 without). Energy on the NoC counts a hop per word either way: 12 + 3
    operand words plus 4 drained outputs x 3 PEs = 27 hops."""
    layer = Layer.build("C", OpType.CONV2D, {"K": 1, "C": 1, "R": 1, "S": 3, "Y": 1, "X": 6})
    on, off = _hw(3, True), _hw(3, False)
    cm = compile_mapping(layer, SLIDING, 3)
    with_links, without = simulate_layer(cm, on), simulate_layer(cm, off)
    assert with_links.accesses["input"].l2_read == 6 and with_links.forwarded_words == 6
    assert without.accesses["input"].l2_read == 12 and without.forwarded_words == 0
    assert with_links.accesses["input"].l1_write == without.accesses["input"].l1_write == 12
    assert (with_links.noc_words, without.noc_words) == (9, 15)
    assert (with_links.noc_delivered_words, without.noc_delivered_words) == (9, 15)
    assert with_links.energy_breakdown_pj["noc"] == without.energy_breakdown_pj["noc"] == pytest.approx(27 * 0.035)
    # the one-word port: 6 words in at step 0 (3 inputs, 3 weights), 1 at each later step,
    # against 3 without: the links take two cycles per step off the network
    assert with_links.cycles < without.cycles
    for result in (with_links, without):
        assert analyze_layer(cm, on if result is with_links else off, "realistic").cycles == result.cycles
    assert analyze_layer(cm, on, "realistic").forwarded_words == 6
    # per-PE detail counts the forwarded words PE by PE and must agree with the classes
    assert simulate_layer(cm, on, SimOptions(per_pe=True)).forwarded_words == 6


def test_maestro_mode_ignores_the_links():
    """MAESTRO has no forwarding links: maestro mode (and the ideal effect alone) reads every
    new word from L2, as on hardware without them."""
    layer = Layer.build("C", OpType.CONV2D, {"K": 1, "C": 1, "R": 1, "S": 3, "Y": 1, "X": 6})
    cm = compile_mapping(layer, SLIDING, 3)
    on, off = _hw(3, True), _hw(3, False)
    assert simulate_layer(cm, on, SimOptions("maestro")) == simulate_layer(cm, off, SimOptions("maestro"))
    ideal = simulate_layer(cm, on, SimOptions(ideal=frozenset({"neighbour_forwarding"})))
    assert ideal.accesses == simulate_layer(cm, off).accesses and ideal.forwarded_words == 0
    assert analyze_layer(cm, on, "maestro").forwarded_words == 0


def test_a_systolic_network_refuses_the_option():
    with pytest.raises(InputError, match="neighbour_forwarding"):
        load_hardware("tpu_like_32x32", ["distribution_noc.neighbour_forwarding=true"])


def _compare(layer: Layer, hw_off, dataflow) -> int:
    """Forwarding never reads more input from L2 and never adds cycles; everything else a PE
    writes into L1 or computes stays; the per-PE engine agrees with the classes; maestro mode
    does not move. Returns the words forwarded."""
    if hw_off.distribution_noc.kind == "systolic":  # forwards already; the option is for the others
        hw_off = hw_off.model_copy(update={"distribution_noc": hw_off.distribution_noc.model_copy(
            update={"kind": "tree"})})
    hw_on = hw_off.model_copy(update={"distribution_noc": hw_off.distribution_noc.model_copy(
        update={"neighbour_forwarding": True})})
    cm = compile_or_reject(layer, list(dataflow), hw_off)
    off, on = run(cm, hw_off, "realistic"), run(cm, hw_on, "realistic")
    assert on.accesses["input"].l2_read <= off.accesses["input"].l2_read
    assert on.accesses["input"].l2_read + on.forwarded_words >= off.accesses["input"].l2_read
    assert on.cycles <= off.cycles
    assert on.macs == off.macs
    for t in TENSORS:
        assert on.accesses[t].l1_write == off.accesses[t].l1_write, t
        if t != "input":
            assert on.accesses[t] == off.accesses[t], t
    detailed = run(cm, hw_on, "realistic", per_pe=True)
    assert (detailed.cycles, detailed.forwarded_words, detailed.accesses) == (on.cycles, on.forwarded_words,
                                                                             on.accesses)
    assert run(cm, hw_on, "maestro") == run(cm, hw_off, "maestro")
    return on.forwarded_words


@st.composite
def sliding_cases(draw):
    """STONNE-like stride-1 convolutions (validation/stonne/make_mappings.py): filters across
    virtual neurons or not, T_X output rows across them, each a cluster of R x S PEs (filter
    rows, then columns innermost) or of 2 x R x S with the channels split in two (ragged when C
    is odd), one output column per step; ragged row tiles, idle PEs left over or not."""
    r, s = draw(st.integers(1, 3)), draw(st.integers(2, 4))
    tk, tx, tc = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    y = draw(st.integers(r + tx - 1, r + tx + 3))
    x = draw(st.integers(s, s + 4))
    c, k = draw(st.integers(tc, 3)), draw(st.integers(1, 3))
    layer = Layer.build("L", OpType.CONV2D, {"K": k, "C": c, "R": r, "S": s, "Y": y, "X": x})
    vn = tc * r * s
    pes = tk * tx * vn + draw(st.integers(0, 2))
    dataflow = [_t(tk, tk, "K"), _t(r + tx - 1, tx, "Y"), _t(s, 1, "X"), ClusterDirective(pes, 0)]
    if tk > 1:
        dataflow += [_s(1, 1, "K"), ClusterDirective(tx * vn, 0)]
    dataflow += [_s(r, 1, "Y"), ClusterDirective(vn, 0)]
    if tc > 1:
        per_pe = -(-c // tc)
        dataflow += [_s(per_pe, per_pe, "C"), ClusterDirective(r * s, 0)]
    dataflow += [_s(1, 1, "Y"), _s(1, 1, "R"), ClusterDirective(s, 0), _s(1, 1, "X"), _s(1, 1, "S")]
    bandwidth = draw(st.sampled_from([1, 2, 4, 8, 64]))
    return layer, _hw(pes, False, f"distribution_noc.bandwidth_words_per_cycle={bandwidth}"), dataflow


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=sliding_cases())
def test_forwarding_on_sliding_windows(case):
    layer, hw, dataflow = case
    forwarded = _compare(layer, hw, dataflow)
    # every step after a row's first slides the window by one column: PEs 0 .. S-2 of each
    # virtual neuron take their new column from the next PE
    if layer.sizes["X"] > layer.sizes["S"]:
        assert forwarded > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=random_cases())
def test_forwarding_on_random_mappings(case):
    layer, hw, dataflow = case
    _compare(layer, hw, dataflow)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=style_cases())
def test_forwarding_on_style_mappings(case):
    layer, hw, dataflow = case
    _compare(layer, hw, dataflow)
