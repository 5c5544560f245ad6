"""Hardware-mapping co-search (``accelsim search --co-search``): the area model by hand, the area
budget's refusal, buffers sized to the mappings, the hardware YAML and best.m round trip through
``simulate``, determinism under a seed, and bad options as one ``error:`` line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.search.area import design_area
from accelsim.search.cosearch import (
    AREA_BUDGET,
    CoSearchConfig,
    array_shape,
    cosearch,
    gene_values,
    parse_hw_range,
)
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer, OpType

pytest.importorskip("pyarrow")

CONV = Layer.build("conv", OpType.CONV2D, {"K": 16, "C": 8, "R": 3, "S": 3, "Y": 10, "X": 10})
FC = Layer.build("fc", OpType.GEMM, {"M": 8, "N": 16, "K": 32})
BASE = load_hardware("eyeriss_like")
NETWORK = """name: tiny
layers:
  - {name: conv, type: CONV2D, K: 16, C: 8, R: 3, S: 3, Y: 10, X: 10}
  - {name: fc, type: GEMM, M: 8, N: 16, K: 32}
"""
SMALL = ("pe_array.count=4:64", "l1.size_bytes=64:1024", "l2.size_bytes=1024:65536")


def test_area_by_hand():
    """4 PEs of one MAC, L1 64 B, L2 1024 B, 1-byte words (MAESTRO's 28 nm table: MAC 283 um^2,
    0.104 um^2 per word): MACs 4 x 283 = 1132; L1s 4 x 64 x 0.104 = 26.624; L2 1024 x 0.104 =
    106.496; total 1265.12 um^2 = 0.00126512 mm^2. With 2-byte words the buffers hold half the
    words: L1s 13.312, L2 53.248. Two MACs per PE double the MAC area."""
    hw = load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=2", "l1.size_bytes=64",
                                        "l2.size_bytes=1024"])
    area = design_area(hw)
    assert area.mac_um2 == pytest.approx(1132)
    assert area.l1_um2 == pytest.approx(26.624)
    assert area.l2_um2 == pytest.approx(106.496)
    assert area.total_mm2 == pytest.approx(0.00126512)
    wide = design_area(load_hardware("eyeriss_like", ["pe_array.rows=2", "pe_array.cols=2", "l1.size_bytes=64",
                                                      "l2.size_bytes=1024", "word_size_bytes=2",
                                                      "pe_array.macs_per_pe_per_cycle=2"]))
    assert (wide.mac_um2, wide.l1_um2, wide.l2_um2) == pytest.approx((2264, 13.312, 53.248))


def test_gene_values_and_shapes():
    """Powers of two within the range and its ends; the most square array."""
    assert gene_values(48, 300) == (48, 64, 128, 256, 300)
    assert gene_values(1, 4) == (1, 2, 4)
    assert array_shape(64) == (8, 8) and array_shape(128) == (8, 16) and array_shape(7) == (1, 7)
    assert parse_hw_range("pe_array.count=64:1024") == ("pe_array.count", (64, 1024))
    for bad in ("pe.count=1:2", "l1.size_bytes=8", "l1.size_bytes=9:8", "l2.size_bytes=a:b"):
        with pytest.raises(InputError):
            parse_hw_range(bad)


def _search(**kw):
    args = dict(budget=24, population=8, max_levels=2, seed=3)
    args.update(kw)
    return cosearch(BASE, [CONV, FC], CoSearchConfig.make(SMALL, **args))


def test_area_budget_refuses_every_design_over_it():
    """A budget below the smallest design (4 PEs of one MAC: 1132 um^2 before buffers) leaves
    nothing legal: every row is illegal with reason area_budget and cost +inf. With a budget
    of 0.01 mm^2 every scored design is within it and every design over it is refused."""
    none = _search(area_budget_mm2=0.001)
    assert none.best is None and none.best_hw is None
    assert set(none.frame["reason"]) == {AREA_BUDGET} and (none.frame["cost"] == float("inf")).all()
    some = _search(area_budget_mm2=0.01)
    frame = some.frame
    over = frame["area_mm2"] > 0.01
    assert over.any() and (frame.loc[over, "reason"] == AREA_BUDGET).all()
    assert (frame.loc[frame["status"] == "ok", "area_mm2"] <= 0.01).all()
    assert some.best is not None and some.best["area_mm2"] <= 0.01


def test_same_seed_same_search():
    a, b = _search(area_budget_mm2=0.01), _search(area_budget_mm2=0.01)
    cols = [c for c in a.frame.columns if c != "wall_seconds"]
    assert a.frame[cols].equals(b.frame[cols])
    other = _search(area_budget_mm2=0.01, seed=4)
    assert not other.frame["key"].equals(a.frame["key"])


def test_sized_buffers_never_overflow():
    """With buffers sized to the mappings' need no design overflows L1 or L2, the L1 and L2
    are not genes, and the best design's L1 is the most a layer's mapping needs."""
    result = _search(size_buffers=True, objective="latency-area")
    frame = result.frame
    assert not frame["reason"].isin(["l1_overflow", "l2_overflow"]).any()
    assert all("l1.size_bytes" not in hw for hw in frame["hw"])
    assert result.best is not None
    assert result.best["cost"] == pytest.approx(result.best["cycles"] * result.best["area_mm2"])


def _cli_cosearch(tmp_path: Path, *args: str) -> Path:
    """``accelsim search --co-search`` of the tiny network over the SMALL ranges with ``args``;
    its output directory (the run must succeed)."""
    network = tmp_path / "tiny.yaml"
    network.write_text(NETWORK, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["search", "--hw", "eyeriss_like", "--network", str(network), "--co-search",
                                       *[arg for r in SMALL for arg in ("--hw-range", r)], *args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_hw_yaml_and_best_m_simulate_as_found(tmp_path: Path):
    """The co-search's hw.yaml and best.m run in ``simulate`` as they are, giving the best
    design's cycles per layer (scored by the simulator)."""
    out = _cli_cosearch(tmp_path, "--area-budget-mm2", "0.02", "--model", "sim", "--budget", "16",
                        "--population", "8", "--max-levels", "2")
    assert {"search.json", "candidates.parquet", "hw.yaml", "best.m", "summary.json"} <= {p.name for p in out.iterdir()}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["best"]["area_mm2"] <= 0.02 and summary["area"]["total_mm2"] == summary["best"]["area_mm2"]
    sim = CliRunner().invoke(main, ["simulate", "--hw", str(out / "hw.yaml"), "--mapping", str(out / "best.m"),
                                    "--json", str(tmp_path / "best.json")])
    assert sim.exit_code == 0, sim.output
    layers = json.loads((tmp_path / "best.json").read_text())
    assert [r["layer"] for r in layers] == ["conv", "fc"]
    assert sum(r["cycles"] for r in layers) == summary["best"]["cycles"]


@pytest.mark.parametrize("args, needle", [
    (["--co-search", "--hw-range", "pe.count=1:4"], "--hw-range pe.count=1:4"),
    (["--area-budget-mm2", "0.2"], "belong to --co-search"),
    (["--objective", "latency-area"], "latency-area: with --co-search"),
    (["--co-search", "--mapper", "random"], "--co-search runs DiGamma's GA"),
    (["--co-search", "--area-budget-mm2", "-1"], "--area-budget-mm2 must be positive"),
    (["--co-search", "--vary-layers", "-1"], "--vary-layers must be at least 0"),
    (["--co-search", "--mutate-hw", "1.5"], "--mutate-hw must lie in 0..1"),
    (["--co-search", "--mutate-hw", "-0.1"], "--mutate-hw must lie in 0..1"),
    (["--mutate-hw", "0.3"], "belong to --co-search"),
    (["--vary-layers", "2"], "belong to --co-search"),
    (["--co-search", "--fill-area", "2"], "--fill-area must lie in 0..1"),
    (["--co-search", "--refine", "1"], "--refine must lie in 0..1, below 1"),
    (["--refine", "0.2"], "belong to --co-search"),
    (["--fill-area", "0.2"], "belong to --co-search"),
])
def test_bad_options_are_one_error_line(tmp_path, args, needle):
    network = tmp_path / "tiny.yaml"
    network.write_text(NETWORK, encoding="utf-8")
    result = CliRunner().invoke(main, ["search", "--hw", "eyeriss_like", "--network", str(network), "--out",
                                       str(tmp_path / "o"), "--budget", "2", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error:") and "Traceback" not in result.output
    assert needle in result.stderr


def test_cli_vary_layers_and_mutate_hw_reach_the_search(tmp_path):
    """``search --co-search --vary-layers 0.5 --mutate-hw 0`` scores the designs
    :func:`cosearch` scores with ``CoSearchConfig(vary_layers=0.5, mutate_hw=0)``, in order, and
    not those of the defaults (4 and 0.5): the options reach the search."""
    import pandas as pd

    out = _cli_cosearch(tmp_path, "--budget", "24", "--population", "8", "--max-levels", "2", "--seed", "3",
                        "--vary-layers", "0.5", "--mutate-hw", "0")

    cli = pd.read_parquet(out / "candidates.parquet")
    direct = _search(vary_layers=0.5, mutate_hw=0).frame
    assert list(cli["hw"]) == list(direct["hw"]) and list(cli["genomes"]) == list(direct["genomes"])
    assert list(_search().frame["genomes"]) != list(direct["genomes"])


def test_cli_fill_area_and_refine_reach_the_search(tmp_path):
    """``--fill-area 1 --refine 0.5`` scores the designs :func:`cosearch` scores with
    ``fill_area=1, refine=0.5``, in order, and not those of the defaults."""
    import pandas as pd

    out = _cli_cosearch(tmp_path, "--budget", "24", "--population", "8", "--max-levels", "2", "--seed", "3",
                        "--fill-area", "1", "--refine", "0.5", "--area-budget-mm2", "0.01")
    cli = pd.read_parquet(out / "candidates.parquet")
    direct = _search(fill_area=1.0, refine=0.5, area_budget_mm2=0.01).frame
    assert list(cli["hw"]) == list(direct["hw"]) and list(cli["genomes"]) == list(direct["genomes"])
    assert list(_search(area_budget_mm2=0.01).frame["hw"]) != list(direct["hw"])


def test_fixed_design_of_the_budget_by_hand():
    """The medium design of 0.2 mm^2 (MACs at most half: 200,000 um^2 / 2 / 283 = 353 -> 256 PEs,
    72,448 um^2): SRAM words int(127,552 / 0.104) = 1,226,461; L1 half of them per PE:
    613,230 // 256 = 2,395 bytes (1-byte words); L2 the rest: 1,226,461 - 2,395 x 256 = 613,341."""
    from accelsim.search.cosearch_report import fixed_design

    spec = fixed_design(BASE, 0.2, 0.5)
    assert (spec.num_pes, spec.l1.size_bytes, spec.l2.size_bytes) == (256, 2395, 613341)
    assert design_area(spec).total_mm2 <= 0.2


def test_area_budget_boundary_by_hand():
    """One design (every range a single value): 16 PEs of one MAC, 32 B of L1 each, 4,096 B of
    L2, 1-byte words. MACs 16 x 283 = 4,528; L1s 16 x 32 x 0.104 = 53.248; L2 4,096 x 0.104 =
    425.984; total 5,007.232 um^2 = 0.005007232 mm^2. A budget of exactly that keeps it (the
    budget is inclusive); one a micrometre squared below refuses it."""
    ranges = ("pe_array.count=16:16", "l1.size_bytes=32:32", "l2.size_bytes=4096:4096")
    kept = cosearch(BASE, [FC], CoSearchConfig.make(ranges, area_budget_mm2=0.005007232 + 1e-12, budget=4,
                                                    population=2, max_levels=1))
    assert kept.frame["area_mm2"].iloc[0] == pytest.approx(0.005007232)
    assert (kept.frame["reason"] != AREA_BUDGET).all() and kept.best is not None
    refused = cosearch(BASE, [FC], CoSearchConfig.make(ranges, area_budget_mm2=0.005006232, budget=4,
                                                       population=2, max_levels=1))
    assert (refused.frame["reason"] == AREA_BUDGET).all() and refused.best is None


def test_tile_repair_wastes_no_design_on_overflow():
    """With tile repair (the default) no design is refused for tiles that overflow L1 or L2 (the
    smallest buffers of SMALL hold one word of each tensor, double-buffered); without it the
    same search wastes some."""
    overflow = ["l1_overflow", "l2_overflow"]
    for seed in (3, 5):
        assert not _search(area_budget_mm2=0.01, seed=seed).frame["reason"].isin(overflow).any()
    plain = _search(area_budget_mm2=0.01, repair_tiles=False, seed=5)
    assert plain.frame["reason"].isin(overflow).any()


def _quiet(**kw):
    """A co-search whose children change nothing but what they inherit (every GAMMA operator off)."""
    from accelsim.search.cosearch import CoSearch
    from accelsim.search.mappers import GammaRates

    rates = GammaRates(crossover=0, mutate_parallel_dim=0, mutate_tile=0, reorder=0, growth=0, aging=0)
    return CoSearch(BASE, [CONV, FC], CoSearchConfig.make(SMALL, budget=8, population=4, max_levels=2, seed=5,
                                                          rates=rates, mutate_hw=0, **kw))


def test_first_generation_seeds_every_layer_from_a_style():
    """The first half of the first generation maps every layer by a named style (the genomes
    among the styles' mappings on the design's hardware); the second half is random."""
    from accelsim.search.seeds import style_genomes

    search = _quiet()
    first = search._first()
    for design in first[:2]:
        spec = design.hw.spec(BASE)
        for layer, genome in zip(search.layers, design.genomes):
            assert genome in style_genomes(SearchSpace.default(layer, spec.num_pes), spec).values()


def test_children_start_each_layer_from_the_best_genome_of_their_hardware():
    """Two designs of one hardware scored, no layer varied: every child has that hardware and
    each layer's genome is the one of the two that costs less on that layer (the per-layer
    crossover)."""
    from accelsim.search.cosearch import Design
    import random

    search = _quiet(vary_layers=0)
    a = search._first()[0]
    spaces = [search._space(layer, a.hw.get("pe_array.count")) for layer in search.layers]
    rng = random.Random(1)
    evaluators = [search._evaluator(search._spec(a.hw), layer) for layer in search.layers]
    for _ in range(50):  # a second design of a's hardware, legal, better than a on one layer only
        b = Design(a.hw, tuple(search._fit(s, s.random_genome(rng), a.hw) for s in spaces))
        rows = [ev.rows([g])[0] for ev, pair in zip(evaluators, zip(a.genomes, b.genomes)) for g in pair]
        if all(r["status"] == "ok" for r in rows):
            cycles = [r["cycles"] for r in rows]
            best = tuple(ga if cycles[2 * i] <= cycles[2 * i + 1] else gb
                         for i, (ga, gb) in enumerate(zip(a.genomes, b.genomes)))
            if best not in (a.genomes, b.genomes):
                break
    else:
        pytest.fail("no second design found")
    for i, design in enumerate((a, b)):
        assert search._score(design, i)["status"] == "ok"
    children = [search._child([(0.0, "a", a), (0.0, "b", b)]) for _ in range(10)]
    assert all(c.hw == a.hw and c.genomes == best for c in children)


def test_layers_of_one_shape_share_a_genome_and_count_as_often_as_they_occur():
    """conv, fc and a second conv of the same shape: a design has two genomes, best.m maps both
    convs alike, and the design's cycles are twice the conv's plus the fc's, each scored alone."""
    from accelsim.search.evaluate import Evaluator

    again = Layer.build("conv_again", OpType.CONV2D, {"K": 16, "C": 8, "R": 3, "S": 3, "Y": 10, "X": 10})
    result = cosearch(BASE, [CONV, FC, again], CoSearchConfig.make(SMALL, budget=8, population=4, max_levels=2,
                                                                   seed=3))
    assert result.best is not None and result.best_hw is not None
    assert len(result.best["genomes"].split(" | ")) == 2
    conv_flow, fc_flow, again_flow = result.best_dataflows
    assert conv_flow == again_flow
    with Evaluator(result.best_hw, CONV) as ev:
        conv = ev.rows([conv_flow])[0]["cycles"]
    with Evaluator(result.best_hw, FC) as ev:
        fc = ev.rows([fc_flow])[0]["cycles"]
    assert result.best["cycles"] == 2 * conv + fc


def test_fill_area_raises_each_buffer_to_the_largest_value_that_fits():
    """Genes PEs 4, L1 32/64/128 B, L2 1024/2048/4096 B (1-byte words, MAC 283 um^2, 0.104 um^2 a
    word), budget 1350 um^2. From L1 32, L2 1024 (1132 + 13.312 + 106.496 = 1251.808 um^2): L1 128
    gives 1132 + 53.248 + 106.496 = 1291.744 (fits); L2 2048 then 1132 + 53.248 + 212.992 =
    1398.24 (over), and L2 2048 before L1 is 1358.3 (over) too, so either order ends at L1 128,
    L2 1024. A gene already over what fits (L2 4096) is never lowered; without a budget nothing
    changes."""
    from accelsim.search.cosearch import CoSearch

    ranges = ("pe_array.count=4:4", "l1.size_bytes=32:128", "l2.size_bytes=1024:4096")
    search = CoSearch(BASE, [CONV], CoSearchConfig.make(ranges, area_budget_mm2=0.00135))
    start = {"pe_array.count": 4, "l1.size_bytes": 32, "l2.size_bytes": 1024}
    for _ in range(4):  # both orders of the two buffer genes
        assert search._fill_area(start) == {**start, "l1.size_bytes": 128}
    over = {**start, "l2.size_bytes": 4096}
    assert search._fill_area(over) == over
    unbounded = CoSearch(BASE, [CONV], CoSearchConfig.make(ranges))
    assert unbounded._fill_area(start) == start


def test_fill_area_children_fit_the_budget_and_refine_fixes_the_hardware():
    """With Fill-area on every child (``fill_area=1``) and ``refine=0.5`` of 48 designs
    (population 8): every design from the first generation that starts at or after design 24
    (so every one from 24 + 8 = 32 on) has the best design's hardware, designs before had
    others, the refinement's first designs map the conv by a named style on it, and the search
    is the same under the same seed."""
    from accelsim.search.seeds import style_genomes

    result = _search(budget=48, area_budget_mm2=0.01, fill_area=1.0, refine=0.5)
    frame = result.frame
    assert result.best is not None and len(frame) == 48
    assert (frame.iloc[32:]["hw"] == result.best["hw"]).all()
    assert (frame.iloc[:24]["hw"] != result.best["hw"]).any()
    again = _search(budget=48, area_budget_mm2=0.01, fill_area=1.0, refine=0.5)
    assert again.frame["key"].equals(frame["key"])
    assert result.best_hw is not None
    styled = [row for row in frame.iloc[24:40]["genomes"]]
    conv_styles = {g.text() for g in style_genomes(SearchSpace.default(CONV, result.best_hw.num_pes), result.best_hw).values()}
    assert any(text.split(" | ")[0] in conv_styles for text in styled)


def test_refine_and_fill_area_out_of_range_are_refused():
    with pytest.raises(InputError, match=r"--fill-area must lie in 0..1 \(a probability per child\), got 1.5"):
        CoSearchConfig.make(SMALL, fill_area=1.5)
    with pytest.raises(InputError, match=r"--refine must lie in 0..1, below 1 \(a share of --budget\), got 1.0"):
        CoSearchConfig.make(SMALL, refine=1.0)
    with pytest.raises(InputError, match=r"--vary-layers must be at least 0 \(.*\), got -1"):
        CoSearchConfig.make(SMALL, vary_layers=-1)
    with pytest.raises(InputError, match=r"--mutate-hw must lie in 0..1 \(a probability per child\), got 2"):
        CoSearchConfig.make(SMALL, mutate_hw=2.0)


@pytest.mark.parametrize("keep_partial", [True, False])
def test_keep_partial_remembers_the_layers_scored_before_a_refused_one(monkeypatch, keep_partial):
    """A design whose second layer (fc) is refused: with ``keep_partial`` its first layer's genome
    (scored ok) joins that hardware's best genomes for the conv, and the fc's pool stays empty;
    without it the hardware has no pool at all. The design is refused either way."""
    from accelsim.search.cosearch import CoSearch

    search = CoSearch(BASE, [CONV, FC], CoSearchConfig.make(SMALL, budget=8, population=4, max_levels=2, seed=5,
                                                            keep_partial=keep_partial))
    real = search._evaluator

    class Refusing:
        def rows(self, genomes):
            return [{"status": "skipped", "reason": "work_budget", "message": "refused here"} for _ in genomes]

    monkeypatch.setattr(search, "_evaluator", lambda spec, layer: Refusing() if layer.name == "fc" else real(spec, layer))
    design = next(d for d in search._first()
                  if real(search._spec(d.hw), CONV).rows([d.genomes[0]])[0]["status"] == "ok")
    row = search._score(design, 0)
    assert (row["status"], row["reason"]) == ("skipped", "work_budget")
    if keep_partial:
        conv_pool, fc_pool = search._layer_best[design.hw.text()]
        assert [g for _, g in conv_pool] == [design.genomes[0]] and fc_pool == []
    else:
        assert design.hw.text() not in search._layer_best
