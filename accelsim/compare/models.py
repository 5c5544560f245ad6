"""The cost models ``accelsim compare --model NAME`` can run.

A model takes the job (the layer as written, for models that read MAESTRO's own form), the
compiled mapping the simulator executes, the hardware and the fidelity mode (and, as a keyword,
the SCALE-Sim fold rule ``systolic_fold`` where a run has one) and returns a LayerResult (the
simulator's schema). Adding a model is one entry in MODELS; ``UNREPORTED`` lists the metrics a
model does not compute (they are left out of its comparison).
"""

from __future__ import annotations

from collections.abc import Callable

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job
from accelsim.model_options import SystolicFold
from accelsim.results import TENSORS, LayerResult

Model = Callable[..., LayerResult]


def _analytical(job: Job, cm: CompiledMapping, hw: HardwareSpec, mode: str,
                systolic_fold: SystolicFold | None = None) -> LayerResult:
    from accelsim.analytical import analyze_layer

    return analyze_layer(cm, hw, mode, systolic_fold)


def _maestro(job: Job, cm: CompiledMapping, hw: HardwareSpec, mode: str) -> LayerResult:
    """What the MAESTRO binary would print (accelsim.maestro); it has one set of assumptions,
    so ``mode`` does not change it."""
    from accelsim.maestro import analyze_job

    return analyze_job(job, hw)[0]


MODELS: dict[str, Model] = {
    "analytical": _analytical,
    "maestro": _maestro,
}

UNREPORTED: dict[str, tuple[str, ...]] = {
    "maestro": tuple(f"{tensor}.dram_{kind}" for tensor in TENSORS for kind in ("read", "write")),
}
