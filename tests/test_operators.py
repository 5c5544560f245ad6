"""The operator catalog (accelsim/workload/operators.py): every entry is consistent, its numpy
reference agrees with its loop nest's index projections, and the modules that read it see it."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from accelsim.errors import InputError
from accelsim.mapping.maestro_format import CANONICAL_TYPES, DEFAULT_DIMS, TYPE_ALIASES, dims_for_type
from accelsim.results import TENSORS
from accelsim.workload.operators import OPERAND_ROLES, OPERATORS, TENSOR_ROLES, OpType
from accelsim.workload.ops import Layer

SPECS = list(OPERATORS.values())


def test_every_operator_has_one_entry():
    assert list(OPERATORS) == list(OpType)
    assert all(spec.op is op for op, spec in OPERATORS.items())


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_entry_is_consistent(spec):
    """Tensors index loop dimensions only; loop dimensions are sizes or window outputs; windows,
    batch dimensions and rules name real dimensions; layouts permute their tensor's axes."""
    outputs = {w.output_dim for w in spec.windows}
    assert set(spec.loop) <= set(spec.dims) | outputs
    assert set(spec.tensors) == set(TENSOR_ROLES)
    for role, axes in spec.tensors.items():
        assert all(dim in spec.loop for axis in axes for dim, _ in axis), role
        if role in spec.layouts:
            assert sorted(spec.layouts[role]) == list(range(len(axes))), role
    for w in spec.windows:
        assert w.input_dim in spec.dims and w.output_dim in spec.loop
        assert w.filter_dim is None or w.filter_dim in spec.dims
    assert set(spec.batch_dims) <= set(spec.loop)
    assert all(rule.field is None or rule.field in spec.dims for rule in spec.rules)
    if spec.combine == "add":  # an element-wise add reduces nothing
        out = {d for axis in spec.tensors["output"] for d, _ in axis}
        assert out == set(spec.loop)


def test_maestro_names_are_unique_and_read_from_the_catalog():
    types = [spec.maestro_type for spec in SPECS]
    assert len(set(types)) == len(types)
    owners: dict[str, set[OpType]] = {}
    for spec in SPECS:
        for alias in (spec.maestro_type, spec.name, *spec.maestro_aliases):
            owners.setdefault(alias, set()).add(spec.op)
    assert all(len(ops) == 1 for ops in owners.values()), owners  # one operator per spelling
    assert {CANONICAL_TYPES[spec.maestro_type] for spec in SPECS} == set(OpType)
    for spec in SPECS:
        assert TYPE_ALIASES[spec.name] == TYPE_ALIASES[spec.maestro_type] == spec.maestro_type
        assert dims_for_type(spec.maestro_type)[:len(spec.dims)] == tuple(spec.dims)
        assert DEFAULT_DIMS[spec.maestro_type] == {d: v for d, v in spec.dims.items() if v is not None}


def test_tensor_roles_are_defined_once():
    assert TENSORS is TENSOR_ROLES
    assert OPERAND_ROLES == TENSOR_ROLES[:2]


def test_convolution_loop_nest_by_hand():
    """CONV2D K=2, C=3, 3x3 filter on a 7x6 input at stride 2: output rows (7 - 3) // 2 + 1 = 3,
    cols (6 - 3) // 2 + 1 = 2; the input row index is 2 * Y' + R; channel-last layouts."""
    layer = Layer.build("c", OpType.CONV2D, {"K": 2, "C": 3, "R": 3, "S": 3, "Y": 7, "X": 6}, stride_y=2, stride_x=2)
    nest = layer.loop_nest()
    assert nest.dims == {"N": 1, "K": 2, "C": 3, "Y'": 3, "X'": 2, "R": 3, "S": 3}
    assert nest.tensors["input"] == ((("N", 1),), (("C", 1),), (("Y'", 2), ("R", 1)), (("X'", 2), ("S", 1)))
    assert nest.tensors["output"] == ((("N", 1),), (("K", 1),), (("Y'", 1),), (("X'", 1),))
    assert nest.layout("weight") == (0, 2, 3, 1)
    assert layer.macs == 1 * 2 * 3 * 3 * 2 * 3 * 3


@pytest.mark.parametrize("op, sizes, message", [
    (OpType.PWCONV, {"K": 2, "C": 2, "R": 3, "Y": 4, "X": 4}, "a PWCONV layer is 1x1, so R must be 1"),
    (OpType.DWCONV, {"K": 3, "C": 2, "R": 1, "S": 1, "Y": 2, "X": 2}, "K must be 1 or equal to C=2, got 3"),
    (OpType.RESADD, {"C": 2, "K": 2, "Y": 2, "X": 2}, "a residual add has no filter"),
    (OpType.CONV2D, {"K": 1, "C": 1, "R": 3, "S": 1, "Y": 2, "X": 2}, "filter 3x1 is larger than input 2x2"),
])
def test_size_rules_refuse_with_the_catalogs_message(op, sizes, message):
    with pytest.raises(InputError, match=message):
        Layer.build("l", op, sizes)


def _loop_nest_output(layer: Layer, input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The operator evaluated point by point from the loop nest's index projections: for every
    iteration, output[out index] += input[in index] * weight[w index] (or = input + weight)."""
    nest = layer.loop_nest()
    out = np.zeros(nest.extents("output"), dtype=np.int64)
    dims = list(nest.dims)

    def index(role: str, point: dict[str, int]) -> tuple[int, ...]:
        return tuple(sum(c * point[d] for d, c in axis) for axis in nest.tensors[role])

    for values in product(*(range(nest.dims[d]) for d in dims)):
        point = dict(zip(dims, values))
        a, b = input[index("input", point)], weight[index("weight", point)]
        if layer.operator.combine == "add":
            out[index("output", point)] = a + b
        else:
            out[index("output", point)] += a * b
    return out


@st.composite
def small_layers(draw) -> Layer:
    spec = draw(st.sampled_from(SPECS))
    sizes = {d: draw(st.integers(1, 4)) for d, default in spec.dims.items() if default is None or draw(st.booleans())}
    strides = {}
    if spec.windows:
        strides = {"stride_y": draw(st.integers(1, 3)), "stride_x": draw(st.integers(1, 3))}
    try:
        return Layer.build("l", spec.op, sizes, **strides)
    except InputError:
        assume(False)
        raise


@settings(max_examples=60, deadline=None)
@given(small_layers(), st.integers(0, 2**31))
def test_reference_agrees_with_the_loop_nest(layer, seed):
    """Differential: the catalog's numpy reference (written without the projections) equals a
    point-by-point evaluation of the loop nest (written only from the projections)."""
    nest = layer.loop_nest()
    rng = np.random.default_rng(seed)
    input = rng.integers(-9, 9, size=nest.extents("input"))
    weight = rng.integers(-9, 9, size=nest.extents("weight"))
    expected = layer.operator.reference(layer, input, weight)
    assert expected.shape == nest.extents("output")
    assert np.array_equal(expected, _loop_nest_output(layer, input, weight))
