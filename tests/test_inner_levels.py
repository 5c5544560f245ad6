"""Storage levels inside the PE (register files between the MACs and L1): the default per-level
tiling, their counts by hand, a brute-force oracle, bypass, both timing models, the
``interstellar_rf2`` preset on AlexNet CONV3, and results with ``level_accesses``."""

from __future__ import annotations

import json
from itertools import product

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.errors import InputError, MappingError
from accelsim.functional import simulate_functional
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.geometry import step_boxes
from accelsim.mapping.inner_levels import inner_counts, inner_tiling, intra_step_order
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.mapping.styles import style_mapping
from accelsim.results import SCHEMA_VERSION
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer, OpType

RF7 = {"name": "RF0", "instances": "per_pe", "size_bytes": 7, "double_buffered": False}
RF24 = {"name": "RF1", "instances": "per_pe", "size_bytes": 24, "double_buffered": False}
# K 2, C 1, 3x3 filter over a 5x5 input: 3x3 outputs per filter, 2 x 9 x 9 = 162 MACs
SMALL = Layer.build("small", OpType.CONV2D, {"K": 2, "C": 1, "R": 3, "S": 3, "Y": 5, "X": 5})


def T(size: int, offset: int, dim: str) -> MapDirective:
    return MapDirective("temporal", size, offset, dim, 0)


def S(size: int, offset: int, dim: str) -> MapDirective:
    return MapDirective("spatial", size, offset, dim, 0)


WHOLE = [T(2, 2, "K"), T(1, 1, "C"), T(5, 5, "Y"), T(5, 5, "X")]  # one PE, one step, the whole layer
PER_K = [S(1, 1, "K"), T(1, 1, "C"), T(5, 5, "Y"), T(5, 5, "X")]  # two PEs, one filter each


def _hw(tmp_path, inner: list[dict], pes: int = 1):
    """A 1-byte-word design with ``inner`` register files under a 4 KB L1."""
    data = {
        "name": "tiny_rf", "word_size_bytes": 1, "pe_array": {"count": pes},
        "levels": inner + [
            {"name": "L1", "instances": "per_pe", "size_bytes": 4096},
            {"name": "L2", "instances": "shared", "size_bytes": 1 << 20, "read_bandwidth_words_per_cycle": 4,
             "write_bandwidth_words_per_cycle": 4},
            {"name": "DRAM", "instances": "shared", "kind": "dram", "read_bandwidth_words_per_cycle": 8}],
        "distribution_noc": {"kind": "bus", "multicast": True, "bandwidth_words_per_cycle": 4},
        "reduction_noc": {"kind": "tree", "bandwidth_words_per_cycle": 4},
        "dram": {"model": "simple", "latency_cycles": 0, "burst_bytes": 1},
    }
    path = tmp_path / "tiny_rf.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_hardware(path)


def _rw(result, level: str, tensor: str) -> tuple[int, int]:
    la = result.inner_accesses[level][tensor]
    return la.read, la.write


def test_two_register_files_by_hand(tmp_path):
    """SMALL on one PE in one step (box N1 K2 Y'3 X'3 C1 R3 S3, 162 MACs), intra-step order
    N K Y' X' C R S. RF0 (7 B): S holds 3 inputs + 3 weights + 1 output = 7 words; R S would
    be 19: it holds S. RF1 (24 B): C R S holds 9 + 9 + 1 = 19; X' C R S would be 15 + 9 + 3.

    RF1's outer loops N K Y' X' (1, 2, 3, 3) step 17 times: K once, Y' 4 times (2 x 2), X' 12
    times (2 x 3 x 2). Weights (9 per tile): only K's step changes the tile: 9 + 9 = 18.
    Inputs (a 3x3 window): K's step moves the window by (-2, -2), 1 word kept, 8 new; Y''s by
    (+1, -2), 2 kept, 7 new; X''s by (0, +1), 6 kept, 3 new: 9 + 8 + 4 x 7 + 12 x 3 = 81.
    Outputs: one per outer iteration, 18.
    RF0's outer loops N K Y' X' C R (1, 2, 3, 3, 1, 3): 54 iterations; every step changes the
    filter row (R wraps or moves), so inputs and weights are 54 x 3 = 162 each; outputs change
    at the 17 steps of K, Y', X' only: 1 + 17 = 18.
    Reads and writes: inputs RF0 162 / 162, RF1 162 / 81, L1 read 81 (not 162); weights RF0
    162 / 162, RF1 162 / 18, L1 read 18; outputs RF0 162 + 18 both, RF1 18 + 18 both, L1 read
    18 + 18 drained = 36, L1 write 18 (no read-back)."""
    hw = _hw(tmp_path, [RF7, RF24])
    cm = compile_mapping(SMALL, WHOLE, hw.num_pes)
    tiling = inner_tiling(cm, hw)
    assert tiling.order == ("N", "K", "Y'", "X'", "C", "R", "S")
    assert [lv.held for lv in tiling.levels] == [("S",), ("C", "R", "S")]
    for result in (simulate_layer(cm, hw, SimOptions(mode="maestro")), analyze_layer(cm, hw, "maestro")):
        assert result.macs == 162
        assert (_rw(result, "RF0", "input"), _rw(result, "RF1", "input")) == ((162, 162), (162, 81))
        assert (_rw(result, "RF0", "weight"), _rw(result, "RF1", "weight")) == ((162, 162), (162, 18))
        assert (_rw(result, "RF0", "output"), _rw(result, "RF1", "output")) == ((180, 180), (36, 36))
        acc = result.accesses
        assert (acc["input"].l1_read, acc["weight"].l1_read) == (81, 18)
        assert (acc["output"].l1_read, acc["output"].l1_write) == (36, 18)
        assert result.inner_loops == {"RF0": ["S"], "RF1": ["C", "R", "S"]}
        rf_words = {lv: sum(a.read + a.write for a in per.values()) for lv, per in result.inner_accesses.items()}
        assert result.energy_breakdown_pj["RF0"] == pytest.approx(rf_words["RF0"] * hw.inner_energy_pj(hw.inner_levels[0]))
        assert result.energy_pj == pytest.approx(sum(result.energy_breakdown_pj.values()))


def test_counts_add_over_pes_and_steps(tmp_path):
    """SMALL on two PEs, one filter each (box K1 Y'3 X'3 C1 R3 S3, 81 MACs): RF1's outer loops
    Y' X' (3, 3) step 8 times: Y' twice (+1 row, X' wraps -2: 7 new), X' 6 times (3 new):
    inputs 9 + 2 x 7 + 6 x 3 = 41 per PE, 82 in all (one more than one PE doing both filters,
    whose K step kept a word); weights 9 per PE, 18; outputs 9 per PE, 18."""
    hw = _hw(tmp_path, [RF24], pes=2)
    cm = compile_mapping(SMALL, PER_K, hw.num_pes)
    result = simulate_layer(cm, hw, SimOptions(mode="maestro"))
    assert result.inner_loops == {"RF1": ["C", "R", "S"]}
    assert [_rw(result, "RF1", t) for t in ("input", "weight", "output")] == [(162, 82), (162, 18), (180, 180)]


def test_bypass_register_file(tmp_path):
    """RF0 keeps only weights (7 B: 3 weights over S; R S would be 9): inputs and outputs
    bypass it and go between the MACs and RF1. Weights as in the two-level case; inputs at
    RF1: read once per MAC (162), written 81; outputs at RF1: 162 + 18 both."""
    hw = _hw(tmp_path, [{**RF7, "keeps": ["weight"]}, RF24])
    cm = compile_mapping(SMALL, WHOLE, hw.num_pes)
    result = analyze_layer(cm, hw, "maestro")
    assert set(result.inner_accesses["RF0"]) == {"weight"}
    assert _rw(result, "RF0", "weight") == (162, 162)
    assert [_rw(result, "RF1", t) for t in ("input", "weight", "output")] == [(162, 81), (162, 18), (180, 180)]


def test_register_file_too_small_is_refused(tmp_path):
    """A 2-byte register file cannot hold one word of each of three tensors (3 B): a
    MappingError with reason inner_overflow naming the level (``prepare`` checks it before any
    simulation; the search evaluator's row carries the reason, tests/test_search_evaluate.py)."""
    hw = _hw(tmp_path, [{**RF7, "size_bytes": 2}])
    with pytest.raises(MappingError, match="inner level RF0 \\(2 B\\) cannot hold its tile") as err:
        inner_tiling(compile_mapping(SMALL, WHOLE, hw.num_pes), hw)
    assert err.value.reason == "inner_overflow"


def test_levels_that_are_not_modelled_are_refused(tmp_path):
    """A per-cluster level, outputs bypassing L2 and a register file's bandwidth are one
    InputError each."""
    cluster = {"name": "C", "instances": "per_cluster", "size_bytes": 1024}
    with pytest.raises(InputError, match="per-cluster levels and more than one shared buffer are not modelled"):
        _hw(tmp_path, [RF7, cluster])
    _hw(tmp_path, [RF7])
    data = yaml.safe_load((tmp_path / "tiny_rf.yaml").read_text())
    data["levels"][2]["keeps"] = ["input", "weight"]  # L2
    (tmp_path / "bypass.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="outputs bypassing the shared buffer are not modelled yet"):
        load_hardware(tmp_path / "bypass.yaml")
    with pytest.raises(InputError, match="RF0: the bandwidth of a register file inside the PE is not modelled"):
        _hw(tmp_path, [{**RF7, "read_bandwidth_words_per_cycle": 2}])


# ------------------------------------------------------------------------------------------
# brute-force oracle: the intra-step nest run loop by loop, tiles as sets of tensor indices (the
# dense box of what the held loops touch, as every tile in accelsim: a 1x1 stride-2 tile includes
# the skipped columns)
def _oracle_fills(nest, role: str, order, held, extents: dict[str, int]) -> int:
    outer = [d for d in order if d not in held]
    prev: set = set()
    total = 0
    for point in product(*(range(extents[d]) for d in outer)):
        fixed = dict(zip(outer, point))
        touched = [{**fixed, **dict(zip(held, inner))} for inner in product(*(range(extents[d]) for d in held))]
        ranges = []
        for axis in nest.tensors[role]:  # a tile is the dense box of the indices it touches
            values = [sum(c * idx[d] for d, c in axis) for idx in touched]
            ranges.append(range(min(values), max(values) + 1))
        tile = set(product(*ranges))
        total += len(tile - prev)
        prev = tile
    return total


def _oracle(cm, hw) -> dict[str, dict[str, int]]:
    """Fills of every inner level and tensor, summed over every step and PE's box."""
    tiling = inner_tiling(cm, hw)
    sb = step_boxes(cm, 0, cm.steps)
    out = {lv.name: {r: 0 for r in lv.keeps} for lv in tiling.levels}
    for s, p in product(range(sb.count), range(sb.active.shape[1])):
        if not sb.active[s, p]:
            continue
        extents = {d: int(e[s, p]) for d, e in sb.extent.items()}
        for lv in tiling.levels:
            for r in lv.keeps:
                out[lv.name][r] += _oracle_fills(cm.nest, r, tiling.order, lv.held, extents)
    return out


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 3), c=st.integers(1, 3), r=st.integers(1, 3), y=st.integers(0, 3),
       stride=st.integers(1, 2), k_tile=st.integers(1, 3), rf=st.sampled_from([4, 7, 12, 24, 40]))
def test_fills_equal_the_loop_by_loop_oracle(tmp_path_factory, k, c, r, y, stride, k_tile, rf):
    """On random small convolutions, two PEs splitting K in tiles of ``k_tile`` (ragged at the
    end) and register files of random sizes, the closed-form fills equal a loop-by-loop
    enumeration of every step's and PE's intra-step nest, and the innermost level of each
    tensor is read once per MAC."""
    size = r + y * stride
    layer = Layer.build("l", OpType.CONV2D, {"K": k, "C": c, "R": r, "S": r, "Y": size, "X": size}, stride, stride)
    kt = min(k_tile, k)
    hw = _hw(tmp_path_factory.mktemp("hw"), [{**RF7, "size_bytes": 3}, {**RF24, "size_bytes": max(rf, 3)}], pes=2)
    cm = compile_mapping(layer, [S(kt, kt, "K"), T(1, 1, "C"), T(size, size, "Y"), T(size, size, "X")], hw.num_pes)
    counts = inner_counts(cm, hw)
    assert counts.macs == layer.macs
    oracle = _oracle(cm, hw)
    rf0_out = counts.writes["RF0"]["output"] - layer.macs  # an output write is a fill or the level below's update
    fills = {"RF0": {**counts.writes["RF0"], "output": rf0_out},
             "RF1": {**counts.writes["RF1"], "output": counts.writes["RF1"]["output"] - rf0_out}}
    assert fills == oracle
    assert all(counts.reads["RF0"][role] == layer.macs for role in ("input", "weight"))


def test_intra_step_order_puts_reduction_innermost():
    nest = Layer.build("g", OpType.GEMM, {"M": 2, "N": 3, "K": 4}).loop_nest()
    assert intra_step_order(nest)[-1] == "K"


# ------------------------------------------------------------------------------------------
# the preset on AlexNet CONV3
def _conv3(hw):
    job = next(j for j in jobs_from_network("alexnet", "eyeriss_like", hw)[1] if j.layer.name == "conv3")
    return prepare(job, hw)


def test_interstellar_rf2_levels():
    """Four levels: RF16 inside the PE (16 B, 0.03 pJ), RF128 = L1 (128 B, 0.24 pJ), the 256 KB
    double-buffered SRAM = L2 (20.25 pJ), DRAM (200 pJ): Interstellar's Table 3."""
    hw = load_hardware("interstellar_rf2")
    assert [(lv.name, lv.size_bytes) for lv in hw.levels] == [("RF16", 16), ("L1", 128), ("L2", 262144), ("DRAM", None)]
    assert (hw.inner_energy_pj(hw.inner_levels[0]), hw.l1_energy_pj, hw.l2_energy_pj, hw.energy.dram_access_pj) == (
        0.03, 0.24, 20.25, 200)
    assert hw.l2.double_buffered and not hw.l1.double_buffered


def test_interstellar_rf2_alexnet_conv3_simulates_and_analyzes():
    """AlexNet CONV3 (K 384, C 256, 3x3, 13x13 outputs: 149,520,384 MACs) with the eyeriss_like
    style: each PE's step box is one filter row (R 1, S 3) of 4 channels and 4 filters at one
    output pixel (K 4, C 4); RF16 (8 words) holds R S: 3 inputs + 3 weights + 1 output. Every MAC needs
    a new (channel, filter) pair, so inputs and weights are filled once per MAC (no reuse in
    RF16 under the fixed output-outer order) and outputs once per distinct output word of a
    step; both models report the same inner counts, L1 is read by RF16's fills."""
    hw = load_hardware("interstellar_rf2")
    cm = _conv3(hw)
    sim = simulate_layer(cm, hw, SimOptions(mode="maestro"))
    ana = analyze_layer(cm, hw, "maestro")
    assert sim.inner_accesses == ana.inner_accesses and sim.accesses == ana.accesses
    macs = 149_520_384
    rf = sim.inner_accesses["RF16"]
    assert sim.macs == macs and sim.inner_loops == {"RF16": ["R", "S"]}
    assert (rf["input"].read, rf["input"].write, rf["weight"].read, rf["weight"].write) == (macs,) * 4
    # every box is full (C 256 in fours, S whole, R 1): an output word per 4 x 1 x 3 MACs
    out_fills = rf["output"].read - macs
    assert out_fills == rf["output"].write - macs == macs // 12 == 12_460_032
    assert sim.accesses["output"].l1_read == out_fills + sim.egress_words
    assert sim.energy_breakdown_pj["RF16"] == pytest.approx(0.03 * sum(a.read + a.write for a in rf.values()))
    d = sim.to_dict()
    assert d["schema_version"] == SCHEMA_VERSION == 2
    assert list(d["level_accesses"]) == ["RF16", "L1", "L2", "DRAM"]
    assert d["level_accesses"]["L1"]["input"]["read"] == sim.accesses["input"].l1_read
    json.dumps(d)
    row = sim.to_row()
    assert row["input RF16 read"] == macs and row["filter RF16 write"] == macs


def test_interstellar_rf2_functional_on_conv3_shape():
    """--functional on a scaled-down CONV3 (C 4, K 4: the same 3x3 filter over 15x15): the
    layer's values are correct; the register files change counts only, not the datapath."""
    hw = load_hardware("interstellar_rf2")
    layer = Layer.build("conv3_small", OpType.CONV2D, {"K": 4, "C": 4, "R": 3, "S": 3, "Y": 15, "X": 15})
    cm = compile_mapping(layer, style_mapping("eyeriss_like", layer, hw), hw.num_pes)
    result, report = simulate_functional(cm, hw)
    assert report.passed
    assert result.inner_accesses["RF16"]["input"].read == layer.macs


def test_a_design_without_register_files_dumps_as_before():
    """The spec of a design without register files has no ``inner_levels`` in its dump, so its
    resolved YAML and ``hardware_sha256`` are those from before the field existed; one with them
    dumps them and loads back to the same spec."""
    assert "inner_levels" not in load_hardware("eyeriss_like").model_dump()
    hw = load_hardware("interstellar_rf2")
    assert [lv["name"] for lv in hw.model_dump()["inner_levels"]] == ["RF16"]
    assert type(hw).model_validate(hw.model_dump()) == hw
