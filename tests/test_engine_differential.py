"""The new profile and engine against the frozen ones from before issue 9 (``reference_v1``).

The new profile computes each step's demand once per case over classes of PEs, and the new
engine jumps over periodic blocks of steps (warps); the old ones computed every step PE by PE
and executed every step. They must agree exactly:

- per step: every field of every step's demand, every L2 tile's demand, and the L1/L2 needs;
- per layer: every field of the result (cycles, all stalls, all 18 access counts, NoC words,
  energy, ...) except the engine events executed and the wall time;

on hypothesis-drawn layers of every operator type, on small arrays derived from every preset,
under every named style and random hand-built mappings, in both modes; and on scaled-down
versions of the scenario layers, where warps engage. The default run draws 50 examples per
test; the ``slow`` tests draw 300 more each (``ACCELSIM_DIFFERENTIAL_EXAMPLES`` overrides both).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from math import prod

import pytest
from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st

from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import available_presets, load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping, compile_mapping
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.sim.engine import LayerSimulation, SimOptions, simulate_layer
from accelsim.mapping.demand import ProfileOptions, ScheduleProfile
from accelsim.workload.tables import load_network

from reference_v1.engine_v1 import SimOptions as OldOptions  # noqa: E402  (tests/ is on sys.path)
from reference_v1.engine_v1 import simulate_layer as old_simulate_layer  # noqa: E402
from reference_v1.profile_v1 import ProfileOptions as OldProfileOptions  # noqa: E402
from reference_v1.profile_v1 import ScheduleProfile as OldProfile  # noqa: E402
from test_properties import bandwidths, layers, random_dataflow  # noqa: E402

_OVERRIDE = os.environ.get("ACCELSIM_DIFFERENTIAL_EXAMPLES")
SETTINGS = settings(max_examples=int(_OVERRIDE or 50), deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
# the longer run starts from another seed, so it adds examples rather than repeating these
SLOW_SETTINGS = settings(SETTINGS, max_examples=int(_OVERRIDE or 300), derandomize=False, database=None)
# the frozen engines run three storage levels: presets with register files inside the PE
# (inner_levels, e.g. interstellar_rf2) are compared by their own tests
PRESETS = sorted(p for p in available_presets() if not load_hardware(p).inner_levels)


def _fields(result) -> dict:
    d = asdict(result)
    d.pop("wall_seconds")
    d.pop("events")
    return d


@st.composite
def preset_hardware(draw) -> HardwareSpec:
    """A preset shrunk to at most 12 PEs, sometimes with its networks, buffers or DRAM varied."""
    base = draw(st.sampled_from(PRESETS), label="preset")
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    # the frozen engines have no controller barrier, no neighbour forwarding, reuse every
    # operand from L1, share the reduction network's width, start a step's MACs after all its
    # operands (issue 17's stonne_* presets set otherwise) and have no L2 prefetch (eyeriss_chip sets it; tests/test_l2_prefetch.py checks it)
    # and no bypass at L2 (eyeriss_chip's filters bypass it; tests/test_l2_bypass.py checks it)
    overrides = ["controller.tile_barrier=none", "distribution_noc.neighbour_forwarding=false",
                 "l1.reused_operands=[input, weight]", "reduction_noc.write_ports=shared", "l2.prefetch=none",
                 "l2.keeps=[input, weight, output]",
                 "pe_array.multiply_on_arrival=false", "distribution_noc.fill=array",
                 "distribution_noc.pads_ragged_tiles=false",
                 "reduction_noc.write_latency_cycles=0",
                 f"pe_array.rows={rows}", f"pe_array.cols={cols}",
                 f"l1.size_bytes={draw(st.sampled_from([64, 65536]))}",
                 f"l2.size_bytes={draw(st.sampled_from([256, 4096, 1048576]))}"]
    # nor MAERI's reduction tree with its accumulator and bus registers, nor a design without
    # off-chip memory (stonne_maeri's reduction_noc.kind: art and dram.model: none)
    preset = load_hardware(base)
    if preset.reduction_noc.kind == "art":
        overrides.append("reduction_noc.kind=tree")
    if preset.dram.model == "none":
        overrides.append("dram.model=simple")
    if draw(st.booleans()):
        overrides += [
            f"distribution_noc.kind={draw(st.sampled_from(['bus', 'tree', 'systolic']))}",
            f"distribution_noc.multicast={str(draw(st.booleans())).lower()}",
            f"distribution_noc.bandwidth_words_per_cycle={draw(bandwidths)}",
            f"distribution_noc.latency_cycles={draw(st.integers(0, 2))}",
            f"reduction_noc.kind={draw(st.sampled_from(['tree', 'chain', 'none']))}",
            f"reduction_noc.latency_cycles_per_hop={draw(st.integers(0, 2))}",
            f"l1.double_buffered={str(draw(st.booleans())).lower()}",
            f"l2.double_buffered={str(draw(st.booleans())).lower()}",
            f"pe_array.mac_pipeline_latency_cycles={draw(st.integers(1, 3))}",
            f"dram.latency_cycles={draw(st.integers(0, 5))}",
        ]
    return load_hardware(base, overrides)


@st.composite
def cases(draw):
    layer = draw(layers, label="layer")
    hw = draw(preset_hardware(), label="hw")
    if draw(st.booleans(), label="named style"):
        try:
            dataflow = style_mapping(draw(st.sampled_from(sorted(STYLES)), label="style"), layer, hw)
        except InputError:  # the style cannot map this layer on this array
            assume(False)
    else:
        dataflow = draw(random_dataflow(layer, hw.num_pes, single_spatial=draw(st.booleans()),
                                        dividing_clusters=draw(st.booleans())), label="dataflow")
    try:
        return layer, hw, compile_mapping(layer, dataflow, hw.num_pes)
    except MappingError:
        assume(False)


def _demand_fields(demand) -> dict:
    """A demand's fields, its per-packet lists as sorted multisets (the order of a step's
    packets is not part of the model: the old profile listed them by a hash)."""
    d = asdict(demand)
    assert d.pop("forwarded_words", 0) == 0  # the reference profile has no neighbour forwarding
    assert d.pop("drain_queue_cycles", 0) == 0  # nor a collection bus
    assert (d.pop("used_rows", 0), d.pop("used_cols", 0)) == (0, 0)  # nor a fill to the used PEs
    for ts in ("input", "weight", "readback"):
        d[ts]["packet_words"] = sorted(d[ts]["packet_words"])
    d["drain_group_words"] = sorted(d["drain_group_words"])
    return d


def assert_profiles_agree(cm: CompiledMapping, hw: HardwareSpec, max_steps: int | None = None) -> None:
    """Every step's demand and every tile's demand, field by field (per-PE detail included)."""
    sim = LayerSimulation(cm, hw, SimOptions(per_pe=True))
    opts = sim.profile_options
    l2_words = hw.l2.size_bytes // hw.word_size_bytes // sim.l2_buffers
    new = ScheduleProfile(cm, opts, l2_words)
    old = OldProfile(cm, OldProfileOptions(opts.multicast, opts.noc_bandwidth_words_per_cycle,
                                           opts.egress_bandwidth_words_per_cycle, True, ports=opts.ports,
                                           port_block_pes=opts.port_block_pes,
                                           port_bandwidth_words_per_cycle=opts.port_bandwidth_words_per_cycle),
                     l2_words)
    step = 0
    for demand, repeat in old.steps():
        expected = _demand_fields(demand)
        for _ in range(repeat):
            got = _demand_fields(new.demand(step))
            assert got == expected, f"step {step}: " + str({k: (expected[k], got[k]) for k in got if got[k] != expected[k]})
            step += 1
        if max_steps is not None and step >= max_steps:
            break
    assert (new.l1_required_words, new.l2_required_words, new.steps_per_tile) == \
        (old.l1_required_words, old.l2_required_words, old.steps_per_tile)
    assert new.tiles.count == len(old.tiles)
    for t, tile in enumerate(old.tiles[:2000]):
        # the reference predates the L2 words of a tile: they are checked against its boxes
        words = _l2_words(tile, old.tiles[t - 1] if t else None)
        expected = {**asdict(tile), "footprint_words": words[0], "kept_words": words[1]}
        assert asdict(new.tiles.demand(t)) == expected, f"tile {t}"
        expected["boxes"] = {}
        assert asdict(new.tiles.traffic(t)) == expected, f"tile {t} (per case)"


def _l2_words(tile, previous) -> tuple[int, int]:
    """A tile's words in L2 (its boxes' volumes, every tensor) and those of them in the boxes of
    the tile before it (0 where that one has no work: no boxes)."""
    def volume(lo, hi):
        return prod(max(0, b - a + 1) for a, b in zip(lo, hi))

    footprint = sum(volume(lo, hi) for lo, hi in tile.boxes.values())
    if previous is None or not previous.boxes:
        return footprint, 0
    return footprint, sum(volume([max(a, pa) for a, pa in zip(lo, previous.boxes[role][0])],
                                 [min(b, pb) for b, pb in zip(hi, previous.boxes[role][1])])
                          for role, (lo, hi) in tile.boxes.items())


def assert_engines_agree(cm: CompiledMapping, hw: HardwareSpec, mode: str) -> None:
    try:
        old = old_simulate_layer(cm, hw, OldOptions(mode=mode))
    except MappingError:  # spatial reduction without a reduction network: refused by both
        with pytest.raises(MappingError):
            simulate_layer(cm, hw, SimOptions(mode=mode))
        return
    assert _fields(simulate_layer(cm, hw, SimOptions(mode=mode))) == _fields(old)


@SETTINGS
@given(case=cases())
def test_profile_matches_the_reference(case):
    _, hw, cm = case
    assert_profiles_agree(cm, hw)


@SETTINGS
@given(case=cases())
def test_engine_matches_the_reference(case):
    _, hw, cm = case
    for mode in ("realistic", "maestro"):
        assert_engines_agree(cm, hw, mode)


@pytest.mark.slow
@SLOW_SETTINGS
@seed(20261122)
@given(case=cases())
def test_profile_matches_the_reference_at_length(case):
    _, hw, cm = case
    assert_profiles_agree(cm, hw)


@pytest.mark.slow
@SLOW_SETTINGS
@seed(20261123)
@given(case=cases())
def test_engine_matches_the_reference_at_length(case):
    _, hw, cm = case
    for mode in ("realistic", "maestro"):
        assert_engines_agree(cm, hw, mode)


# ------------------------------------------------------------------------------------------
# scenario layers, scaled down so the reference stays quick: long runs of steps, where warps engage

def _scaled(network: str) -> list:
    """The network's layers with spatial sizes and channels cut so each has a few thousand steps."""
    out = []
    for layer in load_network(network).layers:
        sizes = dict(layer.sizes)
        for d in ("K", "C", "M", "N"):
            if d in sizes and sizes[d] > 32:
                sizes[d] = 32 if d != "N" or layer.op.value == "GEMM" else sizes[d]
        for d, f in (("Y", "R"), ("X", "S")):
            if d in sizes and sizes[d] > 20:
                sizes[d] = max(sizes.get(f, 1), 20)
        out.append(layer.__class__.build(layer.name, layer.op, sizes, layer.stride_y, layer.stride_x))
    return out


SCENARIOS = [("eyeriss_like", "marvel15"), ("tpu_like_32x32", "alexnet"), ("flash_edge", "flash_mlp"),
             ("dmazerunner_16x16", "dmazerunner6"), ("maestro_default", "marvel15")]


def _scenario_cases(slow: bool):
    for hw_name, network in SCENARIOS:
        for layer in _scaled(network):
            for style in sorted(STYLES):
                marks = [pytest.mark.slow] if slow else []
                yield pytest.param(hw_name, layer, style, id=f"{hw_name}-{layer.name}-{style}", marks=marks)


def _scenario_compiled(hw_name: str, layer, style: str):
    hw = load_hardware(hw_name)
    try:
        return hw, compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
    except (InputError, MappingError):
        pytest.skip("the style cannot map this layer on this array")


DEFAULT_SCENARIOS = {"L4_Bottleneck6_2_2", "L10_CONV5_3_Residual", "conv3", "FC4", "conv5_1"}


@pytest.mark.parametrize("hw_name, layer, style", [
    p for p in _scenario_cases(False) if p.values[1].name in DEFAULT_SCENARIOS] + [
    p for p in _scenario_cases(True) if p.values[1].name not in DEFAULT_SCENARIOS])
def test_scaled_scenarios_match_the_reference(hw_name, layer, style):
    hw, cm = _scenario_compiled(hw_name, layer, style)
    for mode in ("realistic", "maestro"):
        assert_engines_agree(cm, hw, mode)
