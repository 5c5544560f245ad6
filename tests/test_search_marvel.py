"""MARVEL's decoupled mapper (``search/marvel.py``, ``accelsim search --mapper marvel``).

Hardware: ``eyeriss_like`` (168 PEs as 12 x 14, L1 512 bytes double-buffered: 256 words per PE
tile, 1-byte words).
"""

from __future__ import annotations

import json
from math import prod

from click.testing import CliRunner

from accelsim.cli import main
from accelsim.hw.loader import load_hardware
from accelsim.mapping.compile import compile_mapping
from accelsim.search.legality import check_candidate
from accelsim.search.marvel import MarvelMapper, _utilization, marvel_dataflow, onchip_candidates
from accelsim.mapping.offchip import optimize_offchip
from accelsim.workload.tables import load_network

HW = load_hardware("eyeriss_like")
MARVEL = {layer.name: layer for layer in load_network("marvel15").layers}


def test_utilization_by_hand():
    """64 windows on 168 PEs: one round, 64/168; 200 windows: two rounds of 168, 200/336."""
    assert _utilization(64, 168) == 64 / 168
    assert _utilization(200, 168) == 200 / 336
    assert _utilization(168, 168) == 1.0


def test_symmetric_pruning_keeps_one_of_each_mirror():
    """L9's L2 tile is square (Y'5 X'5, R3 S3): a candidate and its width/height mirror cost the
    same, and only the one naming Y' before X' is kept; L8's tile (Y'6 X'54) is not square, so
    both orders of Y' and X' are tried."""
    layer = MARVEL["L9_CONV5_3_2"]
    offchip = optimize_offchip(layer.loop_nest(), HW, span=True, large_ties=True)
    for c in onchip_candidates(layer, offchip, HW, 0.1):
        sequence = (*c.spatial, *c.order)
        assert "X'" not in sequence or ("Y'" in sequence and sequence.index("Y'") < sequence.index("X'"))
    layer8 = MARVEL["L8_CONV2_2_2"]
    offchip8 = optimize_offchip(layer8.loop_nest(), HW, span=True, large_ties=True)
    firsts = {next(d for d in (*c.spatial, *c.order) if d in ("Y'", "X'"))
              for c in onchip_candidates(layer8, offchip8, HW, 0.1) if {"Y'", "X'"} <= {*c.spatial, *c.order}}
    assert firsts == {"Y'", "X'"}


def test_candidates_obey_marvels_pruning():
    """Every L8 candidate: N tile 1, R and S whole (unrolled), tiles dividing the L2 tile's, the
    PE tile within 256 words, utilization at least the bound, and it compiles with MARVEL's L2
    tile as its level-0 loops (trips = L2 tile counts, in the off-chip order)."""
    layer = MARVEL["L8_CONV2_2_2"]
    nest = layer.loop_nest()
    offchip = optimize_offchip(nest, HW, span=True, large_ties=True)
    candidates = list(onchip_candidates(layer, offchip, HW, 0.25))
    assert candidates
    for c in candidates[::97]:
        assert c.tile["N"] == 1 and c.tile["R"] == 3 and c.tile["S"] == 3
        assert all(offchip.tile[d] % c.tile[d] == 0 for d in nest.dims)
        assert sum(prod(nest.extents(role, c.tile)) for role in nest.tensors) <= 256
        assert c.utilization >= 0.25
        cm = compile_mapping(layer, marvel_dataflow(layer, offchip, c, HW.num_pes), HW.num_pes)
        level0 = [(loop.dims[0], loop.trips) for loop in cm.loops if loop.level == 0]
        assert level0 == [(d, nest.dims[d] // offchip.tile[d]) for d in offchip.order]


def test_mapper_proposes_legal_candidates_in_utilization_order():
    mapper = MarvelMapper(MARVEL["L9_CONV5_3_2"], HW, seed=1, min_utilization=0.1, batch=16)
    batch = mapper.ask()
    assert len(batch) == 16
    assert all(check_candidate(MARVEL["L9_CONV5_3_2"], HW, flow).legal for flow in batch)
    info = mapper.info()
    assert info["offchip_seconds"] >= 0 and info["onchip_seconds"] >= 0
    assert info["onchip_pruned_space"] >= 16 and info["proposed"] == 16


def test_search_cli_marvel_reports_its_phases(tmp_path):
    """L4 (C=576, 3x3, 5x5 output): the whole layer is one tile, input 7*7*576 = 28,224 + weight
    9*576 = 5,184 + output 25*576 = 14,400 = 47,808 words <= 55,296, and costs what C=64 tiles do
    (every DB grows with C), so the mapper, taking the largest of equal tiles, takes it."""
    out = tmp_path / "s"
    result = CliRunner().invoke(main, ["search", "--hw", "eyeriss_like", "--network", "marvel15", "--layer",
                                       "L4_Bottleneck6_2_2", "--mapper", "marvel", "--min-utilization", "0.1",
                                       "--budget", "20", "--out", str(out)])
    assert result.exit_code == 0, result.output
    layer = json.loads((out / "summary.json").read_text())["layers"][0]
    assert layer["mapper"]["mapper"] == "marvel"
    assert layer["mapper"]["offchip_tile"] == "N1 C576 Y'5 X'5 R3 S3"
    assert layer["legal"] >= 1
