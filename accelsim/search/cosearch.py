"""Hardware-mapping co-search (DiGamma, Kao's thesis Ch. 6): PE count and buffer sizes are genes
searched together with each layer's GAMMA genome, under an area budget.

A *design* is a hardware half (:class:`HwGenes`: PE count, L1 and L2 bytes, optionally the
distribution NoC's bandwidth, each from the powers of two within a user's range and the range's
ends) and one genome per layer. The rest of the hardware (NoCs' kinds, DRAM, clock, energy) is
the base spec's (``--hw``). The PE array is shaped as the most square factorization of the count.
With ``size_buffers`` the L1 and L2 genes are not searched: each is sized to the most any layer's
genome needs (DiGamma's buffer allocation, Sec. 6.2.3: "the exact amount of buffer needed").

A design is scored on every layer by the search's :class:`~accelsim.search.evaluate.Evaluator`
(one per hardware and layer) and costed over the network: ``latency`` (sum of cycles),
``energy`` (sum of pJ), ``edp`` (their product) or ``latency-area`` (summed cycles x mm^2). Its
area comes from :mod:`accelsim.search.area`; a design over ``area_budget_mm2`` is not scored:
status ``illegal``, reason ``area_budget``, cost +inf (fitness -inf, DiGamma's constraint
checker). A layer whose genome is illegal on the design makes the design illegal with that
layer's reason.

The genetic algorithm is GAMMA's (:func:`accelsim.search.mappers.vary`, its parents the best
quarter) with DiGamma's hardware operators: crossover takes each hardware gene from either
parent, Mutate-HW draws one hardware gene anew (probability 0.5 each). The mapping half is
crossed per layer: on one hardware the layers' costs are independent, so a child of hardware
scored before keeps, for each layer, the best genome any design of that hardware had for it,
and GAMMA's operators vary about ``vary_layers`` layers' genomes per child, each starting from
one of the best few genomes the hardware had for that layer (see :meth:`CoSearch._child`). A
genome whose parent had another PE count is first repaired into the new count's space, and
tiles that overflow the child's L1 or L2 are shrunk until they fit
(:func:`accelsim.search.fit.fit_tiles`) instead of wasting the design. Layers of one shape
(:func:`layer_shape`) share one genome and count as often as they occur. The first
generation's first half maps every layer by a named style (:mod:`accelsim.search.seeds`); the
rest is random. The budget counts distinct designs proposed (over-budget ones included:
DiGamma's sampling budget).

Two operators of ours, both off by default: **Fill-area** (``fill_area``, a probability per
child, after Mutate-HW) raises the buffer genes, in a random order, each to its largest value
that keeps the design within the area budget (:meth:`CoSearch._fill_area`; never lowers one).
More buffer is not always faster in this model for a fixed mapping (a larger L2 makes the
capacity rule choose larger L2 tiles, which can overlap less), so it is an operator, not a
repair. **Refinement** (``refine``, a share of the budget): once that share of the designs is
left, the hardware is fixed to the best design's, the first designs on it map every layer by
each named style there (:meth:`CoSearch._styled`, as GAMMA's seeds on a fixed design), and the
rest of the budget varies only the mappings (with the same ``vary_layers``). With
``keep_partial`` a design refused for one layer's mapping (over the work budget, say) still
adds the genomes of the layers scored before that one to its hardware's best genomes (no
model run more: those layers were scored anyway).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import inf, isqrt
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim import __version__
from accelsim.errors import InputError, MappingError
from accelsim.hw.loader import dump_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import buffer_needs_bytes, compile_mapping
from accelsim.mapping.jobs import Job, to_maestro
from accelsim.mapping.maestro_format import write_maestro
from accelsim.mapping.styles import STYLES
from accelsim.search.area import design_area
from accelsim.search.evaluate import Evaluator
from accelsim.search.executors import Executor
from accelsim.search.fit import fit_tiles
from accelsim.search.genome import Genome
from accelsim.search.mappers import GammaRates, survivors, vary
from accelsim.search.run import STALL_BATCHES
from accelsim.search.seeds import style_genomes
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer

PES, L1, L2, NOC = ("pe_array.count", "l1.size_bytes", "l2.size_bytes",
                    "distribution_noc.bandwidth_words_per_cycle")
HW_FIELDS = (PES, L1, L2, NOC)
# searched when the user gives no range for them (the NoC bandwidth is the base spec's unless ranged)
DEFAULT_RANGES: dict[str, tuple[int, int]] = {PES: (16, 1024), L1: (32, 4096), L2: (4096, 1024 * 1024)}
COSEARCH_OBJECTIVES = ("latency", "energy", "edp", "latency-area")
AREA_BUDGET = "area_budget"


def rate_problems(vary_layers: float | None, mutate_hw: float | None, fill_area: float | None,
                  refine: float | None) -> list[str]:
    """What is wrong with the GA's settings (None: not given, nothing to check), one message each,
    naming the option: ``--vary-layers`` at least 0, ``--mutate-hw`` and ``--fill-area`` in 0..1,
    ``--refine`` in 0..1 below 1."""
    checks = ((vary_layers is None or vary_layers >= 0,
               f"--vary-layers must be at least 0 (layers varied per child, on average), got {vary_layers}"),
              (mutate_hw is None or 0 <= mutate_hw <= 1,
               f"--mutate-hw must lie in 0..1 (a probability per child), got {mutate_hw}"),
              (fill_area is None or 0 <= fill_area <= 1,
               f"--fill-area must lie in 0..1 (a probability per child), got {fill_area}"),
              (refine is None or 0 <= refine < 1,
               f"--refine must lie in 0..1, below 1 (a share of --budget), got {refine}"))
    return [message for ok, message in checks if not ok]


def parse_hw_range(text: str) -> tuple[str, tuple[int, int]]:
    """``FIELD=LOW:HIGH`` (``--hw-range``) as (field, (low, high)); InputError naming what is wrong."""
    name, _, span = text.partition("=")
    low, _, high = span.partition(":")
    if name not in HW_FIELDS:
        raise InputError(f"--hw-range {text}: expected FIELD=LOW:HIGH with FIELD one of {', '.join(HW_FIELDS)}")
    try:
        lo, hi = int(low), int(high)
    except ValueError:
        raise InputError(f"--hw-range {text}: expected LOW:HIGH, two whole numbers such as 64:1024") from None
    if not 1 <= lo <= hi:
        raise InputError(f"--hw-range {text}: expected 1 <= LOW <= HIGH")
    return name, (lo, hi)


def gene_values(low: int, high: int) -> tuple[int, ...]:
    """The values a hardware gene takes in ``low..high``: the powers of two between and both ends."""
    values = {low, high}
    p = 1
    while p <= high:
        if p >= low:
            values.add(p)
        p *= 2
    return tuple(sorted(values))


def array_shape(count: int) -> tuple[int, int]:
    """(rows, cols) of ``count`` PEs: the most square factorization, rows <= cols."""
    rows = max(d for d in range(1, isqrt(count) + 1) if count % d == 0)
    return rows, count // rows


@dataclass(frozen=True)
class HwGenes:
    """The hardware half of a design: a value per searched field (see :data:`HW_FIELDS`)."""

    values: tuple[tuple[str, int], ...]

    def get(self, name: str) -> int | None:
        return dict(self.values).get(name)

    def text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.values)

    def spec(self, base: HardwareSpec, l1_bytes: int | None = None, l2_bytes: int | None = None) -> HardwareSpec:
        """``base`` with these genes (and buffer sizes given here, where sized to the mapping)."""
        data = base.model_dump()
        data["name"] = f"{base.name}-cosearch"
        data["source"] = f"accelsim search --co-search on {base.name}: {self.text()}"
        pes = self.get(PES)
        if pes is not None:
            rows, cols = array_shape(pes)
            data["pe_array"].update(count=pes, rows=rows, cols=cols)
        l1 = l1_bytes if l1_bytes is not None else self.get(L1)
        l2 = l2_bytes if l2_bytes is not None else self.get(L2)
        if l1 is not None:
            data["l1"]["size_bytes"] = l1
        if l2 is not None:
            data["l2"]["size_bytes"] = l2
        noc = self.get(NOC)
        if noc is not None:
            data["distribution_noc"]["bandwidth_words_per_cycle"] = noc
        return HardwareSpec.model_validate(data)


@dataclass(frozen=True)
class Design:
    """Hardware genes and one genome per layer (in the layers' order)."""

    hw: HwGenes
    genomes: tuple[Genome, ...]

    def key(self) -> str:
        return self.hw.text() + " | " + " | ".join(g.text() for g in self.genomes)


@dataclass(frozen=True)
class CoSearchConfig:
    """What a co-search searches and how: per hardware field its (low, high) range, the area
    budget (mm^2; None: none), buffers sized to the mappings, objective, scoring model and
    mode, designs to score, population, seed, most cluster levels, the model's work budget per
    candidate (None: its default), whether the first generation starts from the styles, whether
    tiles that overflow a buffer are repaired (:mod:`accelsim.search.fit`), how many layers'
    genomes GAMMA's operators vary per child on average, the probability of Mutate-HW per child,
    the probability of Fill-area per child, the share of the budget spent last on the best
    design's hardware (refinement), whether a refused design's layers scored before the refused
    one are remembered (``keep_partial``; module docstring), and GAMMA's rates."""

    ranges: tuple[tuple[str, tuple[int, int]], ...]
    area_budget_mm2: float | None = None
    size_buffers: bool = False
    objective: str = "latency"
    model: str = "analytical"
    mode: str = "realistic"
    budget: int = 500
    population: int = 20
    seed: int = 0
    max_levels: int = 3
    work_budget: float | None = None
    style_seeds: bool = True
    repair_tiles: bool = True
    vary_layers: float = 4.0
    mutate_hw: float = 0.5
    fill_area: float = 0.0
    refine: float = 0.0
    keep_partial: bool = False
    rates: GammaRates = GammaRates()

    def __post_init__(self) -> None:
        if self.objective not in COSEARCH_OBJECTIVES:
            raise InputError(f"--objective {self.objective}: expected one of {', '.join(COSEARCH_OBJECTIVES)}")
        if self.area_budget_mm2 is not None and not self.area_budget_mm2 > 0:
            raise InputError(f"--area-budget-mm2 must be positive, got {self.area_budget_mm2}")
        problems = rate_problems(self.vary_layers, self.mutate_hw, self.fill_area, self.refine)
        if problems:
            raise InputError(problems[0])
        if self.budget < 1 or self.population < 2:
            raise InputError("the co-search needs --budget >= 1 and --population >= 2")

    @classmethod
    def make(cls, ranges: Sequence[str], **kwargs: Any) -> CoSearchConfig:
        """From ``--hw-range`` texts: the defaults of :data:`DEFAULT_RANGES` where a field is not
        given; L1 and L2 are not genes when buffers are sized."""
        given = dict(parse_hw_range(text) for text in ranges)
        merged = {**DEFAULT_RANGES, **given}
        if kwargs.get("size_buffers"):
            merged = {k: v for k, v in merged.items() if k not in (L1, L2)}
        return cls(tuple((k, merged[k]) for k in HW_FIELDS if k in merged), **kwargs)

    @property
    def searched(self) -> dict[str, tuple[int, ...]]:
        return {name: gene_values(*span) for name, span in self.ranges}


@dataclass
class CoSearchResult:
    """Every design scored (``frame``, one row each, in order), the best one (row, hardware
    spec, each layer's directives), why it stopped and the generations run."""

    frame: pd.DataFrame
    best: dict[str, Any] | None
    best_hw: HardwareSpec | None
    best_dataflows: list[tuple[Any, ...]] = field(default_factory=list)
    stopped: str = "budget"
    generations: int = 0


RowsCallback = Callable[[int, float | None, str], None]  # (designs scored, best cost so far, label)


class CoSearch:
    """DiGamma's co-search of ``layers`` on hardware derived from ``base`` (module docstring)."""

    def __init__(self, base: HardwareSpec, layers: Sequence[Layer], config: CoSearchConfig,
                 executor: Executor | None = None):
        self.base, self.config, self.executor = base, config, executor
        # one genome per layer shape: layers of one shape (operator, sizes, strides) cost the same
        # under the same mapping and hardware, so the best design maps them alike
        unique = shapes(layers)
        self.layers = [layer for layer, _ in unique]
        self.counts = [count for _, count in unique]
        index = {layer_shape(layer): i for i, layer in enumerate(self.layers)}
        self.shape_of = [index[layer_shape(layer)] for layer in layers]
        # per hardware (genes' text), per layer shape: the best genomes any design of it had (cost of one
        # layer, genome), best first, at most the parents' share of the population
        self._layer_best: dict[str, list[list[tuple[float, Genome]]]] = {}
        self.rng = random.Random(config.seed)
        self.values = config.searched
        self._evaluators: dict[tuple[str, str], Evaluator] = {}
        self._rows: dict[str, dict[str, Any]] = {}
        self._best: tuple[float, Design, HardwareSpec] | None = None
        self._specs: dict[str, HardwareSpec] = {}  # hardware genes' spec (base buffers' kinds)

    def close(self) -> None:
        for ev in self._evaluators.values():
            ev.close()

    @property
    def model_runs(self) -> int:
        """Layer evaluations the scoring model ran (not answered from an evaluator's cache)."""
        return sum(ev.model_runs for ev in self._evaluators.values())

    # -------------------------------------------------------------------------------- search
    def run(self, on_rows: RowsCallback | None = None) -> CoSearchResult:
        cfg = self.config
        population: list[tuple[float, str, Design]] = []
        rows: list[dict[str, Any]] = []
        generation, idle, stopped = 0, 0, "budget"
        refine_from = cfg.budget - int(cfg.refine * cfg.budget)
        refining: HwGenes | None = None
        while len(rows) < cfg.budget:
            if refining is None and generation and self._best is not None and len(rows) >= refine_from:
                refining = self._best[1].hw
                batch = self._styled(refining)
                batch += [self._child(population, refining) for _ in range(cfg.population - len(batch))]
            else:
                batch = (self._first() if generation == 0
                         else [self._child(population, refining) for _ in range(cfg.population)])
            scored = []
            fresh = 0
            for design in batch:
                key = design.key()
                if key not in self._rows:
                    if len(rows) >= cfg.budget:
                        break
                    row = self._score(design, len(rows))
                    self._rows[key] = row
                    rows.append(row)
                    fresh += 1
                scored.append((self._rows[key]["fitness"], key, design))
            pool = sorted(population + scored, key=lambda m: -m[0])
            population = survivors(pool, lambda m: m[1], cfg.population)
            generation += 1
            if on_rows is not None:
                on_rows(fresh, self._best[0] if self._best else None, "co-search")
            idle = 0 if fresh else idle + 1
            if idle >= STALL_BATCHES:
                stopped = "stalled"
                break
        frame = pd.DataFrame(rows)
        if self._best is None:
            return CoSearchResult(frame, None, None, [], stopped, generation)
        cost, design, spec = self._best
        best = next(r for r in rows if r["key"] == design.key())
        dataflows = [design.genomes[i].directives() for i in self.shape_of]
        return CoSearchResult(frame, best, spec, dataflows, stopped, generation)

    def _space(self, layer: Layer, pes: int) -> SearchSpace:
        return SearchSpace.default(layer, pes, max_levels=self.config.max_levels)

    def _random_hw(self) -> HwGenes:
        return HwGenes(tuple((name, self.rng.choice(values)) for name, values in self.values.items()))

    def _pes(self, hw: HwGenes) -> int:
        return hw.get(PES) or self.base.num_pes

    def _first(self) -> list[Design]:
        """The first generation: random hardware; in the first half every layer's genome from a
        named style (the design's own style where it maps that layer as a genome, else the next
        style in :data:`~accelsim.mapping.styles.STYLES`' order that does; random where none
        does), the rest random; every genome's tiles fitted to the design's buffers."""
        out = []
        styles = list(STYLES)
        for i in range(self.config.population):
            hw = self._random_hw()
            pes = self._pes(hw)
            seeded = self.config.style_seeds and i < self.config.population // 2
            spec = hw.spec(self.base, *self._style_buffers()) if seeded else None
            turn = styles[i % len(styles):] + styles[:i % len(styles)]  # this design's style first
            genomes = []
            for layer in self.layers:
                space = self._space(layer, pes)
                genome = self._style_genome(turn, space, spec) if spec is not None else None
                genomes.append(self._fit(space, genome if genome is not None
                                         else space.random_genome(self.rng, space.min_levels), hw))
            out.append(Design(hw, tuple(genomes)))
        return out

    def _style_buffers(self) -> tuple[int | None, int | None]:
        """Buffer sizes the styles' tiles are chosen for when buffers are sized: the most the
        default ranges allow (the genes' own values otherwise)."""
        if not self.config.size_buffers:
            return None, None
        return DEFAULT_RANGES[L1][1], DEFAULT_RANGES[L2][1]

    @staticmethod
    def _style_genome(styles: Sequence[str], space: SearchSpace, spec: HardwareSpec) -> Genome | None:
        """The first of ``styles`` whose mapping of the space's layer on ``spec`` is a genome of
        ``space`` (None: none is)."""
        genomes = style_genomes(space, spec)
        return next((genomes[s] for s in styles if s in genomes and space.repair(genomes[s]) == genomes[s]), None)

    def _fit(self, space: SearchSpace, genome: Genome, hw: HwGenes) -> Genome:
        """``genome`` with its tiles fitted to ``hw``'s buffers (:func:`accelsim.search.fit.fit_tiles`)
        when tile repair is on and the buffers are genes (sized buffers always fit)."""
        if not self.config.repair_tiles or self.config.size_buffers:
            return genome
        return fit_tiles(space, genome, self._spec(hw))

    def _spec(self, hw: HwGenes) -> HardwareSpec:
        key = hw.text()
        if key not in self._specs:
            self._specs[key] = hw.spec(self.base)
        return self._specs[key]

    def _child(self, population: list[tuple[float, str, Design]], fixed: HwGenes | None = None) -> Design:
        """A child of two parents from the best quarter: DiGamma's hardware crossover and
        Mutate-HW, then each layer's genome. On hardware scored before, the crossover is per
        layer: the layers' costs on one hardware are independent, so each layer keeps the best
        genome any design of that hardware had for it; GAMMA's operators vary each layer's genome
        with probability ``vary_layers / layers`` (every layer in a network of at most
        ``vary_layers`` layer shapes), starting from one of the best genomes the hardware had for
        that layer (at most the parents' share of the population, as GAMMA's parents) with
        another as the crossover mate. On new hardware the first parent's genomes are kept or
        varied with the second's as mate. Every genome is put into the child's space and its
        tiles fitted to the child's buffers."""
        rng, rates = self.rng, self.config.rates
        parents = population[:rates.parent_count(self.config.population)]
        a = rng.choice(parents)[2]
        b = rng.choice(parents)[2]
        if fixed is not None:  # the refinement phase: the best design's hardware, mappings varied
            genes = fixed
        else:
            hw = dict(a.hw.values)
            if rng.random() < rates.crossover:  # each hardware gene from either parent
                other = dict(b.hw.values)
                hw = {k: other[k] if rng.random() < 0.5 else v for k, v in hw.items()}
            if self.values and rng.random() < self.config.mutate_hw:  # Mutate-HW
                name = rng.choice(sorted(self.values))
                hw[name] = rng.choice(self.values[name])
            if self.config.fill_area and rng.random() < self.config.fill_area:  # Fill-area (no draw when off)
                hw = self._fill_area(hw)
            genes = HwGenes(tuple(hw.items()))
        pes = self._pes(genes)
        known = self._layer_best.get(genes.text(), [[] for _ in self.layers])
        share = min(1.0, self.config.vary_layers / len(self.layers))
        genomes = []
        for layer, pool, ga, gb in zip(self.layers, known, a.genomes, b.genomes):
            space = self._space(layer, pes)
            if rng.random() < share:  # GAMMA's operators on one of the layer's best genomes here
                first, mate = (rng.choice(pool)[1], rng.choice(pool)[1]) if pool else (ga, gb)
                genome = vary(space, rng, rates, first, _constant(mate))
            else:
                genome = space.repair(pool[0][1] if pool else ga)
            genomes.append(self._fit(space, genome, genes))
        return Design(genes, tuple(genomes))

    def _styled(self, hw: HwGenes) -> list[Design]:
        """The refinement phase's first designs on ``hw``: one per named style, each layer's genome
        that style's mapping on ``hw`` where it is a genome of the layer's space (tiles fitted),
        else the best genome ``hw`` had for the layer."""
        spec, pes = hw.spec(self.base, *self._style_buffers()), self._pes(hw)
        known = self._layer_best[hw.text()]
        out = []
        for style in STYLES:
            genomes = []
            for layer, pool in zip(self.layers, known):
                space = self._space(layer, pes)
                genome = self._style_genome([style], space, spec)
                genomes.append(self._fit(space, genome, hw) if genome is not None else pool[0][1])
            out.append(Design(hw, tuple(genomes)))
        return out[:self.config.population]

    def _fill_area(self, hw: dict[str, int]) -> dict[str, int]:
        """Fill-area: the buffer genes (L1, L2; those searched), in a random order, each raised to its
        largest value whose design still fits the area budget with the other genes as they are
        (never lowered: a gene with no larger value that fits keeps its own). Unchanged without
        an area budget or buffer genes."""
        budget = self.config.area_budget_mm2
        buffers = [name for name in (L1, L2) if name in self.values and name in hw]
        if budget is None or not buffers:
            return hw
        self.rng.shuffle(buffers)
        out = dict(hw)
        for name in buffers:
            for value in reversed(self.values[name]):
                if value <= out[name]:
                    break
                trial = {**out, name: value}
                if design_area(self._spec(HwGenes(tuple(trial.items())))).total_mm2 <= budget:
                    out = trial
                    break
        return out

    # ------------------------------------------------------------------------------- scoring
    def _score(self, design: Design, sample: int) -> dict[str, Any]:
        cfg = self.config
        start = time.perf_counter()
        row: dict[str, Any] = {"sample": sample, "key": design.key(), "hw": design.hw.text(),
                               "genomes": " | ".join(g.text() for g in design.genomes),
                               "status": "ok", "reason": None, "message": None}
        try:
            spec = design.hw.spec(self.base, *self._sized(design))
        except MappingError as exc:
            return self._refuse(row, "illegal", exc.reason or "invalid", exc.detail, start)
        area = design_area(spec)
        row.update({"pes": spec.num_pes, "rows": spec.pe_array.rows, "cols": spec.pe_array.cols,
                    "l1_size_bytes": spec.l1.size_bytes, "l2_size_bytes": spec.l2.size_bytes,
                    "noc_bandwidth_words_per_cycle": spec.distribution_noc.bandwidth_words_per_cycle,
                    "area_mm2": area.total_mm2})
        if cfg.area_budget_mm2 is not None and area.total_mm2 > cfg.area_budget_mm2:
            return self._refuse(row, "illegal", AREA_BUDGET, f"area {area.total_mm2:.4f} mm^2 over the budget of "
                                f"{cfg.area_budget_mm2} mm^2", start)
        cycles = energy = 0.0
        per_layer: list[float] = []
        for layer, count, genome in zip(self.layers, self.counts, design.genomes):
            result = self._evaluator(spec, layer).rows([genome])[0]
            if result["status"] != "ok":
                if cfg.keep_partial:  # the layers scored before this one are still known on this hardware
                    self._remember(design, per_layer)
                return self._refuse(row, str(result["status"]), str(result["reason"]),
                                    f"layer {layer.name}: {result['message']}", start)
            cycles += count * float(result["cycles"])
            energy += count * float(result["energy_pj"])
            per_layer.append(float(result["energy_pj" if cfg.objective == "energy" else "cycles"]))
        self._remember(design, per_layer)
        cost = {"latency": cycles, "energy": energy, "edp": cycles * energy,
                "latency-area": cycles * area.total_mm2}[cfg.objective]
        row.update(cycles=cycles, energy_pj=energy, edp_pj_cycles=cycles * energy,
                   latency_area_cycles_mm2=cycles * area.total_mm2, cost=cost, fitness=-cost,
                   wall_seconds=time.perf_counter() - start)
        if self._best is None or cost < self._best[0]:
            self._best = (cost, design, spec)
        return row

    def _remember(self, design: Design, per_layer: Sequence[float]) -> None:
        """Add the first ``len(per_layer)`` layers' genomes of ``design``, with their costs, to the
        best genomes its hardware had for those layers (at most the parents' share of the
        population each, best first)."""
        keep = self.config.rates.parent_count(self.config.population)
        known = self._layer_best.setdefault(design.hw.text(), [[] for _ in self.layers])
        for pool, layer_cost, genome in zip(known, per_layer, design.genomes):
            if all(g != genome for _, g in pool):
                pool.append((layer_cost, genome))
                pool.sort(key=lambda entry: entry[0])  # stable: of equal costs the first found leads
                del pool[keep:]

    @staticmethod
    def _refuse(row: dict[str, Any], status: str, reason: str, message: str, start: float) -> dict[str, Any]:
        row.update(status=status, reason=reason, message=message, cost=inf, fitness=-inf,
                   wall_seconds=time.perf_counter() - start)
        return row

    def _sized(self, design: Design) -> tuple[int | None, int | None]:
        """(L1, L2) bytes when buffers are sized to the mappings: the most any layer's genome
        needs (MappingError where one does not compile); (None, None) otherwise."""
        if not self.config.size_buffers:
            return None, None
        pes, base = self._pes(design.hw), self.base
        l1 = l2 = 1
        for layer, genome in zip(self.layers, design.genomes):
            cm = compile_mapping(layer, genome.directives(), pes, source="co-search")
            need1, need2 = buffer_needs_bytes(cm, base.word_size_bytes, base.l1.double_buffered,
                                              base.l2.double_buffered, base.l2.bypassed)
            l1, l2 = max(l1, need1), max(l2, need2)
        return l1, l2

    def _evaluator(self, spec: HardwareSpec, layer: Layer) -> Evaluator:
        key = (spec.model_dump_json(), layer.name)
        if key not in self._evaluators:
            self._evaluators[key] = Evaluator(spec, layer, self.config.model, self.config.mode,
                                              "latency", executor=self.executor, work_budget=self.config.work_budget)
        return self._evaluators[key]


def layer_shape(layer: Layer) -> tuple[Any, ...]:
    """What a layer's cost depends on besides its mapping and hardware: operator, sizes and
    strides (layers of one shape are searched once and counted as often as they occur)."""
    return (layer.op, tuple(sorted(layer.sizes.items())), layer.stride_y, layer.stride_x)


def shapes(layers: Sequence[Layer]) -> list[tuple[Layer, int]]:
    """Each layer shape once (its first layer) with how many layers have it."""
    firsts: dict[tuple[Any, ...], Layer] = {}
    counts: dict[tuple[Any, ...], int] = {}
    for layer in layers:
        key = layer_shape(layer)
        firsts.setdefault(key, layer)
        counts[key] = counts.get(key, 0) + 1
    return [(layer, counts[key]) for key, layer in firsts.items()]


def _constant(genome: Genome) -> Callable[[], Genome]:
    return lambda: genome


def cosearch(base: HardwareSpec, layers: Sequence[Layer], config: CoSearchConfig,
             executor: Executor | None = None, on_rows: RowsCallback | None = None) -> CoSearchResult:
    """Run one co-search (see the module docstring)."""
    search = CoSearch(base, layers, config, executor)
    try:
        return search.run(on_rows)
    finally:
        search.close()


def write_cosearch(out: Path, settings: dict[str, Any], network: str, layers: Sequence[Layer],
                   result: CoSearchResult) -> dict[str, Any]:
    """Write ``search.json``, ``candidates.parquet`` (one row per design), ``hw.yaml`` and
    ``best.m`` (the best design's hardware and mappings: ``accelsim simulate --hw hw.yaml
    --mapping best.m`` runs them) and ``summary.json``; returns the summary."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "search.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    result.frame.to_parquet(out / "candidates.parquet", index=False)
    frame = result.frame
    summary: dict[str, Any] = {
        "accelsim": __version__, "settings": settings, "network": network, "co_search": True,
        "layers": [layer.name for layer in layers], "scored": len(frame),
        "legal": int((frame["status"] == "ok").sum()) if len(frame) else 0,
        "illegal": ({str(k): int(v) for k, v in frame.loc[frame["status"] != "ok", "reason"].value_counts().items()}
                    if len(frame) else {}),
        "stopped": result.stopped, "generations": result.generations,
        "best": {k: v for k, v in result.best.items() if k != "key"} if result.best else None,
    }
    if result.best_hw is not None:
        summary["hw"] = result.best_hw.name
        summary["area"] = design_area(result.best_hw).to_dict()
        (out / "hw.yaml").write_text(dump_hardware(result.best_hw), encoding="utf-8")
        jobs = [Job(layer, tuple(dataflow), "co-search") for layer, dataflow in zip(layers, result.best_dataflows)]
        (out / "best.m").write_text(write_maestro(to_maestro(network, jobs)), encoding="utf-8")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    return summary

