"""The cost models a search can score candidates with, the metrics one run yields, and the
work a worker does on a batch of candidates.

Every model of :data:`accelsim.cost_models.COST_MODELS` is available under its name
(``analytical``, ``sim``, ``maestro``). A :class:`ModelTask` (layer, hardware, model, mode, work
budget) is everything a worker process needs: :func:`screen_batch` compiles a batch of
candidate dataflows, checks their legality and work, names their schedules and scores the new
legal ones with the model's ``evaluate_many``, returning one typed :class:`Screened` per
dataflow, never an exception.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.cost_models import COST_MODELS, EvalJob, model_names
from accelsim.errors import MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import Directive
from accelsim.mapping.jobs import Job
from accelsim.model_options import MODES, check_mode
from accelsim.results import ACCESS_FIELDS, STALL_CAUSES, TENSORS, LayerResult
from accelsim.search.candidates import dataflow_text, written_key
from accelsim.search.legality import Legality, check_candidate
from accelsim.workload.ops import Layer

# How much work a model may spend on one candidate before the evaluator skips it (status
# ``skipped``, reason ``over_budget``), in the model's ``work_units``: the analytical model's
# iteration cases times the PEs; the simulator's iteration cases (a demand per case, and the
# steps it executes before each class of iterations repeats and is warped over).
DEFAULT_WORK_BUDGETS = {"analytical": 200_000, "sim": 200_000}


@dataclass(frozen=True)
class ModelTask:
    """What scoring needs besides the candidate: the layer, the hardware, the model, the
    fidelity mode (``realistic`` or ``maestro``), the most work a candidate may take and the
    tensors' DRAM layouts (:attr:`accelsim.mapping.jobs.Job.dram_layouts`; empty: the operator's
    channel-last)."""

    layer: Layer
    hw: HardwareSpec
    model: str
    mode: str
    work_budget: float = float("inf")
    dram_layouts: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def __post_init__(self) -> None:
        if self.model not in model_names():
            raise ValueError(f"unknown model {self.model!r}; expected one of {', '.join(model_names())}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; expected one of {', '.join(MODES)}")


ACCESS_COLUMNS = tuple(f"{t}_{f}" for t in TENSORS for f in ACCESS_FIELDS)
STALL_COLUMNS = tuple(f"stall_{c}_cycles" for c in STALL_CAUSES)
LEVEL_COLUMNS = ("l1_words", "l2_words", "dram_words")
METRIC_COLUMNS = ("cycles", "energy_pj", "edp_pj_cycles", "pe_utilization", "used_pes", "macs", "steps",
                  "l1_required_bytes", "l2_required_bytes", "noc_words", *LEVEL_COLUMNS, *ACCESS_COLUMNS,
                  *STALL_COLUMNS)


def inner_level_columns(hw: HardwareSpec) -> tuple[str, ...]:
    """The columns a design with register files inside the PE adds after :data:`METRIC_COLUMNS`
    (none on any other design, so its rows keep their columns): per register file, innermost
    first, ``<tensor>_<level>_read`` and ``_write`` for each tensor it keeps, ``<level>_words``
    (their sum) and ``<level>_energy_pj``, named by the level as the results CSV names it."""
    out: list[str] = []
    for lv in hw.inner_levels:
        out += [f"{t}_{lv.name}_{rw}" for t in TENSORS if t in lv.keeps for rw in ("read", "write")]
        out += [f"{lv.name}_words", f"{lv.name}_energy_pj"]
    return tuple(out)


def metric_columns(hw: HardwareSpec) -> tuple[str, ...]:
    """Every metric column of a row scored on ``hw``: :data:`METRIC_COLUMNS`, then the register
    files' (:func:`inner_level_columns`)."""
    return METRIC_COLUMNS + inner_level_columns(hw)


def metrics(result: LayerResult) -> dict[str, Any]:
    """The result of one model run as flat columns: cycles, energy (pJ), energy-delay product
    (pJ x cycles), utilization, buffer needs, per-tensor accesses at every level and their sums
    per level (words), stall cycles by cause; on a design with register files inside the PE,
    their accesses per tensor, sums and energy (:func:`inner_level_columns`; a tensor the layer
    lacks counts 0)."""
    row: dict[str, Any] = {
        "cycles": result.cycles,
        "energy_pj": result.energy_pj,
        "edp_pj_cycles": result.energy_pj * result.cycles,
        "pe_utilization": result.pe_utilization,
        "used_pes": result.used_pes,
        "macs": result.macs,
        "steps": result.steps,
        "l1_required_bytes": result.l1_required_bytes,
        "l2_required_bytes": result.l2_required_bytes,
        "noc_words": result.noc_words,
    }
    for level in ("l1", "l2", "dram"):
        row[f"{level}_words"] = sum(getattr(result.accesses[t], f"{level}_{rw}")
                                    for t in TENSORS for rw in ("read", "write"))
    for t in TENSORS:
        for f in ACCESS_FIELDS:
            row[f"{t}_{f}"] = getattr(result.accesses[t], f)
    for c in STALL_CAUSES:
        row[f"stall_{c}_cycles"] = result.stall_cycles.get(c, 0)
    for level, per in result.inner_accesses.items():
        for t, la in per.items():
            row[f"{t}_{level}_read"], row[f"{t}_{level}_write"] = la.read, la.write
        row[f"{level}_words"] = sum(la.read + la.write for la in per.values())
        row[f"{level}_energy_pj"] = result.energy_breakdown_pj[level]
    return row


@dataclass(frozen=True)
class Outcome:
    """A schedule's verdict: ``status`` (``ok``, ``illegal``, ``skipped`` or ``error``), its
    ``reason`` code and ``message`` (None when ok), the model's metric columns (None unless
    ok; see :func:`metrics`) and the seconds scoring took."""

    status: str
    reason: str | None = None
    message: str | None = None
    metrics: dict[str, Any] | None = None
    wall_seconds: float = 0.0


@dataclass(frozen=True)
class Screened:
    """One candidate dataflow after a worker's look: its schedule's ``key`` (canonical, or the
    written text for a model that reads the mapping as written), its legality verdict
    (``outcome`` of an illegal or skipped one) and, for a legal one, the model's outcome
    (None where the batch scored the same schedule before)."""

    key: str
    legal: bool
    outcome: Outcome | None


def _legality(task: ModelTask, dataflow: Sequence[Directive]) -> tuple[Legality, Outcome | None]:
    """The candidate's legality, and the outcome of one that is not to be scored (illegal, or
    over the work budget)."""
    legality = check_candidate(task.layer, task.hw, dataflow, dict(task.dram_layouts))
    if not legality.legal:
        return legality, Outcome(legality.status, legality.reason, legality.message)
    model = COST_MODELS[task.model]
    work = model.work(legality.compiled) if legality.compiled is not None else None
    if work is not None and work > task.work_budget:
        return legality, Outcome("skipped", "over_budget", f"the {task.model} model would evaluate {work:,} "
                                 f"{model.work_units}, over the budget of {task.work_budget:,} per candidate")
    return legality, None


def _score(task: ModelTask, jobs: list[EvalJob], started: list[float]) -> list[Outcome]:
    """The model's outcomes for ``jobs`` (one batch through ``evaluate_many``; where that
    fails, job by job, so a refusal or a bug stays in its own row)."""
    model = COST_MODELS[task.model]
    try:
        results: list[LayerResult | BaseException] = list(model.evaluate_many(jobs))
    except Exception:  # noqa: BLE001 - find the job that failed
        results = []
        for job in jobs:
            try:
                results.append(model.evaluate(job))
            except Exception as exc:  # noqa: BLE001 - a model bug must not stop a search; the row keeps it
                results.append(exc)
    end = time.perf_counter()
    out = []
    for result, start in zip(results, started, strict=True):
        wall = end - start if len(jobs) == 1 else (result.wall_seconds if isinstance(result, LayerResult) else 0.0)
        if isinstance(result, MappingError):
            out.append(Outcome("illegal", result.reason or "invalid", result.detail, None, wall))
        elif isinstance(result, BaseException):
            out.append(Outcome("error", type(result).__name__, str(result), None, wall))
        else:
            out.append(Outcome("ok", metrics=metrics(result), wall_seconds=wall))
    return out


def screen_batch(task: ModelTask, dataflows: Sequence[Sequence[Directive]]) -> list[Screened]:
    """Compile, check and name every dataflow of the batch, and score each legal schedule the
    batch has not scored yet (the unit of work sent to a worker), in order."""
    written = COST_MODELS[task.model].written_form
    keys: list[str] = []
    legal: list[bool] = []
    verdicts: list[Outcome | None] = []
    jobs: list[EvalJob] = []
    started: list[float] = []
    position: dict[str, int] = {}  # key -> index among jobs
    for dataflow in dataflows:
        start = time.perf_counter()
        legality, verdict = _legality(task, dataflow)
        key = written_key(dataflow_text(dataflow)) if written else legality.key
        keys.append(key)
        legal.append(verdict is None)
        verdicts.append(verdict)
        if verdict is None and key not in position and legality.compiled is not None:
            position[key] = len(jobs)
            jobs.append(EvalJob(legality.compiled, task.hw, check_mode(task.mode),
                                Job(task.layer, tuple(dataflow), "candidate", dram_layouts=task.dram_layouts)))
            started.append(start)
    scored = _score(task, jobs, started) if jobs else []
    out, told = [], set()
    for key, ok, verdict in zip(keys, legal, verdicts):
        if ok and key not in told:
            told.add(key)
            out.append(Screened(key, True, scored[position[key]]))
        else:
            out.append(Screened(key, ok, verdict))
    return out
