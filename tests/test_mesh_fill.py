"""A mesh step's fill to the PEs it uses (``distribution_noc.fill: used``) and the write
latency of the reduction (``reduction_noc.write_latency_cycles``), on ``stonne_tpu`` (issue 17).

Hand derivation on STONNE's tpu8_tm4_16x16x16 (``validation/stonne``: GEMM M=N=K=16 on the 8x8
output-stationary mesh, T_M = 4, so 8 tiles of 4 x 8 outputs, one k per step; STONNE takes
K + rows_used + cols_used + 3 = 16 + 4 + 8 + 3 = 31 cycles per tile, 248). In accelsim a tile
is 16 steps of 12 edge words at 16 words/cycle (1 cycle each); the last k reaches PE (3, 7),
the farthest PE the tile uses, after rows_used + cols_used - 1 = 11 hops (the whole mesh: 15);
its MAC, 1 cycle; the drain through the interleaved write ports, 1 cycle; the accumulator and
the SRAM write (``write_latency_cycles`` 2): 16 + 11 + 1 + 1 + 2 = 31, and the tile barrier
makes the 8 tiles follow each other: 248, STONNE's 248. Filling the whole mesh costs 4 more
per tile: 280. On a tile that uses the whole mesh the two agree (tpu8_1tile_dn16_rn16: 35).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from accelsim.analytical import analyze_layer
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.stonne_set import case_layer, cases

from test_properties import layers  # noqa: E402  (tests/ is on sys.path)

STONNE = Path(__file__).resolve().parents[1] / "validation" / "stonne"


def _fill_array(hw):
    return hw.model_copy(update={"distribution_noc": hw.distribution_noc.model_copy(update={"fill": "array"})})


@pytest.mark.parametrize("case_id, whole_mesh_cycles", [("tpu8_tm4_16x16x16", 280), ("tpu8_1tile_dn16_rn16", 35)])
def test_fill_reaches_only_the_used_pes(case_id, whole_mesh_cycles):
    row = cases(STONNE)[case_id]
    cm, hw = case_layer(STONNE, row)
    assert (hw.distribution_noc.fill, hw.reduction_noc.write_latency_cycles) == ("used", 2)
    used = simulate_layer(cm, hw).cycles
    assert used == int(row["cycles"])
    assert analyze_layer(cm, hw, "realistic").cycles == used
    assert simulate_layer(cm, hw, SimOptions(per_pe=True)).cycles == used
    whole = _fill_array(hw)
    assert simulate_layer(cm, whole).cycles == analyze_layer(cm, whole, "realistic").cycles == whole_mesh_cycles


def test_fill_is_a_realistic_only_cost():
    # the ingress_latency ideal effect takes the fill away whichever way it is counted
    cm, hw = case_layer(STONNE, cases(STONNE)["tpu8_tm4_16x16x16"])
    ideal = SimOptions(ideal=frozenset({"ingress_latency"}))
    assert simulate_layer(cm, hw, ideal).cycles == simulate_layer(cm, _fill_array(hw), ideal).cycles
    assert simulate_layer(cm, hw, SimOptions(mode="maestro")).cycles == \
        simulate_layer(cm, _fill_array(hw), SimOptions(mode="maestro")).cycles


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(layer=layers, style=st.sampled_from(sorted(STYLES)))
def test_filling_the_used_pes_never_adds_cycles(layer, style):
    """A step's latency to its farthest used PE is at most the whole array's, so ``fill: used``
    is never slower than ``fill: array``, in either timing model."""
    hw = load_hardware("stonne_tpu")
    try:
        cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
    except (InputError, MappingError):
        assume(False)
    whole = _fill_array(hw)
    assert simulate_layer(cm, hw).cycles <= simulate_layer(cm, whole).cycles
    assert analyze_layer(cm, hw, "realistic").cycles <= analyze_layer(cm, whole, "realistic").cycles
