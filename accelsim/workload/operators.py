"""The operator catalog: every DNN operator accelsim knows, defined once.

Each :class:`Operator` says everything the rest of accelsim needs to know about one operator:

- ``dims``: the user-facing sizes (MAESTRO's names: N, K, C, R, S, Y, X for convolutions with Y
  and X the *input* rows/cols including padding; M, N, K for matrix products) and their defaults
  (``None``: required);
- ``windows``: input dimensions read through a sliding window (``Y`` -> output rows ``Y'`` over
  filter rows ``R`` at ``stride_y``); an operator with windows takes strides, one without does
  not; output size ``floor((Y - R) / stride) + 1``;
- ``loop``: the canonical loop nest's dimensions in order (window dimensions in *output*
  coordinates ``Y'``/``X'``), and ``tensors``: each tensor's index axes as sums of
  ``coefficient * dimension`` (a coefficient may be the layer's stride); ``layouts``: each
  tensor's axis order in DRAM, outermost first (row-major when not given);
- ``maestro_type``: the ``Type`` of a MAESTRO ``.m`` layer, which also accepts the network-table
  name and ``maestro_aliases``;
- ``form`` and ``batch_dims``: how the named dataflow styles (:mod:`accelsim.mapping.styles`)
  map it: ``conv`` (dims N K C R S Y X, windows Y/R and X/S), ``depthwise`` (N C R S Y X, one
  filter per channel), ``matmul`` (M N K: ``C[m][n] += A[m][k] B[k][n]``) or ``elementwise``
  (N C Y X, no reduction), after iterating every batch dimension one index at a time, outermost;
- ``combine``: whether a PE multiplies and accumulates or adds its two operands;
- ``reference``: the operator computed directly with numpy, written independently of the index
  projections so a wrong projection cannot hide in both (functional execution checks against it);
- ``rules``: constraints on the sizes beyond "positive integer", each with its message.

Tensor roles are always ``input``, ``weight`` and ``output`` (:data:`TENSOR_ROLES`); the second
operand is reported as ``weight`` even where it is an activation (a residual add's second
summand, a batched matmul's B).

How to add an operator: add its name to :class:`OpType` (the value is the network-table
``type``) and one :class:`Operator` to :data:`OPERATORS`, then test it (``tests/test_operators.py``
checks every entry's consistency; add a hand-derived loop nest, a functional check on a small
shape and a network-table or ``.m`` example). Nothing else changes: network tables, the ``.m``
reader and writer, the compiler, the styles, both timing models and functional execution read
the catalog. A new *form* (a loop structure no style template covers yet) also needs its
templates in :mod:`accelsim.mapping.styles`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Callable, Literal, Mapping

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

if TYPE_CHECKING:
    from accelsim.workload.ops import Layer

TensorRole = Literal["input", "weight", "output"]
TENSOR_ROLES: tuple[TensorRole, ...] = ("input", "weight", "output")
OPERAND_ROLES: tuple[TensorRole, ...] = ("input", "weight")

StrideName = Literal["stride_y", "stride_x"]
Coefficient = int | StrideName  # a number, or the layer's stride along one axis
AxisSpec = tuple[tuple[str, Coefficient], ...]  # index = sum(coefficient * dimension)
MappingForm = Literal["conv", "depthwise", "matmul", "elementwise"]
Combine = Literal["multiply_accumulate", "add"]
Reference = Callable[["Layer", np.ndarray, np.ndarray], np.ndarray]


class OpType(str, Enum):
    """Operator kinds; the value is the name used in network tables."""

    CONV2D = "CONV2D"
    DWCONV = "DWCONV"
    GEMM = "GEMM"
    FC = "FC"
    RESADD = "RESADD"
    PWCONV = "PWCONV"
    BMM = "BMM"


@dataclass(frozen=True)
class Window:
    """Input dimension ``input_dim`` read through a sliding window: output index ``output_dim``
    advancing by the layer's ``stride`` over ``filter_dim`` (None: a window of one)."""

    input_dim: str
    output_dim: str
    filter_dim: str | None
    stride: StrideName


@dataclass(frozen=True)
class SizeRule:
    """A constraint on a layer's sizes (all filled in): ``holds(sizes)`` is False for a layer that
    breaks it, ``message(sizes)`` says why. ``field`` names the one size it is about (network
    tables then point at that field's line), or None when it relates several."""

    field: str | None
    holds: Callable[[Mapping[str, int]], bool]
    message: Callable[[Mapping[str, int]], str]


@dataclass(frozen=True)
class Operator:
    """One operator's definition (see the module docstring for every field)."""

    op: OpType
    computes: str  # the operator as one formula, for documentation and messages
    dims: Mapping[str, int | None]
    loop: tuple[str, ...]
    tensors: Mapping[TensorRole, tuple[AxisSpec, ...]]
    maestro_type: str
    form: MappingForm
    reference: Reference
    windows: tuple[Window, ...] = ()
    layouts: Mapping[TensorRole, tuple[int, ...]] = field(default_factory=dict)
    maestro_aliases: tuple[str, ...] = ()
    batch_dims: tuple[str, ...] = ()
    combine: Combine = "multiply_accumulate"
    rules: tuple[SizeRule, ...] = ()

    @property
    def name(self) -> str:
        """The network-table ``type``."""
        return self.op.value

    def window(self, input_dim: str) -> Window | None:
        """The window reading ``input_dim``, or None when it is not an input-window dimension."""
        return next((w for w in self.windows if w.input_dim == input_dim), None)

    @property
    def used_dims(self) -> tuple[str, ...]:
        """User-facing dimensions the loop nest depends on (the others are fixed by the rules and
        left out of written ``.m`` files), in ``dims`` order."""
        used = set(self.loop) | {w.input_dim for w in self.windows} | {w.filter_dim for w in self.windows}
        return tuple(d for d in self.dims if d in used)


# ----- shared pieces ---------------------------------------------------------------------------
def _axis(dim: str) -> AxisSpec:
    return ((dim, 1),)


_N, _K, _C, _R, _S = (_axis(d) for d in "NKCRS")
_ROWS: AxisSpec = (("Y'", "stride_y"), ("R", 1))
_COLS: AxisSpec = (("X'", "stride_x"), ("S", 1))
_OUT_ROWS, _OUT_COLS = _axis("Y'"), _axis("X'")
_FILTER_WINDOWS = (Window("Y", "Y'", "R", "stride_y"), Window("X", "X'", "S", "stride_x"))
_CONV_LOOP = ("N", "K", "C", "Y'", "X'", "R", "S")
# Activations and filters are stored channel-last in DRAM (N,Y,X,C and K,R,S,C), the layout
# most accelerators' DMA engines read in long bursts.
_NHWC = (0, 2, 3, 1)


def _filter_fits(sizes: Mapping[str, int]) -> bool:
    return sizes["R"] <= sizes["Y"] and sizes["S"] <= sizes["X"]


FILTER_FITS = SizeRule(
    None, _filter_fits,
    lambda s: f"filter {s['R']}x{s['S']} is larger than input {s['Y']}x{s['X']}")


def _one_by_one(dim: str) -> SizeRule:
    return SizeRule(
        dim, lambda s: s[dim] == 1,
        lambda s: f"a PWCONV layer is 1x1, so {dim} must be 1 (or omitted), got {s[dim]}; "
                  "use CONV2D for larger filters")


def _conv_windows(layer: Layer, input: np.ndarray) -> np.ndarray:
    """``[N][C][Y'][X'][R][S]``: the input window under each output position."""
    s = layer.sizes
    windows = sliding_window_view(input, (s["R"], s["S"]), axis=(2, 3))  # [N][C][Y][X][R][S]
    return windows[:, :, ::layer.stride_y, ::layer.stride_x][:, :, :layer.out_y, :layer.out_x]


def _conv_reference(layer: Layer, input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.einsum("ncyxrs,kcrs->nkyx", _conv_windows(layer, input), weight)


def _depthwise_reference(layer: Layer, input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.einsum("ncyxrs,crs->ncyx", _conv_windows(layer, input), weight)


def _matmul_reference(layer: Layer, input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.matmul(input, weight)


def _add_reference(layer: Layer, input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.add(input, weight)


_CONV_TENSORS: Mapping[TensorRole, tuple[AxisSpec, ...]] = {
    "input": (_N, _C, _ROWS, _COLS),
    "weight": (_K, _C, _R, _S),
    "output": (_N, _K, _OUT_ROWS, _OUT_COLS),
}
_CONV_LAYOUTS: Mapping[TensorRole, tuple[int, ...]] = {"input": _NHWC, "weight": _NHWC, "output": _NHWC}


def _conv(op: OpType, maestro_type: str, dims: Mapping[str, int | None], rules: tuple[SizeRule, ...]) -> Operator:
    """A member of the convolution family (CONV2D and its 1x1 and FC special cases)."""
    return Operator(
        op, "O[n][k][y'][x'] += I[n][c][y'*stride_y + r][x'*stride_x + s] * W[k][c][r][s]",
        dims, _CONV_LOOP, _CONV_TENSORS, maestro_type, "conv", _conv_reference,
        windows=_FILTER_WINDOWS, layouts=_CONV_LAYOUTS, batch_dims=("N",),
        rules=rules)


# ----- the catalog -----------------------------------------------------------------------------
OPERATORS: dict[OpType, Operator] = {
    OpType.CONV2D: _conv(
        OpType.CONV2D, "CONV", {"N": 1, "K": None, "C": None, "R": None, "S": None, "Y": None, "X": None},
        (FILTER_FITS,)),
    OpType.DWCONV: Operator(
        OpType.DWCONV, "O[n][c][y'][x'] += I[n][c][y'*stride_y + r][x'*stride_x + s] * W[c][r][s]",
        {"N": 1, "K": 1, "C": None, "R": None, "S": None, "Y": None, "X": None},
        ("N", "C", "Y'", "X'", "R", "S"),
        {"input": (_N, _C, _ROWS, _COLS), "weight": (_C, _R, _S), "output": (_N, _C, _OUT_ROWS, _OUT_COLS)},
        "DSCONV", "depthwise", _depthwise_reference,
        windows=_FILTER_WINDOWS, layouts={"input": _NHWC, "weight": (1, 2, 0), "output": _NHWC},
        batch_dims=("N",),
        rules=(FILTER_FITS, SizeRule(
            "K", lambda s: s["K"] in (1, s["C"]),
            lambda s: f"a depthwise layer has one filter per channel; K must be 1 or equal to C={s['C']}, "
                      f"got {s['K']}"))),
    OpType.GEMM: Operator(
        OpType.GEMM, "C[m][n] += A[m][k] * B[k][n]",
        {"M": None, "N": None, "K": None},
        ("M", "N", "K"),
        {"input": (_axis("M"), _axis("K")), "weight": (_axis("K"), _axis("N")), "output": (_axis("M"), _axis("N"))},
        "GEMM", "matmul", _matmul_reference),
    OpType.FC: _conv(
        OpType.FC, "FC", {"N": 1, "K": None, "C": None, "R": 1, "S": 1, "Y": 1, "X": 1}, (FILTER_FITS,)),
    OpType.RESADD: Operator(
        OpType.RESADD, "O[n][c][y'][x'] = I[n][c][y'][x'] + W[n][c][y'][x'] (the second summand as weight)",
        {"N": 1, "K": 1, "C": None, "R": 1, "S": 1, "Y": None, "X": None},
        ("N", "C", "Y'", "X'"),
        {role: (_N, _C, _OUT_ROWS, _OUT_COLS) for role in TENSOR_ROLES},
        "RESADD", "elementwise", _add_reference,
        windows=(Window("Y", "Y'", None, "stride_y"), Window("X", "X'", None, "stride_x")),
        layouts={"input": _NHWC, "weight": _NHWC, "output": _NHWC},
        maestro_aliases=("RESIDUAL", "RESIDUAL_IDENTITY", "ADD"),  # RESIDUAL_IDENTITY: MAESTRO's own token
        batch_dims=("N",), combine="add",
        rules=(FILTER_FITS, SizeRule(None, lambda s: (s["R"], s["S"], s["K"]) == (1, 1, 1),
                                     lambda s: "a residual add has no filter; R, S and K must be 1"))),
    OpType.PWCONV: _conv(
        OpType.PWCONV, "PWCONV", {"N": 1, "K": None, "C": None, "R": 1, "S": 1, "Y": None, "X": None},
        (FILTER_FITS, _one_by_one("R"), _one_by_one("S"))),
    # attention's Q.K^T and A.V: one matrix product per batch index (head x batch), no shared weights
    OpType.BMM: Operator(
        OpType.BMM, "C[b][m][n] += A[b][m][k] * B[b][k][n] (both operands activations; B as weight)",
        {"B": None, "M": None, "N": None, "K": None},
        ("B", "M", "N", "K"),
        {"input": (_axis("B"), _axis("M"), _axis("K")), "weight": (_axis("B"), _axis("K"), _axis("N")),
         "output": (_axis("B"), _axis("M"), _axis("N"))},
        "BMM", "matmul", _matmul_reference, batch_dims=("B",)),
}


def operator(op: OpType) -> Operator:
    """The catalog entry of ``op``."""
    return OPERATORS[op]


def parse_op(name: str) -> OpType | None:
    """The operator a network-table ``type`` names, or None."""
    try:
        return OpType(name)
    except ValueError:
        return None


def op_names() -> str:
    """Every network-table ``type``, comma-separated (for messages)."""
    return ", ".join(o.value for o in OpType)
