"""Small ONNX models built with ``onnx.helper`` for the import tests (nothing is downloaded).

:class:`GraphBuilder` appends nodes to a graph and tracks each activation's NCHW shape so the
builders below read like the networks they describe. Weights are initializers: real (small)
arrays by default, or, with ``external_weights=True``, tensors that only declare their shape and
point at an external data file that is never written (the importer does not read weights; a
ResNet-50's 25 M parameters would otherwise be 100 MB of test data).
"""

from __future__ import annotations

from math import prod
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    """Nodes, initializers and graph inputs of one model under construction."""

    def __init__(self, external_weights: bool = False, opset: int = 17):
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.external = external_weights
        self.opset = opset
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def input(self, name: str, shape: list[int | str]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def weight(self, name: str, shape: list[int]) -> str:
        if self.external:
            tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
            tensor.data_location = TensorProto.EXTERNAL
            entry = tensor.external_data.add()
            entry.key, entry.value = "location", "weights.bin"  # never written: shapes only
        else:
            values = np.random.default_rng(len(self.initializers)).standard_normal(shape).astype(np.float32)
            tensor = numpy_helper.from_array(values, name)
        self.initializers.append(tensor)
        return name

    def node(self, op: str, inputs: list[str], name: str | None = None, **attrs) -> str:
        out = self.fresh(f"{op.lower()}_out")
        self.nodes.append(helper.make_node(op, inputs, [out], name=name if name is not None else "", **attrs))
        return out

    def conv(self, x: str, c: int, k: int, kernel: int, name: str, stride: int = 1, pad: int | None = None,
             group: int = 1, **attrs) -> str:
        pad = kernel // 2 if pad is None else pad
        w = self.weight(f"{name}.weight", [k, c // group, kernel, kernel])
        return self.node("Conv", [x, w], name, kernel_shape=[kernel, kernel], strides=[stride, stride],
                         pads=[pad, pad, pad, pad], group=group, **attrs)

    def model(self, output: str, graph_name: str = "test") -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, graph_name, self.inputs,
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
                                  initializer=self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def resnet_block(batch: int | str = 1) -> onnx.ModelProto:
    """A stem conv and two basic residual blocks (the second with a stride-2 projection):
    conv 7x7/2 -> relu -> maxpool -> [3x3, 3x3, add] -> [3x3/2, 3x3, 1x1/2 proj, add]."""
    g = GraphBuilder()
    x = g.input("image", [batch, 3, 32, 32])
    y = g.node("Relu", [g.conv(x, 3, 16, 7, "stem", stride=2, pad=3)], "stem_relu")
    y = g.node("MaxPool", [y], "pool", kernel_shape=[2, 2], strides=[2, 2])  # 16 -> 8
    a = g.node("Relu", [g.conv(y, 16, 16, 3, "b1_conv1")], "b1_relu1")
    a = g.conv(a, 16, 16, 3, "b1_conv2")
    y = g.node("Relu", [g.node("Add", [a, y], "b1_add")], "b1_relu2")
    a = g.node("Relu", [g.conv(y, 16, 32, 3, "b2_conv1", stride=2)], "b2_relu1")
    a = g.conv(a, 32, 32, 3, "b2_conv2")
    shortcut = g.conv(y, 16, 32, 1, "b2_proj", stride=2, pad=0)
    return g.model(g.node("Relu", [g.node("Add", [a, shortcut], "b2_add")], "b2_relu2"), "resnet_block")


def depthwise_separable(batch: int | str = 1) -> onnx.ModelProto:
    """MobileNet-style: 3x3 depthwise (stride 2, asymmetric SAME_UPPER padding) -> relu ->
    1x1 pointwise -> batch norm, with one unnamed node (its output names the layer)."""
    g = GraphBuilder()
    x = g.input("x", [batch, 8, 15, 15])
    w = g.weight("dw.weight", [8, 1, 3, 3])
    d = g.node("Conv", [x, w], "dw", kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER", group=8)
    d = g.node("Relu", [d], "dw_relu")
    p = g.conv(d, 8, 24, 1, "", pad=0)  # no node name: the layer takes the output's name
    scale, bias, mean, var = (g.weight(f"bn.{n}", [24]) for n in ("scale", "bias", "mean", "var"))
    return g.model(g.node("BatchNormalization", [p, scale, bias, mean, var], "bn"), "dw_separable")


def grouped_block(batch: int | str = 1) -> onnx.ModelProto:
    """ResNeXt-style: 1x1 conv -> 3x3 conv in 4 groups (each 8 filters over its own 8 channels)
    -> 1x1 conv."""
    g = GraphBuilder()
    x = g.input("x", [batch, 16, 8, 8])
    a = g.node("Relu", [g.conv(x, 16, 32, 1, "reduce", pad=0)], "reduce_relu")
    a = g.node("Relu", [g.conv(a, 32, 32, 3, "grouped", group=4)], "grouped_relu")
    return g.model(g.conv(a, 32, 64, 1, "expand", pad=0), "grouped_block")


def mlp(batch: int | str = 1) -> onnx.ModelProto:
    """Flatten -> Gemm (transB) -> Relu -> MatMul + bias Add -> Relu -> Gemm."""
    g = GraphBuilder()
    x = g.input("pixels", [batch, 1, 28, 28])
    h = g.node("Flatten", [x], "flatten")
    h = g.node("Relu", [g.node("Gemm", [h, g.weight("fc1.w", [128, 784]), g.weight("fc1.b", [128])], "fc1",
                                transB=1)], "relu1")
    h = g.node("MatMul", [h, g.weight("fc2.w", [128, 64])], "fc2")
    h = g.node("Relu", [g.node("Add", [h, g.weight("fc2.b", [64])], "fc2_bias")], "relu2")
    return g.model(g.node("Gemm", [h, g.weight("fc3.w", [64, 10])], "fc3"), "mlp")


def attention_block(batch: int | str = 1, tokens: int = 16, width: int = 32, heads: int = 4) -> onnx.ModelProto:
    """One self-attention block as exporters write it: Q, K, V projections (MatMul with weight
    initializers), split into heads (Reshape, Transpose), scores Q.K^T and context A.V
    (batched MatMuls of two activations), softmax, merge heads, output projection, residual Add."""
    g = GraphBuilder()
    x = g.input("tokens", [batch, tokens, width])
    d = width // heads
    g.initializers.append(numpy_helper.from_array(np.array([0, tokens, heads, d], dtype=np.int64), "split_shape"))
    g.initializers.append(numpy_helper.from_array(np.array([0, tokens, width], dtype=np.int64), "merge_shape"))

    def project(name: str, src: str) -> str:
        return g.node("MatMul", [src, g.weight(f"{name}.w", [width, width])], name)

    def split(src: str, perm: list[int], name: str) -> str:
        return g.node("Transpose", [g.node("Reshape", [src, "split_shape"], f"{name}_reshape")], f"{name}_heads",
                      perm=perm)

    q = split(project("q_proj", x), [0, 2, 1, 3], "q")
    k = split(project("k_proj", x), [0, 2, 3, 1], "k")  # K^T: [batch, heads, d, tokens]
    v = split(project("v_proj", x), [0, 2, 1, 3], "v")
    scores = g.node("Softmax", [g.node("MatMul", [q, k], "scores")], "softmax", axis=-1)
    context = g.node("MatMul", [scores, v], "context")
    merged = g.node("Reshape", [g.node("Transpose", [context], "merge_heads", perm=[0, 2, 1, 3]), "merge_shape"],
                    "merge_reshape")
    return g.model(g.node("Add", [project("out_proj", merged), x], "residual"), "attention")


def resnet50_v1(batch: int | str = 1) -> onnx.ModelProto:
    """ResNet-50 as He et al. Table 1 with projection shortcuts on each stage's first block and
    the stride on the first 1x1 conv (v1, the bundled table's convention); weights external."""
    g = GraphBuilder(external_weights=True)
    x = g.input("input", [batch, 3, 224, 224])
    y = g.node("Relu", [g.conv(x, 3, 64, 7, "conv1", stride=2, pad=3)], "conv1_relu")
    y = g.node("MaxPool", [y], "pool1", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = 64
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], start=2):
        for block in range(1, blocks + 1):
            stride = 2 if block == 1 and stage > 2 else 1
            prefix = f"conv{stage}_{block}"
            a = g.node("Relu", [g.conv(y, channels, width, 1, f"{prefix}_a", stride=stride, pad=0)])
            a = g.node("Relu", [g.conv(a, width, width, 3, f"{prefix}_b")])
            a = g.conv(a, width, 4 * width, 1, f"{prefix}_c", pad=0)
            shortcut = g.conv(y, channels, 4 * width, 1, f"{prefix}_proj", stride=stride, pad=0) if block == 1 else y
            y = g.node("Relu", [g.node("Add", [a, shortcut], f"{prefix}_add")])
            channels = 4 * width
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y], "pool5")], "flatten")
    return g.model(g.node("Gemm", [y, g.weight("fc.w", [1000, 2048]), g.weight("fc.b", [1000])], "fc", transB=1),
                   "resnet50")


def onnx_macs(model: onnx.ModelProto) -> dict[str, int]:
    """MACs of every Conv, Gemm, MatMul and activation Add, keyed by node name (or output name),
    from the node attributes and ONNX's own shape inference only: ONNX's formulas, written out
    here independently of the importer.

    Conv: N x K x (C / group) x OH x OW x kH x kW with OH = floor((H + pads - kH) / stride) + 1
    (SAME_*: ceil(H / stride)); Gemm/MatMul: rows x N x K; Add: output elements."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inferred.graph.input) + list(inferred.graph.value_info)}
    shapes.update({t.name: list(t.dims) for t in inferred.graph.initializer})
    constants = {t.name for t in inferred.graph.initializer}
    macs = {}
    for node in inferred.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        name = node.name or node.output[0]
        if node.op_type == "Conv":
            n, c, h, w = shapes[node.input[0]]
            k, _, kh, kw = shapes[node.input[1]]
            sh, sw = attrs.get("strides", [1, 1])
            if attrs.get("auto_pad", b"NOTSET") in (b"SAME_UPPER", b"SAME_LOWER"):
                oh, ow = -(-h // sh), -(-w // sw)
            else:
                t, left, b, r = attrs.get("pads", [0, 0, 0, 0])
                oh, ow = (h + t + b - kh) // sh + 1, (w + left + r - kw) // sw + 1
            macs[name] = n * k * (c // attrs.get("group", 1)) * oh * ow * kh * kw
        elif node.op_type in ("Gemm", "MatMul"):
            a, b = shapes[node.input[0]], shapes[node.input[1]]
            if node.op_type == "Gemm":
                rows, inner = (a[1], a[0]) if attrs.get("transA") else (a[0], a[1])
                cols = b[0] if attrs.get("transB") else b[1]
                macs[name] = rows * inner * cols
            elif len(b) == 2:  # B shared by every row of A
                macs[name] = prod(a[:-1]) * a[-1] * b[-1]
            else:
                batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
                macs[name] = prod(batch) * a[-2] * a[-1] * b[-1]
        elif node.op_type == "Add" and not constants & set(node.input):
            macs[name] = prod(shapes[node.input[0]])
    return macs
