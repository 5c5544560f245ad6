"""The co-search against DiGamma's baselines (Kao's thesis, Fig. 6.7), on layers of a network
under one area budget:

    python -m accelsim.search.cosearch_report --hw eyeriss_like --network mobilenetv2 \\
        --layers conv2d_1,bottleneck2_1_1 --area-budget-mm2 0.2 --budget 300

* **co-search**: :func:`accelsim.search.cosearch.cosearch` with the default hardware ranges,
  ``--budget`` designs (population ``--population``).
* **grid + style** (DiGamma's HW-opt; ``--grid-style``, default ``nvdla_like``, repeatable): every
  design of the grid the co-search's genes span (PE count x L1 x L2, each the values of
  :func:`~accelsim.search.cosearch.gene_values` over the default ranges: PEs 16, 32, ..., 1024;
  L1 32 B, 64 B, ..., 4 KiB; L2 4 KiB, 8 KiB, ..., 1 MiB: 504 designs) that fits the budget, each
  layer mapped by the style (its largest tiles that fit the design's buffers); the design of
  least summed latency among those where the style maps every layer. The grid thus sweeps the
  very values the co-search may choose, with the same area model and budget.
* **GAMMA on three fixed designs of the budget's area** (DiGamma's Mapping-opt): compute-heavy,
  medium and buffer-heavy, whose MACs take at most 80 %, 50 % and 20 % of the budget
  (:func:`fixed_design`); each layer searched by GAMMA with ``--gamma-budget`` (default
  ``--budget``) new mappings, seeded with the named styles as ``accelsim search`` does.

* **The physical lower bound** (:func:`bound_cycles`) at the co-search's PE count and at the most
  PEs a value of the PE gene allows within the budget (:func:`most_pes`): rows
  :data:`LOWER_BOUND_CO` and :data:`LOWER_BOUND_MOST`, nothing scored, written after the schemes.

Every design is scored by the same model (analytical, realistic mode, latency) and its
hardware is ``--hw`` with the PE count and buffer sizes replaced. Layers of one shape
(:func:`~accelsim.search.cosearch.layer_shape`) are scored once and counted as often as they
occur, in every scheme. The latency of a scheme is the sum of its layers' cycles; ``co/this``
is the co-search's latency over the scheme's; ``scored`` counts designs (co-search, grid) or
mappings (GAMMA) scored, ``model_runs`` the layer evaluations the model ran.

The default budget, 0.2 mm^2, is DiGamma's edge budget for the area of PEs and on-chip
buffers (Kao's thesis, Sec. 6.3.1, citing Eyeriss and MAESTRO's edge settings).

``--out FILE`` appends each scheme's row to a results CSV as it finishes (:data:`COLUMNS` after
the provenance of :mod:`accelsim.measurements`); the same command run again keeps those rows and
runs only the schemes the file lacks. ``accelsim validate`` reads ``validation/cosearch/results.csv``.
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
from collections.abc import Callable
from functools import partial
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from accelsim.bounds import lower_bounds
from accelsim.errors import InputError, MappingError, run_module
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.maestro.report import MAC_AREA, SRAM_AREA
from accelsim.measurements import MeasurementFile, RunProvenance
from accelsim.mapping.styles import style_mapping
from accelsim.search.area import UM2_PER_MM2, design_area
from accelsim.search.cosearch import (DEFAULT_RANGES, L1, L2, PES, CoSearch, CoSearchConfig, HwGenes, gene_values,
                                      shapes)
from accelsim.search.evaluate import Evaluator
from accelsim.search.mappers import GammaMapper
from accelsim.search.run import search
from accelsim.search.seeds import seed_genomes, style_seeds
from accelsim.search.space import SearchSpace
from accelsim.text_table import format_table
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

MAC_SHARES = {"compute-heavy": 0.8, "medium": 0.5, "buffer-heavy": 0.2}


@dataclass(frozen=True)
class Scheme:
    """One scheme's best design: PEs, L1 and L2 bytes, area (mm^2), summed cycles (None: no
    design mapped every layer), designs or candidates scored, layer evaluations the model ran,
    seconds."""

    scheme: str
    pes: int
    l1_size_bytes: int
    l2_size_bytes: int
    area_mm2: float
    cycles: float | None
    scored: int
    model_runs: int
    seconds: float

    @classmethod
    def from_cells(cls, cells: dict[str, str]) -> Scheme:
        """A row of a results file (:data:`COLUMNS`) read back."""
        return cls(cells["scheme"], int(cells["pes"]), int(cells["l1_size_bytes"]), int(cells["l2_size_bytes"]),
                   float(cells["area_mm2"]), float(cells["cycles"]) if cells["cycles"] else None,
                   int(cells["scored"]), int(cells["model_runs"]), float(cells["seconds"]))


# the results file's columns after the provenance (accelsim.measurements); validate reads them
COLUMNS = ("network", "hw", "area_budget_mm2", *(f.name for f in fields(Scheme)))


def _spec(base: HardwareSpec, pes: int, l1: int, l2: int) -> HardwareSpec:
    return HwGenes(((PES, pes), (L1, l1), (L2, l2))).spec(base)


def fixed_design(base: HardwareSpec, budget_mm2: float, mac_share: float) -> HardwareSpec:
    """A design of about ``budget_mm2``: the most PEs (a power of two) whose MACs take at most
    ``mac_share`` of it; the rest of the area in SRAM, half as the PEs' L1s (whole words per PE),
    half as L2 (whole words), in MAESTRO's 28 nm table. Word size and MACs per PE from ``base``."""
    budget_um2 = budget_mm2 * UM2_PER_MM2
    mac_um2 = MAC_AREA * base.pe_array.macs_per_pe_per_cycle
    pes = 1
    while 2 * pes * mac_um2 <= mac_share * budget_um2:
        pes *= 2
    sram_words = int((budget_um2 - pes * mac_um2) / SRAM_AREA)
    l1_words = sram_words // 2 // pes
    word = base.word_size_bytes
    return _spec(base, pes, l1_words * word, (sram_words - l1_words * pes) * word)


def _row(name: str, spec: HardwareSpec, cycles: float | None, scored: int, runs: int, start: float) -> Scheme:
    return Scheme(name, spec.num_pes, spec.l1.size_bytes, spec.l2.size_bytes, design_area(spec).total_mm2, cycles,
                  scored, runs, time.perf_counter() - start)


def run_cosearch(base: HardwareSpec, layers: list[Layer], budget_mm2: float, budget: int, population: int,
                 seed: int, vary_layers: float = CoSearchConfig.vary_layers,
                 mutate_hw: float = CoSearchConfig.mutate_hw, fill_area: float = CoSearchConfig.fill_area,
                 refine: float = CoSearchConfig.refine, keep_partial: bool = CoSearchConfig.keep_partial) -> Scheme:
    start = time.perf_counter()
    config = CoSearchConfig.make((), area_budget_mm2=budget_mm2, budget=budget, population=population, seed=seed,
                                 vary_layers=vary_layers, mutate_hw=mutate_hw, fill_area=fill_area, refine=refine,
                                 keep_partial=keep_partial)
    search = CoSearch(base, layers, config)
    try:
        result = search.run()
        runs = search.model_runs
    finally:
        search.close()
    if result.best_hw is None or result.best is None:
        raise InputError("the co-search found no legal design within the budget")
    return _row("co-search", result.best_hw, result.best["cycles"], len(result.frame), runs, start)


def run_grid(base: HardwareSpec, layers: list[Layer], budget_mm2: float, style: str = "nvdla_like") -> Scheme:
    """The best design of the grid (module docstring) under ``style``'s mappings."""
    start = time.perf_counter()
    best: tuple[float, HardwareSpec] | None = None
    scored = runs = 0
    grid = itertools.product(*(gene_values(*DEFAULT_RANGES[name]) for name in (PES, L1, L2)))
    for pes, l1, l2 in grid:
        spec = _spec(base, pes, l1, l2)
        if design_area(spec).total_mm2 > budget_mm2:
            continue
        scored += 1
        total = 0.0
        for layer, count in shapes(layers):
            try:
                dataflow = style_mapping(style, layer, spec)
            except (InputError, MappingError):
                break
            with Evaluator(spec, layer) as ev:
                row = ev.rows([dataflow])[0]
                runs += ev.model_runs
            if row["status"] != "ok":
                break
            total += count * float(row["cycles"])
        else:
            if best is None or total < best[0]:
                best = (total, spec)
    if best is None:
        raise InputError(f"no design of the grid within {budget_mm2} mm^2 maps every layer with {style}")
    return _row(f"grid + {style}", best[1], best[0], scored, runs, start)


def run_gamma(name: str, spec: HardwareSpec, layers: list[Layer], budget: int, population: int,
              seed: int) -> Scheme:
    """GAMMA on ``spec``, layer shape by layer shape, ``budget`` new mappings each."""
    start = time.perf_counter()
    total: float | None = 0.0
    scored = runs = 0
    for layer, count in shapes(layers):
        with Evaluator(spec, layer) as ev:
            seeds = style_seeds(layer, spec)
            space = SearchSpace.default(layer, spec.num_pes)
            mapper = GammaMapper(space, seed, population, seeds=seed_genomes(space, seeds))
            found = search(ev, mapper, budget, None, seeds)
            runs += ev.model_runs
        scored += len(found.frame)
        best = found.best
        total = None if best is None or total is None else total + count * float(best["cycles"])
    return _row(f"GAMMA on {name}", spec, total, scored, runs, start)


LOWER_BOUND_CO = "lower bound, co-search's PEs"
LOWER_BOUND_MOST = "lower bound, most PEs in budget"


def bound_cycles(base: HardwareSpec, layers: list[Layer], pes: int) -> int:
    """The physical lower bound of ``layers`` on ``base`` with ``pes`` PEs: the sum over the layers
    (each counted as often as it occurs) of :func:`accelsim.bounds.lower_bounds`' cycles, the larger
    of the compute bound (MACs / PEs) and the compulsory off-chip bound (every tensor element
    across the DRAM interface once, at ``base``'s DRAM bandwidth). Buffer sizes do not enter it."""
    spec = HwGenes(((PES, pes),)).spec(base)
    return sum(lower_bounds(layer, spec).cycles for layer in layers)


def most_pes(base: HardwareSpec, budget_mm2: float) -> HardwareSpec:
    """The design of the most PEs any value of the PE gene (default range) allows within the
    budget: that count with the smallest L1 and L2 gene values (InputError where none fits)."""
    l1, l2 = (gene_values(*DEFAULT_RANGES[name])[0] for name in (L1, L2))
    fits = [_spec(base, pes, l1, l2) for pes in gene_values(*DEFAULT_RANGES[PES])]
    fits = [spec for spec in fits if design_area(spec).total_mm2 <= budget_mm2]
    if not fits:
        raise InputError(f"no PE count of the co-search's range fits {budget_mm2} mm^2")
    return fits[-1]


def bound_row(name: str, base: HardwareSpec, layers: list[Layer], spec: HardwareSpec) -> Scheme:
    """The lower bound (:func:`bound_cycles`) at ``spec``'s PEs as a scheme's row: nothing scored,
    no model run."""
    start = time.perf_counter()
    return _row(name, spec, bound_cycles(base, layers, spec.num_pes), 0, 0, start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hw", default="eyeriss_like")
    parser.add_argument("--network", default="mobilenetv2")
    parser.add_argument("--layers", help="comma-separated layer names (default: every layer)")
    parser.add_argument("--area-budget-mm2", type=float, default=0.2)
    parser.add_argument("--budget", type=int, default=300, help="co-search designs")
    parser.add_argument("--gamma-budget", type=int, help="GAMMA's new mappings per layer shape (default: --budget)")
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--vary-layers", type=float, default=CoSearchConfig.vary_layers,
                        help="layers whose genome a co-search child varies, on average")
    parser.add_argument("--mutate-hw", type=float, default=CoSearchConfig.mutate_hw,
                        help="probability of Mutate-HW per co-search child")
    parser.add_argument("--fill-area", type=float, default=CoSearchConfig.fill_area,
                        help="probability of Fill-area per co-search child (buffers grown to the area budget)")
    parser.add_argument("--refine", type=float, default=CoSearchConfig.refine,
                        help="share of the co-search's designs spent last on the best design's hardware")
    parser.add_argument("--keep-partial", action="store_true",
                        help="a co-search design refused for one layer still teaches its hardware the layers before")
    parser.add_argument("--grid-style", action="append", help="style of the grid baseline (repeatable; "
                        "default nvdla_like)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="results CSV (validation/cosearch/results.csv): a row per scheme "
                        "as it finishes, with provenance; the same command again keeps its rows and runs the rest")
    args = parser.parse_args(argv)
    base = load_hardware(args.hw)
    net = load_network(args.network)
    layers = [net.layer(name) for name in args.layers.split(",")] if args.layers else list(net.layers)
    gamma_budget = args.gamma_budget or args.budget
    print(f"{net.name} ({len(layers)} layers, {len(shapes(layers))} shapes) on {base.name}, area budget "
          f"{args.area_budget_mm2} mm^2, analytical model, realistic mode, latency", flush=True)
    budgets = {"designs": args.budget, "gamma_mappings_per_shape": gamma_budget, "population": args.population,
               "vary_layers": args.vary_layers, "mutate_hw": args.mutate_hw, "fill_area": args.fill_area,
               "refine": args.refine, "keep_partial": int(args.keep_partial)}
    out = None
    if args.out is not None:
        command = "python -m accelsim.search.cosearch_report " + shlex.join(sys.argv[1:] if argv is None else argv)
        out = MeasurementFile(args.out, COLUMNS, RunProvenance(command, args.seed, budgets), "co-search results file")
    runs: list[tuple[str, Callable[[], Scheme]]] = [
        ("co-search", partial(run_cosearch, base, layers, args.area_budget_mm2, args.budget, args.population,
                              args.seed, args.vary_layers, args.mutate_hw, args.fill_area, args.refine,
                              args.keep_partial))]
    runs += [(f"grid + {style}", partial(run_grid, base, layers, args.area_budget_mm2, style))
             for style in args.grid_style or ["nvdla_like"]]
    runs += [(f"GAMMA on {name}", partial(run_gamma, name, fixed_design(base, args.area_budget_mm2, share), layers,
                                          gamma_budget, args.population, args.seed)) for name, share in MAC_SHARES.items()]
    rows: list[Scheme] = []  # rows[0]: the co-search's, whose PEs the first lower bound takes
    runs += [(LOWER_BOUND_CO, lambda: bound_row(LOWER_BOUND_CO, base, layers, _spec(
                 base, rows[0].pes, rows[0].l1_size_bytes, rows[0].l2_size_bytes))),
             (LOWER_BOUND_MOST, partial(bound_row, LOWER_BOUND_MOST, base, layers,
                                        most_pes(base, args.area_budget_mm2)))]
    kept = {row["scheme"]: row for row in out.done} if out is not None else {}
    for name, run in runs:  # each scheme's row as it finishes (a long run shows and keeps what it has)
        if name in kept:
            print(f"{name}: kept from {args.out.as_posix()}", flush=True)
            rows.append(Scheme.from_cells(kept[name]))
            continue
        rows.append(run())
        print(asdict(rows[-1]), flush=True)
        if out is not None:
            r = rows[-1]
            out.append({"network": net.name, "hw": base.name, "area_budget_mm2": args.area_budget_mm2,
                        **asdict(r), "area_mm2": round(r.area_mm2, 6), "seconds": round(r.seconds, 1)})
    ours = rows[0].cycles
    table = []
    for r in rows:
        ratio = f"{ours / r.cycles:.3f}" if ours and r.cycles else "-"
        table.append((r.scheme, str(r.pes), str(r.l1_size_bytes), str(r.l2_size_bytes), f"{r.area_mm2:.4f}",
                      f"{r.cycles:,.0f}" if r.cycles is not None else "-", ratio, str(r.scored), str(r.model_runs),
                      f"{r.seconds:.0f}"))
    print(format_table(("scheme", "PEs", "L1_B", "L2_B", "area_mm2", "cycles", "co/this", "scored", "model_runs",
                        "seconds"), table))


if __name__ == "__main__":
    run_module(main)
