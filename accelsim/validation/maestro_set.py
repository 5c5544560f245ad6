"""The MAESTRO reference set in the validation report: per layer, what MAESTRO printed, our
model of it, our analytical model and the simulator (maestro and realistic mode), the ladder
from MAESTRO's runtime to the simulator's, and the layers on which MAESTRO miscounts.

The set is ``validation/maestro/`` (MAESTRO's own CSVs for 27 layers on 3 hardware files; its
README has the provenance). :func:`maestro_rows` gives one plain row per (hardware, layer);
:func:`maestro_section` turns rows into the report's Markdown.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from accelsim.compare.attribution import CAUSES, INTERACTION, ablate
from accelsim.compare.ladder import (
    CASE_ARITHMETIC,
    MODEL_RUNGS,
    RUNGS,
    Ladder,
    ladder,
    ladder_steps,
)
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.maestro import analyze_job, csv_text
from accelsim.maestro.lint import lint_job
from accelsim.mapping.jobs import jobs_from_maestro, prepare
from accelsim.sim.engine import SimOptions, simulate_layer

HW_FILES = ("pub_eyeriss168", "pub_maeri256", "pub_edge64_fastdram")
NETWORKS = ("gemm_public", "mobilenetv2_public", "quirks_public", "resnet50_public")
SOURCE = "maestro-csv"
MAESTRO_COLUMNS = ("hw", "network", "layer", "quirk_layer", "status", "pe_steps", "maestro_cycles", "model_cycles",
                   "model_csv_line_identical", "maestro_macs", "true_macs", "analytical_maestro_cycles",
                   "sim_maestro_cycles", "sim_realistic_cycles", "lint", "gap",
                   *(f"part:{rung}" for rung in RUNGS))  # no wall time: a rerun must not change the file


def _csv_lines(path: Path) -> dict[str, str]:
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    return {next(csv.reader([line]))[1]: line for line in lines[1:]}


def _true_facts(reference: Path) -> dict[str, bool]:
    import json

    return {name: bool(meta.get("quirk")) for name, meta in json.loads((reference / "layers.json").read_text()).items()}


def maestro_rows(reference: Path, sim_budget_pe_steps: int | None, ablation_budget_pe_steps: int | None,
                 hw_files: Sequence[str] = HW_FILES, networks: Sequence[str] = NETWORKS,
                 layers: Sequence[str] | None = None, progress: Callable[[str], None] | None = None
                 ) -> list[dict[str, Any]]:
    """One row per (hardware file, layer) of the reference set (optionally only ``layers``).

    The simulator runs (maestro and realistic mode) only layers of at most
    ``sim_budget_pe_steps`` PE-steps (None: every layer); the realistic rungs are split by cause
    (six more simulations) up to ``ablation_budget_pe_steps`` (None: every layer), else one
    ``realistic_effects`` rung.
    ``status``: ``simulated``, ``over_budget`` (ladder up to ``case_arithmetic``, the analytical
    model) or ``refused`` (our compiler refuses the mapping: the message is in ``lint``).
    """
    if not reference.is_dir():
        raise InputError(f"no MAESTRO reference set at {reference.as_posix()} (run from the repository root)")
    quirky = _true_facts(reference)
    rows: list[dict[str, Any]] = []
    for hw_name in hw_files:
        hw = load_hardware(reference / "hw" / f"{hw_name}.hw.m")
        for network in networks:
            csv_path = reference / "results" / hw_name / f"{network}.csv"
            printed = _csv_lines(csv_path)
            name, jobs = jobs_from_maestro(reference / "mappings" / f"{network}.m")
            ours = {}
            analyses = [analyze_job(job, hw, name)[1] for job in jobs]
            for job, line in zip(jobs, csv_text(analyses).splitlines()[1:], strict=True):
                ours[job.layer.name] = line
            for job, analysis in zip(jobs, analyses, strict=True):
                if layers is not None and job.layer.name not in layers:
                    continue
                start = time.perf_counter()
                maestro_cycles = int(next(csv.reader([printed[job.layer.name]]))[3])
                row: dict[str, Any] = dict.fromkeys(MAESTRO_COLUMNS)
                row.update({
                    "hw": hw_name, "network": network, "layer": job.layer.name,
                    "quirk_layer": quirky.get(job.layer.name, False), "maestro_cycles": maestro_cycles,
                    "model_cycles": analysis.cycles,
                    "model_csv_line_identical": ours[job.layer.name] == printed[job.layer.name],
                    "maestro_macs": int(next(csv.reader([printed[job.layer.name]]))[21]),
                    "true_macs": job.layer.macs,
                    "lint": "; ".join(sorted({f.kind for f in lint_job(job, hw).findings})),
                })
                try:
                    cm = prepare(job, hw, allow_overflow=True)
                except MappingError as exc:
                    row.update(status="refused", lint=row["lint"] + f" (refused: {exc.detail})")
                    rows.append(row)
                    continue
                pe_steps = cm.steps * cm.used_pes
                row["pe_steps"] = pe_steps
                if sim_budget_pe_steps is None or pe_steps <= sim_budget_pe_steps:
                    sim_maestro = simulate_layer(cm, hw, SimOptions(mode="maestro")).cycles
                    sim_realistic = simulate_layer(cm, hw, SimOptions(mode="realistic")).cycles
                    ablated = ablation_budget_pe_steps is None or pe_steps <= ablation_budget_pe_steps
                    ab = ablate(cm, hw, sim_realistic, sim_maestro) if ablated else None
                    steps = ladder_steps(job, cm, hw, sim_realistic, sim_maestro, ab)
                    walk = ladder(SOURCE, maestro_cycles, steps)
                    row.update(status="simulated", sim_maestro_cycles=sim_maestro, sim_realistic_cycles=sim_realistic)
                    row["analytical_maestro_cycles"] = steps.analytical_maestro_cycles
                else:
                    steps = ladder_steps(job, cm, hw, 0, 0, None)
                    walk = Ladder(SOURCE, maestro_cycles)
                    for (rung, _), cycles in zip(MODEL_RUNGS, steps.model_cycles, strict=True):
                        walk.climb(rung, cycles)
                    walk.climb(CASE_ARITHMETIC, steps.analytical_maestro_cycles)
                    row.update(status="over_budget", analytical_maestro_cycles=steps.analytical_maestro_cycles)
                row["gap"] = walk.gap
                row.update({f"part:{rung}": part for rung, part in walk.parts().items()})
                rows.append(row)
                if progress is not None:
                    progress(f"MAESTRO set: {job.layer.name} on {hw_name} ({row['status']}, "
                             f"{time.perf_counter() - start:.1f} s)")
    return rows


def _n(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else ("" if v is None else str(v))


def maestro_section(rows: Sequence[dict[str, Any]], sim_budget_pe_steps: int | None) -> list[str]:
    """The report's Markdown section for the MAESTRO reference set."""
    identical = sum(1 for r in rows if r["model_csv_line_identical"])
    lines = [
        ("The MAESTRO binary's own output for 27 layers on 3 hardware files (`validation/maestro/`, provenance "
        "in its README), held against `accelsim analyze --model maestro` (the model of the binary), our "
        "analytical model (maestro mode) and the simulator (maestro and realistic mode, "
        + ("every layer" if sim_budget_pe_steps is None else f"layers of at most {sim_budget_pe_steps:,} PE-steps")
        + "). The model's CSV line equals MAESTRO's byte for byte on "
        f"**{identical} of {len(rows)}** points."),
        "",
    ]
    header = ("hw", "layer", "MAESTRO", "model", "analytical (maestro)", "sim maestro", "sim realistic", "gap",
              "largest rung", "lint")
    table = []
    for r in rows:
        parts = {rung: r[f"part:{rung}"] for rung in RUNGS if r[f"part:{rung}"]}
        largest = max(parts, key=lambda k: abs(parts[k])) if parts else ""
        table.append((r["hw"], f"`{r['layer']}`" + (" (quirk)" if r["quirk_layer"] else ""), _n(r["maestro_cycles"]),
                      _n(r["model_cycles"]), _n(r.get("analytical_maestro_cycles")),
                      _n(r.get("sim_maestro_cycles")) or r["status"], _n(r.get("sim_realistic_cycles")) or r["status"],
                      _n(r.get("gap")), f"{largest} {parts[largest]:+,}" if largest else "", r["lint"]))
    lines += _md_table(header, table)
    lines += ["", ("**The ladder summed per hardware file** (simulated layers: MAESTRO -> simulator in realistic mode; "
                  "over-budget layers: MAESTRO -> analytical model in maestro mode; parts sum to the gaps):"), ""]
    sums = []
    for hw in dict.fromkeys(r["hw"] for r in rows):
        for status in ("simulated", "over_budget"):
            chosen = [r for r in rows if r["hw"] == hw and r["status"] == status]
            if not chosen:
                continue
            totals = {rung: sum(r[f"part:{rung}"] or 0 for r in chosen) for rung in RUNGS}
            gap = sum(r["gap"] for r in chosen)
            shown = ", ".join(f"{rung} {v:+,}" for rung, v in totals.items() if v)
            sums.append((hw, status, str(len(chosen)), f"{sum(r['maestro_cycles'] for r in chosen):,}",
                         f"{gap:+,}", shown))
    lines += _md_table(("hw", "layers", "n", "MAESTRO cycles", "gap", "parts"), sums)
    quirks = [r for r in rows if r["maestro_macs"] != r["true_macs"]]
    lines += ["", ("**Quirk layers** (MAESTRO's `Num MACs` differs from the layer's; `accelsim lint` reports each "
                  "with this error):"), ""]
    lines += _md_table(("hw", "layer", "MAESTRO MACs", "true MACs", "error"),
                       [(r["hw"], f"`{r['layer']}`", _n(r["maestro_macs"]), _n(r["true_macs"]),
                         f"{r['maestro_macs'] - r['true_macs']:+,} ({100 * (r['maestro_macs'] / r['true_macs'] - 1):+.3f}%)")
                        for r in quirks])
    refused = [r for r in rows if r["status"] == "refused"]
    if refused:
        lines += ["", "Refused by our compiler (MAESTRO analyses them as written): "
                  + "; ".join(f"`{r['layer']}` on {r['hw']}" for r in refused) + "."]
    return lines


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(row) + " |" for row in rows]


__all__ = ["CAUSES", "INTERACTION", "MAESTRO_COLUMNS", "maestro_rows", "maestro_section"]
