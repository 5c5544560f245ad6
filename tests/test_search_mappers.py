"""Reference mappers and the search loop: determinism, staying in the space, repair against its
definition, exhaustive coverage and pruning, GAMMA against the exhaustive optimum, two-stage
re-ranking."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.hw.loader import load_hardware
from accelsim.search import Evaluator
from accelsim.search.genome import Gene, Genome
from accelsim.search.mappers import ExhaustiveMapper, GammaMapper, RandomMapper, enumerate_space, spatial_utilization
from accelsim.search.run import rerank, search
from accelsim.search.space import SearchSpace, default_sizes
from accelsim.workload.ops import Layer, OpType

CONV = Layer.build("conv", OpType.CONV2D, {"K": 16, "C": 8, "R": 3, "S": 3, "Y": 10, "X": 10})
HW = load_hardware("eyeriss_like", ["pe_array.rows=4", "pe_array.cols=4"])  # 16 PEs


def small_space() -> SearchSpace:
    """Two levels at most, a few tiles per dimension: 16 x 8 x ... small enough to enumerate."""
    return SearchSpace(CONV, 16, {"N": (1,), "K": (1, 4, 16), "C": (1, 8), "Y'": (1, 8), "X'": (1, 8),
                                  "R": (3,), "S": (3,)}, (4,), ("K", "C", "X'"), 1, 2)


def test_default_sizes():
    assert default_sizes(12) == (1, 2, 3, 4, 6, 8, 12)
    assert default_sizes(1) == (1,)


def _in_space(space: SearchSpace, genome) -> bool:
    parents = space.parents(genome)
    outer = space.num_pes
    for i, genes in enumerate(genome.levels):
        if i:
            if genome.clusters[i - 1] not in space.cluster_options(outer):
                return False
            outer = genome.clusters[i - 1]
        if sorted(g.dim for g in genes) != sorted(space.dims) or genes[0].dim not in space.spatial_dims:
            return False
        if any(g.tile not in space.tile_options(g.dim, parents[i][g.dim]) for g in genes):
            return False
    return space.min_levels <= len(genome.levels) <= space.max_levels


@pytest.mark.parametrize("mapper", ["gamma", "random"])
def test_mappers_are_deterministic_and_stay_in_the_space(mapper):
    """Same seed, same candidates and results; another seed, other candidates; every genome a
    mapper proposes lies in its space (GAMMA's operators and repair keep it there)."""
    space = SearchSpace.default(CONV, HW.num_pes, max_levels=2)

    def run(seed: int):
        m = GammaMapper(space, seed, population=20) if mapper == "gamma" else RandomMapper(space, seed, batch=20)
        proposed = []
        original_ask = m.ask

        def ask():
            batch = original_ask()
            proposed.extend(batch)
            return batch

        m.ask = ask  # type: ignore[method-assign]
        with Evaluator(HW, CONV) as ev:
            found = search(ev, m, 60)
        return found, proposed

    a, proposed = run(3)
    b, _ = run(3)
    c, _ = run(4)
    assert a.frame[["key", "cost"]].equals(b.frame[["key", "cost"]])
    assert not a.frame["key"].equals(c.frame["key"])
    assert len(a.frame) == 60 and a.frame["new"].all() and a.frame["key"].is_unique
    assert all(_in_space(space, g) for g in proposed)


def test_exhaustive_enumerates_the_space_once():
    """Loop orders differ only among looping dimensions: one level with spatial K and tiles
    (K 4, C 8 whole, ...) has one order; the count equals a hand count of the space."""
    space = small_space()
    genomes = list(enumerate_space(space))
    assert len({g.text() for g in genomes}) == len(genomes)
    # one level: spatial dim (3) x tiles K(3) C(2) Y'(2) X'(2) x orders of the looping ones
    def orders(first: str, tiles: dict) -> int:
        from math import factorial
        full = {"N": 1, "K": 16, "C": 8, "Y'": 8, "X'": 8, "R": 3, "S": 3}
        return factorial(sum(1 for d, t in tiles.items() if d != first and t < full[d]))
    one = 0
    for first in ("K", "C", "X'"):
        for k in (1, 4, 16):
            for c in (1, 8):
                for y in (1, 8):
                    for x in (1, 8):
                        one += orders(first, {"K": k, "C": c, "Y'": y, "X'": x})
    assert sum(1 for g in genomes if len(g.levels) == 1) == one


def test_exhaustive_prunes_before_scoring_and_reports_coverage():
    space = small_space()
    mapper = ExhaustiveMapper(space, HW, min_utilization=0.5)
    with Evaluator(HW, CONV) as ev:
        found = search(ev, mapper, 100_000)
    cov = mapper.coverage
    assert found.stopped == "exhausted" and cov.complete
    assert cov.enumerated == len(list(enumerate_space(space)))
    assert cov.enumerated == cov.pruned_illegal + cov.pruned_utilization + cov.proposed
    assert cov.pruned_illegal > 0 and cov.pruned_utilization > 0
    assert (found.frame["status"] == "ok").all()  # pruned candidates never reach a model
    assert len(found.frame) == found.frame["key"].nunique() <= cov.proposed


def test_spatial_utilization_by_hand():
    """16 PEs, SpatialMap(4,4) K over 16 K: 4 windows, one fold, 4 of 16 PEs busy -> 0.25;
    clusters of 4 with C split in 8 windows of 1 over 4 PEs: 2 folds, all busy -> 1."""
    from accelsim.mapping.compile import compile_mapping
    from accelsim.search import parse_dataflow

    cm = compile_mapping(CONV, parse_dataflow("SpatialMap(4,4) K", CONV), 16)
    assert spatial_utilization(cm) == 0.25
    cm = compile_mapping(CONV, parse_dataflow("SpatialMap(4,4) K; Cluster(4,P); SpatialMap(1,1) C", CONV), 16)
    assert spatial_utilization(cm) == 1.0


@pytest.mark.slow
def test_gamma_reaches_the_exhaustive_optimum_within_2_percent():
    """On a space exhaustive covers fully (3,164 genomes, 2,434 after pruning), GAMMA with a budget
    of 300 finds a mapping within 2% of the optimum (analytical model, latency). About 50 s."""
    space = small_space()
    mapper = ExhaustiveMapper(space, HW, min_utilization=0.0)
    with Evaluator(HW, CONV) as ev:
        exhaustive = search(ev, mapper, 100_000)
        assert mapper.coverage.complete
        optimum = exhaustive.best["cost"]
    legal_space = int((exhaustive.frame["status"] == "ok").sum())
    with Evaluator(HW, CONV) as ev:
        gamma = search(ev, GammaMapper(space, seed=0, population=20), 300)
    assert len(gamma.frame) < mapper.coverage.enumerated and legal_space > 300
    assert gamma.best["cost"] <= optimum * 1.02, (gamma.best["cost"], optimum)


def test_two_stage_rerank_measures_ranking_fidelity():
    """The screen's best k are simulated; regret is 0 when the screen's pick is the simulator's
    best, correlations lie in [-1, 1], and the simulator's rows are new to it."""
    space = SearchSpace.default(CONV, HW.num_pes, max_levels=2)
    with Evaluator(HW, CONV) as screen:
        found = search(screen, RandomMapper(space, seed=1), 60)
    with Evaluator(HW, CONV, model="sim") as sim:
        r = rerank(found.frame, sim, 5)
    assert len(r.frame) == 5 and (r.frame["model"] == "sim").all()
    ok = r.frame[r.frame["status"] == "ok"]
    assert r.regret is not None and r.regret >= 0
    assert r.regret == pytest.approx(ok["cost"].iloc[0] / ok["cost"].min() - 1)
    assert -1 <= r.spearman <= 1 and -1 <= r.kendall <= 1
    assert r.sim_pick == ok.loc[ok["cost"].idxmin(), "key"]


def test_random_genomes_are_often_legal_on_eyeriss():
    """The default space's random genomes are not mostly illegal (a search can start from them)."""
    space = SearchSpace.default(CONV, 168)
    rng = random.Random(0)
    with Evaluator("eyeriss_like", CONV) as ev:
        frame = ev.evaluate([space.random_genome(rng) for _ in range(40)])
    assert (frame["status"] == "ok").mean() > 0.3


def test_gamma_first_generation_starts_from_its_seeds():
    """Seeds that are genomes of the space open generation 0 (duplicates once, at most half the
    population); a seed outside the space (a tile the space does not offer) is left out."""
    space = SearchSpace.default(CONV, HW.num_pes, max_levels=2)
    rng = random.Random(7)
    inside = [space.random_genome(rng, 1) for _ in range(3)]
    genes = inside[0].levels[0]
    outside = Genome(((Gene(genes[0].dim, 10**6), *genes[1:]),), ())
    mapper = GammaMapper(space, seed=0, population=10, seeds=(inside[0], inside[0], inside[1], outside, inside[2]))
    first = mapper.ask()
    assert first[:3] == [inside[0], inside[1], inside[2]] and outside not in first and len(first) == 10
    assert mapper.info()["seeded"] == 3


def _repaired_by_definition(space: SearchSpace, genome: Genome) -> Genome:
    """:meth:`SearchSpace.repair` as its docstring defines it, computed afresh for every gene: each
    tile the largest of the space's sizes that is at most it and at most its parent (the least
    such size when none is at most it), each cluster the largest allowed one at most it (the
    least when none is), inner levels dropped once no PEs are left to split."""
    parent = dict(space.layer.loop_nest().dims)

    def clipped(genes):
        out = []
        for g in genes:
            options = [t for t in space.tiles[g.dim] if t <= parent[g.dim]]
            out.append(Gene(g.dim, max((t for t in options if t <= g.tile), default=options[0])))
        parent.update({g.dim: g.tile for g in out})
        return tuple(out)

    offchip = clipped(genome.offchip)
    outer, levels, clusters = space.num_pes, [], []
    for i, genes in enumerate(genome.levels):
        if i:
            options = [c for c in space.clusters if c < outer]
            if not options:
                break
            fitting = [c for c in options if c <= genome.clusters[i - 1]]
            outer = max(fitting) if fitting else min(options)
            clusters.append(outer)
        levels.append(clipped(genes))
    return Genome(tuple(levels), tuple(clusters), offchip, space.num_pes if offchip else 0)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pes=st.sampled_from([16, 64, 168]), offchip=st.booleans())
def test_repair_matches_its_definition(seed, pes, offchip):
    """Genomes of a larger space (``pes`` PEs, off-chip blocks or none) with any tiles (up to
    twice a dimension's size, an inner tile possibly larger than its parent, as crossover leaves
    them) repaired into the small one, twice over (the second time from the clipped tiles the
    space kept): what the definition gives; a genome of the space comes back as the same object."""
    space = small_space()
    other = SearchSpace.default(CONV, pes, max_levels=3, offchip=offchip)
    rng = random.Random(seed)

    def scrambled(genes):
        return tuple(Gene(g.dim, rng.randint(1, 2 * other.sizes[g.dim])) for g in genes)

    genomes = [other.random_genome(rng) for _ in range(10)]
    genomes = [replace(g, levels=tuple(scrambled(genes) for genes in g.levels), offchip=scrambled(g.offchip))
               for g in genomes]
    for _ in range(2):
        for genome in genomes:
            repaired = space.repair(genome)
            assert repaired == _repaired_by_definition(space, genome)
            assert space.repair(repaired) is repaired
