"""Schedulers: which sub-accelerator runs which job in which order.

MAGMA's encoding (thesis Sec. 7.1.1): an individual is two genomes of one gene per job, the
*sub-accelerator selection* (an integer) and the *job priority* (a real in [0, 1), 0 first);
each sub-accelerator runs its jobs by increasing priority. MAGMA's GA (Sec. 7.2.2) keeps the
elite, and breeds children by mutation (rate 0.05: a gene set to a random value),
crossover-gen (rate 0.9: one genome, one pivot, the genes after it from the other parent),
crossover-rg (0.05: a range of jobs, both genomes, from the other parent) and crossover-accel
(0.05: the other parent's jobs on one sub-accelerator, with their priorities, copied; the
jobs the child had there moved to random sub-accelerators). Genes are repaired so a job only
goes to a sub-accelerator it fits. Baselines: ``herald`` (Herald-like: jobs in arrival order,
each to the sub-accelerator where it would finish earliest given its no-stall latency there:
dataflow-aware load balancing), ``aimt`` (AI-MT-like, made for homogeneous arrays: jobs to
the least-loaded sub-accelerator by their mean latency over all of them, each
sub-accelerator's jobs ordered to alternate memory-heavy and compute-heavy ones), ``random``
(random individuals, the best kept). Every search scores an individual by ``score`` (lower
is better: Algorithm 1's makespan or the simulated one) and stops after ``budget`` scores.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from accelsim.system.analysis import JobTable
from accelsim.system.run import Schedule

SCHEDULERS = ("magma", "herald", "aimt", "random")
MUTATION_RATE = 0.05
CROSSOVER_GEN_RATE = 0.9
CROSSOVER_RG_RATE = 0.05
CROSSOVER_ACCEL_RATE = 0.05
ELITE_RATIO = 0.1
DEFAULT_POPULATION = 50


@dataclass
class Individual:
    """MAGMA's two genomes: sub-accelerator per job, priority per job."""

    accel: np.ndarray  # int, one per job
    priority: np.ndarray  # float in [0, 1), one per job

    def copy(self) -> "Individual":
        return Individual(self.accel.copy(), self.priority.copy())


def decode_with(ind: Individual, n_subs: int, position: np.ndarray) -> Schedule:
    order: list[list[int]] = [[] for _ in range(n_subs)]
    for j in np.argsort(position, kind="stable"):
        order[int(ind.accel[j])].append(int(j))
    return Schedule(tuple(tuple(o) for o in order), tuple(int(p) for p in position))


@dataclass
class SearchResult:
    """The best schedule a scheduler found, its score, how many it scored and the seconds."""

    schedule: Schedule
    score: float
    evaluated: int
    seconds: float
    candidates: tuple[Schedule, ...] = ()  # for a second stage to re-rank (magma: its best and its seeds)


class Search:
    """What every scheduler needs: the job table (fit and costs), the number of
    sub-accelerators, the scoring function and a random generator."""

    def __init__(self, table: JobTable, score: Callable[[Schedule], float], seed: int = 0):
        self.table = table
        self.n_jobs = len(table.cost)
        self.n_subs = len(table.system.subs)
        self.fits = np.array([[c is not None for c in row] for row in table.cost], dtype=bool).reshape(
            self.n_jobs, self.n_subs)
        self.latency = np.array([[c.latency_cycles if c else np.inf for c in row] for row in table.cost],
                                dtype=float).reshape(self.n_jobs, self.n_subs)
        self.ask = np.array([[c.bandwidth_bytes_per_cycle if c else 0.0 for c in row] for row in table.cost],
                            dtype=float).reshape(self.n_jobs, self.n_subs)
        self.score_fn = score
        self.rng = np.random.default_rng(seed)
        self.evaluated = 0

    def schedule(self, ind: Individual) -> Schedule:
        rank = np.lexsort((np.arange(self.n_jobs), ind.priority))
        position = np.empty(self.n_jobs, dtype=np.int64)
        position[rank] = np.arange(self.n_jobs)
        return decode_with(ind, self.n_subs, position)

    def score(self, ind: Individual) -> float:
        self.evaluated += 1
        return self.score_fn(self.schedule(ind))

    def repair(self, ind: Individual) -> Individual:
        """Move every job on a sub-accelerator it does not fit to a random one it fits."""
        bad = ~self.fits[np.arange(self.n_jobs), ind.accel]
        for j in np.flatnonzero(bad):
            ind.accel[j] = self.rng.choice(np.flatnonzero(self.fits[j]))
        return ind

    def random_individual(self) -> Individual:
        return self.repair(Individual(self.rng.integers(0, self.n_subs, self.n_jobs), self.rng.random(self.n_jobs)))

    def from_schedule(self, schedule: Schedule) -> Individual:
        accel = np.zeros(self.n_jobs, dtype=np.int64)
        for s, order in enumerate(schedule.order):
            accel[list(order)] = s
        priority = (np.array(schedule.priority, dtype=float) + 0.5) / max(1, self.n_jobs)
        return Individual(accel, priority)


def herald(search: Search) -> Schedule:
    """Herald-like: in arrival order, each job to the sub-accelerator where it ends earliest."""
    load = np.zeros(search.n_subs)
    accel = np.zeros(search.n_jobs, dtype=np.int64)
    for j in range(search.n_jobs):
        finish = load + search.latency[j]
        s = int(np.argmin(finish))
        accel[j], load[s] = s, finish[s]
    return search.schedule(Individual(accel, np.arange(search.n_jobs) / max(1, search.n_jobs)))


def aimt(search: Search) -> Schedule:
    """AI-MT-like: least-loaded assignment by mean latency (blind to heterogeneity), then on
    each sub-accelerator memory-heavy and compute-heavy jobs alternate (AI-MT's interleaving)."""
    finite = np.where(search.fits, search.latency, np.nan)
    mean = np.nanmean(finite, axis=1)
    load = np.zeros(search.n_subs)
    accel = np.zeros(search.n_jobs, dtype=np.int64)
    for j in range(search.n_jobs):
        candidates = np.flatnonzero(search.fits[j])
        s = int(candidates[np.argmin(load[candidates])])
        accel[j] = s
        load[s] += mean[j]
    intensity = search.ask[np.arange(search.n_jobs), accel]
    priority = np.zeros(search.n_jobs)
    for s in range(search.n_subs):
        mine = np.flatnonzero(accel == s)
        by_ask = list(mine[np.argsort(-intensity[mine], kind="stable")])
        alternating = []
        while by_ask:
            alternating.append(by_ask.pop(0))
            if by_ask:
                alternating.append(by_ask.pop())
        for k, j in enumerate(alternating):
            priority[j] = k / max(1, len(mine))
    return search.schedule(Individual(accel, priority))


def random_search(search: Search, budget: int) -> tuple[Schedule, float]:
    best, best_score = None, np.inf
    for _ in range(max(1, budget)):
        ind = search.random_individual()
        s = search.score(ind)
        if s < best_score:
            best, best_score = ind, s
    assert best is not None
    return search.schedule(best), float(best_score)


def magma(search: Search, budget: int, population: int = DEFAULT_POPULATION,
          seeds: tuple[Schedule, ...] = ()) -> list[tuple[float, Schedule]]:
    """MAGMA's GA for ``budget`` scores (the first generation: ``seeds`` and random ones); the
    last generation's distinct schedules with their scores, best first."""
    rng, n, subs = search.rng, search.n_jobs, search.n_subs
    pop = [search.from_schedule(s) for s in seeds][:population]
    pop += [search.random_individual() for _ in range(population - len(pop))]
    scores = [search.score(ind) for ind in pop]
    n_elite = max(1, int(round(ELITE_RATIO * population)))
    while search.evaluated < budget:
        ranked = [pop[i] for i in np.argsort(scores, kind="stable")]
        parents = ranked[:max(2, population // 2)]
        children = [ind.copy() for ind in ranked[:n_elite]]
        child_scores = [scores[i] for i in np.argsort(scores, kind="stable")[:n_elite]]
        while len(children) < population and search.evaluated < budget:
            dad, mom = (parents[i] for i in rng.choice(len(parents), 2, replace=False))
            son = dad.copy()
            if rng.random() < CROSSOVER_GEN_RATE:  # one genome, one pivot
                pivot = int(rng.integers(0, n))
                if rng.random() < 0.5:
                    son.accel[pivot:] = mom.accel[pivot:]
                else:
                    son.priority[pivot:] = mom.priority[pivot:]
            if rng.random() < CROSSOVER_RG_RATE:  # a range of jobs, both genomes
                a, b = sorted(rng.integers(0, n + 1, 2))
                son.accel[a:b], son.priority[a:b] = mom.accel[a:b], mom.priority[a:b]
            if rng.random() < CROSSOVER_ACCEL_RATE:  # mom's jobs on one sub-accelerator
                s = int(rng.integers(0, subs))
                had = np.flatnonzero(son.accel == s)
                son.accel[had] = rng.integers(0, subs, len(had))
                hers = np.flatnonzero(mom.accel == s)
                son.accel[hers], son.priority[hers] = s, mom.priority[hers]
            hit = rng.random(n) < MUTATION_RATE
            son.accel[hit] = rng.integers(0, subs, int(hit.sum()))
            hit = rng.random(n) < MUTATION_RATE
            son.priority[hit] = rng.random(int(hit.sum()))
            search.repair(son)
            children.append(son)
            child_scores.append(search.score(son))
        pop, scores = children, child_scores
    distinct: dict[Schedule, float] = {}
    for i in np.argsort(scores, kind="stable"):
        distinct.setdefault(search.schedule(pop[i]), float(scores[i]))
    return [(score, schedule) for schedule, score in distinct.items()]


def run_scheduler(name: str, search: Search, budget: int, top_k: int = 2) -> SearchResult:
    """Run scheduler ``name`` (one of SCHEDULERS); heuristics score their one schedule. MAGMA's
    candidates for a second stage: its ``top_k`` best schedules and its two seeds."""
    t0 = time.perf_counter()
    candidates: tuple[Schedule, ...] = ()
    if name == "herald":
        schedule = herald(search)
        score = search.score(search.from_schedule(schedule))
    elif name == "aimt":
        schedule = aimt(search)
        score = search.score(search.from_schedule(schedule))
    elif name == "random":
        schedule, score = random_search(search, budget)
    elif name == "magma":
        seeds = (herald(search), aimt(search))
        ranked = magma(search, budget, seeds=seeds)
        score, schedule = ranked[0]
        candidates = tuple(dict.fromkeys([s for _, s in ranked[:top_k]] + list(seeds)))
    else:
        raise ValueError(f"unknown scheduler {name!r}; expected one of {', '.join(SCHEDULERS)}")
    return SearchResult(schedule, score, search.evaluated, time.perf_counter() - t0, candidates)
