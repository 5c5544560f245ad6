"""The cost models a search can score candidates with, and the metrics one run yields.

``analytical`` is the closed-form model (:mod:`accelsim.analytical`), ``sim`` the SimPy
simulator, and every further model registered for ``accelsim compare``
(:data:`accelsim.compare.MODELS`, e.g. ``maestro`` once it exists) is available under its name.
A :class:`ModelTask` (layer, hardware, model, mode) is everything a worker process needs; it
scores a batch of legal dataflows and returns one plain dict of metrics per dataflow, never an
exception.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.compare import MODELS
from accelsim.errors import MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import Directive
from accelsim.mapping.compile import CompiledMapping, compile_mapping
from accelsim.mapping.geometry import case_count
from accelsim.mapping.jobs import Job
from accelsim.model_options import MODES, check_mode
from accelsim.results import ACCESS_FIELDS, STALL_CAUSES, TENSORS, LayerResult
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer

SIMULATOR = "sim"
# Models that read the mapping as written (MAESTRO's own reading), not the compiled schedule:
# two spellings of one schedule may cost differently there, so their results are cached by text.
WRITTEN_FORM_MODELS = frozenset({"maestro"})


def model_names() -> tuple[str, ...]:
    """Models a search can use: ``analytical``, ``sim`` and the other registered models."""
    return tuple(sorted({SIMULATOR, *MODELS}))


@dataclass(frozen=True)
class ModelTask:
    """What scoring needs besides the candidate: the layer, the hardware, the model and the
    fidelity mode (``realistic`` or ``maestro``)."""

    layer: Layer
    hw: HardwareSpec
    model: str
    mode: str

    def __post_init__(self) -> None:
        if self.model not in model_names():
            raise ValueError(f"unknown model {self.model!r}; expected one of {', '.join(model_names())}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; expected one of {', '.join(MODES)}")


# How much work a model may spend on one candidate before the evaluator skips it (status
# ``skipped``, reason ``over_budget``): the analytical model's cost grows with its iteration cases
# times the PEs (boxes evaluated); the simulator's with its iteration cases (a demand per case,
# and the steps it executes before each class of iterations repeats and is warped over).
DEFAULT_WORK_BUDGETS = {"analytical": 200_000, SIMULATOR: 200_000}
WORK_UNITS = {"analytical": "iteration cases x PEs", SIMULATOR: "iteration cases"}


def work_estimate(model: str, cm: CompiledMapping) -> int | None:
    """The work ``model`` would spend on ``cm`` in the units of :data:`WORK_UNITS` (None: not
    estimated for this model)."""
    if model not in ("analytical", SIMULATOR):
        return None
    cases = case_count(cm)
    return cases * cm.used_pes if model == "analytical" else cases


ACCESS_COLUMNS = tuple(f"{t}_{f}" for t in TENSORS for f in ACCESS_FIELDS)
STALL_COLUMNS = tuple(f"stall_{c}_cycles" for c in STALL_CAUSES)
LEVEL_COLUMNS = ("l1_words", "l2_words", "dram_words")
METRIC_COLUMNS = ("cycles", "energy_pj", "edp_pj_cycles", "pe_utilization", "used_pes", "macs", "steps",
                  "l1_required_bytes", "l2_required_bytes", "noc_words", *LEVEL_COLUMNS, *ACCESS_COLUMNS,
                  *STALL_COLUMNS)


def metrics(result: LayerResult) -> dict[str, Any]:
    """The result of one model run as flat columns: cycles, energy (pJ), energy-delay product
    (pJ x cycles), utilization, buffer needs, per-tensor accesses at every level and their sums
    per level (words), stall cycles by cause."""
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
    return row


def run_model(task: ModelTask, dataflow: Sequence[Directive]) -> dict[str, Any]:
    """Score one legal dataflow: ``{"status": "ok", metrics..., "wall_seconds"}``; a model that
    refuses it gives ``illegal`` with its reason, a model that fails ``error`` with the
    exception's type as reason (a bug to report, kept in the row instead of stopping the search)."""
    start = time.perf_counter()
    try:
        cm = compile_mapping(task.layer, dataflow, task.hw.num_pes, source="candidate")
        if task.model == SIMULATOR:
            result = simulate_layer(cm, task.hw, SimOptions(mode=check_mode(task.mode)))
        else:
            result = MODELS[task.model](cm, task.hw, task.mode, job=Job(task.layer, tuple(dataflow), "candidate"))
    except MappingError as exc:
        return {"status": "illegal", "reason": exc.reason or "invalid", "message": exc.detail,
                "wall_seconds": time.perf_counter() - start}
    except Exception as exc:  # noqa: BLE001 - a model bug must not stop a search; the row keeps it
        return {"status": "error", "reason": type(exc).__name__, "message": str(exc),
                "wall_seconds": time.perf_counter() - start}
    row = {"status": "ok", **metrics(result)}
    row["wall_seconds"] = time.perf_counter() - start
    return row


def run_batch(task: ModelTask, dataflows: Sequence[Sequence[Directive]]) -> list[dict[str, Any]]:
    """:func:`run_model` for each dataflow, in order (the unit of work sent to a worker)."""
    return [run_model(task, dataflow) for dataflow in dataflows]
