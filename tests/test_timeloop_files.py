"""Timeloop's own files (``--timeloop``): the reader on the kept real triples
(validation/timeloop/real/, provenance in its PROVENANCE.csv), the forms Timeloop accepts, the
problem shapes, hand-derived counts, and the CLI."""

from __future__ import annotations

import csv
import json
import sys
import warnings
from math import prod
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from accelsim.analytical.model import analyze_layer
from accelsim.cli import main
from accelsim.errors import InputError
from accelsim.mapping.jobs import jobs_from_loopnest, prepare
from accelsim.mapping.timeloop_arch import read_architecture
from accelsim.mapping.timeloop_files import _factors, _permutation, load_timeloop, read_files, timeloop_job
from accelsim.mapping.timeloop_problem import read_problem

REAL = Path(__file__).resolve().parent.parent / "validation" / "timeloop" / "real"
CASES = sorted(p.name for p in REAL.iterdir() if p.is_dir())


def _files(case: str) -> list[str]:
    return [str(REAL / case / f"{role}.yaml") for role in ("architecture", "problem", "mapping")]


def _load(case: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_timeloop(_files(case))


def test_every_kept_triple_has_provenance():
    """Every kept case names, per file, the repository, commit and path it was copied from."""
    with open(REAL / "PROVENANCE.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["case"] for r in rows} == set(CASES)
    assert all(len(r["commit"]) == 40 and r["repo"] and r["path"] for r in rows)
    assert all((REAL / r["file"]).is_file() for r in rows)


def test_real_triples_run_as_written():
    """Each kept triple is read and compiled as written; the ones that do not run end in one
    InputError saying why (never an internal error). 71 of the 74 run; the 3 others: 2
    architectures that are Jinja templates, and a sparse design whose spatial factors exceed the
    fanout accelsim counts."""
    ran, refused = [], []
    for case in CASES:
        try:
            t = _load(case)
            prepare(t.jobs[0], t.hw)
            ran.append(case)
        except InputError as exc:
            refused.append((case, str(exc)))
    assert len(ran) >= 71, refused
    reasons = ("Jinja template", "need 512 instances")
    assert all(any(r in why for r in reasons) for _, why in refused), refused


def _timeloop_cycles(case: str) -> int:
    """Timeloop's cycles when no bandwidth limits: the product of every temporal factor (one
    MAC per PE per cycle), read from the mapping file directly."""
    import yaml

    text = (REAL / case / "mapping.yaml").read_text()
    mapping = yaml.safe_load(text)["mapping"]
    dims = read_problem(yaml.safe_load((REAL / case / "problem.yaml").read_text())["problem"], "p").extents
    total = 1
    for e in mapping:
        if e.get("type", "temporal") == "temporal":
            total *= prod(_factors(e.get("factors"), list(dims), dims, "t", "t").values())
    return total


@pytest.mark.parametrize("case", ["ex2024-03-model-conv1d_oc-3level-conv1d_oc-3level",
                                  "ex2024-04-model-conv1d_oc-3levelspatial-conv1d_oc_ic-3levelspatial-kp-ws",
                                  "ex2022-04-model-conv1d_oc-3levelspatial-conv1d_oc_ic-3levelspatial-cp-ws",
                                  "ex2024-design-eyeriss_like-mapper",
                                  "ex2024-design-simple_output_stationary-mapper",
                                  "ex2024-design-simple_weight_stationary-mapper"])
def test_maestro_mode_cycles_within_one_percent_of_timeloops(case):
    """Where no level limits bandwidth, Timeloop's cycles are the product of the temporal
    factors; the analytical model in maestro mode (which agrees with the simulator's maestro
    mode) is within 1% of it (its extra cycles are the first fill and last drain, a few cycles:
    on layers of a few dozen MACs, such as Timeloop's unit test of 48, they are more than 1%)."""
    t = _load(case)
    cm = prepare(t.jobs[0], t.hw)
    cycles = analyze_layer(cm, t.hw, "maestro").cycles
    expected = _timeloop_cycles(case)
    assert expected <= cycles <= expected * 1.01


def test_three_level_counts_by_hand():
    """conv1d_oc (K=32, R=3, P=16) on MainMemory -> GlobalBuffer -> RegisterFile, one MAC;
    DRAM loops all 1, GlobalBuffer P16 K16, RegisterFile R3 K2. DRAM holds nothing twice: it
    reads each weight once (K x R = 96), each input once (P + R - 1 = 18) and writes each output
    once (K x P = 512), as timeloop-model counts them; L1 (the register file) reads a weight and
    an input per MAC (1,536 each)."""
    t = _load("ex2024-03-model-conv1d_oc-3level-conv1d_oc-3level")
    cm = prepare(t.jobs[0], t.hw)
    acc = analyze_layer(cm, t.hw, "maestro").accesses
    assert (acc["weight"].dram_read, acc["input"].dram_read, acc["output"].dram_write) == (96, 18, 512)
    assert acc["weight"].l1_read == acc["input"].l1_read == 32 * 3 * 16


def test_factor_forms():
    """R=3, R3, R 3, comma lists, YAML lists and mappings read alike; 0 is the whole dimension."""
    dims = {"R": 3, "P": 16, "K": 4}
    want = {"R": 3, "P": 16}
    for raw in ("R=3 P=16", "R3 P16", "R 3 P 16", "R=3, P=16", ["R=3", "P=16"], {"R": 3, "P": 16}, "R=0 P=16"):
        assert _factors(raw, list(dims), dims, "e", "f") == want, raw
    with pytest.raises(InputError, match="dimension X is not in the problem"):
        _factors("X=2", list(dims), dims, "e", "f")
    with pytest.raises(InputError, match="residual"):
        _factors("P=5,1", list(dims), dims, "e", "f")


def test_permutation_whitespace_ignored():
    dims = list("CMRSNPQ")
    assert _permutation("RSP CMNQ", dims, "e", "f") == list("RSPCMNQ")
    assert _permutation(["R", "S"], dims, "e", "f") == ["R", "S"]


def test_problem_shapes():
    """conv1d (R, P), a matrix multiply (Z[m][n] = A[m][k] B[k][n]: m -> N, k -> C, n -> K) and
    a CNN layer named with K for output channels all become CONV2D layers."""
    conv1d = read_problem({"shape": {"name": "c", "dimensions": ["R", "P"], "data_spaces": [
        {"name": "Weights", "projection": [[["R"]]]}, {"name": "Inputs", "projection": [[["R"], ["P"]]]},
        {"name": "Outputs", "projection": [[["P"]]], "read_write": True}]}, "instance": {"R": 3, "P": 16}}, "p")
    assert (conv1d.layer.sizes["R"], conv1d.layer.sizes["Y"], conv1d.rename["P"]) == (3, 18, "Y'")
    mm = read_problem({"shape": {"name": "mm", "dimensions": ["M", "N", "K"], "data_spaces": [
        {"name": "A", "projection": [[["M"]], [["K"]]]}, {"name": "B", "projection": [[["K"]], [["N"]]]},
        {"name": "Z", "projection": [[["M"]], [["N"]]], "read_write": True}]},
        "instance": {"M": 8, "N": 4, "K": 16}}, "p")
    assert mm.rename == {"M": "N", "K": "C", "N": "K"} and mm.layer.macs == 8 * 4 * 16
    with pytest.warns(UserWarning, match="densities are read as dense"):
        cnn = read_problem({"instance": {"C": 4, "M": 8, "P": 5, "Q": 5, "R": 3, "S": 3, "densities": {}}}, "p")
    assert cnn.rename["M"] == "K" and cnn.layer.sizes["Y"] == 7


def test_architecture_forms_agree():
    """The 2024 form (!Container/!Component) and the 2020-2023 tree of the same design give the
    same levels and instance counts."""
    import yaml

    from accelsim.input_files import load_yaml

    new = load_yaml((REAL / "ex2024-04-model-conv1d_oc-3levelspatial-conv1d_oc_ic-3levelspatial-kp-ws"
                     / "architecture.yaml").read_text(), "a", local_tags=True).data["architecture"]
    old = yaml.safe_load((REAL / "ex2022-04-model-conv1d_oc-3levelspatial-conv1d_oc_ic-3levelspatial-kp-ws"
                          / "architecture.yaml").read_text())["architecture"]
    a, b = read_architecture(new, "a"), read_architecture(old, "b")
    assert [(lv.name, lv.instances) for lv in a.levels] == [(lv.name, lv.instances) for lv in b.levels] == [
        ("MainMemory", 1), ("GlobalBuffer", 1), ("RegisterFile", 16)]
    assert a.macs == b.macs == 16


def test_one_level_loopnest_mapping(tmp_path):
    """A loop-nest mapping of one L1 entry (no spatial or L2 entry) is one PE computing the whole
    layer in one step (it used to end in an internal IndexError): 2 x 2 x 2 x 2 = 16 MACs."""
    path = tmp_path / "one.yaml"
    path.write_text("problem: {name: tiny, type: CONV2D, K: 2, C: 2, R: 1, S: 1, Y: 2, X: 2}\n"
                    "mapping:\n  - {target: L1, type: temporal, factors: K=2 C=2 Y'=2 X'=2}\n")
    _, jobs = jobs_from_loopnest(path, 168)
    from accelsim.hw.loader import load_hardware

    cm = prepare(jobs[0], load_hardware("eyeriss_like"))
    assert cm.steps == 1 and cm.layer.macs == 16


def test_cli_simulate_and_refusals(tmp_path):
    case = "ex2024-03-model-conv1d_oc-3level-conv1d_oc-3level"
    args = [a for f in _files(case) for a in ("--timeloop", f)]
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["simulate", *args, "--mode", "maestro", "--json", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    row = json.loads(out.read_text())[0]
    assert row["macs"] == 1536 and {i["role"] for i in row["provenance"]["inputs"]} == {"timeloop"}
    res = CliRunner().invoke(main, ["analyze", *args])
    assert res.exit_code == 0, res.output
    cfg = tmp_path / "arch.cfg"
    cfg.write_text("arch = {};\n")
    res = CliRunner().invoke(main, ["simulate", "--timeloop", str(cfg)])
    assert res.exit_code == 2 and "libconfig (.cfg) files are not read" in res.output
    res = CliRunner().invoke(main, ["simulate", "--timeloop", _files(case)[0], "--timeloop", _files(case)[1]])
    assert res.exit_code == 2 and "no 'mapping'" in res.output


# ----- accelsim mapping --format timeloop ------------------------------------------------------
def _style_mappings(hw_name: str):
    from accelsim.hw.loader import load_hardware
    from accelsim.mapping.compile import compile_mapping
    from accelsim.mapping.jobs import jobs_from_network
    from accelsim.mapping.styles import STYLES

    hw = load_hardware(hw_name)
    for style in sorted(STYLES):
        _, jobs = jobs_from_network("marvel15", style, hw)
        for job in jobs:
            yield hw, compile_mapping(job.layer, job.dataflow, hw.num_pes, source=job.source)


def _round_trip(hw_names: list[str], simulated: int) -> int:
    """Write every style mapping of MARVEL's 15 layers on ``hw_names`` as Timeloop's files (or
    see it refused with reason ``no_timeloop_equivalent``; the writer checks each written one's
    schedule read back); the first ``simulated`` written, read back with --timeloop on the same
    hardware, simulate to the same result, every field. Returns how many were written."""
    import dataclasses

    from accelsim.errors import MappingError
    from accelsim.mapping.timeloop_files import timeloop_job
    from accelsim.mapping.timeloop_writer import write_timeloop
    from accelsim.sim.engine import SimOptions, simulate_layer

    written = 0
    for hw, cm in [pair for name in hw_names for pair in _style_mappings(name)]:
        try:
            text = write_timeloop(cm, hw)
        except MappingError as exc:
            assert exc.reason == "no_timeloop_equivalent", exc
            continue
        written += 1
        if written > simulated:
            continue
        back = timeloop_job([(text, "t.yaml")], hw_ref=hw).jobs[0]
        before = simulate_layer(cm, hw, SimOptions(mode="maestro"))
        after = simulate_layer(prepare(back, hw), hw, SimOptions(mode="maestro"))
        assert dataclasses.replace(after, wall_seconds=0, layer=before.layer, op=before.op) == \
            dataclasses.replace(before, wall_seconds=0), cm.layer.name
    return written


def test_timeloop_writer_round_trip():
    """The 75 style mappings on eyeriss_like: 9 written, 3 simulated back (see _round_trip)."""
    assert _round_trip(["eyeriss_like"], 3) == 9


@pytest.mark.slow
def test_timeloop_writer_round_trip_two_presets():
    """The 150 style mappings on eyeriss_like and flash_edge: 30 written, all simulated back."""
    assert _round_trip(["eyeriss_like", "flash_edge"], 30) == 30


def test_cli_mapping_format_timeloop(tmp_path):
    """The written file is what --timeloop reads: the example loop nest on eyeriss_like, written
    and read back on the same hardware, reports the same cycles."""
    out = tmp_path / "tl.yaml"
    res = CliRunner().invoke(main, ["mapping", "--hw", "eyeriss_like", "--mapping", "examples/timeloop_style.yaml",
                                    "--format", "timeloop", "-o", str(out)])
    assert res.exit_code == 0, res.output
    runs = []
    for args in (["--mapping", "examples/timeloop_style.yaml"], ["--timeloop", str(out)]):
        res = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", *args, "--json", str(tmp_path / "r.json"),
                                        "--force"])
        assert res.exit_code == 0, res.output
        runs.append(json.loads((tmp_path / "r.json").read_text())[0]["cycles"])
    assert runs[0] == runs[1]
    res = CliRunner().invoke(main, ["mapping", "--hw", "eyeriss_like", "--network", "marvel15", "--style",
                                    "eyeriss_like", "--format", "timeloop"])
    assert res.exit_code == 2 and "writes one layer" in res.output


# ----- against timeloop-model v3.0.3 (validation/timeloop/references.csv, accesses.csv) ----------
def _vs_timeloop():
    module = _vs_timeloop_module()
    return [module.compare(row) for row in module.dense_rows()]


def _vs_timeloop_module():
    import importlib.util

    path = REAL.parent / "accelsim_vs_timeloop.py"
    spec = importlib.util.spec_from_file_location("accelsim_vs_timeloop", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_levels_inside_the_pe_against_timeloop_model():
    """The six dense triples whose PE has several levels (Eyeriss-like four times: ifmap_spad =
    L1, weights_spad and psum_spad register files; simple output- and weight-stationary: pe_spad
    = L1, one-word weight, input and output registers), each level's counts beside
    timeloop-model's (``pe_level_references.csv``, rewritten identically from the files):

    - operand reads equal on all 13 operand rows (the MACs' reads at the innermost level
      keeping the operand, and pe_spad's weight reads by weight_reg);
    - operand fills (accelsim's writes) equal on all 13: ifmap_spad's input fills (4),
      input_activation_reg's (2), weight_reg's (2), pe_spad's weight fills and weights_spad's
      (4), which holds a step's weights whole (its loops R K, or R C K, are every loop of the
      PE indexing weights) and keeps them across steps, as Timeloop does, while the steps'
      loops do not change them (the per-step bound, refilling it at every step, would be one
      fill per MAC: 10,838,016 against Timeloop's 193,536 on Eyeriss-like);
    - at the innermost level keeping outputs (6 rows) Timeloop's updates are the MACs, and
      accelsim's output fills (its writes less the MACs' updates) are Timeloop's fills plus the
      updates Timeloop does without a read (the first partial sum of an output, which Timeloop
      starts at zero and accelsim reads from the level above);
    - at L1 keeping outputs (output-stationary's pe_spad) accelsim's writes, the register's
      write-backs, equal Timeloop's updates."""
    module = _vs_timeloop_module()
    rows = {r["triple_id"]: r for r in module.dense_rows()}
    several = ("ex2024_06_mapper_eyeriss_vgg02_l5", "ex2024_tla_eyeriss_intmac", "ex2024_tla_eyeriss_fpmac",
               "design2024_eyeriss_like", "design2024_simple_output_stationary",
               "design2024_simple_weight_stationary")
    got = [c for t in several for c in module.pe_levels(rows[t])]
    with open(REAL.parent / "pe_level_references.csv", newline="") as fh:
        kept = list(csv.DictReader(fh))
    assert [{k: str(v) for k, v in vars(c).items()} for c in got] == kept
    macs = {t: next(c.timeloop_reads for c in got if c.triple_id == t and c.tensor == "input" and
                    c.level in ("ifmap_spad", "input_activation_reg")) for t in several}
    operands = [c for c in got if c.tensor != "output"]
    assert len(operands) == 13 and all(c.accelsim_reads == c.timeloop_reads for c in operands)
    assert all(c.accelsim_writes == c.timeloop_fills for c in operands)
    innermost = [c for c in got if c.tensor == "output" and c.role == "register file"]
    assert len(innermost) == 6
    for c in innermost:
        assert c.timeloop_updates == macs[c.triple_id]
        first_partial_sums = c.timeloop_updates - c.timeloop_reads
        assert c.accelsim_writes - macs[c.triple_id] == c.timeloop_fills + first_partial_sums, c
    (l1_out,) = [c for c in got if c.tensor == "output" and c.role == "L1"]
    assert l1_out.accelsim_writes == l1_out.timeloop_updates


def test_against_timeloop_model():
    """The 33 dense triples timeloop-model ran, read with --timeloop as a user has them: all run.
    Cycles (analytical model, maestro mode): Timeloop's, which are its compute cycles (no level
    limits bandwidth), plus at most 4 (accelsim's first fill and last drain) wherever Timeloop has
    more than one level, so within 1% from 400 cycles up. DRAM counts (weight, input and output
    reads, output updates against accelsim's writes) equal timeloop-model's on every triple with
    more than one level where no level bypasses a tensor (19), and on 4 of the 10 where one does;
    the others differ as the README's convention table says (a bypassed tensor; a single level
    feeding the MACs, where Timeloop counts every MAC's access). At the global buffer, four events
    are equal on 7 of the 8 triples with one under DRAM, storage inside the PE and no bypass; the
    eighth (simple weight-stationary) keeps partial sums in a one-word register inside the PE,
    so they go back to Timeloop's global buffer three times as often as to accelsim's L2, whose PE
    holds the PE levels' tiles together."""
    rows = _vs_timeloop()
    assert len(rows) == 33 and all(c.accelsim_status == "ok" for c in rows), [c for c in rows
                                                                             if c.accelsim_status != "ok"]
    for c in rows:
        if not c.single_level:
            assert 0 <= c.accelsim_cycles - c.timeloop_cycles <= 4, c
        if c.timeloop_cycles >= 400:
            assert c.accelsim_cycles <= 1.01 * c.timeloop_cycles, c

    def same(c) -> bool:
        return (c.timeloop_dram_weight_reads, c.timeloop_dram_input_reads, c.timeloop_dram_output_reads,
                c.timeloop_dram_output_updates) == (c.accelsim_dram_weight_reads, c.accelsim_dram_input_reads,
                                                    c.accelsim_dram_output_reads, c.accelsim_dram_output_writes)

    plain = [c for c in rows if not c.bypass_warned and not c.l2_bypassed and not c.single_level]
    assert len(plain) == 19 and all(same(c) for c in plain), [c for c in plain if not same(c)]
    assert sum(same(c) for c in rows) == 23
    # the global buffer's bypass entries are accelsim's l2.keeps: the bypassed weights are never
    # read from or written to L2, as in Timeloop's counts, and their DRAM reads are the PEs'
    # fills, equal to Timeloop's except on simba_like, whose PE weight buffer keeps its tile
    # across the global buffer's and DRAM's loops where accelsim's L1 keeps one step's tile
    bypassing = [c for c in rows if c.l2_bypassed]
    assert [c.l2_bypassed for c in bypassing] == ["weight"] * 5
    for c in bypassing:
        assert (c.timeloop_l2_weight_reads, c.timeloop_l2_weight_fills) == (
            c.accelsim_l2_weight_reads, c.accelsim_l2_weight_writes) == (0, 0), c
    assert [c.triple_id for c in bypassing if c.timeloop_dram_weight_reads != c.accelsim_dram_weight_reads] == [
        "design2024_simba_like"]
    with_l2 = [c for c in plain if c.pe_levels and c.timeloop_l2_weight_reads >= 0]
    assert len(with_l2) == 8
    for c in with_l2:
        timeloop = (c.timeloop_l2_weight_reads, c.timeloop_l2_weight_fills, c.timeloop_l2_input_fills,
                    c.timeloop_l2_output_updates_and_fills)
        ours = (c.accelsim_l2_weight_reads, c.accelsim_l2_weight_writes, c.accelsim_l2_input_writes,
                c.accelsim_l2_output_writes)
        if c.triple_id == "design2024_simple_weight_stationary":
            assert timeloop[:3] == ours[:3] and timeloop[3] == 3 * ours[3], c
        else:
            assert timeloop == ours, c


def test_timeloop_levels_as_data():
    """Eyeriss-like (2024 example design): of its three per-PE scratchpads the outermost
    (ifmap_spad) becomes L1 and the two inside it register files, the global buffer L2, DRAM
    DRAM; each level's kept tensors follow the mapping's keep/bypass entries (weights_spad keeps
    only Weights; shared_glb bypasses Weights)."""
    t = _load("ex2024-design-eyeriss_like-mapper")
    assert t.roles == {"DRAM": "DRAM", "shared_glb": "L2", "ifmap_spad": "L1", "weights_spad": "register file",
                       "psum_spad": "register file"}
    by_name = {lv.name: lv for lv in t.levels}
    assert [lv.name for lv in t.levels][-1] == "DRAM" and by_name["DRAM"].kind == "dram"
    assert by_name["weights_spad"].keeps == ("weight",) and by_name["weights_spad"].instances == "per_pe"
    assert by_name["shared_glb"].keeps == ("input", "output") and by_name["shared_glb"].instances == "shared"


def test_search_on_timeloop_files(tmp_path):
    """search --timeloop takes the problem's layer and the architecture's hardware (no mapping
    needed): Eyeriss-like's 168 PEs and the CNN layer of 10,838,016 MACs."""
    case = REAL / "ex2024-design-eyeriss_like-mapper"
    res = CliRunner().invoke(main, ["search", "--timeloop", str(case / "architecture.yaml"), "--timeloop",
                                    str(case / "problem.yaml"), "--budget", "5", "--no-style-seeds",
                                    "--out", str(tmp_path / "s"), "--no-progress"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert summary["hw"] == "system" and summary["settings"]["timeloop"][1].endswith("problem.yaml")
    res = CliRunner().invoke(main, ["search", "--out", str(tmp_path / "t"), "--network", "marvel15"])
    assert res.exit_code == 2 and "missing option --hw" in res.output


@pytest.mark.parametrize("case", ["ex2024-03-model-conv1d_oc-3level-conv1d_oc-3level",
                                  "ex2022-04-model-conv1d_oc-3levelspatial-conv1d_oc_ic-3levelspatial-kp-ws",
                                  "ex2024-design-eyeriss_like-mapper",
                                  "ex2024-design-simple_weight_stationary-mapper"])
def test_simulator_agrees_with_analytical_model_on_timeloop_files(case):
    """Differential: the simulator in maestro mode and the analytical model give the same cycles
    and the same accesses on Timeloop's files (the figures compared with timeloop-model),
    the register files' included (Eyeriss-like, simple weight-stationary)."""
    from accelsim.sim.engine import SimOptions, simulate_layer

    t = _load(case)
    cm = prepare(t.jobs[0], t.hw)
    a, s = analyze_layer(cm, t.hw, "maestro"), simulate_layer(cm, t.hw, SimOptions(mode="maestro"))
    assert (a.cycles, a.accesses) == (s.cycles, s.accesses)
    assert (a.inner_accesses, a.inner_loops) == (s.inner_accesses, s.inner_loops)
    assert bool(a.inner_loops) == ("design" in case)


def test_register_file_smaller_than_its_pinned_tile_grows(tmp_path):
    """Eyeriss-like with psum_spad cut to 4 words (8 B): the mapping pins K8 there, 8 outputs of 2
    bytes, so it is sized to 16 B with one warning naming it (as L1 grows to the PE's tile); its
    counts are those of the 32 B original. weights_spad (192 rows of 16 bits, 8-bit words: 384
    words) holds 384 of accelsim's 2-byte words, 768 B."""
    case = REAL / "ex2024-design-eyeriss_like-mapper"
    text = (case / "architecture.yaml").read_text()
    cut = text.replace("name: psum_spad\n      class: smartbuffer_RF\n      attributes:\n        depth: 16",
                       "name: psum_spad\n      class: smartbuffer_RF\n      attributes:\n        depth: 4")
    assert cut != text
    (tmp_path / "architecture.yaml").write_text(cut)
    files = [str(tmp_path / "architecture.yaml"), str(case / "problem.yaml"), str(case / "mapping.yaml")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = load_timeloop(files)
    assert any("psum_spad from 8 to 16 bytes" in str(w.message) for w in caught)
    full = _load("ex2024-design-eyeriss_like-mapper")
    assert {lv.name: lv.size_bytes for lv in t.hw.inner_levels} == {"psum_spad": 16, "weights_spad": 768}
    assert {lv.name: lv.size_bytes for lv in full.hw.inner_levels} == {"psum_spad": 32, "weights_spad": 768}
    a, b = (analyze_layer(prepare(x.jobs[0], x.hw), x.hw, "maestro") for x in (t, full))
    assert a.inner_accesses == b.inner_accesses and a.inner_loops == b.inner_loops == {"psum_spad": ["K"],
                                                                                          "weights_spad": ["R", "K"]}


def test_pe_levels_become_register_files_with_pinned_loops():
    """Simple weight-stationary (2024 example design, the mapper's mapping): of pe_spad (384 B,
    keeps weights), weight_reg, input_activation_reg and output_activation_reg (one 16-bit word
    each) pe_spad is L1 and the registers are register files, innermost first, each keeping its
    one tensor. The mapping's loops (Timeloop's P Q are accelsim's Y' X') are pinned: weight_reg
    holds P28 Q4 (permutation QP: Q innermost), pe_spad's own loops are R3 Q2 P2 (outermost
    first), the registers below weight_reg hold none, so a PE's step box Y'56 X'8 R3 splits Y'
    and X'. Without the mapping (search) the levels are summed into L1 as before: 384 + 3 x 2
    bytes."""
    from accelsim.mapping.compile import InnerPins, PinnedLevel, PinnedLoop

    t = _load("ex2024-design-simple_weight_stationary-mapper")
    assert [(lv.name, lv.size_bytes, lv.keeps) for lv in t.hw.inner_levels] == [
        ("output_activation_reg", 2, ("output",)), ("input_activation_reg", 2, ("input",)),
        ("weight_reg", 2, ("weight",))]
    assert t.roles["pe_spad"] == "L1" and t.roles["weight_reg"] == "register file"
    assert t.jobs[0].inner_pins == InnerPins(
        (PinnedLoop("R", 3), PinnedLoop("X'", 2), PinnedLoop("Y'", 2)),
        (PinnedLevel("output_activation_reg", ()), PinnedLevel("input_activation_reg", ()),
         PinnedLevel("weight_reg", (PinnedLoop("Y'", 28), PinnedLoop("X'", 4)))))
    case = REAL / "ex2024-design-simple_weight_stationary-mapper"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unmapped = timeloop_job(read_files([str(case / "architecture.yaml"), str(case / "problem.yaml")]),
                                mapping_used=False)
    assert not unmapped.hw.inner_levels and unmapped.hw.l1.size_bytes == 384 + 3 * 2
    assert "register file" not in unmapped.roles.values()


@given(st.dictionaries(st.sampled_from(list("CMRSNPQ")), st.integers(1, 999), max_size=7),
       st.sampled_from(["{d}={f}", "{d}{f}", "{d} {f}", "{d} = {f}"]), st.sampled_from([" ", ", ", ",", "  "]),
       st.booleans())
def test_factor_forms_property(factors, word, sep, as_list):
    """Any mix of Timeloop's factor spellings reads back the factors written."""
    dims = {d: 10**6 for d in "CMRSNPQ"}
    words = [word.format(d=d, f=f) for d, f in factors.items()]
    raw = words if as_list else sep.join(words)
    assert _factors(raw, list(dims), dims, "e", "f") == factors


def test_cli_hardware_timeloop(tmp_path):
    """hardware --timeloop prints which Timeloop level became which accelsim level, then the
    spec, which loads back as a hardware file to the same spec."""
    from accelsim.hw.loader import load_hardware

    res = CliRunner().invoke(main, ["hardware", *[a for f in _files("ex2024-03-model-conv1d_oc-3level-conv1d_oc-3level")
                                                  for a in ("--timeloop", f)]])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "#   RegisterFile: per_pe, keeps input, weight, output -> L1" in text
    assert "#   GlobalBuffer: shared, keeps input, weight, output -> L2" in text
    path = tmp_path / "hw.yaml"
    path.write_text(text)
    assert load_hardware(path) == _load("ex2024-03-model-conv1d_oc-3level-conv1d_oc-3level").hw


def test_written_file_is_what_timeloop_model_read(tmp_path):
    """validation/timeloop/written/: timeloop-model v3.0.3 read the file the writer makes for the
    example loop nest on eyeriss_like (128 MACs used, 14,112 cycles: 1,806,336 MACs / 128). The
    writer still writes it byte for byte; read back with --timeloop, accelsim's DRAM weight reads
    (9,216) and output updates (6,272, the 14 x 14 x 32 outputs once) are Timeloop's. (Input reads
    differ, 16,384 against 15,360: Timeloop reads the whole 16 x 16 x 32 input once per filter
    group; accelsim keeps the 2 input rows the last row tile of one group shares with the first
    of the next, 2 x 16 x 32 = 1,024 words fewer.)"""
    written = REAL.parent / "written"
    out = tmp_path / "w.yaml"
    res = CliRunner().invoke(main, ["mapping", "--hw", "eyeriss_like", "--mapping", "examples/timeloop_style.yaml",
                                    "--format", "timeloop", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text() == (written / "conv3x3_eyeriss_like.yaml").read_text()
    with open(written / "timeloop_model_stats.csv", newline="") as fh:
        stats = {(r["level"], r["tensor"]): r for r in csv.DictReader(fh) if r["file"] == "conv3x3_eyeriss_like.yaml"}
    t = load_timeloop([str(written / "conv3x3_eyeriss_like.yaml")])
    acc = analyze_layer(prepare(t.jobs[0], t.hw), t.hw, "maestro").accesses
    assert int(stats["DRAM", "Weights"]["utilized_macs"]) == t.jobs[0].layer.macs // int(stats["DRAM", "Weights"]["cycles"])
    assert (acc["weight"].dram_read, acc["output"].dram_write) == (int(stats["DRAM", "Weights"]["reads"]),
                                                                    int(stats["DRAM", "Outputs"]["updates"]))


def test_written_register_files_against_timeloop_model(tmp_path):
    """validation/timeloop/written/: timeloop-model v3.0.3 read the file the writer makes for
    examples/register_file_pins.yaml on interstellar_rf2 (RF16 inside each of 256 PEs holding
    C=2; L1, Timeloop's RegisterFile, R=3 S=3). The writer still writes it byte for byte; read
    back with --timeloop on interstellar_rf2 (the file's RF16 loops pin its register file),
    every operand count at every level is Timeloop's (totals over the instances): reads equal
    Timeloop's reads and writes its fills at RF16, L1 and L2, DRAM reads its reads; DRAM output
    writes are its updates (8,192 = 32 x 16 x 16 outputs once). RF16's output writes are
    Timeloop's updates (one per MAC) plus its fills plus the 8,192 partial sums Timeloop starts
    at zero instead of filling (accelsim fills every output word a box touches: 131,072 boxes of
    one output word each, 122,880 + 8,192)."""
    written = REAL.parent / "written"
    out = tmp_path / "w.yaml"
    res = CliRunner().invoke(main, ["mapping", "--hw", "interstellar_rf2", "--mapping",
                                    "examples/register_file_pins.yaml", "--format", "timeloop", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text() == (written / "conv3x3_interstellar_rf2.yaml").read_text()
    with open(written / "timeloop_model_stats.csv", newline="") as fh:
        stats = {(r["level"], r["tensor"]): {k: int(v) for k, v in r.items() if k not in ("file", "level", "tensor")}
                 for r in csv.DictReader(fh) if r["file"] == "conv3x3_interstellar_rf2.yaml"}
    t = load_timeloop([str(written / "conv3x3_interstellar_rf2.yaml")], hw_ref="interstellar_rf2")
    cm = prepare(t.jobs[0], t.hw)
    ours = analyze_layer(cm, t.hw, "maestro").level_accesses()
    names = {"RF16": "RF16", "RegisterFile": "L1", "GlobalBuffer": "L2"}
    tensors = {"Weights": "weight", "Inputs": "input"}
    for (level, tensor), row in stats.items():
        if level in names and tensor in tensors:
            assert ours[names[level]][tensors[tensor]] == {"read": row["reads"], "write": row["fills"]}, (level, tensor)
    assert ours["DRAM"]["weight"]["read"] == stats["DRAM", "Weights"]["reads"]
    assert ours["DRAM"]["input"]["read"] == stats["DRAM", "Inputs"]["reads"]
    outputs = 32 * 16 * 16
    assert ours["DRAM"]["output"]["write"] == stats["DRAM", "Outputs"]["updates"] == outputs
    rf = stats["RF16", "Outputs"]
    assert ours["RF16"]["output"]["write"] == rf["updates"] + rf["fills"] + outputs


def _written_and_read_back(hw_name: str, mapping: str):
    """The example ``mapping`` on ``hw_name`` written as Timeloop's files: the text, the original
    and read-back (on the same hardware) jobs' pins, and both simulated in maestro mode."""
    import dataclasses

    from accelsim.hw.loader import load_hardware
    from accelsim.mapping.timeloop_writer import write_timeloop
    from accelsim.sim.engine import SimOptions, simulate_layer

    hw = load_hardware(hw_name)
    job = jobs_from_loopnest(mapping, hw.num_pes)[1][0]
    cm = prepare(job, hw)
    text = write_timeloop(cm, hw)
    back = timeloop_job([(text, "t.yaml")], hw_ref=hw).jobs[0]
    before = simulate_layer(cm, hw, SimOptions(mode="maestro"))
    after = simulate_layer(prepare(back, hw), hw, SimOptions(mode="maestro"))
    after = dataclasses.replace(after, layer=before.layer, op=before.op, wall_seconds=before.wall_seconds)
    return text, (job.inner_pins, back.inner_pins), before, after


def test_timeloop_writer_register_files():
    """interstellar_rf2 (RF16 of 16 B inside each PE, L1 of 128 B, 2-byte words) with the
    example that pins C=2 to RF16 and R=3 S=3 to L1 (conv 32x32, 16x16 outputs, 3x3): the
    written PE holds RegisterFile (64 words) then RF16 (16 B / 2 B = 8 words), RF16's entry is
    ``C=2`` and L1's ``R=3 S=3`` (permutation SR: R outermost), no bypass entry (RF16 keeps
    every tensor). Read back with the reader on the same hardware, the job pins the same loops
    and simulates to the same result, every field (cycles, level_accesses per tensor per level).
    By hand: 512 steps (M2 x C16 x Q16) x 256 PEs = 131072 boxes of 2*3*3 = 18 MACs; RF16 holds
    one output word per box, so its output reads are one per MAC plus one per box."""
    text, (pins, back_pins), before, after = _written_and_read_back("interstellar_rf2",
                                                                    "examples/register_file_pins.yaml")
    assert back_pins == pins
    doc = yaml.safe_load(text)
    pe = doc["architecture"]["subtree"][0]["subtree"][0]["subtree"][0]
    assert [c["name"] for c in pe["local"]] == ["RegisterFile", "RF16", "MACC"]
    assert pe["local"][1]["attributes"]["depth"] == 8
    entries = {(e["target"], e["type"]): e for e in doc["mapping"]}
    assert entries[("RF16", "temporal")]["factors"] == "C=2 M=1 R=1 S=1 N=1 P=1 Q=1"
    assert entries[("RegisterFile", "temporal")]["factors"] == "C=1 M=1 R=3 S=3 N=1 P=1 Q=1"
    assert entries[("RegisterFile", "temporal")]["permutation"].startswith("SR")
    assert not any(e["type"] == "bypass" for e in doc["mapping"])
    assert after == before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L1 and L2 sized to the mapping's tiles
        own = timeloop_job([(text, "t.yaml")]).hw
    assert [(lv.name, lv.size_bytes, lv.keeps) for lv in own.inner_levels] == [
        ("RF16", 16, ("input", "weight", "output"))]
    macs = 32 * 32 * 16 * 16 * 9
    assert before.macs == macs
    assert before.level_accesses()["RF16"]["output"]["read"] == macs + macs // 18


def test_timeloop_writer_register_files_default_rule():
    """interstellar_rf2 without pins (the example Timeloop-style nest: a PE's tile R=3 S=3):
    the writer writes the default rule's loops for RF16 (the 3 words of one window row, S=3,
    fit its 8 words; R=3 S=3 needs 9 words per tensor) and reading them back pins exactly those,
    so the simulated result is the same."""
    text, (pins, back_pins), before, after = _written_and_read_back("interstellar_rf2", "examples/timeloop_style.yaml")
    assert pins is None and back_pins is not None
    entries = {(e["target"], e["type"]): e for e in yaml.safe_load(text)["mapping"]}
    assert entries[("RF16", "temporal")]["factors"] == "C=1 M=1 R=1 S=3 N=1 P=1 Q=1"
    assert entries[("RegisterFile", "temporal")]["factors"] == "C=1 M=1 R=3 S=1 N=1 P=1 Q=1"
    assert after == before


def test_timeloop_writer_l2_bypass():
    """eyeriss_chip (l2.keeps [input, output]: filters bypass the global buffer): the written
    mapping has a GlobalBuffer bypass entry keeping Inputs and Outputs and bypassing Weights;
    read as the architecture's own design (no --hw), L2 keeps the same two tensors; read back on
    eyeriss_chip, the same simulated result (cycles and level_accesses)."""
    text, _, before, after = _written_and_read_back("eyeriss_chip", "examples/timeloop_style.yaml")
    bypass = [e for e in yaml.safe_load(text)["mapping"] if e["type"] == "bypass"]
    assert bypass == [{"target": "GlobalBuffer", "type": "bypass", "keep": ["Inputs", "Outputs"],
                       "bypass": ["Weights"]}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L1 and L2 sized to the mapping's tiles
        own = timeloop_job([(text, "t.yaml")]).hw
    assert own.l2.keeps == ("input", "output")
    assert after == before
