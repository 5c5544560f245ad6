"""Layers (one operator with concrete sizes) and networks (ordered lists of layers).

Every operator is described by the user-facing sizes MAESTRO uses (N, K, C, R, S, Y, X with
Y/X the *input* rows/cols; M, N, K for GEMM) and lowered to one canonical loop nest whose
iteration dimensions are in *output* coordinates (``Y'``, ``X'``). What each operator's sizes,
loop nest, tensors and rules are is defined once, in the operator catalog
(:mod:`accelsim.workload.operators`); this module only applies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from math import prod
from typing import Mapping

from accelsim.errors import InputError
from accelsim.workload.loopnest import Axis, LoopNest, axis_distinct
from accelsim.workload.operators import (TENSOR_ROLES, Coefficient, Operator, OpType, Window, op_names,
                                         operator, parse_op)

__all__ = ["TENSOR_ROLES", "Layer", "LayerDataflow", "LoopNest", "Network", "OpType", "axis_distinct"]


@dataclass(frozen=True)
class Layer:
    """One operator with concrete sizes.

    ``sizes`` holds the user-facing dimensions (see the operator catalog); Y and X are input
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
        kind = op if isinstance(op, OpType) else parse_op(op)
        if kind is None:
            raise InputError(f"layer {name!r}: unknown operator type {op!r}; expected one of {op_names()}",
                             source=where)
        allowed = operator(kind).dims
        unknown = sorted(set(sizes) - set(allowed))
        if unknown:
            raise InputError(
                f"layer {name!r}: dimension(s) {', '.join(unknown)} do not exist for {kind.value}; "
                f"expected {', '.join(allowed)}",
                source=where,
            )
        full: dict[str, int] = {}
        for dim, default in allowed.items():
            value = sizes.get(dim, default)
            if value is None:
                raise InputError(f"layer {name!r}: missing dimension {dim} for {kind.value}", source=where)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(
                    f"layer {name!r}: dimension {dim} must be a positive integer, got {value!r}",
                    source=where,
                )
            full[dim] = value
        for label, s in (("stride Y", stride_y), ("stride X", stride_x)):
            if isinstance(s, bool) or not isinstance(s, int) or s < 1:
                raise InputError(f"layer {name!r}: {label} must be a positive integer, got {s!r}", source=where)
        for rule in operator(kind).rules:
            if not rule.holds(full):
                raise InputError(f"layer {name!r}: {rule.message(full)}", source=where)
        return cls(name, kind, full, stride_y, stride_x, source)

    @property
    def operator(self) -> Operator:
        """This layer's operator definition (the catalog entry)."""
        return operator(self.op)

    # ----- derived sizes -------------------------------------------------------------------
    def stride(self, window: Window) -> int:
        """The stride of ``window`` (rows: ``stride_y``, cols: ``stride_x``)."""
        return self.stride_y if window.stride == "stride_y" else self.stride_x

    def output_size(self, window: Window) -> int:
        """Outputs along ``window``: ``floor((input - filter) / stride) + 1``."""
        filt = self.sizes[window.filter_dim] if window.filter_dim else 1
        return (self.sizes[window.input_dim] - filt) // self.stride(window) + 1

    def window_of(self, dim: str) -> Window | None:
        """The window reading input dimension ``dim`` (Y or X of a convolution), or None."""
        return self.operator.window(dim)

    @property
    def out_y(self) -> int:
        """Output rows ``floor((Y - R) / stride_y) + 1``."""
        return self._output_along("Y")

    @property
    def out_x(self) -> int:
        """Output cols ``floor((X - S) / stride_x) + 1``."""
        return self._output_along("X")

    def _output_along(self, dim: str) -> int:
        window = self.window_of(dim)
        if window is None:
            raise ValueError(f"a {self.op.value} layer has no input dimension {dim}")
        return self.output_size(window)

    @property
    def macs(self) -> int:
        """Exact multiply-accumulates (element-wise adds for a residual add)."""
        return prod(self.loop_nest().dims.values())

    def loop_nest(self) -> LoopNest:
        """Lower to the canonical loop nest in output coordinates (lowered once per layer and
        shared: read it, copy its dicts to change them)."""
        return self._loop_nest

    @cached_property
    def _loop_nest(self) -> LoopNest:
        spec = self.operator
        outputs = {w.output_dim: self.output_size(w) for w in spec.windows}
        dims = {d: outputs[d] if d in outputs else self.sizes[d] for d in spec.loop}
        tensors = {role: tuple(self._axis(axis) for axis in axes) for role, axes in spec.tensors.items()}
        return LoopNest(dims=dims, tensors=tensors, layouts=dict(spec.layouts))

    def _axis(self, spec: tuple[tuple[str, Coefficient], ...]) -> Axis:
        strides = {"stride_y": self.stride_y, "stride_x": self.stride_x}
        return tuple((d, c if isinstance(c, int) else strides[c]) for d, c in spec)


@dataclass(frozen=True)
class LayerDataflow:
    """The mapping a network table gives one of its layers: MAESTRO dataflow directives as
    written (the text of a layer's ``dataflow`` field). The table only carries the text; the
    mapping layer (:func:`accelsim.mapping.jobs.jobs_from_network`) parses and checks it.
    ``line`` is the file line the text starts on (error messages point there)."""

    layer: str
    text: str
    source: str
    line: int | None = None


@dataclass(frozen=True)
class Network:
    """An ordered list of named layers, with the dataflows its table gives some of them."""

    name: str
    layers: tuple[Layer, ...]
    source: str = ""
    dataflows: tuple[LayerDataflow, ...] = field(default=(), compare=False)

    def dataflow(self, layer: str) -> LayerDataflow | None:
        """The dataflow the table gives ``layer``, or None."""
        return next((d for d in self.dataflows if d.layer == layer), None)

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
