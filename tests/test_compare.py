"""``accelsim compare``: metrics, agreement, the readers of MAESTRO's and SCALE-Sim's outputs,
the ablation attribution of cycle gaps, and the command itself on a tiny mapping.

Most tests stand in a fake model (the simulator in maestro mode) through the cost-model registry (accelsim.cost_models),
so they test the machinery, not a model; one runs the real analytical model for the wiring.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from accelsim.mapping.jobs import jobs_from_maestro
from accelsim.cli import main
from accelsim.compare import CAUSES, PARTS, Ablation, compare_jobs, metrics_of
from accelsim.cost_models import COST_MODELS, Analytical
from accelsim.compare.attribution import ablate
from accelsim.compare.external import maestro_metrics, read_maestro_csv, scalesim_metrics
from accelsim.compare.metrics import exceptions
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.model_options import IDEAL_EFFECTS
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer

TINY_M = """Network tiny {
  Layer conv_a {
    Type: CONV
    Stride { X: 1, Y: 1 }
    Dimensions { K: 4, C: 2, R: 1, S: 1, Y: 3, X: 3 }
    Dataflow {
      SpatialMap(1,1) K;
      TemporalMap(2,2) C;
      TemporalMap(1,1) Y;
      TemporalMap(1,1) X;
    }
  }
  Layer conv_b {
    Type: CONV
    Stride { X: 1, Y: 1 }
    Dimensions { K: 6, C: 4, R: 3, S: 3, Y: 5, X: 5 }
    Dataflow {
      SpatialMap(1,1) K;
      TemporalMap(2,2) C;
      TemporalMap(Sz(R),1) Y;
      TemporalMap(Sz(S),1) X;
      Cluster(2, P);
      SpatialMap(1,1) C;
    }
  }
}
"""


class _MaestroModeSimulator(Analytical):
    """A stand-in model: the simulator with MAESTRO's assumptions."""

    def evaluate(self, job):
        return simulate_layer(job.cm, job.hw, SimOptions(mode="maestro"))


@pytest.fixture
def fake_analytical(monkeypatch):
    monkeypatch.setitem(COST_MODELS, "analytical", _MaestroModeSimulator())


@pytest.fixture
def tiny_m(tmp_path):
    path = tmp_path / "tiny.m"
    path.write_text(TINY_M)
    return path


def _hw(multicast: bool, dram_latency: int):
    """4 PEs, 1-byte words, 1 MAC/cycle without pipeline depth, big buffers, bus of 1 word/cycle
    with 1 cycle latency, tree reduction of 1 word/cycle and 1 cycle per hop, DRAM 64 bytes/cycle
    in 1-byte bursts with ``dram_latency`` cycles of latency."""
    return load_hardware("maestro_default", [
        "pe_array.count=4", "pe_array.macs_per_pe_per_cycle=1", "pe_array.mac_pipeline_latency_cycles=1",
        "l1.size_bytes=4096", "l2.size_bytes=1048576",
        "l2.read_bandwidth_words_per_cycle=1", "l2.write_bandwidth_words_per_cycle=1",
        "distribution_noc.kind=bus", f"distribution_noc.multicast={str(multicast).lower()}",
        "distribution_noc.bandwidth_words_per_cycle=1", "distribution_noc.latency_cycles=1",
        "reduction_noc.kind=tree", "reduction_noc.bandwidth_words_per_cycle=1",
        "reduction_noc.latency_cycles_per_hop=1", "dram.model=simple", "dram.bandwidth_bytes_per_cycle=64",
        f"dram.latency_cycles={dram_latency}", "dram.burst_bytes=1", "word_size_bytes=1",
    ])


def _ablation_of(hw, layer, dim):
    cm = compile_mapping(layer, [MapDirective("spatial", 1, 1, dim, 0)], hw.num_pes)
    realistic = simulate_layer(cm, hw).cycles
    maestro = simulate_layer(cm, hw, SimOptions(mode="maestro")).cycles
    return ablate(cm, hw, realistic, maestro)


# ------------------------------------------------------------------ engine switches
def test_every_engine_effect_belongs_to_exactly_one_cause():
    effects = [e for group in CAUSES.values() for e in group]
    assert sorted(effects) == sorted(IDEAL_EFFECTS)


def test_unknown_ideal_effect_is_refused():
    with pytest.raises(ValueError, match="unknown ideal effects"):
        SimOptions(ideal=frozenset({"teleportation"}))


def test_all_effects_ideal_is_maestro_mode(tiny_m):
    """Realistic mode with every effect ideal takes exactly maestro mode's code paths."""
    hw = load_hardware("eyeriss_like")
    for job in jobs_from_maestro(tiny_m)[1]:
        cm = compile_mapping(job.layer, job.dataflow, hw.num_pes)
        all_ideal = simulate_layer(cm, hw, SimOptions(ideal=frozenset(IDEAL_EFFECTS)))
        maestro = simulate_layer(cm, hw, SimOptions(mode="maestro"))
        assert replace(all_ideal, mode="maestro", wall_seconds=0) == replace(maestro, wall_seconds=0)


# ------------------------------------------------------------------ attribution
def test_attribution_by_hand_noc_pipeline_dram():
    """FC, 4 outputs from 1 input, K over 4 PEs, no multicast, DRAM latency 2 (hardware _hw).

    Realistic: DMA of 5 bytes 1 cycle, arrives at 1 + 2 = 3. NoC: input as 4 packets (4 cycles,
    no multicast) + 4 weights = 8 cycles, 3..11, +1 latency: 12. Compute 12..13. Drain 4 groups
    of 1 word: 13..17. Write-back 17..18, +2 latency: R = 20.
    Maestro: DMA 0..1; one packed transfer of 5 words 1..6; compute 6..7; drain 7..11;
    write-back 11..12: M = 12.
    NoC ideal (multicast, packed): 3..8, +1: 9, compute 9..10, drain 10..14, wb 14..15 +2 = 17.
    Pipeline ideal (no NoC latency): arrival 11, 11..12, 12..16, 16..17 +2 = 19.
    DRAM ideal: the same run without the two latencies = 16.
    Parts: noc 20-17 = 3, pipeline 20-19 = 1, dram 20-16 = 4, others 0; 3+1+4 = 8 = R - M, so
    other/interaction = 0; against a source of 10 cycles the residual is 12 - 10 = 2; against a
    model estimating 10 realistic and 9 maestro-mode cycles it is 12 - 9 = 3 and the model's own
    realistic effects are 9 - 10 = -1.
    """
    a = _ablation_of(_hw(multicast=False, dram_latency=2), Layer.build("fc4", "FC", {"K": 4, "C": 1}), "K")
    assert (a.realistic_cycles, a.maestro_cycles) == (20, 12)
    assert a.split(10) == {"noc_contention": 3, "reduction_latency": 0, "pipeline_fill_drain": 1,
                           "dram_latency": 4, "buffer_limits": 0, "other/interaction": 0, "model_residual": 2,
                           "model_effects": 0}
    parts = a.split(10, 9)
    assert (parts["model_residual"], parts["model_effects"], sum(parts.values())) == (3, -1, 20 - 10)


def test_attribution_by_hand_reduction():
    """A dot product of 4 (FC K=1, C=4), C over 4 PEs reduced by the tree (hardware _hw, with
    multicast, no DRAM latency).

    Realistic: DMA 8 bytes 0..1; NoC 4 distinct input words + 4 weights = 8 packets 1..9, +1: 10;
    compute 10..11; the group of 4 drains 1 word 11..12 and lands ceil(log2 4) = 2 hops later, 14;
    write-back 14..15: R = 15. Maestro: 8 words packed 1..9, compute 9..10, drain 10..11, wb
    11..12: M = 12. Reduction ideal: lands at 12, wb 12..13 = 13 (part 2); pipeline ideal:
    arrival 9, everything one cycle earlier = 14 (part 1); other causes 0, interaction 0.
    """
    a = _ablation_of(_hw(multicast=True, dram_latency=0), Layer.build("dot4", "FC", {"K": 1, "C": 4}), "C")
    assert (a.realistic_cycles, a.maestro_cycles) == (15, 12)
    parts = a.split(12)
    assert parts["reduction_latency"] == 2 and parts["pipeline_fill_drain"] == 1
    assert sum(parts.values()) == 3 and parts["other/interaction"] == 0


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.lists(st.integers(0, 10**9), min_size=len(CAUSES),
                                                               max_size=len(CAUSES)), st.integers(0, 10**9),
       st.none() | st.integers(0, 10**9))
def test_parts_always_sum_to_the_gap(realistic, maestro, ideal, source, source_maestro):
    a = Ablation(realistic, maestro, dict(zip(CAUSES, ideal)))
    parts = a.split(source, source_maestro)
    assert tuple(parts) == PARTS
    assert sum(parts.values()) == realistic - source


def test_realistic_comparison_parts_sum_to_gap(tiny_m, fake_analytical):
    hw = load_hardware("eyeriss_like")
    name, jobs = jobs_from_maestro(tiny_m)
    comp = compare_jobs(name, jobs, hw, "realistic", ["analytical"])
    for lc in comp.layers:
        parts = lc.attribution()["analytical"]
        assert sum(parts.values()) == lc.simulator["cycles"] - lc.sources["analytical"]["cycles"]
        assert parts["model_residual"] == 0  # the stand-in model is the maestro-mode simulator
        assert lc.simulator["cycles"] > lc.sources["analytical"]["cycles"]


# ------------------------------------------------------------------ agreement
def test_exceptions_judge_counts_exactly_and_cycles_within_two_percent():
    """Reference 1000 cycles: 1020 is within 2%, 1021 is not; one word more is an exception."""
    ref = {"cycles": 1000, "macs": 50, "input.l1_read": 7, "pe_utilization": 0.5}
    assert exceptions(ref, {"cycles": 1020, "macs": 50, "input.l1_read": 7, "pe_utilization": 0.1}) == []
    assert exceptions(ref, {"cycles": 980}) == []
    assert exceptions(ref, {"cycles": 1021, "input.l1_read": 8}) == ["cycles +2.10%", "input.l1_read +14.29%"]


def test_metrics_of_a_result_cover_every_access():
    hw = _hw(multicast=True, dram_latency=0)
    cm = compile_mapping(Layer.build("fc4", "FC", {"K": 4, "C": 1}), [MapDirective("spatial", 1, 1, "K", 0)], 4)
    r = simulate_layer(cm, hw)
    m = metrics_of(r)
    assert m["cycles"] == r.cycles and m["weight.l2_read"] == r.accesses["weight"].l2_read
    assert m["compute_cycles"] + m["stall_cycles"] == r.cycles
    assert len([k for k in m if "." in k]) == 18


# ------------------------------------------------------------------ MAESTRO CSV
_MAESTRO_HEADER = (
    "Neural Network Name, Layer Number, NumPEs, Runtime (Cycles), Activity count-based Energy (nJ), "
    "Throughput (MACs/Cycle), Throughput Per Energy (GMACs/s*J), Area, Power, NoC BW Req (Elements/cycle), "
    "Avg BW Req, Peak BW Req, Vector Width, Offchip BW Req (Elements/cycle),  L2 SRAM Size Req (Bytes), "
    "L1 SRAM Size Req (Bytes), Multicasting Factor (Weight), Multicasting Factor (Input), Num Total Input Pixels, "
    "Num Total Weight Pixels, Ops/J, Num MACs, PE power, L1 power, L2 power, NOC power, "
    + "".join(f"{t} l1 read, {t} l1 write, {t} l2 read, {t} l2 write, {t} reuse factor," for t in ("input", "filter", "output"))
    + "Ingress Delay (Min), Ingress Delay (Max), Ingress Delay (Avg), Egress Delay (Min), Egress Delay (Max),  "
    "Egress Delay (Avg),Compute Delay (Min), Compute Delay (Min), Compute Delay (Avg),Avg number of utilized PEs, "
    "Arithmetic Intensity")


def _maestro_row(layer, cycles, macs, l2_size, l1_size, counts, trailing=""):
    """A data row as MAESTRO writes it: counts = 12 numbers (input, filter, output x l1 read,
    l1 write, l2 read, l2 write)."""
    head = [("net", layer, 256, cycles, 1.5, 2.0, 3.0, 4.0, 5.0, 6, 7, 8, 1, 9, l2_size, l1_size, 1, 1, 10, 11, 12.0, macs,
             0.1, 0.2, 0.3, 0.4)]
    tensors = ""
    for i in range(3):
        c = counts[4 * i: 4 * i + 4]
        tensors += f"{c[0]}, {c[1]}, {c[2]}, {c[3]}, {c[0] / c[1]:g}, "
    return ",".join(str(v) for v in head[0]) + "," + tensors + "1, 2, 1.5, 1, 2, 1.5, 3, 4, 3.5, 100, 2.5" + trailing


def _write_maestro(path, rows):
    path.write_text("\n".join([_MAESTRO_HEADER] + rows) + "\n")
    return path


def test_read_maestro_csv_columns_units_and_trailing_comma(tmp_path):
    """Sizes are MAESTRO element counts: 2-byte words make 30 elements 60 bytes."""
    counts = list(range(1, 13))
    path = _write_maestro(tmp_path / "m.csv", [_maestro_row("conv1", 1234, 5000, 300, 30, counts),
                                                _maestro_row("conv2", 99, 10, 3, 2, counts, trailing=", ")])
    table = read_maestro_csv(path, word_size_bytes=2)
    assert list(table) == ["conv1", "conv2"]
    m = table["conv1"]
    assert m["cycles"] == 1234 and m["macs"] == 5000
    assert (m["l2_required_bytes"], m["l1_required_bytes"]) == (600, 60)
    assert [m[f"{t}.{a}"] for t in ("input", "weight", "output")
            for a in ("l1_read", "l1_write", "l2_read", "l2_write")] == counts
    assert "input.dram_read" not in m  # MAESTRO reports no DRAM counts


def test_maestro_csv_missing_columns(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("Layer Number, Num MACs\nconv1, 5\n")
    with pytest.raises(InputError, match=r"bad.csv:1: missing column\(s\) Runtime \(Cycles\)"):
        read_maestro_csv(path, 1)


def test_maestro_csv_unknown_layer_name(tmp_path):
    path = _write_maestro(tmp_path / "m.csv", [_maestro_row("conv1", 1, 1, 1, 1, [1] * 12)])
    with pytest.raises(InputError, match=r"no row for layer\(s\) conv9; the file's layers are: conv1"):
        maestro_metrics(path, 1, ["conv1", "conv9"])


def test_maestro_csv_with_numbered_layers_says_so(tmp_path):
    path = _write_maestro(tmp_path / "m.csv", [_maestro_row("1", 1, 1, 1, 1, [1] * 12)])
    with pytest.raises(InputError, match="this CSV numbers its layers"):
        maestro_metrics(path, 1, ["conv1"])


@pytest.mark.parametrize("rows, message", [
    (["conv1, 5"], r"m.csv:2: expected \d+ values"),
    ([_maestro_row("conv1", "fast", 1, 1, 1, [1] * 12)], r"m.csv:2: column 'Runtime \(Cycles\)' of layer 'conv1': expected a number"),
    ([_maestro_row("conv1", 1, 1, 1, 1, [1] * 12)] * 2, r"m.csv:3: layer 'conv1' appears twice"),
])
def test_maestro_csv_bad_rows(tmp_path, rows, message):
    path = _write_maestro(tmp_path / "m.csv", rows)
    with pytest.raises(InputError, match=message):
        read_maestro_csv(path, 1)


def test_maestro_csv_missing_file(tmp_path):
    with pytest.raises(InputError, match="nope.csv: MAESTRO CSV not found"):
        read_maestro_csv(tmp_path / "nope.csv", 1)


# ------------------------------------------------------------------ SCALE-Sim report
_SCALESIM_HEADER = ("LayerID, Total Cycles (incl. prefetch), Total Cycles, Stall Cycles, Overall Util %, "
                    "Mapping Efficiency %, Compute Util %,")


def _write_scalesim(path, rows):
    path.write_text("\n".join([_SCALESIM_HEADER] + [", ".join(str(v) for v in r) + "," for r in rows]) + "\n")
    return path


def test_scalesim_report_matched_by_order(tmp_path):
    """Row 1 is conv_b: 40 cycles with prefetch, 35 without, none stalled: compute 35 - 0 = 35,
    stalls 40 - 35 = 5 (the prefetch, which our cycles include)."""
    pytest.importorskip("pandas")
    path = _write_scalesim(tmp_path / "COMPUTE_REPORT.csv", [(0, 130, 120, 20, 50.0, 80.0, 60.0),
                                                              (1, 40, 35, 0, 25.0, 50.0, 25.0)])
    m = scalesim_metrics(path, ["conv_a", "conv_b"], ["conv_b"])
    assert m == {"conv_b": {"cycles": 40, "compute_cycles": 35, "stall_cycles": 5, "pe_utilization": 0.25}}


def test_scalesim_report_of_another_network(tmp_path):
    pytest.importorskip("pandas")
    path = _write_scalesim(tmp_path / "COMPUTE_REPORT.csv", [(0, 130, 120, 20, 50.0, 80.0, 60.0)])
    with pytest.raises(InputError, match="do not number the network's 2 layers"):
        scalesim_metrics(path, ["conv_a", "conv_b"], ["conv_a"])


# ------------------------------------------------------------------ the command
def test_cli_maestro_mode_agreement_and_outputs(tmp_path, tiny_m, fake_analytical):
    """The stand-in model agrees exactly; a MAESTRO CSV built from the simulator's numbers
    with conv_b's cycles 5% high (208 -> round(218.4) = 218, +4.81%) and one more input L2 read
    (164 -> 165, +0.61%) is listed with exactly those two exceptions."""
    hw = load_hardware("eyeriss_like")
    name, jobs = jobs_from_maestro(tiny_m)
    sims = [simulate_layer(compile_mapping(j.layer, j.dataflow, hw.num_pes), hw, SimOptions(mode="maestro"))
            for j in jobs]
    rows = []
    for r in sims:
        counts = [getattr(r.accesses[t], a) for t in ("input", "weight", "output")
                  for a in ("l1_read", "l1_write", "l2_read", "l2_write")]
        cycles = r.cycles
        if r.layer == "conv_b":
            cycles = round(r.cycles * 1.05)
            counts[2] += 1  # input l2 read
        rows.append(_maestro_row(r.layer, cycles, r.macs, r.l2_required_bytes, r.l1_required_bytes,
                                 [max(c, 1) for c in counts]))
    maestro_csv = _write_maestro(tmp_path / "maestro.csv", rows)
    out_json, out_csv = tmp_path / "cmp.json", tmp_path / "cmp.csv"
    res = CliRunner().invoke(main, ["compare", "--hw", "eyeriss_like", "--mapping", str(tiny_m), "--mode", "maestro",
                                    "--model", "analytical", "--maestro-csv", str(maestro_csv),
                                    "--json", str(out_json), "--csv", str(out_csv)])
    assert res.exit_code == 0, res.output
    assert "analytical: 2/2 layers agree" in res.output
    assert "maestro-csv: 1/2 layers agree; exceptions: conv_b (cycles +4.81%, input.l2_read +0.61%)" in res.output
    overview = res.output.split("cycles per layer:")[1].splitlines()
    assert overview[3].split() == ["conv_b", "208", "208", "=", "19/19", "yes", "218", "+4.81%", "12/13", "no"]
    data = json.loads(out_json.read_text())
    assert data["mode"] == "maestro" and data["sources"] == ["analytical", "maestro-csv"]
    assert [lc["exceptions"]["analytical"] for lc in data["layers"]] == [[], []]
    rows = list(csv.DictReader(out_csv.open()))
    cycles = [r for r in rows if r["layer"] == "conv_a" and r["metric"] == "cycles"][0]
    assert cycles["analytical rel_error"] == "0.0"
    again = CliRunner().invoke(main, ["compare", "--hw", "eyeriss_like", "--mapping", str(tiny_m),
                                      "--no-attribution", "--json", str(out_json)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_cli_realistic_mode_shows_attribution_and_scalesim(tmp_path, tiny_m, fake_analytical):
    pytest.importorskip("pandas")
    report = _write_scalesim(tmp_path / "COMPUTE_REPORT.csv", [(0, 50, 40, 10, 1.0, 1.0, 1.0),
                                                                (1, 250, 240, 30, 5.0, 5.0, 5.0)])
    res = CliRunner().invoke(main, ["compare", "--hw", "eyeriss_like", "--mapping", str(tiny_m), "--layer", "conv_b",
                                    "--mode", "realistic", "--model", "analytical", "--scalesim-report", str(report)])
    assert res.exit_code == 0, res.output
    assert "cycle gap simulator - analytical = +" in res.output
    assert "cycle gap simulator - scalesim = " in res.output
    assert "stall_cycles" in res.output and "conv_a" not in res.output
    brief = CliRunner().invoke(main, ["compare", "--hw", "eyeriss_like", "--mapping", str(tiny_m), "--mode", "realistic",
                                      "--brief", "--no-attribution", "--scalesim-report", str(report)])
    assert brief.exit_code == 0, brief.output
    assert "metric" not in brief.output and "cycle gap" not in brief.output
    assert [line.split()[0] for line in brief.output.split("cycles per layer:")[1].splitlines()[2:4]] == ["conv_a", "conv_b"]


def test_cli_bad_maestro_csv_is_one_error_line(tmp_path, tiny_m, fake_analytical):
    bad = tmp_path / "bad.csv"
    bad.write_text("Layer, Cycles\nconv_a, 3\n")
    res = CliRunner().invoke(main, ["compare", "--hw", "eyeriss_like", "--mapping", str(tiny_m), "--maestro-csv", str(bad)])
    assert res.exit_code == 2
    assert res.output.startswith("error: ") and "missing column(s) Layer Number, Runtime (Cycles)" in res.output


def test_cli_runs_the_real_analytical_model_by_default(tiny_m):
    """Without --model or files, compare runs accelsim.analytical (wiring only: whether it
    agrees is the model's own tests' business)."""
    res = CliRunner().invoke(main, ["compare", "--hw", "eyeriss_like", "--mapping", str(tiny_m), "--mode", "maestro"])
    assert res.exit_code == 0, res.output
    assert "simulator (maestro mode) vs analytical" in res.output and "analytical: " in res.output


def test_unknown_model_is_an_input_error(tiny_m):
    name, jobs = jobs_from_maestro(tiny_m)
    with pytest.raises(InputError, match="unknown model"):
        compare_jobs(name, jobs, load_hardware("eyeriss_like"), "maestro", ["oracle"])
