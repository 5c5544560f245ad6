"""The validation suite (accelsim.validation): FLASH's workload tables, lower bounds, FLASH's
tile-size equations, the runner's row statuses and bound flags, and the report writer."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.hw.loader import load_hardware
from accelsim.results import STALL_CAUSES, TENSORS, LayerResult, TensorAccesses
from accelsim.validation import ValidationPaths, run_validation
from accelsim.validation.report import ReportInputs, write_csv, write_report
from accelsim.bounds import lower_bounds
from accelsim.validation.paper_checks import (flash_maeri_tiled_text, flash_maeri_tiles, gamma_below_compute_bound,
                                              job_from_maestro_text, style_forms)
from accelsim.validation.runner import (COLUMNS, RunPlan, analytical_model, run_scenarios, scenario_rows,
                                        simulator_model)
from accelsim.validation.scenarios import Scenario, ScenarioSet
from accelsim.workload.tables import load_network


# ----- FLASH's workloads -----------------------------------------------------------------------
def test_flash_gemm_table_is_flash_table_3():
    """Table 3 rows M, N, K and its 'GFLOPs' row, which is M x N x K / 1e9 (multiply-adds)
    rounded as printed: 549.8, 8.59, 0.001 (5.2e-4), 0.067, 0.067, 0.03 (0.034)."""
    table3 = {"I": (8192, 8192, 8192, 549.8), "II": (1024, 1024, 8192, 8.59), "III": (8, 8, 8192, 0.001),
              "IV": (8, 8192, 1024, 0.067), "V": (8192, 8, 1024, 0.067), "VI": (512, 256, 256, 0.03)}
    net = load_network("flash_gemm")
    assert [layer.name for layer in net.layers] == list(table3)
    for layer in net.layers:
        m, n, k, gflops = table3[layer.name]
        assert (layer.sizes["M"], layer.sizes["N"], layer.sizes["K"]) == (m, n, k)
        printed_digits = len(str(gflops).split(".")[1])
        assert round(layer.macs / 1e9, printed_digits) == gflops


def test_flash_mlp_is_784_512_256_128_10_at_batch_128():
    net = load_network("flash_mlp")
    shapes = [(layer.sizes["M"], layer.sizes["K"], layer.sizes["N"]) for layer in net.layers]
    assert shapes == [(128, 784, 512), (128, 512, 256), (128, 256, 128), (128, 128, 10)]


# ----- lower bounds and FLASH's tile equations -------------------------------------------------
def test_lower_bounds_of_gemm_vi_on_flash_edge():
    """compute: 512*256*256 MACs / 256 PEs = 131072; off-chip: A 512*256 + B 256*256 + C 512*256
    = 327680 one-byte words over 32 B/cycle = 10240 cycles."""
    bounds = lower_bounds(load_network("flash_gemm").layer("VI"), load_hardware("flash_edge"))
    assert (bounds.compute_cycles, bounds.dram_cycles, bounds.cycles) == (131072, 10240, 131072)


def test_lower_bound_counts_16_bit_words_in_bytes():
    """dmazerunner_16x16 (2-byte words, 26.667 B/cycle), conv5_1 (3x3, stride 2, 7x7 outputs
    from a 16x16 input): 7 outputs at stride 2 touch (7-1)*2+3 = 15 input rows and cols, so the
    compulsory words are input 4*15*15*256 + weights 512*3*3*256 + outputs 4*7*7*512 = 230400
    + 1179648 + 100352 = 1510400 words = 3020800 bytes -> ceil(3020800 / 26.667) = 113279."""
    bounds = lower_bounds(load_network("dmazerunner6").layer("conv5_1"), load_hardware("dmazerunner_16x16"))
    assert bounds.dram_cycles == 113279


def test_flash_tiles_for_workload_vi_on_the_edge_configuration():
    """Eq. 3: sqrt(102400/2 + 256^2) - 256 = 85.7 -> T_M^out = T_K^out = 64 and T_N^out =
    256 * 64 / 256 = 64; Eq. 4: sqrt((512 + 2) / 2) - 1 = 15.0 -> T_M^in = T_N^in = 8."""
    tiles = flash_maeri_tiles(512, 256, 256, 256, 512, 102400)
    assert (tiles.m_out, tiles.k_out, tiles.n_out, tiles.m_in, tiles.n_in) == (64, 64, 64, 8, 8)


def test_flash_tiled_mapping_keeps_every_pe_busy_while_computing():
    """2048 steps (M 8 x K 4 outer, M_in 8 x N_in 8 inner) of 8 x 8 = 64 MACs per PE: 131072
    busy cycles, the compute bound; every operand count is one L1 read per MAC."""
    hw = load_hardware("flash_edge")
    tiles = flash_maeri_tiles(512, 256, 256, 256, 512, 102400)
    job = job_from_maestro_text(flash_maeri_tiled_text("VI", 512, 256, 256, tiles))
    from accelsim.mapping.jobs import prepare

    cm = prepare(job, hw)
    assert cm.steps == 2048
    r = simulator_model(cm, hw, "maestro")
    assert r.compute_busy_cycles == 131072
    assert r.accesses["input"].l1_read == r.accesses["weight"].l1_read == 512 * 256 * 256


# ----- runner ----------------------------------------------------------------------------------
def _fake_model(cycles: int):
    """A stand-in analytical model that answers ``cycles`` and zero for every count."""
    def model(cm, hw, mode):
        zero = {t: TensorAccesses() for t in TENSORS}
        return LayerResult(cm.layer.name, cm.layer.op.value, hw.name, mode, cycles, cm.layer.macs, hw.num_pes,
                           cm.used_pes, 0.0, 0, {c: 0 for c in STALL_CAUSES}, 0.0, {}, zero, 0, 0, 0.0, 0,
                           0, 0, hw.l1.size_bytes, hw.l2.size_bytes, cm.steps, 0)
    return model


@pytest.fixture
def gemm_iii(tmp_path) -> Scenario:
    """FLASH's GEMM III alone, on flash_edge under nvdla_like (32 steps)."""
    net = tmp_path / "gemm_iii.yaml"
    net.write_text("name: gemm_iii\nlayers:\n  - {name: III, type: GEMM, M: 8, N: 8, K: 8192}\n")
    return Scenario("flash_gemm", str(net), "flash_edge", "nvdla_like")


def test_rows_mark_over_budget_layers_and_still_run_the_analytical_model(gemm_iii):
    """GEMM III on flash_edge under nvdla_like has 32 steps x 256 PEs = 8192 PE-steps: with a
    budget of 8191 the simulator rows are over budget and only the (here: fake) analytical model
    runs."""
    rows = scenario_rows(gemm_iii, RunPlan(8191, _fake_model(10**9)))
    assert [(r["model"], r["mode"], r["status"]) for r in rows] == [
        ("simulator", "realistic", "over_budget"), ("simulator", "maestro", "over_budget"),
        ("analytical", "maestro", "ok")]
    assert rows[0]["note"] == "not simulated: 32 steps x 256 PEs = 8,192 > budget 8,191"
    assert rows[2]["cycles"] == 10**9 and rows[2]["below_bound"] is False


def test_estimates_below_a_lower_bound_are_flagged(gemm_iii):
    """An 'analytical' model that answers 1 cycle is below GEMM III's compute bound
    (8*8*8192 / 256 = 2048 cycles); the simulator (budget 8192 PE-steps: it runs) is not."""
    rows = scenario_rows(gemm_iii, RunPlan(8192, _fake_model(1)))
    assert rows[0]["compute_bound_cycles"] == 2048
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert [r["below_bound"] for r in rows] == [False, False, True]


def test_layers_a_style_cannot_map_get_unmappable_rows(tmp_path):
    """maeri_like needs R x S = 169 multipliers for a 13x13 filter; eyeriss_like has 168 PEs."""
    net = tmp_path / "two.yaml"
    net.write_text("name: two\nlayers:\n"
                   "  - {name: big, type: CONV2D, K: 2, C: 1, R: 13, S: 13, Y: 13, X: 13}\n"
                   "  - {name: ok, type: CONV2D, K: 2, C: 1, R: 3, S: 3, Y: 5, X: 5}\n")
    rows = run_scenarios([Scenario("t", str(net), "eyeriss_like", "maeri_like")], RunPlan(10**6, analytical_model()))
    assert [(r["layer"], r["status"]) for r in rows] == [("big", "unmappable")] * 3 + [("ok", "ok")] * 3
    assert "169" in rows[0]["note"]
    assert all(set(r) == set(COLUMNS) for r in rows)


# ----- report ----------------------------------------------------------------------------------
TINY = [ScenarioSet("flash_mlp", "tiny", "test",
                    (Scenario("flash_mlp", "flash_mlp", "flash_edge", "shidiannao_like"),))]


def test_report_rows_say_what_was_not_simulated_and_flag_bounds(gemm_iii, tmp_path):
    """With the simulator over budget and a 1-cycle 'analytical' model, the scenario table says
    'analytical only' with the budget note, the analytical cycles are flagged below the bound
    (GEMM III is off-chip bound: (8*8192 + 8192*8 + 8*8) bytes / 32 B/cycle = 4098 cycles > its
    compute bound 2048), and the CSV holds the three rows."""
    rows = run_scenarios([gemm_iii], RunPlan(8191, _fake_model(1)))
    sets = [ScenarioSet("flash_gemm", "GEMM III", "test", (gemm_iii,))]
    inputs = ReportInputs("accelsim validate", 8191, 8191, sets, [], [], [], 0, None, "not run in this test", [], [])
    write_report(rows, inputs, tmp_path / "REPORT.md")
    write_csv(rows, tmp_path / "results.csv")
    text = (tmp_path / "REPORT.md").read_text()
    assert "| III | GEMM | 32 | 4,098 | — | — | 1 | — | — | — |" in text
    assert "**analytical maestro below the lower bound**" in text
    assert "analytical only (not simulated: 32 steps x 256 PEs = 8,192 > budget 8,191)" in text
    assert "| flash_gemm | 1 | 1 | 0 / 0 | 1 |" in text
    written = list(csv.DictReader((tmp_path / "results.csv").open()))
    assert [(r["model"], r["status"], r["below_bound"]) for r in written] == [
        ("simulator", "over_budget", ""), ("simulator", "over_budget", ""), ("analytical", "ok", "True")]


@pytest.mark.slow
def test_report_regenerates_byte_for_byte(tmp_path):
    """Two runs of the same (small, quick) suite write identical files; the CSV has one row per
    layer x model/mode and the report shows the paper checks."""
    pytest.importorskip("matplotlib")
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        out.mkdir()
        paths = ValidationPaths(out, tmp_path / "no_scalesim", tmp_path / "no_traces")
        run_validation(paths, quick=True, sets=TINY)
        outs.append(out)
    for f in ("REPORT.md", "results.csv", "cycles_scatter.png", "error_by_type_and_style.png", "stall_breakdown.png"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    rows = list(csv.DictReader((outs[0] / "results.csv").open()))
    assert len(rows) == 4 * 3
    text = (outs[0] / "REPORT.md").read_text()
    assert "## Paper checks" in text and "FLASH Table 5" in text and "**Missing:**" in text


def test_validate_refuses_to_overwrite_a_report(tmp_path):
    (tmp_path / "REPORT.md").write_text("mine")
    result = CliRunner().invoke(main, ["validate", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "REPORT.md already exist; pass --force" in result.output
    assert (tmp_path / "REPORT.md").read_text() == "mine"


def test_validate_creates_its_output_directory(tmp_path, monkeypatch):
    """`validate --out DIR` (the README's own command) makes DIR and its parents; the suite
    itself is replaced here by a stub that records where it would write."""
    import accelsim.validation

    seen = []

    def stub(paths, quick, force, say):
        seen.append(paths.out_dir)
        (paths.out_dir / "results.csv").write_text("set,status\n")  # what the summary line reads
        return []

    monkeypatch.setattr(accelsim.validation, "run_validation", stub)
    out = tmp_path / "new" / "v"
    result = CliRunner().invoke(main, ["validate", "--out", str(out), "--quick"])
    assert result.exit_code == 0, result.output
    assert out.is_dir() and seen == [out]
    assert "validated 0 scenario layer(s)" in result.output


def test_validate_out_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    result = CliRunner().invoke(main, ["validate", "--out", str(tmp_path / "f")])
    assert result.exit_code == 2 and "is a file" in result.stderr and result.stderr.startswith("error: ")


def test_style_forms_show_each_styles_gemm_mapping():
    """tpu_like's GEMM form has K outside M (<n,k,m>), the documented difference from FLASH's
    <n,m,k>; maeri_like is FLASH's non-tiled TST_TTS (M and N one at a time)."""
    forms = {f.style: f for f in style_forms()}
    assert set(forms) == {"eyeriss_like", "nvdla_like", "tpu_like", "shidiannao_like", "maeri_like"}
    tpu = forms["tpu_like"].ours
    assert tpu.index(") K;") < tpu.index(") M;") and "DIFFERS" in forms["tpu_like"].verdict
    assert forms["maeri_like"].ours.startswith("TemporalMap(1,1) M; SpatialMap(1,1) N;")


def test_gamma_latencies_below_the_compute_bound_are_flagged():
    """ResNet-50 (3,857,973,248 conv + FC MACs) on the 168-PE Edge platform needs at least
    ceil(3857973248 / 168) = 22,964,127 cycles; GAMMA's 6.49E+06 is 0.28 of it. MobileNet-V2 on
    the 65,536-PE Cloud: ceil(300774272 / 65536) = 4,590 cycles, GAMMA's 1.85E+05 is above."""
    table = gamma_below_compute_bound().table
    rows = {(r[0], r[1]): r for r in table[1:]}
    assert rows[("ResNet50", "Edge (168)")][3].startswith("22,964,127 ")
    assert rows[("ResNet50", "Edge (168)")][4:] == ("0.28", "**below the compute bound**")
    assert rows[("MobileNet-V2", "Cloud (65,536)")][3].startswith("4,590 ")
    assert rows[("MobileNet-V2", "Cloud (65,536)")][5] == "ok"


def test_reference_sets_missing_are_noted_in_order(tmp_path):
    """With no reference set on disk, ``_reference_sections`` builds nothing, says each set's
    name as it comes to it, and notes each one missing by its marker file, in the report's order
    (Eyeriss chip, Timeloop, STONNE, MARVEL, then the three search comparisons' results files)."""
    from accelsim.validation import _reference_sections

    paths = ValidationPaths(tmp_path, eyeriss_dir=tmp_path / "e", timeloop_dir=tmp_path / "t",
                            stonne_dir=tmp_path / "s", marvel_dir=tmp_path / "m", cosearch_dir=tmp_path / "c",
                            baselines_dir=tmp_path / "b", reuse_dir=tmp_path / "r")
    missing: list[str] = []
    said: list[str] = []
    assert _reference_sections(paths, True, missing, said.append) == ([], [], [], [])
    assert said == ["Eyeriss chip", "Timeloop reference set", "STONNE reference set", "MARVEL Table 3",
                    "co-search comparison", "Nevergrad baselines", "unique-reuse pruning loss"]
    root = "(run from the repository root)"
    assert missing == [f"Eyeriss chip: no {tmp_path.as_posix()}/e/alexnet_measured.csv {root}",
                       f"Timeloop reference set: no {tmp_path.as_posix()}/t/references.csv {root}",
                       f"STONNE reference set: no {tmp_path.as_posix()}/s/cases.csv {root}",
                       f"MARVEL Table 3: no {tmp_path.as_posix()}/m/table3.csv {root}",
                       f"co-search comparison: no {tmp_path.as_posix()}/c/results.csv {root}",
                       f"Nevergrad baselines: no {tmp_path.as_posix()}/b/results.csv {root}",
                       f"unique-reuse pruning loss: no {tmp_path.as_posix()}/r/results.csv {root}"]
