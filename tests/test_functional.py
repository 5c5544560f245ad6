"""Functional execution: values ride on the simulated transfers and the output is checked.

Covers: a hand-derived small case; every named style on scaled-down versions of the scenario
layers (every op type and stride) on the scenario arrays; int16 and fp32; identical timing with
and without values; the three kinds of broken mapping (run with the legality checks skipped)
and the numbers their reports must show; that values depend on the transfers (a skipped drain,
write-back or L2 load shows up as wrong outputs); the CLI; and a hypothesis property test over
random small layers, arrays and legal mappings (generators of tests/test_properties.py).
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
import dataclasses

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from accelsim.cli import main
from accelsim.errors import InputError, MappingError
from accelsim.functional import simulate_functional
from accelsim.functional.datapath import DatapathValues
from accelsim.functional.operands import random_operands, reference_output, tolerance
from accelsim.functional.report import build_report
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.api import jobs_from_network, prepare
from accelsim.sim.engine import LayerSimulation, SimOptions, simulate_layer
from accelsim.sim.estimate import RunKind, estimate_layer, functional_bytes
from accelsim.workload.ops import Layer

from test_properties import random_cases, style_cases  # noqa: E402  (tests/ is on sys.path)


def _t(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _s(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def _timing(result) -> dict:
    """Every field of a result but those that describe the run rather than the layer: wall time,
    and the engine events executed (a run with values is never warped, so it executes more)."""
    d = result.to_dict()
    d.pop("wall_seconds")
    d.pop("events")
    return d


# ------------------------------------------------------------------------------------------
# a case by hand


def test_hand_gemm_two_pes():
    """GEMM M=2, N=2, K=4 on 2 PEs: SpatialMap(1,1) M; TemporalMap(2,2) K (N whole).

    PE i holds row M=i; K goes in 2 windows of 2, so 2 steps of 1 x 2 x 2 = 4 MACs per PE:
    2 x 2 x 4 = 16 MACs, each exactly once. The K loop is the only loop and reduces, so each
    PE drains its 1 x 2 output row once, after step 1: 4 outputs, all exact for int8.
    """
    hw = load_hardware("eyeriss_like", ["pe_array.rows=1", "pe_array.cols=2"])
    layer = Layer.build("g", "GEMM", {"M": 2, "N": 2, "K": 4})
    cm = compile_mapping(layer, [_s(1, 1, "M"), _t(2, 2, "K")], hw.num_pes)
    result, report = simulate_functional(cm, hw)
    assert cm.steps == 2
    assert report.passed, report.text()
    assert (report.outputs, report.macs_required, report.macs_executed) == (4, 16, 16)
    assert report.macs_in_output == 16 and report.problems == {}
    assert "PASS" in report.text()


@pytest.mark.parametrize("l2_bytes, dram_read", [(1 << 20, 0), (32, 72)])
def test_partial_sums_spilled_and_read_back(l2_bytes, dram_read):
    """GEMM M=4, N=6, K=8 on 4 PEs: TemporalMap(2,2) K; TemporalMap(2,2) N; SpatialMap(1,1) M.

    The reduction loop K (4 windows) is outside the output loop N (3 windows), so each PE's
    1 x 2 output tile is visited 4 times: drained as a partial sum and read back 3 times,
    through L2 (72 = 3 x 24 words read back from L2 into the PEs). With a 32-byte L2 every
    level-0 step is its own L2 tile and the partial sums also go to DRAM and back: 3 x 24 = 72
    DRAM reads. The values must survive both round trips."""
    hw = load_hardware("eyeriss_like", ["pe_array.rows=1", "pe_array.cols=4", f"l2.size_bytes={l2_bytes}"])
    layer = Layer.build("g", "GEMM", {"M": 4, "N": 6, "K": 8})
    cm = compile_mapping(layer, [_t(2, 2, "K"), _t(2, 2, "N"), _s(1, 1, "M")], hw.num_pes)
    result, report = simulate_functional(cm, hw)
    assert result.accesses["output"].l2_read - result.accesses["output"].dram_write == 72
    assert result.accesses["output"].dram_read == dram_read
    assert report.passed, report.text()


HAZARD_HW = ["pe_array.rows=1", "pe_array.cols=1", "l1.size_bytes=16", "l2.size_bytes=64",
             "l1.double_buffered=false", "l2.double_buffered=false", "l2.read_bandwidth_words_per_cycle=1",
             "l2.write_bandwidth_words_per_cycle=1", "distribution_noc.bandwidth_words_per_cycle=1",
             "distribution_noc.latency_cycles=0", "reduction_noc.bandwidth_words_per_cycle=1",
             "reduction_noc.latency_cycles_per_hop=0", "dram.model=simple", "dram.bandwidth_bytes_per_cycle=1",
             "dram.latency_cycles=0", "dram.burst_bytes=1"]


def test_partial_sums_read_back_from_dram_before_written():
    """1x1 CONV N=2, K=2, C=2, 3x4 outputs on one PE: TemporalMap(1,1) C; TemporalMap(1,1) K.

    A 64-word L2 holds one step (input 24 + weight 1 + output 24 words), so each step is an L2
    tile and the K=0 outputs of tile 0 are partial sums that tile 2 (C=1, K=0) reads back from
    DRAM. The engine used to start tile 2's DMA read (cycles 75-124) as soon as tile 1 had been
    distributed, while tile 0's drain (cycle 98) and write-back (124-148) were still to come, so
    the read-back got partial sums DRAM did not hold yet: 24 of 48 outputs lost their C=0 half.
    The DMA read now waits for the write-back it depends on."""
    hw = load_hardware("eyeriss_like", HAZARD_HW)
    layer = Layer.build("L", "CONV2D", {"N": 2, "K": 2, "C": 2, "R": 1, "S": 1, "Y": 3, "X": 4})
    cm = compile_mapping(layer, [_t(1, 1, "C"), _t(1, 1, "K")], hw.num_pes)
    _, report = simulate_functional(cm, hw)
    assert report.passed, report.text()


def test_partial_sums_read_back_from_l2_before_drained():
    """GEMM M=1, N=2, K=2 on one PE: TemporalMap(1,1) K; TemporalMap(1,1) N, with a reduction
    network of 0.25 words/cycle (a 1-word drain takes 4 cycles).

    Steps (K, N): (0,0) (0,1) (1,0) (1,1); steps 2 and 3 revisit the outputs of steps 0 and 1
    and read their partial sums back. Step 0's drain occupies the reduction network in cycles
    15-19; the distribution network used to send step 2's read-back in cycles 17-18 (it only
    waited for a free L1 buffer), so the PE started from a partial sum L2 did not hold yet: both
    outputs ended with 1 of their 2 MACs. The read-back now waits for that drain to land
    (timing derived by hand in tests/test_engine_hand.py)."""
    hw = load_hardware("eyeriss_like", ["pe_array.rows=1", "pe_array.cols=1",
                                        "reduction_noc.bandwidth_words_per_cycle=0.25"])
    layer = Layer.build("g", "GEMM", {"M": 1, "N": 2, "K": 2})
    cm = compile_mapping(layer, [_t(1, 1, "K"), _t(1, 1, "N")], hw.num_pes)
    _, report = simulate_functional(cm, hw)
    assert report.passed, report.text()


# ------------------------------------------------------------------------------------------
# every style on scaled-down scenario layers

# The scenario layers' shapes (marvel15 on eyeriss_like, dmazerunner6 on dmazerunner_16x16,
# FLASH's GEMMs on flash_edge) scaled down to a few thousand MACs: every op type and stride.
SCALED = {
    "eyeriss_like": [  # marvel15
        Layer.build("L1_resadd", "RESADD", {"C": 16, "Y": 7, "X": 7}),
        Layer.build("L2_dw", "DWCONV", {"C": 8, "R": 3, "S": 3, "Y": 9, "X": 9}),
        Layer.build("L2_dw_s2", "DWCONV", {"C": 6, "R": 3, "S": 3, "Y": 9, "X": 9}, 2, 2),
        Layer.build("L5_pw", "PWCONV", {"K": 8, "C": 16, "Y": 6, "X": 6}),
        Layer.build("L6_pw_s2", "PWCONV", {"K": 8, "C": 8, "Y": 9, "X": 9}, 2, 2),
        Layer.build("L7_fc", "FC", {"K": 40, "C": 64}),
        Layer.build("L8_conv", "CONV2D", {"K": 8, "C": 8, "R": 3, "S": 3, "Y": 7, "X": 7}),
        Layer.build("L15_fc7x7", "FC", {"K": 16, "C": 8, "R": 7, "S": 7, "Y": 7, "X": 7}),
    ],
    "dmazerunner_16x16": [  # dmazerunner6 (batch 4 -> 2)
        Layer.build("conv1", "CONV2D", {"N": 2, "K": 8, "C": 3, "R": 7, "S": 7, "Y": 13, "X": 13}, 2, 2),
        Layer.build("conv2_2", "CONV2D", {"N": 2, "K": 8, "C": 8, "R": 3, "S": 3, "Y": 6, "X": 6}),
        Layer.build("conv5_1", "CONV2D", {"N": 2, "K": 16, "C": 8, "R": 3, "S": 3, "Y": 7, "X": 7}, 2, 2),
    ],
    "flash_edge": [  # flash_gemm / flash_mlp
        Layer.build("III", "GEMM", {"M": 8, "N": 8, "K": 128}),
        Layer.build("VI", "GEMM", {"M": 32, "N": 16, "K": 16}),
        Layer.build("FC4", "GEMM", {"M": 16, "N": 10, "K": 16}),
    ],
}
SCALED_CASES = [(hw, layer) for hw, layers in SCALED.items() for layer in layers]


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("hw_name, layer", SCALED_CASES, ids=[f"{h}-{layer.name}" for h, layer in SCALED_CASES])
def test_styles_on_scaled_scenario_layers(hw_name, layer, style):
    hw = load_hardware(hw_name)
    try:
        dataflow = style_mapping(style, layer, hw)
    except InputError:
        pytest.skip(f"{style} cannot map {layer.name} on {hw_name}")
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    _, report = simulate_functional(cm, hw)
    assert report.passed, report.text()


@pytest.mark.parametrize("dtype", ["int16", "fp32"])
@pytest.mark.parametrize("style", ["eyeriss_like", "nvdla_like"])
def test_other_dtypes(dtype, style):
    hw = load_hardware("eyeriss_like", ["l2.size_bytes=2048"])  # small L2: several L2 tiles
    layer = SCALED["eyeriss_like"][6]
    cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
    _, report = simulate_functional(cm, hw, dtype=dtype, seed=3)
    assert report.passed, report.text()


def test_fp32_tolerance_is_tight_enough_to_catch_an_error():
    """A passing fp32 run whose output is then corrupted by 1e-3 in one element fails: the
    tolerance (gamma_(n+1) * sum|a*b|, n = 72 MACs, |a*b| < 1) is below 72 * 4.4e-6 = 3.2e-4."""
    hw = load_hardware("eyeriss_like")
    layer = SCALED["eyeriss_like"][6]  # 8 x 3 x 3 = 72 MACs per output
    cm = compile_mapping(layer, style_mapping("nvdla_like", layer, hw), hw.num_pes)
    operands = random_operands(layer, "fp32", 0)
    values = DatapathValues(cm, operands, reduction_network=True)
    LayerSimulation(cm, hw, values=values).run()
    expected = reference_output(layer, operands.input.astype("float64"), operands.weight.astype("float64"))
    tol = tolerance(layer, operands)
    assert tol.max() < 3.2e-4
    assert build_report(values, expected, tol).passed
    values.dram_out[0, 0, 0, 0] += 1e-3
    report = build_report(values, expected, tol)
    assert not report.passed and report.outputs_wrong == 1


# ------------------------------------------------------------------------------------------
# timing is unchanged


@pytest.mark.parametrize("options", [SimOptions(), SimOptions(per_pe=True), SimOptions(mode="maestro"),
                                     SimOptions(fast_forward=False)], ids=["default", "per_pe", "maestro", "unrolled"])
def test_timing_identical_with_values(options):
    """The whole LayerResult but wall time and ``events`` is equal: values need every step,
    so a run with values is never warped, and ``events`` counts the engine events executed."""
    hw = load_hardware("eyeriss_like", ["l2.size_bytes=4096"])
    layer = SCALED["eyeriss_like"][3]
    cm = compile_mapping(layer, style_mapping("nvdla_like", layer, hw), hw.num_pes)
    plain = simulate_layer(cm, hw, options)
    values = DatapathValues(cm, random_operands(layer, "int8", 1), reduction_network=True)
    functional = LayerSimulation(cm, hw, options, values=values).run()
    assert _timing(functional) == _timing(plain)
    expected = reference_output(layer, values.operands.input, values.operands.weight)
    assert build_report(values, expected, None).passed


# ------------------------------------------------------------------------------------------
# broken mappings (legality checks skipped)

BROKEN_LAYER = Layer.build("broken", "CONV2D", {"K": 8, "C": 4, "R": 3, "S": 3, "Y": 6, "X": 6})
# 8 x 4 x (4 x 4 outputs) x 9 = 4608 MACs, 36 per output element, 128 outputs


def _run_unchecked(dataflow, *overrides):
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=4", *overrides])
    cm = compile_mapping(BROKEN_LAYER, dataflow, hw.num_pes, check_legality=False)
    return simulate_functional(cm, hw, SimOptions(check_legality=False))


def test_broken_spatial_map_that_skips_a_range():
    """SpatialMap(1,2) K puts K = 0, 2, 4, 6 on PEs 0-3: odd K is never computed.

    Missing: 4 K x 4 C x 16 outputs x 9 = 2304 MACs; 4 x 16 = 64 outputs never written back;
    2304 MACs reach the output. The first missing MAC (all zero but K=1) lies in no box; the
    nearest is PE 0's window K=0 at step 0."""
    dataflow = [_s(1, 2, "K"), _t(4, 4, "C"), _t(3, 1, "Y"), _t(3, 1, "X")]
    with pytest.raises(MappingError, match="leave gaps"):
        compile_mapping(BROKEN_LAYER, dataflow, 8)
    _, report = _run_unchecked(dataflow)
    assert not report.passed
    assert (report.macs_missing, report.macs_duplicated) == (2304, 0)
    assert (report.outputs_wrong, report.outputs_never_written) == (64, 64)
    assert report.macs_in_output == 2304
    assert report.missing_macs[0] == ("MACs whose coordinates span N all, K in {1, 3, 5, 7}, C all, Y' all, "
                                      "X' all, R all, S all")
    assert report.missing_macs[1].startswith("MAC(N=0, K=1, C=0, Y'=0, X'=0, R=0, S=0): in no PE's box")
    assert "step 0 PE 0, whose window K=0..0" in report.missing_macs[1]
    assert "never written" in report.wrong_outputs[0]


def test_broken_overlapping_temporal_offset():
    """TemporalMap(2,1) C over C=4 gives windows C 0-1, 1-2, 2-3: C=1 and C=2 run twice.

    Duplicated: 8 K x 2 C x 16 x 9 = 2304 MACs (6912 executed); every output accumulates
    54 instead of 36 MACs, so all 128 are wrong. Loops C(3) Y(4) X(4): C window j is steps
    16j..16j+15, so MAC (K=0, C=1, Y'=0, X'=0) runs at steps 0 and 16 on PE 0 (K=0), and
    output (K=0, Y'=0, X'=0) accumulates on PE 0 at steps 0, 16 and 32."""
    dataflow = [_s(1, 1, "K"), _t(2, 1, "C"), _t(3, 1, "Y"), _t(3, 1, "X")]
    with pytest.raises(MappingError, match="overlap"):
        compile_mapping(BROKEN_LAYER, dataflow, 8)
    _, report = _run_unchecked(dataflow)
    assert (report.macs_executed, report.macs_duplicated, report.macs_missing) == (6912, 2304, 0)
    assert report.outputs_wrong == 128 and report.outputs_never_written == 0
    assert report.macs_in_output == 128 * 54
    assert report.duplicated_macs[0] == "MACs whose coordinates span N all, K all, C in {1..2}, Y' all, X' all, R all, S all"
    assert report.duplicated_macs[1] == ("MAC(N=0, K=0, C=1, Y'=0, X'=0, R=0, S=0): executed 2 times, "
                                         "at step 0 PE 0; step 16 PE 0")
    assert "54 of 36 MACs reached it; computed by PE 0 at steps 0, 16, 32" in report.wrong_outputs[0]


def test_broken_overlapping_spatial_offset():
    """SpatialMap(2,1) K: PE i computes K = i, i+1 (7 windows), so K = 1..6 run twice:
    6 x 4 x 16 x 9 = 3456 duplicated MACs. Each PE computes whole sums, so the later drain
    overwrites an equal value: outputs are right, yet the check fails (work done twice) and
    names the overwrites."""
    dataflow = [_s(2, 1, "K"), _t(4, 4, "C"), _t(3, 1, "Y"), _t(3, 1, "X")]
    _, report = _run_unchecked(dataflow)
    assert not report.passed
    assert report.outputs_wrong == 0
    assert report.macs_duplicated == 3456
    assert report.duplicated_macs[0].startswith("MACs whose coordinates span N all, K in {1..6}, C all")
    assert report.problems["overwritten"] > 0
    assert any("overwrote" in m for m in report.problem_messages)


def test_broken_spatial_reduction_without_reduction_network():
    """K across 2 clusters, C (reduced) across the 4 PEs of a cluster, on an array without a
    reduction network: each output's 36 MACs are split 9 per PE and, not being added, the
    four PEs' drains overwrite each other; only the last one's 9 MACs per output reach
    DRAM: 128 x 9 = 1152 of 4608. Every MAC ran once. Loops: K folds (8 windows over 2
    clusters: 4), Y'(4), X'(4), so output (K=0, Y'=0, X'=0) is step 0 on PEs 0-3."""
    dataflow = [_s(1, 1, "K"), ClusterDirective(4, 0), _s(1, 1, "C"), _t(3, 1, "Y"), _t(3, 1, "X")]
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=4", "reduction_noc.kind=none"])
    cm = compile_mapping(BROKEN_LAYER, dataflow, hw.num_pes)
    with pytest.raises(MappingError, match="no reduction network"):
        simulate_layer(cm, hw)
    _, report = _run_unchecked(dataflow, "reduction_noc.kind=none")
    assert (report.macs_executed, report.macs_missing, report.macs_duplicated) == (4608, 0, 0)
    assert report.macs_in_output == 1152
    assert report.outputs_wrong > 0 and report.outputs_never_written == 0
    assert "9 of 36 MACs reached it; computed by PE 0 at step 0, PE 1 at step 0, PE 2 at step 0, PE 3 at step 0" in report.wrong_outputs[0]
    assert any("no reduction network" in m for m in report.problem_messages)


# ------------------------------------------------------------------------------------------
# the values depend on the transfers


class SkippingValues(DatapathValues):
    """Drops one kind of transfer once, as a faulty datapath would."""

    skip = ""

    def _skipped(self, kind: str) -> bool:
        if self.skip == kind:
            self.skip = ""
            return True
        return False

    def drained(self, step, demand):
        if not self._skipped("drain"):
            super().drained(step, demand)

    def written_back(self, tile):
        if not self._skipped("write_back"):
            super().written_back(tile)

    def tile_loaded(self, tile):
        if not self._skipped("load"):
            super().tile_loaded(tile)


@pytest.mark.parametrize("skip, problem", [("drain", "never_drained"), ("write_back", None), ("load", "not_resident")])
def test_outputs_depend_on_the_transfers(skip, problem):
    """nvdla_like on the CONV layer with a 2 KB L2 (several L2 tiles): skipping the first
    drain, write-back or L2 load leaves outputs wrong or unwritten."""
    hw = load_hardware("eyeriss_like", ["l2.size_bytes=2048"])
    layer = SCALED["eyeriss_like"][6]
    cm = compile_mapping(layer, style_mapping("nvdla_like", layer, hw), hw.num_pes)
    values = SkippingValues(cm, random_operands(layer, "int8", 0), reduction_network=True)
    values.skip = skip
    LayerSimulation(cm, hw, values=values).run()
    report = build_report(values, reference_output(layer, values.operands.input, values.operands.weight), None)
    assert not report.passed and report.outputs_wrong > 0
    assert report.macs_executed == layer.macs  # the MACs ran; their results did not arrive
    if problem:
        assert report.problems[problem] > 0


# ------------------------------------------------------------------------------------------
# size: what limits a layer is its estimated memory


def test_layer_beyond_the_old_fixed_limits():
    """MARVEL's L5_Bottleneck1_1_3 under tpu_like: 6,422,528 MACs, over the 4,194,304 MACs that
    functional execution was once limited to; it computes the layer, each MAC once, with the
    timing of a run without values."""
    hw = load_hardware("eyeriss_like")
    _, jobs = jobs_from_network("marvel15", "tpu_like", hw, "L5_Bottleneck1_1_3")
    cm = prepare(jobs[0], hw)
    result, report = simulate_functional(cm, hw)
    assert cm.layer.macs == 6_422_528 > 1 << 22
    assert report.passed, report.text()
    assert report.macs_executed == cm.layer.macs
    assert _timing(result) == _timing(simulate_layer(cm, hw))


@pytest.mark.slow
def test_cli_alexnet_conv3_on_four_levels():
    """AlexNet CONV3 on interstellar_rf2 (register files inside the PE): 149,520,384 MACs over
    13,312 steps x 234 PEs, passes (measured: 35 s and 380 MB on the 2-core machine)."""
    result = _cli("--hw", "interstellar_rf2", "--network", "alexnet", "--style", "eyeriss_like",
                  "--layer", "conv3", "--functional", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "functional check of conv3 (CONV2D, int8, seed 0): PASS: 64896 outputs compared exactly, " \
           "149520384 MACs each executed once" in result.output


def test_execution_counts_past_255_widen():
    """GEMM M=600 (N = K = 1) on 300 PEs with SpatialMap(300,1) M (illegal: windows overlap):
    601 - 300 = 301 windows over 300 PEs, 2 folds; every window holds 300 MACs: 90,300
    executed, 600 required. MAC M=300 lies in windows 1..300: executed 300 times, more than a
    one-byte count holds; the count widens and the report counts it exactly."""
    hw = load_hardware("eyeriss_like", ["pe_array.rows=1", "pe_array.cols=300"])
    layer = Layer.build("g", "GEMM", {"M": 600, "N": 1, "K": 1})
    cm = compile_mapping(layer, [_s(300, 1, "M")], hw.num_pes, check_legality=False)
    values = DatapathValues(cm, random_operands(layer, "int8", 0), reduction_network=True)
    LayerSimulation(cm, hw, SimOptions(check_legality=False), values=values).run()
    assert int(values.coverage.max()) == 300 == int(values.coverage[300, 0, 0])
    report = build_report(values, reference_output(layer, values.operands.input, values.operands.weight), None)
    assert (report.macs_executed, report.macs_duplicated, report.macs_missing) == (90_300, 90_300 - 600, 0)
    assert "MAC(M=1, N=0, K=0): executed 2 times, at step 0 PE 0; step 0 PE 1" in report.duplicated_macs


def test_functional_memory_estimate_by_hand():
    """The broken-mapping layer (CONV2D K=8, C=4, 3x3, 4x4 outputs) with SpatialMap(1,1) K;
    Cluster(4); SpatialMap(1,1) C; TemporalMap(3,1) Y; TemporalMap(3,1) X on 8 PEs. A PE's box
    is at most K=1, C=1, Y'=1, X'=1, R=3, S=3 (9 MACs, output tile 1 element). Bytes: 2 x 4,608
    MACs = 9,216; 64 x 128 outputs = 8,192; 32 x (4 x 6 x 6 input + 8 x 4 x 3 x 3 weight =
    432 words) = 13,824; 64 x 8 PEs x 1 = 512; 64 x 8 PEs x 9 MACs = 4,608; 64 steps (loops K
    folds 4, Y' 4, X' 4) x 8 bytes x (3 loops + 2) = 2,560; plus 32 MiB of step boxes:
    33,554,432 + 38,912 = 33,593,344. The estimate of a functional run adds exactly that to
    the simulation's."""
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=4"])
    dataflow = [_s(1, 1, "K"), ClusterDirective(4, 0), _s(1, 1, "C"), _t(3, 1, "Y"), _t(3, 1, "X")]
    cm = compile_mapping(BROKEN_LAYER, dataflow, hw.num_pes)
    assert functional_bytes(cm) == 33_593_344
    assert estimate_layer(cm, RunKind(functional=True)).peak_bytes == estimate_layer(cm).peak_bytes + 33_593_344


# ------------------------------------------------------------------------------------------
# command line

BROKEN_M = """Network n {
  Layer broken {
    Type: CONV
    Stride { X: 1, Y: 1 }
    Dimensions { K: 8, C: 4, R: 3, S: 3, Y: 6, X: 6 }
    Dataflow {
      SpatialMap(1,2) K;
      TemporalMap(4,4) C;
      TemporalMap(3,1) Y;
      TemporalMap(3,1) X;
    }
  }
}
"""


def _cli(*args):
    return CliRunner().invoke(main, ["simulate", *args], catch_exceptions=False)


def test_cli_functional_pass():
    result = _cli("--hw", "eyeriss_like", "--network", "marvel15", "--style", "eyeriss_like",
                  "--layer", "L4_Bottleneck6_2_2", "--functional", "--seed", "2", "--dtype", "int16")
    assert result.exit_code == 0, result.output
    assert "functional check of L4_Bottleneck6_2_2 (DWCONV, int16, seed 2): PASS" in result.output


def test_cli_unchecked_broken_mapping(tmp_path):
    path = tmp_path / "broken.m"
    path.write_text(BROKEN_M)
    refused = _cli("--hw", "eyeriss_like", "--mapping", str(path), "--functional")
    assert refused.exit_code == 2 and "leave gaps" in refused.output
    out = tmp_path / "out.json"
    result = _cli("--hw", "eyeriss_like", "--mapping", str(path), "--functional", "--unchecked", "--json", str(out))
    assert result.exit_code == 1
    assert "FAIL" in result.output and "2304 never executed" in result.output
    (layer,) = json.loads(out.read_text())
    assert layer["functional"]["passed"] is False and layer["functional"]["macs_missing"] == 2304
    assert layer["macs"] == 2304  # the timing result beside it: only the MACs the mapping runs


def test_cli_unchecked_needs_functional_and_large_layers_are_refused():
    """L8_CONV2_2_2 under nvdla_like: the simulation alone is estimated at 50 MB + 27 iteration
    cases x 8 kB (under 100 MB); with --functional it adds its 107,495,424 MACs x 2 bytes and
    more (the estimate: 307 MB), over --max-memory 100M: refused with exit status 3 before any
    simulation, naming the estimate and the limit."""
    result = _cli("--hw", "eyeriss_like", "--network", "marvel15", "--style", "nvdla_like", "--unchecked")
    assert result.exit_code == 2 and "--unchecked needs --functional" in result.output
    result = _cli("--hw", "eyeriss_like", "--network", "marvel15", "--style", "nvdla_like",
                  "--layer", "L8_CONV2_2_2", "--functional", "--max-memory", "100M")
    assert result.exit_code == 3, result.output
    assert "layer 'L8_CONV2_2_2' is over budget: an estimated 307 MB of memory, over --max-memory 100 MB" in \
        result.output


# ------------------------------------------------------------------------------------------
# property: random small layers, arrays and legal mappings compute the right answer

PROPERTY_SETTINGS = settings(max_examples=int(os.environ.get("ACCELSIM_FUNCTIONAL_EXAMPLES", "40")), deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _check_functional(case):
    layer, hw, dataflow = case
    try:
        cm = compile_mapping(layer, dataflow, hw.num_pes)
        result, report = simulate_functional(cm, hw)
    except MappingError:  # illegal, or spatial reduction without a reduction network
        assume(False)
        raise
    assert report.passed, report.text()
    assert _timing(result) == _timing(simulate_layer(cm, hw))


@PROPERTY_SETTINGS
@given(case=style_cases())
def test_property_styles_compute_the_layer(case):
    _check_functional(case)


@PROPERTY_SETTINGS
@given(case=random_cases())
def test_property_random_legal_mappings_compute_the_layer(case):
    _check_functional(case)


@PROPERTY_SETTINGS
@given(case=random_cases(), data=st.data())
def test_property_broken_mappings_run_and_are_judged(case, data):
    """A legal random mapping with one directive's offset moved by -1, +1 or +2 (gaps,
    overlaps, shared windows) runs unchecked without crashing; the MACs the timing model counts
    are the MACs the values executed, and the check passes exactly when every MAC ran once
    and the outputs match."""
    layer, hw, dataflow = case
    dataflow = list(dataflow)
    maps = [i for i, d in enumerate(dataflow) if isinstance(d, MapDirective)]
    i = data.draw(st.sampled_from(maps), label="directive")
    shift = data.draw(st.sampled_from([-1, 1, 2]), label="shift")
    dataflow[i] = dataclasses.replace(dataflow[i], offset=max(0, dataflow[i].offset + shift))
    try:
        cm = compile_mapping(layer, dataflow, hw.num_pes, check_legality=False)
    except MappingError:  # malformed (e.g. a stride that no longer divides the offset)
        assume(False)
        raise
    result, report = simulate_functional(cm, hw, SimOptions(check_legality=False))
    assert result.macs == report.macs_executed
    exact = report.macs_missing == 0 and report.macs_duplicated == 0
    assert report.passed == (exact and report.outputs_wrong == 0)
