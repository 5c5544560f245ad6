"""The model of the MAESTRO binary (accelsim.maestro) against what MAESTRO printed.

``validation/maestro/`` holds MAESTRO's own CSVs for 27 layers on 3 hardware files (81 points;
provenance in its README). Every line our CSV writer produces must equal MAESTRO's byte for
byte; two layers are derived by hand, case by case, below.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from accelsim.cli import main
from accelsim.errors import MappingError
from accelsim.hw.loader import load_hardware
from accelsim.maestro import analyze_jobs, csv_text
from accelsim.maestro.engine import Corrections, MaestroHardware
from accelsim.maestro.model import analyze_problem, problem_of
from accelsim.maestro.problem import cdiv, cmod
from accelsim.maestro.report import fmt, maestro_name
from accelsim.mapping.jobs import jobs_from_maestro
from accelsim.mapping.maestro_format import parse_maestro

REFERENCE = Path(__file__).resolve().parents[1] / "validation" / "maestro"
HW_FILES = ("pub_edge64_fastdram", "pub_eyeriss168", "pub_maeri256")
NETWORKS = ("gemm_public", "mobilenetv2_public", "quirks_public", "resnet50_public")


def _run(hw_name: str, network: str, layer: str | None = None):
    hw = load_hardware(REFERENCE / "hw" / f"{hw_name}.hw.m")
    name, jobs = jobs_from_maestro(REFERENCE / "mappings" / f"{network}.m", layer)
    return analyze_jobs(name, jobs, hw)


def _reference_rows(hw_name: str, network: str) -> dict[str, dict[str, str]]:
    with open(REFERENCE / "results" / hw_name / f"{network}.csv", newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    return {r[1]: dict(zip(header, (c.strip() for c in r))) for r in rows[1:]}


@pytest.mark.parametrize("hw_name", HW_FILES)
@pytest.mark.parametrize("network", NETWORKS)
def test_reference_csv_byte_for_byte(hw_name, network):
    """All 81 points: runtime, MACs, every L1/L2 read and write, both size requirements and
    every other column (energy, area, power, delays, bandwidths) as MAESTRO printed them."""
    _, analyses = _run(hw_name, network)
    expected = (REFERENCE / "results" / hw_name / f"{network}.csv").read_text()
    assert csv_text(analyses) == expected


@pytest.mark.parametrize("hw_name", HW_FILES)
def test_reference_counts_in_result_schema(hw_name):
    """The LayerResult carries MAESTRO's numbers: cycles, MACs, accesses, sizes (words x 1 B)."""
    for network in NETWORKS:
        result, _ = _run(hw_name, network)
        reference = _reference_rows(hw_name, network)
        for r in result.layers:
            row = reference[r.layer]
            assert r.cycles == int(row["Runtime (Cycles)"]) and r.macs == int(row["Num MACs"])
            for ours, theirs in (("input", "input"), ("weight", "filter"), ("output", "output")):
                acc = r.accesses[ours]
                assert (acc.l1_read, acc.l1_write, acc.l2_read, acc.l2_write) == tuple(
                    int(row[f"{theirs} {lv} {kind}"]) for lv in ("l1", "l2") for kind in ("read", "write"))
            assert r.l1_required_bytes == int(row["L1 SRAM Size Req (Bytes)"])
            assert r.l2_required_bytes == int(row["L2 SRAM Size Req (Bytes)"])
            assert r.compute_busy_cycles + sum(r.stall_cycles.values()) == r.cycles


def test_hand_offchip_bound_dsconv():
    """mb_b3_dw_cp on pub_eyeriss168 (168 PEs, NoC 16, off-chip 8): DSCONV C=144, 3x3, 58x58,
    stride 1, ``SpatialMap(1,1) C; TemporalMap(3,1) Y; TemporalMap(3,1) X; R; S``, no Cluster:
    one level of 168 units.

    C: 144 <= 1 + 167 = 168, so the spatial map is Init-only, unrolled and at its edge; its edge
    step has (144 - 1) / 1 + 1 = 144 active units and a partial last unit. Y and X: Init once,
    Steady (58 - 3) / 1 = 55 times, no Edge. R, S: Init only. Cases (Y, X):
    (I, I) x1, (S, S) x3025, (S, I) x55, (I, S) x55: 3136 steps.

    Input (C, Y, X), per unit 1 x 3 x 3 = 9 in (I, I): 144 x 9 = 1296. In (S, S) and (I, S) the
    changing dimension is X: one new column per unit, 144 x 3 = 432. In (S, I) Y changes while X
    is back at Init (not unrolled), so the whole window is resent: 1296. Filter (C, R, S):
    144 x 9 = 1296 in (I, I), then 0 (X and Y do not index it). Output egress: 1 per unit, but
    the partial last unit's unique size is max(1 - (1 - 0), 0) = 0 (quirk
    ``spatial_edge_zero_egress``): 143 per step. MACs: 144 x 9 = 1296 per step; compute delay
    the first unit's 9.

    NoC (16 words/cycle, latency 1): ingress 2592 -> 162, 432 -> 27, 1296 -> 81; egress 143 ->
    9. Off-chip floor: L2 needs twice case (I, I)'s traffic: input 2592, filter 2592, output
    286; floor = max((2592 + 2592) // 8 // 2, 286 // 8 // 2) = max(324, 17) = 324, above every
    case's own cost (171, 27, 81, 27). Runtime = 3136 x 324 = 1,016,064.

    Counts: input l2 read = 1296 + 3025 x 432 + 55 x 1296 + 55 x 432 = 1,403,136 (= l1 write);
    filter l2 read 1296; output l2 write 3136 x 143 = 448,448; output l2 read 144 x 56 x 56 =
    451,584; MACs 3136 x 1296 = 4,064,256; L2 size 5470; L1 size 2 x (9 + 9 + 9) = 54.
    """
    result, analyses = _run("pub_eyeriss168", "mobilenetv2_public", "mb_b3_dw_cp")
    r, a = result.layers[0], analyses[0]
    assert [(c.occurrences, c.ingress["input"], c.ingress["filter"], c.egress, c.macs, c.ingress_delay,
             c.compute_delay, c.delay) for c in a.cases] == [
        (1, 1296, 1296, 143, 1296, 162, 9, 324),
        (3025, 432, 0, 143, 1296, 27, 9, 324),
        (55, 1296, 0, 143, 1296, 81, 9, 324),
        (55, 432, 0, 143, 1296, 27, 9, 324),
    ]
    assert r.cycles == 1_016_064 and r.macs == 4_064_256
    assert r.accesses["input"].l2_read == r.accesses["input"].l1_write == 1_403_136
    assert r.accesses["weight"].l2_read == 1296
    assert (r.accesses["output"].l2_write, r.accesses["output"].l2_read) == (448_448, 451_584)
    assert (r.l2_required_bytes, r.l1_required_bytes) == (5470, 54)
    assert r.stall_cycles["dram"] == 3136 * 324 - 3136 * 9


def test_hand_noc_compute_bound_gemm():
    """gemm_fc1000_mk on pub_edge64_fastdram (64 PEs, NoC 8, off-chip 100000): GEMM K=2048,
    M=1, N=1000; top ``TemporalMap(1,1) N; SpatialMap(1,1) M; TemporalMap(32,32) K;
    Cluster(32)``, inside ``N; M; SpatialMap(1,1) K``. Top: 64 // 32 = 2 units.

    Top cases: M (1 wide over 2 units) is Init-only at its edge with 1 active unit; N Init, Steady
    999; K Init, Steady (2048 - 32) / 32 = 63. Cases (N, K): (I, I) x1, (S, S) x62937, (S, I)
    x999, (I, S) x63. Input (M, K): 32 words, except (S, I), where N changes and the input does
    not depend on it: 0. Filter (K, N): 32 in every case ((S, I): K back at Init, so N's step
    resends the 32-word column). Output: 1 word. MACs: 32.

    Sub-unit tile (K 32, M 1, N 1; 32 PEs, K spatial): one all-Init case: ingress 32 + 32 = 64
    -> 8 cycles, 1 MAC per PE -> compute 1, so its runtime is 1 + 8 = 9 (quirk
    ``subcluster_init_serial``: every sub-tile pays its fill serially). Top delays: ingress
    64 -> 8 ((S, I): 32 -> 4), egress 1 -> 1, compute 9; (I, I) costs 9 + 8 = 17, the others
    max(8 or 4, 9, 1) = 9. Off-chip floor: (64 + 64) // 100000 // 2 = 0.

    Runtime = 17 + 9 x (62937 + 999 + 63) = 576,008. Input l2 read = 32 x (1 + 62937 + 63) =
    2,016,032; filter l2 read 32 x 64000 = 2,048,000; output l2 write 64,000, l2 read
    M x N = 1000; MACs 2,048,000.

    With the sub-tile's all-Init case overlapped like the others (``Corrections(
    subcluster_init_serial=True)``) a sub-tile costs max(1, 1, 8) = 8: the top's (I, I) case
    8 + 8 = 16, the others 8, so 16 + 8 x 63999 = 512,008 cycles.
    """
    result, analyses = _run("pub_edge64_fastdram", "gemm_public", "gemm_fc1000_mk")
    r, a = result.layers[0], analyses[0]
    assert [(c.occurrences, c.ingress["input"], c.ingress["filter"], c.ingress_delay, c.compute_delay, c.delay)
            for c in a.cases] == [(1, 32, 32, 8, 9, 17), (62937, 32, 32, 8, 9, 9), (999, 0, 32, 4, 9, 9),
                                  (63, 32, 32, 8, 9, 9)]
    assert r.cycles == 576_008 and r.macs == 2_048_000
    assert r.accesses["input"].l2_read == 2_016_032 and r.accesses["weight"].l2_read == 2_048_000
    assert (r.accesses["output"].l2_write, r.accesses["output"].l2_read) == (64_000, 1000)
    fixed = analyze_problem(a.problem, a.hw, Corrections(subcluster_init_serial=True))
    assert fixed.cycles == 16 + 8 * 63999


def test_cli_analyze_model_maestro_writes_maestros_csv(tmp_path):
    out = tmp_path / "q.csv"
    res = CliRunner().invoke(main, ["analyze", "--hw", str(REFERENCE / "hw" / "pub_maeri256.hw.m"), "--mapping",
                                    str(REFERENCE / "mappings" / "quirks_public.m"), "--model", "maestro",
                                    "--csv", str(out)])
    assert res.exit_code == 0, res.output
    assert "model of MAESTRO" in res.output
    assert out.read_text() == (REFERENCE / "results" / "pub_maeri256" / "quirks_public.csv").read_text()


def test_cli_analyze_model_maestro_refuses_realistic_mode():
    res = CliRunner().invoke(main, ["analyze", "--hw", "maestro_default", "--network", "marvel15", "--style",
                                    "nvdla_like", "--model", "maestro", "--mode", "realistic"])
    assert res.exit_code == 2
    assert res.output.startswith("error: --model maestro has MAESTRO's assumptions only")


def test_compare_model_maestro_matches_maestro_csv():
    """The model and MAESTRO's file agree on every metric both report (cycles, MACs, L1/L2)."""
    res = CliRunner().invoke(main, [
        "compare", "--hw", str(REFERENCE / "hw" / "pub_edge64_fastdram.hw.m"),
        "--mapping", str(REFERENCE / "mappings" / "mobilenetv2_public.m"), "--layer", "mb_b4_dw_yxp",
        "--mode", "maestro", "--model", "maestro",
        "--maestro-csv", str(REFERENCE / "results" / "pub_edge64_fastdram" / "mobilenetv2_public.csv")])
    assert res.exit_code == 0, res.output
    cycles_line = next(line for line in res.output.splitlines() if line.strip().startswith("cycles "))
    assert cycles_line.split()[2] == cycles_line.split()[-2] == "33,440"


def _problem(text: str):
    return problem_of(parse_maestro(text).layers[0], "n")


_HW = MaestroHardware(num_pes=8, noc_bandwidth_words_per_cycle=4, offchip_bandwidth_words_per_cycle=2,
                      l1_size_words=100, l2_size_words=1000)


def test_refuses_what_maestro_refuses():
    """MAESTRO's parser stops on a TemporalMap of R that does not cover the filter; a cluster
    larger than the array crashes the binary; a level without SpatialMap stops it."""
    body = "Network n { Layer l { Type: CONV Dimensions { K: 4, C: 2, R: 3, S: 3, Y: 6, X: 6 } Dataflow { %s } } }"
    with pytest.raises(MappingError, match="equal its offset"):
        analyze_problem(_problem(body % "SpatialMap(1,1) K; TemporalMap(3,1) R;"), _HW)
    with pytest.raises(MappingError, match="more than the 8 PEs"):
        analyze_problem(_problem(body % "SpatialMap(1,1) K; Cluster(16,P); SpatialMap(1,1) C;"), _HW)
    with pytest.raises(MappingError, match="no SpatialMap"):
        analyze_problem(_problem(body % "TemporalMap(1,1) K;"), _HW)


def test_cxx_arithmetic_and_printing():
    assert (cdiv(-7, 2), cmod(-7, 2), cdiv(7, 2), cmod(7, -2)) == (-3, -1, 3, 1)
    assert maestro_name("Conv2d-1") == "1" and maestro_name("a.b") == "a.b"
    assert (fmt(1.88512e7), fmt(float("nan")), fmt(6.649350), fmt(1.0)) == ("1.88512e+07", "-nan", "6.64935", "1")
