"""Register-file loops pinned by a mapping (``InnerPins``: Timeloop's loops at the levels inside
a PE) instead of the default rule: counts by hand, a split dimension, a loop-by-loop oracle, the
refusals, and Timeloop's several per-PE levels read as register files."""

from __future__ import annotations

from itertools import product
from math import prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.errors import MappingError
from accelsim.mapping.compile import InnerPins, PinnedLevel, PinnedLoop, compile_mapping
from accelsim.mapping.inner_levels import inner_counts, inner_tiling
from accelsim.mapping.jobs import Job, prepare
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer, OpType
from tests.test_inner_levels import RF7, RF24, SMALL, WHOLE, T, _hw, _rw


def L(spec: str) -> tuple[PinnedLoop, ...]:
    """Loops written like Timeloop's factors, outermost first: ``"R3 S3 K2"``."""
    out = []
    for word in spec.split():
        digits = len(word) - len(word.rstrip("0123456789"))
        out.append(PinnedLoop(word[:-digits], int(word[-digits:])))
    return tuple(out)


def _pinned(cm, pins: InnerPins):
    return cm.__class__(**{**cm.__dict__, "inner_pins": pins})


def test_pinned_loops_by_hand(tmp_path):
    """SMALL on one PE in one step (box K2 Y'3 X'3 C1 R3 S3, 162 MACs), pinned weight-
    stationary: L1's own loops R3 S3 K2, RF1 (24 B, keeps all) adds Y'3, RF0 (7 B, keeps
    weights only) adds X'3; the nest is R3 S3 K2 Y'3 X'3 (the default rule would hold S and
    C R S).

    RF0: a 1-weight tile; its outer loops R S K Y' (3, 3, 2, 3): Y''s 36 steps keep the weight,
    every other step is a new one: 1 + 2 + 6 + 9 = 18 fills, 162 reads (one per MAC).
    RF1: weights as RF0 (18); inputs: a 3x3 window per (R, S); K's 9 steps keep it, S's 6 steps
    move it one column (3 new), R's 2 steps one row down and S back 2 (7 new): 9 + 14 + 18 = 41;
    outputs: a 3x3 tile per K, new at each of the 17 steps of R, S, K: 18 x 9 = 162 fills, so
    162 + 162 reads and writes (no register file below keeps outputs: one update per MAC).
    L1: inputs read 41, weights 18, outputs read 162 + 18 drained, written 162."""
    hw = _hw(tmp_path, [{**RF7, "keeps": ["weight"]}, RF24])
    pins = InnerPins(L("R3 S3 K2"), (PinnedLevel("RF0", L("X'3")), PinnedLevel("RF1", L("Y'3"))))
    cm = prepare(Job(SMALL, tuple(WHOLE), "test", inner_pins=pins), hw)
    assert cm.inner_pins == pins
    tiling = inner_tiling(cm, hw)
    assert [lv.held for lv in tiling.levels] == [("X'",), ("Y'", "X'")]
    for result in (simulate_layer(cm, hw, SimOptions(mode="maestro")), analyze_layer(cm, hw, "maestro")):
        assert result.inner_loops == {"RF0": ["X'"], "RF1": ["Y'", "X'"]}
        assert _rw(result, "RF0", "weight") == (162, 18)
        assert [_rw(result, "RF1", t) for t in ("input", "weight", "output")] == [(162, 41), (18, 18), (324, 324)]
        acc = result.accesses
        assert (acc["input"].l1_read, acc["weight"].l1_read) == (41, 18)
        assert (acc["output"].l1_read, acc["output"].l1_write) == (180, 162)


def test_a_dimension_split_over_levels(tmp_path):
    """K2 C1 over a 1x5 input with a 1x2 filter (box K2 X'4 S2, 16 MACs); the nest X'2 K2 | X'2
    S2 splits X' in two loops: RF0 (keeps inputs) holds X'2 S2, a 3-input window. Its outer loops
    X'2 (stepping X' by 2) and K2: K's 2 steps keep the window, X''s step moves it to columns
    2-4 (1 kept, 2 new): 3 + 2 = 5 fills, every input once; 16 reads. Weights and outputs
    bypass it: L1 reads them once per MAC."""
    layer = Layer.build("split", OpType.CONV2D, {"K": 2, "C": 1, "R": 1, "S": 2, "Y": 1, "X": 5})
    hw = _hw(tmp_path, [{**RF7, "keeps": ["input"]}])
    pins = InnerPins(L("X'2 K2"), (PinnedLevel("RF0", L("X'2 S2")),))
    cm = _pinned(compile_mapping(layer, [T(2, 2, "K"), T(1, 1, "C"), T(1, 1, "Y"), T(5, 5, "X")], 1), pins)
    result = analyze_layer(cm, hw, "maestro")
    assert result.macs == 16 and result.inner_loops == {"RF0": ["X'2", "S"]}
    assert _rw(result, "RF0", "input") == (16, 5)
    assert (result.accesses["input"].l1_read, result.accesses["weight"].l1_read) == (5, 16)


def test_an_operand_held_whole_is_kept_across_steps(tmp_path):
    """SMALL in three steps down its output rows (Y windows of 3 rows at offset 1: box K2 Y'1 X'3
    C1 R3 S3, 54 MACs a step, 162 in all). RF0 (18 B, keeps weights) is pinned K2 R3 S3 under
    L1's X'3: no loop outside it indexes weights, so it holds the step's 18 weights whole and
    keeps them across steps as L1 does: it is filled with L1's weight writes, the 18 weights
    once (every step uses the same filters), not 18 per step (54). Reads: one per MAC (162);
    L1 is read by its fills (18)."""
    hw = _hw(tmp_path, [{**RF7, "size_bytes": 18, "keeps": ["weight"]}])
    pins = InnerPins(L("X'3"), (PinnedLevel("RF0", L("K2 R3 S3")),))
    cm = prepare(Job(SMALL, (T(2, 2, "K"), T(1, 1, "C"), T(3, 1, "Y"), T(5, 5, "X")), "test", inner_pins=pins), hw)
    assert cm.steps == 3 and inner_tiling(cm, hw).levels[0].whole == ("weight",)
    assert inner_counts(cm, hw).writes["RF0"]["weight"] == 54  # the per-step bound
    for result in (simulate_layer(cm, hw, SimOptions(mode="maestro")), analyze_layer(cm, hw, "maestro")):
        assert result.accesses["weight"].l1_write == 18
        assert _rw(result, "RF0", "weight") == (162, 18)
        assert result.accesses["weight"].l1_read == 18


def test_pins_that_do_not_fit_are_refused(tmp_path):
    """Pins naming other register files, loops that do not divide the step box, a pinned tile
    larger than the register file (RF0 of 7 B holding Y'3 X'3 of all three tensors: 9 + 1 + 9
    words) and a ragged step under a split dimension are one MappingError each."""
    hw = _hw(tmp_path, [RF7])
    cm = compile_mapping(SMALL, WHOLE, 1)
    cases = [(InnerPins((), (PinnedLevel("RFx", ()),)), "inner_pins", "pins loops to RFx; tiny_rf has RF0"),
             (InnerPins(L("K4"), (PinnedLevel("RF0", ()),)), "inner_pins", "multiply to 4, which does not divide"),
             (InnerPins((), (PinnedLevel("RF0", L("Y'3 X'3")),)), "inner_overflow", "cannot hold its tile")]
    for pins, reason, message in cases:
        with pytest.raises(MappingError, match=message) as err:
            inner_tiling(_pinned(cm, pins), hw)
        assert err.value.reason == reason
    # K 3 over two PEs in tiles of 2: the second PE's box has K 1, where the pinned K1 K2 needs 2
    layer = Layer.build("k3", OpType.CONV2D, {"K": 3, "C": 1, "R": 1, "S": 1, "Y": 1, "X": 1})
    ragged = compile_mapping(layer, [T(2, 2, "K"), T(1, 1, "C"), T(1, 1, "Y"), T(1, 1, "X")], 1)
    with pytest.raises(MappingError, match="cannot split K over register files") as err:
        inner_counts(_pinned(ragged, InnerPins(L("K1"), (PinnedLevel("RF0", L("K2")),))), hw)
    assert err.value.reason == "inner_pins"


# ------------------------------------------------------------------------------------------
# oracle: the pinned nest run loop by loop, each loop stepping its dimension by the trips of the
# same dimension's loops inside it; a tile is the dense box of the indices its held loops touch
def _oracle_fills(nest, role: str, loops: list[PinnedLoop], depth: int) -> int:
    strides = [prod(o.trips for o in loops[j + 1:] if o.dim == loop.dim) for j, loop in enumerate(loops)]
    cut = len(loops) - depth
    prev: set = set()
    total = 0
    for point in product(*(range(loop.trips) for loop in loops[:cut])):
        touched = []
        for inner in product(*(range(loop.trips) for loop in loops[cut:])):
            idx = {d: 0 for d in nest.dims}
            for loop, stride, i in zip(loops, strides, point + inner):
                idx[loop.dim] += i * stride
            touched.append(idx)
        ranges = [range(min(v), max(v) + 1) for v in
                  ([sum(c * t[d] for d, c in axis) for t in touched] for axis in nest.tensors[role])]
        tile = set(product(*ranges))
        total += len(tile - prev)
        prev = tile
    return total


@st.composite
def _split_nests(draw):
    """A small convolution's whole-layer box with its dimensions split into random loops in a
    random order, and how many innermost loops each of two register files holds."""
    sizes = {"K": draw(st.integers(1, 3)), "C": draw(st.integers(1, 2)), "R": draw(st.integers(1, 3)),
             "S": draw(st.integers(1, 2))}
    sizes["Y"] = sizes["R"] + draw(st.integers(0, 3))
    sizes["X"] = sizes["S"] + draw(st.integers(0, 1))
    layer = Layer.build("l", OpType.CONV2D, sizes)
    box = {"N": 1, "K": sizes["K"], "C": sizes["C"], "R": sizes["R"], "S": sizes["S"],
           "Y'": sizes["Y"] - sizes["R"] + 1, "X'": sizes["X"] - sizes["S"] + 1}
    loops = []
    for d, e in box.items():
        first = draw(st.sampled_from([f for f in range(1, e + 1) if e % f == 0]))
        loops += [PinnedLoop(d, first)] + ([PinnedLoop(d, e // first)] if e // first > 1 else [])
    loops = draw(st.permutations(loops))
    inner = draw(st.integers(0, len(loops)))
    outer = draw(st.integers(inner, len(loops)))
    return layer, list(loops), inner, outer


@settings(max_examples=40, deadline=None)
@given(case=_split_nests())
def test_pinned_fills_equal_the_loop_by_loop_oracle(tmp_path_factory, case):
    """Random pinned nests (dimensions split over loops in any order) on one PE in one step: the
    closed-form fills of both register files equal the loop-by-loop enumeration."""
    layer, loops, inner, outer = case
    hw = _hw(tmp_path_factory.mktemp("hw"), [{**RF7, "size_bytes": 4096}, {**RF24, "size_bytes": 4096}])
    cut_outer, cut_inner = len(loops) - outer, len(loops) - inner
    pins = InnerPins(tuple(loops[:cut_outer]), (PinnedLevel("RF0", tuple(loops[cut_inner:])),
                                                 PinnedLevel("RF1", tuple(loops[cut_outer:cut_inner]))))
    whole = [T(layer.sizes["K"], layer.sizes["K"], "K"), T(layer.sizes["C"], layer.sizes["C"], "C"),
             T(layer.sizes["Y"], layer.sizes["Y"], "Y"), T(layer.sizes["X"], layer.sizes["X"], "X")]
    cm = _pinned(compile_mapping(layer, whole, 1), pins)
    counts = inner_counts(cm, hw)
    rf0_out = counts.writes["RF0"]["output"] - layer.macs
    fills = {"RF0": {**counts.writes["RF0"], "output": rf0_out},
             "RF1": {**counts.writes["RF1"], "output": counts.writes["RF1"]["output"] - rf0_out}}
    oracle = {name: {r: _oracle_fills(cm.nest, r, loops, depth) for r in ("input", "weight", "output")}
              for name, depth in (("RF0", inner), ("RF1", outer))}
    assert fills == oracle


@settings(max_examples=20, deadline=None)
@given(k=st.integers(1, 4), c=st.integers(1, 2), y=st.integers(0, 3), k_tile=st.integers(1, 2),
       y_tile=st.integers(0, 2))
def test_operands_held_whole_never_fill_more_than_every_step_refilled(tmp_path_factory, k, c, y, k_tile, y_tile):
    """Random convolutions in several steps (K in tiles of ``k_tile``, ``y_tile`` + 1 output
    rows a step) under one register file large enough to hold a whole step: every operand is
    held whole, so its fills are L1's writes, at most the per-step bound (a step's footprint
    refilled at every step) and at least every word of the operand once."""
    size = 3 + y
    layer = Layer.build("l", OpType.CONV2D, {"K": k, "C": c, "R": 3, "S": 3, "Y": size, "X": 4})
    kt, rows = min(k_tile, k), min(3 + y_tile, size)
    hw = _hw(tmp_path_factory.mktemp("hw"), [{**RF24, "size_bytes": 4096}])
    cm = prepare(Job(layer, (T(kt, kt, "K"), T(c, c, "C"), T(rows, rows - 2, "Y"), T(4, 4, "X")), "test"), hw)
    tiling = inner_tiling(cm, hw)
    assert tiling.levels[0].whole == ("input", "weight")
    bound = inner_counts(cm, hw).writes["RF1"]
    result = analyze_layer(cm, hw, "maestro")
    for role in ("input", "weight"):
        fills = result.inner_accesses["RF1"][role].write
        assert fills == result.accesses[role].l1_write <= bound[role]
        assert fills >= (k * c * 9 if role == "weight" else c * size * 4)
