"""Warped against unrolled execution, field by field, and the demand batch's row unique.

The engine's warps (:mod:`accelsim.sim.warp`) skip periodic blocks of steps; the speed work of
issue 19 (the warp reusing what is in flight for its jump and skipping checkpoints while a
held jump cannot fit before a near off-chip event, the compute process keeping each case's
compute cycles, the profile finding a batch's new cases by a 1-D unique) must leave every
number of the result as it is. Here every field of the result (cycles, all stalls, every access
count, NoC words, energy, ...) except the engine events and the wall time must be equal with
``fast_forward`` on and off, on hypothesis-drawn layers and mappings on every preset shrunk to a
few PEs with its own features on (tile barrier, neighbour forwarding, multiply on arrival, L2
prefetch), in both modes, and on scaled scenario layers where warps do engage (checked: a test
where no warp ever jumps would prove nothing).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import available_presets, load_hardware
from accelsim.mapping.compile import CompiledMapping, compile_mapping
from accelsim.mapping.demand import first_rows, unique_rows
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.sim.engine import LayerSimulation, SimOptions

from test_engine_differential import _scaled  # noqa: E402  (tests/ is on sys.path)
from test_properties import layers, random_dataflow  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _fields(result) -> dict:
    d = asdict(result)
    d.pop("wall_seconds")
    d.pop("events")
    return d


def _both(cm: CompiledMapping, hw, mode: str) -> tuple[dict, dict, int]:
    """(warped fields, unrolled fields, steps the warps skipped)."""
    warped = LayerSimulation(cm, hw, SimOptions(mode=mode))
    result = warped.run()
    unrolled = LayerSimulation(cm, hw, SimOptions(mode=mode, fast_forward=False)).run()
    return _fields(result), _fields(unrolled), warped.warp.warped_steps


@st.composite
def cases(draw):
    """(hw, compiled mapping): a preset with at most 12 PEs, its features as they are."""
    layer = draw(layers, label="layer")
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    hw = load_hardware(draw(st.sampled_from(sorted(available_presets())), label="preset"),
                       [f"pe_array.rows={rows}", f"pe_array.cols={cols}",
                        f"l2.size_bytes={draw(st.sampled_from([256, 4096, 1048576]))}"])
    if draw(st.booleans(), label="named style"):
        try:
            dataflow = style_mapping(draw(st.sampled_from(sorted(STYLES)), label="style"), layer, hw)
        except InputError:
            assume(False)
    else:
        dataflow = draw(random_dataflow(layer, hw.num_pes), label="dataflow")
    try:
        return hw, compile_mapping(layer, dataflow, hw.num_pes)
    except (InputError, MappingError):
        assume(False)


@SETTINGS
@given(case=cases())
def test_warped_equals_unrolled_field_by_field(case):
    hw, cm = case
    for mode in ("realistic", "maestro"):
        try:
            warped, unrolled, _ = _both(cm, hw, mode)
        except MappingError:  # spatial reduction without a reduction network: refused alike
            with pytest.raises(MappingError):
                LayerSimulation(cm, hw, SimOptions(mode=mode, fast_forward=False)).run()
            continue
        assert warped == unrolled


SCENARIO_LAYERS = ("L8_CONV2_2_2", "L13_CONV5_1_3")


@pytest.mark.parametrize("layer_name", SCENARIO_LAYERS)
def test_warps_engage_and_change_nothing_on_scaled_scenarios(layer_name):
    """The scaled marvel15 layers the re-rank bench simulates, under every named style that maps
    them on eyeriss_like: equal results, and the warps skip steps in at least one of them."""
    hw = load_hardware("eyeriss_like")
    layer = next(x for x in _scaled("marvel15") if x.name == layer_name)
    skipped = 0
    for style in sorted(STYLES):
        try:
            cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
        except (InputError, MappingError):
            continue
        warped, unrolled, jumped = _both(cm, hw, "realistic")
        assert warped == unrolled, style
        skipped += jumped
    assert skipped > 0


def test_a_refused_held_jump_quiets_the_checkpoints_and_changes_nothing():
    """Scaled ``L5_Bottleneck1_1_3`` under ``maeri_like`` on ``maestro_default``: a held jump is
    refused because an off-chip event is too near, so the warp skips checkpoints until that
    event (``quiet_until`` set); the result is the unrolled one, and warps still jump."""
    hw = load_hardware("maestro_default")
    layer = next(x for x in _scaled("marvel15") if x.name == "L5_Bottleneck1_1_3")
    cm = compile_mapping(layer, style_mapping("maeri_like", layer, hw), hw.num_pes)
    sim = LayerSimulation(cm, hw, SimOptions())
    warped = _fields(sim.run())
    assert sim.warp.quiet_until > 0 and sim.warp.warped_steps > 0
    assert warped == _fields(LayerSimulation(cm, hw, SimOptions(fast_forward=False)).run())


@given(table=hnp.arrays(np.int64, st.tuples(st.integers(1, 40), st.integers(1, 4)),
                        elements=st.integers(0, 5)))
def test_unique_rows_is_numpys_row_unique(table):
    """The mixed-radix unique gives numpy's distinct rows in numpy's (lexicographic) order."""
    assert unique_rows(table) == np.unique(table, axis=0).tolist()


def test_unique_rows_falls_back_where_the_key_would_overflow():
    """A column spanning 2**62 takes the row sort: [[2**61, 0], [-2**61, 3], [2**61, 0]] gives
    [[-2**61, 3], [2**61, 0]], as [[2, 0], [-2, 3], [2, 0]] (whose key fits) gives
    [[-2, 3], [2, 0]]."""
    table = np.array([[2 ** 61, 0], [-2 ** 61, 3], [2 ** 61, 0]], dtype=np.int64)
    assert unique_rows(table) == [[-2 ** 61, 3], [2 ** 61, 0]]
    assert unique_rows(np.array([[2, 0], [-2, 3], [2, 0]], dtype=np.int64)) == [[-2, 3], [2, 0]]


@given(table=hnp.arrays(np.int64, st.tuples(st.integers(0, 40), st.integers(0, 6)),
                        elements=st.one_of(st.integers(-3, 3), st.sampled_from([-2 ** 40, 2 ** 40, 2 ** 61, -2 ** 61]))))
def test_first_rows_is_numpys_row_unique(table):
    """The chunked mixed-radix keys give numpy's first occurrences and distinct-row numbers:
    small columns share a key, columns spanning 2**41 need ranks between chunks, one spanning
    2**62 takes the row sort."""
    _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    got_first, got_inverse = first_rows(table)
    assert got_first.tolist() == first.tolist()
    assert got_inverse.tolist() == inverse.ravel().tolist()
