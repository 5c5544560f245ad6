"""Write the validation report: ``REPORT.md`` (Markdown tables and links to the PNG plots) and
``results.csv`` (one row per scenario x layer x model/mode, the columns of
:data:`accelsim.validation.runner.COLUMNS`).

Every number in the report is read from the rows and checks of the run that writes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TypeGuard

from accelsim.compare.metrics import CYCLE_TOLERANCE
from accelsim.validation.paper_checks import PaperCheck, StyleForm
from accelsim.validation.runner import ACCESS_COLUMNS, COLUMNS, RUNS
from accelsim.validation.scenarios import ScenarioSet

PLOTS = {
    "cycles_scatter.png": "Predicted against simulated cycles, per layer",
    "error_by_type_and_style.png": "Cycle error by layer type and dataflow style",
    "stall_breakdown.png": "Stall breakdown per scenario (simulator, realistic mode)",
}
RUN_LABELS = tuple(f"{model} {mode}" for model, mode in RUNS)


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report shows besides the rows."""

    command: str
    budget_pe_steps: int | None  # None: every layer simulated
    paper_check_budget_pe_steps: int | None
    sets: Sequence[ScenarioSet]
    checks: Sequence[PaperCheck]
    style_forms: Sequence[StyleForm]
    attribution: Sequence[dict[str, Any]]  # accelsim.validation.attribution rows
    attribution_budget_pe_steps: int | None
    parity: Any  # pandas DataFrame of the SCALE-Sim parity run, or None
    parity_note: str
    trace_pngs: Sequence[str]  # paths relative to the report
    missing: Sequence[str]  # parts of the suite that could not run, with why
    maestro_section: Sequence[str] = ()  # Markdown lines of the MAESTRO reference set (validation.maestro_set)
    # (title, Markdown lines) of further reference sections (validation.eyeriss, validation.timeloop_set)
    reference_sections: Sequence[tuple[str, Sequence[str]]] = ()


def _missing_value(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _int(v: Any) -> str:
    return "—" if _missing_value(v) else f"{int(v):,}"


def _num(v: Any) -> str:
    """A measured value: integers with separators, fractions to 3 significant digits, large
    floats in E notation like the papers."""
    if _missing_value(v):
        return "—"
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v):,}" if abs(v) < 1e6 else f"{v:.3E} ({int(v):,})"
    return f"{v:.3g}"


def _err(pred: Any, ref: Any) -> str:
    if _missing_value(pred) or _missing_value(ref) or ref == 0:
        return "—"
    return f"{100 * (pred - ref) / ref:+.1f}%"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def _by_layer(rows: Sequence[dict[str, Any]]) -> dict[tuple, dict[str, dict[str, Any]]]:
    """(set, network, hw, style, layer) -> run label -> row, in row order."""
    out: dict[tuple, dict[str, dict[str, Any]]] = {}
    for r in rows:
        key = (r["set"], r["network"], r["hw"], r["style"], r["layer"])
        out.setdefault(key, {})[f"{r['model']} {r['mode']}"] = r
    return out


def _counts_agree(a: dict[str, Any], b: dict[str, Any]) -> int:
    """How many of the MAC and access counts two rows give identically."""
    return sum(a[c] == b[c] for c in ("macs", *ACCESS_COLUMNS))


N_COUNTS = 1 + len(ACCESS_COLUMNS)


def _ok(run: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    return run is not None and run["status"] == "ok"


def _summary(sets: Sequence[ScenarioSet], layers: dict[tuple, dict[str, dict[str, Any]]]) -> list[str]:
    header = ("set", "scenarios", "layers", "simulated (realistic / maestro)", "analytical",
              f"analytical within {CYCLE_TOLERANCE:.0%} of simulator (maestro mode)",
              "analytical with all counts exact", "median analytical error vs realistic",
              "estimates below a lower bound")
    rows = []
    for s in sets:
        mine = [runs for key, runs in layers.items() if key[0] == s.name]
        real = [r for r in mine if _ok(r.get("simulator realistic"))]
        smae = [r for r in mine if _ok(r.get("simulator maestro"))]
        ana = [r for r in mine if _ok(r.get("analytical maestro"))]
        pair = [r for r in mine if _ok(r.get("simulator maestro")) and _ok(r.get("analytical maestro"))]
        within = sum(abs(r["analytical maestro"]["cycles"] - r["simulator maestro"]["cycles"])
                     <= CYCLE_TOLERANCE * r["simulator maestro"]["cycles"] for r in pair)
        exact = sum(_counts_agree(r["analytical maestro"], r["simulator maestro"]) == N_COUNTS for r in pair)
        errs = sorted(abs(r["analytical maestro"]["cycles"] - r["simulator realistic"]["cycles"])
                      / r["simulator realistic"]["cycles"] for r in mine
                      if _ok(r.get("analytical maestro")) and _ok(r.get("simulator realistic")))
        median = f"{100 * errs[len(errs) // 2]:.1f}%" if errs else "—"
        below = sum(any(_ok(run) and run["below_bound"] for run in r.values()) for r in mine)
        rows.append((s.name, str(len(s.scenarios)), str(len(mine)), f"{len(real)} / {len(smae)}", str(len(ana)),
                     f"{within} of {len(pair)}", f"{exact} of {len(pair)}", median, str(below)))
    return markdown_table(header, rows)


def _scenario_tables(s: ScenarioSet, layers: dict[tuple, dict[str, dict[str, Any]]]) -> list[str]:
    out: list[str] = []
    for sc in s.scenarios:
        keys = [k for k in layers if k[:4] == (s.name, sc.network, sc.hw, sc.style)]
        out += ["", f"#### {sc.network} on `{sc.hw}`, style `{sc.style}`", ""]
        rows = []
        for key in keys:
            runs = layers[key]
            real, smae, ana = (runs.get(label) for label in RUN_LABELS)
            first = next(iter(runs.values()))
            notes = []
            for label, run in runs.items():
                if run["status"] == "unmappable":
                    notes.append(f"unmappable: {run['note']}")
                    break
                if _ok(run) and run["below_bound"]:
                    notes.append(f"**{label} below the lower bound**")
            if real is not None and real["status"] == "over_budget":
                notes.append(f"analytical only ({real['note']})")
            if _ok(smae) and _ok(ana):
                agree = _counts_agree(ana, smae)
                if agree < N_COUNTS:
                    notes.append(f"counts: {agree} of {N_COUNTS} exact")
            bound = max(first["compute_bound_cycles"], first["dram_bound_cycles"])
            rows.append((
                key[4], first["op"], _int(first["steps"]), _int(bound),
                _int(real["cycles"]) if _ok(real) else "—", _int(smae["cycles"]) if _ok(smae) else "—",
                _int(ana["cycles"]) if _ok(ana) else "—",
                _err(ana["cycles"], smae["cycles"]) if _ok(ana) and _ok(smae) else "—",
                _err(ana["cycles"], real["cycles"]) if _ok(ana) and _ok(real) else "—",
                f"{real['pe_utilization']:.3f}" if _ok(real) else "—",
                "; ".join(dict.fromkeys(notes))))
        out += markdown_table(("layer", "type", "steps", "lower bound", "sim realistic", "sim maestro", "analytical",
                       "analytical vs sim maestro", "analytical vs sim realistic", "util (realistic)", "notes"),
                      rows)
    return out


def _bound_flags(rows: Sequence[dict[str, Any]]) -> list[str]:
    flagged = [r for r in rows if r["status"] == "ok" and r["below_bound"]]
    if not flagged:
        return ["No estimate of any model falls below max(compute bound, off-chip bound) in this run."]
    table = [(r["set"], r["hw"], r["style"], r["layer"], f"{r['model']} {r['mode']}", _int(r["cycles"]),
              _int(r["compute_bound_cycles"]), _int(r["dram_bound_cycles"])) for r in flagged]
    return markdown_table(("set", "hw", "style", "layer", "model", "cycles", "compute bound", "off-chip bound"), table)


def _attribution(inputs: ReportInputs) -> list[str]:
    """Per set, the realistic - analytical cycle gap summed over the attributed layers, split
    by cause (accelsim.compare.attribution), as shares of the gap."""
    from accelsim.compare.attribution import PARTS

    out = ["The gap between the realistic simulation and the analytical model, split by named cause "
           "(`accelsim.compare.attribution`: each cause made ideal in turn), summed over the layers of each set "
           + ("" if inputs.attribution_budget_pe_steps is None else
              f"whose steps x PEs is at most {inputs.attribution_budget_pe_steps:,} ")
           + "(the ablation runs one extra "
           "simulation per cause; the systolic set is not ablated). Shares of the summed gap; the parts add up to it.",
           ""]
    rows = []
    for s in inputs.sets:
        mine = [a for a in inputs.attribution if a["set"] == s.name]
        gap = sum(a["gap_cycles"] for a in mine)
        if not mine:
            continue
        rows.append((s.name, str(len(mine)), _int(gap),
                     *((f"{100 * sum(a[p] for a in mine) / gap:.1f}%" if gap else "—") for p in PARTS)))
    if not rows:
        return out + ["**Missing:** no layer was attributed in this run."]
    return out + markdown_table(("set", "layers", "gap (cycles)", *PARTS), rows)


def _paper_checks(checks: Sequence[PaperCheck]) -> list[str]:
    out: list[str] = []
    for c in checks:
        out += ["", f"### {c.title}", "", f"*Source:* {c.source}. *Setup:* {c.setup}.", ""]
        if c.quantities:
            out += markdown_table(("quantity", "paper", *RUN_LABELS),
                          [(q.name, q.paper, *(_num(q.ours.get(label)) for label in RUN_LABELS))
                           for q in c.quantities])
        if c.table:
            out += markdown_table(c.table[0], c.table[1:])
        if c.notes:
            out += ["", "Not run: " + "; ".join(c.notes) + "."]
        out += ["", f"*Why they differ:* {c.explanation}"]
        if c.mapping_text:
            out += ["", "<details><summary>mapping (MAESTRO format)</summary>", "", "```", c.mapping_text.rstrip(),
                    "```", "", "</details>"]
    return out


def _frame_table(df) -> list[str]:
    header = [str(c) for c in df.columns]
    rows = [[_num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v) for v in row]
            for row in df.itertuples(index=False)]
    return markdown_table(header, rows)


def write_csv(rows: Sequence[dict[str, Any]], path: Path, columns: Sequence[str] = COLUMNS) -> None:
    """A CSV of the rows (``results.csv``: :data:`COLUMNS`), floats as written by repr, None empty."""
    import csv

    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({c: ("" if r[c] is None else r[c]) for c in columns})


def write_report(rows: Sequence[dict[str, Any]], inputs: ReportInputs, path: Path) -> None:
    """``REPORT.md`` from the rows and the report inputs (plots are linked by file name)."""
    layers = _by_layer(rows)
    lines = [
        "# Validation report",
        "",
        f"Generated by `{inputs.command}`; every number below comes from that run "
        "(the same numbers are in [results.csv](results.csv), one row per scenario x layer x model/mode, and "
        "[attribution.csv](attribution.csv), one row per attributed layer).",
        "",
        "Models: the **simulator** in `realistic` mode (the reference) and in `maestro` mode "
        "(MAESTRO's assumptions), and the **analytical** model (`accelsim.analytical`, maestro mode). "
        + ("Every layer is simulated (the simulator's cost follows a mapping's distinct work, not its steps x PEs). "
           if inputs.budget_pe_steps is None else
           f"This quick run simulates a layer only when its mapping's steps x PEs is at most "
           f"**{inputs.budget_pe_steps:,}**; larger layers are evaluated by the analytical model only and say so in "
           f"their row (the paper checks: at most {inputs.paper_check_budget_pe_steps:,}). ")
        + "Lower bounds: compute = MACs / (PEs x MACs per PE "
        "per cycle), off-chip = compulsory DRAM bytes (every tensor element once) / DRAM bandwidth.",
        "",
    ]
    if inputs.missing:
        lines += ["**Missing from this run:**", ""] + [f"- {m}" for m in inputs.missing] + [""]
    lines += ["## Summary", ""] + _summary(inputs.sets, layers)
    lines += ["", "## Plots", ""]
    for name, title in PLOTS.items():
        lines += [f"### {title}", "", f"![{title}]({name})", ""]
    lines += ["## Where the gap comes from", ""] + _attribution(inputs)
    lines += ["", "## Estimates below a physical lower bound", ""] + _bound_flags(rows)
    lines += ["", "## Paper checks"] + _paper_checks(inputs.checks)
    lines += ["", "### FLASH Table 2: the GEMM form of each style", "",
              "Our styles' mappings of GEMM VI on `flash_edge` as the run produced them, next to FLASH Table 2.", ""]
    lines += markdown_table(("style", "FLASH Table 2", "FLASH's form", "ours (GEMM VI on flash_edge)", "comparison"),
                    [(f"`{f.style}`", f.flash_name, f.flash_form, f"`{f.ours}`", f.verdict)
                     for f in inputs.style_forms])
    lines += ["", "## SCALE-Sim parity (systolic set)", ""]
    if inputs.parity is not None:
        lines += [inputs.parity_note, ""] + _frame_table(inputs.parity)
    else:
        lines += [f"**Missing:** {inputs.parity_note}"]
    if inputs.maestro_section:
        lines += ["", "## MAESTRO reference set", "", *inputs.maestro_section,
                  "", "(one row per hardware file and layer in [maestro.csv](maestro.csv))"]
    for title, section in inputs.reference_sections:
        lines += ["", f"## {title}", "", *section]
    lines += ["", "## Execution traces", ""]
    if inputs.trace_pngs:
        lines += [f"- [{Path(p).name}]({p})" for p in inputs.trace_pngs]
    else:
        lines += ["**Missing:** no trace PNGs in `validation/traces/` yet."]
    lines += ["", "## Scenario results", ""]
    for s in inputs.sets:
        lines += ["", f"### {s.title}", "", f"*Source:* {s.source}."] + (["", s.notes] if s.notes else [])
        lines += _scenario_tables(s, layers)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
