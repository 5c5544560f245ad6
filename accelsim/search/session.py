"""``accelsim search``: search every layer of a network or mapping file and keep what it finds.

For each layer the named styles' mappings are scored first (:mod:`accelsim.search.seeds`; GAMMA's first
generation starts from those that are genomes), then a mapper (random, gamma, exhaustive, or a
Nevergrad baseline: :mod:`accelsim.search.nevergrad_mappers`)
proposes genomes of the layer's default :class:`SearchSpace`, one model scores them (``analytical``, ``sim``, ``maestro``; ``two-stage``:
the analytical model screens every candidate and the simulator re-ranks the best ``top_k``),
and the output directory (:mod:`accelsim.search.outdir`) receives every scored row as it comes
(held a moment and written in parts; a layer's rows are on disk before ``summary.json`` names it),
the best mapping of each finished layer (``best.m``), the summary and the convergence plot.
With several workers, several layers are searched at once (their batches share the workers:
:mod:`accelsim.search.overlap`); each layer's mapper sees exactly what it would see alone, so the
results do not depend on the executor or the worker count; the rows of layers searched at once
reach ``candidates.parquet`` interleaved (each with its layer and ``sample`` number).

Resuming replays the search from its seed: the mappers are deterministic, so they propose the
same candidates again, which are answered from the saved rows (not scored, not saved twice)
until the search reaches the point where it was interrupted and goes on from there.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import MISSING, asdict, dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from accelsim import __version__
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import Directive
from accelsim.mapping.jobs import Job, jobs_from_mapping_file
from accelsim.mapping.timeloop_files import read_files, timeloop_job
from accelsim.search.candidates import parse_dataflow
from accelsim.search.cosearch import COSEARCH_OBJECTIVES, CoSearchConfig, cosearch, rate_problems, write_cosearch
from accelsim.search.evaluate import OBJECTIVES, Evaluator, columns
from accelsim.search.genome import MAX_LEVELS, Genome
from accelsim.search.executors import Executor
from accelsim.search.mappers import ExhaustiveMapper, GammaMapper, Mapper, RandomMapper
from accelsim.cost_models import SIMULATOR, model_names
from accelsim.search.marvel import MarvelMapper
from accelsim.search.nevergrad_mappers import NEVERGRAD_MAPPERS, NevergradMapper
from accelsim.search.models import inner_level_columns
from accelsim.search.outdir import SearchDir, stored_columns
from accelsim.search.overlap import Screening, run_overlapped
from accelsim.search.run import (LayerSearch, Reranking, best_position, best_row, rerank_steps, row_at,
                                 search_steps)
from accelsim.search.seeds import named_style_seeds, seed_genomes
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

MAPPERS = ("gamma", "random", "exhaustive", "marvel", *NEVERGRAD_MAPPERS)
TWO_STAGE = "two-stage"
SCREEN = "analytical"


class Progress(Protocol):
    """Told how a search goes: ``scored`` new rows of ``layer`` and the layer's best cost so far;
    0 rows (``done`` False): the layer's search starts; ``done``: it has ended (several layers may
    be in flight at once, see :func:`accelsim.search.overlap.run_overlapped`)."""

    def __call__(self, scored: int, best: float | None, layer: str, done: bool = False) -> None:
        ...


def search_models() -> tuple[str, ...]:
    """What ``--model`` accepts: every scoring model and ``two-stage``."""
    return (*model_names(), TWO_STAGE)


@dataclass(frozen=True)
class SearchSettings:
    """What defines a search (a resumed one must be asked the same): the hardware (preset or
    file, ``--set`` overrides), the layers (a network or a mapping file, optionally one layer),
    the mapper and its budget per layer, objective, model, fidelity mode, re-ranked count, seed,
    and the space and mapper knobs."""

    hw: str | None
    overrides: tuple[str, ...] = ()
    network: str | None = None
    mapping: str | None = None
    layer: str | None = None
    mapper: str = "gamma"
    budget: int = 2000
    objective: str = "latency"
    model: str = "analytical"
    mode: str = "realistic"
    top_k: int = 10
    seed: int = 0
    max_levels: int = 3
    population: int = 50
    min_utilization: float = 0.5
    work_budget: float | None = None  # per candidate, for the scoring model; None: its default
    style_seeds: bool = True  # score the named styles' mappings first (and seed GAMMA with them)
    timeloop: tuple[str, ...] = ()  # Timeloop's files: the problem is the layer, the architecture the hardware
    unique_reuse: bool = False  # exhaustive: one loop order per distinct operand reuse (dMazeRunner)
    co_search: bool = False  # hardware genes too (DiGamma): accelsim.search.cosearch; budget counts designs
    hw_ranges: tuple[str, ...] = ()  # co-search: FIELD=LOW:HIGH
    area_budget_mm2: float | None = None  # co-search: designs over it are illegal (area_budget)
    size_buffers: bool = False  # co-search: L1 and L2 sized to the mappings' need
    vary_layers: float | None = None  # co-search: layers' genomes a child varies, on average (None: CoSearchConfig's)
    mutate_hw: float | None = None  # co-search: probability of Mutate-HW per child (None: CoSearchConfig's)
    offchip_genes: bool = False  # gamma/random: genomes pin the L2 tile and inter-tile order (off-chip block)
    fill_area: float | None = None  # co-search: probability of Fill-area per child (None: CoSearchConfig's)
    refine: float | None = None  # co-search: share of the budget spent on the best hardware (None: CoSearchConfig's)

    def __post_init__(self) -> None:
        if sum((self.network is not None, self.mapping is not None, bool(self.timeloop))) != 1:
            raise InputError("give exactly one of --network NAME, --mapping FILE.m or --timeloop FILE (repeated)")
        if self.hw is None and not self.timeloop:
            raise InputError("missing option --hw (or give Timeloop's files with --timeloop)")
        checks = [(self.mapper in MAPPERS, f"--mapper {self.mapper}: expected one of {', '.join(MAPPERS)}"),
                  (self.objective in OBJECTIVES or (self.co_search and self.objective in COSEARCH_OBJECTIVES),
                   f"--objective {self.objective}: expected one of {', '.join(OBJECTIVES)} (latency-area: with "
                   "--co-search)"),
                  (self.model in search_models(), (f"--model {self.model}: expected one of "
                   f"{', '.join(search_models())}")),
                  (self.budget >= 1, f"--budget must be at least 1, got {self.budget}"),
                  (self.top_k >= 1, f"--top-k must be at least 1, got {self.top_k}"),
                  (1 <= self.max_levels <= MAX_LEVELS, f"--max-levels must be 1, 2 or 3, got {self.max_levels}"),
                  (self.population >= 2, f"--population must be at least 2, got {self.population}"),
                  (0 <= self.min_utilization <= 1, f"--min-utilization must lie in 0..1, got {self.min_utilization}"),
                  (self.work_budget is None or self.work_budget > 0,
                   f"--work-budget must be positive, got {self.work_budget}"),
                  (not self.unique_reuse or self.mapper == "exhaustive",
                   f"--unique-reuse prunes the exhaustive mapper's loop orders; --mapper is {self.mapper}"),
                  (self.co_search or not (self.hw_ranges or self.area_budget_mm2 is not None or self.size_buffers
                                          or self.vary_layers is not None or self.mutate_hw is not None
                                          or self.fill_area is not None or self.refine is not None),
                   "--hw-range, --area-budget-mm2, --size-buffers, --vary-layers, --mutate-hw, --fill-area and "
                   "--refine belong to --co-search"),
                  *((False, problem) for problem in rate_problems(self.vary_layers, self.mutate_hw, self.fill_area,
                                                                   self.refine)),
                  (not self.offchip_genes or (self.mapper in ("gamma", "random") and not self.co_search),
                   f"--offchip-genes adds genes to the genomes of --mapper gamma or random; --mapper is "
                   f"{self.mapper}{' with --co-search' if self.co_search else ''}"),
                  (not self.co_search or (self.mapper == "gamma" and self.model != TWO_STAGE and not self.timeloop),
                   "--co-search runs DiGamma's GA (--mapper gamma) with one scoring model, on --network or --mapping")]
        for ok, message in checks:
            if not ok:
                raise InputError(message)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Each setting's default, as :meth:`to_dict` writes it (what a search saved before the
        setting existed ran with)."""
        return {f.name: list(f.default) if isinstance(f.default, tuple) else f.default
                for f in fields(cls) if f.default is not MISSING}

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["overrides"] = list(self.overrides)
        out["timeloop"] = list(self.timeloop)
        out["hw_ranges"] = list(self.hw_ranges)
        return out


def _style_costs(ev: Evaluator, named: dict[str, tuple[Directive, ...]]) -> Screening[dict[str, float | None]]:
    """Each named style's cost under ``ev``'s model (None: illegal or skipped), for the styles
    the search scored (a budget smaller than their number leaves the last out); nothing new is
    scored."""
    frame = yield from ev.evaluate_steps(list(named.values()), limit=0)
    return {style: float(row["cost"]) if row["status"] == "ok" else None
            for style, (_, row) in zip(named, frame.iterrows())}


def make_mapper(settings: SearchSettings, space: SearchSpace, hw: HardwareSpec,
                seeds: tuple[Genome, ...] = ()) -> Mapper:
    if settings.mapper == "gamma":
        return GammaMapper(space, settings.seed, settings.population, seeds=seeds)
    if settings.mapper == "random":
        return RandomMapper(space, settings.seed)
    if settings.mapper in NEVERGRAD_MAPPERS:
        return NevergradMapper(settings.mapper, space, settings.seed, settings.budget, population=settings.population)
    if settings.mapper == "marvel":
        return MarvelMapper(space.layer, hw, settings.seed, settings.min_utilization)
    return ExhaustiveMapper(space, hw, settings.min_utilization, unique_reuse=settings.unique_reuse)


def _layers(settings: SearchSettings, num_pes: int) -> tuple[str, list[Layer]]:
    """The network's name and the layers to search (a mapping file's dataflows are not used)."""
    if settings.mapping is not None:  # a MAESTRO .m or a loop-nest .yaml file
        name, jobs = jobs_from_mapping_file(settings.mapping, num_pes, settings.layer)
        return name, [job.layer for job in jobs]
    if settings.network is None:
        raise InputError("give --network NAME or --mapping FILE.m: the layers to search")
    net = load_network(settings.network)
    return net.name, [net.layer(settings.layer)] if settings.layer is not None else list(net.layers)


class _Saver:
    """Numbers a layer/model's new rows in the order scored and saves those not saved before."""

    def __init__(self, out: SearchDir, known: set[str], progress: Progress | None, counts: bool):
        self.out, self.known, self.progress, self.counts = out, known, progress, counts
        self.sample = 0
        self.best: float | None = None
        self.best_row: dict[str, Any] | None = None  # the legal row of least cost so far

    def __call__(self, rows: pd.DataFrame) -> None:
        rows = rows.assign(sample=range(self.sample, self.sample + len(rows)))
        self.sample += len(rows)
        keys = rows["key"].tolist()
        fresh = [i for i, key in enumerate(keys) if key not in self.known]
        if fresh:
            self.out.append(rows if len(fresh) == len(rows) else rows.iloc[fresh])
            self.known.update(keys[i] for i in fresh)
        best = best_position(rows)
        if best is not None:
            cost = float(rows["cost"].to_numpy()[best])
            if self.best is None or cost < self.best:
                self.best, self.best_row = cost, row_at(rows, best)
        if self.progress is not None and self.counts:
            self.progress(len(rows), self.best, str(rows["layer"].iloc[0]) if len(rows) else "")


def run_search(settings: SearchSettings, out: Path, executor: Executor, resume: bool = False,
               progress: Progress | None = None) -> dict[str, Any]:
    """Search every layer (see the module docstring); returns the summary written to
    ``summary.json``. InputError for bad settings or an unusable ``out``; KeyboardInterrupt
    leaves ``out`` resumable."""
    if settings.timeloop:  # the problem's layer on the architecture (or on --hw)
        t = timeloop_job(read_files(list(dict.fromkeys(settings.timeloop))), settings.overrides, settings.hw,
                         mapping_used=False)
        hw, network, layers = t.hw, t.name, [job.layer for job in t.jobs]
    else:
        hw = load_hardware(settings.hw or "", list(settings.overrides))
        network, layers = _layers(settings, hw.num_pes)
    if settings.co_search:
        return _co_search(settings, hw, network, layers, out, executor, resume, progress)
    with SearchDir(out, settings.to_dict(), resume, SearchSettings.defaults(), stored_columns(columns(hw))) as directory:
        return _search_layers(settings, hw, network, layers, directory, executor, progress)


def _co_search(settings: SearchSettings, hw: HardwareSpec, network: str, layers: list[Layer], out: Path,
               executor: Executor, resume: bool, progress: Progress | None) -> dict[str, Any]:
    """``--co-search``: one DiGamma search over hardware and every layer's mapping (not resumable)."""
    if resume:
        raise InputError("--resume: a co-search is not resumable; run it again (it is deterministic under --seed)")
    config = CoSearchConfig.make(settings.hw_ranges, area_budget_mm2=settings.area_budget_mm2,
                                 size_buffers=settings.size_buffers, objective=settings.objective,
                                 model=settings.model, mode=settings.mode, budget=settings.budget,
                                 population=settings.population, seed=settings.seed, max_levels=settings.max_levels,
                                 work_budget=settings.work_budget, style_seeds=settings.style_seeds,
                                 **{name: value for name, value in (("vary_layers", settings.vary_layers),
                                                                    ("mutate_hw", settings.mutate_hw),
                                                                    ("fill_area", settings.fill_area),
                                                                    ("refine", settings.refine))
                                    if value is not None})
    result = cosearch(hw, layers, config, executor, progress)
    return write_cosearch(out, settings.to_dict(), network, layers, result)


@dataclass
class _LayerDone:
    """What a layer's search leaves for the output directory: its ``summary.json`` entry, its
    best mapping for ``best.m`` (None: no legal one) and its rows for the convergence plot."""

    entry: dict[str, Any]
    job: Job | None
    frame: pd.DataFrame


def _search_layers(settings: SearchSettings, hw: HardwareSpec, network: str, layers: list[Layer],
                   directory: SearchDir, executor: Executor, progress: Progress | None) -> dict[str, Any]:
    """Search every layer, several at once when there are several workers
    (:func:`accelsim.search.overlap.run_overlapped`); ``summary.json`` and ``best.m`` list the
    layers finished so far in network order, rewritten as each finishes. Interrupted (Ctrl-C,
    SIGTERM, --max-seconds), every layer started and not finished is added as ``interrupted``
    with its best so far."""
    stored = directory.stored()
    summary: dict[str, Any] = {"accelsim": __version__, "settings": settings.to_dict(), "network": network,
                               "hw": hw.name, "layers": []}
    done: dict[int, _LayerDone] = {}
    savers: dict[int, _Saver] = {}  # the screening's saver of each layer started and not finished

    def write() -> None:
        summary["layers"] = [done[i].entry for i in sorted(done)]
        jobs = [job for i in sorted(done) if (job := done[i].job) is not None]
        if jobs:
            directory.write_best(network, jobs)
        directory.write_summary(summary)

    def finished(index: int, result: _LayerDone) -> None:
        savers.pop(index, None)
        done[index] = result
        write()

    screenings = (_layer_steps(settings, hw, layer, stored[stored["layer"] == layer.name], directory, executor,
                               progress, partial(savers.__setitem__, i))
                  for i, layer in enumerate(layers))
    try:
        run_overlapped(screenings, executor, finished)
    except BaseException as exc:  # Ctrl-C, SIGTERM, --max-seconds: keep each started layer's best so far, then stop
        if not isinstance(exc, Exception) and savers:
            for i, saver in savers.items():
                done[i] = _interrupted(layers[i], saver, hw)
            write()
        raise
    directory.write_convergence({layers[i].name: done[i].frame for i in sorted(done)})
    return summary


def _layer_steps(settings: SearchSettings, hw: HardwareSpec, layer: Layer, mine: pd.DataFrame, directory: SearchDir,
                 executor: Executor, progress: Progress | None,
                 started: Callable[[_Saver], None]) -> Screening[_LayerDone]:
    """One layer's search as a screening (:mod:`accelsim.search.overlap`): the named styles, the
    mapper's candidates, two-stage's re-rank; ``mine``: the layer's rows saved before (a resumed
    search); ``started`` gets the saver of its screen's rows."""
    start = time.perf_counter()
    if progress is not None:
        progress(0, None, layer.name)
    screen = SCREEN if settings.model == TWO_STAGE else settings.model
    space = SearchSpace.default(layer, hw.num_pes, max_levels=settings.max_levels, offchip=settings.offchip_genes)
    named = named_style_seeds(layer, hw) if settings.style_seeds else {}
    seeds = list(named.values())
    mapper = make_mapper(settings, space, hw, seed_genomes(space, seeds))
    # marvel's off-chip phase chose the layouts its candidates are scored (and simulated) with
    layouts = mapper.offchip.layouts if isinstance(mapper, MarvelMapper) else None
    with Evaluator(hw, layer, screen, settings.mode, settings.objective, executor=executor,
                   work_budget=settings.work_budget, dram_layouts=layouts) as ev:
        saved = mine[mine["model"] == screen]
        ev.preload(saved)
        saver = _Saver(directory, set(saved["key"]), progress, True)
        started(saver)
        found = yield from search_steps(ev, mapper, settings.budget, saver, seeds)
        styles = yield from _style_costs(ev, named)
    screen_seconds = time.perf_counter() - start
    reranking = None
    if settings.model == TWO_STAGE:
        with Evaluator(hw, layer, SIMULATOR, settings.mode, settings.objective, executor=executor,
                       dram_layouts=layouts) as sim:
            saved = mine[mine["model"] == SIMULATOR]
            sim.preload(saved)
            reranking = yield from rerank_steps(found.frame, sim, settings.top_k,
                                                _Saver(directory, set(saved["key"]), progress, False))
    best = best_row(reranking.frame) if reranking is not None else None
    if best is None:  # one model, or no re-ranked candidate could be simulated: the screen's best
        best = found.best
    entry = {**_layer_summary(layer, hw, found, reranking, best, screen_seconds, time.perf_counter() - start),
             "styles": styles, "screen_best_cost": found.best["cost"] if found.best is not None else None,
             "simulate": _simulate_command(settings, directory, layer, best)}
    job = Job(layer, parse_dataflow(best["dataflow"], layer), "search") if best is not None else None
    if progress is not None:
        progress(0, None, layer.name, done=True)
    return _LayerDone(entry, job, found.frame.assign(sample=range(len(found.frame))))


def _interrupted(layer: Layer, saver: _Saver, hw: HardwareSpec) -> _LayerDone:
    """A layer's search was stopped: its ``summary.json`` entry ``interrupted``, with what it
    scored and its best so far, and that mapping for ``best.m``, so the directory is usable as
    it is (``--resume`` still finishes the search)."""
    best = saver.best_row
    entry = {"layer": layer.name, "op": layer.op.value, "macs": layer.macs, "scored": saver.sample,
             "stopped": "interrupted", "best": _best_fields(best, hw)}
    job = Job(layer, parse_dataflow(best["dataflow"], layer), "search") if best is not None else None
    return _LayerDone(entry, job, pd.DataFrame())


_BEST_FIELDS = ("model", "key", "cost", "cycles", "energy_pj", "edp_pj_cycles", "pe_utilization", "encoding",
                "candidate", "dataflow", "dram_layouts")


def _best_fields(best: dict[str, Any] | None, hw: HardwareSpec) -> dict[str, Any] | None:
    """What ``summary.json`` keeps of a layer's best row: :data:`_BEST_FIELDS`, then on a design
    with register files inside the PE their accesses, sums and energy."""
    return None if best is None else {k: best[k] for k in (*_BEST_FIELDS, *inner_level_columns(hw))}


def _simulate_command(settings: SearchSettings, directory: SearchDir, layer: Layer,
                      best: dict[str, Any] | None) -> str | None:
    """The command that simulates ``layer``'s best mapping from ``best.m`` with the DRAM layouts
    it was scored with (``best.m``, a MAESTRO file, cannot carry them); None when the best was
    scored with the operator's channel-last layouts (or there is none, or the hardware came from
    Timeloop's files, which ``--mapping`` cannot take)."""
    if best is None or not best.get("dram_layouts") or settings.hw is None:
        return None
    words = ["accelsim", "simulate", "--hw", settings.hw, "--mode", settings.mode, *(w for o in settings.overrides for w in ("--set", o)),
             "--mapping", str(directory.path / "best.m"), "--layer", layer.name,
             *(w for spec in str(best["dram_layouts"]).split() for w in ("--dram-layout", spec))]
    return shlex.join(words)


def _layer_summary(layer: Layer, hw: HardwareSpec, found: LayerSearch, reranking: Reranking | None, best: dict[str, Any] | None,
                   screen_seconds: float, seconds: float) -> dict[str, Any]:
    frame = found.frame
    status = frame["status"]
    return {
        "layer": layer.name,
        "op": layer.op.value,
        "macs": layer.macs,
        "scored": len(frame),
        "legal": int((status == "ok").sum()),
        "illegal": {str(k): int(v) for k, v in frame.loc[status == "illegal", "reason"].value_counts().items()},
        "errors": {str(k): int(v) for k, v in frame.loc[status == "error", "reason"].value_counts().items()},
        "stopped": found.stopped,
        "mapper": found.mapper,
        "best": _best_fields(best, hw),
        "two_stage": reranking.summary() if reranking is not None else None,
        "screen_seconds": screen_seconds,
        "seconds": seconds,
    }
