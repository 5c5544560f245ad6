"""The search comparisons of issue 20 in ``accelsim validate``, read from precomputed results
files (:mod:`accelsim.measurements`; the runs take minutes to hours, so validate never runs them):

* ``validation/cosearch/*.csv`` (``python -m accelsim.search.cosearch_report ... --out``; one
  file per configuration run, ``results.csv`` the one that must be there): the co-search against grid-over-hardware with a fixed style and GAMMA on three fixed designs of
  the budget's area, with the acceptance verdict computed from the file's numbers
  (:func:`cosearch_verdicts`) and a bar plot;
* ``validation/baselines/results.csv`` (``python -m accelsim.search.baselines_report ... --out``):
  GAMMA and the Nevergrad optimizers on one layer, a table and a bar plot;
* ``validation/reuse/results.csv`` (``python -m accelsim.search.reuse_report ... --out``): the
  loop orders unique-reuse pruning keeps and its best-cost loss against full enumeration, per
  layer.

Each section names the command, seed, budgets, commit and dates its file records, says when a
run is partial (schemes or layers missing) and when its budgets are smaller than those of
README's whole-network co-search measurement (:data:`COSEARCH_FULL_BUDGETS`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from accelsim.errors import InputError
from accelsim.measurements import read_measurements
from accelsim.validation.plots import cycles_bars
from accelsim.validation.report import markdown_table
from accelsim.workload.tables import load_network

RESULTS_FILE = "results.csv"
COSEARCH_PLOTS = "cosearch_*.png"  # one per results file: cosearch_<file stem>.png
BASELINES_PLOT = "baselines.png"

# the columns each file must have after the provenance (the reports' COLUMNS; repeated here because
# validation/ does not import search/, its peer; tests/test_validation_search.py checks they agree)
COSEARCH_COLUMNS = ("network", "hw", "area_budget_mm2", "scheme", "pes", "l1_size_bytes", "l2_size_bytes", "area_mm2",
                    "cycles", "scored", "model_runs", "seconds")
BASELINES_COLUMNS = ("network", "hw", "layer", "mapper", "best_cycles", "scored", "legal", "stopped", "seconds")
REUSE_COLUMNS = ("network", "hw", "parallel", "layer", "orders_enumerated", "orders_kept", "proposed_full",
                 "proposed_kept", "scored_ok", "best_full", "best_kept", "loss", "seconds")

CO_SEARCH = "co-search"
GRID = "grid + nvdla_like"
FIXED_DESIGNS = ("compute-heavy", "medium", "buffer-heavy")
# the report's lower-bound rows (cosearch_report.LOWER_BOUND_*; tests/test_validation_search.py checks they agree)
LOWER_BOUNDS = ("lower bound, co-search's PEs", "lower bound, most PEs in budget")
GRID_RATIO_MAX = 0.5  # issue 20: co-search latency at most 0.5x the grid's (DiGamma's Fig. 6.7: 0.31x)
# README's whole-network measurement (--budget 2000 --gamma-budget 300); a file with less is a reduced run
COSEARCH_FULL_BUDGETS = {"designs": 2000, "gamma_mappings_per_shape": 300}


@dataclass(frozen=True)
class Verdict:
    """One acceptance criterion: what it asks, ``met`` / ``not met`` / ``not measured``, and the
    numbers it was decided on."""

    criterion: str
    status: str
    detail: str


def _cycles(row: dict[str, str] | None) -> float | None:
    """A row's cycles; None without the row; +inf for a scheme that mapped nothing (empty cell)."""
    if row is None:
        return None
    return float(row["cycles"]) if row["cycles"] else math.inf


def cosearch_verdicts(rows: Sequence[dict[str, str]]) -> list[Verdict]:
    """Issue 20's co-search acceptance from a results file's rows: the co-search's best design
    within the area budget, its cycles at most :data:`GRID_RATIO_MAX` x the grid's with
    ``nvdla_like``, and at most GAMMA's on each fixed design. A criterion whose scheme is not in
    the rows (a partial run) is ``not measured``; a baseline that mapped nothing counts as
    infinitely slow."""
    by = {r["scheme"]: r for r in rows}
    co_row = by.get(CO_SEARCH)
    co = _cycles(co_row)

    def verdict(criterion: str, ok: bool | None, detail: str) -> Verdict:
        return Verdict(criterion, "not measured" if ok is None else "met" if ok else "not met", detail)

    out = []
    if co_row is None:
        out.append(verdict("best design within the area budget", None, "no co-search row"))
    else:
        area, budget = float(co_row["area_mm2"]), float(co_row["area_budget_mm2"])
        out.append(verdict("best design within the area budget", area <= budget, f"{area:.4f} of {budget} mm^2"))
    grid = _cycles(by.get(GRID))
    if co is None or grid is None:
        out.append(verdict(f"co-search <= {GRID_RATIO_MAX}x {GRID}", None,
                           "no co-search row" if co is None else f"no {GRID} row"))
    else:
        out.append(verdict(f"co-search <= {GRID_RATIO_MAX}x {GRID}", co <= GRID_RATIO_MAX * grid,
                           f"{co / grid:.3f}x"))
    for design in FIXED_DESIGNS:
        name = f"GAMMA on {design}"
        gamma = _cycles(by.get(name))
        if co is None or gamma is None:
            out.append(verdict(f"co-search <= {name}", None, "no co-search row" if co is None else f"no {name} row"))
        else:
            out.append(verdict(f"co-search <= {name}", co <= gamma, f"{co / gamma:.3f}x"))
    return out


def bound_lines(rows: Sequence[dict[str, str]]) -> list[str]:
    """What the physical lower bound rows say about the grid target: per bound row (of
    :data:`LOWER_BOUNDS` present), bound / grid, co-search / bound and how close to the bound
    the co-search must come for :data:`GRID_RATIO_MAX` x the grid (empty without the rows)."""
    by = {r["scheme"]: r for r in rows}
    co, grid = _cycles(by.get(CO_SEARCH)), _cycles(by.get(GRID))
    lines = []
    for name in LOWER_BOUNDS:
        bound = _cycles(by.get(name))
        if bound is None or grid is None or co is None or not bound:
            continue
        need = GRID_RATIO_MAX * grid / bound
        reach = (f"{GRID_RATIO_MAX}x the grid asks the co-search to come within {100 * (need - 1):.1f}% of it"
                 if need >= 1 else f"{GRID_RATIO_MAX}x the grid is below it: no mapping of this PE count reaches it")
        lines.append(f"- {name} ({by[name]['pes']} PEs): {bound:,.0f} cycles; bound / grid = {bound / grid:.3f}, "
                     f"co-search / bound = {co / bound:.3f}; {reach}")
    if not lines:
        return []
    return ["", "Physical lower bound: the sum over the layers (each counted as often as it occurs) of "
            "`accelsim.bounds.lower_bounds(layer, hw).cycles`, the larger of the compute bound (MACs / PEs) and "
            "the compulsory off-chip bound (every element of every tensor across the DRAM interface once, at the "
            "hardware's DRAM bandwidth), for the co-search's PE count and for the most PEs a value of the PE gene "
            "allows within the budget (with the smallest L1 and L2 values); no mapping of that PE count is faster:",
            "", *lines]


def _provenance_lines(path: Path, rows: Sequence[dict[str, str]]) -> list[str]:
    """Where the numbers come from: the file, its command, seed, budgets, commits and dates; an
    InputError when the rows are of more than one command."""
    commands = sorted({r["command"] for r in rows})
    if len(commands) != 1:
        raise InputError(f"results file: expected the rows of one command, found {len(commands)}",
                         source=os.fspath(path))
    commits = ", ".join(sorted({r["git_commit"] for r in rows}))
    dates = sorted(r["date_utc"] for r in rows)
    return [f"Read from `{path.as_posix()}` ({len(rows)} row(s)); `accelsim validate` does not run it. Written by",
            "", f"    {commands[0]}", "",
            f"seed {rows[0]['seed']}, budgets `{rows[0]['budgets']}`, commit {commits}, rows written {dates[0]} to "
            f"{dates[-1]} (UTC)."]


def _budgets(row: dict[str, str]) -> dict[str, float]:
    return {k: float(v) for k, v in (pair.split("=", 1) for pair in row["budgets"].split(";") if pair)}


def _num(cell: str, digits: int = 0) -> str:
    return "—" if cell == "" else f"{float(cell):,.{digits}f}"


def cosearch_sections(directory: Path, out_dir: Path) -> list[str]:
    """Markdown lines of every co-search results file in ``directory`` (``*.csv``, by name; each
    one run of the report, e.g. a full and a reduced configuration), a subsection each, and their
    plots written into ``out_dir`` (``cosearch_<file stem>.png``)."""
    lines: list[str] = []
    for path in sorted(directory.glob("*.csv")):
        lines += [f"### `{path.name}`", "", *cosearch_section(path, out_dir / f"cosearch_{path.stem}.png"), ""]
    return lines[:-1]


def cosearch_section(path: Path, plot: Path) -> list[str]:
    """Markdown lines of the co-search comparison from ``path``, and its plot written to ``plot``
    (linked by file name: the report lies beside it)."""
    rows = read_measurements(path, COSEARCH_COLUMNS, "co-search results file")
    if not rows:
        return [f"**Missing:** `{path.as_posix()}` has no rows yet."]
    lines = _provenance_lines(path, rows)
    first = rows[0]
    budgets = _budgets(first)
    if any(budgets.get(k, 0) < v for k, v in COSEARCH_FULL_BUDGETS.items()):
        lines += ["", f"**A reduced configuration:** {budgets.get('designs', 0):,.0f} co-search designs and "
                  f"{budgets.get('gamma_mappings_per_shape', 0):,.0f} GAMMA mappings per layer shape, against the "
                  f"{COSEARCH_FULL_BUDGETS['designs']:,} and {COSEARCH_FULL_BUDGETS['gamma_mappings_per_shape']:,} of "
                  "README's whole-network measurement; these are not that measurement's numbers."]
    schemes = [r["scheme"] for r in rows]
    missing = [s for s in (CO_SEARCH, GRID, *(f"GAMMA on {d}" for d in FIXED_DESIGNS)) if s not in schemes]
    if missing:
        lines += ["", f"**Partial:** the run has not written {', '.join(missing)} yet (the same command resumes it)."]
    lines += ["", f"`{first['network']}` on `{first['hw']}`, area budget {first['area_budget_mm2']} mm^2, analytical "
              "model, realistic mode, latency (summed over the layers). Acceptance (issue 20), decided on these "
              "numbers:", ""]
    lines += [f"- {v.criterion}: **{v.status}** ({v.detail})" for v in cosearch_verdicts(rows)]
    lines += bound_lines(rows)
    co = _cycles(next((r for r in rows if r["scheme"] == CO_SEARCH), None))
    table = []
    for r in rows:
        cycles = _cycles(r)
        ratio = f"{co / cycles:.3f}" if co is not None and cycles not in (None, math.inf) else "—"
        table.append((r["scheme"], r["pes"], _num(r["l1_size_bytes"]), _num(r["l2_size_bytes"]),
                      _num(r["area_mm2"], 4), _num(r["cycles"]), ratio, _num(r["scored"]), _num(r["model_runs"]),
                      _num(r["seconds"])))
    lines += ["", *markdown_table(("scheme", "PEs", "L1 B", "L2 B", "mm^2", "cycles", "co-search / this", "scored",
                                   "model runs", "seconds"), table)]
    cycles_bars([r["scheme"] for r in rows], [None if _cycles(r) == math.inf else _cycles(r) for r in rows],
                f"{first['network']} on {first['hw']}, {first['area_budget_mm2']} mm^2 (dashed: the co-search)",
                plot, reference=co)
    lines += ["", f"![co-search against its baselines, {path.name}]({plot.name})"]
    return lines


def baselines_section(path: Path, out_dir: Path) -> list[str]:
    """Markdown lines of GAMMA against the Nevergrad baselines from ``path``, and its plot
    written into ``out_dir`` (:data:`BASELINES_PLOT`)."""
    rows = read_measurements(path, BASELINES_COLUMNS, "baselines results file")
    if not rows:
        return [f"**Missing:** `{path.as_posix()}` has no rows yet."]
    first = rows[0]
    lines = _provenance_lines(path, rows)
    lines += ["", f"`{first['layer']}` of `{first['network']}` on `{first['hw']}`: each mapper searches the same "
              "genome space with the same budget and seed, no mapper starts from the named styles, every candidate "
              "scored by the analytical model in realistic mode for latency. One layer, one budget, one seed: a "
              "sample, not a ranking.", ""]
    gamma = next((float(r["best_cycles"]) for r in rows if r["mapper"] == "gamma" and r["best_cycles"]), None)
    table = [(r["mapper"], _num(r["best_cycles"]),
              f"{float(r['best_cycles']) / gamma:.3f}" if gamma and r["best_cycles"] else "—",
              r["scored"], r["legal"], r["stopped"], _num(r["seconds"], 1)) for r in rows]
    lines += markdown_table(("mapper", "best cycles", "/ gamma's", "scored", "legal", "stopped", "seconds"), table)
    cycles_bars([r["mapper"] for r in rows], [float(r["best_cycles"]) if r["best_cycles"] else None for r in rows],
                f"{first['layer']} ({first['network']}) on {first['hw']}: best cycles per mapper (dashed: gamma)",
                out_dir / BASELINES_PLOT, reference=gamma)
    lines += ["", f"![GAMMA against the Nevergrad baselines]({BASELINES_PLOT})"]
    return lines


def reuse_section(path: Path) -> list[str]:
    """Markdown lines of the pruning loss from ``path``: per layer, orders met and kept, genomes
    proposed, best costs and the loss; the network's layers the file lacks are named."""
    rows = read_measurements(path, REUSE_COLUMNS, "pruning results file")
    if not rows:
        return [f"**Missing:** `{path.as_posix()}` has no rows yet."]
    first = rows[0]
    lines = _provenance_lines(path, rows)
    losses = [float(r["loss"]) for r in rows if r["loss"]]
    lines += ["", f"`{first['network']}` on `{first['hw']}`, parallel dimensions `{first['parallel']}`: each layer's "
              "space (one level, every tile 1 or whole) searched exhaustively with every loop order and with "
              "unique-reuse pruning, both scored by one evaluator (analytical model, realistic mode, latency). Loss: "
              "best pruned / best full - 1.", "",
              f"- loss 0 (pruning kept an optimal order) on **{sum(x == 0 for x in losses)} of {len(rows)}** "
              f"layers; largest loss {max(losses, default=0):.4g}"]
    measured = {r["layer"] for r in rows}
    absent = [layer.name for layer in load_network(first["network"]).layers if layer.name not in measured]
    if absent:
        lines += [f"- **not measured:** {', '.join(absent)} (the same command resumes the run)"]
    table = [(r["layer"], _num(r["orders_enumerated"]), _num(r["orders_kept"]),
              f"{_num(r['proposed_full'])} / {_num(r['proposed_kept'])}", _num(r["scored_ok"]),
              _num(r["best_full"]), _num(r["best_kept"]), "—" if r["loss"] == "" else f"{float(r['loss']):.4g}",
              _num(r["seconds"])) for r in rows]
    lines += ["", *markdown_table(("layer", "orders met", "kept", "genomes proposed (full / pruned)", "scored ok",
                                   "best full (cycles)", "best pruned", "loss", "seconds"), table)]
    return lines
