"""The analytical model (accelsim.analytical) against hand-derived numbers, the simulator in
``maestro`` mode (every access count exactly) and the two lower bounds; and ``accelsim analyze``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import assume, given, note, settings

from accelsim.analytical import analyze_layer, bound_violations
from accelsim.cli import main
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.model_options import SystolicFold
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.results import ACCESS_FIELDS, TENSORS, TensorAccesses
from accelsim.workload.ops import Layer, OpType
from test_properties import MAX_EXAMPLES, SETTINGS, random_cases, style_cases

# each example runs the simulator too; a quarter of the simulator's own property budget
# (ACCELSIM_PROPERTY_EXAMPLES / ACCELSIM_PROPERTY_RANDOM widen the search, see test_properties)
AGREEMENT = settings(SETTINGS, max_examples=max(10, MAX_EXAMPLES // 4))
SCALESIM_DIR = Path(__file__).resolve().parents[1] / "validation" / "scalesim"


def _t(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _s(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def _hw(*extra: str):
    return load_hardware("eyeriss_like", ["pe_array.rows=1", "pe_array.cols=4", "word_size_bytes=1",
                                          "l1.size_bytes=65536", "l2.size_bytes=1048576",
                                          "distribution_noc.bandwidth_words_per_cycle=4",
                                          "reduction_noc.bandwidth_words_per_cycle=4",
                                          "dram.bandwidth_bytes_per_cycle=8", *extra])


GEMM = Layer.build("G", OpType.GEMM, {"M": 2, "N": 4, "K": 8})
GEMM_FLOW = (_s(1, 1, "N"), _t(1, 1, "M"), _t(4, 4, "K"))


def test_hand_derived_gemm():
    """C[2][4] += A[2][8] B[8][4] on 4 PEs: SpatialMap(1,1) N; TemporalMap(1,1) M;
    TemporalMap(4,4) K. PE n owns column n; steps (m, k) = (0,0), (0,1), (1,0), (1,1), each PE
    doing 1 x 1 x 4 = 4 MACs (4 cycles at 1 MAC/cycle); MACs 2*4*8 = 64.

    Per step: A's 1x4 window is the same for all PEs (one multicast of 4 words, 4 delivered to
    each of 4 PEs = 16); B's 4x1 windows differ per PE (4 x 4 = 16 words); the previous boxes
    never contain the new one (k alternates), so every step sends 20 words: ceil(20/4) = 5
    cycles. L2 reads: input 4 x 4 = 16, weight 16 x 4 = 64; L1 writes 64 and 64; L1 reads = MACs.
    The output tile of a PE changes with M; the K loop inside it is one run: PEs drain after
    steps 1 and 3, 4 distinct 1-word tiles each = 4 words, ceil(4/4) = 1 cycle: output L2 write
    8, L1 read 64 + 8, L1 write 64. Everything fits L2: one tile of A (16), B (32) read from
    DRAM (48 B / 8 = 6 cycles) and C (8) written back (1 cycle).

    Cycles: DRAM 6; ingress 5 per step with the previous step's compute (4) behind it:
    6 + 4 x 5 = 26; the last step computes (4) and drains (1): 31; write-back: 32.
    """
    hw = _hw()
    cm = compile_mapping(GEMM, GEMM_FLOW, hw.num_pes)
    r = analyze_layer(cm, hw)
    assert r.model == "analytical" and r.events == 0 and r.steps == 4
    assert r.macs == 64
    assert r.accesses["input"] == TensorAccesses(l1_read=64, l1_write=64, l2_read=16, l2_write=16, dram_read=16)
    assert r.accesses["weight"] == TensorAccesses(l1_read=64, l1_write=64, l2_read=64, l2_write=32, dram_read=32)
    assert r.accesses["output"] == TensorAccesses(l1_read=72, l1_write=64, l2_read=8, l2_write=8, dram_write=8)
    assert r.cycles == 32
    assert r.compute_busy_cycles == 16
    assert r.compute_bound_cycles == 16  # ceil(64 / 4)
    assert r.dram_bound_cycles == 7  # ceil(56 B / 8)
    assert r.compute_busy_cycles + sum(r.stall_cycles.values()) == r.cycles
    assert r.l1_required_bytes == 2 * (4 + 4 + 1)  # one PE's A, B and C tiles, double-buffered
    assert r.l2_required_bytes == 2 * (4 + 16 + 4)  # one level-0 iteration: A 1x4, B 4x4, C 1x4


def test_hand_derived_partial_sums():
    """Same GEMM with the loop order K, M (reduction outside the output loop): steps (k, m) =
    (0,0), (0,1), (1,0), (1,1); every step is its own run over an output tile. PEs drain after
    every step (4 words); the tiles of k=1 revisit those of k=0, so they are read back first
    (4 distinct 1-word tiles per step, steps 2 and 3): output L2 read 8 (+ 8 written back to
    DRAM), L1 write 64 + 8, L2 write 4 x 4 = 16, L1 read 64 + 16. The weight window only
    changes with k: 16 words at steps 0 and 2 only (L2 read 32); A: 4 words every step.

    Cycles: DRAM [0, 6]. Ingress 20/4 = 5, 4/4 = 1, 24/4 = 6 (A + B + read-back), 8/4 = 2
    cycles; compute 4 each; drain 1 each. Step 0: ingress [6, 11], compute [11, 15], drain
    [15, 16]. Step 1: ingress [11, 12], compute [15, 19], drain [19, 20]. Step 2 reads back
    step 0's partial sums, so it waits for them to land (16) and for its L1 buffer (step 0
    computed, 15): ingress [16, 22], compute [22, 26], drain [26, 27]. Step 3 waits for step
    1's drain (20) and the network (22): ingress [22, 24], compute [26, 30], drain [30, 31].
    Write-back of C: [31, 32].
    """
    hw = _hw()
    cm = compile_mapping(GEMM, (_s(1, 1, "N"), _t(4, 4, "K"), _t(1, 1, "M")), hw.num_pes)
    r = analyze_layer(cm, hw)
    assert r.accesses["weight"].l2_read == 32
    assert r.accesses["input"].l2_read == 16
    assert r.accesses["output"] == TensorAccesses(l1_read=80, l1_write=72, l2_read=16, l2_write=16, dram_write=8)
    assert r.cycles == 32


@pytest.mark.parametrize("flow", [GEMM_FLOW, (_s(1, 1, "N"), _t(4, 4, "K"), _t(1, 1, "M"))])
def test_hand_cases_match_the_simulator(flow):
    """The two hand-derived cases, cross-checked against the simulator in maestro mode."""
    hw = _hw()
    cm = compile_mapping(GEMM, flow, hw.num_pes)
    a, s = analyze_layer(cm, hw), simulate_layer(cm, hw, SimOptions("maestro"))
    assert a.accesses == s.accesses
    assert a.cycles == s.cycles


@pytest.mark.parametrize("fold, cycles, busy", [(SystolicFold("weight", 10), 69, 56),
                                                 (SystolicFold("output", 10), 51, 36)])
def test_hand_derived_systolic_fold(fold, cycles, busy):
    """The hand GEMM (GEMM_FLOW; ingress 5, compute 4 per step, drains after steps 1 and 3)
    with a fold rule of 10 fill/drain cycles.

    weight-stationary: B's window moves with k, so every step loads new weights and computes
    4 + 10 = 14. DRAM [0, 6]; step 0 ingress [6, 11], compute [11, 25]; step 1 ingress
    [11, 16], compute [25, 39], drain [39, 40]; step 2 waits for step 0's buffer (25): ingress
    [25, 30], compute [39, 53]; step 3 ingress [39, 44], compute [53, 67], drain [67, 68];
    write-back [68, 69]. Busy 4 x 14 = 56.

    output-stationary: only the draining steps 1 and 3 pay: compute 4, 14, 4, 14. Step 0
    compute [11, 15]; step 1 ingress [11, 16], compute [16, 30], drain [30, 31]; step 2 ingress
    [16, 21], compute [30, 34]; step 3 waits for step 1's buffer (30): ingress [30, 35],
    compute [35, 49], drain [49, 50]; write-back [50, 51]. Busy 16 + 20 = 36.
    """
    hw = _hw()
    cm = compile_mapping(GEMM, GEMM_FLOW, hw.num_pes)
    r = analyze_layer(cm, hw, systolic_fold=fold)
    assert (r.cycles, r.compute_busy_cycles) == (cycles, busy)
    assert r.accesses == analyze_layer(cm, hw).accesses  # the fold changes timing only
    sim = simulate_layer(cm, hw, SimOptions("maestro", systolic_fold=fold))
    assert (sim.cycles, sim.compute_busy_cycles) == (cycles, busy)


def _scalesim_layers(cfg: str, topology: str):
    """(hw, fold rule, compiled layers) of a SCALE-Sim config and topology of the repository's
    validation/scalesim, translated as the validation runner does."""
    from accelsim.mapping.jobs import prepare
    from accelsim.scalesim.config import read_scalesim_config
    from accelsim.scalesim.topology import read_topology
    from accelsim.scalesim.translate import translate

    run = translate(read_scalesim_config(SCALESIM_DIR / cfg), read_topology(SCALESIM_DIR / "topologies" / topology))
    return run.hw, run.fold, [prepare(job, run.hw) for job in run.jobs]


@pytest.mark.parametrize("topology", ["conv_small.csv", "gemm_small.csv"])
@pytest.mark.parametrize("cfg", ["scale_os.cfg", "scale_ws.cfg", "scale_is.cfg"])
def test_scalesim_fold_rule_agrees_with_the_simulator(cfg, topology):
    """SCALE-Sim's layers with its fold rule: every access count exactly and cycles within 2%
    of the simulator in maestro mode; without the rule the estimate misses the fill and drain
    (fewer cycles on every layer, so the check above can fail)."""
    hw, fold, layers = _scalesim_layers(cfg, topology)
    for cm in layers:
        sim = simulate_layer(cm, hw, SimOptions("maestro", systolic_fold=fold))
        ana = analyze_layer(cm, hw, "maestro", systolic_fold=fold)
        assert ana.accesses == sim.accesses, cm.layer.name
        assert abs(ana.cycles - sim.cycles) <= 0.02 * sim.cycles, (cm.layer.name, ana.cycles, sim.cycles)
        assert analyze_layer(cm, hw, "maestro").cycles < sim.cycles, cm.layer.name


def _agree(case) -> None:
    layer, hw, dataflow = case
    note(f"layer {layer.op.value} {dict(layer.sizes)} stride {layer.stride_y}x{layer.stride_x}; {list(dataflow)}")
    try:
        cm = compile_mapping(layer, dataflow, hw.num_pes)
        sim = simulate_layer(cm, hw, SimOptions("maestro"))
    except MappingError:
        assume(False)
        raise
    ana = analyze_layer(cm, hw)
    for t in TENSORS:
        for f in ACCESS_FIELDS:
            assert getattr(ana.accesses[t], f) == getattr(sim.accesses[t], f), (t, f)
    for f in ("macs", "steps", "noc_words", "noc_delivered_words", "egress_words",
              "l1_required_bytes", "l2_required_bytes", "compute_bound_cycles", "dram_bound_cycles"):
        assert getattr(ana, f) == getattr(sim, f), f
    # cycles: the 2% (a 1-2 cycle difference on layers of a few dozen cycles aside),
    # except where partial sums spill to DRAM and come back (README: Analytical model, exceptions)
    if sim.accesses["output"].dram_read == 0:
        assert abs(ana.cycles - sim.cycles) <= max(0.02 * sim.cycles, 2), (ana.cycles, sim.cycles)
    # every estimate respects both lower bounds, and says so
    assert ana.cycles >= ana.compute_bound_cycles
    assert ana.cycles >= ana.dram_bound_cycles
    assert bound_violations(ana) == []
    assert ana.compute_busy_cycles + sum(ana.stall_cycles.values()) == ana.cycles


@AGREEMENT
@given(case=random_cases())
def test_agrees_with_the_simulator_on_random_mappings(case):
    _agree(case)


@AGREEMENT
@given(case=style_cases())
def test_agrees_with_the_simulator_on_style_mappings(case):
    _agree(case)


def test_bound_violation_is_reported():
    hw = _hw()
    r = analyze_layer(compile_mapping(GEMM, GEMM_FLOW, hw.num_pes), hw)
    r.cycles = r.compute_bound_cycles - 1
    (problem,) = bound_violations(r)
    assert "below the compute bound of 16 cycles" in problem


def test_unknown_mode_is_refused():
    hw = _hw()
    with pytest.raises(InputError, match="unknown mode 'fast'"):
        analyze_layer(compile_mapping(GEMM, GEMM_FLOW, hw.num_pes), hw, "fast")


# ------------------------------------------------------------------------------------------
# accelsim analyze

def test_cli_analyze_table_and_json(tmp_path):
    out = tmp_path / "a.json"
    run = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", "--network", "marvel15", "--style",
                                    "nvdla_like", "--layer", "L10_CONV5_3_Residual", "--json", str(out)])
    assert run.exit_code == 0, run.output
    assert "analytical model, maestro mode" in run.output
    assert "L10_CONV5_3_Residual" in run.output
    (row,) = json.loads(out.read_text())
    assert row["model"] == "analytical" and row["mode"] == "maestro" and row["events"] == 0
    assert row["cycles"] >= max(row["compute_bound_cycles"], row["dram_bound_cycles"])
    again = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", "--network", "marvel15", "--style",
                                      "nvdla_like", "--layer", "L10_CONV5_3_Residual", "--json", str(out)])
    assert again.exit_code == 2 and "already exists" in again.output


@pytest.mark.parametrize("args, message", [
    (["--network", "marvel15"], "--network needs --style"),
    (["--network", "marvel15", "--style", "nvdla_like", "--layer", "nope"], "has no layer 'nope'"),
    (["--mapping", "missing.m"], "missing.m"),
    (["--network", "marvel15", "--style", "nvdla_like", "--set", "l2.size_bytes=-1"], "l2.size_bytes"),
])
def test_cli_analyze_bad_input(args, message):
    run = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", *args])
    assert run.exit_code == 2
    assert run.output.startswith("error: ") and message in run.output
    assert "Traceback" not in run.output


# ------------------------------------------------------------------------------------------
# the scenario set the simulator's golden file pins (MARVEL's 15 layers on eyeriss_like)

def _golden_maestro() -> dict:
    from test_golden import GOLDEN

    golden = json.loads(GOLDEN.read_text())
    return {key: value for key, value in golden.items() if "/maestro/" in key}


@pytest.mark.parametrize("style", ["nvdla_like", "eyeriss_like"])
def test_marvel15_agrees_with_the_simulators_golden_numbers(style):
    """Every access count of the simulator's pinned maestro-mode results exactly, and cycles
    within 2% (the issue's acceptance), for all 15 layers."""
    hw = load_hardware("eyeriss_like")
    golden = _golden_maestro()
    from accelsim.mapping.jobs import jobs_from_network, prepare

    _, jobs = jobs_from_network("marvel15", style, hw)
    for job in jobs:
        want = golden[f"{style}/maestro/{job.layer.name}"]
        got = analyze_layer(prepare(job, hw), hw).to_dict()
        for field in ("macs", "accesses", "noc_words", "l1_required_bytes", "l2_required_bytes"):
            assert got[field] == want[field], (job.layer.name, field)
        assert abs(got["cycles"] - want["cycles"]) <= 0.02 * want["cycles"], job.layer.name
