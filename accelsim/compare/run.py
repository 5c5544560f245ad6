"""Run the simulator, the chosen models and the given tool outputs on the same layers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from accelsim.mapping.jobs import Job, prepare
from accelsim.compare.attribution import Ablation, ablate, no_ablation
from accelsim.compare.external import maestro_metrics, scalesim_metrics
from accelsim.compare.ladder import Ladder, ladder, ladder_steps
from accelsim.compare.metrics import Metrics, exceptions, metrics_of
from accelsim.cost_models import COST_MODELS, EvalJob, other_models
from accelsim.errors import InputError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.model_options import check_mode
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.sim.network import RunObserver

MAESTRO_CSV = "maestro-csv"


def _reported(model: str, metrics: Metrics) -> Metrics:
    """A model's metrics without those it does not compute (its ``unreported``)."""
    unreported = COST_MODELS[model].unreported if model in COST_MODELS else ()
    return {key: value for key, value in metrics.items() if key not in unreported}

SCALESIM = "scalesim"


@dataclass
class LayerComparison:
    """One layer: the simulator's metrics, each source's, and the cycle-gap attribution."""

    layer: str
    op: str
    simulator: Metrics
    sources: dict[str, Metrics]  # source name -> the metrics it reports
    ablation: Ablation | None = None  # None when attribution was not asked for
    maestro_mode_cycles: dict[str, int] = field(default_factory=dict)  # per model: its maestro-mode estimate
    ladders: dict[str, Ladder] = field(default_factory=dict)  # per MAESTRO source: its gap rule by rule

    def exceptions(self) -> dict[str, list[str]]:
        """Per source, the metrics failing maestro-mode agreement (metrics.exceptions)."""
        return {name: exceptions(self.simulator, m) for name, m in self.sources.items()}

    def attribution(self) -> dict[str, dict[str, float]]:
        """Per source reporting cycles, the parts of ``simulator - source`` cycles."""
        if self.ablation is None:
            return {}
        return {name: self.ablation.split(m["cycles"], self.maestro_mode_cycles.get(name))
                for name, m in self.sources.items() if "cycles" in m}


@dataclass
class Comparison:
    network: str
    hw: str
    mode: str
    sources: list[str]
    layers: list[LayerComparison] = field(default_factory=list)


def compare_jobs(network: str, jobs: Sequence[Job], hw: HardwareSpec, mode: str = "realistic",
                 models: Sequence[str] = ("analytical",), maestro_csv: str | Path | None = None,
                 scalesim_report: str | Path | None = None, network_layers: Sequence[str] | None = None,
                 allow_overflow: bool = False, attribute: bool = True,
                 progress: Callable[["Comparison"], None] | None = None,
                 positions: Sequence[int] | None = None,
                 observer: RunObserver | None = None,
                 check: Callable[[CompiledMapping], None] | None = None) -> Comparison:
    """Compare the simulator (in ``mode``) with each model of ``models`` (names in ``other_models()``, run
    in the same mode) and with MAESTRO's CSV (layers matched by name, or by ``positions``) and
    SCALE-Sim's COMPUTE_REPORT.csv (rows matched by order to ``network_layers``, the whole
    network's layer names; default: the jobs' layers; ``positions``: the jobs' places in it, for
    a MAESTRO CSV whose rows follow the network). Every layer is compiled and checked and the
    files are read before any simulation runs (``check``: a further check of each, e.g. a
    budget). ``attribute`` adds the ablation runs (six more simulations per layer in realistic
    mode, and each model once more in maestro mode). ``progress`` gets the comparison so far
    after each layer; ``observer`` hears each layer start, the steps of its main simulation and
    its result."""
    check_mode(mode)
    unknown = [model for model in models if model not in other_models()]
    if unknown:
        raise InputError(f"unknown model(s) {', '.join(unknown)}; models are: {', '.join(other_models())}")
    compiled = [prepare(job, hw, allow_overflow) for job in jobs]
    if check is not None:
        for cm in compiled:
            check(cm)
    names = [job.layer.name for job in jobs]
    external: dict[str, list[Metrics]] = {}
    if maestro_csv is not None:
        external[MAESTRO_CSV] = maestro_metrics(maestro_csv, hw.word_size_bytes, names, network_layers, positions)
    if scalesim_report is not None:
        by_name = scalesim_metrics(scalesim_report, network_layers or names, names)
        external[SCALESIM] = [by_name[name] for name in names]
    result = Comparison(network, hw.name, mode, list(models) + list(external))
    maestro_sources = [s for s in ("maestro", MAESTRO_CSV) if s in models or s in external]
    watch = observer or RunObserver()
    for position, (job, cm, name) in enumerate(zip(jobs, compiled, names)):
        watch.layer_started(position, cm)
        sim = simulate_layer(cm, hw, SimOptions(mode=check_mode(mode)),
                             progress=watch.steps if observer is not None else None)
        sources = {model: _reported(model, metrics_of(COST_MODELS[model].evaluate(EvalJob(cm, hw, check_mode(mode), job))))
                   for model in models}
        sources.update({label: rows[position] for label, rows in external.items()})
        ablation = None
        maestro_mode_cycles = {}
        sim_maestro_cycles = sim.cycles
        if mode != "maestro" and (attribute or maestro_sources):
            sim_maestro_cycles = simulate_layer(cm, hw, SimOptions(mode="maestro")).cycles
        if attribute:
            if mode == "maestro":
                ablation = no_ablation(sim.cycles)
            else:
                ablation = ablate(cm, hw, sim.cycles, sim_maestro_cycles)
                maestro_mode_cycles = {model: int(COST_MODELS[model].evaluate(EvalJob(cm, hw, "maestro", job)).cycles)
                                       for model in models}
        ladders = {}
        if maestro_sources:
            steps = ladder_steps(job, cm, hw, sim.cycles, sim_maestro_cycles,
                                 ablation if mode != "maestro" else None)
            ladders = {s: ladder(s, int(sources[s]["cycles"]), steps) for s in maestro_sources}
        result.layers.append(LayerComparison(name, sim.op, metrics_of(sim), sources, ablation, maestro_mode_cycles,
                                             ladders))
        watch.layer_finished(position, sim)
        if progress is not None:
            progress(result)
    return result
