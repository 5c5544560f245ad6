"""The external reference sets kept in validation/ (STONNE, Timeloop, the Eyeriss chip) hang together.

These tests never run STONNE or Timeloop: they read the files their scripts wrote. They check that
every STONNE case's mapping (validation/stonne/mappings/) is legal in accelsim, computes the case's
MACs and puts work on exactly the multipliers STONNE uses; that the Timeloop tables agree with
themselves and with the copied triples; and that the hand-entered Eyeriss tables add up.
"""

from __future__ import annotations

import csv
from math import ceil, log2
from pathlib import Path

import numpy as np
import pytest

from accelsim.mapping.compile import compile_mapping
from accelsim.mapping.geometry import step_boxes
from accelsim.mapping.maestro_format import load_maestro
from accelsim.mapping.maestro_resolve import layer_from_maestro

ROOT = Path(__file__).resolve().parent.parent / "validation"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _i(value: str) -> int:
    return int(float(value))


STONNE_OK = [r for r in _rows(ROOT / "stonne" / "cases.csv") if r["status"] == "ok"]


def test_stonne_set_covers_the_issue() -> None:
    """At least 40 cases ran, across CONV (stride 1 and 2), FC, GEMM and the TPU mesh, on 64-256
    multipliers, with read and write ports from 1 to 64."""
    assert len(STONNE_OK) >= 40
    ops = {(r["operation"], r["network"]) for r in STONNE_OK}
    assert {("CONV", "MAERI"), ("FC", "MAERI"), ("GEMM", "MAERI"), ("GEMM", "TPU_OS")} <= ops
    assert {_i(r["stride"]) for r in STONNE_OK if r["operation"] == "CONV"} == {1, 2}
    assert {_i(r["num_ms"]) for r in STONNE_OK} >= {64, 128, 256}
    assert {_i(r["dn_bw"]) for r in STONNE_OK} >= {1, 64}
    assert {_i(r["rn_bw"]) for r in STONNE_OK} >= {1, 64}


@pytest.mark.parametrize("row", STONNE_OK, ids=[r["case_id"] for r in STONNE_OK])
def test_stonne_mapping_matches_case(row: dict[str, str]) -> None:
    """The case's mapping compiles on ``num_ms`` PEs (every MAC exactly once), has the layer's MACs,
    and in its first step works on as many PEs as STONNE's ``num_vns * vn_size`` multipliers; on
    MAERI exactly PEs 0 .. num_vns*vn_size - 1, where STONNE places its virtual neurons (e.g.
    conv_ex_dn8_rn8: 3 VNs of 3x3 = 27 multipliers, PEs 0-26 of 64)."""
    path = ROOT / "stonne" / "mappings" / f"{row['case_id']}.m"
    ml = load_maestro(path).layers[0]
    layer = layer_from_maestro(ml, str(path))
    cm = compile_mapping(layer, ml.dataflow, _i(row["num_ms"]), source=str(path))
    assert layer.macs == _i(row["macs"])
    active = np.flatnonzero(step_boxes(cm, 0, 1).active[0])
    used = _i(row["vn_size"]) * _i(row["num_vns"])
    if row["network"] == "MAERI":
        assert active.tolist() == list(range(used))
    else:
        assert len(active) == used


def test_stonne_micro_cases_follow_the_tile_timing() -> None:
    """README's model on the micro cases (one port per multiplier): per weight tile
    max(read-port load, write-port load) + 3 + max(1, ceil(log2(num_vns * vn_size))).
    micro_vn8: 1 weight + 1 input per port, 8 multipliers: 2 + 3 + 3 = 8 cycles;
    micro_vn8_n2: two such tiles, 16."""
    micro = [r for r in STONNE_OK if r["case_id"].startswith("micro_")]
    assert len(micro) >= 20
    for r in micro:
        tiles = ceil(_i(r["gemm_N"]) / _i(r["T_N_gemm"]))
        load = max(_i(r["dn_busiest_port_sends"]), _i(r["rn_busiest_port_writes"])) // tiles
        depth = max(1, ceil(log2(_i(r["vn_size"]) * _i(r["num_vns"]))))
        assert _i(r["cycles"]) == tiles * (load + 3 + depth), r["case_id"]


TIMELOOP_REFS = _rows(ROOT / "timeloop" / "references.csv")
TIMELOOP_ACCESSES = _rows(ROOT / "timeloop" / "accesses.csv")


def test_timeloop_tables_agree() -> None:
    """Every triple ran, its copied files are present under distinct names, it has access rows, ``compute_bound`` is
    ``cycles == compute_cycles``, totals are per-instance counts times utilized instances, and the
    2024 runs equal the exercises' own Timeloop v4 outputs."""
    assert len(TIMELOOP_REFS) >= 40
    with_rows = {a["triple_id"] for a in TIMELOOP_ACCESSES}
    for r in TIMELOOP_REFS:
        assert r["status"] == "ok", r["triple_id"]
        names = r["copied_files"].split(";") + [f for f in r["user_files"].split(";") if f]
        assert len(set(names)) == len(names), r["triple_id"]  # no file copied over another
        for name in names:
            assert (ROOT / "timeloop" / "triples" / r["triple_id"] / name).is_file()
        assert r["triple_id"] in with_rows
        assert (r["compute_bound"] == "True") == (r["cycles"] == r["compute_cycles"])
        if r["era"] == "2024":
            assert r["cycles"] == r["reference_cycles_timeloop_v4"]
            assert r["counts_equal_v4_reference"] == "True"
    for a in TIMELOOP_ACCESSES:
        for kind in ("reads", "updates", "fills"):
            assert _i(a[f"{kind}_total"]) == _i(a[f"{kind}_per_instance"]) * _i(a["utilized_instances"])


def test_eyeriss_tables_add_up() -> None:
    """Table V's layer rows sum to its Total row (latencies 115.3 and 103.5 ms, DRAM 15.4 MB), the
    MACs are AlexNet's CONV layers at batch 4 (CONV1: 4 x 96 x 3 x 11 x 11 x 55 x 55 = 0.42 G), and
    Table III's PE sets R x e x r x t are Table V's active PEs (CONV1: 11 x 7 x 1 x 2 = 154)."""
    measured = _rows(ROOT / "eyeriss" / "alexnet_measured.csv")
    layers = [r for r in measured if r["layer"] != "Total"]
    total = next(r for r in measured if r["layer"] == "Total")
    for col in ("total_latency_ms", "processing_latency_ms", "dram_accesses_MB"):
        assert sum(float(r[col]) for r in layers) == pytest.approx(float(total[col]), abs=0.05)
    mapping = _rows(ROOT / "eyeriss" / "alexnet_rs_mapping.csv")
    for m, v in zip(mapping, layers, strict=True):
        R, E, C, M = (_i(m[k]) for k in ("R", "E", "C", "M"))
        assert 4 * M * C * R * R * E * E / 1e9 == pytest.approx(float(v["macs_G"]), abs=0.005)
        assert _i(m["R"]) * _i(m["e"]) * _i(m["r"]) * _i(m["t"]) == _i(v["active_pes"])
