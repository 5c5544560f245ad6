"""The validation suite: the papers' scenarios run by the simulator and the analytical model,
the papers' published numbers set against ours, and SCALE-Sim parity, written as a report.

``accelsim validate [--out validation/] [--quick] [--force]`` (or :func:`run_validation`)
writes ``REPORT.md``, ``results.csv`` and the PNG plots into the output directory.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from accelsim.errors import InputError, InputWarning
from accelsim.validation.attribution import ATTRIBUTION_COLUMNS, attribute_gaps
from accelsim.validation.eyeriss import eyeriss_csv_rows, eyeriss_rows, eyeriss_section
from accelsim.validation.marvel_table3 import burst_rows, bursts_section, table3_rows, table3_section
from accelsim.validation.maestro_set import MAESTRO_COLUMNS, maestro_rows, maestro_section
from accelsim.validation.paper_checks import run_paper_checks, style_forms
from accelsim.validation.report import PLOTS, ReportInputs, write_csv, write_report
from accelsim.validation.runner import RunPlan, analytical_model, run_scenarios
from accelsim.validation.search_sets import (BASELINES_PLOT, COSEARCH_PLOTS, RESULTS_FILE, baselines_section,
                                             cosearch_sections, reuse_section)
from accelsim.validation.scenarios import (
    QUICK_BUDGET_PE_STEPS,
    QUICK_PAPER_CHECK_BUDGET_PE_STEPS,
    SCENARIO_SETS,
    Scenario,
    ScenarioSet,
    systolic_set,
)
from accelsim.validation.stonne_set import stonne_csv_rows, stonne_rows, stonne_section
from accelsim.validation.timeloop_set import FULL_BUDGET_PE_STEPS, timeloop_csv_rows, timeloop_rows, timeloop_section

REPORT_FILES = ("REPORT.md", "results.csv", "attribution.csv", "maestro.csv", "eyeriss.csv", "timeloop.csv", "stonne.csv",
                *PLOTS, BASELINES_PLOT)


@dataclass(frozen=True)
class ValidationPaths:
    """Where the suite reads its external inputs (relative to the working directory, i.e. the
    repository root) and writes its outputs."""

    out_dir: Path
    scalesim_dir: Path = Path("validation/scalesim")
    traces_dir: Path = Path("validation/traces")
    maestro_dir: Path = Path("validation/maestro")
    eyeriss_dir: Path = Path("validation/eyeriss")
    timeloop_dir: Path = Path("validation/timeloop")
    stonne_dir: Path = Path("validation/stonne")
    marvel_dir: Path = Path("validation/marvel")
    cosearch_dir: Path = Path("validation/cosearch")
    baselines_dir: Path = Path("validation/baselines")
    reuse_dir: Path = Path("validation/reuse")


def _parity(scalesim_dir: Path, quick: bool):
    """(DataFrame or None, note) of the SCALE-Sim parity run on ``scalesim_dir``."""
    if quick:
        return None, "skipped with --quick (it runs the scalesim package, about half a minute)."
    if importlib.util.find_spec("scalesim") is None:
        return None, "the `scalesim` package is not installed (`pip install 'accelsim[scalesim]'`)."
    try:
        from accelsim.scalesim.parity import run_parity_set
    except ImportError:
        return None, "`accelsim.scalesim.parity` is not available."
    if not scalesim_dir.is_dir():
        return None, f"no SCALE-Sim scenario directory {scalesim_dir.as_posix()} (run from the repository root)."
    with tempfile.TemporaryDirectory() as work:
        frame = run_parity_set(scalesim_dir, work)
    shown = frame[["config", "topology", "layer", "dataflow", "M", "N", "K", "folds", "scalesim_compute_cycles",
                   "ours_compute_cycles", "compute_rel_error", "scalesim_stall_cycles", "ours_run_stall_cycles",
                   "scalesim_total_cycles", "ours_cycles", "total_rel_error"]]
    note = (f"`accelsim.scalesim.parity.run_parity_set({scalesim_dir.as_posix()!r})`: every `.cfg` on every "
            "topology, SCALE-Sim (the `scalesim` package) against our systolic model, per layer. Compute cycles are "
            "SCALE-Sim's total minus its stall cycles; relative errors are (ours - SCALE-Sim) / SCALE-Sim.")
    return shown, note


Sections = list[tuple[str, list[str]]]  # report sections as (title, lines)


def _eyeriss(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    rows = eyeriss_rows(directory, realistic=not quick)
    return [("Eyeriss chip (AlexNet CONV1-5, batch 4)", eyeriss_section(rows))], eyeriss_csv_rows(rows)


def _timeloop(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    rows = timeloop_rows(directory, QUICK_BUDGET_PE_STEPS if quick else FULL_BUDGET_PE_STEPS, say)
    return [("Timeloop reference set", timeloop_section(rows))], timeloop_csv_rows(rows)


def _stonne(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    rows = stonne_rows(directory, say)
    return [("STONNE reference set", stonne_section(rows))], stonne_csv_rows(rows)


def _marvel(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    return [("MARVEL Table 3: off-chip mappings by the distinct-block model", table3_section(table3_rows(directory))),
            ("MARVEL's DRAM layouts: bursts against channel-last", bursts_section(burst_rows()))], []


def _cosearch(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    return [("DiGamma's co-search against its baselines", cosearch_sections(directory, out))], []


def _baselines(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    return [("GAMMA against the Nevergrad baselines", baselines_section(directory / RESULTS_FILE, out))], []


def _reuse(directory: Path, quick: bool, say: Callable[[str], None], out: Path) -> tuple[Sections, list[dict]]:
    return [("Unique-reuse loop-order pruning: orders kept and best-cost loss", reuse_section(directory / RESULTS_FILE))], []


@dataclass(frozen=True)
class _ReferenceSet:
    """One reference set of the report: its name (progress line and missing note), its input
    directory, the file whose presence says the set is there, and what builds its sections and
    CSV rows from that directory (given ``--quick``, the progress callback and the output
    directory, where it may write plots)."""

    name: str
    directory: Callable[[ValidationPaths], Path]
    marker: str
    build: Callable[[Path, bool, Callable[[str], None], Path], tuple[Sections, list[dict]]]


_REFERENCE_SETS = (
    _ReferenceSet("Eyeriss chip", lambda p: p.eyeriss_dir, "alexnet_measured.csv", _eyeriss),
    _ReferenceSet("Timeloop reference set", lambda p: p.timeloop_dir, "references.csv", _timeloop),
    _ReferenceSet("STONNE reference set", lambda p: p.stonne_dir, "cases.csv", _stonne),
    _ReferenceSet("MARVEL Table 3", lambda p: p.marvel_dir, "table3.csv", _marvel),
    # precomputed search results (accelsim.validation.search_sets): read, never run
    _ReferenceSet("co-search comparison", lambda p: p.cosearch_dir, RESULTS_FILE, _cosearch),
    _ReferenceSet("Nevergrad baselines", lambda p: p.baselines_dir, RESULTS_FILE, _baselines),
    _ReferenceSet("unique-reuse pruning loss", lambda p: p.reuse_dir, RESULTS_FILE, _reuse),
)


def _reference_sections(paths: ValidationPaths, quick: bool, missing: list[str], say: Callable[[str], None]):
    """(report sections as (title, lines), eyeriss.csv rows, timeloop.csv rows, stonne.csv rows) of
    the Eyeriss chip, the Timeloop set, the STONNE set, MARVEL's Table 3 and DRAM layouts and the
    precomputed search comparisons (co-search, Nevergrad baselines, pruning loss);
    ``--quick`` skips the chip's realistic run and simulates only the Timeloop triples within the
    quick budget (a full run: up to 10^8 steps x PEs, 57 s measured on the 2-core machine); the
    STONNE set always runs whole (about 15 s), MARVEL's sections too (about 10 s); the search
    comparisons only read their results files."""
    sections: Sections = []
    rows: dict[str, list[dict]] = {}
    for reference in _REFERENCE_SETS:
        say(reference.name)
        directory = reference.directory(paths)
        if (directory / reference.marker).is_file():
            built, rows[reference.name] = reference.build(directory, quick, say, paths.out_dir)
            sections += built
        else:
            missing.append(f"{reference.name}: no {directory.as_posix()}/{reference.marker} (run from the repository "
                           "root)")
    return sections, *(rows.get(name, []) for name in ("Eyeriss chip", "Timeloop reference set", "STONNE reference set"))


def run_validation(paths: ValidationPaths, quick: bool = False, force: bool = False,
                   progress: Callable[[str], None] | None = None,
                   sets: Sequence[ScenarioSet] | None = None) -> list[Path]:
    """Run the suite and write the report files into ``paths.out_dir``; returns their paths.

    ``sets``: the scenario sets to run (default: the papers' sets and the systolic set).
    Existing report files are refused (InputError) unless ``force``.
    """
    out = paths.out_dir
    if not out.is_dir():
        raise InputError(f"output directory {out.as_posix()} does not exist")
    existing = [name for name in REPORT_FILES if (out / name).exists()]
    if existing and not force:
        raise InputError(f"{out.as_posix()}: {', '.join(existing)} already exist; pass --force to overwrite them")
    say = progress or (lambda message: None)
    for stale in [out / BASELINES_PLOT, *out.glob(COSEARCH_PLOTS)]:  # written again only from results files
        stale.unlink(missing_ok=True)
    budget = QUICK_BUDGET_PE_STEPS if quick else None
    plan = RunPlan(budget, analytical_model())
    missing = []
    if sets is None:
        sets = list(SCENARIO_SETS)
        systolic = systolic_set(paths.scalesim_dir)
        if systolic.scenarios:
            sets.append(systolic)
        else:
            missing.append(f"systolic set: no SCALE-Sim scenarios in {paths.scalesim_dir.as_posix()} "
                           "(run from the repository root)")

    def done(sc: Scenario) -> None:
        say(f"ran {sc.set_name}: {sc.network} on {sc.hw} ({sc.style})")

    rows = run_scenarios((sc for s in sets for sc in s.scenarios), plan, done)
    say("gap attribution")
    ablation_budget = 0 if quick else None  # the quick run attributes no gap
    attribution = attribute_gaps((sc for s in sets for sc in s.scenarios), rows, ablation_budget)
    say("paper checks")
    check_budget = QUICK_PAPER_CHECK_BUDGET_PE_STEPS if quick else None
    checks = run_paper_checks(RunPlan(check_budget, plan.analytical), rows)
    say("SCALE-Sim parity")
    parity, parity_note = _parity(paths.scalesim_dir, quick)
    if parity is None:
        missing.append(f"SCALE-Sim parity: {parity_note}")
    say("MAESTRO reference set")
    maestro_rows_: list = []
    maestro_lines: list[str] = []
    if paths.maestro_dir.is_dir():
        maestro_rows_ = maestro_rows(paths.maestro_dir, budget, ablation_budget, progress=say)
        maestro_lines = maestro_section(maestro_rows_, budget)
    else:
        missing.append(f"MAESTRO reference set: no {paths.maestro_dir.as_posix()} (run from the repository root)")
    extra, eyeriss_csv, timeloop_csv, stonne_csv = _reference_sections(paths, quick, missing, say)
    traces = sorted(paths.traces_dir.glob("*.png")) if paths.traces_dir.is_dir() else []
    if not traces:
        missing.append(f"traces: no PNGs in {paths.traces_dir.as_posix()}")
    command = "accelsim validate" + (" --quick" if quick else "")
    inputs = ReportInputs(command, budget, check_budget, sets, checks, style_forms(), attribution,
                          ablation_budget, parity, parity_note,
                          [Path(os.path.relpath(t, out)).as_posix() for t in traces], missing, maestro_lines, extra)

    import pandas as pd

    from accelsim.validation import plots

    frame = pd.DataFrame(rows)
    say("plots")
    plots.cycles_scatter(frame, out / "cycles_scatter.png")
    plots.error_by_type_and_style(frame, out / "error_by_type_and_style.png")
    plots.stall_breakdown(frame, out / "stall_breakdown.png")
    write_csv(rows, out / "results.csv")
    write_csv(attribution, out / "attribution.csv", ATTRIBUTION_COLUMNS)
    write_csv(maestro_rows_, out / "maestro.csv", MAESTRO_COLUMNS)
    write_csv(eyeriss_csv, out / "eyeriss.csv", list(eyeriss_csv[0]) if eyeriss_csv else ["layer"])
    write_csv(timeloop_csv, out / "timeloop.csv", list(timeloop_csv[0]) if timeloop_csv else ["triple_id"])
    write_csv(stonne_csv, out / "stonne.csv", list(stonne_csv[0]) if stonne_csv else ["case_id"])
    write_report(rows, inputs, out / "REPORT.md")
    for what in missing:  # also in the report; said here so that a run outside the repository is not silent
        warnings.warn(f"validate left out the {what}", InputWarning, stacklevel=2)
    return [out / name for name in REPORT_FILES if (out / name).exists()] + sorted(out.glob(COSEARCH_PLOTS))


def summary_line(out_dir: Path) -> str:
    """One line from a finished run's ``results.csv``: scenario layers per set and status ("" when
    there is none)."""
    import csv
    from collections import Counter

    try:
        with open(out_dir / "results.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return ""
    sets = Counter(row["set"] for row in rows)
    statuses = Counter(row["status"] for row in rows)
    return (f"validated {len(rows)} scenario layer(s) in {len(sets)} set(s) ("
            + ", ".join(f"{name} {count}" for name, count in sets.items()) + "): "
            + ", ".join(f"{count} {status}" for status, count in statuses.most_common())
            + f"; see {(out_dir / 'REPORT.md').as_posix()}")
