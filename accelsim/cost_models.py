"""The cost models, one protocol: the simulator (``sim``), the closed-form analytical model
(``analytical``) and the model of the MAESTRO binary (``maestro``).

Each takes an :class:`EvalJob` (the compiled mapping, the hardware, the fidelity mode, and where
a run has them the job as written and SCALE-Sim's fold rule) and returns a
:class:`~accelsim.results.LayerResult` (``evaluate``), or one per job of a batch
(``evaluate_many``). ``COST_MODELS`` is the one registry ``analyze``, ``compare`` and ``search``
take their model choices from: adding a model is one entry. A model also says what it does not
report (``unreported``: left out of comparisons), whether it reads the mapping as written
(``written_form``: two spellings of one schedule may cost differently, so search caches it by
text), and what it would spend on a mapping (``work``, in ``work_units``; None: not
estimated), which search holds against its work budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from accelsim.errors import InputError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.geometry import case_count
from accelsim.mapping.jobs import Job
from accelsim.model_options import Mode, SystolicFold, check_mode
from accelsim.results import TENSORS, LayerResult

SIMULATOR = "sim"


@dataclass(frozen=True)
class EvalJob:
    """One layer to cost: ``cm`` on ``hw`` in ``mode``; ``job``: the layer and dataflow as
    written (a model of MAESTRO's own reading needs it); ``systolic_fold``: SCALE-Sim's fold
    rule, None for none."""

    cm: CompiledMapping
    hw: HardwareSpec
    mode: Mode
    job: Job | None = None
    systolic_fold: SystolicFold | None = None


class CostModel(Protocol):
    """What every cost model offers (see the module docstring)."""

    name: str
    unreported: tuple[str, ...]
    written_form: bool
    work_units: str | None

    def evaluate(self, job: EvalJob) -> LayerResult:
        """The layer's result (MappingError for a mapping the model refuses)."""
        ...

    def evaluate_many(self, jobs: Sequence[EvalJob]) -> list[LayerResult]:
        """One result per job, in order."""
        ...

    def work(self, cm: CompiledMapping) -> int | None:
        """What costing ``cm`` would take, in ``work_units`` (None: not estimated)."""
        ...


class _Batched:
    """``evaluate_many`` as ``evaluate`` job by job."""

    name: str
    unreported: tuple[str, ...] = ()
    written_form: bool = False
    work_units: str | None = None

    def evaluate(self, job: EvalJob) -> LayerResult:
        raise NotImplementedError

    def evaluate_many(self, jobs: Sequence[EvalJob]) -> list[LayerResult]:
        return [self.evaluate(job) for job in jobs]


class Simulator(_Batched):
    """The SimPy engine (:mod:`accelsim.sim`); its work grows with the iteration cases (a
    demand per case, and the steps it executes before each class of iterations repeats)."""

    name = SIMULATOR
    work_units: str | None = "iteration cases"

    def evaluate(self, job: EvalJob) -> LayerResult:
        from accelsim.sim.engine import SimOptions, simulate_layer

        return simulate_layer(job.cm, job.hw, SimOptions(mode=check_mode(job.mode), systolic_fold=job.systolic_fold))

    def work(self, cm: CompiledMapping) -> int | None:
        return case_count(cm)


class Analytical(_Batched):
    """The closed-form model (:mod:`accelsim.analytical`). Its work is counted, as search's
    budgets have always counted it, in iteration cases x PEs in use."""

    name = "analytical"
    work_units: str | None = "iteration cases x PEs"

    def evaluate(self, job: EvalJob) -> LayerResult:
        from accelsim.analytical import analyze_layer

        return analyze_layer(job.cm, job.hw, job.mode, job.systolic_fold)

    def work(self, cm: CompiledMapping) -> int | None:
        return case_count(cm) * cm.used_pes


class Maestro(_Batched):
    """What the MAESTRO binary would print (:mod:`accelsim.maestro`) for the job as written;
    without ``job`` it is refused (the written dataflow cannot be recovered from ``cm``).
    MAESTRO has one set of assumptions, so ``mode`` does not change it; it does not model DRAM
    traffic."""

    name = "maestro"
    unreported = tuple(f"{tensor}.dram_{kind}" for tensor in TENSORS for kind in ("read", "write"))
    written_form = True

    def evaluate(self, job: EvalJob) -> LayerResult:
        from accelsim.maestro import analyze_job

        if job.job is None:
            raise InputError("the maestro model reads the mapping as written: pass job=Job(layer, dataflow, source)")
        return analyze_job(job.job, job.hw)[0]

    def work(self, cm: CompiledMapping) -> int | None:
        return None


COST_MODELS: dict[str, CostModel] = {model.name: model for model in (Simulator(), Analytical(), Maestro())}


def model_names() -> tuple[str, ...]:
    """Every registered model's name, sorted."""
    return tuple(sorted(COST_MODELS))


def other_models() -> tuple[str, ...]:
    """The models other than the simulator (those ``compare`` holds against it), sorted."""
    return tuple(name for name in model_names() if name != SIMULATOR)
