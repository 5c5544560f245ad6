"""A Comparison as text (side by side per layer), CSV rows and JSON."""

from __future__ import annotations

from typing import Any

from accelsim.compare.attribution import PARTS
from accelsim.compare.metrics import COUNT_METRICS, CYCLE_TOLERANCE, METRICS, format_error, relative_error
from accelsim.compare.ladder import RUNGS, Ladder
from accelsim.compare.run import Comparison, LayerComparison
from accelsim.text_table import printable, table_lines

AGREEMENT = f"every count exact, cycles within {100 * CYCLE_TOLERANCE:g}%"


def _value(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:.4g}"


def _error(reference: float, v: float) -> str:
    return "=" if v == reference else format_error(relative_error(reference, v))


def _shown(lc: LayerComparison) -> list[str]:
    """Metrics at least one source reports (the simulator reports all)."""
    return [m for m in METRICS if any(m in s for s in lc.sources.values())]


def _signed(v: float) -> str:
    return f"{v:+,.0f}" if float(v).is_integer() else f"{v:+,.1f}"


def format_layer(lc: LayerComparison, sources: list[str], mode: str) -> list[str]:
    """Lines for one layer: a table metric x (simulator, each source, its error), then each
    source's agreement and the one split of its cycle gap: the attribution (in maestro mode all
    of it is model residual), or for a MAESTRO source its ladder, which refines the same
    attribution (so the text never splits one gap twice under the same part names)."""
    rows = [["metric", "simulator"] + [c for s in sources for c in (s, "err")]]
    for metric in _shown(lc):
        ref = lc.simulator[metric]
        row = [metric, _value(ref)]
        for s in sources:
            m = lc.sources[s]
            row += [_value(m[metric]), _error(ref, m[metric])] if metric in m else ["-", ""]
        rows.append(row)
    lines = [f"{printable(lc.layer)} ({lc.op})"] + ["  " + line for line in table_lines(rows)]
    for s, found in lc.exceptions().items():
        verdict = "agrees" if not found else f"{len(found)} exception(s): " + ", ".join(found)
        lines.append(f"  {s}: {verdict}")
    for s, parts in lc.attribution().items():
        if s in lc.ladders:
            continue  # its ladder below splits the same gap, finer (one split per gap)
        gap = sum(parts.values())
        split = ("all model residual (maestro mode)" if mode == "maestro"
                 else ", ".join(f"{p} {_signed(parts[p])}" for p in PARTS))
        lines.append(f"  cycle gap simulator - {s} = {_signed(gap)}: {split}")
    for walk in lc.ladders.values():
        lines += format_ladder(walk, mode)
    return lines


AGAINST_GAP_TOLERANCE = 0.01  # parts against the gap's sign may total this fraction of it


def gap_shares(parts: list[int], gap: int) -> list[float] | None:
    """Each part's share of ``gap`` (a fraction), or None when shares would mislead: a zero gap,
    or parts against the gap's sign totalling more than AGAINST_GAP_TOLERANCE of it (the parts
    then cancel, so shares exceed 100% or go negative; e.g. parts -18,576 and +20,954 of a gap
    of +2,378 would be -781% and +881%). Otherwise the shares lie in [-1%, 101%] and sum to 1."""
    against = sum(abs(p) for p in parts if p * gap < 0)
    if gap == 0 or against > AGAINST_GAP_TOLERANCE * abs(gap):
        return None
    return [p / gap for p in parts]


def format_ladder(walk: Ladder, mode: str) -> list[str]:
    """A MAESTRO source's ladder, the one split of its cycle gap that the text shows: each
    rung's cycles, its part of the gap, and its share when shares are meaningful (gap_shares);
    otherwise a line says why only cycles are shown."""
    lines = [f"  cycle gap simulator - {walk.source} = {_signed(walk.gap)}, rule by rule: "
             f"MAESTRO ladder {walk.source} -> simulator ({mode} mode), {walk.source_cycles:,} -> "
             f"{walk.rungs[-1].cycles:,} cycles (the parts sum to the gap)"]
    parts = [r.part for r in walk.rungs]
    shares = gap_shares(parts, walk.gap)
    rows = [["rung", "cycles", "part"] + (["of gap"] if shares else []),
            [walk.source, f"{walk.source_cycles:,}", ""] + ([""] if shares else [])]
    for i, r in enumerate(walk.rungs):
        share = [f"{100 * shares[i]:.1f}%" if r.part else ""] if shares else []
        rows.append([r.name, f"{r.cycles:,}", _signed(r.part)] + share)
    lines += ["    " + line for line in table_lines(rows)]
    if shares is None and any(parts):
        up = sum(p for p in parts if p > 0)
        down = sum(p for p in parts if p < 0)
        lines.append(f"    no shares of the gap: parts of both signs ({_signed(up)} and {_signed(down)}) "
                     f"cancel to {_signed(walk.gap)}, so shares would exceed 100% or be negative")
    return lines


def format_overview(comp: Comparison) -> list[str]:
    """One line per layer: simulator cycles; per source its cycles, their error, how many of
    the counts it reports are exact, and whether it agrees."""
    rows = [["layer", "simulator"] + [c for s in comp.sources for c in (s, "err", "exact", "agrees")]]
    for lc in comp.layers:
        row = [lc.layer, _value(lc.simulator["cycles"])]
        found = lc.exceptions()
        for s in comp.sources:
            m = lc.sources[s]
            counts = [k for k in COUNT_METRICS if k in m]
            exact = sum(m[k] == lc.simulator[k] for k in counts)
            row += [_value(m["cycles"]), _error(lc.simulator["cycles"], m["cycles"])] if "cycles" in m else ["-", ""]
            row += [f"{exact}/{len(counts)}", "no" if found[s] else "yes"]
        rows.append(row)
    return ["  " + line for line in table_lines(rows)]


def format_comparison(comp: Comparison, detail: bool = True) -> str:
    """The comparison as text: per layer the side-by-side table (``detail``), then one line
    per layer and a per-source agreement summary."""
    lines = [f"{comp.network} on {comp.hw}: simulator ({comp.mode} mode) vs " + ", ".join(comp.sources)]
    for lc in comp.layers if detail else ():
        lines += [""] + format_layer(lc, comp.sources, comp.mode)
    lines += ["", "cycles per layer:"] + format_overview(comp)
    note = "" if comp.mode == "maestro" else "; agreement is required in maestro mode only"
    lines += ["", f"summary (agreement: {AGREEMENT}{note}):"]
    for s in comp.sources:
        failing = [(lc.layer, lc.exceptions()[s]) for lc in comp.layers if lc.exceptions()[s]]
        line = f"  {s}: {len(comp.layers) - len(failing)}/{len(comp.layers)} layers agree"
        if failing:
            line += "; exceptions: " + "; ".join(f"{printable(layer)} ({', '.join(found)})" for layer, found in failing)
        lines.append(line)
    return "\n".join(lines)


def comparison_rows(comp: Comparison) -> list[dict[str, Any]]:
    """One CSV row per layer and metric (then per attribution part, metric ``gap:<part>``):
    ``layer``, ``op``, ``metric``, ``simulator``, and per source its value and
    ``<source> rel_error`` (empty where the source does not report the metric)."""
    rows = []
    for lc in comp.layers:
        for metric in _shown(lc):
            row: dict[str, Any] = {"layer": lc.layer, "op": lc.op, "metric": metric, "simulator": lc.simulator[metric]}
            for s in comp.sources:
                m = lc.sources[s]
                err = relative_error(lc.simulator[metric], m[metric]) if metric in m else None
                row[s] = m.get(metric, "")
                row[f"{s} rel_error"] = "" if err is None else err
            rows.append(row)
        attribution = lc.attribution()
        for part in PARTS if attribution else ():
            row = {"layer": lc.layer, "op": lc.op, "metric": f"gap:{part}", "simulator": ""}
            for s in comp.sources:
                row[s] = attribution[s][part] if s in attribution else ""
                row[f"{s} rel_error"] = ""
            rows.append(row)
        for rung in sorted({r.name for walk in lc.ladders.values() for r in walk.rungs},
                           key=lambda name: RUNGS.index(name)):
            row = {"layer": lc.layer, "op": lc.op, "metric": f"ladder:{rung}", "simulator": ""}
            for s in comp.sources:
                row[s] = lc.ladders[s].parts().get(rung, "") if s in lc.ladders else ""
                row[f"{s} rel_error"] = ""
            rows.append(row)
    return rows


def comparison_dict(comp: Comparison) -> dict[str, Any]:
    """Everything as plain data for JSON."""
    layers = []
    for lc in comp.layers:
        layers.append({
            "layer": lc.layer,
            "op": lc.op,
            "simulator": lc.simulator,
            "sources": lc.sources,
            "relative_error": {s: {k: relative_error(lc.simulator[k], v) for k, v in m.items()}
                               for s, m in lc.sources.items()},
            "exceptions": lc.exceptions(),
            "attribution_cycles": lc.attribution(),
            "model_maestro_mode_cycles": lc.maestro_mode_cycles,
            "ladders": {s: walk.to_dict() for s, walk in lc.ladders.items()},
            "ablation_cycles": None if lc.ablation is None else {
                "realistic": lc.ablation.realistic_cycles, "maestro": lc.ablation.maestro_cycles,
                "one_cause_ideal": lc.ablation.ideal_cycles},
        })
    return {"network": comp.network, "hw": comp.hw, "mode": comp.mode, "sources": comp.sources,
            "agreement": AGREEMENT, "layers": layers}
