"""Batched matmul (BMM: C[b][m][n] += A[b][m][k] x B[b][k][n], both operands activations) and
the bundled ``bert_base`` table: the operator was added through the catalog alone, so these tests
check that every part that reads the catalog handles it: network tables, the ``.m`` reader and
writer, every named style, the simulator, the analytical model and functional execution."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from accelsim.analytical import analyze_layer
from accelsim.cli import main
from accelsim.functional import simulate_functional
from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.jobs import Job, to_maestro
from accelsim.mapping.maestro_format import layer_from_maestro, parse_maestro, write_maestro
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.results import ACCESS_FIELDS, TENSORS
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload import OpType, load_network
from accelsim.workload.ops import Layer


def _bmm(b: int, m: int, n: int, k: int) -> Layer:
    return Layer.build("bmm", OpType.BMM, {"B": b, "M": m, "N": n, "K": k})


def test_loop_nest_by_hand():
    """B=2, M=2, N=3, K=4: 2 x 2 x 3 x 4 = 48 MACs; A is [B][M][K] (2 x 2 x 4 = 16 words),
    B is [B][K][N] (24 words), C is [B][M][N] (12 words); K is the only reduction dimension."""
    layer = _bmm(2, 2, 3, 4)
    nest = layer.loop_nest()
    assert nest.dims == {"B": 2, "M": 2, "N": 3, "K": 4}
    assert layer.macs == 48
    assert [nest.tensor_words(role) for role in TENSORS] == [16, 24, 12]
    assert nest.reduction_dims == ("K",)
    assert nest.tensors["weight"] == ((("B", 1),), (("K", 1),), (("N", 1),))


def test_network_table_and_mapping_file_round_trip(tmp_path):
    path = tmp_path / "attn.yaml"
    path.write_text("name: attn\nlayers:\n  - {name: qk, type: BMM, B: 2, M: 4, N: 4, K: 8}\n")
    layer = load_network(str(path)).layers[0]
    assert layer.op is OpType.BMM and dict(layer.sizes) == {"B": 2, "M": 4, "N": 4, "K": 8}
    hw = load_hardware("flash_edge")
    text = write_maestro(to_maestro("attn", [Job(layer, tuple(style_mapping("nvdla_like", layer, hw)), "style")]))
    assert "Type: BMM" in text and "Dimensions { B: 2, M: 4, N: 4, K: 8 }" in text and "Stride" not in text
    back = layer_from_maestro(parse_maestro(text).layers[0], "attn.m")
    assert back == layer


@pytest.mark.parametrize("bad, message", [
    ("{name: qk, type: BMM, M: 4, N: 4, K: 8}", "missing field 'B'"),
    ("{name: qk, type: BMM, B: 2, M: 4, N: 4, K: 8, stride: 2}", "field 'stride': a BMM layer has no stride"),
    ("{name: qk, type: BMM, B: 2, M: 4, N: 4, K: 8, C: 3}", "field 'C' does not exist for BMM"),
])
def test_network_table_errors(tmp_path, bad, message):
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\nlayers:\n  - {bad}\n")
    result = CliRunner().invoke(main, ["simulate", "--hw", "flash_edge", "--network", str(path), "--style",
                                       "nvdla_like"])
    assert result.exit_code == 2 and f"{path}:3: layer 0 (qk): {message}" in result.output


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_maps_a_batch_of_its_gemm_mapping(style):
    """A style maps BMM as its GEMM form with B iterated outermost, one index at a time; the
    batches share no data, so every access count is exactly B times the GEMM's (both models)."""
    hw = load_hardware("flash_edge")
    bmm, gemm = _bmm(3, 8, 6, 16), Layer.build("g", OpType.GEMM, {"M": 8, "N": 6, "K": 16})
    dataflow = style_mapping(style, bmm, hw)
    assert dataflow == [MapDirective("temporal", 1, 1, "B", 0)] + style_mapping(style, gemm, hw)
    cm_b, cm_g = (compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes) for layer in (bmm, gemm))
    for model in (lambda cm: simulate_layer(cm, hw, SimOptions(mode="maestro")),
                  lambda cm: analyze_layer(cm, hw, "maestro")):
        rb, rg = model(cm_b), model(cm_g)
        assert rb.macs == 3 * rg.macs
        for tensor in TENSORS:
            for field in ACCESS_FIELDS:
                assert getattr(rb.accesses[tensor], field) == 3 * getattr(rg.accesses[tensor], field), (tensor, field)
        assert rg.cycles < rb.cycles <= 3 * rg.cycles


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("hw_name", ["flash_edge", "eyeriss_like"])
def test_functional_on_small_shapes(style, hw_name):
    """Attention's two products at small sizes (2 heads, 8 tokens, head width 4): scores
    Q.K^T (M = N = 8, K = 4) and context A.V (M = 8, N = 4, K = 8) compute the right values."""
    hw = load_hardware(hw_name)
    for layer in (_bmm(2, 8, 8, 4), _bmm(2, 8, 4, 8)):
        cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
        _, report = simulate_functional(cm, hw)
        assert report.passed, report.text()


BERT_LAYER_MACS = {  # per encoder layer, from the table's notes (sequence 128, batch 1)
    "q": 128 * 768 * 768, "k": 128 * 768 * 768, "v": 128 * 768 * 768,
    "scores": 12 * 128 * 128 * 64, "context": 12 * 128 * 64 * 128,
    "attn_out": 128 * 768 * 768, "ffn1": 128 * 3072 * 768, "ffn2": 128 * 768 * 3072,
}


def test_bert_base_table():
    """12 encoder layers of 8 products each plus the pooler (768 x 768 on the [CLS] token):
    per layer 4 x 128 x 768^2 + 2 x 12 x 128^2 x 64 + 2 x 128 x 768 x 3072 = 931,135,488 MACs,
    so 12 x 931,135,488 + 589,824 = 11,174,215,680 in all (the figure the file's notes state)."""
    net = load_network("bert_base")
    assert len(net.layers) == 12 * 8 + 1
    for i in range(1, 13):
        for part, macs in BERT_LAYER_MACS.items():
            assert net.layer(f"enc{i}_{part}").macs == macs
    assert sum(BERT_LAYER_MACS.values()) == 931_135_488
    assert net.layer("pooler").macs == 768 * 768
    assert net.macs == 11_174_215_680
    assert {layer.op for layer in net.layers} == {OpType.GEMM, OpType.BMM}


BERT_SHAPES = ["enc1_q", "enc1_scores", "enc1_context", "enc1_ffn1", "enc1_ffn2", "pooler"]


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("hw_name", ["eyeriss_like", "flash_edge", "tpu_like_32x32"])
def test_every_style_maps_every_bert_shape(style, hw_name):
    """Every distinct shape of the table (the encoder layers repeat) has a legal mapping in every
    style on these presets, which the analytical model estimates within both lower bounds."""
    hw = load_hardware(hw_name)
    net = load_network("bert_base")
    for name in BERT_SHAPES:
        layer = net.layer(name)
        cm = compile_mapping(layer, style_mapping(style, layer, hw), hw.num_pes)
        result = analyze_layer(cm, hw, "maestro")
        assert result.macs == layer.macs
        assert result.cycles >= max(result.compute_bound_cycles, result.dram_bound_cycles)


def test_cli_analyze_bert_base(tmp_path):
    out = tmp_path / "bert.json"
    result = CliRunner().invoke(main, ["analyze", "--hw", "flash_edge", "--network", "bert_base", "--style",
                                       "nvdla_like", "--json", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert len(rows) == 97 and sum(row["macs"] for row in rows) == 11_174_215_680
    assert {row["op"] for row in rows} == {"GEMM", "BMM"}


def test_cli_simulate_functional_scaled_bert(tmp_path):
    """One encoder layer of BERT scaled down (hidden 16, 2 heads of 8, 8 tokens, FFN 64) through
    ``simulate --functional``: every layer passes and the simulated MACs are the table's."""
    path = tmp_path / "tiny_bert.yaml"
    path.write_text(
        "name: tiny_bert\nlayers:\n"
        "  - {name: q, type: GEMM, M: 8, N: 16, K: 16}\n"
        "  - {name: scores, type: BMM, B: 2, M: 8, N: 8, K: 8}\n"
        "  - {name: context, type: BMM, B: 2, M: 8, N: 8, K: 8}\n"
        "  - {name: ffn1, type: GEMM, M: 8, N: 64, K: 16}\n"
        "  - {name: ffn2, type: GEMM, M: 8, N: 16, K: 64}\n")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["simulate", "--hw", "flash_edge", "--network", str(path), "--style",
                                       "maeri_like", "--functional", "--json", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [row["functional"]["passed"] for row in rows] == [True] * 5
    assert [row["macs"] for row in rows] == [8 * 16 * 16, 2 * 8 * 8 * 8, 2 * 8 * 8 * 8, 8 * 64 * 16, 8 * 16 * 64]
