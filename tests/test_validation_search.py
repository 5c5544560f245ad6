"""The search comparisons' results files (accelsim.measurements) and validate's sections built
from them (accelsim.validation.search_sets): the schema each report writes is the one validate
reads, a stopped run resumes from its file, and the co-search verdict follows hand-made numbers."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from accelsim.errors import InputError
from accelsim.measurements import PROVENANCE_COLUMNS, MeasurementFile, RunProvenance, read_measurements
from accelsim.search import baselines_report, cosearch_report, reuse_report
from accelsim.validation import search_sets
from accelsim.validation.search_sets import (COSEARCH_COLUMNS, baselines_section, cosearch_section, cosearch_sections,
                                             cosearch_verdicts, reuse_section)


def test_reports_write_the_columns_validate_reads():
    """Each report's COLUMNS (what it writes after the provenance) equals what validate asks of
    its file: the two lists are kept apart by the layering (validation/ does not import search/)."""
    assert cosearch_report.COLUMNS == search_sets.COSEARCH_COLUMNS
    assert baselines_report.COLUMNS == search_sets.BASELINES_COLUMNS
    assert reuse_report.COLUMNS == search_sets.REUSE_COLUMNS
    assert (cosearch_report.LOWER_BOUND_CO, cosearch_report.LOWER_BOUND_MOST) == search_sets.LOWER_BOUNDS


def test_lower_bound_by_hand():
    """A GEMM of M 8, N 16, K 32 on eyeriss_like (1 MAC per PE, 1-byte words, 12 B/cycle DRAM):
    4,096 MACs; its tensors hold 8 x 32 + 32 x 16 + 8 x 16 = 896 words, ceil(896 / 12) = 75
    cycles off-chip. On 4 PEs the compute bound 4096 / 4 = 1024 rules; on 512 PEs (8 cycles) the
    off-chip one: the layer twice gives 2 x 75 = 150. The most PEs within 0.01 mm^2 (smallest L1
    32 B and L2 4 KiB): 32 PEs take 32 x 283 + 32 x 32 x 0.104 + 4096 x 0.104 = 9,588.5 um^2,
    64 PEs over 18,000; within 0.2 mm^2, 512 PEs (147,026 um^2; 1,024 take 293,626)."""
    from accelsim.hw.loader import load_hardware
    from accelsim.workload.ops import Layer, OpType

    fc = Layer.build("fc", OpType.GEMM, {"M": 8, "N": 16, "K": 32})
    base = load_hardware("eyeriss_like")
    assert cosearch_report.bound_cycles(base, [fc], 4) == 1024
    assert cosearch_report.bound_cycles(base, [fc, fc], 512) == 150
    assert cosearch_report.most_pes(base, 0.01).num_pes == 32
    assert cosearch_report.most_pes(base, 0.2).num_pes == 512
    with pytest.raises(InputError, match="no PE count"):
        cosearch_report.most_pes(base, 0.001)


def test_bound_lines_say_how_close_the_grid_target_asks_to_come():
    """Grid 1,000, co-search 600, a bound of 480 at 512 PEs: bound / grid 0.480, co-search /
    bound 1.250, and 0.5 x 1,000 / 480 = 1.0417: within 4.2%. A bound of 520 lies above 0.5 x the
    grid: no mapping reaches it."""
    rows = [_scheme("co-search", "600"), _scheme("grid + nvdla_like", "1000"),
            _scheme("lower bound, co-search's PEs", "480"), _scheme("lower bound, most PEs in budget", "520")]
    lines = search_sets.bound_lines(rows)
    assert ("- lower bound, co-search's PEs (512 PEs): 480 cycles; bound / grid = 0.480, co-search / bound = 1.250; "
            "0.5x the grid asks the co-search to come within 4.2% of it") in lines
    assert ("- lower bound, most PEs in budget (512 PEs): 520 cycles; bound / grid = 0.520, co-search / bound = "
            "1.154; 0.5x the grid is below it: no mapping of this PE count reaches it") in lines
    assert search_sets.bound_lines(rows[:2]) == []


def _scheme(name: str, cycles: str, area: str = "0.2") -> dict[str, str]:
    return {"network": "mobilenetv2", "hw": "eyeriss_like", "area_budget_mm2": "0.2", "scheme": name, "pes": "512",
            "l1_size_bytes": "256", "l2_size_bytes": "131072", "area_mm2": area, "cycles": cycles, "scored": "10",
            "model_runs": "9", "seconds": "1.5"}


def _file(path: Path, rows: list[dict[str, str]], budgets: dict[str, object], command: str = "cmd") -> None:
    out = MeasurementFile(path, COSEARCH_COLUMNS, RunProvenance(command, 0, budgets, commit="abc"), "test file")
    for row in rows:
        out.append(row)


def test_cosearch_verdicts_from_hand_made_numbers():
    """Co-search 100 cycles on 0.19 of 0.2 mm^2: the grid's 250 gives 100 / 250 = 0.4 <= 0.5 (met);
    GAMMA's 100 (equal: met), 120 (met) and 90 (100 > 90: not met)."""
    rows = [_scheme("co-search", "100", "0.19"), _scheme("grid + nvdla_like", "250"),
            _scheme("GAMMA on compute-heavy", "90"), _scheme("GAMMA on medium", "100"),
            _scheme("GAMMA on buffer-heavy", "120")]
    got = [(v.criterion, v.status, v.detail) for v in cosearch_verdicts(rows)]
    assert got == [("best design within the area budget", "met", "0.1900 of 0.2 mm^2"),
                   ("co-search <= 0.5x grid + nvdla_like", "met", "0.400x"),
                   ("co-search <= GAMMA on compute-heavy", "not met", "1.111x"),
                   ("co-search <= GAMMA on medium", "met", "1.000x"),
                   ("co-search <= GAMMA on buffer-heavy", "met", "0.833x")]


def test_cosearch_verdicts_of_a_partial_run_and_edge_cases():
    """A grid at 199 cycles against the co-search's 100: 100 / 199 = 0.503 > 0.5 (not met); a
    design over the budget (0.21 of 0.2) fails; a GAMMA that mapped nothing (empty cycles) is
    beaten; schemes not yet written are not measured."""
    rows = [_scheme("co-search", "100", "0.21"), _scheme("grid + nvdla_like", "199"),
            _scheme("GAMMA on compute-heavy", "")]
    assert [v.status for v in cosearch_verdicts(rows)] == ["not met", "not met", "met", "not measured", "not measured"]
    assert [v.status for v in cosearch_verdicts([])] == ["not measured"] * 5


def test_cosearch_section_renders_a_fixture_file(tmp_path):
    """A reduced, partial file: the section names its command, says it is reduced (500 < 2,000
    designs) and partial (the fixed designs missing), gives the verdicts and the table with
    co-search / this (2,000 / 5,000 = 0.400), writes the plot and links it."""
    path = tmp_path / "results.csv"
    _file(path, [_scheme("co-search", "2000", "0.17"), _scheme("grid + nvdla_like", "5000")],
          {"designs": 500, "gamma_mappings_per_shape": 75})
    lines = cosearch_sections(tmp_path, tmp_path)
    text = "\n".join(lines)
    assert lines[0] == "### `results.csv`"
    assert "    cmd" in lines and "commit abc" in text
    assert "**A reduced configuration:** 500 co-search designs and 75 GAMMA mappings" in text
    assert "**Partial:** the run has not written GAMMA on compute-heavy, GAMMA on medium, GAMMA on buffer-heavy" in text
    assert "- co-search <= 0.5x grid + nvdla_like: **met** (0.400x)" in lines
    assert "- co-search <= GAMMA on medium: **not measured** (no GAMMA on medium row)" in lines
    assert "| grid + nvdla_like | 512 | 256 | 131,072 | 0.2000 | 5,000 | 0.400 | 10 | 9 | 2 |" in lines
    assert "![co-search against its baselines, results.csv](cosearch_results.png)" in lines
    assert (tmp_path / "cosearch_results.png").stat().st_size > 0


def test_each_results_file_is_a_subsection_and_full_budgets_are_not_called_reduced(tmp_path):
    """Two files in the directory: a subsection each, by file name (full.csv before results.csv);
    the full budgets (2,000 designs, 300 mappings per shape) are not called reduced, half of them are."""
    _file(tmp_path / "results.csv", [_scheme("co-search", "2000")], {"designs": 1000, "gamma_mappings_per_shape": 150})
    _file(tmp_path / "full.csv", [_scheme("co-search", "2000")], {"designs": 2000, "gamma_mappings_per_shape": 300})
    lines = cosearch_sections(tmp_path, tmp_path)
    heads = [i for i, line in enumerate(lines) if line.startswith("### ")]
    assert [lines[i] for i in heads] == ["### `full.csv`", "### `results.csv`"]
    assert "reduced" not in "\n".join(lines[:heads[1]]) and "reduced" in "\n".join(lines[heads[1]:])
    assert (tmp_path / "cosearch_full.png").is_file() and (tmp_path / "cosearch_results.png").is_file()


def test_measurement_file_resumes_and_refuses_another_command(tmp_path):
    """Rows of the same command are kept (``done``) and appended to; another command's file is
    refused; the provenance columns lead every row."""
    path = tmp_path / "r.csv"
    _file(path, [_scheme("co-search", "1")], {"designs": 1})
    again = MeasurementFile(path, COSEARCH_COLUMNS, RunProvenance("cmd", 0, {"designs": 1}, commit="abc"), "test file")
    assert [r["scheme"] for r in again.done] == ["co-search"]
    again.append(_scheme("grid + nvdla_like", "2"))
    rows = read_measurements(path, COSEARCH_COLUMNS, "test file")
    assert [r["scheme"] for r in rows] == ["co-search", "grid + nvdla_like"]
    assert list(rows[0])[:len(PROVENANCE_COLUMNS)] == list(PROVENANCE_COLUMNS)
    assert rows[1]["budgets"] == "designs=1" and rows[1]["git_commit"] == "abc"
    with pytest.raises(InputError, match="holds rows of another command"):
        MeasurementFile(path, COSEARCH_COLUMNS, RunProvenance("other", 0, {}, commit="abc"), "test file")


def test_a_file_without_a_column_is_one_error(tmp_path):
    path = tmp_path / "r.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([[*PROVENANCE_COLUMNS, "scheme"], ["c", "0", "", "x", "d", "co-search"]])
    with pytest.raises(InputError, match=r"r.csv:1: .*the header lacks the column\(s\) network, hw"):
        cosearch_section(path, tmp_path / "p.png")


def test_cosearch_report_resumes_from_its_file(tmp_path, capsys):
    """A file holding every scheme of the very command: the report runs nothing and prints the
    table from the file (co/this = 100 / 400 = 0.250 for the grid)."""
    path = tmp_path / "results.csv"
    argv = ["--layers", "conv2d_1", "--budget", "2", "--out", str(path)]
    _file(path, [_scheme("co-search", "100"), _scheme("grid + nvdla_like", "400"), _scheme("GAMMA on compute-heavy", "100"),
                 _scheme("GAMMA on medium", "100"), _scheme("GAMMA on buffer-heavy", "100")], {},
          command="python -m accelsim.search.cosearch_report " + " ".join(argv))
    cosearch_report.main(argv)
    out = capsys.readouterr().out
    assert out.count("kept from") == 5 and "0.250" in out
    rows = read_measurements(path, COSEARCH_COLUMNS, "test file")  # the lower bounds computed and written
    assert [r["scheme"] for r in rows[5:]] == ["lower bound, co-search's PEs", "lower bound, most PEs in budget"]
    with pytest.raises(InputError, match="another command"):
        cosearch_report.main([*argv, "--seed", "1"])


def test_baselines_report_writes_a_row_per_mapper(tmp_path):
    """GAMMA with a budget of 5 on L8_CONV2_2_2: one row, at most 5 schedules scored, seed and
    budgets recorded; the section renders it with gamma's ratio 1.000 (or none legal: a dash)."""
    path = tmp_path / "results.csv"
    baselines_report.main(["--mapper", "gamma", "--budget", "5", "--out", str(path)])
    rows = read_measurements(path, search_sets.BASELINES_COLUMNS, "test file")
    assert [r["mapper"] for r in rows] == ["gamma"] and int(rows[0]["scored"]) <= 5
    assert rows[0]["seed"] == "0" and rows[0]["budgets"] == "schedules_per_mapper=5;max_levels=2;population=50"
    lines = baselines_section(path, tmp_path)
    assert any(line.startswith("| gamma | ") for line in lines) and (tmp_path / "baselines.png").is_file()


def test_reuse_section_names_the_layers_not_measured(tmp_path):
    """Two dmazerunner6 layers measured, loss 0 and 0.25: 1 of 2 at loss 0, the largest 0.25, the
    other four layers named as not measured."""
    path = tmp_path / "results.csv"
    out = MeasurementFile(path, search_sets.REUSE_COLUMNS, RunProvenance("cmd", 0, {}, commit="abc"), "test file")
    base = {"network": "dmazerunner6", "hw": "dmazerunner_16x16", "parallel": "K", "orders_enumerated": 3914,
            "orders_kept": 562, "proposed_full": 1566, "proposed_kept": 144, "scored_ok": 846, "seconds": 60.0}
    out.append({**base, "layer": "conv1", "best_full": 100.0, "best_kept": 100.0, "loss": 0.0})
    out.append({**base, "layer": "conv5_2", "best_full": 100.0, "best_kept": 125.0, "loss": 0.25})
    lines = reuse_section(path)
    assert "- loss 0 (pruning kept an optimal order) on **1 of 2** layers; largest loss 0.25" in lines
    assert "- **not measured:** conv2_2, conv3_2, conv4_2, conv5_1 (the same command resumes the run)" in lines
    assert "| conv5_2 | 3,914 | 562 | 1,566 / 144 | 846 | 100 | 125 | 0.25 | 60 |" in lines


@pytest.mark.parametrize("mapper", ["gamma", "ng-de"])
def test_baselines_report_agrees_with_accelsim_search(tmp_path, mapper):
    """Differential: the report's search of a mapper and ``accelsim search`` with the same budget,
    seed, levels and no style seeds score the same schedules: the same count, legal count and
    best cycles."""
    import json

    from click.testing import CliRunner

    from accelsim.cli import main
    from accelsim.hw.loader import load_hardware
    from accelsim.workload.tables import load_network

    pytest.importorskip("nevergrad")
    layer = load_network("marvel15").layer("L8_CONV2_2_2")
    ours = baselines_report.run_mapper(mapper, load_hardware("eyeriss_like"), layer, 20, 0, 2, 50)
    result = CliRunner().invoke(main, ["search", "--hw", "eyeriss_like", "--network", "marvel15", "--layer",
                                       "L8_CONV2_2_2", "--mapper", mapper, "--budget", "20", "--max-levels", "2",
                                       "--no-style-seeds", "--no-progress", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())["layers"][0]
    assert (ours.scored, ours.legal) == (summary["scored"], summary["legal"])
    assert ours.best_cycles == (summary["best"]["cycles"] if summary["best"] else None)
