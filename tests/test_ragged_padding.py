"""The zero padding of a ragged tile on the distribution network's root ports
(``distribution_noc.pads_ragged_tiles``, on ``stonne_maeri``; issue 17).

Hand derivation on STONNE's conv_s_rem (``validation/stonne``: CONV R=S=3, C=6, K=4 on a 10x10
input, 8x8 outputs; T_R=3, T_S=2, T_C=3, T_K=2: two VNs of 18 multipliers (c, r, s) on 64, 8
read ports of 8 multipliers each). Every multiplier holds 2 channel folds and 2 filter-column
folds; with S = 3 the second column fold of the multipliers with s = 1 has one real column and
one of zero padding. STONNE sends the padding through the ports (its ``dn_port_input_sends``,
18,432, equal its multiplications, 4/3 of the 13,824 MACs) but reads only the real inputs from
SRAM (6,912). Per step (one output position of one K tile) a port's 8 multipliers get 2
channels x 2 columns = 4 input words each, 32; over 2 K tiles x 64 positions 4,096, plus the
tiles' weights 2 x 8 x 4 = 64: 4,160 on the busiest port, STONNE's ``dn_busiest_port_sends``,
and 4,160 + 18 = 4,178 cycles, STONNE's. Clipped, the 4 multipliers with s = 1 get 2 words: 24
per step, 2 x 64 x 24 + 2 x 24 = 3,120 on the port, 3,138 cycles. Input L2 reads stay 6,912.
"""

from __future__ import annotations

from pathlib import Path

from accelsim.analytical import analyze_layer
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.stonne_set import case_layer, cases

STONNE = Path(__file__).resolve().parents[1] / "validation" / "stonne"


def test_conv_s_rem_sends_its_padding_through_the_ports():
    row = cases(STONNE)["conv_s_rem"]
    cm, hw = case_layer(STONNE, row)
    assert hw.distribution_noc.pads_ragged_tiles
    clipped = hw.model_copy(update={"distribution_noc": hw.distribution_noc.model_copy(
        update={"pads_ragged_tiles": False})})
    padded = simulate_layer(cm, hw)
    assert padded.cycles == analyze_layer(cm, hw, "realistic").cycles == int(row["cycles"]) == 4178
    assert simulate_layer(cm, hw, SimOptions(per_pe=True)).cycles == 4178  # PE by PE, the same ports
    assert simulate_layer(cm, clipped).cycles == analyze_layer(cm, clipped, "realistic").cycles == 3138
    # the padding is not read from L2, and maestro mode (one packed transfer per step) has no ports
    assert padded.accesses["input"].l2_read == simulate_layer(cm, clipped).accesses["input"].l2_read \
        == int(row["sram_input_reads"]) == 6912
    maestro = SimOptions(mode="maestro")
    assert simulate_layer(cm, hw, maestro).cycles == simulate_layer(cm, clipped, maestro).cycles
