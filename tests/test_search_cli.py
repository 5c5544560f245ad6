"""``accelsim search``: the output directory, best.m, resume after an interruption, executors,
two-stage, and every refusal as one ``error:`` line."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.search import outdir
from accelsim.search.executors import InProcess
from accelsim.search.session import SearchSettings, run_search

pytest.importorskip("pyarrow")
pytest.importorskip("scipy")

NETWORK = """name: tiny
layers:
  - {name: conv, type: CONV2D, K: 16, C: 8, R: 3, S: 3, Y: 10, X: 10}
  - {name: fc, type: GEMM, M: 8, N: 16, K: 32}
"""
HW = ["--hw", "eyeriss_like", "--set", "pe_array.rows=4", "--set", "pe_array.cols=4"]


@pytest.fixture()
def network(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(NETWORK, encoding="utf-8")
    return path


def run(*args: str):
    return CliRunner().invoke(main, ["search", *args], catch_exceptions=False)


def settings(network: Path, **kw) -> SearchSettings:
    base = dict(hw="eyeriss_like", overrides=("pe_array.rows=4", "pe_array.cols=4"), network=str(network),
                budget=60, max_levels=2, population=20)
    base.update(kw)
    return SearchSettings(**base)  # type: ignore[arg-type]


def stored(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "candidates.parquet").sort_values(["layer", "model", "sample"]).reset_index(drop=True)


SAME = ["layer", "model", "key", "candidate", "status", "reason", "cost", "cycles", "energy_pj", "sample"]


def test_search_writes_the_directory_and_best_m_simulates_to_the_best(network, tmp_path):
    """Every scored row is in candidates.parquet once; best.m holds each layer's best mapping and
    simulating it gives the best row's cycles (model sim)."""
    out = tmp_path / "out"
    result = run(*HW, "--network", str(network), "--budget", "30", "--model", "sim", "--max-levels", "2",
                 "--population", "10", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert {"search.json", "candidates.parquet", "best.m", "summary.json", "convergence.png"} <= \
        {p.name for p in out.iterdir()}
    rows = stored(out)
    assert len(rows) == 60 and not rows.duplicated(["layer", "model", "key"]).any()
    summary = json.loads((out / "summary.json").read_text())
    assert [layer["scored"] for layer in summary["layers"]] == [30, 30]
    sim = CliRunner().invoke(main, ["simulate", *HW, "--mapping", str(out / "best.m"), "--json",
                                    str(tmp_path / "best.json")])
    assert sim.exit_code == 0, sim.output
    simulated = {r["layer"]: r["cycles"] for r in json.loads((tmp_path / "best.json").read_text())}
    assert simulated == {layer["layer"]: layer["best"]["cycles"] for layer in summary["layers"]}
    assert "conv" in result.output and "best_cycles" in result.output


class _Interrupt:
    """A progress callback that raises KeyboardInterrupt after ``after`` rows (Ctrl-C mid-search)."""

    def __init__(self, after: int):
        self.after, self.seen = after, 0

    def __call__(self, scored: int, best: float | None, layer: str = "", done: bool = False) -> None:
        self.seen += scored
        if self.seen >= self.after:
            raise KeyboardInterrupt


@pytest.mark.parametrize("model", ["analytical", "two-stage"])
def test_resume_after_interrupt_scores_each_candidate_once(network, tmp_path, model):
    """Interrupted halfway (in the second layer), --resume finishes: the final candidates.parquet
    has each (layer, model, candidate) exactly once and equals an uninterrupted run's."""
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    s = settings(network, model=model, top_k=3)
    run_search(s, whole, InProcess())
    with pytest.raises(KeyboardInterrupt):
        run_search(s, broken, InProcess(), progress=_Interrupt(80))
    partial = stored(broken)
    assert 0 < len(partial) < len(stored(whole))
    with pytest.raises(Exception, match="not empty"):
        run_search(s, broken, InProcess())
    run_search(s, broken, InProcess(), resume=True)
    final = stored(broken)
    assert not final.duplicated(["layer", "model", "key"]).any()
    assert final[SAME].equals(stored(whole)[SAME])
    assert (broken / "best.m").read_text() == (whole / "best.m").read_text()


def test_resume_of_a_search_saved_before_a_setting_existed(network, tmp_path):
    """A search.json written by an older accelsim lacks the settings added since (here
    unique_reuse and timeloop): --resume takes them as their defaults and goes on; a setting
    that differs from its default is still refused."""
    out = tmp_path / "out"
    s = settings(network, budget=10)
    run_search(s, out, InProcess())
    saved = json.loads((out / "search.json").read_text())
    for key in ("unique_reuse", "timeloop"):
        del saved[key]
    (out / "search.json").write_text(json.dumps(saved))
    run_search(s, out, InProcess(), resume=True)
    with pytest.raises(Exception, match="unique_reuse: False then, True now"):
        run_search(dataclasses.replace(s, mapper="exhaustive", unique_reuse=True), out, InProcess(), resume=True)


def test_resume_after_a_part_was_deleted_scores_its_rows_again(network, tmp_path, monkeypatch):
    """A part file deleted from a finished search: --resume numbers its new parts after the
    highest left (none is overwritten) and scores the deleted part's candidates again, so the
    rows equal the whole run's; a part left empty (a crash, a full disk) is refused naming it.
    (Parts of at most about 15 rows, so that each layer leaves several.)"""
    monkeypatch.setattr(outdir, "FLUSH_ROWS", 15)
    out = tmp_path / "out"
    s = settings(network, budget=30)
    run_search(s, out, InProcess())
    whole = stored(out)
    parts = sorted((out / "candidates.parquet").glob("part-*.parquet"))
    assert len(parts) >= 3
    lost = len(pd.read_parquet(parts[1]))
    parts[1].unlink()
    assert len(stored(out)) == len(whole) - lost
    run_search(s, out, InProcess(), resume=True)
    again = stored(out)
    assert again[SAME].equals(whole[SAME])
    assert len(list((out / "candidates.parquet").glob("part-*.parquet"))) == len(parts)
    parts[0].write_bytes(b"")
    with pytest.raises(Exception, match=r"part-000000.parquet: not a whole part of a search's candidates"):
        run_search(s, out, InProcess(), resume=True)


class _Appends:
    """Counts and keeps the frames a search appends to its directory (``SearchDir.append``)."""

    def __init__(self, monkeypatch):
        self.frames: list[pd.DataFrame] = []
        append = outdir.SearchDir.append

        def spy(directory: outdir.SearchDir, frame: pd.DataFrame) -> None:
            self.frames.append(frame.copy())
            append(directory, frame)

        monkeypatch.setattr(outdir.SearchDir, "append", spy)


def _parts(out: Path) -> list[Path]:
    return sorted((out / "candidates.parquet").glob("part-*.parquet"))


def test_parts_are_fewer_than_batches_and_hold_the_same_rows(network, tmp_path, monkeypatch):
    """Rows are held and written together: a two-stage search of 2 layers appends a frame per
    batch (more than 10) and, with an hour's FLUSH_SECONDS (so that a slow machine does not write
    on the interval), writes one part per layer. Read back, the rows equal those written one part per batch (FLUSH_ROWS 0: every
    append written at once, as before parts were buffered) in values, dtypes and order (wall
    times aside), and equal the appended frames' rows in order."""
    s = settings(network, model="two-stage", top_k=3, budget=120)
    appends = _Appends(monkeypatch)
    with monkeypatch.context() as m:
        m.setattr(outdir, "FLUSH_ROWS", 0)
        run_search(s, tmp_path / "each", InProcess())
    batches = len(appends.frames)
    with monkeypatch.context() as m:
        m.setattr(outdir, "FLUSH_SECONDS", 3600.0)
        run_search(s, tmp_path / "held", InProcess())
    assert len(_parts(tmp_path / "each")) == batches == len(appends.frames) - batches > 10
    assert len(_parts(tmp_path / "held")) == 2  # a part per layer: each is written before the layer's summary
    each = pd.read_parquet(tmp_path / "each" / "candidates.parquet").drop(columns="wall_seconds")
    held = pd.read_parquet(tmp_path / "held" / "candidates.parquet").drop(columns="wall_seconds")
    assert held.equals(each) and (held.dtypes == each.dtypes).all()
    appended = pd.concat(appends.frames[batches:], ignore_index=True)
    assert held[["layer", "model", "key", "sample"]].equals(appended[["layer", "model", "key", "sample"]])


def test_search_dir_writes_a_part_at_the_row_cap_the_interval_and_close(tmp_path, monkeypatch):
    """SearchDir.append holds rows: with an hour's interval, 3 rows then 3 more (6 > the cap of
    5) are written as one part of 6; 2 more are held until close writes them. With a zero
    interval every append is a part. Parts are numbered on, read back in order."""
    frame = pd.DataFrame({"layer": ["a"] * 8, "sample": range(8)})
    monkeypatch.setattr(outdir, "FLUSH_SECONDS", 3600.0)
    monkeypatch.setattr(outdir, "FLUSH_ROWS", 5)
    with outdir.SearchDir(tmp_path / "d", {}, False, columns=("layer", "sample")) as directory:
        directory.append(frame[:3])
        assert _parts(tmp_path / "d") == []
        directory.append(frame[3:6])
        assert [len(pd.read_parquet(p)) for p in _parts(tmp_path / "d")] == [6]
        directory.append(frame[6:])
        assert len(_parts(tmp_path / "d")) == 1
    assert [p.name for p in _parts(tmp_path / "d")] == ["part-000000.parquet", "part-000001.parquet"]
    monkeypatch.setattr(outdir, "FLUSH_SECONDS", 0.0)
    with outdir.SearchDir(tmp_path / "d", {}, True, columns=("layer", "sample")) as directory:
        assert directory.stored()["sample"].tolist() == list(range(8))
        directory.append(frame[:1])
        directory.append(frame[1:2])
        assert len(_parts(tmp_path / "d")) == 4


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_rows_are_on_disk_when_the_summary_names_their_layer(network, tmp_path, monkeypatch, stop):
    """With no part written on time (FLUSH_SECONDS an hour): whenever summary.json is written,
    every layer it names has its rows on disk (the finished layer when it finishes, the layer
    stopped in as ``interrupted``); a search stopped by Ctrl-C or failing leaves every row it
    appended on disk; --resume then ends with the uninterrupted search's rows."""
    monkeypatch.setattr(outdir, "FLUSH_SECONDS", 3600.0)
    s = settings(network)
    whole = tmp_path / "whole"
    run_search(s, whole, InProcess())
    out = tmp_path / "out"
    checked: list[str] = []
    write_summary = outdir.SearchDir.write_summary

    def check(directory: outdir.SearchDir, summary: dict) -> Path:
        rows = stored(out)
        for layer in summary["layers"]:
            assert (rows["layer"] == layer["layer"]).sum() == layer["scored"], layer
            checked.append(layer.get("stopped", ""))
        return write_summary(directory, summary)

    monkeypatch.setattr(outdir.SearchDir, "write_summary", check)
    appends = _Appends(monkeypatch)

    class Stop(_Interrupt):
        def __call__(self, scored: int, best: float | None, layer: str = "", done: bool = False) -> None:
            self.seen += scored
            if self.seen >= self.after:
                raise stop

    with pytest.raises(stop):
        run_search(s, out, InProcess(), progress=Stop(80))
    assert len(stored(out)) == sum(len(f) for f in appends.frames) >= 80
    assert ("interrupted" in checked) == (stop is KeyboardInterrupt) and checked[0] != "interrupted"
    run_search(s, out, InProcess(), resume=True)
    assert stored(out)[SAME].equals(stored(whole)[SAME])


@pytest.mark.slow
def test_sigterm_with_workers_is_one_error_line(network, tmp_path):
    """SIGTERM to a search with two worker processes: exit status 143 and one ``error:`` line
    (the workers are stopped, none prints a traceback). About 3 s: the signal goes at the first
    part written, well before the search's end (see the SIGINT test below)."""
    out = tmp_path / "out"
    args = [sys.executable, "-m", "accelsim.cli", "search", *HW, "--network", str(network), "--budget", "3000",
            "--max-levels", "2", "--population", "10", "--workers", "2", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list((out / "candidates.parquet").glob("part-*")):
        time.sleep(0.05)
    assert proc.poll() is None, f"the search ended before it was stopped: {proc.communicate()}"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: stopped by SIGTERM: what was scored is saved in {out}; run the same command with --resume to "
        "finish"], err


@pytest.mark.slow
def test_ctrl_c_exits_130_and_resume_finishes(network, tmp_path):
    """A real SIGINT to a running ``accelsim search``: exit status 130, a message saying how to
    resume, no traceback; --resume completes with every candidate once. About 40 s (42 s measured).

    The signal goes at the first part written: the whole search takes about 30 s on an idle
    2-core machine and writes a part per 2 s of scoring, so the run is well inside its scoring
    when interrupted. (With a budget of 400 the search came to fit in the 6 s between its third
    part and its end; the signal then met a finished process, or one finalizing.)"""
    out = tmp_path / "out"
    args = [sys.executable, "-m", "accelsim.cli", "search", *HW, "--network", str(network), "--budget", "3000",
            "--max-levels", "2", "--population", "10", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list((out / "candidates.parquet").glob("part-*")):
        time.sleep(0.05)
    assert proc.poll() is None, f"the search ended before it was interrupted: {proc.communicate()}"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    done = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = stored(out)
    summary = json.loads((out / "summary.json").read_text())
    assert len(rows) == sum(layer["scored"] for layer in summary["layers"]) > 3000
    assert not rows.duplicated(["layer", "model", "key"]).any()


def test_two_stage_summary_reports_ranking_fidelity(network, tmp_path):
    out = tmp_path / "out"
    run_search(settings(network, model="two-stage", top_k=4, budget=30), out, InProcess())
    summary = json.loads((out / "summary.json").read_text())
    for layer in summary["layers"]:
        fidelity = layer["two_stage"]
        assert fidelity["k"] == 4 and fidelity["reranked"] == 4
        assert fidelity["regret"] >= 0 and layer["best"]["model"] == "sim"
    rows = stored(out)
    assert (rows["model"] == "sim").sum() == 8


@pytest.mark.parametrize("args, needles", [
    (["--budget", "0"], ["--budget must be at least 1"]),
    (["--model", "oracle"], ["--model oracle", "two-stage"]),
    (["--max-levels", "4"], ["--max-levels must be 1, 2 or 3"]),
    (["--workers", "0"], ["--workers must be at least 1"]),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], ["exclude each other"]),
])
def test_bad_options_are_one_error_line(network, tmp_path, args, needles):
    result = CliRunner().invoke(main, ["search", *HW, "--network", str(network), "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error:") and "Traceback" not in result.output
    for needle in needles:
        assert needle in result.stderr


def test_refusals_about_the_output_directory(network, tmp_path):
    out = tmp_path / "out"
    common = [*HW, "--network", str(network), "--budget", "5", "--max-levels", "1", "--out", str(out)]
    nothing = CliRunner().invoke(main, ["search", *common, "--resume"])
    assert nothing.exit_code == 2 and "no search to resume" in nothing.stderr
    assert CliRunner().invoke(main, ["search", *common]).exit_code == 0
    again = CliRunner().invoke(main, ["search", *common])
    assert again.exit_code == 2 and "--resume" in again.stderr
    changed = CliRunner().invoke(main, ["search", *common, "--resume", "--seed", "7"])
    assert changed.exit_code == 2 and "seed: 0 then, 7 now" in changed.stderr
    unreachable = CliRunner().invoke(main, ["search", *HW, "--network", str(network), "--out", str(tmp_path / "d"),
                                            "--scheduler", "tcp://127.0.0.1:1"])
    assert unreachable.exit_code == 2 and "cannot reach the Dask scheduler" in unreachable.stderr


def test_search_on_a_dask_scheduler_address_scores_the_same_rows(network, tmp_path):
    """``--scheduler ADDR`` connects a client of its own (not the default one) and scores the same
    rows as one local worker. It once failed with "No clients found": waiting for batches looked
    for a default client, which only a caller's own ``distributed.Client`` made."""
    distributed = pytest.importorskip("distributed")
    common = [*HW, "--network", str(network), "--budget", "20", "--max-levels", "2", "--no-progress"]
    assert run(*common, "--out", str(tmp_path / "local")).exit_code == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        result = CliRunner().invoke(main, ["search", *common, "--scheduler", cluster.scheduler_address,
                                           "--out", str(tmp_path / "dask")])
    assert result.exit_code == 0, result.output
    assert stored(tmp_path / "local")[SAME].equals(stored(tmp_path / "dask")[SAME])


def test_search_from_a_mapping_file(tmp_path):
    """--mapping takes the layers of a .m file."""
    path = tmp_path / "one.m"
    path.write_text("Network n { Layer c { Type: CONV Stride { X: 1, Y: 1 } "
                    "Dimensions { K: 8, C: 4, R: 3, S: 3, Y: 8, X: 8 } Dataflow { SpatialMap(1,1) K; } } }\n")
    out = tmp_path / "out"
    result = run("--hw", "eyeriss_like", "--mapping", str(path), "--budget", "10", "--mapper", "random",
                 "--max-levels", "1", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "Layer c" in (out / "best.m").read_text()
    assert os.path.getsize(out / "summary.json") > 0


def _readme_python_blocks() -> list[str]:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Searching mappings"):text.index("## Architecture")]
    import re

    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_mapper_guide_runs():
    """The guide's Python examples run as written (the Optuna one where Optuna is installed)."""
    blocks = _readme_python_blocks()
    assert len(blocks) == 2
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    frame = namespace["frame"]
    # the last candidate's TemporalMap(128,128) C covers the 64 channels (MAESTRO's reading of a
    # map larger than its dimension), so all five are legal
    assert len(frame) == 5 and (frame["status"] == "ok").all()
    pytest.importorskip("optuna")
    namespace = {}
    exec(compile(blocks[1], "README.md", "exec"), namespace)
    assert namespace["study"].best_value < float("inf")


def test_style_seeds_make_the_best_at_least_the_best_style(network, tmp_path):
    """Each layer's named-style mappings are scored first (one row per distinct schedule, ahead of
    the mapper's), so the search's best never costs more than the best style under the model;
    --no-style-seeds starts from the mapper alone."""
    from accelsim.hw.loader import load_hardware
    from accelsim.search.seeds import style_seeds
    from accelsim.workload.tables import load_network

    hw = load_hardware("eyeriss_like", ["pe_array.rows=4", "pe_array.cols=4"])
    summary = run_search(settings(network, budget=12), tmp_path / "seeded", InProcess())
    rows = stored(tmp_path / "seeded")
    for layer, entry in zip(load_network(str(network)).layers, summary["layers"]):
        mine = rows[rows["layer"] == layer.name]
        seeds = style_seeds(layer, hw)
        kinds = mine["encoding"].tolist()  # in the order scored: the styles' directives, then genomes
        leading = next((i for i, kind in enumerate(kinds) if kind != "directives"), len(kinds))
        assert 1 <= leading <= len(seeds) and set(kinds[leading:]) <= {"genome"}, (layer.name, kinds)
        best_style = mine.head(leading).query("status == 'ok'")["cost"].min()
        assert entry["best"]["cost"] <= best_style
    plain = run_search(settings(network, budget=12, style_seeds=False), tmp_path / "plain", InProcess())
    assert plain["settings"]["style_seeds"] is False
    assert (stored(tmp_path / "plain")["encoding"] == "genome").all()


def test_search_without_a_terminal_writes_progress_lines(network, tmp_path, monkeypatch):
    """No terminal (CliRunner's stderr is not one) and no --no-progress: a line on stderr at
    every heartbeat (here every 0 s)."""
    monkeypatch.setenv("ACCELSIM_HEARTBEAT_SECONDS", "0")
    result = run(*HW, "--network", str(network), "--budget", "10", "--max-levels", "1", "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("accelsim: search: ")]
    assert lines and "candidates scored" in lines[-1]
    quiet = run(*HW, "--network", str(network), "--budget", "10", "--max-levels", "1", "--no-progress",
                "--out", str(tmp_path / "q"))
    assert quiet.exit_code == 0 and "accelsim: search:" not in quiet.stderr


# ----- what a user sees: the layer, the styles beaten, a heartbeat while nothing is scored -------


def test_heartbeat_names_the_layer_and_beats_while_nothing_is_scored(capsys):
    """A layer starts, 3 candidates are scored, then nothing: every line names the layer and the
    count; the lines after the scoring say that nothing was scored meanwhile."""
    from accelsim.cli import _SearchHeartbeat

    beat = _SearchHeartbeat("latency", 0.05, 400)
    beat(0, None, "conv_a")
    beat(3, 1234.0, "conv_a")
    time.sleep(0.3)
    beat.close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3
    assert all(line.startswith("accelsim: search: layer conv_a: 3 candidates scored, best latency 1,234, ")
               for line in lines)
    assert "none in the last" not in lines[0] and all("none in the last" in line for line in lines[1:])


def test_heartbeat_names_every_layer_in_flight_in_network_order():
    """Several workers search several layers at once: the line names each layer in flight in the
    order started, with its new rows of the budget (400); a layer that ends leaves the line;
    beyond four, the rest are counted; with one left, the one-layer line; with none, a line
    saying so. Totals: 120 + 40 + 7 = 167, then 2 x 5 = 10 more."""
    from accelsim.cli import _SearchHeartbeat

    beat = _SearchHeartbeat("latency", 3600, 400)  # lines asked for here, not by its thread
    try:
        for layer in ("L3", "L8", "L13"):
            beat(0, None, layer)
        beat(120, 9.0, "L3")
        beat(40, 7.0, "L8")
        beat(7, 5.0, "L13")
        assert beat.line() == "accelsim: search: 3 layers at once, L3 (120/400), L8 (40/400), L13 (7/400); 167 candidates scored in all"
        assert beat.line().endswith("; 167 candidates scored in all; none in the last 60 min: the mappers are still "
                                    "proposing candidates their pruning discards before scoring")
        beat(0, None, "L8", done=True)
        for layer in ("L14", "L15", "L16"):
            beat(0, None, layer)
        beat(5, None, "L14")
        beat(5, None, "L15")
        assert beat.line() == ("accelsim: search: 5 layers at once, L3 (120/400), L13 (7/400), L14 (5/400), "
                               "L15 (5/400) and 1 more; 177 candidates scored in all")
        for layer in ("L3", "L14", "L15", "L16"):
            beat(0, None, layer, done=True)
        assert beat.line().startswith("accelsim: search: layer L13: 7 candidates scored, best latency 5, ")
        beat(0, None, "L13", done=True)
        assert beat.line() == "accelsim: search: no layer in flight (177 candidates scored in all)"
    finally:
        beat.close()


def test_search_bar_names_the_layers_in_flight_and_one_layers_best():
    """The terminal bar: one layer in flight is named with its own best so far; two or more
    are counted and named, first four, in the order started, without a best (their costs are of
    different layers); a layer that ends leaves the bar."""
    from accelsim.cli import _InFlight, _bar_labels

    flight = _InFlight()
    assert _bar_labels(flight, "latency") == ("search", "")
    flight.update(0, None, "L3", False)
    assert _bar_labels(flight, "latency") == ("search L3", "")
    flight.update(120, 9.0, "L3", False)
    assert _bar_labels(flight, "latency") == ("search L3", "best latency 9")
    for layer in ("L8", "L13", "L14", "L15"):
        flight.update(0, None, layer, False)
    flight.update(40, 7.0, "L8", False)
    assert _bar_labels(flight, "latency") == ("search 5 layers at once (L3, L8, L13, L14 and 1 more)", "")
    for layer in ("L3", "L13", "L14", "L15"):
        flight.update(0, None, layer, True)
    assert _bar_labels(flight, "energy") == ("search L8", "best energy 7")
    assert flight.total == 160


def test_search_says_which_named_style_it_beat_and_reads_loop_nest_files(tmp_path):
    """A loop-nest .yaml file is searched like a .m file; each layer's summary holds the named
    styles' costs and the report names the best style and the search's gain over it."""
    out = tmp_path / "s"
    example = Path(__file__).resolve().parents[1] / "examples" / "timeloop_style.yaml"
    result = run("--hw", "eyeriss_like", "--mapping", str(example), "--budget", "12", "--out",
                 str(out))
    assert result.exit_code == 0, result.output
    (layer,) = json.loads((out / "summary.json").read_text())["layers"]
    costs = {k: v for k, v in layer["styles"].items() if v is not None}
    assert costs and layer["screen_best_cost"] <= min(costs.values())
    best_style = min(costs, key=costs.get)
    assert f"{layer['layer']}: best named style {best_style}, latency " in result.stdout


def test_an_interrupted_search_leaves_a_usable_directory(network, tmp_path):
    """Stopped in the second layer (after 80 rows; the budget is 60 a layer): summary.json has the
    first layer finished and the second `interrupted` with its best so far, and best.m holds both
    layers' mappings, the second being that best."""
    from accelsim.mapping.jobs import jobs_from_maestro

    out = tmp_path / "s"
    with pytest.raises(KeyboardInterrupt):
        run_search(settings(network), out, InProcess(), progress=_Interrupt(80))
    first, second = json.loads((out / "summary.json").read_text())["layers"]
    assert first["stopped"] != "interrupted" and second["stopped"] == "interrupted"
    assert 0 < second["scored"] < 60 and second["best"] is not None
    rows = stored(out)
    mine = rows[(rows["layer"] == second["layer"]) & (rows["status"] == "ok")]
    assert second["best"]["cost"] == mine["cost"].min()
    _, jobs = jobs_from_maestro(out / "best.m")
    assert [j.layer.name for j in jobs] == [first["layer"], second["layer"]]
