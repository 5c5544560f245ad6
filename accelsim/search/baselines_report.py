"""GAMMA against the Nevergrad baselines (issue 20) on one layer: each mapper searches the same
space (:meth:`~accelsim.search.space.SearchSpace.default`) with the same budget and seed, every
candidate scored by one evaluator per mapper of the same settings (analytical model, realistic
mode, latency), no mapper started from the named styles:

    python -m accelsim.search.baselines_report --hw eyeriss_like --network marvel15 \\
        --layer L8_CONV2_2_2 --budget 100 --max-levels 2 --out validation/baselines/results.csv

A row per mapper: the least cycles among its legal candidates (empty: none legal), the new
schedules it scored, how many of them were legal, why it stopped (``budget``; ``stalled``: it
proposed only known schedules for a while) and the seconds taken. Needs the ``nevergrad`` extra.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from accelsim.errors import run_module
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.measurements import MeasurementFile, RunProvenance
from accelsim.search.evaluate import Evaluator
from accelsim.search.nevergrad_mappers import NEVERGRAD_MAPPERS
from accelsim.search.run import search
from accelsim.search.session import SearchSettings, make_mapper
from accelsim.search.space import SearchSpace
from accelsim.text_table import format_table
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

MAPPERS = ("gamma", *NEVERGRAD_MAPPERS)


@dataclass(frozen=True)
class Baseline:
    """One mapper's search: best cycles (None: no legal candidate), new schedules scored, legal
    ones among them, why it stopped, seconds."""

    mapper: str
    best_cycles: float | None
    scored: int
    legal: int
    stopped: str
    seconds: float


# the results file's columns after the provenance (accelsim.measurements); validate reads them
COLUMNS = ("network", "hw", "layer", *(f.name for f in fields(Baseline)))


def run_mapper(name: str, hw: HardwareSpec, layer: Layer, budget: int, seed: int, max_levels: int,
               population: int) -> Baseline:
    """``name`` on ``layer``: ``budget`` new schedules, no style seeds."""
    start = time.perf_counter()
    settings = SearchSettings(hw.name, network="-", mapper=name, budget=budget, seed=seed, max_levels=max_levels,
                              population=population, style_seeds=False)
    mapper = make_mapper(settings, SearchSpace.default(layer, hw.num_pes, max_levels=max_levels), hw)
    with Evaluator(hw, layer) as ev:
        found = search(ev, mapper, budget)
    best = found.best
    legal = int((found.frame["status"] == "ok").sum())
    return Baseline(name, None if best is None else float(best["cycles"]), len(found.frame), legal, found.stopped,
                    time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hw", default="eyeriss_like")
    parser.add_argument("--network", default="marvel15")
    parser.add_argument("--layer", default="L8_CONV2_2_2")
    parser.add_argument("--mapper", action="append", choices=MAPPERS, help="repeatable (default: all)")
    parser.add_argument("--budget", type=int, default=100, help="new schedules per mapper")
    parser.add_argument("--max-levels", type=int, default=2)
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="results CSV (validation/baselines/results.csv): a row per mapper "
                        "as it finishes, with provenance; the same command again keeps its rows and runs the rest")
    args = parser.parse_args(argv)
    hw = load_hardware(args.hw)
    layer = load_network(args.network).layer(args.layer)
    out = None
    if args.out is not None:
        command = "python -m accelsim.search.baselines_report " + shlex.join(sys.argv[1:] if argv is None else argv)
        budgets = {"schedules_per_mapper": args.budget, "max_levels": args.max_levels, "population": args.population}
        out = MeasurementFile(args.out, COLUMNS, RunProvenance(command, args.seed, budgets), "baselines results file")
    kept = {row["mapper"]: row for row in out.done} if out is not None else {}
    table = []
    for name in args.mapper or MAPPERS:
        row: dict[str, object]
        if name in kept:
            row = {k: kept[name][k] for k in COLUMNS[3:]}
        else:
            found = run_mapper(name, hw, layer, args.budget, args.seed, args.max_levels, args.population)
            row = {**asdict(found), "seconds": round(found.seconds, 1)}
            if out is not None:
                out.append({"network": args.network, "hw": hw.name, "layer": layer.name, **row})
        table.append([str("" if v is None else v) for v in row.values()])
        print(format_table(list(row), table[-1:]), flush=True)
    print(format_table(list(COLUMNS[3:]), table))


if __name__ == "__main__":
    run_module(main)
