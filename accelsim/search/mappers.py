"""Reference mappers: random sampling, a GAMMA-style genetic algorithm, a dMazeRunner-style
pruned exhaustive search. All draw genomes from one :class:`SearchSpace`, are seeded and
deterministic (the same seed and the same scores give the same candidates), and talk to the
search loop the same way: :meth:`ask` for the next batch of candidates (empty when done),
:meth:`tell` with the evaluator's rows for them (in order; possibly fewer rows when the budget
ran out mid-batch).

GAMMA (Kao's thesis, Sec. 4.3): a population of genomes, first all one-level; each generation's
children come from a parent subset (the best quarter): crossover interchanges tile sizes of two
parents, mutation picks a new parallel dimension or a new tile or cluster size, reorder swaps two
genes, growth appends a random innermost level, aging removes it. An illegal genome's fitness is
-inf (the thesis' constraint handling); the next population is the best of parents and
children, one genome per schedule. Known genomes (``seeds``: the named styles' mappings that are
genomes of the space) may start the first generation in place of random ones.

Exhaustive (dMazeRunner, Sec. 4.2): every genome of the space, except that loop orders are only
told apart among the loops that iterate (a dimension whose tile equals its parent's makes no
loop), and pruned before any model runs: tiles that do not fit L1 or L2, reductions without a
reduction network, and a PE utilization below ``min_utilization`` (the share of PEs a full step
keeps busy). With ``unique_reuse``, each level's loop orders are further cut to one per distinct
operand reuse (dMazeRunner's Table 2, :mod:`accelsim.search.reuse`).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol, TypeVar

import pandas as pd

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.search.candidates import Candidate
from accelsim.search.genome import Gene, Genome
from accelsim.search.legality import check_candidate
from accelsim.search.reuse import tensor_dims, unique_reuse_orders
from accelsim.search.space import SearchSpace

_T = TypeVar("_T")


class Mapper(Protocol):
    """What the search loop needs of a mapper."""

    name: str

    def ask(self) -> list[Candidate]:
        """The next candidates to score (empty: the mapper has nothing more to propose)."""
        ...

    def tell(self, frame: pd.DataFrame) -> None:
        """The evaluator's rows for the first ``len(frame)`` candidates of the last ask."""
        ...

    def info(self) -> dict[str, Any]:
        """Plain facts for the search summary (settings, coverage)."""
        ...


class RandomMapper:
    """Genomes drawn uniformly from the space (level count, cluster sizes, parallel dimension,
    order and tiles), ``batch`` at a time."""

    name = "random"

    def __init__(self, space: SearchSpace, seed: int = 0, batch: int = 64):
        self.space, self.batch, self.seed = space, batch, seed
        self.rng = random.Random(seed)

    def ask(self) -> list[Candidate]:
        return [self.space.random_genome(self.rng) for _ in range(self.batch)]

    def tell(self, frame: pd.DataFrame) -> None:
        pass

    def info(self) -> dict[str, Any]:
        return {"mapper": self.name, "seed": self.seed, "batch": self.batch}


@dataclass(frozen=True)
class GammaRates:
    """Probabilities per child of each GAMMA operator (the thesis uses 0.5 for all) and the
    share of the population that parents the next generation."""

    crossover: float = 0.5
    mutate_parallel_dim: float = 0.5
    mutate_tile: float = 0.5
    reorder: float = 0.5
    growth: float = 0.5
    aging: float = 0.5
    parents: float = 0.25

    def parent_count(self, population: int) -> int:
        """How many of a ``population``'s best parent the next generation: its ``parents``
        share, at least two."""
        return max(2, round(population * self.parents))


@dataclass
class _Member:
    fitness: float
    key: str
    genome: Genome


class GammaMapper:
    """GAMMA's genetic algorithm over ``space`` (see the module docstring)."""

    name = "gamma"

    def __init__(self, space: SearchSpace, seed: int = 0, population: int = 50, rates: GammaRates = GammaRates(),
                 seeds: tuple[Genome, ...] = ()):
        if population < 2:
            raise ValueError(f"a population needs at least 2 genomes, got {population}")
        self.space, self.size, self.rates, self.seed = space, population, rates, seed
        self.rng = random.Random(seed)
        self.population: list[_Member] = []
        self.generation = 0
        self._asked: list[Genome] = []
        # known genomes that start the first generation (those of the space, at most half of it)
        self.seeds = tuple(g for g in dict.fromkeys(seeds) if space.repair(g) == g)[:population // 2]

    def ask(self) -> list[Candidate]:
        if self.generation == 0:
            self._asked = list(self.seeds) + [self.space.random_genome(self.rng, self.space.min_levels)
                                              for _ in range(self.size - len(self.seeds))]
        else:
            self._asked = [self._child() for _ in range(self.size)]
        return list(self._asked)

    def tell(self, frame: pd.DataFrame) -> None:
        scored = [_Member(f, k, g) for f, k, g in zip(frame["fitness"].tolist(), frame["key"].tolist(), self._asked)]
        pool = sorted(self.population + scored, key=lambda m: -m.fitness)  # stable: ties keep order
        self.population = survivors(pool, lambda m: m.key, self.size)
        self.generation += 1

    def info(self) -> dict[str, Any]:
        return {"mapper": self.name, "seed": self.seed, "population": self.size, "seeded": len(self.seeds),
                "generations": self.generation, "rates": asdict(self.rates)}

    def _child(self) -> Genome:
        parents = self.population[:self.rates.parent_count(self.size)]
        first = self.rng.choice(parents).genome
        return vary(self.space, self.rng, self.rates, first, lambda: self.rng.choice(parents).genome)


def survivors(pool: Sequence[_T], key: Callable[[_T], str], size: int) -> list[_T]:
    """The first ``size`` members of ``pool`` (sorted best first), one per ``key`` (GAMMA's
    survivor selection; the co-search's too)."""
    seen: set[str] = set()
    out = []
    for member in pool:
        if key(member) not in seen:
            seen.add(key(member))
            out.append(member)
    return out[:size]


# ---------------------------------------------------------------------------------- operators
def vary(space: SearchSpace, rng: random.Random, rates: GammaRates, child: Genome,
         mate: Callable[[], Genome]) -> Genome:
    """GAMMA's operators on ``child`` (first put into ``space``), each with its probability:
    crossover with ``mate()`` (called only when crossover happens), a new parallel dimension, a
    new tile or cluster size, reorder, growth, aging; the result repaired into ``space``. Also
    the mapping half of the co-search's children (:mod:`accelsim.search.cosearch`)."""
    child = space.repair(child)
    if rng.random() < rates.crossover:
        child = _crossover(rng, child, space.repair(mate()))
    if rng.random() < rates.mutate_parallel_dim:
        child = _mutate_parallel_dim(space, rng, child)
    if rng.random() < rates.mutate_tile:
        child = _mutate_tile(space, rng, child)
    if rng.random() < rates.reorder:
        child = _reorder(rng, child)
    if rng.random() < rates.growth:
        child = _grow(space, rng, child)
    if rng.random() < rates.aging:
        child = _age(space, child)
    return space.repair(child)


def _crossover(rng: random.Random, a: Genome, b: Genome) -> Genome:
    """``a`` with, level by level, each dimension's tile taken from ``b`` with probability 1/2
    (the off-chip block's too, when both have one; ``a``'s orders stay)."""
    levels = []
    for i, genes in enumerate(a.levels):
        other = {g.dim: g.tile for g in b.levels[i]} if i < len(b.levels) else {}
        levels.append(_crossed(rng, genes, other))
    offchip = _crossed(rng, a.offchip, {g.dim: g.tile for g in b.offchip})
    return replace(a, levels=tuple(levels), offchip=offchip)


def _crossed(rng: random.Random, genes: tuple[Gene, ...], other: dict[str, int]) -> tuple[Gene, ...]:
    """``genes`` with each tile taken from ``other`` (dimension -> tile) with probability 1/2."""
    return tuple(Gene(g.dim, other[g.dim]) if g.dim in other and rng.random() < 0.5 else g for g in genes)


def _mutate_parallel_dim(space: SearchSpace, rng: random.Random, g: Genome) -> Genome:
    """A new parallel dimension at one level: its gene moves to the front."""
    i = rng.randrange(len(g.levels))
    dim = rng.choice(space.spatial_dims)
    genes = list(g.levels[i])
    j = next(k for k, gene in enumerate(genes) if gene.dim == dim)
    genes[0], genes[j] = genes[j], genes[0]
    return _with_level(g, i, tuple(genes))


def _mutate_tile(space: SearchSpace, rng: random.Random, g: Genome) -> Genome:
    """A new tile for one gene (the off-chip block's included), or a new size for one cluster."""
    slots = [(i, j) for i, genes in enumerate(g.levels) for j in range(len(genes))]
    slots += [(-1, c) for c in range(len(g.clusters))]
    slots += [(-2, j) for j in range(len(g.offchip))]
    i, j = rng.choice(slots)
    if i == -1:
        outer = g.clusters[j - 1] if j else space.num_pes
        clusters = list(g.clusters)
        clusters[j] = rng.choice(space.cluster_options(outer))
        return replace(g, clusters=tuple(clusters))
    if i == -2:
        block = list(g.offchip)
        dim = block[j].dim
        block[j] = Gene(dim, rng.choice(space.tile_options(dim, space.sizes[dim])))
        return replace(g, offchip=tuple(block))
    parent = space.parents(g)[i]
    genes = list(g.levels[i])
    dim = genes[j].dim
    genes[j] = Gene(dim, rng.choice(space.tile_options(dim, parent[dim])))
    return _with_level(g, i, tuple(genes))


def _reorder(rng: random.Random, g: Genome) -> Genome:
    """Two genes of one level swap places (the parallel one keeps its place), or two of the
    off-chip block (a new inter-tile loop order)."""
    i = rng.randrange(len(g.levels) + (1 if g.offchip else 0))
    if i == len(g.levels):
        block = list(g.offchip)
        a, b = rng.sample(range(len(block)), 2) if len(block) > 1 else (0, 0)
        block[a], block[b] = block[b], block[a]
        return replace(g, offchip=tuple(block))
    genes = list(g.levels[i])
    if len(genes) < 3:
        return g
    a, b = rng.sample(range(1, len(genes)), 2)
    genes[a], genes[b] = genes[b], genes[a]
    return _with_level(g, i, tuple(genes))


def _grow(space: SearchSpace, rng: random.Random, g: Genome) -> Genome:
    """A random level appended inside the innermost one (which becomes a level of clusters)."""
    if len(g.levels) >= space.max_levels:
        return g
    outer = g.clusters[-1] if g.clusters else space.num_pes
    options = space.cluster_options(outer)
    if not options:
        return g
    parent = space.parents(g)[-1]
    parent.update({gene.dim: gene.tile for gene in g.levels[-1]})
    level = space.random_level(rng, parent)
    return replace(g, levels=(*g.levels, level), clusters=(*g.clusters, rng.choice(options)))


def _age(space: SearchSpace, g: Genome) -> Genome:
    """The innermost level removed."""
    if len(g.levels) <= space.min_levels:
        return g
    return replace(g, levels=g.levels[:-1], clusters=g.clusters[:-1])


def _with_level(g: Genome, i: int, genes: tuple[Gene, ...]) -> Genome:
    levels = list(g.levels)
    levels[i] = genes
    return replace(g, levels=tuple(levels))


# ---------------------------------------------------------------------------------- exhaustive
def spatial_utilization(cm: CompiledMapping) -> float:
    """Share of the array's PEs a full step keeps busy: per level, the sub-units a fold hands
    windows to on average (only the first one where the level has no moving SpatialMap), times
    the PEs the clusters use. Ragged edges of temporal tiles are not counted."""
    share = cm.used_pes / cm.num_pes
    for level in cm.levels:
        moving = any(d.offset > 0 and d.windows > 1 for d in level.spatial)
        busy = level.spatial_windows / level.folds if moving else 1
        share *= min(busy, level.units) / level.units
    return share


@dataclass
class Coverage:
    """How much of the space the exhaustive search saw: genomes enumerated, pruned (by buffer
    fit and reductions, by utilization) and proposed; ``complete`` once the space is exhausted.
    ``orders_enumerated``: level loop orders the enumeration met (every order of the loops that
    iterate, summed over the levels it built); ``orders_kept``: those it went on with (all of them
    without unique-reuse pruning)."""

    enumerated: int = 0
    orders_enumerated: int = 0
    orders_kept: int = 0
    pruned_illegal: int = 0
    pruned_utilization: int = 0
    proposed: int = 0
    complete: bool = False
    reasons: dict[str, int] = field(default_factory=dict)


class ExhaustiveMapper:
    """Every genome of ``space`` that survives pruning, in a fixed order, ``batch`` at a time."""

    name = "exhaustive"

    def __init__(self, space: SearchSpace, hw: HardwareSpec, min_utilization: float = 0.5, batch: int = 256,
                 unique_reuse: bool = False):
        if not 0 <= min_utilization <= 1:
            raise ValueError(f"min_utilization must lie in 0..1, got {min_utilization}")
        self.space, self.hw, self.min_utilization, self.batch = space, hw, min_utilization, batch
        self.unique_reuse = unique_reuse
        self.coverage = Coverage()
        self._genomes = enumerate_space(space, unique_reuse, self.coverage)

    def ask(self) -> list[Candidate]:
        out: list[Candidate] = []
        for genome in self._genomes:
            self.coverage.enumerated += 1
            legality = check_candidate(self.space.layer, self.hw, genome.directives())
            if not legality.legal or legality.compiled is None:
                self.coverage.pruned_illegal += 1
                reason = legality.reason or "invalid"
                self.coverage.reasons[reason] = self.coverage.reasons.get(reason, 0) + 1
                continue
            if spatial_utilization(legality.compiled) < self.min_utilization:
                self.coverage.pruned_utilization += 1
                continue
            out.append(genome)
            if len(out) == self.batch:
                break
        else:
            self.coverage.complete = True
        self.coverage.proposed += len(out)
        return out

    def tell(self, frame: pd.DataFrame) -> None:
        pass

    def info(self) -> dict[str, Any]:
        return {"mapper": self.name, "min_utilization": self.min_utilization, "unique_reuse": self.unique_reuse,
                **asdict(self.coverage)}


def enumerate_space(space: SearchSpace, unique_reuse: bool = False,
                    coverage: Coverage | None = None) -> Iterator[Genome]:
    """Every genome of the space, loop orders told apart only among dimensions that loop (with
    ``unique_reuse``: only one order per distinct operand reuse); ``coverage`` counts the orders."""
    nest = space.layer.loop_nest()
    orders = _Orders(tensor_dims(nest) if unique_reuse else None, coverage if coverage is not None else Coverage())
    for count in range(space.min_levels, space.max_levels + 1):
        for clusters in _cluster_chains(space, count - 1, space.num_pes):
            yield from (Genome(levels, clusters) for levels in _levels(space, count, dict(nest.dims), orders))


@dataclass
class _Orders:
    """The loop orders a level of the enumeration tries: all, or one per distinct reuse."""

    depends: dict[str, frozenset[str]] | None
    coverage: Coverage

    def __call__(self, looping: list[str]) -> Iterator[tuple[str, ...]]:
        every = math.factorial(len(looping))
        kept = unique_reuse_orders(looping, self.depends) if self.depends is not None else None
        self.coverage.orders_enumerated += every
        self.coverage.orders_kept += every if kept is None else len(kept)
        return iter(kept) if kept is not None else itertools.permutations(looping)


def _cluster_chains(space: SearchSpace, n: int, outer: int) -> Iterator[tuple[int, ...]]:
    if n == 0:
        yield ()
        return
    for c in space.cluster_options(outer):
        for rest in _cluster_chains(space, n - 1, c):
            yield (c, *rest)


def _levels(space: SearchSpace, count: int, parent: dict[str, int],
            orders: _Orders) -> Iterator[tuple[tuple[Gene, ...], ...]]:
    if count == 0:
        yield ()
        return
    dims = list(parent)
    for first in space.spatial_dims:
        others = [d for d in dims if d != first]
        for tiles in itertools.product(*(space.tile_options(d, parent[d]) for d in dims)):
            tile = dict(zip(dims, tiles))
            looping = [d for d in others if tile[d] < parent[d]]
            inert = [d for d in others if tile[d] == parent[d]]
            inner_parent = {**parent, **tile}
            for order in orders(looping):
                genes = tuple(Gene(d, tile[d]) for d in (first, *order, *inert))
                for rest in _levels(space, count - 1, inner_parent, orders):
                    yield (genes, *rest)
