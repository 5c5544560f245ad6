"""The co-search's tile repair (:mod:`accelsim.search.fit`): a case by hand, and the property
that a repaired genome stays in its space and fits its buffers whenever its smallest tiles do."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.hw.loader import load_hardware
from accelsim.mapping.compile import check_fits, compile_mapping
from accelsim.search.fit import buffer_needs, fit_tiles
from accelsim.search.genome import Gene, Genome
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer, OpType

FC = Layer.build("fc", OpType.GEMM, {"M": 8, "N": 16, "K": 32})
CONV = Layer.build("conv", OpType.CONV2D, {"K": 16, "C": 8, "R": 3, "S": 3, "Y": 10, "X": 10})


def _hw(l1: int, l2: int, pes: int = 16):
    rows = 4 if pes == 16 else 1
    return load_hardware("eyeriss_like", [f"pe_array.rows={rows}", f"pe_array.cols={pes // rows}",
                                          f"l1.size_bytes={l1}", f"l2.size_bytes={l2}"])


def test_repair_by_hand():
    """GEMM M=8 N=16 K=32 on 16 PEs, one level [N:1 M:8 K:32] (N across the PEs), 1-byte words,
    both buffers double-buffered, L1 200 B. One PE's tiles: input M x K = 256, weight K x N = 32,
    output M x N = 8 words: 296 x 2 = 592 B > 200. N is at its least; halving M leaves
    4 x 32 + 32 + 4 = 164 words (328 B), halving K 128 + 16 + 8 = 152 (304 B): K goes to 16. Then
    M:4 would leave 64 + 16 + 4 = 84 words (168 B), K:8 64 + 8 + 8 = 80 (160 B, fits): K goes to 8.
    The L2 tile spans N's 16 windows: 8 x 8 + 8 x 16 + 8 x 16 = 320 words, 640 B. A genome that
    fits comes back unchanged."""
    hw = _hw(200, 100_000)
    space = SearchSpace.default(FC, 16, max_levels=2)
    genome = Genome(((Gene("N", 1), Gene("M", 8), Gene("K", 32)),))
    assert buffer_needs(space, genome, hw) == (592, 1792)
    fitted = fit_tiles(space, genome, hw)
    assert fitted == Genome(((Gene("N", 1), Gene("M", 8), Gene("K", 8)),))
    assert buffer_needs(space, fitted, hw) == (160, 640)
    assert fit_tiles(space, fitted, hw) == fitted


def test_l2_repair_shrinks_the_outer_level_and_clips_the_inner():
    """Two levels on 16 PEs (4 sub-units of 4), level 0 [N:16 M:8 K:32] (one window: the L2 tile
    is the whole layer, 8 x 32 + 32 x 16 + 8 x 16 = 896 words, 1,792 B double-buffered) under an
    L2 of 1,000 B. Halving N saves nothing (2 windows of 8 over 4 sub-units still span 16); M:4
    leaves 128 + 512 + 64 = 704 words (1,408 B), K:16 128 + 256 + 128 = 512 (1,024 B): K goes to
    16. Then M:4 leaves 64 + 256 + 64 = 384 words (768 B), K:8 64 + 128 + 128 = 320 (640 B):
    K goes to 8 and fits. The inner level's K:32 is clipped to its new parent, 8."""
    hw = _hw(4096, 1000)
    space = SearchSpace.default(FC, 16, max_levels=2)
    genome = Genome(((Gene("N", 16), Gene("M", 8), Gene("K", 32)), (Gene("N", 1), Gene("M", 8), Gene("K", 32))), (4,))
    fitted = fit_tiles(space, genome, hw)
    assert fitted.levels[0] == (Gene("N", 16), Gene("M", 8), Gene("K", 8))
    assert fitted.levels[1] == (Gene("N", 1), Gene("M", 8), Gene("K", 8))
    assert buffer_needs(space, fitted, hw)[1] == 640


def _least(space: SearchSpace, genome: Genome, level: int) -> bool:
    parent = space.parents(genome)[level]
    return all(g.tile == min(space.tile_options(g.dim, parent[g.dim])) for g in genome.levels[level])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), layer=st.sampled_from([FC, CONV]), pes=st.sampled_from([4, 16]),
       l1=st.sampled_from([8, 16, 64, 256, 1024]), l2=st.sampled_from([64, 512, 4096, 65536]))
def test_repair_keeps_tiles_legal(seed, layer, pes, l1, l2):
    """Any genome of the space, repaired: still a genome of the space (repair is a fixed point of
    the space's own clipping); its L2 tile fits L2 unless level 0's tiles are all at their least,
    its PE tiles fit L1 unless the innermost level's are; a genome that fitted is unchanged."""
    hw = _hw(l1, l2, pes)
    space = SearchSpace.default(layer, pes, max_levels=3)
    genome = space.random_genome(random.Random(seed))
    fitted = fit_tiles(space, genome, hw)
    assert space.repair(fitted) == fitted and fitted.clusters == genome.clusters
    cm = compile_mapping(layer, fitted.directives(), pes)
    over = {p.buffer for p in check_fits(cm, l1, l2, hw.word_size_bytes, True, True)}
    assert "L2" not in over or _least(space, fitted, 0)
    assert "L1" not in over or _least(space, fitted, len(fitted.levels) - 1)
    before = compile_mapping(layer, genome.directives(), pes)
    if not check_fits(before, l1, l2, hw.word_size_bytes, True, True):
        assert fitted == genome
