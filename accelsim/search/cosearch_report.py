"""The co-search against DiGamma's baselines (Kao's thesis, Fig. 6.7), on layers of a network
under one area budget:

    python -m accelsim.search.cosearch_report --hw eyeriss_like --network mobilenetv2 \\
        --layers conv2d_1,bottleneck2_1_1 --area-budget-mm2 0.2 --budget 300

* **co-search**: :func:`accelsim.search.cosearch.cosearch` with the default hardware ranges,
  ``--budget`` designs (population ``--population``).
* **grid + nvdla_like** (DiGamma's HW-opt): every design of the grid the co-search's genes span
  (PE count x L1 x L2, :func:`~accelsim.search.cosearch.gene_values` of the default ranges) that
  fits the budget, each layer mapped by the ``nvdla_like`` style (its largest tiles that fit);
  the design of least summed latency among those where the style maps every layer.
* **GAMMA on three fixed designs of the budget's area** (DiGamma's Mapping-opt): compute-heavy,
  medium and buffer-heavy, whose MACs take at most 80 %, 50 % and 20 % of the budget
  (:func:`fixed_design`); each layer searched by GAMMA with ``--budget`` new mappings, seeded
  with the named styles as ``accelsim search`` does.

Every design is scored by the same model (analytical, realistic mode, latency) and its
hardware is ``--hw`` with the PE count and buffer sizes replaced. The latency of a scheme is the
sum of its layers' cycles; ``ratio`` is the co-search's latency over the scheme's.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from functools import partial
import time
from dataclasses import asdict, dataclass

from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.maestro.report import MAC_AREA, SRAM_AREA
from accelsim.mapping.styles import style_mapping
from accelsim.search.area import UM2_PER_MM2, design_area
from accelsim.search.cosearch import DEFAULT_RANGES, L1, L2, PES, CoSearchConfig, HwGenes, cosearch, gene_values
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
    design mapped every layer), designs or candidates scored, seconds."""

    scheme: str
    pes: int
    l1_size_bytes: int
    l2_size_bytes: int
    area_mm2: float
    cycles: float | None
    scored: int
    seconds: float


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


def _row(name: str, spec: HardwareSpec, cycles: float | None, scored: int, start: float) -> Scheme:
    return Scheme(name, spec.num_pes, spec.l1.size_bytes, spec.l2.size_bytes, design_area(spec).total_mm2, cycles,
                  scored, time.perf_counter() - start)


def run_cosearch(base: HardwareSpec, layers: list[Layer], budget_mm2: float, budget: int, population: int,
                 seed: int) -> Scheme:
    start = time.perf_counter()
    config = CoSearchConfig.make((), area_budget_mm2=budget_mm2, budget=budget, population=population, seed=seed)
    result = cosearch(base, layers, config)
    if result.best_hw is None or result.best is None:
        raise InputError("the co-search found no legal design within the budget")
    return _row("co-search", result.best_hw, result.best["cycles"], len(result.frame), start)


def run_grid(base: HardwareSpec, layers: list[Layer], budget_mm2: float, style: str = "nvdla_like") -> Scheme:
    """The best design of the grid (module docstring) under ``style``'s mappings."""
    start = time.perf_counter()
    best: tuple[float, HardwareSpec] | None = None
    scored = 0
    grid = itertools.product(*(gene_values(*DEFAULT_RANGES[name]) for name in (PES, L1, L2)))
    for pes, l1, l2 in grid:
        spec = _spec(base, pes, l1, l2)
        if design_area(spec).total_mm2 > budget_mm2:
            continue
        scored += 1
        total = 0.0
        for layer in layers:
            try:
                dataflow = style_mapping(style, layer, spec)
            except (InputError, MappingError):
                break
            with Evaluator(spec, layer) as ev:
                row = ev.evaluate([dataflow]).iloc[0]
            if row["status"] != "ok":
                break
            total += float(row["cycles"])
        else:
            if best is None or total < best[0]:
                best = (total, spec)
    if best is None:
        raise InputError(f"no design of the grid within {budget_mm2} mm^2 maps every layer with {style}")
    return _row(f"grid + {style}", best[1], best[0], scored, start)


def run_gamma(name: str, spec: HardwareSpec, layers: list[Layer], budget: int, population: int,
              seed: int) -> Scheme:
    """GAMMA on ``spec``, layer by layer, ``budget`` new mappings each."""
    start = time.perf_counter()
    total: float | None = 0.0
    scored = 0
    for layer in layers:
        with Evaluator(spec, layer) as ev:
            seeds = style_seeds(layer, spec)
            mapper = GammaMapper(SearchSpace.default(layer, spec.num_pes), seed, population,
                                 seeds=seed_genomes(layer, seeds, spec.num_pes))
            found = search(ev, mapper, budget, None, seeds)
        scored += len(found.frame)
        best = found.best
        total = None if best is None or total is None else total + float(best["cycles"])
    return _row(f"GAMMA on {name}", spec, total, scored, start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hw", default="eyeriss_like")
    parser.add_argument("--network", default="mobilenetv2")
    parser.add_argument("--layers", help="comma-separated layer names (default: every layer)")
    parser.add_argument("--area-budget-mm2", type=float, default=0.2)
    parser.add_argument("--budget", type=int, default=300, help="co-search designs; GAMMA mappings per layer")
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    base = load_hardware(args.hw)
    net = load_network(args.network)
    layers = [net.layer(name) for name in args.layers.split(",")] if args.layers else list(net.layers)
    print(f"{net.name} ({len(layers)} layers) on {base.name}, area budget {args.area_budget_mm2} mm^2, "
          f"analytical model, realistic mode, latency", flush=True)
    runs: list[Callable[[], Scheme]] = [lambda: run_cosearch(base, layers, args.area_budget_mm2, args.budget, args.population, args.seed),
            lambda: run_grid(base, layers, args.area_budget_mm2)]
    runs += [partial(run_gamma, name, fixed_design(base, args.area_budget_mm2, share), layers, args.budget,
                     args.population, args.seed) for name, share in MAC_SHARES.items()]
    rows = []
    for run in runs:  # each scheme's row as it finishes (a long run shows what it has)
        rows.append(run())
        print(asdict(rows[-1]), flush=True)
    ours = rows[0].cycles
    table = []
    for r in rows:
        ratio = f"{ours / r.cycles:.3f}" if ours and r.cycles else "-"
        table.append((r.scheme, str(r.pes), str(r.l1_size_bytes), str(r.l2_size_bytes), f"{r.area_mm2:.4f}",
                      f"{r.cycles:,.0f}" if r.cycles is not None else "-", ratio, str(r.scored), f"{r.seconds:.0f}"))
    print(format_table(("scheme", "PEs", "L1_B", "L2_B", "area_mm2", "cycles", "co/this", "scored", "seconds"),
                       table))

if __name__ == "__main__":
    main()
