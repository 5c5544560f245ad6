"""DNN operators as loop nests with named dimensions and tensor index projections.

Every operator is described by the user-facing sizes MAESTRO uses (N, K, C, R, S, Y, X with
Y/X the *input* rows/cols; M, N, K for GEMM) and lowered to one canonical loop nest whose
iteration dimensions are in *output* coordinates (``Y'``, ``X'``). A tensor index is a sum of
``coefficient * dimension`` terms, e.g. the input row of a convolution is
``stride_y * Y' + R``. Output size follows ``floor((Y - R) / stride) + 1``.

Tensor roles are always ``input``, ``weight`` and ``output``. For GEMM ``C[M][N] += A[M][K] *
B[K][N]`` A is the input and B the weight; for a residual add the second operand is reported
under ``weight``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from math import prod
from typing import Mapping

from accelsim.errors import InputError

TENSOR_ROLES = ("input", "weight", "output")


class OpType(str, Enum):
    """Operator kinds; the value is the name used in network tables."""

    CONV2D = "CONV2D"
    DWCONV = "DWCONV"
    PWCONV = "PWCONV"
    FC = "FC"
    GEMM = "GEMM"
    RESADD = "RESADD"


# User-facing dimension names each operator accepts, and their defaults when omitted.
_USER_DIMS: dict[OpType, dict[str, int | None]] = {
    OpType.CONV2D: {"N": 1, "K": None, "C": None, "R": None, "S": None, "Y": None, "X": None},
    OpType.PWCONV: {"N": 1, "K": None, "C": None, "R": 1, "S": 1, "Y": None, "X": None},
    OpType.FC: {"N": 1, "K": None, "C": None, "R": 1, "S": 1, "Y": 1, "X": 1},
    OpType.DWCONV: {"N": 1, "K": 1, "C": None, "R": None, "S": None, "Y": None, "X": None},
    OpType.GEMM: {"M": None, "N": None, "K": None},
    OpType.RESADD: {"N": 1, "K": 1, "C": None, "R": 1, "S": 1, "Y": None, "X": None},
}

# Activations and filters are stored channel-last in DRAM (N,Y,X,C and K,R,S,C), the layout
# most accelerators' DMA engines read in long bursts.
_NHWC = (0, 2, 3, 1)

Term = tuple[str, int]  # (dimension, coefficient)
Axis = tuple[Term, ...]  # index = sum(coefficient * dimension)


def axis_distinct(axis: Axis, sizes: Mapping[str, int]) -> int:
    """Distinct values of ``sum(c * d)`` over ``d`` in ``range(sizes[d])``: a plain range, or
    ``stride * Y' + R`` whose filter window leaves gaps when it is narrower than the stride."""
    if len(axis) == 2:
        (d1, c1), (d2, c2) = sorted(axis, key=lambda term: -term[1])
        if c2 == 1 and sizes[d2] < c1:
            return sizes[d1] * sizes[d2]
    return sum(c * (sizes[d] - 1) for d, c in axis) + 1


@dataclass(frozen=True)
class LoopNest:
    """Canonical iteration space of one operator.

    ``dims`` maps each iteration dimension to its size (in loop order of the operator's
    definition); ``tensors`` maps each role to its index axes.
    """

    dims: dict[str, int]
    tensors: dict[str, tuple[Axis, ...]]
    # DRAM layout per tensor: its axes from outermost to innermost (contiguous) in memory
    layouts: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def layout(self, role: str) -> tuple[int, ...]:
        """Axis order in DRAM, outermost first (row-major in ``tensors`` order by default)."""
        return self.layouts.get(role, tuple(range(len(self.tensors[role]))))

    @property
    def reduction_dims(self) -> tuple[str, ...]:
        """Dimensions that do not index the output (summed over)."""
        out = {d for axis in self.tensors["output"] for d, _ in axis}
        return tuple(d for d in self.dims if d not in out)

    def extents(self, role: str, sizes: Mapping[str, int] | None = None) -> tuple[int, ...]:
        """Span of each index axis of tensor ``role`` (largest index + 1) over a box of ``sizes``
        per dimension (default: the whole nest). A strided axis spans gaps too."""
        sizes = self.dims if sizes is None else sizes
        return tuple(sum(c * (sizes[d] - 1) for d, c in axis) + 1 for axis in self.tensors[role])

    def tensor_words(self, role: str) -> int:
        """Number of distinct elements of tensor ``role`` touched by the whole nest."""
        return prod(axis_distinct(axis, self.dims) for axis in self.tensors[role])


@dataclass(frozen=True)
class Layer:
    """One operator with concrete sizes.

    ``sizes`` holds the user-facing dimensions (see module docstring); Y and X are input
    extents, already including any padding.
    """

    name: str
    op: OpType
    sizes: Mapping[str, int]
    stride_y: int = 1
    stride_x: int = 1
    source: str = field(default="", compare=False)

    @classmethod
    def build(
        cls,
        name: str,
        op: OpType | str,
        sizes: Mapping[str, int],
        stride_y: int = 1,
        stride_x: int = 1,
        source: str = "",
    ) -> "Layer":
        """Validate and normalise sizes (fill defaults); raise InputError naming ``source``."""
        where = source or f"layer {name}"
        try:
            op = OpType(op) if not isinstance(op, OpType) else op
        except ValueError:
            raise InputError(
                f"layer {name!r}: unknown operator type {op!r}; expected one of "
                + ", ".join(o.value for o in OpType),
                source=where,
            ) from None
        allowed = _USER_DIMS[op]
        unknown = sorted(set(sizes) - set(allowed))
        if unknown:
            raise InputError(
                f"layer {name!r}: dimension(s) {', '.join(unknown)} do not exist for {op.value}; "
                f"expected {', '.join(allowed)}",
                source=where,
            )
        full: dict[str, int] = {}
        for dim, default in allowed.items():
            value = sizes.get(dim, default)
            if value is None:
                raise InputError(f"layer {name!r}: missing dimension {dim} for {op.value}", source=where)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(
                    f"layer {name!r}: dimension {dim} must be a positive integer, got {value!r}",
                    source=where,
                )
            full[dim] = value
        for label, s in (("stride Y", stride_y), ("stride X", stride_x)):
            if isinstance(s, bool) or not isinstance(s, int) or s < 1:
                raise InputError(f"layer {name!r}: {label} must be a positive integer, got {s!r}", source=where)
        if op is not OpType.GEMM:
            if full["R"] > full["Y"] or full["S"] > full["X"]:
                raise InputError(
                    f"layer {name!r}: filter {full['R']}x{full['S']} is larger than input "
                    f"{full['Y']}x{full['X']}",
                    source=where,
                )
            if op is OpType.DWCONV and full["K"] not in (1, full["C"]):
                raise InputError(
                    f"layer {name!r}: a depthwise layer has one filter per channel; K must be 1 "
                    f"or equal to C={full['C']}, got {full['K']}",
                    source=where,
                )
            if op is OpType.RESADD and (full["R"], full["S"], full["K"]) != (1, 1, 1):
                raise InputError(f"layer {name!r}: a residual add has no filter; R, S and K must be 1", source=where)
        return cls(name, op, full, stride_y, stride_x, source)

    # ----- derived sizes -------------------------------------------------------------------
    @property
    def out_y(self) -> int:
        """Output rows ``floor((Y - R) / stride_y) + 1``."""
        return (self.sizes["Y"] - self.sizes["R"]) // self.stride_y + 1

    @property
    def out_x(self) -> int:
        """Output cols ``floor((X - S) / stride_x) + 1``."""
        return (self.sizes["X"] - self.sizes["S"]) // self.stride_x + 1

    @property
    def macs(self) -> int:
        """Exact multiply-accumulates (element-wise adds for a residual add)."""
        return prod(self.loop_nest().dims.values())

    def loop_nest(self) -> LoopNest:
        """Lower to the canonical loop nest in output coordinates."""
        s = self.sizes
        sy, sx = self.stride_y, self.stride_x
        if self.op is OpType.GEMM:
            return LoopNest(
                dims={"M": s["M"], "N": s["N"], "K": s["K"]},
                tensors={
                    "input": ((("M", 1),), (("K", 1),)),
                    "weight": ((("K", 1),), (("N", 1),)),
                    "output": ((("M", 1),), (("N", 1),)),
                },
            )
        n, c = (("N", 1),), (("C", 1),)
        rows = (("Y'", sy), ("R", 1))
        cols = (("X'", sx), ("S", 1))
        if self.op is OpType.RESADD:
            plane = (n, c, (("Y'", 1),), (("X'", 1),))
            return LoopNest(
                dims={"N": s["N"], "C": s["C"], "Y'": self.out_y, "X'": self.out_x},
                tensors={"input": plane, "weight": plane, "output": plane},
                layouts={"input": _NHWC, "weight": _NHWC, "output": _NHWC},
            )
        if self.op is OpType.DWCONV:
            return LoopNest(
                dims={"N": s["N"], "C": s["C"], "Y'": self.out_y, "X'": self.out_x, "R": s["R"], "S": s["S"]},
                tensors={
                    "input": (n, c, rows, cols),
                    "weight": (c, (("R", 1),), (("S", 1),)),
                    "output": (n, c, (("Y'", 1),), (("X'", 1),)),
                },
                layouts={"input": _NHWC, "weight": (1, 2, 0), "output": _NHWC},
            )
        k = (("K", 1),)
        return LoopNest(
            dims={
                "N": s["N"], "K": s["K"], "C": s["C"],
                "Y'": self.out_y, "X'": self.out_x, "R": s["R"], "S": s["S"],
            },
            tensors={
                "input": (n, c, rows, cols),
                "weight": (k, c, (("R", 1),), (("S", 1),)),
                "output": (n, k, (("Y'", 1),), (("X'", 1),)),
            },
            layouts={"input": _NHWC, "weight": _NHWC, "output": _NHWC},
        )

    def window_of(self, dim: str) -> tuple[str, str | None, int] | None:
        """For an input-coordinate dim (Y or X): (output dim, filter dim or None, stride)."""
        if self.op is OpType.GEMM:
            return None
        if dim == "Y":
            return ("Y'", None if self.op is OpType.RESADD else "R", self.stride_y)
        if dim == "X":
            return ("X'", None if self.op is OpType.RESADD else "S", self.stride_x)
        return None


@dataclass(frozen=True)
class Network:
    """An ordered list of named layers."""

    name: str
    layers: tuple[Layer, ...]
    source: str = ""

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise InputError(
            f"network {self.name!r} has no layer {name!r}; layers are: "
            + ", ".join(layer.name for layer in self.layers)
        )
