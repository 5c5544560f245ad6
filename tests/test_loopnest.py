"""Loop-nest mappings (``accelsim.mapping.loopnest_format``): reading, writing, and conversion to
and from MAESTRO directives.

"The same compiled mapping" is :func:`canonical_form` equality: the schedule without directives
that split nothing and with a SpatialMap over one sub-unit counted as the TemporalMap it steps
like. That those leave results unchanged is checked here by simulation (whole results equal),
on a sample of the style round trips by default, all of them under ``slow``, and on random
legal mappings (hypothesis).
"""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from accelsim.cli import main
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import available_presets, load_hardware
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.jobs import jobs_from_loopnest
from accelsim.mapping.loopnest_format import (canonical_form, load_loopnest, loopnest_dataflow, loopnest_of,
                                              parse_loopnest, write_loopnest)
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload import available_networks, load_network
from test_properties import random_cases

HW = load_hardware("eyeriss_like")
MARVEL = load_network("marvel15")
CASES = [(style, layer.name) for style in sorted(STYLES) for layer in MARVEL.layers]
# simulated by default: one small layer per style (at most 896 steps; PWCONV, DWCONV and RESADD)
SAMPLE = {("eyeriss_like", "L5_Bottleneck1_1_3"), ("tpu_like", "L5_Bottleneck1_1_3"),
          ("nvdla_like", "L4_Bottleneck6_2_2"), ("shidiannao_like", "L3_Bottleneck4_3_2"),
          ("maeri_like", "L1_Bottleneck1_1_Residual")}


def _round_trip(cm, num_pes: int):
    """compiled mapping -> loop nest -> YAML text -> loop nest -> directives -> compiled mapping."""
    text = write_loopnest("net", [loopnest_of(cm)])
    _, (nest,) = parse_loopnest(text, "rt.yaml")
    return compile_mapping(nest.layer, loopnest_dataflow(nest, num_pes), num_pes, source="rt.yaml"), text


def _results(cm):
    result = simulate_layer(cm, HW, SimOptions())
    return {k: v for k, v in result.to_dict().items() if k != "wall_seconds"}


@pytest.mark.parametrize("style, layer", CASES)
def test_marvel15_round_trip_compiles_to_the_same_schedule(style, layer):
    cm = compile_mapping(MARVEL.layer(layer), style_mapping(style, MARVEL.layer(layer), HW), HW.num_pes)
    back, _ = _round_trip(cm, HW.num_pes)
    assert canonical_form(back) == canonical_form(cm)
    assert back.steps == cm.steps and back.used_pes == cm.used_pes


@pytest.mark.parametrize("style, layer", [pytest.param(*c, marks=[] if c in SAMPLE else [pytest.mark.slow])
                                          for c in CASES])
def test_marvel15_round_trip_simulates_the_same(style, layer):
    cm = compile_mapping(MARVEL.layer(layer), style_mapping(style, MARVEL.layer(layer), HW), HW.num_pes)
    back, _ = _round_trip(cm, HW.num_pes)
    assert _results(back) == _results(cm)


@settings(max_examples=int(os.environ.get("ACCELSIM_LOOPNEST_EXAMPLES", "60")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(random_cases())
def test_random_mappings_convert_exactly_or_say_why(case):
    """Any legal mapping either has a loop nest that compiles back to the same schedule and
    simulates to the same result, or is refused as having none."""
    layer, hw, dataflow = case
    try:
        cm = compile_mapping(layer, dataflow, hw.num_pes)
    except MappingError:
        return
    try:
        nest = loopnest_of(cm)
    except MappingError as exc:
        assert exc.reason == "no_loopnest_equivalent", exc
        return
    back = compile_mapping(layer, loopnest_dataflow(nest, hw.num_pes), hw.num_pes)
    assert canonical_form(back) == canonical_form(cm)
    try:
        before = simulate_layer(cm, hw, SimOptions())
    except MappingError:  # a reduction spread over PEs without a reduction network
        return
    after = simulate_layer(back, hw, SimOptions())
    assert dataclasses.replace(after, wall_seconds=0) == dataclasses.replace(before, wall_seconds=0)


# ----- the format, by hand ---------------------------------------------------------------------
TIMELOOP_STYLE = """
targets: {MainMemory: DRAM, GlobalBuffer: L2, RegisterFile: L1}
problem:
  name: conv
  instance: {C: 8, M: 16, N: 1, P: 6, Q: 6, R: 3, S: 3, Hstride: 1, Wstride: 1}
mapping:
  - target: MainMemory
    type: temporal
    factors: M=2 C=2 P=1 Q=1 R=1 S=1 N=1
    permutation: CM
  - target: GlobalBuffer
    type: temporal
    factors: P=6 Q=2
    permutation: QP
  - target: GlobalBuffer
    type: spatial
    factors: M=8
  - target: GlobalBuffer
    type: spatial
    factors: C=4
  - target: RegisterFile
    type: temporal
    factors: Q=3 R=3 S=3
"""


def test_timeloop_style_nest_by_hand():
    """Timeloop's convolution instance: M = 16 filters (K), P = Q = 6 output rows/cols with 3x3
    filters at stride 1, so Y = X = (6 - 1) * 1 + 3 = 8. Tiles are products of the factors further
    in: K: 8 (spatial) x 1 = 8 inside MainMemory's M=2 (2 x 8 = 16 = K); C: 4 (spatial) x 1 inside
    C=2; Y': 6 trips of 1 row; X': Q=2 trips of tiles of Q=3 (the PE's); R, S whole in each PE.
    The permutations list loops innermost first: 'CM' is for M { for C }, 'QP' is for P { for Q }.

    The DRAM entry becomes a top level of one unit over all 168 PEs, so the directives are
    TemporalMap(8,8) K; TemporalMap(4,4) C; Cluster(168); SpatialMap(1,1) K (clusters of 4 PEs:
    168 // 4 = 42 sub-units, 8 used; a SpatialMap that does not fold goes first in its level);
    TemporalMap(1,1) Y'; TemporalMap(3,3) X'; Cluster(4); SpatialMap(1,1) C."""
    name, (nest,) = parse_loopnest(TIMELOOP_STYLE, "t.yaml")
    layer = nest.layer
    assert (layer.op.value, layer.sizes["K"], layer.sizes["Y"], layer.sizes["X"]) == ("CONV2D", 16, 8, 8)
    df = loopnest_dataflow(nest, 168)
    got = [(d.kind, d.size, d.offset, d.dim) if isinstance(d, MapDirective) else ("cluster", d.size) for d in df]
    assert got == [("temporal", 8, 8, "K"), ("temporal", 4, 4, "C"), ("cluster", 168), ("spatial", 1, 1, "K"),
                   ("temporal", 1, 1, "Y'"), ("temporal", 3, 3, "X'"), ("cluster", 4), ("spatial", 1, 1, "C")]
    cm = compile_mapping(layer, df, 168)
    assert [(lv.units, lv.unit_pes) for lv in cm.levels] == [(1, 168), (42, 4), (4, 1)]
    assert [(lp.dims, lp.trips) for lp in cm.loops] == [(("K",), 2), (("C",), 2), (("Y'",), 6), (("X'",), 2)]
    assert cm.steps == 2 * 2 * 6 * 2 == 48 and cm.used_pes == 168


def test_a_ragged_outermost_split_and_a_fold():
    """K = 10 over 4 sub-units of one PE with a fold: spatial K=4 (the fanout is all four
    sub-units) inside a temporal K=3: windows of 1, ceil(10 / 4) = 3 folds, the last with 2.
    A temporal C=3 over C = 7 with an L1 tile of 3: ceil(7 / 3) = 3 trips, the last of 1."""
    text = """
problem: {name: g, type: FC, N: 1, K: 10, C: 7}
mapping:
  - {target: L2, type: temporal, factors: K=3 C=3, permutation: C K}
  - {target: L2, type: spatial, factors: K=4}
  - {target: L1, type: temporal, factors: C=3}
"""
    _, (nest,) = parse_loopnest(text, "r.yaml")
    cm = compile_mapping(nest.layer, loopnest_dataflow(nest, 4), 4)
    assert [(lp.kind, lp.dims, lp.trips) for lp in cm.loops] == [("fold", ("K",), 3), ("temporal", ("C",), 3)]
    assert canonical_form(compile_mapping(nest.layer, loopnest_dataflow(loopnest_of(cm), 4), 4)) == canonical_form(cm)


@pytest.mark.parametrize("mapping, message", [
    ("[{target: L2, type: temporal, factors: K=2 C=2, permutation: K C}, {target: L2, type: temporal, factors: K=2},"
     " {target: L2, type: spatial, factors: C=2}, {target: L1, type: temporal, factors: K=2 C=2}]",
     "no directive equivalent: K is split by two temporal loops of one cluster level"),
    ("[{target: L2, type: spatial, factors: C=8}, {target: L2, type: temporal, factors: K=4},"
     " {target: L2, type: spatial, factors: K=2, fanout: 4}, {target: L1, type: temporal}]",
     "no directive equivalent: K is folded over time and spread over 2 of 4 sub-units"),
    ("[{target: L2, type: spatial, factors: K=2, fanout: 4}, {target: L1, type: temporal, factors: K=4 C=8}]",
     "no directive equivalent: the top level spreads over all 168 sub-units the array holds (1 PEs each), not fanout 4"),
    ("[{target: L2, type: temporal, factors: K=9}, {target: L1, type: temporal, factors: C=8}]",
     "no directive equivalent: K=9 leaves a whole tile of K empty: tiles of 1 need 8 trips"),
    ("[{target: L2, type: temporal, factors: K=4}, {target: L1, type: temporal, factors: C=8}]",
     "the factors of K multiply to 4, less than its extent 8"),
    ("[{target: L2, type: temporal, factors: K=8}, {target: L2, type: bypass}, {target: L1, type: temporal,"
     " factors: C=8}]", "type bypass: not modelled"),
    ("[{target: L1, type: temporal, factors: C=8 K=8}, {target: DRAM, type: temporal}]",
     "entry for DRAM comes after one for L1; list entries outermost first"),
    ("[{target: L2, type: temporal, factors: Z=8}, {target: L1, type: temporal, factors: C=8}]",
     "'Z' is not a loop dimension of a FC layer"),
    ("[{target: L1, type: spatial, factors: K=8 C=8}]", "target L1 cannot"),
    ("[{target: Buffer, type: temporal, factors: K=8 C=8}]", "'Buffer' is not DRAM, L2 or L1"),
    ("[{target: L2, type: temporal, factors: K=8 C=2}, {target: L1, type: temporal, factors: C=4}]",
     "give the order of K, C"),
])
def test_bad_nests_are_one_clear_error(tmp_path, mapping, message):
    path = tmp_path / "bad.yaml"
    path.write_text(f"problem: {{name: fc, type: FC, N: 1, K: 8, C: 8}}\nmapping: {mapping}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--mapping", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {path}") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_directives_without_a_loop_nest_say_why(tmp_path):
    """TemporalMap(10,10) K then TemporalMap(3,3) K one level down splits 10 into 3, 3, 3, 1: a
    loop nest tiles only the outermost split raggedly. Clusters of 5 inside 12 leave 2 PEs idle."""
    text = """Network n {
Layer inner_ragged { Type: FC Dimensions { N: 1, K: 20, C: 4 }
  Dataflow { TemporalMap(10,10) K; Cluster(4, P); TemporalMap(3,3) K; SpatialMap(1,1) C; } }
Layer idle_pes { Type: FC Dimensions { N: 1, K: 24, C: 5 }
  Dataflow { SpatialMap(1,1) K; Cluster(12, P); SpatialMap(1,1) K; Cluster(5, P); SpatialMap(1,1) C; } }
}"""
    path = tmp_path / "n.m"
    path.write_text(text, encoding="utf-8")
    runner = CliRunner()
    ragged = runner.invoke(main, ["mapping", "--hw", "eyeriss_like", "--mapping", str(path), "--layer", "inner_ragged",
                                  "--format", "loopnest"])
    assert ragged.exit_code == 2
    assert "no loop-nest equivalent: TemporalMap(3,3) K at cluster level 1 splits a tile of 10 K into 4 windows of 3" \
        in ragged.stderr
    idle = runner.invoke(main, ["mapping", "--hw", "eyeriss_like", "--mapping", str(path), "--layer", "idle_pes",
                                "--format", "loopnest"])
    assert idle.exit_code == 2 and "a cluster of 12 PEs holds 2 sub-units of 5, leaving 2 PEs idle" in idle.stderr


def test_cli_loopnest_and_maestro_files_simulate_alike(tmp_path):
    """``mapping --format loopnest`` writes what ``simulate --mapping`` reads; converting it
    back with ``mapping --mapping x.yaml`` gives a .m file that simulates the same."""
    runner = CliRunner()
    nest, maestro = tmp_path / "m.yaml", tmp_path / "m.m"
    base = ["--hw", "eyeriss_like"]
    assert runner.invoke(main, ["mapping", *base, "--network", "marvel15", "--style", "eyeriss_like", "--layer",
                                "L5_Bottleneck1_1_3", "--format", "loopnest", "-o", str(nest)]).exit_code == 0
    assert runner.invoke(main, ["mapping", *base, "--mapping", str(nest), "-o", str(maestro)]).exit_code == 0
    outs = []
    for source in (["--network", "marvel15", "--style", "eyeriss_like", "--layer", "L5_Bottleneck1_1_3"],
                   ["--mapping", str(nest)], ["--mapping", str(maestro)]):
        out = tmp_path / f"r{len(outs)}.json"
        result = runner.invoke(main, ["simulate", *base, *source, "--json", str(out)])
        assert result.exit_code == 0, result.output
        # what ran differs (provenance names the inputs); what it computed must not
        outs.append([{k: v for k, v in r.items() if k not in ("wall_seconds", "provenance")}
                     for r in json.loads(out.read_text())])
    assert outs[0] == outs[1] == outs[2]


def test_written_file_is_documented_yaml():
    cm = compile_mapping(MARVEL.layer("L5_Bottleneck1_1_3"), style_mapping("nvdla_like", MARVEL.layer("L5_Bottleneck1_1_3"), HW),
                         HW.num_pes)
    _, text = _round_trip(cm, HW.num_pes)
    assert text.startswith("# accelsim loop-nest mapping") and "target: L1" in text
    assert "# no DRAM entry" in text


def test_single_letter_permutation_and_layer_selection(tmp_path):
    """'QP' (Timeloop, innermost first) and 'P Q' are different orders; both parse."""
    base = "problem: {name: c, instance: {C: 1, M: 1, P: 2, Q: 2, R: 1, S: 1}}\nmapping:\n"
    entries = "  - {target: L2, type: temporal, factors: P=2 Q=2, permutation: %s}\n  - {target: L1, type: temporal}\n"
    _, (a,) = parse_loopnest(base + entries % "QP", "a.yaml")
    _, (b,) = parse_loopnest(base + entries % "\"X' Y'\"", "b.yaml")
    _, (c,) = parse_loopnest(base + entries % "PQ", "c.yaml")
    assert a.entries[0].loops() == [("Y'", 2), ("X'", 2)] == b.entries[0].loops()
    assert c.entries[0].loops() == [("X'", 2), ("Y'", 2)]
    path = tmp_path / "a.yaml"
    path.write_text(base + entries % "QP", encoding="utf-8")
    with pytest.raises(InputError, match="no layer 'zz'"):
        jobs_from_loopnest(path, 4, "zz")


def test_problem_errors_point_at_the_field(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("problem: {name: c, type: CONV2D, K: 4, C: 0, R: 1, S: 1, Y: 4, X: 4}\nmapping: []\n")
    with pytest.raises(InputError, match=r"p.yaml:1: .*field 'C': expected a positive integer"):
        load_loopnest(path)


def test_cluster_directive_count_matches_levels():
    """Every spatial entry closes one level: n spatial entries give n - 1 Cluster directives when
    there is no DRAM entry (the first level spreads over the array)."""
    cm = compile_mapping(MARVEL.layer("L5_Bottleneck1_1_3"), style_mapping("nvdla_like", MARVEL.layer("L5_Bottleneck1_1_3"), HW),
                         HW.num_pes)
    nest = loopnest_of(cm)
    spatial = sum(e.kind == "spatial" for e in nest.entries)
    clusters = sum(isinstance(d, ClusterDirective) for d in loopnest_dataflow(nest, HW.num_pes))
    assert clusters == spatial - 1 == len(cm.levels) - 1


@pytest.mark.slow
@pytest.mark.parametrize("preset", available_presets())
def test_every_bundled_style_mapping_converts(preset):
    """Every style's mapping of every layer of every bundled network on this preset has a loop
    nest that compiles back to the same schedule (the styles split only outermost raggedly)."""
    hw = load_hardware(preset)
    converted = 0
    for network in available_networks():
        for layer in load_network(network).layers:
            for style in sorted(STYLES):
                try:
                    cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
                except InputError:  # the style cannot map this layer on this array
                    continue
                back, _ = _round_trip(cm, hw.num_pes)
                assert canonical_form(back) == canonical_form(cm), (network, layer.name, style)
                converted += 1
    assert converted > 0


def test_a_nest_without_loops_above_l1_is_one_step_of_the_whole_layer(tmp_path):
    """An FC of K = C = 4 whose nest is the L1 entry alone (it was an IndexError, exit 70), or has
    an L2 entry of factors 1: one step computing K x C = 16 MACs, the same result (every field
    but wall time and provenance) as the .m file of TemporalMaps over the whole dimensions."""
    alone = "problem: {name: fc, type: FC, K: 4, C: 4}\nmapping:\n  - {target: L1, type: temporal, factors: K=4 C=4}\n"
    with_l2 = alone.replace("mapping:\n", "mapping:\n  - {target: L2, type: temporal, factors: K=1}\n")
    m_file = ("Network fc {\n  Layer fc {\n    Type: FC\n    Dimensions { N: 1, K: 4, C: 4, R: 1, S: 1, Y: 1, X: 1 }\n"
              "    Dataflow {\n      TemporalMap(4,4) K;\n      TemporalMap(4,4) C;\n    }\n  }\n}\n")
    results = []
    for name, text in (("alone.yaml", alone), ("with_l2.yaml", with_l2), ("fc.m", m_file)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        out = tmp_path / f"{name}.json"
        done = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--mapping", str(tmp_path / name),
                                         "--json", str(out), "--no-progress"])
        assert done.exit_code == 0, done.output
        row = json.loads(out.read_text())[0]
        results.append({k: v for k, v in row.items() if k not in ("wall_seconds", "provenance")})
    assert results[0]["macs"] == 16 and results[0]["steps"] == 1
    assert results[0] == results[1] == results[2]
