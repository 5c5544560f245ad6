"""``pe_array.multiply_on_arrival``: a PE multiplies each operand in the cycle it arrives
(issue 17).

Hand derivation on STONNE's micro_fold8 (``validation/stonne``: GEMM M=N=1, K=8, one
multiplier holding all 8 folds, 64 one-word root ports, one write port per multiplier): its one
port carries 8 weights and 8 inputs, 16 cycles. Without the option the 8 MACs follow the
arrival (8 cycles); with it the multiplier multiplies each input in the cycle it arrives, as
STONNE's does, and none follows: 8 cycles fewer, 28 -> 20. Then the product crosses the ART's
leaf adder (1 level) and the accumulator and collection-bus registers (2) and is written (1
cycle): 16 + 0 + 1 + 3 = 20, STONNE's 20.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.mapping.demand import compute_cycles
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.stonne_set import case_layer, cases

STONNE = Path(__file__).resolve().parents[1] / "validation" / "stonne"


def test_compute_cycles_by_hand():
    # 8 MACs behind a 16-cycle transfer: none follows; 8 MACs behind 3 cycles: 8 - 3 = 5;
    # none: 0; 9 MACs on operands already held (no transfer): all 9
    got = compute_cycles(np.array([8, 8, 0, 9]), 1, np.array([16, 3, 5, 0]), True)
    assert got.tolist() == [0, 5, 0, 9]
    assert compute_cycles(np.array([8, 9]), 2, np.array([16, 1]), False).tolist() == [4, 5]


@given(st.integers(0, 500), st.integers(1, 4), st.integers(0, 500))
def test_on_arrival_never_slower_and_one_mac_per_cycle(macs, per_cycle, ingress):
    off = compute_cycles(macs, per_cycle, ingress, False)
    on = compute_cycles(macs, per_cycle, ingress, True)
    assert on <= off
    # the MAC cycles that do not overlap the transfer follow it, no more
    assert on == max(0, off - ingress)


def test_micro_fold8_saves_eight_cycles_in_both_models():
    row = cases(STONNE)["micro_fold8"]
    cm, hw = case_layer(STONNE, row)
    off = hw.model_copy(update={"pe_array": hw.pe_array.model_copy(update={"multiply_on_arrival": False})})
    assert hw.pe_array.multiply_on_arrival
    on_cycles = simulate_layer(cm, hw).cycles
    assert simulate_layer(cm, off).cycles - on_cycles == 8
    assert on_cycles == int(row["cycles"]) == 20
    assert analyze_layer(cm, hw, mode="realistic").cycles == on_cycles
    assert simulate_layer(cm, hw, SimOptions(mode="maestro")).cycles == simulate_layer(cm, off, SimOptions(mode="maestro")).cycles


def test_per_pe_engine_agrees_with_multiply_on_arrival():
    # micro_fold2_m4: 4 steps of 4 multipliers with 2 folds each; the per-PE engine's PEs end
    # with their lock-step group and give the same cycles
    cm, hw = case_layer(STONNE, cases(STONNE)["micro_fold2_m4"])
    assert simulate_layer(cm, hw, SimOptions(per_pe=True)).cycles == simulate_layer(cm, hw).cycles
