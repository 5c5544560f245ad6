"""``l1.reused_operands``: the operands a PE keeps in its L1 from one step to the next (issue 17;
STONNE's MAERI multipliers keep their weights but consume every input they receive)."""

from __future__ import annotations

import pytest

from accelsim.analytical import analyze_layer
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_maestro, prepare
from accelsim.sim.engine import SimOptions, simulate_layer

# C[1][2] = A[1][4] B[4][2] on 4 PEs, PE k holding A[0][k] and B[k][n]: two steps (n = 0, 1),
# the same input row in both.
GEMM = """Network tiny {
Layer fc {
Type: GEMM
Dimensions { M: 1, N: 2, K: 4 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(1,1) M;
  Cluster(4, P);
  SpatialMap(1,1) K;
}
}
}
"""


def _run(tmp_path, reused: str, mode: str = "realistic"):
    path = tmp_path / "fc.m"
    path.write_text(GEMM)
    hw = load_hardware("stonne_maeri", ["pe_array.count=4", "distribution_noc.bandwidth_words_per_cycle=4",
                                        f"l1.reused_operands={reused}"])
    _, jobs = jobs_from_maestro(path)
    cm = prepare(jobs[0], hw)
    return simulate_layer(cm, hw, SimOptions(mode=mode)), analyze_layer(cm, hw, mode), hw


@pytest.mark.parametrize("reused, input_reads", [("[input, weight]", 4), ("[weight]", 8)])
def test_inputs_not_reused_are_sent_every_step(tmp_path, reused, input_reads):
    """Step 0 sends A[0][0..3] (4 words) and B[.][0] (4); step 1 needs the same 4 inputs: kept,
    only B[.][1] is sent (4 + 4 = 8 weight reads, 4 input reads); not kept, the inputs are sent
    again (8 input reads, each written into an L1 again: 8 L1 writes). Each of the 4 one-word
    ports feeds one PE: step 1 costs 1 cycle on its port with reuse, 2 without."""
    sim, ana, _ = _run(tmp_path, reused)
    assert sim.accesses["input"].l2_read == input_reads
    assert sim.accesses["input"].l1_write == input_reads
    assert sim.accesses["weight"].l2_read == 8
    assert ana.cycles == sim.cycles
    assert ana.accesses["input"].l2_read == input_reads
    kept, _, _ = _run(tmp_path, "[input, weight]")
    assert sim.cycles - kept.cycles == (input_reads - 4) // 4


def test_maestro_mode_reuses_every_operand(tmp_path):
    """maestro mode idealizes ``l1_reuse``: the same counts and cycles whatever the field says."""
    a, _, _ = _run(tmp_path, "[weight]", "maestro")
    b, _, _ = _run(tmp_path, "[input, weight]", "maestro")
    assert (a.cycles, a.accesses["input"].l2_read) == (b.cycles, b.accesses["input"].l2_read)


def test_stonne_maeri_reuses_weights_only():
    assert load_hardware("stonne_maeri").l1.reused_operands == ("weight",)
    assert load_hardware("eyeriss_like").l1.reused_operands == ("input", "weight")


@pytest.mark.parametrize("value, words", [("[input, input]", "listed twice"), ("[output]", "input"),
                                          ("weight", "tuple")])
def test_bad_values_are_refused(value, words):
    with pytest.raises(InputError) as err:
        load_hardware("stonne_maeri", [f"l1.reused_operands={value}"])
    assert "reused_operands" in str(err.value) and words in str(err.value)
