"""Nevergrad's baseline optimizers as mappers: every point of the unit cube reads as a genome of the
space, each optimizer is deterministic under a seed, and all are scored by the same evaluator (a
candidate's row is the one a fresh evaluator gives it, whichever mapper proposed it)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.hw.loader import load_hardware
from accelsim.search import Evaluator
from accelsim.search.genome import Gene, Genome
from accelsim.search.nevergrad_mappers import NEVERGRAD_MAPPERS, NevergradMapper, UnitCubeGenomes
from accelsim.search.run import search
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer, OpType

pytest.importorskip("nevergrad")

CONV = Layer.build("conv", OpType.CONV2D, {"K": 8, "C": 4, "R": 3, "S": 3, "Y": 6, "X": 6})
HW = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=4"])  # 8 PEs
SPACE = SearchSpace.default(CONV, HW.num_pes, max_levels=2)
ROW = ["key", "dataflow", "status", "reason", "cost", "cycles", "energy_pj", "pe_utilization",
       "dram_words", "l2_words", "l1_words", "noc_words"]


def test_unit_cube_corners_by_hand():
    """All zeros: one level (the first count), the first parallel dimension (N is 1, so K), the
    others in dimension order (equal keys keep it), every tile the smallest (1). All ones: two
    levels, the last cluster size (4 < 8) and whole tiles (the largest under each parent)."""
    decoder = UnitCubeGenomes(SPACE)
    assert decoder.size == 1 + 1 + 2 * (1 + 2 * 7)
    low = decoder.genome(np.zeros(decoder.size))
    assert low == Genome(((Gene("K", 1), Gene("N", 1), Gene("C", 1), Gene("Y'", 1), Gene("X'", 1),
                           Gene("R", 1), Gene("S", 1)),))
    high = decoder.genome(np.ones(decoder.size))
    assert len(high.levels) == 2 and high.clusters == (4,)
    assert {g.dim: g.tile for g in high.levels[0]} == CONV.loop_nest().dims


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=UnitCubeGenomes(SPACE).size, max_size=UnitCubeGenomes(SPACE).size))
def test_every_point_is_a_genome_of_the_space(point):
    genome = UnitCubeGenomes(SPACE).genome(np.array(point))
    assert SPACE.repair(genome) == genome  # in the space: repair leaves it as it is
    assert all(g.dim in SPACE.spatial_dims for g in (level[0] for level in genome.levels))


def _run(name: str, seed: int) -> pd.DataFrame:
    mapper = NevergradMapper(name, SpaceOneLevel, seed=seed, budget=12, batch=6)
    with Evaluator(HW, CONV) as ev:
        return search(ev, mapper, 12).frame


SpaceOneLevel = SearchSpace.default(CONV, HW.num_pes, max_levels=1)


def test_each_optimizer_is_seeded_and_scored_by_the_same_evaluator():
    """Per optimizer: the same seed proposes and scores the same schedules; the rows it got equal
    those a fresh evaluator gives the same candidates; a schedule two optimizers both met has the
    same row from each (its metrics; the directives may be written in another order of non-looping loops)."""
    seen: dict[str, pd.Series] = {}
    for name in NEVERGRAD_MAPPERS:
        a, b = _run(name, 3), _run(name, 3)
        assert len(a) > 0 and a["key"].tolist() == b["key"].tolist(), name
        with Evaluator(HW, CONV) as fresh:
            again = fresh.evaluate(a["dataflow"].tolist())  # the same schedules, written as directives
        pd.testing.assert_frame_equal(a[ROW].reset_index(drop=True), again[ROW].reset_index(drop=True))
        for _, row in a.iterrows():
            if row["key"] in seen:
                pd.testing.assert_series_equal(seen[row["key"]][ROW[2:]], row[ROW[2:]], check_names=False)
            seen[row["key"]] = row
