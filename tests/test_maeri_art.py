"""MAERI's reduction tree as STONNE builds it (``reduction_noc.kind: art``) and a design without
off-chip memory (``dram.model: none``), both on ``stonne_maeri`` (issue 17).

Hand derivation on STONNE's micro_vn1 and micro_vn2 (``validation/stonne``: GEMM M=N=1, K=1
and K=2, one VN of 1 or 2 multipliers, one read and one write port per multiplier; STONNE
takes 6 cycles on both, its trace: weight in cycle 1, input in cycle 2, multiplied in cycle 2,
the leaf adder switch (5, 0) sends in cycle 3, the accumulator in 4, the bus line in 5, the SRAM
writes in 6). In accelsim: the port carries 2 words, 2 cycles; the multiplier multiplies in the
arrival cycle (``multiply_on_arrival``), 0 more; the output's write, 1 cycle; the ART: the
product crosses the leaf adder even alone, ``max(1, ceil(log2 g))`` = 1 level for g = 1 and 2,
then the accumulator and the bus line (``reduction_noc.write_latency_cycles`` 2): 2 + 0 + 1 + 3 =
6 on both. A plain adder ``tree`` has no level for one PE: 5 and 6. With a DRAM (``simple``, the preset's 10^9
bytes/cycle) the layer's operands come in and its output goes out in a cycle each: 2 more.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelsim.analytical import analyze_layer
from accelsim.bounds import dram_bound_cycles
from accelsim.hw.noc import REDUCTION_KINDS
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.stonne_set import case_layer, cases

STONNE = Path(__file__).resolve().parents[1] / "validation" / "stonne"


def _with(hw, section: str, **fields):
    return hw.model_copy(update={section: getattr(hw, section).model_copy(update=fields)})


def test_art_levels_by_hand():
    art, tree = REDUCTION_KINDS["art"], REDUCTION_KINDS["tree"]
    # levels max(1, ceil(log2 g)): a product crosses its leaf adder even alone
    assert [art.hops(g) for g in (1, 2, 3, 8, 64)] == [1, 1, 2, 3, 6]
    assert [tree.hops(g) for g in (1, 2, 3, 8, 64)] == [0, 1, 2, 3, 6]


@pytest.mark.parametrize("case_id, tree_cycles", [("micro_vn1", 5), ("micro_vn2", 6)])
def test_one_or_two_multipliers_take_stonnes_six_cycles(case_id, tree_cycles):
    row = cases(STONNE)[case_id]
    cm, hw = case_layer(STONNE, row)
    assert (hw.reduction_noc.kind, hw.dram.model) == ("art", "none")
    assert simulate_layer(cm, hw).cycles == analyze_layer(cm, hw, "realistic").cycles == int(row["cycles"]) == 6
    tree = _with(hw, "reduction_noc", kind="tree")
    assert simulate_layer(cm, tree).cycles == analyze_layer(cm, tree, "realistic").cycles == tree_cycles
    # the ART's latency is a realistic-only cost: the reduction_latency ideal effect takes it away
    assert simulate_layer(cm, hw, SimOptions(ideal=frozenset({"reduction_latency"}))).cycles == 3


def test_no_dram_costs_no_cycles_in_either_mode():
    cm, hw = case_layer(STONNE, cases(STONNE)["micro_vn1"])
    dram = _with(hw, "dram", model="simple")
    for mode in ("realistic", "maestro"):
        assert simulate_layer(cm, dram, SimOptions(mode=mode)).cycles == \
            simulate_layer(cm, hw, SimOptions(mode=mode)).cycles + 2
        assert analyze_layer(cm, dram, mode).cycles == analyze_layer(cm, hw, mode).cycles + 2
    result = simulate_layer(cm, hw)
    assert result.accesses["input"].dram_read == 1  # the words are still counted
    assert dram_bound_cycles(8, hw) == 0 and dram_bound_cycles(8, dram) == 1
