"""Operand values and the numpy reference of every operator, for functional execution.

Tensors are held in the axis order of the layer's loop nest (``LoopNest.tensors``): CONV2D,
PWCONV and FC input ``[N][C][Y][X]``, weight ``[K][C][R][S]``, output ``[N][K][Y'][X']``;
DWCONV weight ``[C][R][S]``, output ``[N][C][Y'][X']``; GEMM ``A[M][K]``, ``B[K][N]``,
``C[M][N]``; RESADD all ``[N][C][Y][X]`` (each operator's axes are in the operator catalog,
:mod:`accelsim.workload.operators`). (The DRAM layout, channel-last, only decides burst counts
in the timing model; values are addressed by index.)

The reference is each operator's numpy definition in the catalog, written independently of the
loop-nest projections the simulator uses, so a wrong projection cannot hide in both.

Tolerance: integer types (int8, int16 operands) accumulate exactly in int64 and must match
exactly. fp32 operands are drawn from [-1, 1), multiplied and accumulated in float32 in the
simulated datapath (in whatever order its reductions and partial-sum spills impose) and compared
with a float64 reference. Any order of ``n`` float32 products and additions stays within the
standard bound ``gamma_(n+1) * sum |a*b|`` with ``gamma_k = k*u / (1 - k*u)``, ``u = 2**-24``
(Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Sec. 3.1); that bound per
output element is the tolerance (about 6e-8 * n relative to the sum of absolute products).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Literal

import numpy as np

from accelsim.errors import InputError
from accelsim.workload.operators import OPERAND_ROLES
from accelsim.workload.ops import Layer, LoopNest

Dtype = Literal["int8", "int16", "fp32"]
DTYPES: tuple[Dtype, ...] = ("int8", "int16", "fp32")


def check_dtype(dtype: str) -> Dtype:
    """``dtype`` as a :data:`Dtype`; InputError for anything else."""
    if dtype not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}")
    return dtype
FP32_UNIT_ROUNDOFF = 2.0 ** -24


@dataclass(frozen=True)
class Operands:
    """Random operand tensors (loop-nest axis order) and the value type they are held in:
    int64 for the integer dtypes (exact accumulation), float32 for fp32."""

    input: np.ndarray
    weight: np.ndarray
    dtype: Dtype
    seed: int

    @property
    def exact(self) -> bool:
        return self.dtype != "fp32"

    @property
    def accumulator(self) -> type:
        return np.int64 if self.exact else np.float32


def macs_per_output(nest: LoopNest) -> int:
    """MACs accumulated into one output element: the product of the reduction dimensions."""
    return prod(nest.dims[d] for d in nest.reduction_dims)


def random_operands(layer: Layer, dtype: Dtype, seed: int) -> Operands:
    """Input then weight from ``numpy.random.default_rng(seed)``: integers over the full range
    of int8 / int16, or float32 uniform in [-1, 1)."""
    nest = layer.loop_nest()
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for role in OPERAND_ROLES:
        shape = nest.extents(role)
        if dtype == "fp32":
            arrays.append(rng.uniform(-1.0, 1.0, size=shape).astype(np.float32))
        else:
            info = np.iinfo(np.int8 if dtype == "int8" else np.int16)
            arrays.append(rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64))
    return Operands(arrays[0], arrays[1], dtype, seed)


def reference_output(layer: Layer, input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The operator computed directly with numpy (output in loop-nest axis order)."""
    return layer.operator.reference(layer, input, weight)


def tolerance(layer: Layer, operands: Operands) -> np.ndarray | None:
    """Allowed absolute error per output element (None: exact comparison)."""
    if operands.exact:
        return None
    k = macs_per_output(layer.loop_nest()) + 1
    gamma = k * FP32_UNIT_ROUNDOFF / (1 - k * FP32_UNIT_ROUNDOFF)
    magnitude = reference_output(layer, np.abs(operands.input.astype(np.float64)),
                                 np.abs(operands.weight.astype(np.float64)))
    return gamma * magnitude
