"""Nothing lost, nothing silently wrong, never a traceback: output paths checked before any
work, results written as layers finish and kept on SIGINT/SIGTERM, a full disk and a read-only
path reported cleanly, budgets, progress, provenance and the exit statuses of the README's
"Limits and exit codes"."""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from accelsim.budget import Budget, parse_size
from accelsim.cli import main
from accelsim.errors import ResourceError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.mapping.maestro_format import parse_maestro, write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.api import to_maestro
from accelsim.progress import ProgressDisplay
from accelsim.sim.estimate import RunKind, check_budget, estimate_layer
from accelsim.workload.tables import available_networks

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "traces" / "golden" / "tiny.m"  # two tiny layers: conv and gemm
SMALL_NET = ("--hw", "eyeriss_like", "--network", "marvel15", "--style", "nvdla_like")


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def assert_one_error(result, status: int, *needles: str) -> str:
    assert result.exit_code == status, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    (line,) = error_lines(result.stderr)
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


# ----- output paths, checked before any work ---------------------------------------------------


def test_json_and_csv_on_the_same_path_refused(tmp_path):
    out = str(tmp_path / "out")
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--json", out, "--csv", out),
                     2, "--json and --csv name the same path")


def test_output_in_a_missing_or_unwritable_directory_refused_before_running(tmp_path):
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--json",
                         str(tmp_path / "no" / "out.json")), 2, "does not exist")
    # /sys refuses new files even to root, so this holds whoever runs the test
    assert_one_error(cli("analyze", "--hw", "eyeriss_like", "--mapping", str(TINY), "--csv", "/sys/out.csv"),
                     2, "--csv /sys/out.csv: cannot write in /sys")


def test_read_only_directory_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who can write anywhere (the /sys case covers this)")
        assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--json",
                             str(ro / "o.json")), 2, "cannot write in", "Permission denied")
    finally:
        ro.chmod(0o755)


def test_output_that_is_a_directory_refused(tmp_path):
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--json", str(tmp_path)),
                     2, "--json")


def test_full_disk_reported_with_nothing_half_written(tmp_path):
    """RLIMIT_FSIZE of 1500 bytes: the JSON (about 2.3 kB per layer) cannot be written. The run
    exits 3 with one error line, and neither a partial file nor a temporary file is left."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))

    proc = subprocess.run([sys.executable, "-m", "accelsim.cli", "simulate", "--hw", "eyeriss_like", "--mapping",
                           str(TINY), "--json", "out.json", "--csv", "out.csv", "--no-progress"],
                          cwd=tmp_path, preexec_fn=limit, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert error_lines(proc.stderr) == ["error: out.json: cannot write: File too large (nothing was written)"]
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_full_disk_after_a_layer_keeps_the_previous_version(tmp_path):
    """With room for one layer's JSON but not two, the file holds the first layer, whole."""
    one = tmp_path / "one.json"
    assert cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--layer", "conv",
               "--json", str(one)).exit_code == 0
    size = one.stat().st_size

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 200, size + 200))

    proc = subprocess.run([sys.executable, "-m", "accelsim.cli", "simulate", "--hw", "eyeriss_like", "--mapping",
                           str(TINY), "--json", "out.json", "--no-progress"],
                          cwd=tmp_path, preexec_fn=limit, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "(the previous version is kept)" in proc.stderr
    layers = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [o["layer"] for o in layers] == ["conv"] and layers[0]["status"] == "complete"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# ----- SIGINT and SIGTERM mid-run ----------------------------------------------------------------


def _stop_mid_run(tmp_path: Path, signum: int) -> tuple[int, str, list[dict], list[dict[str, str]]]:
    """Start a 15-layer run, send ``signum`` once the first layer is in the JSON, and return
    (exit status, stderr, JSON objects, CSV rows)."""
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    proc = subprocess.Popen([sys.executable, "-m", "accelsim.cli", "simulate", *SMALL_NET, "--json", str(out_json),
                             "--csv", str(out_csv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out_json.exists():
            break
        time.sleep(0.02)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    return (proc.returncode, stderr, json.loads(out_json.read_text(encoding="utf-8")), read_csv(out_csv))


@pytest.mark.parametrize("signum, status, name", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")])
def test_signal_keeps_every_finished_layer(tmp_path, signum, status, name):
    code, stderr, objects, rows = _stop_mid_run(tmp_path, signum)
    assert code == status, stderr
    assert "Traceback" not in stderr
    (line,) = error_lines(stderr)
    assert line.startswith(f"error: stopped by {name} during layer ")
    finished = [o for o in objects if o["status"] == "complete"]
    assert 1 <= len(finished) < 15
    assert objects[-1]["status"] == "interrupted" and objects[-1]["stopped_by"] == name
    assert objects[-1]["layer"] == json.loads(json.dumps(objects[-1]))["layer"] != ""
    assert all(o["cycles"] > 0 for o in finished)
    assert [r["Layer Number"] for r in rows if r["Status"] == "complete"] == [o["layer"] for o in finished]
    assert [r["Status"] for r in rows][-2:] == ["interrupted", "total"]
    assert int(rows[-1]["Runtime (Cycles)"]) == sum(o["cycles"] for o in finished)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# ----- results written as each layer finishes, provenance, the CSV ------------------------------


def test_json_and_csv_carry_provenance_status_and_total(tmp_path):
    out_json, out_csv = tmp_path / "o.json", tmp_path / "o.csv"
    result = cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--set", "distribution_noc.multicast=false",
                 "--json", str(out_json), "--csv", str(out_csv))
    assert result.exit_code == 0, result.output
    assert "--set distribution_noc.multicast=false" in result.stdout.splitlines()[0]
    objects = json.loads(out_json.read_text(encoding="utf-8"))
    assert [o["status"] for o in objects] == ["complete", "complete"]
    prov = objects[0]["provenance"]
    assert prov["overrides"] == ["distribution_noc.multicast=false"]
    assert prov["inputs"][0]["role"] == "mapping" and len(prov["inputs"][0]["sha256"]) == 64
    assert prov["accelsim_version"] and prov["command"] == "simulate" and prov["mode"] == "realistic"
    plain = load_hardware("eyeriss_like")
    from accelsim.outputs import hardware_sha256

    assert prov["hardware_sha256"] != hardware_sha256(plain)  # the override is in the hash
    assert objects[0]["overflowed"] is False
    rows = read_csv(out_csv)
    assert [r["Status"] for r in rows] == ["complete", "complete", "total"]
    assert rows[0]["Neural Network Name"] == "tiny" and rows[0]["Layer Number"] == "conv"
    assert rows[0]["Overrides"] == "distribution_noc.multicast=false"
    assert int(rows[2]["Num MACs"]) == sum(o["macs"] for o in objects)


def test_overflowed_layers_are_marked(tmp_path):
    out = tmp_path / "o.json"
    result = cli("simulate", "--hw", "eyeriss_like", "--set", "l1.size_bytes=8", "--mapping", str(TINY),
                 "--allow-overflow", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert all(o["overflowed"] for o in json.loads(out.read_text(encoding="utf-8")))


def test_own_csv_round_trips_through_compare(tmp_path):
    """simulate --csv is read back by compare --maestro-csv: every count exact, cycles equal."""
    out = tmp_path / "m.csv"
    args = ("--hw", "dmazerunner_16x16", "--mapping", str(TINY), "--mode", "maestro")  # 2-byte words
    assert cli("simulate", *args, "--csv", str(out)).exit_code == 0
    result = cli("compare", *args, "--maestro-csv", str(out), "--brief", "--fail-on-disagree")
    assert result.exit_code == 0, result.output
    assert "maestro-csv: 2/2 layers agree" in result.stdout


def test_fail_on_disagree_exits_1(tmp_path):
    out = tmp_path / "m.csv"
    args = ("--hw", "eyeriss_like", "--mapping", str(TINY), "--mode", "maestro")
    assert cli("simulate", *args, "--csv", str(out)).exit_code == 0
    rows = read_csv(out)
    rows[0]["Runtime (Cycles)"] = str(int(rows[0]["Runtime (Cycles)"]) * 2)
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert cli("compare", *args, "--maestro-csv", str(out), "--brief").exit_code == 0
    assert cli("compare", *args, "--maestro-csv", str(out), "--brief", "--fail-on-disagree").exit_code == 1


def test_trace_force_replaces_an_earlier_trace_and_refuses_foreign_files(tmp_path):
    trace = tmp_path / "t"
    base = ("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--trace", str(trace),
            "--trace-format", "csv")
    assert cli(*base).exit_code == 0
    assert sorted(p.name for p in trace.iterdir()) == ["00_conv", "01_gemm"]
    assert_one_error(cli(*base), 2, "not empty")
    assert cli(*base[:-4], "--layer", "gemm", *base[-4:], "--force").exit_code == 0
    assert sorted(p.name for p in trace.iterdir()) == ["00_gemm"]  # the old run is gone, not mixed in
    (trace / "notes.txt").write_text("mine", encoding="utf-8")
    assert_one_error(cli(*base, "--force"), 2, "not accelsim layer traces (notes.txt)")
    assert (trace / "notes.txt").exists()


# ----- command-line misuse ---------------------------------------------------------------------


def test_layer_given_twice_refused():
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--layer", "conv",
                         "--layer", "gemm"), 2, "--layer", "given 2 times")


@pytest.mark.parametrize("seed", ["-1", "4294967296", "x"])
def test_bad_seed(seed):
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--functional", "--seed", seed),
                     2, "--seed")


def test_unknown_option_is_one_error_line():
    line = assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--bogus"), 2, "No such option '--bogus'")
    assert "--help" in line


def test_functional_fail_exit_1_is_not_a_crash(monkeypatch):
    """A bug (any unexpected exception) is one line with exit 70; a functional FAIL is 1."""
    import accelsim.sim.network

    def boom(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(accelsim.sim.network, "simulate_layer", boom)
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY)), 70,
                     "internal error (a bug in accelsim", "while simulating tiny", "ZeroDivisionError")


def test_out_of_memory_is_exit_3_and_marks_the_layer(tmp_path, monkeypatch):
    import accelsim.sim.network

    def oom(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(accelsim.sim.network, "simulate_layer", oom)
    out = tmp_path / "o.json"
    assert_one_error(cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--json", str(out)), 3,
                     "out of memory while simulating tiny", "--max-memory")
    assert json.loads(out.read_text(encoding="utf-8")) == [
        {"layer": "conv", "status": "interrupted", "stopped_by": "out of memory",
         "provenance": json.loads(out.read_text(encoding="utf-8"))[0]["provenance"]}]


# ----- budgets and estimates --------------------------------------------------------------------


def test_over_budget_refused_before_running_with_the_way_out():
    line = assert_one_error(cli("simulate", *SMALL_NET, "--layer", "L6_CONV1", "--max-steps", "1000"), 3,
                            "layer 'L6_CONV1' is over budget: 50,176 steps, over --max-steps 1,000",
                            "pass --max-steps 50176", "accelsim analyze")
    assert line.startswith("error: bundled network marvel15 layer 5 (L6_CONV1): ")  # not an installed path


def test_a_billion_pes_runs_in_both_models_with_exact_counts(tmp_path):
    """pe_array.count 1e9 on a tiny layer was killed by the kernel at 24 GB. Both models' memory
    now follows iteration cases and classes of PEs, not PEs: the layer runs in each, and the
    analytical model (maestro mode) reports the simulator's cycles and every count."""
    sim, ana = tmp_path / "sim.json", tmp_path / "ana.json"
    args = ("--hw", "eyeriss_like", "--set", "pe_array.count=1000000000", "--mapping", str(TINY), "--layer", "conv")
    result = cli("simulate", *args, "--mode", "maestro", "--json", str(sim))
    assert result.exit_code == 0, result.output
    result = cli("analyze", *args, "--json", str(ana))
    assert result.exit_code == 0, result.output
    s, a = (json.loads(p.read_text())[0] for p in (sim, ana))
    assert a["used_pes"] == s["used_pes"] == 10**9
    for name in ("cycles", "macs", "accesses", "noc_words", "noc_delivered_words", "egress_words", "steps",
                 "l1_required_bytes", "l2_required_bytes"):
        assert a[name] == s[name], name


def test_estimate_and_budget_units():
    """MARVEL's L6 on eyeriss_like, nvdla_like: 50,176 steps (two loops of 224 trips, 3 classes
    each: 9 iteration cases) on 168 PEs. Warped: executes min(50,176, 9 x 100) = 900 steps, 6
    events each = 5,400 events; time 0.2 s + 1 ms x 9 + 10 us x 5,400 = 0.263 s; memory 50 MB +
    8 kB x 9 = 52,502,528 B. Every step executed (a trace): 50,176 x 6 = 301,056 events, 0.2 +
    0.009 + 3.01056 = 3.21956 s; memory 52,502,528 + 1,300 B x 50,176 = 117,731,328 B (112 MB,
    rounded up 113M)."""
    hw = load_hardware("eyeriss_like")
    _, jobs = jobs_from_network("marvel15", "nvdla_like", hw, "L6_CONV1")
    estimate = estimate_layer(prepare(jobs[0], hw))
    assert (estimate.steps, estimate.cases, estimate.used_pes, estimate.events) == (50176, 9, 168, 5400)
    assert estimate.wall_seconds == pytest.approx(0.2 + 1e-3 * 9 + 10e-6 * 5400)
    assert estimate.peak_bytes == 50 * 2**20 + 8 * 2**10 * 9
    assert estimate_layer(prepare(jobs[0], hw), RunKind(simulations=7)).wall_seconds == \
        pytest.approx(7 * estimate.wall_seconds)
    traced = estimate_layer(prepare(jobs[0], hw), RunKind(unrolled=True))
    assert traced.events == 301056 and traced.wall_seconds == pytest.approx(3.21956)
    assert traced.peak_bytes == 117_731_328
    check_budget(estimate, Budget(50176, 2**40))
    with pytest.raises(ResourceError, match=r"an estimated 112 MB of memory, over --max-memory 64 MB \(pass "
                                            r"--max-memory 113M"):
        check_budget(traced, Budget(max_memory_bytes=2**26))
    with pytest.raises(ResourceError, match=r"50,176 steps, over --max-steps 50,175"):
        check_budget(estimate, Budget(50175))
    assert parse_size("8G") == 8 * 2**30 and parse_size("512mb") == 512 * 2**20 and parse_size("1000") == 1000
    for bad in ("", "-1G", "8Q", "inf", "nanG"):
        with pytest.raises(ValueError):
            parse_size(bad)


# ----- progress ---------------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_heartbeat_lines_without_a_terminal():
    out, clock = io.StringIO(), _Clock()
    display = ProgressDisplay("net", 2, "lines", out, heartbeat_seconds=30, clock=clock)
    display.layer_started(0, "a", 1000, "1,000 steps x 4 PEs, about 1 min and 90 MB", 60.0)
    for done in range(1, 1001):
        clock.now = done * 0.1  # a step every 0.1 s: heartbeats at 30, 60 and 90 s
        display.steps(done, 1000)
    display.layer_finished("1,234 cycles")
    lines = out.getvalue().splitlines()
    assert lines[0] == "accelsim: net [1/2] a: starting, 1,000 steps x 4 PEs, about 1 min and 90 MB"
    assert lines[1] == "accelsim: net [1/2] a: 300 of 1,000 steps (30%), 30 s elapsed, about 70 s left"
    assert len(lines) == 5 and lines[-1] == "accelsim: net [1/2] a: done in 2 min, 1,234 cycles"


def test_bar_updates_are_rate_limited_and_jumps_allowed():
    out, clock = io.StringIO(), _Clock()
    display = ProgressDisplay("net", 1, "bar", out, redraw_seconds=0.2, clock=clock)
    display.layer_started(0, "a", 10_000)
    bar = display.bar
    for done in (1, 2, 3, 5000, 9999):  # the engine's blocks make done jump
        clock.now += 0.05
        display.steps(done, 10_000)
    display.steps(10_000, 10_000)
    assert bar.n == 10_000
    display.layer_finished("5 cycles")
    assert display.bar is None


def test_layer_progress_lines_on_stderr(tmp_path):
    result = cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY))
    lines = result.stderr.splitlines()
    assert [line.split(":")[1].strip() for line in lines] == ["tiny [1/2] conv", "tiny [2/2] gemm"]
    assert cli("simulate", "--hw", "eyeriss_like", "--mapping", str(TINY), "--no-progress").stderr == ""


# ----- accelsim mapping writes what its parser reads -------------------------------------------


@pytest.mark.parametrize("style", sorted(STYLES))
def test_mapping_files_parse_back(style):
    hw = load_hardware("eyeriss_like")
    for network in available_networks():
        try:
            name, jobs = jobs_from_network(network, style, hw)
        except Exception as exc:  # a style that cannot map a network says so itself
            pytest.fail(f"{network}: {exc}")
        text = write_maestro(to_maestro(name, jobs))
        parsed = parse_maestro(text, f"{network}.m")
        assert [layer.name for layer in parsed.layers] == [job.layer.name for job in jobs]


def test_mapping_refuses_sizes_its_parser_cannot_read(tmp_path):
    """K = 10**18 has 19 digits; the .m parser reads at most 18, so `accelsim mapping` refuses
    to write it (it used to write a file `simulate --mapping` then rejected)."""
    net = tmp_path / "n.yaml"
    net.write_text("name: n\nlayers:\n  - {name: a, type: FC, K: 1000000000000000000, C: 4}\n", encoding="utf-8")
    out = tmp_path / "n.m"
    assert_one_error(cli("mapping", "--hw", "eyeriss_like", "--network", str(net), "--style", "nvdla_like", "-o",
                         str(out)), 2, "network n: cannot write layer 'a': dimension K must be an integer from 1 to "
                                       "999999999999999999")
    assert not out.exists()


def test_mode_validated_at_every_api_entry():
    """An unknown mode is an InputError everywhere, never a run labelled with it."""
    from accelsim.analytical import analyze_layer
    from accelsim.api import analyze_jobs, run_jobs, simulate_maestro, simulate_network
    from accelsim.compare import compare_jobs
    from accelsim.errors import InputError
    from accelsim.mapping.jobs import jobs_from_maestro
    from accelsim.sim.engine import SimOptions

    hw = load_hardware("eyeriss_like")
    name, jobs = jobs_from_maestro(TINY)
    calls = [
        lambda: simulate_network("marvel15", hw, "nvdla_like", mode="bogus", layer="L6_CONV1"),
        lambda: simulate_maestro(TINY, hw, mode="bogus"),
        lambda: analyze_jobs(name, jobs, hw, "bogus"),
        lambda: run_jobs(name, jobs, hw, SimOptions(mode="bogus")),  # type: ignore[arg-type]
        lambda: compare_jobs(name, jobs, hw, "bogus"),
        lambda: analyze_layer(prepare(jobs[0], hw), hw, "bogus"),
    ]
    for call in calls:
        with pytest.raises(InputError, match="unknown mode 'bogus'"):
            call()
