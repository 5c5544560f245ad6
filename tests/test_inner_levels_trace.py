"""Register files inside the PE in traces: per step, per level and tensor, the words read and
written (events table rows, Perfetto counters), by hand on a small case where a level holds
the weights whole; summed over the steps they equal the layer's totals (``meta.json``'s
``level_accesses``)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.hw.loader import load_hardware
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import style_mapping
from accelsim.sim.engine import SimOptions
from accelsim.trace.events import TraceConfig
from accelsim.trace.run import trace_layer
from accelsim.workload.ops import Layer, OpType
from tests.test_inner_levels import PER_K, RF7, RF24, SMALL, T, _hw

# one PE; steps: K outermost (2), then Y' (3: input windows of 3 rows advancing by 1); each
# step's box is K1 Y'1 X'3 C1 R3 S3 (27 MACs)
ROWS = [T(1, 1, "K"), T(1, 1, "C"), T(3, 1, "Y"), T(5, 5, "X")]


def _events(path) -> pd.DataFrame:
    return pd.read_csv(next(path.glob("events.csv")), keep_default_na=False)


def test_per_step_counts_by_hand(tmp_path):
    """RF1 (24 B, 1-byte words) holds C R S (19 words: 9 inputs, 9 weights, 1 output; X' C R S
    would be 15 + 9 + 3 = 27). Its outer loop X' (3) steps twice per step.
    Inputs: a 3x3 window, then 3 new words per X' step: 9 + 2 x 3 = 15 written, 27 read (one
    per MAC). Weights: no loop outside RF1 in the step indexes them (K is 1 in the box), so RF1
    holds them whole, as L1 does: written what L1 takes in, the filter at the first step of
    each K (9) and nothing while Y' moves under the same filter (L1 keeps it); read 27.
    Outputs: 3 per step (one per X'), read and written 27 + 3 = 30.
    Six steps: inputs 162 / 90, weights 162 / 18, outputs 180 / 180; meta.json's totals are
    the same."""
    hw = _hw(tmp_path, [RF24])
    cm = compile_mapping(SMALL, ROWS, hw.num_pes)
    out = tmp_path / "trace"
    result = trace_layer(cm, hw, SimOptions(mode="maestro"), out, TraceConfig(("csv",), "step"))
    assert result.steps == 6 and result.inner_loops == {"RF1": ["C", "R", "S"]}
    events = _events(out)
    rf = events[events["component"] == "RF1"]
    got = {(int(r.step), r.tensor, r.kind): int(r.words) for r in rf.itertuples()}
    expected = {}
    for step in range(6):
        expected |= {(step, "input", "read"): 27, (step, "input", "write"): 15, (step, "weight", "read"): 27,
                     (step, "output", "read"): 30, (step, "output", "write"): 30}
        if step % 3 == 0:
            expected[(step, "weight", "write")] = 9
    assert got == expected
    compute = events[(events["component"] == "pe_array") & (events["kind"] == "compute")].set_index("step")
    for r in rf.itertuples():  # each spans its step's compute span, over the step's active PEs
        assert (r.start_cycle, r.end_cycle, r.pes) == tuple(compute.loc[r.step, ["start_cycle", "end_cycle", "pes"]])
    meta = json.loads((out / "meta.json").read_text())
    assert meta["result"]["level_accesses"]["RF1"] == {"input": {"read": 162, "write": 90},
                                                       "weight": {"read": 162, "write": 18},
                                                       "output": {"read": 180, "write": 180}}
    assert meta["result"]["inner_loops"] == {"RF1": ["C", "R", "S"]}


@pytest.mark.parametrize("style", ["eyeriss_like", "nvdla_like", "shidiannao_like"])
def test_steps_add_up_to_the_layer_totals(tmp_path, style):
    """On interstellar_rf2 (RF16 in each of 256 PEs), a small convolution in three styles: the
    register-file rows of the events table, summed per tensor and kind, equal meta.json's
    ``level_accesses`` (the closed form over box classes); the Perfetto trace has one rate
    counter per level, tensor and kind."""
    hw = load_hardware("interstellar_rf2")
    layer = Layer.build("c", OpType.CONV2D, {"K": 24, "C": 6, "R": 3, "S": 3, "Y": 9, "X": 9})
    cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
    out = tmp_path / style
    trace_layer(cm, hw, SimOptions(), out, TraceConfig(("csv", "perfetto"), "transfer"))
    events = _events(out)
    rf = events[events["component"] == "RF16"]
    sums = rf.groupby(["tensor", "kind"])["words"].sum()
    totals = json.loads((out / "meta.json").read_text())["result"]["level_accesses"]["RF16"]
    assert {(t, k): v for t, per in totals.items() for k, v in per.items() if v} == \
        {k: int(v) for k, v in sums.items()}
    trace = json.loads((out / "trace.json").read_text())
    counters = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "C" and e["name"].startswith("register")}
    assert counters == {f"register file RF16: {t} {k} (words/cycle)" for t in totals for k in ("read", "write")}


@pytest.mark.parametrize("detail", ["step", "pe"])
def test_two_register_files_on_two_pes_add_up(tmp_path, detail):
    """Two register files (RF0 7 B, RF1 24 B) on two PEs, one filter each (tests/
    test_inner_levels.py's two-level design), at step and per-PE detail: per level and tensor
    the steps' rows add up to meta.json's totals. RF1's by hand: inputs 162 / 82 and weights
    162 / 18 (written as there with RF1 alone; read by RF0's fills: RF0 holds S, and each of its
    27 outer iterations per PE (Y' 3, X' 3, R 3) brings a new filter row of 3 of each: 81 per
    PE), outputs 36 both (RF0's 18 output fills, one per output, and RF1's own 18)."""
    hw = _hw(tmp_path, [RF7, RF24], pes=2)
    cm = compile_mapping(SMALL, PER_K, hw.num_pes)
    out = tmp_path / detail
    trace_layer(cm, hw, SimOptions(mode="maestro"), out, TraceConfig(("csv",), detail))
    events = _events(out)
    totals = json.loads((out / "meta.json").read_text())["result"]["level_accesses"]
    assert totals["RF1"] == {"input": {"read": 162, "write": 82}, "weight": {"read": 162, "write": 18},
                             "output": {"read": 36, "write": 36}}
    for level in ("RF0", "RF1"):
        rows = events[events["component"] == level]
        sums = {k: int(v) for k, v in rows.groupby(["tensor", "kind"])["words"].sum().items()}
        assert sums == {(t, k): v for t, per in totals[level].items() for k, v in per.items() if v}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(1, 40), c=st.integers(1, 12), r=st.integers(1, 3), y=st.integers(3, 12), stride=st.integers(1, 2),
       style=st.sampled_from(["eyeriss_like", "nvdla_like", "shidiannao_like", "tpu_like"]))
def test_steps_add_up_on_random_layers(tmp_path_factory, k, c, r, y, stride, style):
    """Random small convolutions on interstellar_rf2 (ragged tiles and strides included): the
    trace's per-step register-file rows, summed, equal the closed form's totals."""
    hw = load_hardware("interstellar_rf2")
    layer = Layer.build("c", OpType.CONV2D, {"K": k, "C": c, "R": r, "S": r, "Y": y, "X": y}, stride, stride)
    cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
    out = tmp_path_factory.mktemp("t")
    result = trace_layer(cm, hw, SimOptions(), out, TraceConfig(("csv",), "step"))
    events = _events(out)
    sums = events[events["component"] == "RF16"].groupby(["tensor", "kind"])["words"].sum()
    totals = {(t, "read"): a.read for t, a in result.inner_accesses["RF16"].items()} | \
        {(t, "write"): a.write for t, a in result.inner_accesses["RF16"].items()}
    assert {key: v for key, v in totals.items() if v} == {key: int(v) for key, v in sums.items()}


def test_components_filter_keeps_them_with_the_array(tmp_path):
    """The register files' rows go with the ``pe_array`` component group: without it, none."""
    hw = _hw(tmp_path, [RF24])
    cm = compile_mapping(SMALL, ROWS, hw.num_pes)
    out = tmp_path / "dram_only"
    trace_layer(cm, hw, SimOptions(mode="maestro"), out, TraceConfig(("csv",), "step", ("dram",)))
    assert set(_events(out)["component"]) <= {"dram"}
