"""What unique-reuse loop-order pruning costs: exhaustive search of a small space with every loop
order against the same search keeping one order per distinct operand reuse.

    python -m accelsim.search.reuse_report --hw dmazerunner_16x16 --network dmazerunner6

The space per layer (:func:`reuse_space`) is one cluster level, every dimension's tile either 1 or
whole, and ``K``, ``C``, ``Y'``, ``X'`` (or those of ``--parallel``) as parallel dimensions: small enough to enumerate every
order, large enough that up to six loops iterate. Both searches take their candidates from the
same evaluator (the pruned genomes are a subset of the full ones), so the pruned search's best is
the best over the kept genomes' rows; ``loss`` is ``best kept / best full - 1`` (0: pruning kept
an optimal order). Utilization is not pruned (``min_utilization`` 0), so the small layers keep
candidates.

``--out FILE`` appends each layer's row to a results CSV as it finishes (:data:`COLUMNS` after
the provenance of :mod:`accelsim.measurements`); the same command run again keeps those rows and
measures only the layers the file lacks. ``accelsim validate`` reads ``validation/reuse/results.csv``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from accelsim.errors import run_module
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.measurements import MeasurementFile, RunProvenance
from accelsim.search.evaluate import Evaluator
from accelsim.search.mappers import ExhaustiveMapper
from accelsim.search.run import search
from accelsim.search.space import SearchSpace
from accelsim.text_table import format_table
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

PARALLEL_DIMS = ("K", "C", "Y'", "X'")


def reuse_space(layer: Layer, num_pes: int, parallel: tuple[str, ...] = PARALLEL_DIMS) -> SearchSpace:
    """One level, tiles 1 or whole, the dimensions of ``parallel`` the layer has (larger than 1) as
    parallel dimensions."""
    dims = layer.loop_nest().dims
    spatial = tuple(d for d in parallel if dims.get(d, 1) > 1) or tuple(dims)
    return SearchSpace(layer, num_pes, {d: tuple(sorted({1, n})) for d, n in dims.items()}, (1,), spatial, 1, 1)


@dataclass(frozen=True)
class ReuseLoss:
    """One layer: level loop orders met and kept, genomes each search proposed (legal, fitting),
    legal ones scored, the best cost of each (cycles; None without a legal one), the loss and
    the seconds taken."""

    layer: str
    orders_enumerated: int
    orders_kept: int
    proposed_full: int
    proposed_kept: int
    scored_ok: int
    best_full: float | None
    best_kept: float | None
    loss: float | None
    seconds: float


# the results file's columns after the provenance (accelsim.measurements); validate reads them
COLUMNS = ("network", "hw", "parallel", *(f.name for f in fields(ReuseLoss)))


def measure(layer: Layer, hw: HardwareSpec, objective: str = "latency",
            parallel: tuple[str, ...] = PARALLEL_DIMS) -> ReuseLoss:
    """Exhaustive search of :func:`reuse_space` with and without unique-reuse pruning."""
    start = time.perf_counter()
    space = reuse_space(layer, hw.num_pes, parallel)
    full = ExhaustiveMapper(space, hw, min_utilization=0.0)
    kept = ExhaustiveMapper(space, hw, min_utilization=0.0, unique_reuse=True)
    with Evaluator(hw, layer, objective=objective) as ev:
        found = search(ev, full, 10**9)
        kept_genomes = [g for batch in iter(kept.ask, []) for g in batch]
        kept_rows = ev.evaluate(kept_genomes)
    ok_full = found.frame[found.frame["status"] == "ok"]["cost"]
    ok_kept = kept_rows[kept_rows["status"] == "ok"]["cost"]
    best_full = float(ok_full.min()) if len(ok_full) else None
    best_kept = float(ok_kept.min()) if len(ok_kept) else None
    loss = best_kept / best_full - 1 if best_full and best_kept is not None else None
    return ReuseLoss(layer.name, kept.coverage.orders_enumerated, kept.coverage.orders_kept,
                     full.coverage.proposed, kept.coverage.proposed, len(ok_full), best_full, best_kept, loss,
                     time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hw", default="dmazerunner_16x16")
    parser.add_argument("--network", default="dmazerunner6")
    parser.add_argument("--layer", action="append", help="only these layers (repeatable)")
    parser.add_argument("--parallel", nargs="+", default=list(PARALLEL_DIMS),
                        help="parallel dimensions of the space (default: K C Y' X')")
    parser.add_argument("--out", type=Path, help="results CSV (validation/reuse/results.csv): a row per layer as it "
                        "finishes, with provenance; the same command again keeps its rows and measures the rest")
    args = parser.parse_args(argv)
    hw = load_hardware(args.hw)
    net = load_network(args.network)
    layers = [net.layer(name) for name in args.layer] if args.layer else list(net.layers)
    out = None
    if args.out is not None:
        command = "python -m accelsim.search.reuse_report " + shlex.join(sys.argv[1:] if argv is None else argv)
        out = MeasurementFile(args.out, COLUMNS, RunProvenance(command, 0, {"candidates": "all"}), "pruning results file")
    kept = {row["layer"]: row for row in out.done} if out is not None else {}
    rows: list[dict[str, Any]] = []
    for layer in layers:  # each layer's row as it finishes (a long run keeps what it has)
        if layer.name in kept:
            rows.append({k: kept[layer.name][k] for k in COLUMNS[3:]})
            continue
        rows.append(asdict(measure(layer, hw, parallel=tuple(args.parallel))))
        print(f"{layer.name}: {rows[-1]}", flush=True)
        if out is not None:
            out.append({"network": net.name, "hw": hw.name, "parallel": " ".join(args.parallel), **rows[-1],
                        "seconds": round(rows[-1]["seconds"], 1)})
    header = list(rows[0])
    print(format_table(header, [[_cell(row[k]) for k in header] for row in rows]))


def _cell(value: object) -> str:
    if isinstance(value, float):  # costs whole, the loss and seconds to four digits
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return "-" if value is None else str(value)


if __name__ == "__main__":
    run_module(main)
