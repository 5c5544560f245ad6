"""Bundled network layer tables (accelsim/workload/networks/*.yaml) and their loader."""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest
import yaml

from accelsim.errors import InputError
from accelsim.workload import Layer, Network, OpType, available_networks, load_network

BUNDLED = ["alexnet", "bert_base", "dlrm", "dmazerunner6", "eyeriss_alexnet", "flash_gemm", "flash_mlp", "marvel15",
           "mobilenetv2", "resnet18", "resnet50", "vgg16"]


def conv_fc_macs(net: Network) -> int:
    return sum(layer.macs for layer in net.layers if layer.op is not OpType.RESADD)


def op_counts(net: Network) -> dict[str, int]:
    counts: dict[str, int] = {}
    for layer in net.layers:
        counts[layer.op.value] = counts.get(layer.op.value, 0) + 1
    return counts


def out_hw(net: Network, name: str) -> tuple[int, int]:
    layer = net.layer(name)
    return layer.out_y, layer.out_x


# ----- every bundled table loads ---------------------------------------------------------------
def test_available_networks_lists_bundled_tables():
    assert available_networks() == BUNDLED


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_network_loads(name):
    net = load_network(name)
    assert net.name == name
    assert net.layers and all(isinstance(layer, Layer) for layer in net.layers)
    assert len({layer.name for layer in net.layers}) == len(net.layers)
    # each layer says where it came from
    assert net.layers[0].source == f"bundled network {name} layer 0 ({net.layers[0].name})"  # not where installed
    # the file documents its source and conventions
    text = resources.files("accelsim.workload").joinpath("networks", f"{name}.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    assert set(data) == {"name", "source", "notes", "layers"}
    assert len(data["source"]) > 20 and len(data["notes"]) > 20


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_file_loads_by_path_too(name, tmp_path):
    src = resources.files("accelsim.workload").joinpath("networks", f"{name}.yaml")
    copy = tmp_path / f"{name}.yaml"
    copy.write_text(src.read_text("utf-8"), encoding="utf-8")
    by_path = load_network(str(copy))
    assert by_path.layers == load_network(name).layers
    assert load_network(copy).layers == by_path.layers  # os.PathLike accepted
    assert by_path.layers[3].source == f"{copy} layer 3 ({by_path.layers[3].name})"


# ----- layer inventories and output sizes against the papers --------------------------------
def test_resnet50_layers_and_shapes():
    net = load_network("resnet50")
    # 1 + 16*3 + 4 projections = 53 convs, 16 residual adds, 1 fc
    assert op_counts(net) == {"CONV2D": 17, "PWCONV": 36, "RESADD": 16, "FC": 1}
    assert len(net.layers) == 70
    names = [layer.name for layer in net.layers]
    assert names[:6] == ["conv1", "conv2_1_a", "conv2_1_b", "conv2_1_c", "conv2_1_proj", "conv2_1_add"]
    assert names[-2:] == ["conv5_3_add", "fc"]
    assert sum(n.endswith("_proj") for n in names) == 4
    # He et al. Table 1 output sizes: conv1 112, conv2_x 56, conv3_x 28, conv4_x 14, conv5_x 7
    assert out_hw(net, "conv1") == (112, 112)
    assert out_hw(net, "conv2_3_c") == (56, 56)
    assert out_hw(net, "conv3_1_a") == (28, 28) and net.layer("conv3_1_a").stride_y == 2
    assert out_hw(net, "conv3_4_c") == (28, 28)
    assert out_hw(net, "conv4_6_c") == (14, 14)
    assert out_hw(net, "conv5_1_proj") == (7, 7)
    assert out_hw(net, "conv5_3_c") == (7, 7)
    assert net.layer("conv5_3_c").sizes["K"] == 2048
    assert net.layer("fc").sizes == {"N": 1, "K": 1000, "C": 2048, "R": 1, "S": 1, "Y": 1, "X": 1}


def test_resnet18_layers_and_shapes():
    net = load_network("resnet18")
    # 1 + 8*2 + 3 projections = 20 convs, 8 residual adds, 1 fc
    assert op_counts(net) == {"CONV2D": 17, "PWCONV": 3, "RESADD": 8, "FC": 1}
    assert out_hw(net, "conv1") == (112, 112)
    assert out_hw(net, "conv2_2_b") == (56, 56)
    assert out_hw(net, "conv3_1_a") == (28, 28)
    assert out_hw(net, "conv4_1_proj") == (14, 14)
    assert out_hw(net, "conv5_2_b") == (7, 7)


def test_vgg16_layers_and_shapes():
    net = load_network("vgg16")
    assert op_counts(net) == {"CONV2D": 13, "FC": 3}
    assert out_hw(net, "conv1_1") == (224, 224)
    assert out_hw(net, "conv3_3") == (56, 56)
    assert out_hw(net, "conv5_3") == (14, 14)
    assert net.layer("fc6").sizes["C"] == 25088


def test_alexnet_layers_and_shapes():
    net = load_network("alexnet")
    assert [layer.name for layer in net.layers] == [
        "conv1", "conv2", "conv3", "conv4", "conv5", "fc6", "fc7", "fc8"
    ]
    # Krizhevsky et al. Fig. 2: 55x55x96, 27x27x256, 13x13x384, 13x13x384, 13x13x256
    assert out_hw(net, "conv1") == (55, 55)
    assert out_hw(net, "conv2") == (27, 27)
    assert out_hw(net, "conv3") == (13, 13)
    assert out_hw(net, "conv5") == (13, 13)
    assert [net.layer(n).sizes["K"] for n in ("conv1", "conv2", "conv3", "conv4", "conv5")] == [96, 256, 384, 384, 256]
    # two-tower grouping kept as per-filter input depth (Eyeriss convention)
    assert [net.layer(n).sizes["C"] for n in ("conv2", "conv3", "conv4", "conv5")] == [48, 256, 192, 192]
    assert net.layer("fc6").sizes["C"] == 9216


def test_mobilenetv2_layers_and_shapes():
    net = load_network("mobilenetv2")
    # 17 bottlenecks: 16 expansions (not in the t=1 block) + 17 projections + the 1x1 conv2d_2
    assert op_counts(net) == {"CONV2D": 1, "DWCONV": 17, "PWCONV": 34, "RESADD": 10, "FC": 1}
    # Sandler et al. Table 2 input sizes of each row -> outputs
    assert out_hw(net, "conv2d_1") == (112, 112)
    assert out_hw(net, "bottleneck1_1_2") == (112, 112)
    assert out_hw(net, "bottleneck2_1_2") == (56, 56)
    assert out_hw(net, "bottleneck3_1_2") == (28, 28)
    assert out_hw(net, "bottleneck4_1_2") == (14, 14)
    assert out_hw(net, "bottleneck5_3_3") == (14, 14)
    assert out_hw(net, "bottleneck6_1_2") == (7, 7)
    assert out_hw(net, "bottleneck7_1_3") == (7, 7)
    assert net.layer("bottleneck7_1_3").sizes["K"] == 320
    assert net.layer("conv2d_2").sizes["K"] == 1280
    assert net.layer("bottleneck4_1_2").sizes["C"] == 32 * 6
    assert net.layer("conv2d_3").sizes["K"] == 1000


@pytest.mark.parametrize("name", ["resnet50", "resnet18", "mobilenetv2"])
def test_residual_adds_match_their_block_output(name):
    net = load_network(name)
    by_name = {layer.name: layer for layer in net.layers}
    for i, layer in enumerate(net.layers):
        if layer.op is not OpType.RESADD:
            continue
        prefix = layer.name.rsplit("_", 1)[0]
        last = {"resnet50": "_c", "resnet18": "_b", "mobilenetv2": "_3"}[name]
        main = by_name[prefix + last]
        assert layer.sizes["C"] == main.sizes["K"]
        assert (layer.out_y, layer.out_x) == (main.out_y, main.out_x)
        assert net.layers.index(main) < i


def test_sequential_networks_chain_channels():
    for name in ("vgg16", "alexnet"):
        convs = [layer for layer in load_network(name).layers if layer.op is OpType.CONV2D]
        for prev, cur in zip(convs, convs[1:]):
            # AlexNet conv4/conv5 see half the channels (grouped)
            assert cur.sizes["C"] in (prev.sizes["K"], prev.sizes["K"] // 2)


MARVEL_TABLE3 = [
    # name, type, K, C, R, S, P, Q, stride  (P, Q = output sizes, as printed)
    ("L1_Bottleneck1_1_Residual", OpType.RESADD, 1, 16, 1, 1, 112, 112, 1),
    ("L2_Bottleneck1_1_2", OpType.DWCONV, 1, 32, 3, 3, 110, 110, 1),
    ("L3_Bottleneck4_3_2", OpType.DWCONV, 1, 192, 3, 3, 12, 12, 1),
    ("L4_Bottleneck6_2_2", OpType.DWCONV, 1, 576, 3, 3, 5, 5, 1),
    ("L5_Bottleneck1_1_3", OpType.PWCONV, 16, 32, 1, 1, 112, 112, 1),
    ("L6_CONV1", OpType.PWCONV, 32, 32, 1, 1, 224, 224, 2),
    ("L7_CONV2D_3", OpType.FC, 1000, 1280, 1, 1, 1, 1, 1),
    ("L8_CONV2_2_2", OpType.CONV2D, 64, 64, 3, 3, 54, 54, 1),
    ("L9_CONV5_3_2", OpType.CONV2D, 512, 512, 3, 3, 5, 5, 1),
    ("L10_CONV5_3_Residual", OpType.RESADD, 1, 2048, 1, 1, 7, 7, 1),
    ("L11_CONV2_1_2", OpType.PWCONV, 64, 64, 1, 1, 56, 56, 1),
    ("L12_CONV3_4_1", OpType.PWCONV, 128, 256, 1, 1, 28, 28, 1),
    ("L13_CONV5_1_3", OpType.PWCONV, 2048, 512, 1, 1, 7, 7, 1),
    ("L14_CONV5_1_1", OpType.PWCONV, 512, 1024, 1, 1, 7, 7, 2),
    ("L15_FC1000", OpType.FC, 1000, 2048, 7, 7, 1, 1, 1),
]


def test_marvel15_matches_table3():
    net = load_network("marvel15")
    assert len(net.layers) == 15
    for layer, (name, op, k, c, r, s, p, q, stride) in zip(net.layers, MARVEL_TABLE3):
        assert (layer.name, layer.op) == (name, op)
        assert (layer.sizes["K"], layer.sizes["C"], layer.sizes["R"], layer.sizes["S"]) == (k, c, r, s)
        assert (layer.out_y, layer.out_x) == (p, q)
        assert layer.stride_y == layer.stride_x == stride
        # input = (P-1)*stride + R exactly (no implied padding)
        assert layer.sizes["Y"] == (p - 1) * stride + r and layer.sizes["X"] == (q - 1) * stride + s


def test_marvel_resnet_rows_agree_with_resnet50_table():
    """Table 3's CONV5_1_1 (1x1, stride 2) is our ResNet-50 v1 conv5_1_a; CONV5_1_3 is conv5_1_c."""
    marvel, r50 = load_network("marvel15"), load_network("resnet50")
    for m_name, r_name in [("L14_CONV5_1_1", "conv5_1_a"), ("L13_CONV5_1_3", "conv5_1_c"),
                           ("L10_CONV5_3_Residual", "conv5_3_add")]:
        m, r = marvel.layer(m_name), r50.layer(r_name)
        assert (m.op, m.sizes["K"], m.sizes["C"], m.stride_y) == (r.op, r.sizes["K"], r.sizes["C"], r.stride_y)
        assert (m.out_y, m.out_x) == (r.out_y, r.out_x)
        assert m.macs == r.macs


def test_dmazerunner6_layers():
    net = load_network("dmazerunner6")
    assert [layer.name for layer in net.layers] == ["conv1", "conv2_2", "conv3_2", "conv4_2", "conv5_1", "conv5_2"]
    assert all(layer.sizes["N"] == 4 and layer.op is OpType.CONV2D for layer in net.layers)
    # (K, C, R, out) from dMazeRunner's layer_info.py (ResNet-18 layers)
    expected = {
        "conv1": (64, 3, 7, 112), "conv2_2": (64, 64, 3, 56), "conv3_2": (128, 128, 3, 28),
        "conv4_2": (256, 256, 3, 14), "conv5_1": (512, 256, 3, 7), "conv5_2": (512, 512, 3, 7),
    }
    for layer in net.layers:
        k, c, r, out = expected[layer.name]
        assert (layer.sizes["K"], layer.sizes["C"], layer.sizes["R"], layer.out_y, layer.out_x) == (k, c, r, out, out)
    # paper Section 6.1: conv5_1 output (psum) is 4 x 512 x 7 x 7 words = 0.2 MB at 2 B/word
    assert net.layer("conv5_1").loop_nest().tensor_words("output") * 2 == 200704
    # the same shapes as our ResNet-18 table, times batch 4
    r18 = load_network("resnet18")
    for mine, theirs in [("conv1", "conv1"), ("conv2_2", "conv2_2_a"), ("conv3_2", "conv3_2_a"),
                         ("conv4_2", "conv4_2_b"), ("conv5_1", "conv5_1_a"), ("conv5_2", "conv5_2_b")]:
        assert net.layer(mine).macs == 4 * r18.layer(theirs).macs


# ----- MAC totals ------------------------------------------------------------------------------
# conv + fc MACs (residual adds excluded), N = 1 unless stated; computed from the tables and
# compared with the published figures noted beside each.
CONV_FC_MACS = {
    # He et al. 2016 Table 1: 3.8e9 FLOPs (multiply-adds) for ResNet-50 with the stride on the
    # first 1x1 conv (the authors' model). torchvision's v1.5 (stride on the 3x3) is ~4.09 G, see
    # test_resnet50_v1_5_variant_gives_the_torchvision_figure.
    "resnet50": 3_857_973_248,
    # He et al. 2016 Table 1: 1.8e9 FLOPs for ResNet-18 (commonly quoted 1.81-1.82 GMACs).
    "resnet18": 1_814_073_344,
    # VGG-16 (config D): commonly quoted 15.47-15.5 GMACs.
    "vgg16": 15_470_264_320,
    # Sandler et al. 2018 Table 4: MobileNetV2 (1.0, 224) has 300M multiply-adds.
    "mobilenetv2": 300_774_272,
    # AlexNet with the two-tower grouping: commonly quoted ~0.72 GMACs (Eyeriss: 666M conv MACs
    # + 58.6M fc MACs); see test_alexnet_ungrouped_is_larger.
    "alexnet": 724_406_816,
    # MARVEL Table 3's 15 layers as printed (no published total).
    "marvel15": 445_381_312,
    # dMazeRunner's six ResNet-18 layers at batch 4 (no published total).
    "dmazerunner6": 2_552_954_880,
    # FLASH Table 3's GEMMs I-VI: sum of M x N x K (the table's 'GFLOPs' row is M x N x K / 1e9).
    "flash_gemm": 558_514_044_928,
    # FLASH's MNIST MLP at batch 128: 128 x (784x512 + 512x256 + 256x128 + 128x10).
    "flash_mlp": 72_515_584,
    # BERT-base at sequence 128, batch 1: 12 x (4 x 128 x 768^2 + 2 x 12 x 128^2 x 64 +
    # 2 x 128 x 768 x 3072) + 768^2 for the pooler (test_bmm.py derives it per layer).
    "bert_base": 11_174_215_680,
    # alexnet's five CONV layers at batch 4: 4 x (105,415,200 + 223,948,800 + 149,520,384 +
    # 112,140,288 + 74,760,192) (e.g. CONV1: 55^2 x 96 x 3 x 11^2); JSSC Table V: 2.66 G.
    "eyeriss_alexnet": 2_663_139_456,
    # DLRM (MLPerf sizes) at batch 1: bottom 13x512 + 512x256 + 256x128, interaction
    # 27 x 27 x 128, top 479x1024 + 1024x1024 + 1024x512 + 512x256 + 256x1 = 2,458,496.
    "dlrm": 2_458_496,
}
# Network.macs also counts one operation per element of each residual add.
TOTAL_MACS = {
    "resnet50": 3_863_492_608,
    "resnet18": 1_814_825_984,
    "vgg16": 15_470_264_320,
    "mobilenetv2": 300_990_656,
    "alexnet": 724_406_816,
    "marvel15": 445_682_368,
    "dmazerunner6": 2_552_954_880,
    "flash_gemm": 558_514_044_928,
    "flash_mlp": 72_515_584,
    "bert_base": 11_174_215_680,
    "eyeriss_alexnet": 2_663_139_456,
    "dlrm": 2_458_496,
}


@pytest.mark.parametrize("name", BUNDLED)
def test_mac_totals_pinned(name):
    net = load_network(name)
    assert conv_fc_macs(net) == CONV_FC_MACS[name]
    assert net.macs == TOTAL_MACS[name]


def test_mac_totals_close_to_published_figures():
    published = {"resnet50": 3.8e9, "resnet18": 1.8e9, "vgg16": 15.47e9, "mobilenetv2": 300e6, "alexnet": 0.72e9}
    for name, figure in published.items():
        assert CONV_FC_MACS[name] == pytest.approx(figure, rel=0.02), name


def test_resnet50_v1_5_variant_gives_the_torchvision_figure():
    """Moving the stride of conv3_1/conv4_1/conv5_1 from the 1x1 (_a) to the 3x3 (_b) -> 4.09 G."""
    net = load_network("resnet50")
    layers = []
    for layer in net.layers:
        if layer.name in ("conv3_1_a", "conv4_1_a", "conv5_1_a"):
            layer = replace(layer, stride_y=1, stride_x=1)
        elif layer.name in ("conv3_1_b", "conv4_1_b", "conv5_1_b"):
            y = 2 * layer.sizes["Y"] - 2  # the 3x3 now reads the unstrided map, padded by 1
            layer = Layer.build(layer.name, layer.op, {**layer.sizes, "Y": y, "X": y}, 2, 2)
            assert layer.out_y == load_network("resnet50").layer(layer.name).out_y
        layers.append(layer)
    v15 = Network("resnet50_v1.5", tuple(layers))
    assert conv_fc_macs(v15) == 4_089_184_256


def test_alexnet_ungrouped_is_larger():
    net = load_network("alexnet")
    ungrouped = sum(layer.macs * (2 if layer.name in ("conv2", "conv4", "conv5") else 1) for layer in net.layers)
    assert ungrouped == 1_135_256_096


# ----- bad input -------------------------------------------------------------------------------
def write(tmp_path: Path, text: str, name: str = "net.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


GOOD_LAYER = "{name: a, type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 8, X: 8}"


def load_error(path: str) -> str:
    with pytest.raises(InputError) as info:
        load_network(path)
    return str(info.value)


def test_valid_custom_table_with_all_forms(tmp_path):
    path = write(tmp_path, """
name: custom
layers:
  - {name: c, type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 9, X: 17, stride_y: 2, stride_x: 4}
  - {name: g, type: GEMM, M: 8, N: 16, K: 32}
  - {name: f, type: FC, N: 2, K: 10, C: 20}
  - name: d
    type: DWCONV
    C: 8
    R: 3
    S: 3
    Y: 10
    X: 10
""")
    net = load_network(path)
    assert net.name == "custom" and net.source == path
    c = net.layer("c")
    assert (c.stride_y, c.stride_x, c.out_y, c.out_x) == (2, 4, 4, 4)
    assert net.layer("g").macs == 8 * 16 * 32
    assert net.layer("d").sizes["K"] == 1


def test_name_defaults_to_file_stem(tmp_path):
    assert load_network(write(tmp_path, f"layers:\n  - {GOOD_LAYER}\n", "mynet.yml")).name == "mynet"


def test_unknown_network_name_lists_available():
    msg = str(pytest.raises(InputError, load_network, "resnet51").value)
    assert "unknown network 'resnet51'" in msg
    for name in BUNDLED:
        assert name in msg


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.yaml")
    assert load_error(path) == f"{path}: network file not found"


def test_bad_yaml_names_file_and_line(tmp_path):
    path = write(tmp_path, f"name: x\nlayers:\n  - {GOOD_LAYER}\n  - {{name: b, type: CONV2D\n  - [\n")
    with pytest.raises(InputError) as info:
        load_network(path)
    assert info.value.source == path and info.value.line == 5
    assert str(info.value).startswith(f"{path}:5: invalid YAML")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "expected a mapping"),
        ("- 1\n- 2\n", "expected a mapping"),
        ("name: x\n", "missing field 'layers'"),
        ("name: x\nlayers: []\n", "field 'layers': expected a non-empty list"),
        (f"name: x\nversion: 2\nlayers:\n  - {GOOD_LAYER}\n", "unknown top-level key(s) 'version'"),
        (f"name: [x]\nlayers:\n  - {GOOD_LAYER}\n", "field 'name': expected a non-empty string"),
    ],
)
def test_bad_top_level(tmp_path, text, expected):
    path = write(tmp_path, text)
    msg = load_error(path)
    assert msg.startswith(path) and expected in msg


@pytest.mark.parametrize(
    "layer, line, expected",
    [
        ("{type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 8, X: 8}", 4, "layer 1: missing field 'name'"),
        ("{name: b, K: 4, C: 3}", 4, "layer 1 (b): missing field 'type'"),
        ("{name: b, type: CONV3D, K: 4}", 4, "layer 1 (b): field 'type': unknown operator 'CONV3D'"),
        ("{name: b, type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 8}", 4,
         "layer 1 (b): missing field 'X' (required for CONV2D"),
        ("{name: b, type: CONV2D, K: -4, C: 3, R: 3, S: 3, Y: 8, X: 8}", 4,
         "layer 1 (b): field 'K': expected a positive integer, got -4"),
        ("{name: b, type: CONV2D, K: 0, C: 3, R: 3, S: 3, Y: 8, X: 8}", 4,
         "layer 1 (b): field 'K': expected a positive integer, got 0"),
        ("{name: b, type: CONV2D, K: 4.0, C: 3, R: 3, S: 3, Y: 8, X: 8}", 4,
         "layer 1 (b): field 'K': expected a positive integer, got 4.0"),
        ("{name: b, type: CONV2D, K: '4', C: 3, R: 3, S: 3, Y: 8, X: 8}", 4,
         "layer 1 (b): field 'K': expected a positive integer, got '4'"),
        ("{name: b, type: CONV2D, K: true, C: 3, R: 3, S: 3, Y: 8, X: 8}", 4,
         "layer 1 (b): field 'K': expected a positive integer, got True"),
        ("{name: b, type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 8, X: 8, pad: 1}", 4,
         "layer 1 (b): unknown field 'pad'; expected name, type, stride"),
        ("{name: b, type: FC, K: 4, C: 3, M: 2}", 4, "layer 1 (b): field 'M' does not exist for FC"),
        ("{name: b, type: GEMM, M: 4, N: 3, K: 2, stride: 2}", 4, "layer 1 (b): field 'stride': a GEMM layer has no stride"),
        ("{name: b, type: PWCONV, K: 4, C: 3, R: 3, Y: 8, X: 8}", 4, "layer 1 (b): field 'R': a PWCONV layer is 1x1"),
        ("{name: b, type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 8, X: 8, stride: 2, stride_y: 1}", 4,
         "layer 1 (b): field 'stride_y': give either 'stride'"),
        ("{name: b, type: CONV2D, K: 4, C: 3, R: 3, S: 3, Y: 8, X: 8, stride: -1}", 4,
         "layer 1 (b): field 'stride': expected a positive integer, got -1"),
        ("{name: a, type: FC, K: 4, C: 3}", 4, "layer 1 (a): duplicate layer name; layer 0 already has it"),
        ("[1, 2]", 4, "layer 1: expected a mapping"),
        ("{name: '', type: FC, K: 4, C: 3}", 4, "layer 1: field 'name': expected a non-empty string"),
    ],
)
def test_bad_layer_names_file_line_layer_and_field(tmp_path, layer, line, expected):
    path = write(tmp_path, f"name: x\nlayers:\n  - {GOOD_LAYER}\n  - {layer}\n")
    with pytest.raises(InputError) as info:
        load_network(path)
    assert info.value.source == path and info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: {expected}")


def test_block_style_error_points_at_the_field_line(tmp_path):
    path = write(tmp_path, "name: x\nlayers:\n  - name: a\n    type: FC\n    K: 4\n    C: nine\n")
    msg = load_error(path)
    assert msg == f"{path}:6: layer 0 (a): field 'C': expected a positive integer, got 'nine'"


def test_inconsistent_sizes_use_layer_source(tmp_path):
    path = write(tmp_path, "name: x\nlayers:\n  - {name: big, type: CONV2D, K: 4, C: 3, R: 5, S: 5, Y: 3, X: 9}\n")
    msg = load_error(path)
    assert msg.startswith(f"{path} layer 0 (big): ") and "filter 5x5 is larger than input 3x9" in msg


# ----- a table that gives its layers' dataflows ------------------------------------------------
TABLE_WITH_DATAFLOW = """\
name: t
layers:
  - name: a
    type: CONV2D
    K: 4
    C: 2
    R: 3
    S: 3
    Y: 6
    X: 6
    dataflow: |
      SpatialMap(1,1) K;
      TemporalMap(1,1) Q;
  - {name: b, type: CONV2D, K: 4, C: 2, R: 3, S: 3, Y: 6, X: 6, dataflow: "SpatialMap(1,1) K; TemporalMap(Sz(R),1) Y;"}
  - {name: c, type: CONV2D, K: 4, C: 2, R: 3, S: 3, Y: 6, X: 6}
"""


def test_table_dataflow_is_kept_as_text_and_parsed_by_the_mapping_layer(tmp_path):
    """Layer b's one-line dataflow becomes its job's directives (K across PEs, Y windows of
    Sz(R) = 3 rows); layer a's second directive names Q, which CONV2D lacks: the error points at
    line 13, where that directive sits in the table (block text starts the line after the key);
    layer c has none, so without --style it is refused, and a style still maps it."""
    from accelsim.errors import MappingError
    from accelsim.hw.loader import load_hardware
    from accelsim.mapping.jobs import jobs_from_network

    path = tmp_path / "t.yaml"
    path.write_text(TABLE_WITH_DATAFLOW, encoding="utf-8")
    net = load_network(path)
    assert [d.layer for d in net.dataflows] == ["a", "b"]
    assert net.dataflow("a").line == 12 and net.dataflow("b").line == 14
    hw = load_hardware("eyeriss_chip")
    _, jobs = jobs_from_network(str(path), None, hw, "b")
    assert [(d.kind, d.size, d.offset, d.dim) for d in jobs[0].dataflow] == [
        ("spatial", 1, 1, "K"), ("temporal", 3, 1, "Y")]
    with pytest.raises(MappingError) as info:
        jobs_from_network(str(path), None, hw, "a")
    assert info.value.line == 13 and "'Q'" in str(info.value)
    with pytest.raises(InputError, match="has no 'dataflow' in its table: --network needs --style"):
        jobs_from_network(str(path), None, hw, "c")
    assert jobs_from_network(str(path), "nvdla_like", hw, "c")[1][0].source == "style nvdla_like"


def test_table_dataflow_must_be_text(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("layers:\n  - {name: a, type: CONV2D, K: 4, C: 2, R: 3, S: 3, Y: 6, X: 6, dataflow: 5}\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"t.yaml:2: layer 0 \(a\): field 'dataflow': expected MAESTRO"):
        load_network(path)


def test_eyeriss_alexnet_carries_table_iii_mappings():
    """Every layer of eyeriss_alexnet has a dataflow, it compiles on eyeriss_chip and fits its
    buffers, and its PEs in use are R*e*r*t of JSSC Table III (154, 135, 156, 156, 156)."""
    import csv

    from accelsim.hw.loader import load_hardware
    from accelsim.mapping.jobs import fits, jobs_from_network, prepare

    hw = load_hardware("eyeriss_chip")
    _, jobs = jobs_from_network("eyeriss_alexnet", None, hw)
    rows = list(csv.DictReader((Path(__file__).parents[1] / "validation/eyeriss/alexnet_rs_mapping.csv").open()))
    assert [j.layer.name for j in jobs] == [r["layer"] for r in rows]
    for job, row in zip(jobs, rows):
        cm = prepare(job, hw)
        assert fits(cm, hw)
        pes = int(row["R"]) * int(row["e"]) * int(row["r"]) * int(row["t"])
        assert cm.used_pes == pes, job.layer.name
        assert job.layer.sizes["N"] == 4 and job.layer.sizes["K"] == int(row["M"]) and job.layer.sizes["C"] == int(row["C"])


def test_eyeriss_alexnet_global_buffer_holds_table_iii_pass():
    """JSSC Table III's global-buffer allocation is one pass: the ifmap of q*r channels over
    U*(e-1)+R input rows of n images, and the psums of m filters over e output rows of n images,
    in 2-byte words and KiB: CONV3 ifmap 4*15*15*4*2 B = 7,200 B = 7.0 KB, psum
    64*13*13*4*2 B = 86,528 B = 84.5 KB (the table's own figures, to 0.1 KB). On CONV2-5 our L2
    tile is that pass: its first tile's output box is m*e*E*n words (CONV3: 64*13*13*4 =
    43,264) and its input box q*r*(U*(e-1)+R)*H*n words (CONV3: 4*15*15*4 = 3,600)."""
    import csv
    from math import prod

    from accelsim.hw.loader import load_hardware
    from accelsim.mapping.jobs import jobs_from_network, prepare
    from accelsim.mapping.tiles import TileSchedule

    rows = {r["layer"]: r for r in csv.DictReader(
        (Path(__file__).parents[1] / "validation/eyeriss/alexnet_rs_mapping.csv").open())}
    hw = load_hardware("eyeriss_chip")
    _, jobs = jobs_from_network("eyeriss_alexnet", None, hw)
    for job in jobs:
        r = {k: int(v) for k, v in rows[job.layer.name].items() if k not in ("layer", "glb_ifmap_KB", "glb_psum_KB")}
        in_rows = r["U"] * (r["e"] - 1) + r["R"]
        ifmap_words = r["q"] * r["r"] * in_rows * r["H"] * r["n"]
        psum_words = r["m"] * r["e"] * r["E"] * r["n"]
        assert abs(ifmap_words * 2 / 1024 - float(rows[job.layer.name]["glb_ifmap_KB"])) < 0.1
        assert abs(psum_words * 2 / 1024 - float(rows[job.layer.name]["glb_psum_KB"])) < 0.1
        if job.layer.name == "CONV1":  # the filters do not fit beside the chip's pass (README)
            continue
        boxes = TileSchedule(prepare(job, hw), hw.l2.size_bytes // hw.word_size_bytes).demand(0).boxes
        words = {role: prod(b - a + 1 for a, b in zip(*boxes[role])) for role in ("input", "output")}
        assert words == {"input": ifmap_words, "output": psum_words}, job.layer.name


def test_eyeriss_alexnet_dram_reads_follow_table_iii_passes():
    """A pass keeps its m filters' psums in the buffer while the ifmap streams through once, and
    its filters stay in the scratchpads across its n images, so DRAM reads the ifmap once per
    pass of m filters, M/m times, and the filters once per pass of n images, N/n times: CONV2
    (M 256, m 64, n 1) reads 4 * (4*48*31*31) = 738,048 ifmap words and 4 * (256*48*5*5) =
    1,228,800 filter words; CONV3 (M 384, m 64, n 4) 6 * (4*256*15*15) = 1,382,400 and
    384*256*3*3 = 884,736 (maestro mode; the reads do not depend on the mode)."""
    import csv

    from accelsim.hw.loader import load_hardware
    from accelsim.mapping.jobs import jobs_from_network, prepare
    from accelsim.validation.runner import simulator_model

    rows = {r["layer"]: r for r in csv.DictReader(
        (Path(__file__).parents[1] / "validation/eyeriss/alexnet_rs_mapping.csv").open())}
    hw = load_hardware("eyeriss_chip")
    _, jobs = jobs_from_network("eyeriss_alexnet", None, hw)
    for job in jobs[1:]:  # CONV1: see the table's notes
        r = {k: int(v) for k, v in rows[job.layer.name].items() if k in ("H", "R", "C", "M", "m", "n")}
        batch = job.layer.sizes["N"]
        acc = simulator_model(prepare(job, hw), hw, "maestro").accesses
        assert acc["input"].dram_read == r["M"] // r["m"] * batch * r["C"] * r["H"] ** 2, job.layer.name
        assert acc["weight"].dram_read == batch // r["n"] * r["M"] * r["C"] * r["R"] ** 2, job.layer.name
