"""``accelsim compare``'s MAESTRO ladder and ``accelsim lint`` on the MAESTRO reference set
(validation/maestro: MAESTRO's own CSVs)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.compare import compare_jobs
from accelsim.compare.ladder import RUNGS
from accelsim.hw.loader import load_hardware
from accelsim.maestro.lint import lint_job
from accelsim.mapping.jobs import jobs_from_maestro

REFERENCE = Path(__file__).resolve().parents[1] / "validation" / "maestro"
HW_FILES = ("pub_edge64_fastdram", "pub_eyeriss168", "pub_maeri256")
# the reference layers small enough to simulate in the default test run (at most 1e6 PE-steps)
SMALL = {"quirks_public": ("qk_os_s2_y100", "qk_os_s2_y227", "qk_os_s1_y33", "qk_rs_y115"),
         "mobilenetv2_public": ("mb_conv1_s2_rs", "mb_b3_dw_cp", "mb_b4_dw_yxp")}


def _summary() -> dict[tuple[str, str], dict[str, str]]:
    with open(REFERENCE / "summary.csv", newline="") as f:
        return {(r["hw"], r["layer"]): r for r in csv.DictReader(f)}


def _ladders(hw_name: str, mode: str = "maestro", attribute: bool = False):
    hw = load_hardware(REFERENCE / "hw" / f"{hw_name}.hw.m")
    for network, layers in SMALL.items():
        name, jobs = jobs_from_maestro(REFERENCE / "mappings" / f"{network}.m")
        jobs = [j for j in jobs if j.layer.name in layers]
        comp = compare_jobs(name, jobs, hw, mode, ("maestro",), REFERENCE / "results" / hw_name / f"{network}.csv",
                            allow_overflow=True, attribute=attribute)
        yield from comp.layers


@pytest.mark.parametrize("hw_name", HW_FILES)
def test_ladder_parts_sum_to_the_gap(hw_name):
    """Every rung is a computed variant; the parts telescope to simulator - MAESTRO exactly, the
    model reproduces MAESTRO's CSV (first part 0), and the last rung is the simulator."""
    for lc in _ladders(hw_name):
        walk = lc.ladders["maestro-csv"]
        assert [r.name for r in walk.rungs] == list(RUNGS[:7])
        assert sum(r.part for r in walk.rungs) == walk.gap == lc.simulator["cycles"] - lc.sources["maestro-csv"]["cycles"]
        assert walk.rungs[0].part == 0 and walk.rungs[-1].cycles == lc.simulator["cycles"]
        assert lc.ladders["maestro"].parts() == walk.parts()


def test_offchip_floor_carries_the_gap_on_offchip_bound_hardware():
    """pub_eyeriss168 (off-chip 8 words/cycle): over the simulated layers whose every step MAESTRO
    sets by its off-chip floor (summary.csv ``offchip_bound``), the floor rung explains most of
    the summed gap; on the fast-DRAM hardware it explains none."""
    summary = _summary()
    gap = floor = 0
    for lc in _ladders("pub_eyeriss168"):
        if summary[("pub_eyeriss168", lc.layer)]["offchip_bound"] == "1":
            walk = lc.ladders["maestro-csv"]
            gap += walk.gap
            floor += walk.parts()["offchip_floor"]
    assert gap < 0 and floor / gap > 0.5
    assert all(lc.ladders["maestro-csv"].parts()["offchip_floor"] == 0 for lc in _ladders("pub_edge64_fastdram"))


def test_ladder_realistic_mode_json(tmp_path):
    """Realistic mode with attribution: the ablation causes are rungs too, and --json carries
    every rung; the parts still sum to the gap."""
    out = tmp_path / "cmp.json"
    res = CliRunner().invoke(main, [
        "compare", "--hw", str(REFERENCE / "hw" / "pub_maeri256.hw.m"), "--mapping",
        str(REFERENCE / "mappings" / "quirks_public.m"), "--layer", "qk_os_s1_y33", "--maestro-csv",
        str(REFERENCE / "results" / "pub_maeri256" / "quirks_public.csv"), "--json", str(out), "--allow-overflow"])
    assert res.exit_code == 0, res.output
    assert "MAESTRO ladder maestro-csv -> simulator (realistic mode)" in res.output
    walk = json.loads(out.read_text())["layers"][0]["ladders"]["maestro-csv"]
    names = [r["name"] for r in walk["rungs"]]
    assert names[:7] == list(RUNGS[:7]) and names[-1] == "other/interaction"
    assert sum(r["part"] for r in walk["rungs"]) == walk["gap"]
    assert walk["rungs"][-1]["cycles"] - walk["source_cycles"] == walk["gap"]


@pytest.mark.parametrize("hw_name", HW_FILES)
def test_lint_mac_errors_exactly_where_maestro_miscounts(hw_name):
    """Every layer whose MAESTRO MAC count differs from the true one (summary.csv, from MAESTRO's
    CSV) gets a mac_error of exactly that size; the others get none."""
    summary = _summary()
    hw = load_hardware(REFERENCE / "hw" / f"{hw_name}.hw.m")
    flagged = 0
    for network in ("gemm_public", "mobilenetv2_public", "quirks_public", "resnet50_public"):
        _, jobs = jobs_from_maestro(REFERENCE / "mappings" / f"{network}.m")
        for job in jobs:
            row = summary[(hw_name, job.layer.name)]
            errors = [f for f in lint_job(job, hw).findings if f.kind == "mac_error"]
            expected = int(row["maestro_macs"]) - int(row["true_macs"])
            if expected == 0:
                assert not errors, (job.layer.name, errors)
                assert row["quirk_layer"] == "1" or not errors
            else:
                flagged += 1
                assert [f.error for f in errors] == [expected]
                assert row["quirk_layer"] == "1"
    assert flagged == {"pub_eyeriss168": 5, "pub_maeri256": 2, "pub_edge64_fastdram": 2}[hw_name]


def test_lint_count_quirks_where_the_csv_shows_them():
    """Stride-inflated output sizes are flagged at MAESTRO's ``output l2 read`` (strided layers
    only); outputs of a zero-counted edge PE at ``output l2 write``: C = 144 channels on 168 PEs
    (mb_b3_dw_cp) lose one PE's output per step, 3,136 steps."""
    hw = load_hardware(REFERENCE / "hw" / "pub_eyeriss168.hw.m")
    _, jobs = jobs_from_maestro(REFERENCE / "mappings" / "mobilenetv2_public.m")
    found = {job.layer.name: {f.kind: f for f in lint_job(job, hw).findings} for job in jobs}
    strided = {name for name, f in found.items() if "stride_inflated_outputs" in f}
    assert strided == {"mb_conv1_s2_rs", "mb_b2_dw_s2_cp"}
    f = found["mb_conv1_s2_rs"]["stride_inflated_outputs"]
    assert (f.maestro_value, f.true_value) == (32 * 223 * 223, 32 * 112 * 112)
    edge = found["mb_b3_dw_cp"]["zero_counted_edge_pe"]
    assert (edge.maestro_value, edge.true_value) == (448_448, 451_584)
    assert "strided_output_inflation" in found["mb_conv1_s2_rs"]


def test_cli_lint_exit_codes(tmp_path):
    runner = CliRunner()
    gemm = ["--hw", str(REFERENCE / "hw" / "pub_maeri256.hw.m"), "--mapping", str(REFERENCE / "mappings" / "gemm_public.m")]
    clean = runner.invoke(main, ["lint", *gemm])
    assert clean.exit_code == 0, clean.output
    assert "0 finding(s) in 0 of 4 layer(s)" in clean.output
    out = tmp_path / "lint.json"
    dirty = runner.invoke(main, ["lint", "--hw", str(REFERENCE / "hw" / "pub_eyeriss168.hw.m"), "--mapping",
                                 str(REFERENCE / "mappings" / "quirks_public.m"), "--json", str(out)])
    assert dirty.exit_code == 1
    assert "qk_yxp_lossy_xtile: [mac_error] Num MACs 6,193,152, the layer has 7,225,344" in dirty.output
    assert json.loads(out.read_text())["layers"][4]["findings"][0]["error"] == 6_193_152 - 7_225_344
    crlf = tmp_path / "crlf.m"
    crlf.write_bytes((REFERENCE / "mappings" / "gemm_public.m").read_bytes().replace(b"\n", b"\r\n"))
    res = runner.invoke(main, ["lint", "--hw", str(REFERENCE / "hw" / "pub_maeri256.hw.m"), "--mapping", str(crlf)])
    assert res.exit_code == 1 and "file: [crlf] CRLF line endings (first at line 1)" in res.output
    bad = runner.invoke(main, ["lint", "--hw", "no_such_preset", "--mapping", str(crlf)])
    assert bad.exit_code == 2 and bad.output.startswith("error:")


def test_ladder_shares_only_when_the_parts_do_not_cancel():
    """By hand. Source 100 cycles, rungs 80 then 50: parts -20 and -30 of a gap of -50, both with
    the gap's sign, so shares 40% and 60%. Source 100, rungs 60 then 110: parts -40 and +50 of a
    gap of +10 cancel (shares would be -400% and +500%): cycles only, and a line says why. Rungs
    1,000 -> 0 -> 5: parts -1,000 and +5 of -995, +5 is 0.5% of the gap (within 1%): shares
    100.5% and -0.5%. A zero gap has no shares."""
    from accelsim.compare.ladder import Ladder
    from accelsim.compare.report import format_ladder, gap_shares

    assert gap_shares([-20, -30], -50) == [0.4, 0.6]
    assert gap_shares([-40, 50], 10) is None
    assert gap_shares([-1000, 5], -995) == [-1000 / -995, 5 / -995]
    assert gap_shares([0, 0], 0) is None and gap_shares([3, -3], 0) is None

    same = Ladder("maestro-csv", 100)
    same.climb("offchip_floor", 80)
    same.climb("case_arithmetic", 50)
    text = "\n".join(format_ladder(same, "maestro"))
    assert "of gap" in text and "40.0%" in text and "60.0%" in text and "no shares" not in text

    mixed = Ladder("maestro-csv", 100)
    mixed.climb("offchip_floor", 60)
    mixed.climb("case_arithmetic", 110)
    lines = format_ladder(mixed, "maestro")
    assert lines[0].startswith("  cycle gap simulator - maestro-csv = +10, rule by rule")
    assert not any("%" in line for line in lines[:-1])
    assert lines[-1] == ("    no shares of the gap: parts of both signs (+50 and -40) cancel to +10, "
                         "so shares would exceed 100% or be negative")


def test_one_split_per_gap_for_maestro_sources():
    """Realistic mode with attribution on mb_b4_dw_yxp (pub_eyeriss168): the analytical model's gap
    gets the attribution line; MAESTRO's CSV and model get only their ladder (no second split
    of the same gap under the same part names), and their cancelling parts get no percentages:
    offchip_floor -18,576 against case_arithmetic +20,954 and pipeline_fill_drain +1 (the
    ablation, realistic 43,083 - pipeline-ideal 43,082), a gap of 43,083 - 40,704 = +2,379."""
    from accelsim.compare.report import format_layer

    hw = load_hardware(REFERENCE / "hw" / "pub_eyeriss168.hw.m")
    name, jobs = jobs_from_maestro(REFERENCE / "mappings" / "mobilenetv2_public.m")
    jobs = [j for j in jobs if j.layer.name == "mb_b4_dw_yxp"]
    comp = compare_jobs(name, jobs, hw, "realistic", ("analytical", "maestro"),
                        REFERENCE / "results" / "pub_eyeriss168" / "mobilenetv2_public.csv", allow_overflow=True)
    lines = format_layer(comp.layers[0], comp.sources, "realistic")
    gap_lines = [line for line in lines if line.startswith("  cycle gap simulator - ")]
    assert [line.split(" = ")[0][len("  cycle gap simulator - "):] for line in gap_lines] == [
        "analytical", "maestro", "maestro-csv"]
    assert "rule by rule" not in gap_lines[0] and all("rule by rule" in line for line in gap_lines[1:])
    assert lines.count("    no shares of the gap: parts of both signs (+20,955 and -18,576) cancel to +2,379, "
                       "so shares would exceed 100% or be negative") == 2
    assert not any(line.rstrip().endswith("%") for line in lines if line.startswith("    "))
