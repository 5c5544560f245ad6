"""Genomes with an off-chip block (``--offchip-genes``): the L2 tile and the inter-tile loop order.

Covers: a hand-derived decode, its text and its reading back; the L2 tile the compiler gives the
decoded mapping (one level-0 iteration is the pinned tile; L2 merges consecutive pinned tiles only
when they fit together); refusal of a pinned tile that overflows L2; GAMMA's operators on the new
genes (deterministic, staying in the space, tile and order both varied); a property test over
random genomes of the space (each MAC computed once by functional execution, the L2 tile the
pinned one); the CLI option and its refusal with a mapper that has no such genes.
"""

from __future__ import annotations

import random
from math import prod

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.cli import main
from accelsim.functional import simulate_functional
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.distinct_blocks import l2_capacity_words
from accelsim.mapping.loopnest_format import loopnest_dataflow, loopnest_of, parse_loopnest, write_loopnest
from accelsim.mapping.tiles import TileSchedule
from accelsim.search.candidates import canonical_key
from accelsim.search.fit import buffer_needs, fit_tiles
from accelsim.search.genome import Gene, Genome, genome_from_directives
from accelsim.search.legality import check_candidate
from accelsim.search.evaluate import Evaluator
from accelsim.search.mappers import GammaMapper, GammaRates, vary
from accelsim.search.cosearch_report import MAC_SHARES, fixed_design
from accelsim.search.run import search
from accelsim.search.seeds import named_style_seeds, seed_genomes, style_genomes, style_seeds
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer, OpType
from accelsim.workload.tables import load_network

# K=4 C=2 1x1 filter on 4x4 outputs (Y'=X'=4), 4 PEs
TINY = Layer.build("tiny", OpType.CONV2D, {"K": 4, "C": 2, "R": 1, "S": 1, "Y": 4, "X": 4})
HW = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=2"])


def _t(size: int, dim: str) -> MapDirective:
    return MapDirective("temporal", size, size, dim, 0)


def tiny_genome() -> Genome:
    """L2 tile K2 C1 Y'4 X'2 (R, S, N whole), inter-tile order C outermost, then K, then X';
    inside it one level spreading K over the 4 PEs (2 windows: 2 idle), C, Y', X' per PE 1, 2, 2."""
    offchip = (Gene("C", 1), Gene("K", 2), Gene("Y'", 4), Gene("X'", 2), Gene("R", 1), Gene("S", 1),
               Gene("N", 1))
    level = (Gene("K", 1), Gene("C", 1), Gene("Y'", 2), Gene("X'", 2), Gene("R", 1), Gene("S", 1), Gene("N", 1))
    return Genome((level,), (), offchip, 4)


def test_decode_by_hand():
    """The block decodes to one TemporalMap(T,T) per gene in its order, then Cluster(4) (one
    unit of all 4 PEs), then the on-chip level; the text puts the block first in braces; the
    directives read back to the same genome."""
    g = tiny_genome()
    assert g.text() == "{C:1 K:2 Y':4 X':2 R:1 S:1 N:1} 4 [K:1 C:1 Y':2 X':2 R:1 S:1 N:1]"
    assert g.directives() == (
        _t(1, "C"), _t(2, "K"), _t(4, "Y'"), _t(2, "X'"), _t(1, "R"), _t(1, "S"), _t(1, "N"),
        ClusterDirective(4, 0),
        MapDirective("spatial", 1, 1, "K", 0), _t(1, "C"), _t(2, "Y'"), _t(2, "X'"), _t(1, "R"), _t(1, "S"),
        _t(1, "N"))
    assert genome_from_directives(TINY, g.directives(), 4) == g
    assert g.l2_tile(TINY) == {"N": 1, "K": 2, "C": 1, "Y'": 4, "X'": 2, "R": 1, "S": 1}


def test_a_loop_nest_states_the_block_as_its_dram_entry():
    """A loop-nest file already pins the DRAM-level tile and order: the decoded genome's loop
    nest has a DRAM entry with the looping block loops (factors K2 C2 X'2, permutation innermost
    first X' K C), and the file read back is the same schedule, read as the same block (genes
    that do not loop may stand elsewhere in it)."""
    g = tiny_genome()
    nest = loopnest_of(compile_mapping(TINY, g.directives(), 4))
    dram = nest.entries[0]
    assert dram.target == "DRAM" and dram.permutation == ("X'", "K", "C")
    assert {d: f for d, f in dram.factors.items() if f > 1} == {"K": 2, "C": 2, "X'": 2}
    _, (read,) = parse_loopnest(write_loopnest("tiny", [nest]))
    flow = loopnest_dataflow(read, 4)
    back = genome_from_directives(TINY, flow, 4)
    assert canonical_key(compile_mapping(TINY, flow, 4)) == canonical_key(compile_mapping(TINY, g.directives(), 4))
    assert back.l2_tile(TINY) == g.l2_tile(TINY) and back.offchip_pes == 4
    assert [x.dim for x in back.offchip if x.tile < TINY.loop_nest().dims[x.dim]] == ["C", "K", "X'"]


def test_l2_tile_is_the_pinned_one_by_hand():
    """One level-0 iteration is the pinned tile: input C1 x Y4 x X2 = 8 words, weight K2 x C1 = 2,
    output K2 x Y'4 x X'2 = 16: 26 words. Tiles step C (2 trips), K (2), X' (2): 8 tiles. With L2
    room for 26 words (below 2 x 26) no two tiles merge: all 3 looping level-0 loops step tiles.
    With room for 100 words (two X' tiles: input C1 Y4 X4 16 + weight 2 + output 32 = 50; four
    K, X' tiles: 16 + 4 + 64 = 84; eight: 200), L2 holds the innermost K and X' loops' 4 tiles,
    consecutive pinned tiles, and only C steps."""
    cm = compile_mapping(TINY, tiny_genome().directives(), 4)
    exact = TileSchedule(cm, 26)
    assert exact.l2_required_words == 26
    assert exact.tile_loops == 3 and exact.count == 8
    merged = TileSchedule(cm, 100)
    assert merged.l2_required_words == 26
    assert merged.tile_loops == 1 and merged.count == 2


def test_pinned_tile_overflowing_l2_is_refused():
    """The whole layer as the pinned tile: input 2 x 4 x 4 = 32, weight 8, output 64 words =
    104 words, double-buffered 208 bytes at 1 byte per word, over an L2 of 128 bytes."""
    whole = tuple(Gene(d, n) for d, n in TINY.loop_nest().dims.items())
    level = (Gene("K", 1), *(Gene(d, n) for d, n in TINY.loop_nest().dims.items() if d != "K"))
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=2", "l2.size_bytes=128",
                                        "l1.size_bytes=4096"])
    legality = check_candidate(TINY, hw, Genome((level,), (), whole, 4).directives())
    assert legality.reason == "l2_overflow", legality
    assert "208" in legality.message
    assert check_candidate(TINY, HW, Genome((level,), (), whole, 4).directives()).legal


def test_operators_vary_the_offchip_genes_and_stay_in_the_space():
    """Over many children: every one is repaired into the space, keeps an off-chip block over
    every dimension with the array's PEs, and both the block's tiles and its order change."""
    space = SearchSpace.default(TINY, 4, max_levels=2, offchip=True)
    rng = random.Random(1)
    parents = [space.random_genome(rng) for _ in range(8)]
    assert all(p.offchip and p.offchip_pes == 4 for p in parents)
    tiles_changed = order_changed = False
    for i in range(200):
        a = parents[i % 8]
        child = vary(space, rng, GammaRates(), a, lambda: rng.choice(parents))
        assert space.repair(child) == child
        assert sorted(g.dim for g in child.offchip) == sorted(space.dims) and child.offchip_pes == 4
        tiles_changed |= {g.dim: g.tile for g in child.offchip} != {g.dim: g.tile for g in a.offchip}
        order_changed |= [g.dim for g in child.offchip] != [g.dim for g in a.offchip]
        for genes, parent in zip(child.levels, space.parents(child)):
            assert all(g.tile <= parent[g.dim] for g in genes)
        assert space.parents(child)[0] == child.l2_tile(TINY)
    assert tiles_changed and order_changed


def test_gamma_without_the_option_proposes_plain_genomes():
    """The option is off by default: GAMMA's genomes have no block, so their directives and keys
    are those of a search before the option existed."""
    mapper = GammaMapper(SearchSpace.default(TINY, 4, max_levels=2), seed=7, population=10)
    assert all(isinstance(g, Genome) and not g.offchip for g in mapper.ask())


DW = Layer.build("dw", OpType.DWCONV, {"C": 8, "R": 3, "S": 3, "Y": 8, "X": 8})


def test_a_style_seed_with_a_block_seeds_only_a_space_with_offchip_genes():
    """tpu_like maps a depthwise layer with a top level of loops over one unit of every PE, which
    reads back as a genome with an off-chip block. It seeds GAMMA only with ``--offchip-genes``:
    without the option no genome GAMMA proposes carries a block, seeded or not (from the option's
    commit until this test, the block genome seeded plain searches too, and its children carried
    blocks: a seeded search's candidates on depthwise layers changed)."""
    tpu = named_style_seeds(DW, HW)["tpu_like"]
    assert genome_from_directives(DW, tpu, HW.num_pes).offchip
    dataflows = list(named_style_seeds(DW, HW).values())
    space, offchip_space = (SearchSpace.default(DW, HW.num_pes, max_levels=2, offchip=o) for o in (False, True))
    plain, with_blocks = seed_genomes(space, dataflows), seed_genomes(offchip_space, dataflows)
    assert all(not g.offchip for g in plain) and len(with_blocks) == len(plain) + 1
    assert "tpu_like" not in style_genomes(space, HW) and style_genomes(offchip_space, HW)["tpu_like"].offchip
    mapper = GammaMapper(space, seed=7, population=10, seeds=plain)
    for _ in range(5):
        asked = mapper.ask()
        assert all(not g.offchip for g in asked if isinstance(g, Genome))
        mapper.tell(Evaluator(HW, DW).evaluate(asked))


def test_seeded_gamma_on_a_depthwise_layer_is_what_it_was_before_offchip_genes():
    """Golden: the co-search report's GAMMA on its compute-heavy design (512 PEs, L1 517 B, L2
    265,142 B), MobileNetV2's bottleneck2_1_2 (depthwise, C 96, 112 x 112 outputs, stride 2),
    style seeds, population 40, seed 0, 150 new schedules: best 132,197 cycles after 92 model
    runs, as on 4de7906, before off-chip genes existed. With the seeding bug (f436f4a until
    72ce2a0) it gave 132,787 after 102."""
    base = load_hardware("eyeriss_like")
    spec = fixed_design(base, 0.2, MAC_SHARES["compute-heavy"])
    layer = load_network("mobilenetv2").layer("bottleneck2_1_2")
    seeds = style_seeds(layer, spec)
    space = SearchSpace.default(layer, spec.num_pes)
    with Evaluator(spec, layer) as ev:
        mapper = GammaMapper(space, 0, 40, seeds=seed_genomes(space, seeds))
        found = search(ev, mapper, 150, None, seeds)
        assert (float(found.best["cycles"]), ev.model_runs, len(found.frame)) == (132197.0, 92, 150)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_every_decoded_genome_computes_each_mac_once_in_its_pinned_tile(seed):
    """A random genome of the space with an off-chip block that compiles and fits: functional
    execution computes every MAC once and the outputs are right, and one level-0 iteration
    holds exactly the pinned tile's words (its boxes: the tile's extents per tensor)."""
    space = SearchSpace.default(TINY, 4, max_levels=2, offchip=True)
    genome = space.random_genome(random.Random(seed))
    legality = check_candidate(TINY, HW, genome.directives())
    if not legality.legal:
        return
    cm = legality.compiled
    assert cm is not None
    _, report = simulate_functional(cm, HW)
    assert report.passed, report.text()
    assert report.macs_executed == report.macs_required == TINY.macs
    nest = TINY.loop_nest()
    tile = genome.l2_tile(TINY)
    pinned_words = sum(prod(nest.extents(role, tile)) for role in nest.tensors)
    schedule = TileSchedule(cm, l2_capacity_words(HW))
    assert schedule.l2_required_words == pinned_words
    looping = sum(1 for g in genome.offchip if TINY.loop_nest().dims[g.dim] > g.tile)
    assert schedule.tile_loops <= looping  # L2 tiles: runs of consecutive pinned tiles


def test_cli_option_and_its_refusal(tmp_path):
    """``--offchip-genes`` runs with gamma; with the exhaustive mapper it is one error line."""
    runner = CliRunner()
    args = ["search", "--hw", "eyeriss_like", "--network", "marvel15", "--layer", "L8_CONV2_2_2", "--budget", "4",
            "--seed", "7", "--no-style-seeds", "--population", "4"]
    ok = runner.invoke(main, [*args, "--mapper", "gamma", "--offchip-genes", "--out", str(tmp_path / "g")])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(main, [*args, "--mapper", "exhaustive", "--offchip-genes", "--out", str(tmp_path / "e")])
    assert bad.exit_code == 2
    assert bad.output.strip().splitlines()[-1].startswith("error: --offchip-genes")


def test_tile_repair_shrinks_the_block_for_l2():
    """The whole layer as the block needs 208 bytes of a 128-byte L2 (double-buffered, 1-byte
    words). Halving one block tile: K 4->2 leaves input 32 + weight 4 + output 32 = 68 words
    (136 B), C 2->1 16 + 4 + 64 = 84 (168 B), Y' 4->2 16 + 8 + 32 = 56 (112 B), X' the same 112 B:
    Y' (first of the tie) goes to 2, which fits; the on-chip level's Y' tile is clipped to 2."""
    dims = TINY.loop_nest().dims
    whole = tuple(Gene(d, n) for d, n in dims.items())
    level = (Gene("K", 1), *(Gene(d, n) for d, n in dims.items() if d != "K"))
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=2", "l2.size_bytes=128",
                                        "l1.size_bytes=4096"])
    space = SearchSpace.default(TINY, 4, max_levels=2, offchip=True)
    fixed = fit_tiles(space, Genome((level,), (), whole, 4), hw)
    assert fixed.l2_tile(TINY) == {**dims, "Y'": 2}
    assert {g.dim: g.tile for g in fixed.levels[0]}["Y'"] == 2
    assert buffer_needs(space, fixed, hw) == (52, 112)
    assert check_candidate(TINY, hw, fixed.directives()).legal
