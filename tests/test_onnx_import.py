"""ONNX import (``accelsim.workload.onnx_import``, ``import-onnx``, ``--network model.onnx``).

The models are built in ``tests/onnx_models.py`` with ``onnx.helper``; their MACs are computed
there from the node attributes and ONNX's own shape inference (``onnx_macs``), independently of
the importer, and every imported layer must have exactly those MACs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import onnx_models as models  # noqa: E402
from accelsim.cli import main  # noqa: E402
from accelsim.errors import InputError  # noqa: E402
from accelsim.workload import available_networks, load_network  # noqa: E402
from accelsim.workload.onnx_import import import_onnx  # noqa: E402
from accelsim.workload.tables import network_yaml  # noqa: E402

BUILDERS = {"resnet_block": models.resnet_block, "depthwise_separable": models.depthwise_separable,
            "mlp": models.mlp, "attention_block": models.attention_block, "grouped_block": models.grouped_block}


def _save(tmp_path: Path, model, name: str = "model") -> Path:
    return models.save(model, tmp_path / f"{name}.onnx")


@pytest.mark.parametrize("builder", sorted(BUILDERS))
def test_layer_macs_equal_the_graphs_own(tmp_path, builder):
    model = BUILDERS[builder]()
    imported = import_onnx(_save(tmp_path, model))
    assert {layer.name: layer.macs for layer in imported.network.layers} == models.onnx_macs(model)


def test_resnet_block_layers(tmp_path):
    """stem: 32x32 input, 7x7/2 with pad 3: Y = 32 + 6 = 38, output (38 - 7) // 2 + 1 = 16; the
    2x2 max pool (skipped) leaves 8x8, so b1's 3x3 convs see 8 + 2 = 10 rows; the stride-2
    projection is a 1x1 PWCONV over the 8x8 input; the adds are RESADD over N, C, H, W."""
    net = import_onnx(_save(tmp_path, models.resnet_block())).network
    got = {layer.name: (layer.op.value, dict(layer.sizes), layer.stride_y) for layer in net.layers}
    assert got["stem"] == ("CONV2D", {"N": 1, "K": 16, "C": 3, "R": 7, "S": 7, "Y": 38, "X": 38}, 2)
    assert got["b1_conv1"][1]["Y"] == 10
    assert got["b2_proj"] == ("PWCONV", {"N": 1, "K": 32, "C": 16, "R": 1, "S": 1, "Y": 8, "X": 8}, 2)
    assert got["b2_add"] == ("RESADD", {"N": 1, "K": 1, "C": 32, "R": 1, "S": 1, "Y": 4, "X": 4}, 1)
    assert [layer.name for layer in net.layers] == ["stem", "b1_conv1", "b1_conv2", "b1_add", "b2_conv1", "b2_conv2",
                                            "b2_proj", "b2_add"]


def test_depthwise_and_same_padding(tmp_path):
    """SAME_UPPER on 15 rows with stride 2: output ceil(15 / 2) = 8, total padding
    (8 - 1) * 2 + 3 - 15 = 2, so Y = 17; group = C = K = 8 is a DWCONV. The pointwise conv has no
    node name, so it is named after its output."""
    imported = import_onnx(_save(tmp_path, models.depthwise_separable()))
    dw, pw = imported.network.layers
    assert (dw.name, dw.op.value, dw.sizes["Y"], dw.out_y, dw.sizes["C"]) == ("dw", "DWCONV", 17, 8, 8)
    assert pw.op.value == "PWCONV" and pw.name.startswith("conv_out")
    assert imported.skipped == {"Relu": ["dw_relu"], "BatchNormalization": ["bn"]}


def test_grouped_convolution_is_ngconv(tmp_path):
    """group 4 over 32 channels with 32 filters: G = 4 groups of K = 32 / 4 = 8 filters over
    C = 32 / 4 = 8 channels; 3x3 with pad 1 on 8x8: Y = X = 10, output 8x8; MACs
    4 x 8 x 8 x 9 x 64 = 147,456 (ONNX: 32 filters x 8 channels each x 9 x 64, the same)."""
    net = import_onnx(_save(tmp_path, models.grouped_block())).network
    layer = net.layer("grouped")
    assert (layer.op.value, {d: layer.sizes[d] for d in ("G", "K", "C", "R", "S", "Y", "X")}) == \
        ("NGCONV", {"G": 4, "K": 8, "C": 8, "R": 3, "S": 3, "Y": 10, "X": 10})
    assert layer.macs == 147_456


def test_mlp_layers_are_fc_and_bias_add_is_listed(tmp_path):
    imported = import_onnx(_save(tmp_path, models.mlp()))
    assert [(layer.name, layer.op.value, layer.sizes["N"], layer.sizes["K"], layer.sizes["C"]) for layer in imported.network.layers] == [
        ("fc1", "FC", 1, 128, 784), ("fc2", "FC", 1, 64, 128), ("fc3", "FC", 1, 10, 64)]
    assert imported.skipped["Add with a constant operand (a bias, not modelled)"] == ["fc2_bias"]
    assert "Flatten x1" in imported.skipped_summary()


def test_resnet50_matches_the_bundled_table(tmp_path):
    """The ResNet-50 built in the test (v1: stride on the first 1x1 conv, as the bundled table)
    imports to the bundled table's 70 layers, layer by layer, and its 3,863,492,608 MACs."""
    model = models.resnet50_v1()
    imported = import_onnx(_save(tmp_path, model)).network
    bundled = load_network("resnet50")
    assert imported.macs == bundled.macs == sum(models.onnx_macs(model).values()) == 3_863_492_608

    def rows(net):
        return [(layer.name, layer.op, dict(layer.sizes), layer.stride_y, layer.stride_x) for layer in net.layers]

    assert rows(imported) == rows(bundled)


def test_batch_selection(tmp_path):
    """A symbolic batch becomes 1 unless --batch is given; a fixed one is replaced by --batch.
    Every layer's MACs scale with the batch (N is the outermost dimension of each operator)."""
    dynamic = _save(tmp_path, models.resnet_block("batch"), "dynamic")
    one = import_onnx(dynamic)
    four = import_onnx(dynamic, batch=4)
    assert one.batch == 1 and four.batch == 4
    assert [layer.macs * 4 for layer in one.network.layers] == [layer.macs for layer in four.network.layers]
    assert all(layer.sizes["N"] == 4 for layer in four.network.layers)
    fixed = _save(tmp_path, models.mlp(2), "fixed")
    assert import_onnx(fixed).network.layers[0].sizes["N"] == 2
    assert import_onnx(fixed, batch=3).network.layers[0].sizes["N"] == 3


def test_reshape_fixed_for_another_batch_is_refused(tmp_path):
    g = models.GraphBuilder()
    x = g.input("x", [1, 4, 2, 2])
    g.initializers.append(onnx.numpy_helper.from_array(np.array([1, 16], dtype=np.int64), "shape"))
    flat = g.node("Reshape", [x, "shape"], "flatten")
    model = g.model(g.node("Gemm", [flat, g.weight("w", [16, 3])], "fc"))
    path = _save(tmp_path, model)
    assert import_onnx(path).network.layers[0].sizes["N"] == 1
    with pytest.raises(InputError, match=r"node 'flatten' \(Reshape\): reshapes \[3, 4, 2, 2\] into \[1, 16\]"):
        import_onnx(path, batch=3)


def _single(op: str, shapes: list[list[int]], constant: list[bool], **attrs):
    """A model of one node whose operands are graph inputs or initializers."""
    g = models.GraphBuilder()
    names = [g.weight(f"w{i}", s) if c else g.input(f"x{i}", s) for i, (s, c) in enumerate(zip(shapes, constant))]
    return g.model(g.node(op, names, "the_node", **attrs))


def test_attention_block(tmp_path):
    """16 tokens of width 32, 4 heads of 8: the projections are FCs over 16 rows (16 x 32 x 32 =
    16,384 MACs each), the scores Q.K^T a BMM of B = 1 x 4 heads, M = N = 16 tokens, K = 8
    (4 x 16 x 16 x 8 = 8,192 MACs), the context A.V a BMM with M = 16, N = 8, K = 16 (8,192), the
    residual a RESADD over 1 x 16 x 32 (rank 3: batch, tokens, features)."""
    net = import_onnx(_save(tmp_path, models.attention_block())).network
    got = {layer.name: (layer.op.value, {d: v for d, v in layer.sizes.items()}, layer.macs) for layer in net.layers}
    assert got["q_proj"] == ("FC", {"N": 16, "K": 32, "C": 32, "R": 1, "S": 1, "Y": 1, "X": 1}, 16_384)
    assert got["scores"] == ("BMM", {"B": 4, "M": 16, "N": 16, "K": 8}, 8_192)
    assert got["context"] == ("BMM", {"B": 4, "M": 16, "N": 8, "K": 16}, 8_192)
    assert got["residual"][0] == "RESADD" and got["residual"][2] == 512
    assert [layer.name for layer in net.layers] == ["q_proj", "k_proj", "v_proj", "scores", "context", "out_proj", "residual"]


def test_attention_batch_multiplies_heads(tmp_path):
    """At batch 3 the BMMs hold 3 x 4 = 12 independent products."""
    net = import_onnx(_save(tmp_path, models.attention_block("batch")), batch=3).network
    assert net.layer("scores").sizes["B"] == 12 and net.layer("q_proj").sizes["N"] == 48


def test_matmul_of_two_activations_is_gemm(tmp_path):
    """A[6][5] x B[5][7]: GEMM M=6, N=7, K=5, 210 MACs."""
    imported = import_onnx(_save(tmp_path, _single("MatMul", [[6, 5], [5, 7]], [False, False])))
    layer = imported.network.layers[0]
    assert (layer.op.value, dict(layer.sizes), layer.macs) == ("GEMM", {"M": 6, "N": 7, "K": 5}, 210)


def test_matmul_with_constant_weight_flattens_leading_dims(tmp_path):
    """[2, 3, 8] x W[8][4]: an FC over 2 x 3 = 6 rows, 6 * 8 * 4 = 192 MACs."""
    model = _single("MatMul", [[2, 3, 8], [8, 4]], [False, True])
    layer = import_onnx(_save(tmp_path, model)).network.layers[0]
    assert (layer.op.value, layer.sizes["N"], layer.sizes["K"], layer.sizes["C"], layer.macs) == ("FC", 6, 4, 8, 192)
    assert layer.macs == models.onnx_macs(model)["the_node"]


@pytest.mark.parametrize("op, shapes, constant, attrs, kind", [
    ("Add", [[1, 4, 3, 3], [1, 4, 1, 1]], [False, False], {}, "Add with broadcasting"),
    ("Add", [[5], [5]], [False, False], {}, "Add of rank-1 tensors"),
    ("Add", [[2, 3], [2, 3]], [False, True], {}, "Add with a constant operand"),
    ("Relu", [[2, 3]], [False], {}, "Relu"),
])
def test_other_nodes_are_skipped_and_refused_with_strict(tmp_path, op, shapes, constant, attrs, kind):
    g = models.GraphBuilder()
    names = [g.weight(f"w{i}", s) if c else g.input(f"x{i}", s) for i, (s, c) in enumerate(zip(shapes, constant))]
    out = g.node(op, names, "odd", **attrs)
    g.node("Add", [g.input("y", [2, 3]), g.input("z", [2, 3])], "kept")
    path = _save(tmp_path, g.model(out))
    imported = import_onnx(path)
    assert [layer.name for layer in imported.network.layers] == ["kept"]
    assert [names for k, names in imported.skipped.items() if k.startswith(kind)] == [["odd"]]
    with pytest.raises(InputError, match=f"--strict: .*{kind}.*odd"):
        import_onnx(path, strict=True)


@pytest.mark.parametrize("op, shapes, attrs, message", [
    ("Conv", [[1, 4, 9, 9], [4, 4, 3, 3]], {"dilations": [2, 2]}, r"has dilation 2x2 \(dilated convolutions"),
    ("Conv", [[1, 4, 9], [4, 4, 3]], {}, "has a 1-D convolution"),
    ("MatMul", [[2, 3, 4], [1, 4, 5]], {}, r"has batch dimensions \[2\] and \[1\] that broadcast"),
])
def test_compute_nodes_accelsim_cannot_represent_are_refused(tmp_path, op, shapes, attrs, message):
    """Skipping these would drop their MACs, so they are refused, naming the node and why."""
    g = models.GraphBuilder()
    names = [g.input("x", shapes[0]), g.weight("w", shapes[1]) if op == "Conv" else g.input("y", shapes[1])]
    path = _save(tmp_path, g.model(g.node(op, names, "odd", **attrs)))
    with pytest.raises(InputError, match=f"node 'odd' \\({op}\\) {message}"):
        import_onnx(path)


def test_duplicate_and_missing_node_names(tmp_path):
    g = models.GraphBuilder()
    a, b = g.input("a", [2, 2]), g.input("b", [2, 2])
    s1 = g.node("Add", [a, b], "add")
    s2 = g.node("Add", [s1, b], "add")  # same node name: the layer takes its output's name
    g.node("Add", [s2, a], "")
    net = import_onnx(_save(tmp_path, g.model(s2))).network
    assert [layer.name for layer in net.layers] == ["add", s2, g.nodes[-1].output[0]]


@pytest.mark.parametrize("content, message", [
    (b"not a protobuf at all", "not a readable ONNX model"),
    (None, "ONNX model file not found"),
])
def test_unreadable_files(tmp_path, content, message):
    path = tmp_path / "m.onnx"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        import_onnx(path)


def test_symbolic_non_batch_dimension_is_refused(tmp_path):
    g = models.GraphBuilder()
    g.node("Add", [g.input("x", [1, "tokens"]), g.input("y", [1, "tokens"])], "add")
    with pytest.raises(InputError, match=r"input 'x': dimension 1 has no fixed size \('tokens'\)"):
        import_onnx(_save(tmp_path, g.model("add")))


def test_model_without_layers(tmp_path):
    g = models.GraphBuilder()
    out = g.node("Relu", [g.input("x", [1, 4])], "relu")
    with pytest.raises(InputError, match="no node of the model is a layer accelsim simulates.*Relu x1"):
        import_onnx(_save(tmp_path, g.model(out)))


def test_missing_onnx_package(tmp_path, monkeypatch):
    path = _save(tmp_path, models.mlp())
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(InputError, match=r"pip install 'accelsim\[onnx\]'"):
        import_onnx(path)


@pytest.mark.parametrize("name", available_networks())
def test_network_yaml_round_trips_every_bundled_network(tmp_path, name):
    net = load_network(name)
    path = tmp_path / "net.yaml"
    path.write_text(network_yaml(net, source="s", notes="n"), encoding="utf-8")
    again = load_network(path)
    assert again.name == net.name
    assert [(layer.name, layer.op, dict(layer.sizes), layer.stride_y, layer.stride_x) for layer in again.layers] == \
        [(layer.name, layer.op, dict(layer.sizes), layer.stride_y, layer.stride_x) for layer in net.layers]


def test_network_yaml_quotes_odd_names(tmp_path):
    net = load_network("marvel15")
    odd = type(net)("a: b", tuple(type(layer)(n, layer.op, layer.sizes, layer.stride_y, layer.stride_x)
                                  for layer, n in zip(net.layers[:3], ["x,y {z}", "/l1/Conv", "123"])))
    path = tmp_path / "net.yaml"
    path.write_text(network_yaml(odd), encoding="utf-8")
    assert [layer.name for layer in load_network(path).layers] == ["x,y {z}", "/l1/Conv", "123"]


# ----- command line ----------------------------------------------------------------------------
def test_simulate_network_onnx_macs_per_layer(tmp_path):
    """Acceptance: ``accelsim simulate --hw eyeriss_like --network tests-built.onnx --style
    nvdla_like`` runs, and each layer's MACs equal the graph's own."""
    model = models.resnet_block()
    path = _save(tmp_path, model)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--network", str(path), "--style",
                                       "nvdla_like", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: ") and "skipped 6 node(s)" in result.stderr
    assert "InputWarning" not in result.stderr  # one warning line, not Python's warning format
    rows = json.loads(out.read_text())
    assert {row["layer"]: row["macs"] for row in rows} == models.onnx_macs(model)


@pytest.mark.parametrize("style", ["nvdla_like", "eyeriss_like"])
def test_grouped_model_simulates_with_the_graphs_macs(tmp_path, style):
    model = models.grouped_block()
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["simulate", "--hw", "eyeriss_like", "--network", str(_save(tmp_path, model)),
                                       "--style", style, "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert {row["layer"]: row["macs"] for row in json.loads(out.read_text())} == models.onnx_macs(model)


def test_import_onnx_command(tmp_path):
    path = _save(tmp_path, models.resnet_block("N"))
    out = tmp_path / "net.yaml"
    runner = CliRunner()
    result = runner.invoke(main, ["import-onnx", str(path), "-o", str(out), "--batch", "2"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.stderr and "Relu x5, MaxPool x1" in result.stderr
    net = load_network(out)
    assert net.macs == 2 * import_onnx(path).network.macs
    again = runner.invoke(main, ["import-onnx", str(path), "-o", str(out)])
    assert again.exit_code == 2 and "already exists" in again.stderr
    strict = runner.invoke(main, ["import-onnx", str(path), "--strict"])
    assert strict.exit_code == 2 and strict.stderr.startswith("error: ") and "Traceback" not in strict.output
    stdout = runner.invoke(main, ["import-onnx", str(path)])
    assert stdout.exit_code == 0 and stdout.stdout.startswith("name: resnet_block")
    bad = runner.invoke(main, ["import-onnx", str(path), "--batch", "0"])
    assert bad.exit_code == 2


def test_graph_input_weights_are_not_batched(tmp_path):
    """Weights stored as initializers that are also listed as graph inputs (older exporters)
    keep their shapes when --batch rewrites the data inputs."""
    model = models.mlp()
    for tensor in model.graph.initializer:
        model.graph.input.append(helper.make_tensor_value_info(tensor.name, TensorProto.FLOAT, list(tensor.dims)))
    imported = import_onnx(_save(tmp_path, model), batch=5)
    assert [(layer.sizes["N"], layer.sizes["K"]) for layer in imported.network.layers] == [(5, 128), (5, 64), (5, 10)]


def test_shipped_example_is_the_test_builders_model():
    """``examples/resnet_block.onnx`` (named in the README) is ``onnx_models.resnet_block()``
    saved; regenerate it with ``onnx_models.save(onnx_models.resnet_block(), path)``."""
    shipped = Path(__file__).resolve().parents[1] / "examples" / "resnet_block.onnx"
    assert onnx.load(str(shipped)).graph == models.resnet_block().graph


def test_conv_transpose_is_trconv_or_refused(tmp_path):
    """ConvTranspose of a 3-channel 8x8 input by a (3, 4, 3, 3) weight at stride 2: TRCONV with
    K = 4 (the weight's second dimension), C = 3, Y = X = 8, R = S = 3: 4 x 3 x 8 x 8 x 3 x 3 = 6,912
    MACs, output (8 - 1) x 2 + 3 = 17 rows and cols as ONNX infers. With padding it is refused
    (skipping it would drop its MACs)."""
    layer = import_onnx(_save(tmp_path, _single("ConvTranspose", [[1, 3, 8, 8], [3, 4, 3, 3]], [False, True],
                                                strides=[2, 2]))).network.layers[0]
    assert (layer.op.value, dict(layer.sizes), layer.stride_y, layer.macs) == (
        "TRCONV", {"N": 1, "K": 4, "C": 3, "R": 3, "S": 3, "Y": 8, "X": 8}, 2, 6912)
    padded = _save(tmp_path, _single("ConvTranspose", [[1, 3, 8, 8], [3, 4, 3, 3]], [False, True],
                                     pads=[1, 1, 1, 1]), "padded")
    with pytest.raises(InputError, match=r"node 'the_node' \(ConvTranspose\) has padding"):
        import_onnx(padded)
