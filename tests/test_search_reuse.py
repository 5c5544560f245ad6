"""dMazeRunner's unique-reuse loop-order pruning: Table 2's 15 orders of a seven-loop convolution,
Algorithm 1's reuse runs by hand, and the exhaustive mapper enumerating exactly the kept orders."""

from __future__ import annotations

import itertools
from math import factorial

from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.search.mappers import Coverage, enumerate_space
from accelsim.search.reuse import reuse_runs, tensor_dims, unique_reuse_orders
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer, OpType

CONV = Layer.build("conv", OpType.CONV2D, {"N": 2, "K": 16, "C": 8, "R": 3, "S": 3, "Y": 10, "X": 10})
DEPENDS = tensor_dims(CONV.loop_nest())


def test_seven_looping_convolution_loops_keep_15_orders():
    """Table 2: K innermost (input reused: 1), a non-empty subset of {N, Y', X'} innermost
    (weights: 2^3 - 1 = 7), a non-empty subset of {C, R, S} (outputs: 7): 15 of 5,040."""
    orders = unique_reuse_orders(list(CONV.loop_nest().dims), DEPENDS)
    assert len(orders) == 15
    runs = {reuse_runs(o, DEPENDS) for o in orders}
    assert len(runs) == 15
    inputs, weights, outputs = (sorted(tuple(sorted(r[i])) for r in runs if r[i]) for i in range(3))
    assert inputs == [("K",)]
    assert len(weights) == 7 and {d for w in weights for d in w} == {"N", "Y'", "X'"}
    assert len(outputs) == 7 and {d for o in outputs for d in o} == {"C", "R", "S"}


def test_reuse_runs_by_hand():
    """Order (K, C, Y', X', R, S, N), outermost first: N innermost, which only the weights do not
    depend on; S (next) indexes the weights, so their run is {N}; N indexes input and output."""
    order = ("K", "C", "Y'", "X'", "R", "S", "N")
    assert reuse_runs(order, DEPENDS) == (frozenset(), frozenset({"N"}), frozenset())
    # outputs reused across R, S and C: the three innermost loops none of which indexes them
    assert reuse_runs(("N", "K", "Y'", "X'", "C", "R", "S"), DEPENDS)[2] == frozenset({"C", "R", "S"})


@settings(max_examples=30, deadline=None)
@given(st.sets(st.sampled_from(list(CONV.loop_nest().dims)), min_size=1))
def test_kept_orders_cover_every_reuse_once(looping):
    """Every order of the looping loops has its reuse among the kept orders', and the kept ones
    differ pairwise: the pruning loses no distinct reuse and keeps no duplicate."""
    loops = sorted(looping)
    kept = unique_reuse_orders(loops, DEPENDS)
    kept_runs = [reuse_runs(o, DEPENDS) for o in kept]
    assert len(set(kept_runs)) == len(kept_runs)
    assert {reuse_runs(o, DEPENDS) for o in itertools.permutations(loops)} == set(kept_runs)
    assert all(sorted(o) == loops for o in kept)


def test_exhaustive_with_unique_reuse_enumerates_only_kept_orders():
    """One level, spatial K, every other loop iterating (tiles below the layer's sizes): the six
    temporal loops N, C, Y', X', R, S have 7 + 7 = 14 distinct reuses (no loop besides K leaves
    the input unindexed) of 6! = 720 orders; the coverage counts both."""
    dims = CONV.loop_nest().dims
    tiles = {d: (1,) for d in dims}
    space = SearchSpace(CONV, 16, tiles, (1,), ("K",), 1, 1)
    coverage = Coverage()
    pruned = list(enumerate_space(space, unique_reuse=True, coverage=coverage))
    full = list(enumerate_space(space))
    assert len(full) == factorial(6) and len(pruned) == 14
    assert (coverage.orders_enumerated, coverage.orders_kept) == (720, 14)
    assert {g.text() for g in pruned} <= {g.text() for g in full}


def test_search_cli_unique_reuse_reports_orders(tmp_path):
    """``--mapper exhaustive --unique-reuse`` on a small convolution with one level: its summary
    counts the orders met and kept (fewer: with K parallel and C, Y', X' iterating, the orders
    (C, Y', X') and (Y', C, X') both reuse only the weights across X'); the flag with another
    mapper is one error line, status 2."""
    import json

    import pytest
    from click.testing import CliRunner

    from accelsim.cli import main

    pytest.importorskip("pyarrow")
    net = tmp_path / "g.yaml"
    net.write_text("name: g\nlayers:\n  - {name: c, type: CONV2D, K: 4, C: 4, R: 3, S: 3, Y: 6, X: 6}\n",
                   encoding="utf-8")
    hw = ["--hw", "eyeriss_like", "--set", "pe_array.rows=2", "--set", "pe_array.cols=2"]
    out = tmp_path / "s"
    result = CliRunner().invoke(main, ["search", *hw, "--network", str(net), "--mapper", "exhaustive",
                                       "--unique-reuse", "--max-levels", "1", "--budget", "50", "--no-progress",
                                       "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    facts = json.loads((out / "summary.json").read_text())["layers"][0]["mapper"]
    assert facts["unique_reuse"] is True
    assert 0 < facts["orders_kept"] < facts["orders_enumerated"]
    bad = CliRunner().invoke(main, ["search", *hw, "--network", str(net), "--unique-reuse", "--out",
                                    str(tmp_path / "t")])
    assert bad.exit_code == 2 and "error: --unique-reuse" in bad.output


def test_reuse_report_measures_the_loss_on_a_small_layer():
    """The report's two searches share one space: the pruned one proposes a subset of the full
    one's genomes, so its best costs at least the full best (loss >= 0), and it met as many
    level orders as the full enumeration has (one level, K parallel, every other tile 1 or whole:
    per tile choice, (looping count)! orders)."""
    from accelsim.hw.loader import load_hardware
    from accelsim.search.reuse_report import measure, reuse_space

    layer = Layer.build("c", OpType.CONV2D, {"K": 4, "C": 2, "R": 1, "S": 2, "Y": 2, "X": 3})
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=2"])
    space = reuse_space(layer, hw.num_pes, ("K",))
    assert space.spatial_dims == ("K",) and space.tiles["C"] == (1, 2) and space.max_levels == 1
    row = measure(layer, hw, parallel=("K",))
    # K: tile 1 or 4; C, Y', X', S (all of size 2) each iterate (tile 1) or not (whole), N and R
    # are 1: sum over the 2^4 choices of k! for k iterating loops = sum C(4,k) k! = 65, twice (two K tiles)
    assert row.orders_enumerated == 2 * 65
    assert row.orders_kept < row.orders_enumerated
    assert 0 < row.proposed_kept < row.proposed_full
    assert row.best_full is not None and row.best_kept is not None and row.loss is not None
    assert row.best_kept >= row.best_full and row.loss >= 0
