"""``l2.keeps``: an operand L2 does not keep bypasses it; its words go between DRAM and the PEs
directly (README, "Hardware fields" and "Timing and counting rules"; ``accelsim/mapping/tiles.py``)."""

from __future__ import annotations

import csv
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.analytical.model import analyze_layer
from accelsim.errors import InputError
from accelsim.functional import simulate_functional
from accelsim.hw.loader import dump_hardware, load_hardware
from accelsim.maestro.model import hardware_of
from accelsim.mapping.compile import check_fits, compile_mapping
from accelsim.sim.engine import LayerSimulation, SimOptions, simulate_layer
from accelsim.trace.events import TraceConfig
from accelsim.trace.run import trace_layer
from test_l2_prefetch import CONV, CONV_MAPPINGS, FC, FC_MAPPING  # noqa: E402  (tests/ is on sys.path)
from test_trace import CASES as TRACE_CASES  # noqa: E402  (tests/ is on sys.path)
from test_trace import _events, _without_run_figures, assert_accounting_identity  # noqa: E402
from test_trace import _hw as _trace_hw  # noqa: E402


def _hw(l2_bytes: int, keeps: str = "input,weight,output", pes: int = 1, extra: tuple[str, ...] = ()):
    """1-byte words; DRAM 1 byte/cycle with 1-byte bursts and no latency (a transfer of w
    words takes w cycles); L2 single-buffered without prefetch; buses of 1 word/cycle, 1 cycle
    latency; 1 MAC per PE per cycle; L1 double-buffered."""
    return load_hardware("maestro_default", [
        f"pe_array.count={pes}", "pe_array.macs_per_pe_per_cycle=1", "pe_array.mac_pipeline_latency_cycles=1",
        "l1.size_bytes=4096", f"l2.size_bytes={l2_bytes}", "l2.double_buffered=false", "l2.prefetch=none",
        f"l2.keeps=[{keeps}]",
        "l2.read_bandwidth_words_per_cycle=1", "l2.write_bandwidth_words_per_cycle=1",
        "distribution_noc.kind=bus", "distribution_noc.multicast=true",
        "distribution_noc.bandwidth_words_per_cycle=1", "distribution_noc.latency_cycles=1",
        "reduction_noc.kind=tree", "reduction_noc.bandwidth_words_per_cycle=1",
        "reduction_noc.latency_cycles_per_hop=1",
        "dram.model=simple", "dram.bandwidth_bytes_per_cycle=1", "dram.latency_cycles=0", "dram.burst_bytes=1",
        "word_size_bytes=1", *extra])


def test_weights_bypassing_l2_by_hand():
    """FC K=3, C=4 on one PE, one MAC per step (12 steps, step s = (k, c) = (s // 4, s % 4)),
    L2 of 14 words, weights bypassing L2.

    L2 keeps inputs (4 words) and outputs (3): the whole layer's 7 kept words fit 14, so there
    is one L2 tile (with every tensor kept the layer's 4 + 12 + 3 = 19 words would not, and
    there would be 3 tiles). The smallest tile (one iteration of the two level-0 loops) holds 1
    input and 1 output word: l2_required_words 2 (3 with weights kept).

    Every step sends 1 input word (c changes every step) and 1 weight word ((k, c) changes
    every step): 12 + 12 words on the network. The tile's DMA read is its 4 inputs (one run)
    plus the 12 weight words its steps need, one run (packet) each: 16 words, 13 runs. The
    DRAM kind rounds each run of the transfer's mean length up to bursts: 13 runs of
    ceil(16 / 13) = 2 one-byte bursts, 26 bytes at 1 byte/cycle: 26 cycles (0..26; 16 with
    weights kept in an L2 that holds the layer, 2 runs).

    Counts: input DRAM read 4 = L2 write 4, L2 read 12 (one per word sent), L1 write 12;
    weight DRAM read 12, L2 read 0, L2 write 0, L1 write 12; output L2 write 3 (drains),
    L2 read 3 and DRAM write 3 (write-back). MACs 12.

    Cycles: step s is sent at 26 + 2s..28 + 2s (2 words at 1 word/cycle; L1 double-buffered, so
    the network never waits for the MACs), arrives 1 cycle later and computes 29 + 2s..30 + 2s;
    step 11 computes 51..52, drains output 2 in 52..53, and the tile's 3 outputs are written
    back 53..56: 56 cycles.
    """
    hw = _hw(14, "input,output")
    cm = compile_mapping(FC, FC_MAPPING, hw.num_pes)
    sim = LayerSimulation(cm, hw)
    r = sim.run()
    assert sim.tiles.count == 1
    tile = sim.tiles.traffic(0)
    assert tile.read_words == {"input": 4, "weight": 12, "output": 0}
    assert sum(tile.read_runs.values()) == 13
    assert (tile.footprint_words, tile.kept_words) == (7, 0)
    assert r.l2_required_bytes == 2
    assert r.macs == 12
    acc = r.accesses
    assert (acc["input"].dram_read, acc["input"].l2_write, acc["input"].l2_read, acc["input"].l1_write) == (4, 4, 12, 12)
    assert (acc["weight"].dram_read, acc["weight"].l2_read, acc["weight"].l2_write, acc["weight"].l1_write) == \
        (12, 0, 0, 12)
    assert (acc["output"].l2_write, acc["output"].l2_read, acc["output"].dram_write) == (3, 3, 3)
    assert r.noc_words == 24
    assert r.cycles == 56
    assert analyze_layer(cm, hw, "realistic").cycles == 56
    assert analyze_layer(cm, hw, "realistic").accesses == r.accesses
    # with every tensor kept: three tiles and 3 words the smallest tile needs
    kept = simulate_layer(cm, _hw(14))
    assert kept.l2_required_bytes == 3 and kept.accesses["weight"].l2_read == 12


def test_bypassed_runs_round_to_bursts():
    """The same layer with 4-byte bursts: the tile's 16 words in 13 runs are 13 runs of
    ceil(ceil(16 / 13) / 4) = 1 burst, 52 bytes: 52 cycles instead of 26, so every step is 26
    cycles later than by hand above, and the write-back of the 3 outputs (one run) is one
    4-byte burst, 4 cycles instead of 3: 56 + 26 + 1 = 83."""
    hw = _hw(14, "input,output", extra=("dram.burst_bytes=4",))
    cm = compile_mapping(FC, FC_MAPPING, hw.num_pes)
    assert simulate_layer(cm, hw).cycles == 83
    assert analyze_layer(cm, hw, "realistic").cycles == 83


@settings(max_examples=10, deadline=None)
@given(mapping=st.sampled_from(sorted(CONV_MAPPINGS)), l2_bytes=st.integers(40, 450),
       bypass=st.sampled_from(["input", "weight", "input,weight"]), prefetch=st.booleans(),
       mode=st.sampled_from(["realistic", "maestro"]))
def test_bypass_properties_and_models_agree(mapping, l2_bytes, bypass, prefetch, mode):
    """Bypass never changes MACs or the words on the network; a bypassed tensor is never read
    from or written to L2 and its DRAM reads are the words the PEs needed of it (what L2 sends
    of it when kept); the simulator with and without warps and the analytical model agree on
    cycles, stalls and accesses."""
    bypassed = bypass.split(",")
    keeps = ",".join(t for t in ("input", "weight", "output") if t not in bypassed)
    extra = ("l2.prefetch=free_space",) if prefetch else ()
    hw = _hw(l2_bytes, keeps, pes=4, extra=("dram.bandwidth_bytes_per_cycle=2", "dram.burst_bytes=2", *extra))
    full = _hw(l2_bytes, pes=4, extra=("dram.bandwidth_bytes_per_cycle=2", "dram.burst_bytes=2", *extra))
    cm = compile_mapping(CONV, CONV_MAPPINGS[mapping], hw.num_pes)
    options = SimOptions(mode=mode)
    warped = simulate_layer(cm, hw, options)
    plain = simulate_layer(cm, hw, SimOptions(mode=mode, fast_forward=False))
    model = analyze_layer(cm, hw, mode)
    kept = simulate_layer(cm, full, options)
    assert warped.macs == kept.macs == model.macs
    assert warped.noc_words == kept.noc_words == model.noc_words
    for role in bypassed:
        assert warped.accesses[role].l2_read == warped.accesses[role].l2_write == 0
        assert warped.accesses[role].dram_read == kept.accesses[role].l2_read
        assert warped.accesses[role].l1_write == kept.accesses[role].l1_write
    for field in ("l1_read", "l1_write"):  # the outputs' L2/DRAM traffic follows the tiles, which bypass enlarges
        assert getattr(warped.accesses["output"], field) == getattr(kept.accesses["output"], field)
    assert warped.cycles == plain.cycles == model.cycles
    assert warped.stall_cycles == plain.stall_cycles == model.stall_cycles
    assert warped.accesses == plain.accesses == model.accesses


def test_the_fit_check_leaves_bypassed_tensors_out():
    """The nominal L2 tile of FC_MAPPING (one level-0 iteration) is 1 input, 1 weight and 1
    output word (3 bytes at 1-byte words): a 2-byte L2 overflows with weights kept and holds
    it with them bypassed (2 bytes)."""
    cm = compile_mapping(FC, FC_MAPPING, 1)
    assert [p.reason for p in check_fits(cm, 4096, 2, 1, False, False)] == ["l2_overflow"]
    assert check_fits(cm, 4096, 2, 1, False, False, frozenset({"weight"})) == []


def test_keeps_in_both_forms_and_defaults_unchanged(tmp_path):
    """``l2.keeps`` in the shorthand and in the levels list give the same spec; the default
    (every tensor) dumps without the field, so every preset's spec and hash are unchanged."""
    short = load_hardware("eyeriss_like", ["l2.keeps=[input,output]"])
    data = yaml.safe_load(dump_hardware(load_hardware("eyeriss_like")))
    l1, l2 = data.pop("l1"), data.pop("l2")
    data["levels"] = [
        {"name": "L1", "instances": "per_pe", "size_bytes": l1["size_bytes"], "double_buffered": l1["double_buffered"]},
        {"name": "L2", "instances": "shared", "size_bytes": l2["size_bytes"], "double_buffered": l2["double_buffered"],
         "read_bandwidth_words_per_cycle": l2["read_bandwidth_words_per_cycle"],
         "write_bandwidth_words_per_cycle": l2["write_bandwidth_words_per_cycle"], "keeps": ["input", "output"]},
        {"name": "DRAM", "instances": "shared", "kind": "dram"}]
    path = tmp_path / "levels.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_hardware(path) == short
    assert short.l2.bypassed == {"weight"}
    assert short.levels[-2].keeps == ("input", "output")
    assert "keeps" not in load_hardware("eyeriss_like").model_dump()["l2"]
    assert load_hardware("eyeriss_like", ["l2.keeps=[input,weight,output]"]) == load_hardware("eyeriss_like")


def test_what_is_not_modelled_is_refused():
    """Outputs bypassing L2 and the MAESTRO model: one InputError each."""
    with pytest.raises(InputError, match="output must be kept"):
        load_hardware("eyeriss_like", ["l2.keeps=[input,weight]"])
    with pytest.raises(InputError, match="MAESTRO's shared buffer holds every tensor"):
        hardware_of(_hw(14, "input,output"))


def test_trace_of_bypassed_weights_by_hand(tmp_path):
    """The trace of :func:`test_weights_bypassing_l2_by_hand` (FC K=3, C=4, weights bypass
    L2, one tile): the tile's one DRAM ``read`` spans 0..26 and carries its 4 input words and
    the 12 weight words its steps need (16); the distribution network sends 12 input and 12
    weight words, one of each per step; the 3 outputs are written back in 53..56; the ``l2``
    counter never exceeds the one tile; meta.json names the bypassed weights.

    dram.trace (1-byte words and bursts): input at byte 0 (4 bytes), weight at the next 4 KiB
    boundary 0x1000 (12 bytes), output at 0x2000: reads 0x0..0x3 and 0x1000..0x100b (the
    weight box, each block once; here every weight word is needed once, so 16 requests as the
    span's 16 words), writes 0x2000..0x2002 from cycle 53."""
    hw = _hw(14, "input,output")
    cm = compile_mapping(FC, FC_MAPPING, hw.num_pes)
    r = trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("csv", "dram")))
    rows = _events(tmp_path)
    assert_accounting_identity(rows, r)
    dram = [(e["kind"], e["start_cycle"], e["end_cycle"], e["words"]) for e in rows if e["component"] == "dram"]
    assert dram == [("read", 0, 26, 16), ("write", 53, 56, 3)]
    sent = {t: sum(e["words"] for e in rows if e["component"] == "distribution_noc" and e["tensor"] == t)
            for t in ("input", "weight")}
    assert sent == {"input": 12, "weight": 12}
    with open(tmp_path / "counters.csv", encoding="utf-8") as f:
        assert max(int(c["value"]) for c in csv.DictReader(f) if c["counter"] == "l2") == 1
    assert json.loads((tmp_path / "meta.json").read_text())["l2_bypassed"] == ["weight"]
    lines = [line.split() for line in (tmp_path / "dram.trace").read_text().splitlines()]
    assert [int(a, 16) for a, op, _ in lines if op == "READ"] == list(range(4)) + list(range(0x1000, 0x100c))
    assert [(int(a, 16), int(c)) for a, op, c in lines if op == "WRITE"] == [(0x2000, 53), (0x2001, 54), (0x2002, 55)]


@pytest.mark.parametrize("case", sorted(TRACE_CASES))
@pytest.mark.parametrize("keeps", ["[input,output]", "[weight,output]", "[output]"])
def test_traces_and_values_follow_bypass(case, keeps, tmp_path):
    """On the trace tests' small layers with an operand (or both) bypassing L2: tracing
    changes no result, the trace accounts for every cycle, MAC and word (its DRAM reads
    include the streamed words), and the functional check passes (a bypassed operand's values
    come from DRAM; read from the L2 tile, which holds none of it, they would be 0)."""
    layer, dataflow = TRACE_CASES[case]
    hw = _trace_hw(f"l2.keeps={keeps}")
    assert hw.l2.bypassed
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    traced = trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("csv", "dram")))
    assert _without_run_figures(traced) == _without_run_figures(simulate_layer(cm, hw))
    assert_accounting_identity(_events(tmp_path), traced)
    _, report = simulate_functional(cm, hw)
    assert report.passed and report.macs_missing == report.macs_duplicated == 0, report.problem_messages


def test_functional_fc_with_bypassed_weights_passes():
    """The hand case: 3 outputs, 12 MACs, each once, weights from DRAM."""
    hw = _hw(14, "input,output")
    cm = compile_mapping(FC, FC_MAPPING, hw.num_pes)
    result, report = simulate_functional(cm, hw)
    assert report.passed, report.problem_messages
    assert (report.outputs, report.macs_executed, report.macs_duplicated) == (3, 12, 0)
    assert result.cycles == 56


@pytest.mark.slow
def test_eyeriss_chip_conv5_traces_and_computes(tmp_path):
    """eyeriss_chip (filters bypass the global buffer) on AlexNet CONV5: the trace accounts
    for the result and the functional check passes (int8, exact)."""
    from accelsim.mapping.jobs import jobs_from_network, prepare

    hw = load_hardware("eyeriss_chip")
    _, jobs = jobs_from_network("eyeriss_alexnet", None, hw)
    cm = prepare(next(j for j in jobs if j.layer.name == "CONV5"), hw)
    traced = trace_layer(cm, hw, SimOptions(), tmp_path, TraceConfig(("csv",)))
    assert_accounting_identity(_events(tmp_path), traced)
    result, report = simulate_functional(cm, hw)
    assert report.passed, report.problem_messages
    assert _without_run_figures(result) == _without_run_figures(traced)


def test_eyeriss_chip_filters_bypass_the_global_buffer():
    """eyeriss_chip keeps inputs and outputs in its global buffer (JSSC Table III allocates no
    filter space there): on CONV5 a pass's tile holds its ifmap and psums (5,400 + 43,264 =
    48,664 words) and the next pass brings 5,400 new ifmap words (it keeps the psums), so 48,664
    + 5,400 = 54,064 fit the 55,296 words (with filters kept, 52,120 + 8,856 did not): the DMA
    fetches them while the pass computes and the layer is faster (README, Validation); the
    filters are read from DRAM as often as with them kept, never from L2; both models agree."""
    from accelsim.mapping.jobs import jobs_from_network, prepare

    hw = load_hardware("eyeriss_chip")
    assert hw.l2.bypassed == {"weight"}
    _, jobs = jobs_from_network("eyeriss_alexnet", None, hw)
    cm = prepare(next(j for j in jobs if j.layer.name == "CONV5"), hw)
    sim = LayerSimulation(cm, hw)
    r = sim.run()
    tile = sim.tiles.traffic(1)
    assert (tile.footprint_words, tile.footprint_words - tile.kept_words) == (48_664, 5_400)
    assert 48_664 + 5_400 <= hw.l2.size_bytes // hw.word_size_bytes
    kept = simulate_layer(cm, load_hardware("eyeriss_chip", ["l2.keeps=[input,weight,output]"]))
    assert r.cycles < kept.cycles
    assert r.accesses["weight"].dram_read == kept.accesses["weight"].dram_read
    assert r.accesses["weight"].l2_read == r.accesses["weight"].l2_write == 0
    model = analyze_layer(cm, hw, "realistic")
    assert (model.cycles, model.accesses) == (r.cycles, r.accesses)
