"""Property tests of the simulator on random small layers, arrays and legal mappings.

Layers, hardware and mappings are drawn with hypothesis; every mapping that compiles is run in
both fidelity modes and checked against invariants that any correct schedule must satisfy:

- every MAC of the layer is computed exactly once (``macs == layer.macs``);
- the run takes at least as long as the array needs for its MACs at full throughput, and as
  the DRAM channel needs for the bytes it moved;
- every input/weight element is read from DRAM at least once and every output element is
  written at least once;
- runs are deterministic, and the per-PE engine (and, where the engine has it, the unrolled
  one without steady-state fast-forward) agrees with the grouped one.

Random mappings cover levels without SpatialMap, several SpatialMaps at one level and nested
clusters whose sizes do not divide; two of those regions also get property tests of their own
at the end, next to regressions with the examples that once failed (all found by these tests).

Only the public API is used: ``Layer.build``, ``load_hardware`` with ``--set`` overrides,
``style_mapping``, ``MapDirective``/``ClusterDirective``, ``compile_mapping`` and
``simulate_layer``.
"""

from __future__ import annotations

import dataclasses
import os
from math import ceil, prod

import pytest
from hypothesis import HealthCheck, assume, currently_in_test_context, example, given, note, settings
from hypothesis import strategies as st

from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.results import LayerResult
from accelsim.workload.ops import Layer, OpType

TENSORS = ("input", "weight", "output")
HAS_FAST_FORWARD = "fast_forward" in {f.name for f in dataclasses.fields(SimOptions)}
MODES = ("realistic", "maestro")

# Derandomized so that a run is reproducible; for a longer, random search:
#   ACCELSIM_PROPERTY_EXAMPLES=2000 ACCELSIM_PROPERTY_RANDOM=1 pytest tests/test_properties.py
MAX_EXAMPLES = int(os.environ.get("ACCELSIM_PROPERTY_EXAMPLES", "200"))
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("ACCELSIM_PROPERTY_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# the regions test_random_mappings also draws from, searched a little more
REGION_SETTINGS = settings(SETTINGS, max_examples=max(10, MAX_EXAMPLES // 4))

# --------------------------------------------------------------------------------------------
# layers


@st.composite
def conv_layers(draw, op: OpType = OpType.CONV2D) -> Layer:
    r = draw(st.integers(1, 3))
    s = draw(st.integers(1, 3))
    y = draw(st.integers(r, r + 5))
    x = draw(st.integers(s, s + 5))
    c = draw(st.integers(1, 8))
    sizes = {"C": c, "R": r, "S": s, "Y": y, "X": x}
    if op is OpType.CONV2D:
        sizes["K"] = draw(st.integers(1, 8))
    else:  # depthwise: one filter per channel
        sizes["K"] = draw(st.sampled_from([1, c]))
    if draw(st.booleans()):
        sizes["N"] = 2
    stride_y = draw(st.integers(1, 2))
    stride_x = draw(st.integers(1, 2))
    return Layer.build("L", op, sizes, stride_y, stride_x)


@st.composite
def gemm_layers(draw) -> Layer:
    sizes = {d: draw(st.integers(1, 12)) for d in ("M", "N", "K")}
    return Layer.build("L", OpType.GEMM, sizes)


@st.composite
def bmm_layers(draw) -> Layer:
    sizes = {"B": draw(st.integers(1, 3))} | {d: draw(st.integers(1, 8)) for d in ("M", "N", "K")}
    return Layer.build("L", OpType.BMM, sizes)


@st.composite
def fc_layers(draw) -> Layer:
    return Layer.build("L", OpType.FC, {"K": draw(st.integers(1, 12)), "C": draw(st.integers(1, 12))})


@st.composite
def resadd_layers(draw) -> Layer:
    sizes = {"C": draw(st.integers(1, 8)), "Y": draw(st.integers(1, 6)), "X": draw(st.integers(1, 6))}
    return Layer.build("L", OpType.RESADD, sizes)


layers = st.one_of(
    conv_layers(OpType.CONV2D),
    conv_layers(OpType.DWCONV),
    gemm_layers(),
    fc_layers(),
    resadd_layers(),
    bmm_layers(),
)

# --------------------------------------------------------------------------------------------
# hardware: a preset shrunk with --set overrides

ROOMY_L2_BYTES = 1048576
# fractional bandwidths on purpose (3 words/cycle once crashed per-PE execution on float
# rounding: test_per_pe_with_fractional_network_bandwidth)
bandwidths = st.sampled_from([1, 2, 3, 4, 8, 16, 1.5, 0.5])
dram_bandwidths = bandwidths


@st.composite
def hardware(draw) -> HardwareSpec:
    """A preset shrunk to 1-12 PEs with random buffers, networks and DRAM."""
    base = draw(st.sampled_from(["eyeriss_like", "maestro_default"]))
    rows = draw(st.integers(1, 3))
    cols = draw(st.integers(1, 4))
    overrides = [f"pe_array.rows={rows}", f"pe_array.cols={cols}"]
    # mostly roomy buffers; small ones make styles pick small tiles and the engine split L2
    # tiles (simulate_layer runs mappings that overflow, as --allow-overflow does)
    overrides += [f"l1.size_bytes={draw(st.sampled_from([16, 64, 512, 65536, 65536]))}",
                  f"l2.size_bytes={draw(st.sampled_from([64, 256, 2048, ROOMY_L2_BYTES, ROOMY_L2_BYTES]))}"]
    overrides += [
        f"word_size_bytes={draw(st.integers(1, 2))}",
        f"pe_array.macs_per_pe_per_cycle={draw(st.integers(1, 2))}",
        f"pe_array.mac_pipeline_latency_cycles={draw(st.integers(1, 3))}",
        f"l1.double_buffered={str(draw(st.booleans())).lower()}",
        f"l2.double_buffered={str(draw(st.booleans())).lower()}",
        f"l2.read_bandwidth_words_per_cycle={draw(bandwidths)}",
        f"l2.write_bandwidth_words_per_cycle={draw(bandwidths)}",
        f"distribution_noc.kind={draw(st.sampled_from(['bus', 'tree', 'systolic']))}",
        f"distribution_noc.multicast={str(draw(st.booleans())).lower()}",
        f"distribution_noc.bandwidth_words_per_cycle={draw(bandwidths)}",
        f"distribution_noc.latency_cycles={draw(st.integers(0, 2))}",
        f"reduction_noc.kind={draw(st.sampled_from(['tree', 'chain', 'none']))}",
        f"reduction_noc.bandwidth_words_per_cycle={draw(bandwidths)}",
        f"reduction_noc.latency_cycles_per_hop={draw(st.integers(0, 2))}",
        f"dram.model={draw(st.sampled_from(['simple', 'simple', 'dmazerunner']))}",
        f"dram.bandwidth_bytes_per_cycle={draw(dram_bandwidths)}",
        f"dram.latency_cycles={draw(st.integers(0, 5))}",
        f"dram.burst_bytes={draw(st.sampled_from([1, 4, 64]))}",
    ]
    hw = load_hardware(base, overrides)
    assert hw.num_pes == rows * cols
    return hw


# --------------------------------------------------------------------------------------------
# mappings


@st.composite
def random_dataflow(draw, layer: Layer, num_pes: int, spatial_every_level: bool = False,
                    single_spatial: bool = True, dividing_clusters: bool = True) -> list:
    """A random directive list built to be legal (1-3 cluster levels, windows that tile their
    parent exactly, at most one moving spatial map per level); compile may still refuse it.

    With ``spatial_every_level`` every cluster level has at least one SpatialMap (without, a
    level may have only TemporalMaps: its first sub-unit works, the others idle); with
    ``single_spatial`` at most one SpatialMap per level; with ``dividing_clusters`` a nested
    Cluster's size divides the size of the cluster it is in."""
    nest = layer.loop_nest()
    extents = dict(nest.dims)
    levels = draw(st.integers(1, 3))
    outer = num_pes
    dataflow: list = []
    for level in range(levels):
        if level > 0:
            if outer < 1:
                break
            if dividing_clusters and level > 1:
                size = draw(st.sampled_from([d for d in range(1, outer + 1) if outer % d == 0]))
            else:
                size = draw(st.integers(1, outer))
            dataflow.append(ClusterDirective(size, 0))
            outer = size
        dims = draw(st.permutations(list(extents)))
        chosen = dims[: draw(st.integers(1, len(dims)))]
        flags = [draw(st.booleans()) for _ in chosen]
        if spatial_every_level and not any(flags):
            flags[draw(st.integers(0, len(chosen) - 1))] = True
        if single_spatial and any(flags):
            first = flags.index(True)
            flags = [i == first for i in range(len(flags))]
        moving_spatial = False
        new_extents = dict(extents)
        for dim, spatial in zip(chosen, flags):
            extent = extents[dim]
            size = draw(st.integers(1, extent))
            if spatial and size < extent:
                if moving_spatial:
                    spatial = False
                moving_spatial = True
            offset = size if size < extent else draw(st.integers(1, extent))
            new_extents[dim] = size  # extent of the sub-tile the next level splits
            written = dim
            if dim in ("Y'", "X'") and layer.op is not OpType.GEMM and draw(st.booleans()):
                # the same window written in input coordinates (filter whole at this level)
                inp = dim[0]
                window = layer.window_of(inp)
                filt, stride = window.filter_dim, layer.stride(window)
                if filt is None or filt not in chosen:
                    filt_extent = extents[filt] if filt else 1
                    written = inp
                    size, offset = (size - 1) * stride + filt_extent, offset * stride
            kind = "spatial" if spatial else "temporal"
            dataflow.append(MapDirective(kind, size, offset, written, 0))
        extents = new_extents
    return dataflow


def compile_or_reject(layer: Layer, dataflow, hw: HardwareSpec):
    try:
        return compile_mapping(layer, dataflow, hw.num_pes)
    except MappingError:
        assume(False)


# --------------------------------------------------------------------------------------------
# the properties


def run(cm, hw: HardwareSpec, mode: str, per_pe: bool = False) -> LayerResult:
    try:
        return simulate_layer(cm, hw, SimOptions(mode, per_pe=per_pe))
    except MappingError as exc:  # spatial reduction on hardware without a reduction network
        assert hw.reduction_noc.kind == "none", exc
        assume(False)
        raise


def distinct_words(nest, role: str) -> int:
    """Elements of tensor ``role`` the loop nest really touches, counted by enumeration.

    ``LoopNest.tensor_words`` counts the bounding box of each index axis, which is more when a
    stride skips rows (stride 2 with a 1-row filter; see test_tensor_words_counts_distinct)."""
    total = 1
    for axis in nest.tensors[role]:
        values = {0}
        for dim, coeff in axis:
            values = {v + coeff * i for v in values for i in range(nest.dims[dim])}
        total *= len(values)
    return total


def _note(text: str) -> None:
    if currently_in_test_context():
        note(text)


def _without_wall(result: LayerResult) -> dict:
    d = result.to_dict()
    d.pop("wall_seconds")
    return d


def check_properties(layer: Layer, hw: HardwareSpec, cm, *, compare_per_pe: bool = True,
                     check_determinism: bool = True) -> None:
    nest = layer.loop_nest()
    mpc = hw.pe_array.macs_per_pe_per_cycle
    compute_bound = ceil(layer.macs / (hw.num_pes * mpc))
    _note(f"layer {layer.op.value} {dict(layer.sizes)} stride {layer.stride_y}x{layer.stride_x}")
    _note(f"hw pes={hw.num_pes} {hw.pe_array.rows}x{hw.pe_array.cols} mpc={mpc} dram={hw.dram}")
    for mode in MODES:
        result = run(cm, hw, mode)
        _note(f"{mode}: cycles={result.cycles} macs={result.macs} accesses={result.accesses}")
        # every MAC exactly once
        assert layer.macs == prod(nest.dims.values())
        assert result.macs == layer.macs
        # compute bound
        assert result.cycles >= compute_bound
        assert 0 < result.pe_utilization <= 1
        # DRAM bound (both modes charge at least bytes / bandwidth with the simple model;
        # maestro mode always uses that ideal model)
        dram_words = sum(result.accesses[t].dram_read + result.accesses[t].dram_write for t in TENSORS)
        if mode == "maestro" or hw.dram.model == "simple":
            assert result.cycles >= dram_words * hw.word_size_bytes / hw.dram.bandwidth_bytes_per_cycle
        # every operand element fetched at least once, every output element written
        for role in ("input", "weight"):
            assert result.accesses[role].dram_read >= distinct_words(nest, role), role
        assert result.accesses["output"].dram_write >= distinct_words(nest, "output")
        assert result.accesses["output"].dram_write >= nest.tensor_words("output")
        # determinism
        if check_determinism:
            again = run(cm, hw, mode)
            assert _without_wall(again) == _without_wall(result)
        # per-PE engine agrees with the grouped one
        if compare_per_pe:
            detailed = run(cm, hw, mode, per_pe=True)
            assert detailed.cycles == result.cycles
            assert detailed.macs == result.macs
            for t in TENSORS:
                assert detailed.accesses[t] == result.accesses[t], t
        # steady-state fast-forward (where the engine has it) changes events, not results
        if HAS_FAST_FORWARD:
            unrolled = simulate_layer(cm, hw, SimOptions(mode, fast_forward=False))
            assert unrolled.cycles == result.cycles
            assert unrolled.macs == result.macs
            for t in TENSORS:
                assert unrolled.accesses[t] == result.accesses[t], t


@st.composite
def style_cases(draw):
    """(layer, hw, dataflow) with a named style's mapping."""
    layer = draw(layers, label="layer")
    hw = draw(hardware(), label="hw")
    style = draw(st.sampled_from(sorted(STYLES)), label="style")
    try:
        dataflow = style_mapping(style, layer, hw)
    except InputError:  # the style cannot map this layer on this array
        assume(False)
    return layer, hw, tuple(dataflow)


@st.composite
def random_cases(draw, spatial_every_level=False, single_spatial=None, dividing_clusters=None):
    """(layer, hw, dataflow) with a random hand-built mapping (``None``: either way)."""
    if single_spatial is None:
        single_spatial = draw(st.booleans(), label="single_spatial")
    if dividing_clusters is None:
        dividing_clusters = draw(st.booleans(), label="dividing_clusters")
    layer = draw(layers, label="layer")
    hw = draw(hardware(), label="hw")
    dataflow = draw(random_dataflow(layer, hw.num_pes, spatial_every_level, single_spatial,
                                    dividing_clusters), label="dataflow")
    return layer, hw, tuple(dataflow)


def check_case(case) -> None:
    layer, hw, dataflow = case
    _note(f"dataflow: {list(dataflow)}")
    cm = compile_or_reject(layer, dataflow, hw)
    check_properties(layer, hw, cm)


def _t(size, offset, dim):
    return MapDirective("temporal", size, offset, dim, 0)


def _s(size, offset, dim):
    return MapDirective("spatial", size, offset, dim, 0)


def _small_hw(pes: int, *extra: str) -> HardwareSpec:
    return load_hardware("eyeriss_like", [f"pe_array.count={pes}", "l1.size_bytes=65536",
                                          "l2.size_bytes=1048576", *extra])


FC_K1_C2 = Layer.build("L", OpType.FC, {"K": 1, "C": 2})
FC_K2_C1 = Layer.build("L", OpType.FC, {"K": 2, "C": 1})
GEMM_M2 = Layer.build("L", OpType.GEMM, {"M": 2, "N": 1, "K": 1})


@SETTINGS
@given(case=style_cases())
def test_style_mappings(case):
    check_case(case)


@SETTINGS
@given(case=random_cases())
def test_random_mappings(case):
    check_case(case)


@pytest.mark.parametrize("layer, pes, dataflow", [
    # regression: a level of 2 PEs without SpatialMap used to run the same tile on both
    pytest.param(GEMM_M2, 2, (_t(1, 1, "M"),), id="temporal-only-level"),
    pytest.param(FC_K2_C1, 3, (ClusterDirective(2, 0), _t(1, 1, "K")), id="temporal-only-cluster"),
])
def test_level_without_spatial_map(layer, pes, dataflow):
    hw = _small_hw(pes)
    check_properties(layer, hw, compile_mapping(layer, dataflow, hw.num_pes))


@pytest.mark.parametrize("kind", ["tree", "chain"])
@pytest.mark.parametrize("latency", [0, 1, 2])
def test_reduction_latency_keeps_the_last_writeback(kind, latency):
    """Regression: the last output tile, reduced across 2 PEs by a network with latency, used
    to land in L2 after the write-back process had already stopped (never written to DRAM)."""
    hw = _small_hw(2, f"reduction_noc.kind={kind}", f"reduction_noc.latency_cycles_per_hop={latency}")
    cm = compile_mapping(FC_K1_C2, (_t(1, 1, "K"), _s(1, 1, "C")), hw.num_pes)
    check_properties(FC_K1_C2, hw, cm)
    realistic = simulate_layer(cm, hw, SimOptions("realistic"))
    assert realistic.accesses["output"].dram_write == 1
    # more reduction latency never makes the layer faster
    if latency:
        faster = _small_hw(2, f"reduction_noc.kind={kind}", f"reduction_noc.latency_cycles_per_hop={latency - 1}")
        assert realistic.cycles >= simulate_layer(cm, faster, SimOptions("realistic")).cycles


# --------------------------------------------------------------------------------------------
# Regressions: regions where these properties once failed, each with its failing example.


@REGION_SETTINGS
@example(case=(FC_K2_C1, _small_hw(1), (_s(1, 1, "N"), _s(1, 1, "K"))))
@given(case=random_cases(single_spatial=False))
def test_several_spatial_maps_per_level(case):
    check_case(case)


@REGION_SETTINGS
@example(case=(FC_K2_C1, _small_hw(3), (ClusterDirective(3, 0), ClusterDirective(2, 0), _s(1, 1, "K"))))
@given(case=random_cases(dividing_clusters=False))
def test_nested_clusters_that_do_not_divide(case):
    check_case(case)


def test_tensor_words_counts_distinct():
    layer = Layer.build("L", OpType.CONV2D, {"K": 1, "C": 5, "R": 1, "S": 1, "Y": 3, "X": 2}, stride_y=2)
    nest = layer.loop_nest()
    assert distinct_words(nest, "input") == 5 * 2 * 2  # rows 0 and 2 only
    assert nest.tensor_words("input") == distinct_words(nest, "input")


def _per_pe_and_grouped(mode, layer, overrides, dataflow):
    hw = load_hardware("eyeriss_like", overrides)
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    grouped = simulate_layer(cm, hw, SimOptions(mode))
    detailed = simulate_layer(cm, hw, SimOptions(mode, per_pe=True))
    assert grouped.macs == detailed.macs == layer.macs
    return grouped, detailed


def test_per_pe_equals_grouped_under_dram_contention():
    """Regression (realistic mode): grouped 58 cycles vs per-PE 59 before the networks'
    packets shared their width."""
    grouped, detailed = _per_pe_and_grouped(
        "realistic", Layer.build("L", OpType.GEMM, {"M": 1, "N": 2, "K": 8}),
        ["word_size_bytes=2", "l2.size_bytes=64", "reduction_noc.bandwidth_words_per_cycle=0.5",
         "dram.latency_cycles=3", "dram.burst_bytes=1"],
        (_t(1, 1, "N"), _t(1, 1, "K")))
    assert detailed.cycles == grouped.cycles


def test_per_pe_equals_grouped_maestro_mode():
    grouped, detailed = _per_pe_and_grouped(
        "maestro", Layer.build("L", OpType.GEMM, {"M": 8, "N": 1, "K": 2}),
        ["word_size_bytes=2", "l2.size_bytes=64", "distribution_noc.bandwidth_words_per_cycle=1"],
        (_t(1, 1, "K"), _t(1, 1, "M")))
    assert detailed.cycles == grouped.cycles


def test_per_pe_equals_grouped_with_spills():
    layer = Layer.build("L", OpType.CONV2D, {"K": 1, "C": 8, "R": 2, "S": 2, "Y": 5, "X": 6})
    hw = load_hardware("eyeriss_like", ["l2.size_bytes=64", "l2.double_buffered=false",
                                        "dram.bandwidth_bytes_per_cycle=4", "dram.burst_bytes=1",
                                        "reduction_noc.latency_cycles_per_hop=2"])
    dataflow = (_t(1, 1, "N"), _s(1, 1, "K"), _t(3, 3, "C"), _t(1, 1, "R"), _t(1, 1, "S"),
                _t(1, 1, "Y'"), _t(5, 5, "X'"), ClusterDirective(3, 0), _s(1, 1, "C"))
    cm = compile_mapping(layer, dataflow, hw.num_pes)
    grouped = simulate_layer(cm, hw, SimOptions("realistic"))
    detailed = simulate_layer(cm, hw, SimOptions("realistic", per_pe=True))
    assert grouped.macs == detailed.macs == layer.macs
    assert detailed.cycles == grouped.cycles


def test_per_pe_with_fractional_network_bandwidth():
    layer = Layer.build("L", OpType.GEMM, {"M": 3, "N": 1, "K": 1})
    grouped, detailed = _per_pe_and_grouped(
        "realistic", layer,
        ["reduction_noc.bandwidth_words_per_cycle=3", "dram.bandwidth_bytes_per_cycle=1"],
        (_s(1, 1, "M"),))
    assert detailed.cycles == grouped.cycles
