"""Run the validation scenarios: every layer by the simulator (both fidelity modes; ``--quick``:
within a step budget) and by the analytical model, as one flat table of rows.

A row is one (scenario, layer, model, mode). ``status`` says what happened:

- ``ok``: the model ran; the numbers are its results;
- ``over_budget`` (``--quick`` only): the simulator was not run because the layer's mapping
  exceeds the quick run's budget of steps x PEs (the analytical model still runs; ``note``
  gives the numbers);
- ``unmappable``: the style has no legal mapping of the layer on the hardware (``note`` gives
  the reason), so no model runs.

Every row carries the layer's physical lower bounds (:func:`accelsim.bounds.lower_bounds`) and
``below_bound`` (the model's cycles are below ``max(compute, off-chip)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from accelsim.bounds import lower_bounds
from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job, prepare
from accelsim.mapping.styles import style_mapping
from accelsim.model_options import SystolicFold, check_mode
from accelsim.results import ACCESS_FIELDS, STALL_CAUSES, TENSORS, LayerResult
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.scenarios import Scenario
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

SIMULATOR = "simulator"
ANALYTICAL = "analytical"
# (model, mode) of every row, in the order rows are written
RUNS = ((SIMULATOR, "realistic"), (SIMULATOR, "maestro"), (ANALYTICAL, "maestro"))

ACCESS_COLUMNS = tuple(f"{t}_{a}" for t in TENSORS for a in ACCESS_FIELDS)
STALL_COLUMNS = tuple(f"stall_{c}_cycles" for c in STALL_CAUSES)
COLUMNS = (
    "set", "network", "hw", "style", "layer", "op", "model", "mode", "status", "note",
    "steps", "macs", "num_pes", "compute_bound_cycles", "dram_bound_cycles", "cycles", "below_bound",
    "pe_utilization", "compute_busy_cycles", *STALL_COLUMNS, "energy_pj", *ACCESS_COLUMNS,
    "noc_words", "l1_required_bytes", "l2_required_bytes",
)

# (cm, hw, mode), plus the keyword ``systolic_fold`` for SCALE-Sim scenarios
LayerModel = Callable[..., LayerResult]


def analytical_model() -> LayerModel:
    """The analytical model (of :data:`accelsim.cost_models.COST_MODELS`) as a (cm, hw, mode)
    callable, with the keyword ``systolic_fold``."""
    from accelsim.cost_models import COST_MODELS, EvalJob

    model = COST_MODELS["analytical"]

    def run(cm: CompiledMapping, hw: HardwareSpec, mode: str, systolic_fold: SystolicFold | None = None) -> LayerResult:
        return model.evaluate(EvalJob(cm, hw, check_mode(mode), systolic_fold=systolic_fold))
    return run


def simulator_model(cm: CompiledMapping, hw: HardwareSpec, mode: str, **options: Any) -> LayerResult:
    """The simulator as a (cm, hw, mode) callable; ``options``: further SimOptions fields."""
    return simulate_layer(cm, hw, SimOptions(mode=check_mode(mode), **options))


@dataclass(frozen=True)
class ScenarioJobs:
    """A scenario made concrete: its hardware, per layer the job (or why the style cannot map
    it), and SimOptions fields its simulation needs (SCALE-Sim's systolic fold rule)."""

    hw: HardwareSpec
    layers: list[tuple[Layer, Job | None, str]]
    sim_options: dict[str, Any]


def scenario_jobs(sc: Scenario) -> ScenarioJobs:
    """The hardware and jobs of a scenario."""
    if sc.kind == "scalesim":
        from accelsim.scalesim.config import read_scalesim_config
        from accelsim.scalesim.topology import read_topology
        from accelsim.scalesim.translate import translate

        run = translate(read_scalesim_config(sc.hw), read_topology(sc.network))
        return ScenarioJobs(run.hw, [(job.layer, job, "") for job in run.jobs], {"systolic_fold": run.fold})
    hw = load_hardware(sc.hw)
    layers: list[tuple[Layer, Job | None, str]] = []
    for layer in load_network(sc.network).layers:
        try:
            layers.append((layer, Job(layer, tuple(style_mapping(sc.style, layer, hw)), f"style {sc.style}"), ""))
        except InputError as exc:
            layers.append((layer, None, str(exc)))
    return ScenarioJobs(hw, layers, {})


@dataclass(frozen=True)
class RunPlan:
    """What to run: the simulator's budget (None: every layer; ``--quick``:
    scenarios.QUICK_BUDGET_PE_STEPS) and the models available."""

    budget_pe_steps: int | None  # simulate a layer only when steps x PEs is at most this
    analytical: LayerModel

    def simulates(self, cm: CompiledMapping, hw: HardwareSpec) -> bool:
        return self.budget_pe_steps is None or cm.steps * hw.num_pes <= self.budget_pe_steps

    def over_budget_note(self, cm: CompiledMapping, hw: HardwareSpec) -> str:
        return (f"not simulated: {cm.steps:,} steps x {hw.num_pes:,} PEs = {cm.steps * hw.num_pes:,} "
                f"> budget {self.budget_pe_steps:,}")


def result_columns(result: LayerResult) -> dict[str, Any]:
    """The measured columns of a row, from a LayerResult (simulator or analytical)."""
    d = result.to_dict()
    row: dict[str, Any] = {
        "cycles": d["cycles"], "pe_utilization": round(d["pe_utilization"], 6),
        "compute_busy_cycles": d["compute_busy_cycles"], "energy_pj": round(d["energy_pj"], 3),
        "noc_words": d["noc_words"], "l1_required_bytes": d["l1_required_bytes"],
        "l2_required_bytes": d["l2_required_bytes"],
    }
    for cause in STALL_CAUSES:
        row[f"stall_{cause}_cycles"] = d["stall_cycles"].get(cause, 0)
    for tensor in TENSORS:
        for access in ACCESS_FIELDS:
            row[f"{tensor}_{access}"] = d["accesses"][tensor][access]
    return row


def identity_columns(sc: Scenario, layer: Layer, hw: HardwareSpec) -> dict[str, Any]:
    """The columns naming a layer of a scenario, with its size, PEs and lower bounds."""
    bounds = lower_bounds(layer, hw)
    named = sc.kind == "scalesim"
    return {"set": sc.set_name, "network": Path(sc.network).stem if named else sc.network,
            "hw": Path(sc.hw).stem if named else sc.hw, "style": sc.style,
            "layer": layer.name, "op": layer.op.value, "macs": layer.macs,
            "num_pes": hw.num_pes, "compute_bound_cycles": bounds.compute_cycles,
            "dram_bound_cycles": bounds.dram_cycles}


def layer_rows(base: dict[str, Any], job: Job, hw: HardwareSpec, plan: RunPlan,
               sim_options: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows (:data:`RUNS`) of one layer; ``base`` holds its identifying columns."""
    try:
        cm = prepare(job, hw)
    except InputError as exc:
        return [{**base, "model": model, "mode": mode, "status": "unmappable", "note": str(exc)}
                for model, mode in RUNS]
    base = {**base, "steps": cm.steps}
    rows = []
    for model, mode in RUNS:
        row = {**base, "model": model, "mode": mode}
        if model == SIMULATOR and not plan.simulates(cm, hw):
            row.update(status="over_budget", note=plan.over_budget_note(cm, hw))
        else:
            result = (simulator_model(cm, hw, mode, **sim_options) if model == SIMULATOR
                      else plan.analytical(cm, hw, mode, **analytical_options(sim_options)))
            row.update(result_columns(result), status="ok", note="")
            row["below_bound"] = row["cycles"] < max(base["compute_bound_cycles"], base["dram_bound_cycles"])
        rows.append(row)
    return rows


def analytical_options(sim_options: dict[str, Any]) -> dict[str, Any]:
    """The analytical model's keywords for a scenario's SimOptions fields: the systolic fold
    rule, so both models charge SCALE-Sim's fill and drain."""
    return {key: value for key, value in sim_options.items() if key == "systolic_fold"}


def scenario_rows(sc: Scenario, plan: RunPlan) -> list[dict[str, Any]]:
    """Rows of every layer of one scenario. A layer the style cannot map on the hardware gets
    ``unmappable`` rows; the other layers still run."""
    concrete = scenario_jobs(sc)
    rows: list[dict[str, Any]] = []
    for layer, job, why in concrete.layers:
        base = identity_columns(sc, layer, concrete.hw)
        if job is None:
            rows += [{**base, "model": model, "mode": mode, "status": "unmappable", "note": why}
                     for model, mode in RUNS]
        else:
            rows += layer_rows(base, job, concrete.hw, plan, concrete.sim_options)
    return rows


def run_scenarios(scenarios: Iterable[Scenario], plan: RunPlan,
                  progress: Callable[[Scenario], None] | None = None) -> list[dict[str, Any]]:
    """Rows (dicts with :data:`COLUMNS` keys; absent values are None) of every scenario."""
    rows = []
    for sc in scenarios:
        rows += scenario_rows(sc, plan)
        if progress is not None:
            progress(sc)
    return [{c: row.get(c) for c in COLUMNS} for row in rows]
