"""Networks of many layers cost time linear in their length: a repeated layer (same shape and
mapping on the same hardware) is computed once, and the result files are serialized one layer
at a time and rewritten at most about once a second, while staying valid after every layer.
The speed itself is measured by ``accelsim bench --scenario many-layers``."""

from __future__ import annotations

import csv
import io
import json

from click.testing import CliRunner

import accelsim.api
import accelsim.sim.network
from accelsim.bench import tiny_layers_file
from accelsim.cli import main
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_maestro
from accelsim.outputs import Provenance, ResultFiles, csv_text, layer_total_row
from accelsim.sim.network import run_jobs


def test_identical_layers_are_simulated_once(tmp_path, monkeypatch):
    """Six layers, two shapes (a 4-channel and an 8-channel 1x1 convolution, alternating): the
    engine runs twice; each repeat has the first run's counts under its own name."""
    path = tmp_path / "net.m"
    tiny_layers_file(str(path), 3)
    text = path.read_text(encoding="utf-8")
    wider = text.replace("K: 4, C: 4", "K: 8, C: 4").replace("Layer l", "Layer w")
    path.write_text(text[:-2] + wider[len("Network tiny {\n"):], encoding="utf-8")
    calls = []
    real = accelsim.sim.network.simulate_layer
    monkeypatch.setattr(accelsim.sim.network, "simulate_layer", lambda cm, *a, **k: calls.append(cm) or real(cm, *a, **k))
    hw = load_hardware("eyeriss_like")
    _, jobs = jobs_from_maestro(path)
    result = run_jobs("net", jobs, hw)
    assert len(calls) == 2
    assert [r.layer for r in result.layers] == ["l0", "l1", "l2", "w0", "w1", "w2"]
    first, repeat = result.layers[0].to_dict(), result.layers[2].to_dict()
    for d in (first, repeat):
        d.pop("layer"), d.pop("wall_seconds")
    assert first == repeat
    assert result.layers[3].macs == 2 * result.layers[0].macs == 2 * 4 * 4 * 16
    result.layers[1].stall_cycles["dram"] += 1  # a repeat shares nothing with the original
    assert result.layers[0].stall_cycles["dram"] == result.layers[2].stall_cycles["dram"]


def test_identical_layers_are_analyzed_once(tmp_path, monkeypatch):
    path = tmp_path / "net.m"
    tiny_layers_file(str(path), 4)
    calls = []
    import accelsim.analytical

    real = accelsim.analytical.analyze_layer
    monkeypatch.setattr(accelsim.analytical, "analyze_layer", lambda cm, *a: calls.append(cm) or real(cm, *a))
    _, jobs = jobs_from_maestro(path)
    result = accelsim.api.analyze_jobs("net", jobs, load_hardware("eyeriss_like"))
    assert len(calls) == 1 and [r.layer for r in result.layers] == ["l0", "l1", "l2", "l3"]
    assert len({r.cycles for r in result.layers}) == 1


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _files(tmp_path, clock) -> ResultFiles:
    prov = Provenance("simulate", "net", "hw", "0" * 64, "realistic")
    return ResultFiles(str(tmp_path / "r.json"), str(tmp_path / "r.csv"), prov, layer_total_row, clock)


def _layer_results(tmp_path, layers: int):
    path = tmp_path / "net.m"
    tiny_layers_file(str(path), layers)
    _, jobs = jobs_from_maestro(path)
    return run_jobs("net", jobs, load_hardware("eyeriss_like")).layers


def test_result_files_valid_after_every_layer_and_rewritten_at_most_once_a_second(tmp_path):
    """Layers finishing 0.3 s apart: the files are rewritten after the first layer, then once
    a second has passed since the last rewrite (after layers 5 and 9 of 10, at 1.5 s and 2.7 s),
    and at close; after every layer both files parse and hold a prefix of the layers."""
    clock = _Clock()
    files = _files(tmp_path, clock)
    results = _layer_results(tmp_path, 10)
    seen = []
    for r in results:
        clock.now += 0.3
        files.add_result(r)
        objects = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        rows = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text(encoding="utf-8"))))
        assert [o["layer"] for o in objects] == [x.layer for x in results[:len(objects)]]
        assert [row["Layer Number"] for row in rows[:-1]] == [o["layer"] for o in objects]
        assert rows[-1]["Status"] == "total" and int(rows[-1]["Num MACs"]) == sum(o["macs"] for o in objects)
        seen.append(len(objects))
    assert seen == [1, 1, 1, 1, 5, 5, 5, 5, 9, 9]
    files.close()
    assert len(json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))) == 10


def test_result_files_text_is_what_whole_serialization_gives(tmp_path):
    """Serializing layer by layer gives the same bytes as serializing the whole list at once,
    with a stop marker and a column only the stop row has."""
    clock = _Clock()
    files = _files(tmp_path, clock)
    results = _layer_results(tmp_path, 3)
    for r in results:
        files.add_result(r)
    files.stop("l3", "SIGINT")
    prov = files.provenance
    objects = [{**r.to_dict(), "status": "complete", "provenance": prov.to_dict()} for r in results]
    objects.append({"layer": "l3", "status": "interrupted", "stopped_by": "SIGINT", "provenance": prov.to_dict()})
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == json.dumps(objects, indent=2) + "\n"
    rows = [files._row(r.layer, r.to_row(), "complete") for r in results]
    rows += [files._row("l3", {"Stopped By": "SIGINT"}, "interrupted"),
             files._row("TOTAL", layer_total_row(results), "total")]
    assert (tmp_path / "r.csv").read_text(encoding="utf-8") == csv_text(rows)


def test_a_network_of_tiny_layers_through_the_command(tmp_path):
    """200 identical layers with both outputs: every layer in both files, one total row."""
    path = tmp_path / "net.m"
    tiny_layers_file(str(path), 200)
    result = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--mapping", str(path), "--json",
                                       str(tmp_path / "o.json"), "--csv", str(tmp_path / "o.csv"), "--no-progress"])
    assert result.exit_code == 0, result.output
    objects = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert [o["layer"] for o in objects] == [f"l{i}" for i in range(200)]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o.csv").read_text(encoding="utf-8"))))
    assert len(rows) == 201 and rows[-1]["Status"] == "total"
    assert int(rows[-1]["Runtime (Cycles)"]) == 200 * objects[0]["cycles"]


# ----- budgets that hold: time, memory limits, workers ---------------------------------------


def test_max_seconds_stops_the_run_keeping_finished_layers(tmp_path):
    """--max-seconds 1 on VGG-16 (several seconds): exit 3, one error line naming the budget,
    the finished layers in the JSON and the layer it stopped in marked."""
    import subprocess
    import sys

    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "accelsim.cli", "simulate", "--hw", "eyeriss_like", "--network",
                           "vgg16", "--style", "maeri_like", "--max-seconds", "1", "--json", str(out),
                           "--no-progress"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith("error: stopped by the time budget (--max-seconds 1) during layer ")
    objects = json.loads(out.read_text(encoding="utf-8"))
    assert objects[-1]["status"] == "interrupted" and "--max-seconds 1" in objects[-1]["stopped_by"]
    assert all(o["status"] == "complete" for o in objects[:-1])


def test_a_layer_estimated_over_the_time_budget_is_refused_up_front():
    """dmazerunner6's conv1 per PE is estimated at about 2 h: over the default hour a layer may
    take, and over --max-seconds 60; with --max-seconds above the estimate only the step budget
    (given generously here) is left, so --max-steps 1 shows the refusal is about time alone."""
    args = ["simulate", "--hw", "tpu_like_32x32", "--network", "dmazerunner6", "--style", "nvdla_like", "--layer",
            "conv1", "--per-pe", "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3
    assert "the most a layer may take without --max-seconds (pass --max-seconds" in result.stderr
    assert "error: bundled network dmazerunner6 layer 0 (conv1): " in result.stderr  # not an installed path
    result = CliRunner().invoke(main, [*args, "--max-seconds", "60"])
    assert result.exit_code == 3 and "over --max-seconds 60 (pass --max-seconds" in result.stderr


def test_memory_limit_is_the_tightest_of_memory_address_space_and_cgroup(tmp_path, monkeypatch):
    """A v2 cgroup of 2 GiB under a parent of 1 GiB, a v1 one of 3 GiB: the tightest, 1 GiB."""
    from accelsim import budget

    cgroup = tmp_path / "cgroup"
    (cgroup / "a" / "b").mkdir(parents=True)
    (cgroup / "a" / "b" / "memory.max").write_text("2147483648\n")
    (cgroup / "a" / "memory.max").write_text("1073741824\n")
    (cgroup / "memory.max").write_text("max\n")
    proc = tmp_path / "proc_cgroup"
    proc.write_text("0::/a/b\n")
    assert budget.cgroup_memory_bytes(proc, cgroup) == 2**30
    (cgroup / "memory" / "x").mkdir(parents=True)
    (cgroup / "memory" / "x" / "memory.limit_in_bytes").write_text(str(3 * 2**30))
    (cgroup / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712")  # v1's "no limit"
    proc.write_text("4:memory:/x\n")
    assert budget.cgroup_memory_bytes(proc, cgroup) == 3 * 2**30
    monkeypatch.setattr(budget, "machine_memory_bytes", lambda: 16 * 2**30)
    monkeypatch.setattr(budget, "cgroup_memory_bytes", lambda: 2 * 2**30)
    monkeypatch.setattr(budget, "address_space_bytes", lambda: 4 * 2**30)
    assert budget.memory_limit() == (2 * 2**30, "the cgroup's memory limit")
    assert budget.Budget().memory_bytes == 3 * 2**29  # three quarters of it
    monkeypatch.setattr(budget, "address_space_bytes", lambda: 2**30)
    assert budget.memory_limit() == (2**30, "the address-space limit")


def test_search_budget_that_cannot_fit_in_memory_is_refused_before_starting(tmp_path):
    result = CliRunner().invoke(main, ["search", "--hw", "eyeriss_like", "--network", "marvel15", "--budget",
                                       str(10**12), "--out", str(tmp_path / "s"), "--no-progress"])
    assert result.exit_code == 3, result.output
    assert "--budget 1,000,000,000,000: a layer's search keeps every scored candidate in memory" in result.stderr
    assert not (tmp_path / "s").exists()


def test_onnx_model_over_the_limit_refused_before_reading(tmp_path, monkeypatch):
    """A sparse file of 65 MiB (nothing read: it is all zeros and not ONNX) is refused by its size
    for --network, and import-onnx refuses it when 5x its size exceeds --max-memory."""
    big = tmp_path / "big.onnx"
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)
    result = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", "--network", str(big), "--style",
                                       "nvdla_like"])
    assert result.exit_code == 2 and "ONNX model is 68,157,440 bytes; --network reads models of at most" in result.stderr
    result = CliRunner().invoke(main, ["import-onnx", str(big), "--max-memory", "100M"])
    assert result.exit_code == 3 and "takes about 325 MB of memory (5x its size), over --max-memory" in result.stderr


def test_analyze_takes_the_simulators_budget_options():
    """The simulator's over-budget message tells users to rerun with `accelsim analyze` and the
    same arguments, --max-steps and --no-progress included."""
    result = CliRunner().invoke(main, ["analyze", "--hw", "eyeriss_like", "--network", "marvel15", "--style",
                                       "nvdla_like", "--layer", "L6_CONV1", "--max-steps", "5", "--no-progress",
                                       "--max-seconds", "60"])
    assert result.exit_code == 0, result.output


def test_search_workers_capped_at_the_cores_and_dying_with_the_parent(tmp_path):
    """--workers 1000 runs on the cores this process may use (with a warning); killed with
    SIGKILL, the search's workers go with it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cores = len(os.sched_getaffinity(0))
    mapping = tmp_path / "one.m"
    tiny_layers_file(str(mapping), 1)
    proc = subprocess.Popen([sys.executable, "-m", "accelsim.cli", "search", "--hw", "eyeriss_like", "--mapping",
                             str(mapping), "--mapper", "random", "--budget", "100000", "--workers", "1000", "--out",
                             str(tmp_path / "s"), "--no-progress"], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line == f"warning: --workers 1000: only {cores} core(s) available to this process; using {cores}\n"

    def workers() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1] == str(proc.pid) and fields[0] != "Z":
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if b"spawn_main" in f.read():
                        found.append(int(entry))
        return found

    deadline = time.monotonic() + 60
    while len(workers()) < min(cores, 1000) and time.monotonic() < deadline:
        time.sleep(0.2)
    started = workers()
    assert len(started) == cores
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    alive = started
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in started if os.path.exists(f"/proc/{pid}") and
                 open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
    assert alive == []
