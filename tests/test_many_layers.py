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
