"""Execution traces: the accounting identity between a trace and its result, tracing changes
no result, the Perfetto JSON is well formed, detail levels and filters, the DRAM request trace
covers every tensor byte, and the golden traces of two tiny layers match byte for byte
(``ACCELSIM_UPDATE_GOLDEN=1`` regenerates them)."""

from __future__ import annotations

import csv
import filecmp
import json
import os
import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.mapping.jobs import jobs_from_maestro, jobs_from_network, prepare
from accelsim.cli import main
from accelsim.errors import MappingError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import ClusterDirective as Cluster
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import check_fits, compile_mapping
from accelsim.mapping.styles import style_mapping
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.results import STALL_CAUSES
from accelsim.trace import TraceConfig, trace_jobs, trace_layer
from accelsim.trace.dram_requests import base_addresses, box_minus, box_words
from accelsim.trace.events import COMPONENT_GROUPS
from accelsim.workload.ops import Layer

GOLDEN_DIR = Path(__file__).parent.parent / "traces" / "golden"
GOLDEN_HW = ["pe_array.rows=2", "pe_array.cols=2", "l2.size_bytes=256", "dram.latency_cycles=20",
             "dram.burst_bytes=16"]
CSV_ONLY = TraceConfig(("csv",), "transfer")


def S(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def T(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _hw(*extra):
    base = ["pe_array.rows=3", "pe_array.cols=4", "l1.size_bytes=2048", "l2.size_bytes=4096",
            "distribution_noc.bandwidth_words_per_cycle=4", "l2.read_bandwidth_words_per_cycle=4",
            "reduction_noc.kind=tree", "reduction_noc.bandwidth_words_per_cycle=2",
            "dram.bandwidth_bytes_per_cycle=8", "dram.latency_cycles=20", "dram.burst_bytes=8"]
    return load_hardware("eyeriss_like", base + list(extra))


CONV = Layer.build("conv", "CONV2D", {"K": 7, "C": 5, "R": 3, "S": 3, "Y": 9, "X": 8})
GEMM = Layer.build("gemm", "GEMM", {"M": 9, "N": 7, "K": 10})
CASES = {
    "kcp_ragged": (CONV, [S(1, 1, "K"), T(4, 4, "C"), T(3, 1, "Y"), T(3, 1, "X"), Cluster(4, 0), S(1, 1, "C")]),
    "psum_spill": (CONV, [T(2, 2, "C"), S(1, 1, "K"), T(3, 1, "Y"), T(4, 2, "X")]),
    "gemm_tiled": (GEMM, [S(2, 2, "N"), T(4, 4, "K"), T(2, 2, "M"), Cluster(3, 0), S(2, 2, "K")]),
}
HARDWARE = {"tree": (), "no_reduction_network": ("reduction_noc.kind=none",),
            "single_buffered": ("l1.double_buffered=false", "l2.double_buffered=false")}


def _events(layer_dir: Path) -> list[dict]:
    with open(layer_dir / "events.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key in ("start_cycle", "end_cycle", "step", "words", "pes"):
            r[key] = int(r[key])
    return rows


def _without_run_figures(result) -> dict:
    d = result.to_dict()
    d.pop("events")
    d.pop("wall_seconds")
    return d


def assert_accounting_identity(rows: list[dict], result) -> None:
    """The trace reproduces the result's figures.

    The array's spans (compute and stall_<cause>) tile [0, cycles] without gap or overlap;
    their durations sum to compute_busy_cycles and to each stall cause; compute words sum to
    the MACs (so the trace's utilization MACs / (PEs x cycles) is the reported one); the
    distribution network carries noc_words; the DRAM channel reads every word counted as a
    DRAM read and writes every output word written back."""
    array = sorted((r for r in rows if r["component"] == "pe_array"), key=lambda r: r["start_cycle"])
    assert array[0]["start_cycle"] == 0 and array[-1]["end_cycle"] == result.cycles
    for before, after in zip(array, array[1:]):
        assert before["end_cycle"] == after["start_cycle"], (before, after)
    spans = Counter()
    for r in array:
        spans[r["kind"]] += r["end_cycle"] - r["start_cycle"]
    assert spans.pop("compute", 0) == result.compute_busy_cycles
    assert {k.removeprefix("stall_"): v for k, v in spans.items()} == {c: v for c, v in result.stall_cycles.items() if v}
    macs = sum(r["words"] for r in array if r["kind"] == "compute")
    assert macs == result.macs
    assert macs / (result.num_pes * result.cycles) == pytest.approx(result.pe_utilization)
    words = Counter()
    for r in rows:
        if r["kind"] in ("transfer", "read", "write"):
            words[(r["component"], r["kind"])] += r["words"]
    assert words[("distribution_noc", "transfer")] == result.noc_words
    assert words[("dram", "read")] == sum(a.dram_read for a in result.accesses.values())
    assert words[("dram", "write")] == result.accesses["output"].dram_write
    assert all(0 <= r["start_cycle"] <= r["end_cycle"] <= result.cycles for r in rows)
    assert max(r["end_cycle"] for r in rows) == result.cycles


# without a reduction network only mappings that reduce nothing across PEs are legal
COMBINATIONS = [(case, hw) for case in sorted(CASES) for hw in sorted(HARDWARE)
                if hw != "no_reduction_network" or case == "psum_spill"]


@pytest.mark.parametrize("case,hw_name", COMBINATIONS)
@pytest.mark.parametrize("mode", ["realistic", "maestro"])
def test_trace_accounts_for_every_cycle_and_changes_no_result(case, hw_name, mode, tmp_path):
    layer, dataflow = CASES[case]
    hw = _hw(*HARDWARE[hw_name])
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    traced = trace_layer(cm, hw, SimOptions(mode=mode), tmp_path, CSV_ONLY)
    assert _without_run_figures(traced) == _without_run_figures(simulate_layer(cm, hw, SimOptions(mode=mode)))
    assert_accounting_identity(_events(tmp_path), traced)


def test_pe_detail_adds_every_pe_and_packet(tmp_path):
    """Per-PE detail: each PE's computations sum to its MACs, and packets to the bursts."""
    layer, dataflow = CASES["kcp_ragged"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    result = trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("csv",), "pe"))
    rows = _events(tmp_path)
    assert_accounting_identity(rows, result)
    per_pe = sum(r["words"] for r in rows if re.fullmatch(r"pe\d+", r["component"]))
    assert per_pe == result.macs
    packets = sum(r["words"] for r in rows if r["component"] == "distribution_noc" and r["kind"] == "packet")
    assert packets == result.noc_words


def test_step_detail_has_one_span_per_network_and_step(tmp_path):
    layer, dataflow = CASES["psum_spill"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    trace_layer(cm, hw, SimOptions(), tmp_path / "t", CSV_ONLY)
    result = trace_layer(cm, hw, SimOptions(), tmp_path / "s", TraceConfig(("csv",), "step"))
    by_transfer = [r for r in _events(tmp_path / "t") if r["component"] == "distribution_noc"]
    by_step = [r for r in _events(tmp_path / "s") if r["component"] == "distribution_noc"]
    assert len(by_step) == len({r["step"] for r in by_transfer}) < len(by_transfer)
    assert sum(r["words"] for r in by_step) == sum(r["words"] for r in by_transfer) == result.noc_words
    assert any("+" in r["tensor"] for r in by_step)


def test_component_filter_keeps_only_the_named_components(tmp_path):
    layer, dataflow = CASES["kcp_ragged"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("csv",), "transfer", ("dram", "pe_array")))
    assert {r["component"] for r in _events(tmp_path)} == {"dram", "pe_array"}
    assert (tmp_path / "counters.csv").read_text() == "counter,cycle,value\n"


def test_perfetto_json_of_a_scenario_layer(tmp_path):
    """A MARVEL layer on eyeriss_like: the JSON parses; every event lies in [0, cycles]; the
    last one ends at the reported total; spans on one track never overlap (valid nesting);
    busy and stall time summed from the pe_array track equal the result's figures."""
    hw = load_hardware("eyeriss_like")
    _, jobs = jobs_from_network("marvel15", "nvdla_like", hw, "L4_Bottleneck6_2_2")
    result = trace_layer(prepare(jobs[0], hw), hw, SimOptions(), tmp_path, TraceConfig(("perfetto",)))
    doc = json.loads((tmp_path / "trace.json").read_text())
    events = doc["traceEvents"]
    timed = [e for e in events if e["ph"] != "M"]
    mhz = doc["otherData"]["clock_mhz"]  # ts and dur are microseconds: a cycle lasts 1 / clock_mhz us
    for e in timed:  # back to cycles (each a whole number of them)
        for key in ("ts", "dur"):
            if key in e:
                assert abs(e[key] * mhz - round(e[key] * mhz)) < 1e-6
                e[key] = round(e[key] * mhz)
    ends = [e["ts"] + e.get("dur", 0) for e in timed]
    assert min(e["ts"] for e in timed) >= 0 and max(ends) == result.cycles
    tracks = defaultdict(list)
    for e in timed:
        if e["ph"] == "X":
            tracks[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in tracks.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"dram (DMA channel)", "distribution_noc (L2 -> L1)", "reduction_noc (L1 -> L2)", "pe_array"} <= names
    busy = Counter()
    for e in timed:
        if e["ph"] == "X" and e["cat"] == "pe_array":
            busy[e["name"]] += e["dur"]
    assert busy.pop("compute") == result.compute_busy_cycles
    assert {k.removeprefix("stall: "): v for k, v in busy.items()} == {c: v for c, v in result.stall_cycles.items() if v}
    counters = {e["name"] for e in timed if e["ph"] == "C"}
    assert {"buffers in use: l2", "buffers in use: l1_operand", "buffers in use: l1_output",
            "bandwidth in use: dram (words/cycle)", "bandwidth in use: distribution_noc (words/cycle)"} <= counters
    assert doc["otherData"]["time_unit"] == "cycle"


def test_dram_trace_is_dramsim3_format_and_covers_every_byte(tmp_path):
    """Lines are ``0x<addr> READ|WRITE <cycle>`` in cycle order; the read bursts cover every
    byte of the input and weight tensors, the write bursts every output byte, each inside its
    tensor's address range (input at 0, then weight and output 4 KiB aligned)."""
    layer, dataflow = CASES["psum_spill"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    result = trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("dram",)))
    lines = (tmp_path / "dram.trace").read_text().splitlines()
    parsed = []
    for line in lines:
        m = re.fullmatch(r"0x([0-9a-f]+) (READ|WRITE) (\d+)", line)
        assert m, line
        parsed.append((int(m[1], 16), m[2], int(m[3])))
    cycles = [p[2] for p in parsed]
    assert cycles == sorted(cycles) and cycles[-1] <= result.cycles
    bases = base_addresses(cm.nest, hw.word_size_bytes)
    assert bases["input"] == 0 and bases["weight"] % 4096 == 0 and bases["output"] % 4096 == 0
    burst = hw.dram.burst_bytes
    for role, op in (("input", "READ"), ("weight", "READ"), ("output", "WRITE")):
        size = box_words(([0] * 4, [e - 1 for e in cm.nest.extents(role)])) * hw.word_size_bytes
        wanted = set(range(bases[role] // burst * burst, bases[role] + size, burst))
        got = {a for a, o, _ in parsed if o == op and bases[role] <= a + burst - 1 and a < bases[role] + size}
        assert got == wanted, role
    # partial sums spilled to DRAM are read back: output addresses appear as reads too
    assert any(o == "READ" and a >= bases["output"] for a, o, _ in parsed) == (result.accesses["output"].dram_read > 0)


boxes = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4)), min_size=1, max_size=4)


@given(boxes, boxes)
def test_box_minus_covers_exactly_the_part_outside(a, b):
    n = min(len(a), len(b))
    box = ([lo for lo, _ in a[:n]], [lo + ext for lo, ext in a[:n]])
    prev = ([lo for lo, _ in b[:n]], [lo + ext for lo, ext in b[:n]])
    pieces = box_minus(box, prev)
    cells = set()
    for lo, hi in pieces:
        piece = {()}
        for low, h in zip(lo, hi):
            piece = {c + (i,) for c in piece for i in range(low, h + 1)}
        assert not cells & piece  # disjoint
        cells |= piece
    inside = lambda c, bx: all(low <= i <= h for i, low, h in zip(c, *bx))  # noqa: E731
    everything = {()}
    for low, h in zip(*box):
        everything = {c + (i,) for c in everything for i in range(low, h + 1)}
    assert cells == {c for c in everything if not inside(c, prev)}
    assert sum(box_words(p) for p in pieces) == len(cells)


def test_parquet_holds_the_same_rows_as_csv(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    layer, dataflow = CASES["gemm_tiled"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("parquet", "csv")))
    for name in ("events", "counters"):
        table = pq.read_table(tmp_path / f"{name}.parquet").to_pylist()
        with open(tmp_path / f"{name}.csv", encoding="utf-8", newline="") as f:
            rows = [{k: (v if k in ("component", "kind", "tensor", "counter") else int(v)) for k, v in r.items()}
                    for r in csv.DictReader(f)]
        assert table == rows and rows


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(1, 6), c=st.integers(1, 6), r=st.integers(1, 3), y=st.integers(0, 4), stride=st.integers(1, 2),
       style=st.sampled_from(["nvdla_like", "eyeriss_like", "shidiannao_like", "maeri_like"]),
       preset=st.sampled_from(["eyeriss_like", "flash_edge", "dmazerunner_16x16"]),
       mode=st.sampled_from(["realistic", "maestro"]))
def test_accounting_identity_holds_for_styled_mappings(k, c, r, y, stride, style, preset, mode, tmp_path_factory):
    layer = Layer.build("L", "CONV2D", {"K": k, "C": c, "R": r, "S": r, "Y": r + y, "X": r + y + 1}, stride, stride)
    hw = load_hardware(preset)
    try:
        cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
    except MappingError:
        return
    if check_fits(cm, hw.l1.size_bytes, hw.l2.size_bytes, hw.word_size_bytes, hw.l1.double_buffered,
                  hw.l2.double_buffered):
        return
    out = tmp_path_factory.mktemp("trace")
    traced = trace_layer(cm, hw, SimOptions(mode=mode), out, CSV_ONLY)
    assert_accounting_identity(_events(out), traced)


def _golden_run(out: Path) -> None:
    hw = load_hardware("eyeriss_like", GOLDEN_HW)
    name, jobs = jobs_from_maestro(GOLDEN_DIR / "tiny.m")
    trace_jobs(name, jobs, hw, SimOptions(), out, TraceConfig(("perfetto", "csv", "dram")))


def test_golden_traces_match_byte_for_byte(tmp_path):
    _golden_run(tmp_path)
    if os.environ.get("ACCELSIM_UPDATE_GOLDEN"):
        for layer_dir in tmp_path.iterdir():
            shutil.rmtree(GOLDEN_DIR / layer_dir.name, ignore_errors=True)
            shutil.copytree(layer_dir, GOLDEN_DIR / layer_dir.name)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    pinned = sorted(p.relative_to(GOLDEN_DIR) for p in GOLDEN_DIR.rglob("*") if p.is_file() and p.parent != GOLDEN_DIR)
    assert made == pinned
    for rel in made:
        assert filecmp.cmp(tmp_path / rel, GOLDEN_DIR / rel, shallow=False), f"{rel} differs from the golden trace"


def test_cli_traces_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    runner = CliRunner()
    trace_dir = tmp_path / "t"
    args = ["simulate", "--hw", "eyeriss_like", *sum((["--set", s] for s in GOLDEN_HW), []),
            "--mapping", str(GOLDEN_DIR / "tiny.m"), "--layer", "gemm", "--trace", str(trace_dir),
            "--trace-format", "perfetto,csv", "--trace-detail", "step", "--trace-components", "pe_array,dram,buffers"]
    ok = runner.invoke(main, args)
    assert ok.exit_code == 0, ok.output
    again = runner.invoke(main, args)
    assert again.exit_code == 2 and "not empty" in again.output
    plotted = runner.invoke(main, ["plot", str(trace_dir)])
    assert plotted.exit_code == 0, plotted.output
    pngs = sorted(p.name for p in (trace_dir / "00_gemm").glob("*.png"))
    assert pngs == sorted(["bandwidth.png", "buffers.png", "overview.png", "pe_utilization.png", "stalls.png"])
    assert all((trace_dir / "00_gemm" / p).read_bytes()[:4] == b"\x89PNG" for p in pngs)
    assert runner.invoke(main, ["plot", str(trace_dir)]).exit_code == 2  # figures exist: --force
    assert runner.invoke(main, ["plot", str(tmp_path)]).exit_code == 2  # not a trace directory


@pytest.mark.parametrize("option,value,message", [
    ("--trace-format", "perfetto,svg", "--trace-format: unknown name(s) svg"),
    ("--trace-components", "dram,l3", "--trace-components: unknown name(s) l3"),
])
def test_cli_refuses_unknown_trace_names(option, value, message, tmp_path):
    result = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--mapping", str(GOLDEN_DIR / "tiny.m"),
                                       "--set", "pe_array.rows=2", "--set", "pe_array.cols=2",
                                       "--trace", str(tmp_path / "t"), option, value])
    assert result.exit_code == 2 and message in result.output


def test_binned_plot_data_conserve_the_totals(tmp_path):
    """Spreading spans over time bins loses nothing: MACs, stall cycles and words per network
    summed over the bins equal the trace's totals."""
    from accelsim.trace.plot import bin_trace

    layer, dataflow = CASES["psum_spill"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    result = trace_layer(cm, hw, SimOptions(), tmp_path, CSV_ONLY)
    _, binned = bin_trace(tmp_path, 37)
    assert binned.per_bin("macs").sum() == pytest.approx(result.macs)
    for cause in STALL_CAUSES:
        assert binned.per_bin(f"stall_{cause}").sum() == pytest.approx(result.stall_cycles[cause])
    assert binned.per_bin("distribution_noc").sum() == pytest.approx(result.noc_words)
    buffers_time = binned.per_bin("l1_operand").sum()
    assert 0 < buffers_time <= 2 * result.cycles


def test_component_groups_are_documented():
    readme = (GOLDEN_DIR.parent / "README.md").read_text()
    for group in COMPONENT_GROUPS:
        assert f"`{group}`" in readme


def test_the_stall_after_the_last_step_is_counted_once(tmp_path):
    """Regression found by the trace: with a 2-stage MAC (dmazerunner_16x16), the last step's
    wait for an output buffer and the tail's pipeline drain covered the same cycle, so busy +
    stalls came to 158 for a 157-cycle run. 2x1x3 outputs, one channel, nvdla_like.

    Issue 17 (a step's words share the bus's width): step 0 sends 1 input word (multicast) and
    2 weight words (one per PE) on the 3-word bus: ceil(3 / 3) = 1 cycle, where packet by
    packet it took 1 + 1 + 1 = 3; the five later steps send one word each either way, so the
    run is 2 cycles shorter: 155."""
    layer = Layer.build("L", "CONV2D", {"K": 2, "C": 1, "R": 1, "S": 1, "Y": 2, "X": 3})
    hw = load_hardware("dmazerunner_16x16")
    cm = compile_mapping(layer, style_mapping("nvdla_like", layer, hw), hw.num_pes)
    result = trace_layer(cm, hw, SimOptions(), tmp_path, CSV_ONLY)
    assert result.compute_busy_cycles + sum(result.stall_cycles.values()) == result.cycles == 155
    assert_accounting_identity(_events(tmp_path), result)


def test_parquet_falls_back_to_csv_without_pyarrow(tmp_path, monkeypatch):
    import accelsim.trace.run as run

    monkeypatch.setattr(run, "has_pyarrow", lambda: False)
    layer, dataflow = CASES["gemm_tiled"]
    hw = _hw()
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    with pytest.warns(run.ParquetFallbackWarning, match="pyarrow is not installed"):
        trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("parquet",)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counters.csv", "events.csv", "meta.json"]


def test_writers_memory_does_not_grow_with_the_trace(tmp_path, monkeypatch):
    """Streaming: the peak memory of recorder and writers for 12,000 steps is that for
    3,000 (tables flushed every 512 rows here), within 128 KiB."""
    import tracemalloc

    import accelsim.trace.table as table
    from accelsim.trace.events import TraceRecorder
    from accelsim.trace.perfetto import PerfettoWriter
    from accelsim.trace.table import TableWriter

    monkeypatch.setattr(table, "ROWS_PER_GROUP", 512)

    def peak(events: int) -> int:
        out = tmp_path / str(events)
        out.mkdir()
        tracemalloc.start()
        writers = [PerfettoWriter(out / "trace.json", "t", {}), TableWriter(out, has_parquet)]
        recorder = TraceRecorder(TraceConfig(), writers, [], lambda: 0)
        for i in range(events):
            recorder("distribution_noc", "transfer", 10 * i, 10 * i + 4, i, "input", 40, 0)
            recorder("pe_array", "compute", 10 * i + 4, 10 * i + 10, i, "", 400, 8)
            recorder.level("l1_operand", 10 * i, i % 2 + 1, 2)
        recorder.close()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    has_parquet = table.has_pyarrow()
    peak(600)  # warm up imports and caches
    assert peak(12000) - peak(3000) < 128 * 1024


def test_plot_bins_show_the_range_within_each_bin_instead_of_aliasing():
    """A square wave of period 4,000 cycles (busy 2,000, idle 2,000) over 1,604,000 cycles in 400
    bins of 4,010 cycles: the bin averages drift between 0.4988 and 0.5012 in a slow beat (the
    alias), while each bin's band, from its 64 sub-bins of about 63 cycles, spans the real range
    0 to 1. The averages stay exact: the amounts per bin add up to the busy cycles."""
    import numpy as np

    from accelsim.trace.plot import SUB_BINS, _Binned

    cycles, period = 1_604_000, 4000
    start = np.arange(0, cycles, period)
    end = start + period // 2
    binned = _Binned(0, cycles, 400, SUB_BINS)
    binned.add("busy", start, end, (end - start).astype(float))
    average = binned.per_bin("busy") / binned.width
    low, high = binned.band("busy")
    assert abs(binned.per_bin("busy").sum() - (end - start).sum()) < 1e-6
    assert 0.45 < average.min() < average.max() < 0.55
    assert np.allclose(low, 0) and np.allclose(high, 1)
