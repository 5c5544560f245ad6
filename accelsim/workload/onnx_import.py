"""Import an ONNX model as a network table (``--network model.onnx``, ``accelsim import-onnx``).

Shapes come from ONNX shape inference after the batch size is fixed; weights are never read
(external data is not loaded), only the shapes of tensors. Each node becomes at most one layer:

- ``Conv`` (2-D): ``CONV2D``, ``PWCONV`` for a 1x1 kernel, ``DWCONV`` when every input channel
  has its own single filter (``group`` = C = K), ``NGCONV`` for other groups (``G`` = group,
  ``K`` and ``C`` per group, as MAESTRO's grouped convolution). ``Y``/``X`` are the input sizes plus the top and
  bottom (left and right) padding, so ``floor((Y - R) / stride) + 1`` is ONNX's output size. The
  bias is not a MAC and is left out.
- ``Gemm`` and ``MatMul`` whose second operand is a constant matrix (an initializer or a
  ``Constant`` node): ``FC`` with ``N`` = the rows of the first operand (all its leading
  dimensions), ``K`` = output features, ``C`` = input features. With a second operand computed
  by the graph: ``GEMM`` with ``M``, ``N``, ``K`` (``C[M][N] += A[M][K] B[K][N]``); when both
  operands carry the same batch dimensions (attention's Q.K^T and A.V): ``BMM`` with ``B`` = their
  product.
- ``Add`` of two activations of the same shape: ``RESADD`` (a residual add). Rank 4 is read as
  N, C, H, W; rank 3 as N, rows, channels (a transformer's batch, tokens, features); rank 2 as
  N, C.

Every other node (pooling, activations, normalization, reshapes, an ``Add`` of a constant or
with broadcasting, ...) is *skipped*: :attr:`OnnxImport.skipped` lists them by kind, and the CLI
prints that list once per model as a warning. ``strict=True`` refuses such a model instead.
``Constant`` nodes only provide values and are not listed. A ``Conv``, ``Gemm`` or ``MatMul``
with something accelsim cannot represent (dilation, other than 2-D, batch dimensions that
broadcast) is refused: leaving it out would drop MACs.

Layer names are the node names, or the node's first output name where the node has no name
(or a name an earlier node already took).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Any, Callable, Sequence

from accelsim.errors import InputError
from accelsim.input_files import check_regular_file
from accelsim.workload.ops import Layer, Network, OpType

# Standard operators that multiply and accumulate but that the importer does not translate:
# refused, as skipping them would drop their MACs from the network.
MAC_OPERATORS = frozenset({"ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul", "Einsum", "LSTM", "GRU",
                           "RNN", "DeformConv"})
MAX_BATCH = 2**53  # larger batch sizes could not be counted exactly (README, Exact counts)
ONNX_INSTALL_HINT = "reading ONNX models needs the onnx package: pip install 'accelsim[onnx]'"


@dataclass(frozen=True)
class OnnxImport:
    """The network read from a model, the batch size used, and the nodes left out.

    ``skipped`` maps a description of each kind of node left out (``"Relu"``, ``"Conv with
    dilation 2x2 (not modelled)"``, ...) to the names of those nodes, in graph order.
    """

    network: Network
    batch: int
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def skipped_summary(self) -> str:
        """One line: the kinds of nodes left out with their counts (empty when none)."""
        if not self.skipped:
            return ""
        total = sum(len(names) for names in self.skipped.values())
        kinds = ", ".join(f"{kind} x{len(names)}" for kind, names in self.skipped.items())
        return f"skipped {total} node(s) accelsim does not simulate: {kinds}"


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise InputError(ONNX_INSTALL_HINT) from None
    return onnx


def import_onnx(path: str | os.PathLike[str], batch: int | None = None, strict: bool = False) -> OnnxImport:
    """Read the ONNX model at ``path`` as a :class:`Network`.

    ``batch`` replaces the first dimension of every graph input (those that are not
    initializers); without it a symbolic first dimension becomes 1 and a fixed one is kept.
    Raises :class:`InputError` naming the file (and node) for every problem.
    """
    onnx = _onnx()
    label = str(path)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH):
        raise InputError(f"batch size must be an integer from 1 to {MAX_BATCH:,}, got {batch!r}", source=label)
    check_regular_file(path, "ONNX model file")
    try:
        model = onnx.load(os.fspath(path), load_external_data=False)
    except Exception as exc:  # protobuf's DecodeError and friends: not an ONNX file
        raise InputError(f"not a readable ONNX model ({type(exc).__name__}: {exc})", source=label) from None
    _check_opset(model, onnx, label)
    graph = model.graph
    if not graph.node:
        raise InputError("the model's graph has no nodes", source=label)
    used_batch = _fix_inputs(graph, batch, label)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as exc:
        raise InputError(f"ONNX shape inference failed: {str(exc).strip().splitlines()[-1]}", source=label) from None
    return _Importer(inferred.graph, label).run(used_batch, strict)


def _check_opset(model: Any, onnx: Any, label: str) -> None:
    """Refuse a model of a newer standard operator set than the installed onnx package knows:
    its shape inference would apply the wrong operators' rules."""
    known = onnx.defs.onnx_opset_version()
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx") and opset.version > known:
            raise InputError(f"the model uses ONNX opset {opset.version}; the installed onnx package "
                             f"{onnx.__version__} knows opsets up to {known} (upgrade onnx, or export the model "
                             f"with opset {known} or older)", source=label)


def _fix_inputs(graph: Any, batch: int | None, label: str) -> int:
    """Set the batch dimension of the graph's data inputs; refuse other symbolic sizes.
    Returns the batch size in force (that of the first data input)."""
    initializers = {t.name for t in graph.initializer}
    seen: list[int] = []
    for value in graph.input:
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        dims = value.type.tensor_type.shape.dim
        if not dims:
            continue
        first = dims[0]
        if batch is not None:
            first.Clear()
            first.dim_value = batch
        elif not first.HasField("dim_value"):
            first.Clear()
            first.dim_value = 1
        seen.append(first.dim_value)
        for axis, dim in enumerate(dims):
            if not dim.HasField("dim_value"):
                name = f" ({dim.dim_param!r})" if dim.dim_param else ""
                raise InputError(
                    f"input {value.name!r}: dimension {axis} has no fixed size{name}; accelsim needs every "
                    "size except the batch fixed (export the model with fixed input sizes)",
                    source=label,
                )
    return seen[0] if seen else (batch or 1)


def _attributes(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _Importer:
    """Walks one shape-inferred graph and turns its nodes into layers."""

    def __init__(self, graph: Any, label: str):
        self.label = label
        self.shapes: dict[str, tuple[int, ...] | None] = {}
        for value in list(graph.input) + list(graph.value_info) + list(graph.output):
            self.shapes[value.name] = _static_shape(value)
        for tensor in graph.initializer:
            self.shapes[tensor.name] = tuple(int(d) for d in tensor.dims)
        self.constants = {t.name for t in graph.initializer}
        self.constants |= {out for node in graph.node if node.op_type == "Constant" for out in node.output}
        self.nodes = list(graph.node)
        self.name_of = graph.name or Path(label).stem

    def run(self, batch: int, strict: bool) -> OnnxImport:
        layers: list[Layer] = []
        skipped: dict[str, list[str]] = {}
        taken: set[str] = set()
        handlers: dict[str, Callable[[Any, str], Layer | str]] = {
            "Conv": self._conv, "ConvTranspose": self._conv_transpose, "Gemm": self._gemm, "MatMul": self._matmul,
            "Add": self._add,
        }
        for node in self.nodes:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                continue
            if node.op_type == "Reshape":
                self._check_reshape(node)
            name = self._layer_name(node, taken)
            handler = handlers.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            if handler is None and node.domain in ("", "ai.onnx") and node.op_type in MAC_OPERATORS:
                raise self._refuse(node, name, "multiply-accumulates accelsim does not import (skipping the node "
                                               "would drop them; write it as Conv, ConvTranspose, Gemm or MatMul)")
            outcome = handler(node, name) if handler else _kind(node)
            if isinstance(outcome, str):
                skipped.setdefault(outcome, []).append(name)
                continue
            taken.add(name)
            layers.append(outcome)
        if strict and skipped:
            listing = "; ".join(f"{kind}: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
                                for kind, names in skipped.items())
            raise InputError(f"--strict: the model has nodes accelsim does not simulate ({listing})",
                             source=self.label)
        if not layers:
            raise InputError("no node of the model is a layer accelsim simulates (Conv, Gemm, MatMul, Add); "
                             + OnnxImport(Network("", ()), batch, skipped).skipped_summary(),
                             source=self.label)
        network = Network(name=self.name_of, layers=tuple(layers), source=self.label)
        return OnnxImport(network, batch, skipped)

    # ----- helpers ----------------------------------------------------------------------
    def _layer_name(self, node: Any, taken: set[str]) -> str:
        for candidate in (node.name, node.output[0] if node.output else ""):
            if candidate and candidate not in taken:
                return candidate
        base = node.name or (node.output[0] if node.output else node.op_type)
        k = 2
        while f"{base}_{k}" in taken:
            k += 1
        return f"{base}_{k}"

    def _shape(self, node: Any, tensor: str, what: str) -> tuple[int, ...]:
        shape = self.shapes.get(tensor)
        if shape is None:
            raise InputError(
                f"node {node.name or node.output[0]!r} ({node.op_type}): shape inference left the shape of its "
                f"{what} {tensor!r} unknown",
                source=self.label,
            )
        return shape

    def _build(self, node: Any, name: str, op: OpType, sizes: dict[str, int], stride_y: int = 1,
               stride_x: int = 1) -> Layer:
        return Layer.build(name, op, sizes, stride_y, stride_x,
                           source=f"{self.label} node {name!r} ({node.op_type})")

    def _refuse(self, node: Any, name: str, what: str) -> InputError:
        """A node of an operator accelsim imports, with something it cannot represent: refused
        rather than skipped, as leaving it out would drop its MACs from the network."""
        return InputError(f"node {name!r} ({node.op_type}) has {what}", source=self.label)

    def _check_reshape(self, node: Any) -> None:
        """A reshape keeps the element count; a fixed target shape written for another batch size
        breaks that, and every size after it would be wrong."""
        before, after = self.shapes.get(node.input[0]), self.shapes.get(node.output[0])
        if before is not None and after is not None and prod(before) != prod(after):
            raise InputError(
                f"node {node.name or node.output[0]!r} (Reshape): reshapes {list(before)} into {list(after)}, a "
                "different number of elements; its target shape is fixed for another batch size (export the "
                "model with a dynamic batch dimension, or import it at its own batch size)",
                source=self.label,
            )

    # ----- operators --------------------------------------------------------------------
    def _operands(self, node: Any, name: str, what: str) -> None:
        """Refuse a node with fewer inputs than its operator needs (``what`` names them)."""
        if len(node.input) < 2 or not node.input[0] or not node.input[1]:
            raise self._refuse(node, name, f"{len(node.input)} input(s); it needs {what}")

    def _conv_operands(self, node: Any, name: str, kind: str) -> tuple[dict[str, Any], tuple[int, ...], tuple[int, ...]]:
        """The attributes and the input and weight shapes of a 2-D convolution node; refuses
        other ranks (``kind`` ends the message: what the node is and what is modelled)."""
        attrs = _attributes(node)
        self._operands(node, name, "an input and a weight")
        x = self._shape(node, node.input[0], "input")
        w = self._shape(node, node.input[1], "weight")
        if len(x) != 4 or len(w) != 4:
            raise self._refuse(node, name, f"a {len(x) - 2}-D {kind}")
        return attrs, x, w

    def _conv(self, node: Any, name: str) -> Layer | str:
        attrs, x, w = self._conv_operands(node, name, "convolution (only 2-D convolutions are modelled)")
        n, c, h, wd = x
        k, c_per_group, r, s = w
        group = int(attrs.get("group", 1))
        dilations = list(attrs.get("dilations", [1, 1]))
        if any(d != 1 for d in dilations):
            raise self._refuse(node, name, f"dilation {'x'.join(map(str, dilations))} (dilated convolutions are "
                                           "not modelled)")
        strides = list(attrs.get("strides", [1, 1]))
        pad_y, pad_x = self._conv_padding(node, attrs, (h, wd), (r, s), strides)
        sizes = {"N": n, "C": c, "R": r, "S": s, "Y": h + pad_y, "X": wd + pad_x}
        if group == 1:
            op = OpType.PWCONV if (r, s) == (1, 1) else OpType.CONV2D
            sizes["K"] = k
            if op is OpType.PWCONV:
                del sizes["R"], sizes["S"]
        elif group == c and c_per_group == 1 and k == c:
            op = OpType.DWCONV
        elif c == group * c_per_group and k % group == 0:
            # grouped (ResNeXt): G groups, each k / G filters over its own c / G channels
            op = OpType.NGCONV
            sizes.update(G=group, K=k // group, C=c_per_group)
        else:
            raise self._refuse(node, name, f"{group} groups of {c_per_group} input channels for {c} channels and {k} "
                                           "filters (ONNX requires both to divide into the groups)")
        layer = self._build(node, name, op, sizes, strides[0], strides[1])
        self._check_output(node, layer, (n, k, layer.out_y, layer.out_x))
        return layer

    def _conv_transpose(self, node: Any, name: str) -> Layer | str:
        """ConvTranspose as MAESTRO's TRCONV: each input pixel scatters its R x S filter at the
        stride, output (Y - 1) * stride + R. Only the plain case maps onto it: one group, no
        dilation, padding or output padding (anything else is refused, as skipping it would drop
        its MACs)."""
        attrs, x, w = self._conv_operands(node, name, "transposed convolution (only 2-D ones are modelled)")
        n, c, h, wd = x
        c_w, k, r, s = w  # ONNX: weight is (C, K / group, R, S)
        unsupported = {"group": int(attrs.get("group", 1)) != 1,
                       "dilation": any(d != 1 for d in attrs.get("dilations", [1, 1])),
                       "padding": any(attrs.get("pads", [0, 0, 0, 0])) or attrs.get("auto_pad", b"NOTSET") not in (
                           b"NOTSET", "NOTSET", b"VALID", "VALID"),
                       "output padding": any(attrs.get("output_padding", [0, 0])),
                       "an explicit output shape": "output_shape" in attrs}
        refused = [what for what, present in unsupported.items() if present]
        if refused or c_w != c:
            raise self._refuse(node, name, f"{', '.join(refused) or 'a weight of other channels'} (a transposed "
                                           "convolution is imported as TRCONV only with one group and no dilation "
                                           "or padding)")
        strides = list(attrs.get("strides", [1, 1]))
        layer = self._build(node, name, OpType.TRCONV, {"N": n, "K": k, "C": c, "R": r, "S": s, "Y": h, "X": wd},
                            strides[0], strides[1])
        self._check_output(node, layer, (n, k, (h - 1) * strides[0] + r, (wd - 1) * strides[1] + s))
        return layer

    def _conv_padding(self, node: Any, attrs: dict[str, Any], size: tuple[int, int], kernel: tuple[int, int],
                      strides: Sequence[int]) -> tuple[int, int]:
        """Total padding (both sides) along rows and columns."""
        auto = attrs.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else str(auto)
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            rows, cols = (max((-(-dim // st) - 1) * st + k - dim, 0) for dim, k, st in zip(size, kernel, strides))
            return rows, cols
        if auto == "VALID":
            return 0, 0
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
        return pads[0] + pads[2], pads[1] + pads[3]

    def _check_output(self, node: Any, layer: Layer, expected: tuple[int, ...]) -> None:
        """The layer's output sizes must be ONNX's (shape inference) where it knows them."""
        out = self.shapes.get(node.output[0])
        if out is not None and tuple(out) != tuple(expected):
            raise InputError(
                f"node {layer.name!r} ({node.op_type}): ONNX infers output shape {list(out)} but the layer "
                f"{layer.op.value} computes {list(expected)}",
                source=self.label,
            )

    def _gemm(self, node: Any, name: str) -> Layer | str:
        attrs = _attributes(node)
        self._operands(node, name, "operands A and B")
        a = self._shape(node, node.input[0], "operand A")
        b = self._shape(node, node.input[1], "operand B")
        if len(a) != 2 or len(b) != 2:
            raise self._refuse(node, name, "operands that are not matrices")
        m, k = (a[1], a[0]) if attrs.get("transA", 0) else a
        k_b, n = (b[1], b[0]) if attrs.get("transB", 0) else b
        layer = self._matrix_product(node, name, 1, m, n, k, k_b, node.input[1] in self.constants)
        self._check_output(node, layer, (m, n))
        return layer

    def _matmul(self, node: Any, name: str) -> Layer | str:
        """numpy's matmul: a 1-D operand is a row (A) or column (B) vector; a 2-D B is shared by
        every row of A, so A's leading dimensions are rows; batch dimensions of both operands
        pair up one to one (a BMM)."""
        self._operands(node, name, "operands A and B")
        a = self._shape(node, node.input[0], "operand A")
        b = self._shape(node, node.input[1], "operand B")
        if not a or not b:
            raise self._refuse(node, name, "a scalar operand")
        a2 = (1,) + a if len(a) == 1 else a
        b2 = b + (1,) if len(b) == 1 else b
        k, k_b, n = a2[-1], b2[-2], b2[-1]
        if len(b2) == 2:
            layer = self._matrix_product(node, name, 1, prod(a2[:-1]), n, k, k_b, node.input[1] in self.constants)
            expected: tuple[int, ...] = (prod(a2[:-1]), n)
        else:
            depth = max(len(a2), len(b2)) - 2
            batch_a = (1,) * (depth - len(a2) + 2) + a2[:-2]
            batch_b = (1,) * (depth - len(b2) + 2) + b2[:-2]
            if batch_a != batch_b:
                raise self._refuse(node, name, f"batch dimensions {list(batch_a)} and {list(batch_b)} that broadcast "
                                               "(one operand shared by several products is not modelled)")
            layer = self._matrix_product(node, name, prod(batch_a), a2[-2], n, k, k_b, False)
            expected = (prod(batch_a), a2[-2], n)
        out = self.shapes.get(node.output[0])
        if out is not None and prod(out) != prod(expected):
            raise InputError(f"node {name!r} (MatMul): ONNX infers output shape {list(out)}, not "
                             f"{list(expected)} elements' worth", source=self.label)
        return layer

    def _matrix_product(self, node: Any, name: str, batch: int, m: int, n: int, k: int, k_b: int,
                        constant_b: bool) -> Layer:
        """``batch`` products ``C[m][n] += A[m][k] B[k][n]``: FC when B is a constant (weights),
        GEMM of two activations, BMM when there are several independent products."""
        if k != k_b:
            raise InputError(f"node {name!r} ({node.op_type}): inner dimensions differ ({k} and {k_b})",
                             source=self.label)
        if batch > 1:
            return self._build(node, name, OpType.BMM, {"B": batch, "M": m, "N": n, "K": k})
        if constant_b:
            return self._build(node, name, OpType.FC, {"N": m, "K": n, "C": k})
        return self._build(node, name, OpType.GEMM, {"M": m, "N": n, "K": k})

    def _add(self, node: Any, name: str) -> Layer | str:
        if len(node.input) != 2:
            return "Add with other than two operands"
        if any(i in self.constants for i in node.input):
            return "Add with a constant operand (a bias, not modelled)"
        a = self._shape(node, node.input[0], "first operand")
        b = self._shape(node, node.input[1], "second operand")
        if a != b:
            return "Add with broadcasting (operands of different shapes, not modelled)"
        if len(a) == 4:
            n, c, h, w = a
        elif len(a) == 3:
            n, h, c, w = a[0], a[1], a[2], 1
        elif len(a) == 2:
            n, c, h, w = a[0], a[1], 1, 1
        else:
            return f"Add of rank-{len(a)} tensors (ranks 2 to 4 are modelled)"
        return self._build(node, name, OpType.RESADD, {"N": n, "C": c, "Y": h, "X": w})


def _kind(node: Any) -> str:
    """How a node of an operator we do not import is listed."""
    return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type


def _static_shape(value: Any) -> tuple[int, ...] | None:
    """A value's shape when every dimension is a known number, else None."""
    if not value.type.HasField("tensor_type") or not value.type.tensor_type.HasField("shape"):
        return None
    dims = value.type.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    return tuple(int(d.dim_value) for d in dims)
