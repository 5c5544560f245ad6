"""MARVEL's decoupled mapper (``search/marvel.py``, ``accelsim search --mapper marvel``).

Hardware: ``eyeriss_like`` (168 PEs as 12 x 14, L1 512 bytes double-buffered: 256 words per PE
tile, 1-byte words).
"""

from __future__ import annotations

import json
import shlex
from math import prod

import pandas as pd
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.cost_models import COST_MODELS, EvalJob
from accelsim.mapping.jobs import Job, compile_job
from accelsim.mapping.layouts import layout_specs
from accelsim.model_options import check_mode
from accelsim.search.evaluate import Evaluator
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


def test_evaluator_scores_with_the_given_dram_layouts():
    """A convolution's input axes are N, C, Y, X (indices 0..3); channel-last is (0, 2, 3, 1)
    = N,Y,X,C. Scoring with input (0, 2, 1, 3) writes ``input=N,Y,C,X`` in the row and gives
    the analytical model's result for the job with that layout; the operator's own layout is
    left out of the text (the row reads as channel-last's). Layouts change bursts, never words."""
    layer = MARVEL["L5_Bottleneck1_1_3"]
    flow = MarvelMapper(layer, HW, seed=0, batch=1).ask()[0]
    model = COST_MODELS["analytical"]
    rows = {}
    for name, layouts in (("marvel", {"input": (0, 2, 1, 3)}), ("own", {"input": (0, 2, 3, 1)}), ("none", None)):
        with Evaluator(HW, layer, "analytical", "realistic", dram_layouts=layouts) as ev:
            rows[name] = ev.evaluate([flow]).iloc[0]
    assert rows["marvel"]["dram_layouts"] == "input=N,Y,C,X"
    assert rows["own"]["dram_layouts"] == rows["none"]["dram_layouts"] == ""
    assert rows["own"]["cycles"] == rows["none"]["cycles"]
    for name, layouts in (("marvel", (("input", (0, 2, 1, 3)),)), ("none", ())):
        job = Job(layer, tuple(flow), "t", dram_layouts=layouts)
        direct = model.evaluate(EvalJob(compile_job(job, HW), HW, check_mode("realistic"), job))
        assert rows[name]["cycles"] == direct.cycles
    assert rows["marvel"]["dram_words"] == rows["none"]["dram_words"]


def test_search_cli_marvel_scores_and_reports_its_layouts(tmp_path):
    """Every candidate of ``--mapper marvel`` is scored with the off-chip phase's layouts (the
    ``dram_layouts`` column); the summary's command, run as ``analyze`` (the model the search
    scored with), reproduces the best row's cycles; gamma's rows stay channel-last (empty)."""
    layer = MARVEL["L5_Bottleneck1_1_3"]
    expected = " ".join(layout_specs(layer.loop_nest(), MarvelMapper(layer, HW).offchip.layouts))
    assert expected  # MARVEL moves at least one tensor off channel-last on this layer
    runs = {}
    for mapper in ("marvel", "gamma"):
        out = tmp_path / mapper
        result = CliRunner().invoke(main, ["search", "--hw", "eyeriss_like", "--network", "marvel15", "--layer",
                                           layer.name, "--mapper", mapper, "--budget", "8", "--population", "4",
                                           "--out", str(out)])
        assert result.exit_code == 0, result.output
        runs[mapper] = (pd.read_parquet(out / "candidates.parquet"), json.loads((out / "summary.json").read_text()))
    frame, summary = runs["marvel"]
    assert set(frame["dram_layouts"]) == {expected}
    best = summary["layers"][0]["best"]
    command = shlex.split(summary["layers"][0]["simulate"])
    assert command[:2] == ["accelsim", "simulate"] and command.count("--dram-layout") == len(expected.split())
    analyzed = CliRunner().invoke(main, ["analyze", *command[2:], "--json", str(tmp_path / "a.json")])
    assert analyzed.exit_code == 0, analyzed.output
    assert json.loads((tmp_path / "a.json").read_text())[0]["cycles"] == best["cycles"]
    frame, summary = runs["gamma"]
    assert set(frame["dram_layouts"]) == {""} and summary["layers"][0]["simulate"] is None
