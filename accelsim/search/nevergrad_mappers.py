"""The baseline optimizers the GAMMA/DiGamma papers compare against, from Nevergrad, over the same
genomes and scored by the same evaluator as every other mapper (``pip install 'accelsim[nevergrad]'``).

A genome of a :class:`SearchSpace` is read from a point of the unit cube ``[0, 1]^n`` (the
optimizers work on real vectors), in this order:

- one coordinate for the level count (``min_levels``..``max_levels``),
- one per inner level for its cluster size (among the sizes allowed under the level above),
- per level (``max_levels`` of them; those beyond the count are unused): one for the parallel
  dimension, one *random key* per dimension (the other dimensions loop in ascending key order,
  outermost first: the usual encoding of a permutation for real-valued optimizers) and one per
  dimension for its tile (among the sizes allowed under the parent tile).

A coordinate ``u`` picks ``options[min(floor(u * len(options)), len(options) - 1)]``, so every
point is a genome of the space and every genome of the space is some point's. An illegal genome
(it does not fit, say) is told to the optimizer with a loss of :data:`ILLEGAL_LOSS` (4e20), far
above any cost (Nevergrad's optimizers need finite losses and clip them at 5e20; GAMMA gives
-inf fitness).

The optimizers (Kao's thesis, Table 4.4 and Sec. 6.3: settings from its table where Nevergrad
exposes them, else Nevergrad's defaults):

====================  ==========================================================================
``ng-ga``             standard GA: Nevergrad's ``EvolutionStrategy`` with recombination ratio 0.1
                      (the thesis' crossover rate) and a population of ``population``
``ng-de``             differential evolution, F1 = F2 = 0.8 (the thesis' local and global weights)
``ng-cma``            CMA-ES (its default elite: the best half of each population)
``ng-tbpsa``          test-based population-size adaptation, initial population ``population``
``ng-pso``            particle swarm, cognitive and social weights 0.8 (the thesis' value); the
                      inertia stays Nevergrad's 0.72 (the thesis' 1.6 makes velocities diverge)
``ng-oneplusone``     (1+1)-ES
``ng-portfolio``      Nevergrad's passive portfolio (several optimizers sharing the budget)
====================  ==========================================================================

Each is seeded (the parametrization's random state), so the same seed and the same scores give the
same candidates.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from accelsim.errors import InputError
from accelsim.search.candidates import Candidate
from accelsim.search.genome import Gene, Genome
from accelsim.search.space import SearchSpace

ILLEGAL_LOSS = 4e20  # below the 5e20 at which Nevergrad clips a loss (and warns)

# mapper name -> what the module docstring's table says it is
NEVERGRAD_MAPPERS = ("ng-ga", "ng-de", "ng-cma", "ng-tbpsa", "ng-pso", "ng-oneplusone", "ng-portfolio")


def _optimizer_family(name: str, population: int) -> Any:
    """The Nevergrad optimizer class or configured family of ``name`` (see the module docstring)."""
    try:
        import nevergrad as ng
    except ImportError:
        raise InputError(f"--mapper {name} needs Nevergrad: pip install 'accelsim[nevergrad]'") from None
    families = ng.families
    return {
        "ng-ga": lambda: families.EvolutionStrategy(recombination_ratio=0.1, popsize=population),
        "ng-de": lambda: families.DifferentialEvolution(F1=0.8, F2=0.8),
        "ng-cma": lambda: ng.optimizers.registry["CMA"],
        "ng-tbpsa": lambda: families.ParametrizedTBPSA(naive=False, initial_popsize=population),
        "ng-pso": lambda: families.ConfPSO(phip=0.8, phig=0.8),
        "ng-oneplusone": lambda: ng.optimizers.registry["OnePlusOne"],
        "ng-portfolio": lambda: ng.optimizers.registry["Portfolio"],
    }[name]()


@dataclass(frozen=True)
class UnitCubeGenomes:
    """Reads genomes of ``space`` from points of the unit cube (the module docstring's layout)."""

    space: SearchSpace

    @property
    def size(self) -> int:
        levels, dims = self.space.max_levels, len(self.space.dims)
        return 1 + (levels - 1) + levels * (1 + 2 * dims)

    def genome(self, point: np.ndarray) -> Genome:
        space, dims = self.space, self.space.dims
        count = _pick(tuple(range(space.min_levels, space.max_levels + 1)), point[0])
        clusters_at = 1
        level_at = space.max_levels
        parent = dict(space.layer.loop_nest().dims)
        outer = space.num_pes
        levels: list[tuple[Gene, ...]] = []
        clusters: list[int] = []
        for i in range(count):
            if i:
                options = space.cluster_options(outer)
                if not options:
                    break
                outer = _pick(options, point[clusters_at + i - 1])
                clusters.append(outer)
            base = level_at + i * (1 + 2 * len(dims))
            first = _pick(space.spatial_dims, point[base])
            keys = dict(zip(dims, point[base + 1:base + 1 + len(dims)]))
            tiles = dict(zip(dims, point[base + 1 + len(dims):base + 1 + 2 * len(dims)]))
            rest = sorted((d for d in dims if d != first), key=lambda d: keys[d])
            genes = tuple(Gene(d, _pick(space.tile_options(d, parent[d]), tiles[d])) for d in (first, *rest))
            levels.append(genes)
            parent.update({g.dim: g.tile for g in genes})
        return Genome(tuple(levels), tuple(clusters))


def _pick(options: tuple[Any, ...], u: float) -> Any:
    return options[min(max(int(math.floor(float(u) * len(options))), 0), len(options) - 1)]


class NevergradMapper:
    """A Nevergrad optimizer (``name``, one of :data:`NEVERGRAD_MAPPERS`) over ``space``'s genomes:
    ``batch`` candidates per ask (the optimizer's ``num_workers``), ``budget`` its planned
    number of evaluations."""

    def __init__(self, name: str, space: SearchSpace, seed: int = 0, budget: int = 2000, batch: int = 10,
                 population: int = 50):
        family = _optimizer_family(name, population)  # InputError without Nevergrad
        import nevergrad as ng

        self.name, self.space, self.seed, self.batch = name, space, seed, batch
        self.decoder = UnitCubeGenomes(space)
        parametrization = ng.p.Array(shape=(self.decoder.size,), lower=0.0, upper=1.0)
        parametrization.random_state = np.random.RandomState(seed)
        with warnings.catch_warnings():  # e.g. "inefficient with budget < 60": a small budget is the user's choice
            warnings.simplefilter("ignore", ng.errors.InefficientSettingsWarning)
            self.optimizer = family(parametrization=parametrization, budget=budget, num_workers=batch)
        self._asked: list[Any] = []
        self.told = 0

    def ask(self) -> list[Candidate]:
        self._asked = [self.optimizer.ask() for _ in range(self.batch)]
        return [self.decoder.genome(c.value) for c in self._asked]

    def tell(self, frame: pd.DataFrame) -> None:
        for candidate, cost in zip(self._asked, frame["cost"]):
            self.optimizer.tell(candidate, float(cost) if math.isfinite(cost) else ILLEGAL_LOSS)
            self.told += 1

    def info(self) -> dict[str, Any]:
        return {"mapper": self.name, "seed": self.seed, "batch": self.batch, "told": self.told,
                "optimizer": str(self.optimizer.name), "dimensions": self.decoder.size}
