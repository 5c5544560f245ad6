"""accelsim's realistic mode on the stonne_* presets against STONNE's cycles (issue 17).

``validation/stonne/`` keeps STONNE's results (cases.csv: cycles and counters of the 112 cases it
ran correctly) and each case as a mapping with STONNE's spatial unrolling, tiles and loop order.
The issue's acceptance is 5% on every case. Measured (2026-11-26, the STONNE
section of ``accelsim validate``; ``PYTHONPATH=. python validation/stonne/accelsim_vs_stonne.py``
prints cycles, input L2 reads and forwarded words beside STONNE's): the cases listed below are
within 5%, among them, with the multipliers' forwarding links (``stonne_maeri`` sets
``distribution_noc.neighbour_forwarding``), the 19 stride-1 convolutions with folded filter
columns where STONNE forwards (up to 3.3x STONNE before the links), and with the multipliers
working on each fold's operands as they arrive (``pe_array.multiply_on_arrival``) the folded
cases fc_b1_256_128 (1.08x before), micro_fold8, micro_fold4_m4 and micro_fold8_m4, and with
MAERI's reduction tree, accumulators and collection bus as STONNE builds them
(``reduction_noc.kind: art``, ``write_ports: collection_bus``), its multipliers multiplying in
the cycle an operand arrives and no DRAM (``dram.model: none``) every micro case and the two FC
cases on 256 multipliers (0.89x and 0.94x before), and with the mesh's fill reaching only the
PEs a tile uses (``stonne_tpu``'s ``distribution_noc.fill: used``) every TPU case, and with a
ragged fold's zero padding sent through the read ports (``distribution_noc.pads_ragged_tiles``)
conv_s_rem (0.75x before): every case.
This test pins the cases within 5% and, on every case, that
the analytical model's realistic mode equals the simulator, that weight L2 reads equal STONNE's
SRAM weight reads, and that input L2 reads equal STONNE's where STONNE neither forwards inputs
between multipliers nor multiplies a ragged tile's zero padding, and where it forwards, that
input L2 reads and forwarded words equal its SRAM input reads and forwardings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelsim.analytical import analyze_layer
from accelsim.model_options import IDEAL_EFFECTS
from accelsim.sim.engine import simulate_layer
from accelsim.validation.stonne_set import (LADDER, MAESTRO_MODE, OVERLAP, RUNGS, case_layer, cases, stonne_csv_rows,
                                            stonne_row, stonne_section)

STONNE = Path(__file__).resolve().parents[1] / "validation" / "stonne"
CASES = cases(STONNE)
WITHIN_5_PERCENT = (
    # the distribution ports and the weight-tile barrier set STONNE's time
    "conv_1x1", "conv_1x1_dn64", "conv_1x1_xy", "conv_ex_dn64_rn8", "conv_s2_5x5", "conv_s2_c4", "conv_s2_fr3",
    "conv_s2_ms256", "conv_tx2_ty2", "conv_ty3", "fc_b4_128_64", "gemm_64_t2216", "gemm_64_t444", "gemm_k64_full",
    "gemm_ms128", "gemm_ms256_t848", "gemm_ms256_t884_dn64", "gemm_ms256_t884_dn8", "gemm_t2216_dn2", "gemm_tall_m",
    "gemm_unicast16_dn64", "gemm_unicast16_dn8", "gemm_wide_n", "micro_vn1", "micro_vn8_n2",
    # and the inputs streamed again for every weight tile (stonne_maeri's l1.reused_operands: [weight])
    "conv_frs", "conv_fs3", "fc_b1_512_64_dn4",
    # a ragged fold's zero padding sent through the ports (stonne_maeri's
    # distribution_noc.pads_ragged_tiles)
    "conv_s_rem",
    # the multipliers working on each fold's operands as they arrive (stonne_maeri's
    # pe_array.multiply_on_arrival)
    "fc_b1_256_128", "micro_fold4_m4", "micro_fold8", "micro_fold8_m4",
    # MAERI's reduction tree as STONNE builds it (stonne_maeri's reduction_noc.kind: art: at
    # least one adder level, then the accumulator and the collection-bus line), its multipliers
    # multiplying in the cycle an operand arrives, and no DRAM (dram.model: none)
    "micro_fold2", "micro_fold4", "micro_fold2_m4", "micro_tm1_m4", "micro_vn2", "micro_vn4", "micro_vn8",
    "micro_vn16", "micro_vn32", "micro_vn64",
    # MAERI's collection bus and STONNE's write queue (stonne_maeri's reduction_noc.write_ports:
    # collection_bus)
    "fc_b1_128_256_ms256", "fc_b8_64_64_ms256", "micro_tm2", "micro_tm2_m8", "micro_tm4", "micro_tm4_m16",
    "micro_tm4_rn8", "micro_tm8", "micro_tm8_m32", "micro_tn2", "micro_tn4", "micro_tn8",
    # the TPU mesh streaming one k per step, its outputs written through the interleaved write
    # ports as the wavefront finishes them (stonne_tpu's reduction_noc.write_ports)
    # (and, with stonne_tpu's distribution_noc.fill: used, reduction_noc.write_latency_cycles: 2
    # and dram.model: none, the tiles that use part of the mesh: tpu8_tm4_16x16x16,
    # tpu8_ragged_20x12x16)
    *(c for c in CASES if c.startswith("tpu8_")),
    # the multipliers' forwarding links (stonne_maeri's distribution_noc.neighbour_forwarding)
    "conv_5x5", "conv_ex_dn16_rn8", "conv_ex_dn1_rn8", "conv_ex_dn2_rn8", "conv_ex_dn32_rn8", "conv_ex_dn4_rn8",
    "conv_ex_dn8_rn1", "conv_ex_dn8_rn2", "conv_ex_dn8_rn32", "conv_ex_dn8_rn4", "conv_ex_dn8_rn8", "conv_fc4_k1",
    "conv_fc4_k1_dn1", "conv_fc4_k2", "conv_fr3", "conv_ms256", "conv_ms256_tx2_dn4", "conv_ms256_tx2_dn64",
)
# STONNE forwards inputs between its multipliers (T_Y_ = 1, T_S > 1, stride 1, S % T_S = 0)
FORWARDING = sorted(c for c, r in CASES.items() if r["network"] == "MAERI" and int(r["ms_input_forwardings"]))


def _run(case_id: str):
    """The case on its preset with STONNE's flags as --set overrides: (compiled mapping, hw)."""
    return case_layer(STONNE, CASES[case_id])


@pytest.mark.parametrize("case_id", WITHIN_5_PERCENT)
def test_realistic_within_5_percent_of_stonne(case_id):
    cm, hw = _run(case_id)
    reference = int(CASES[case_id]["cycles"])
    result = simulate_layer(cm, hw)
    assert abs(result.cycles - reference) <= 0.05 * reference, (result.cycles, reference)
    assert analyze_layer(cm, hw, "realistic").cycles == result.cycles


@pytest.mark.parametrize("case_id", FORWARDING)
def test_input_reads_and_forwardings_equal_stonnes(case_id):
    """STONNE reads a row's first window whole and then only its last column per fold; the
    other columns cross the forwarding links (validation/stonne/README.md)."""
    cm, hw = _run(case_id)
    result = analyze_layer(cm, hw, "realistic")
    assert result.accesses["input"].l2_read == int(CASES[case_id]["sram_input_reads"])
    assert result.forwarded_words == int(CASES[case_id]["ms_input_forwardings"])


@pytest.mark.slow
@pytest.mark.parametrize("case_id", sorted(CASES))
def test_every_case_counts_and_models_agree(case_id):
    cm, hw = _run(case_id)
    result = simulate_layer(cm, hw)
    assert result.macs == int(CASES[case_id]["macs"])
    assert analyze_layer(cm, hw, "realistic").cycles == result.cycles
    if CASES[case_id]["network"] == "MAERI":
        assert result.accesses["weight"].l2_read == int(CASES[case_id]["sram_weight_reads"])
        r = CASES[case_id]
        if r["multiplications"] == r["macs"]:
            assert result.accesses["input"].l2_read == int(r["sram_input_reads"])
        assert result.forwarded_words == int(r["ms_input_forwardings"])


def test_ladder_rungs_cover_every_effect_once():
    """Each ideal effect of the engine is switched by exactly one rung of the STONNE ladder."""
    switched = [effect for effects in RUNGS.values() for effect in effects]
    assert sorted(switched) == sorted(IDEAL_EFFECTS)
    assert LADDER == (MAESTRO_MODE, *RUNGS, OVERLAP)


@pytest.mark.parametrize("case_id", ["fc_b1_256_128", "tpu8_16x16x32_dn16"])
def test_section_rows_walk_from_stonne_to_ours(case_id):
    """The ladder's parts sum to realistic - STONNE; its first rung lands on maestro mode;
    inputs streamed again cost cycles on the FC case (one batch row: the same inputs for all 32
    weight tiles) and nothing on the TPU (stonne_tpu reuses both operands); the section and the
    CSV carry the row's own numbers."""
    row = stonne_row(STONNE, CASES[case_id])
    parts = row.ladder.parts()
    assert list(parts) == list(LADDER)
    assert sum(parts.values()) == row.realistic_cycles - row.stonne_cycles
    assert parts[MAESTRO_MODE] == row.maestro_cycles - row.stonne_cycles
    assert row.analytical_cycles == row.realistic_cycles
    assert (parts["input_streaming"] > 0) == (row.network == "MAERI")
    # the TPU's interleaved write ports finish the drain along the wavefront: fewer cycles
    assert (parts["ports"] < 0) == (row.network != "MAERI")
    assert parts["buffers_dram"] == 0
    text = "\n".join(stonne_section([row]))
    assert f"| {case_id} | {row.stonne_cycles:,} | {row.realistic_cycles:,} | {row.ratio:.3f}" in text
    assert ("**1 of 1**" in text) == row.ok
    (csv_row,) = stonne_csv_rows([row])
    assert csv_row["realistic_cycles"] == row.realistic_cycles
    assert sum(v for k, v in csv_row.items() if k.startswith("rung_")) == row.realistic_cycles - row.stonne_cycles
