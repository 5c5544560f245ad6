"""Golden numbers of the validation scenario sets: every layer of every set (accelsim.validation)
by the simulator in both modes and by the analytical model, pinned in
``tests/golden/validation_results.csv`` so a change to either model that moves a number shows
up in review.

Every layer is simulated, as in the report. The default run checks a representative subset
(every style, every hardware preset, every layer type, FLASH's GEMM I of 3.4e7 steps); the
``slow`` test checks every layer. Regenerate after an explained change with
``ACCELSIM_UPDATE_GOLDEN=1 python -m pytest tests/test_validation_golden.py -m "slow or not slow"``.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from accelsim.mapping.jobs import prepare
from accelsim.validation.runner import (COLUMNS, RunPlan, analytical_model, analytical_options, identity_columns,
                                        layer_rows, scenario_jobs)
from accelsim.validation.scenarios import SCENARIO_SETS, Scenario, systolic_set

GOLDEN = Path(__file__).parent / "golden" / "validation_results.csv"
KEY = ("set", "network", "hw", "style", "layer", "model", "mode")
REPO = Path(__file__).resolve().parents[1]

# (set, hw, style) -> layers checked in the default run
DEFAULT_SELECTION = {
    ("marvel", "eyeriss_like", "nvdla_like"): ("L1_Bottleneck1_1_Residual", "L4_Bottleneck6_2_2", "L7_CONV2D_3"),
    ("marvel", "eyeriss_like", "eyeriss_like"): ("L3_Bottleneck4_3_2", "L4_Bottleneck6_2_2"),
    ("marvel", "eyeriss_like", "shidiannao_like"): ("L3_Bottleneck4_3_2", "L10_CONV5_3_Residual"),
    ("marvel", "marvel_edge", "eyeriss_like"): ("L4_Bottleneck6_2_2",),
    **{("flash_gemm", "flash_edge", style): ("I", "III") for style in
       ("nvdla_like", "eyeriss_like", "shidiannao_like", "tpu_like", "maeri_like")},
    ("flash_mlp", "flash_cloud", "tpu_like"): ("FC4",),
    ("dmazerunner", "dmazerunner_16x16", "nvdla_like"): ("conv5_1",),
    ("systolic", "scale_ws", "scalesim_ws"): ("fc1", "gemv3"),
}


def _scenarios() -> list[Scenario]:
    sets = list(SCENARIO_SETS) + [systolic_set(REPO / "validation" / "scalesim")]
    return [sc for s in sets for sc in s.scenarios]


def _measure(selected) -> list[dict[str, str]]:
    """Rows (as the strings results.csv holds) of the selected layers."""
    analytical = analytical_model()
    plan = RunPlan(None, analytical)
    rows = []
    for sc in _scenarios():
        concrete = scenario_jobs(sc)
        for layer, job, why in concrete.layers:
            base = identity_columns(sc, layer, concrete.hw)
            if not selected(base):
                continue
            assert job is not None, why
            rows += layer_rows(base, job, concrete.hw, plan, concrete.sim_options)
    return [{c: ("" if r.get(c) is None else str(r[c])) for c in COLUMNS} for r in rows]


def _key(row: dict[str, str]) -> tuple[str, ...]:
    return tuple(row[k] for k in KEY)


def _check(measured: list[dict[str, str]]) -> None:
    golden: dict[tuple, dict[str, str]] = {}
    if GOLDEN.exists():
        with GOLDEN.open(encoding="utf-8", newline="") as f:
            golden = {_key(r): r for r in csv.DictReader(f)}
    if os.environ.get("ACCELSIM_UPDATE_GOLDEN"):
        golden.update({_key(r): r for r in measured})
        with GOLDEN.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(COLUMNS), lineterminator="\n")
            writer.writeheader()
            writer.writerows(golden[k] for k in sorted(golden))
    missing = [_key(r) for r in measured if _key(r) not in golden]
    assert not missing, f"{len(missing)} rows not pinned yet, e.g. {missing[0]}"
    moved = [(_key(r), c, golden[_key(r)][c], r[c]) for r in measured for c in COLUMNS if golden[_key(r)][c] != r[c]]
    assert not moved, f"{len(moved)} values moved, e.g. {moved[0][0]} {moved[0][1]}: {moved[0][2]} -> {moved[0][3]}"


def test_representative_scenario_rows_match_golden():
    measured = _measure(lambda b: b["layer"] in DEFAULT_SELECTION.get((b["set"], b["hw"], b["style"]), ()))
    assert len(measured) == 3 * sum(len(v) for v in DEFAULT_SELECTION.values())
    _check(measured)


@pytest.mark.slow
def test_every_scenario_row_matches_golden():
    measured = _measure(lambda b: True)
    _check(measured)
    with GOLDEN.open(encoding="utf-8", newline="") as f:
        assert len(list(csv.DictReader(f))) == len(measured)  # nothing pinned that no longer exists


# ------------------------------------------------------------------------------------------
# issue 17: the analytical model's realistic mode against the simulator's (pinned) realistic
# cycles; measured 2026-11-26: all 232 scenario layers within 0.13% (24 systolic layers exact)
REALISTIC_TOLERANCE = 0.02


def _realistic_gaps(selected) -> list[tuple[tuple[str, ...], int, int]]:
    """(key, analytical realistic cycles, pinned simulated realistic cycles) of the selected layers."""
    with GOLDEN.open(encoding="utf-8", newline="") as f:
        simulated = {_key(r)[:5]: int(r["cycles"]) for r in csv.DictReader(f)
                     if r["model"] == "simulator" and r["mode"] == "realistic" and r["status"] == "ok"}
    analytical = analytical_model()
    out = []
    for sc in _scenarios():
        concrete = scenario_jobs(sc)
        for layer, job, _ in concrete.layers:
            base = identity_columns(sc, layer, concrete.hw)
            if job is None or not selected(base):
                continue
            key = tuple(str(base[k]) for k in KEY[:5])
            cm = prepare(job, concrete.hw)
            estimate = analytical(cm, concrete.hw, "realistic", **analytical_options(concrete.sim_options))
            out.append((key, estimate.cycles, simulated[key]))
    return out


def _assert_close(gaps) -> None:
    far = [(k, a, s) for k, a, s in gaps if abs(a - s) > REALISTIC_TOLERANCE * s]
    assert not far, f"{len(far)} of {len(gaps)} layers beyond 2%, e.g. {far[0]}"


def test_analytical_realistic_tracks_the_simulator_on_representative_layers():
    gaps = _realistic_gaps(lambda b: b["layer"] in DEFAULT_SELECTION.get((b["set"], b["hw"], b["style"]), ()))
    assert len(gaps) == sum(len(v) for v in DEFAULT_SELECTION.values())
    _assert_close(gaps)


@pytest.mark.slow
def test_analytical_realistic_tracks_the_simulator_on_every_layer():
    _assert_close(_realistic_gaps(lambda b: True))
