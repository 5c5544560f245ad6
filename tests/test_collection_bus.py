"""MAERI's collection bus and STONNE's SRAM write queue (``reduction_noc.write_ports:
collection_bus``, :class:`accelsim.mapping.ports.CollectionBus`; issue 17).

Hand derivation on STONNE's micro_tm4 (``validation/stonne``: GEMM M=4, N=1, K=8, T_M=4: four
VNs of 8 multipliers on 64, one read and one write port per multiplier). STONNE's ART sends
each VN's sum from the level-3 adder switch over its 8 multipliers, (3, 0)..(3, 3); switches
(3, 1) and (3, 2) share an augmented link, so they form pair 1 of the paired switches and both
go to bus line 1; (3, 3) is in pair 2 (line 2); (3, 0) is the sixth unpaired switch, on line
(5 + 52 paired) % 64 = 57. STONNE's trace (its DEBUG_MEM_OUTPUT build) writes VN1 and VN3
through ports 1 and 2 in cycle 8, VN0 through port 57 in cycle 9, VN2 through port 1 in cycle
10. The lines carry 2, 1, 1 words: busy 2 cycles; the write queue takes 3 words in its first
cycle and retires 2, then takes 1 and retires 1 of 2, then the last: 3 cycles, 1 beyond the
busiest line. So: 2 packages per read port (weight, input) 2 cycles, no MAC after the arrival,
the busiest line 2, the tree 3 levels + accumulator + line 2, the queue 1: 2 + 2 + 5 + 1 = 10,
STONNE's 10 (with the drains sharing one width: 2 + 1 + 5 = 8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.mapping.ports import _bus_wiring, art_output_switch, write_queue_cycles
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.stonne_set import case_layer, cases

STONNE = Path(__file__).resolve().parents[1] / "validation" / "stonne"


def test_vn_output_switches_and_lines_as_stonnes_trace():
    wiring = _bus_wiring(64, 64)
    switches = [art_output_switch(64, 8 * v, 8 * v + 7) for v in range(4)]
    assert switches == [(3, 0), (3, 1), (3, 2), (3, 3)]
    assert [wiring[s] for s in switches] == [57, 1, 1, 2]
    # one or two multipliers: the leaf adder (5, 0), line (9 + 52) % 64 = 61; 16: (2, 0), line 55
    assert wiring[art_output_switch(64, 0, 0)] == wiring[art_output_switch(64, 0, 1)] == 61
    assert wiring[art_output_switch(64, 0, 15)] == 55


def test_a_vn_across_an_augmented_pair_reduces_at_the_leaves():
    # multipliers 3-5: leaf switches 1 (children 2, 3) and 2 (4, 5) share an augmented link;
    # the larger span is on the right, nothing left of switch 1 needs the parent: the link
    # carries switch 1's product to switch 2, which holds the whole VN
    assert art_output_switch(64, 3, 5) == (5, 2)


def test_write_queue_by_hand():
    # micro_tm4's lines 2, 1, 1 -> 3 cycles (module docstring); 5 words at once: 3, 1, 1 -> 3;
    # one word -> 1; nothing -> 0
    got = write_queue_cycles(np.array([[2, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]]))
    assert got.tolist() == [3, 3, 1, 0]


@given(st.lists(st.integers(0, 12), min_size=1, max_size=16))
def test_write_queue_follows_the_busiest_line_by_at_most_its_halvings(loads):
    t = int(write_queue_cycles(np.array([loads]))[0])
    busiest, total = max(loads), sum(loads)
    assert busiest <= t <= busiest + total.bit_length()
    if busiest == 1:  # all at once: half (rounded up) retired per cycle
        assert t == total.bit_length()


def test_micro_tm4_in_both_models():
    row = cases(STONNE)["micro_tm4"]
    cm, hw = case_layer(STONNE, row)
    assert hw.reduction_noc.write_ports == "collection_bus"
    bus = simulate_layer(cm, hw).cycles
    assert bus == int(row["cycles"]) == 10
    assert analyze_layer(cm, hw, "realistic").cycles == bus
    assert simulate_layer(cm, hw, SimOptions(per_pe=True)).cycles == bus
    shared = hw.model_copy(update={"reduction_noc": hw.reduction_noc.model_copy(update={"write_ports": "shared"})})
    assert simulate_layer(cm, shared).cycles == analyze_layer(cm, shared, "realistic").cycles == 8
    # the bus is a realistic-only cost: the write_ports ideal effect takes it away
    assert simulate_layer(cm, hw, SimOptions(ideal=frozenset({"write_ports"}))).cycles == 8
