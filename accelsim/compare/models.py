"""The cost models ``accelsim compare --model NAME`` can run.

A model takes the compiled mapping the simulator executes, the hardware and the fidelity mode,
and as keywords the job (``job``: the layer and dataflow as written, which a model of MAESTRO's
own reading needs) and the SCALE-Sim fold rule (``systolic_fold``) where a run has them, and
returns a LayerResult (the simulator's schema). Adding a model is one entry in MODELS; ``UNREPORTED`` lists the metrics a
model does not compute (they are left out of its comparison).
"""

from __future__ import annotations

from collections.abc import Callable

from accelsim.errors import InputError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job
from accelsim.model_options import SystolicFold
from accelsim.results import TENSORS, LayerResult

Model = Callable[..., LayerResult]


def _analytical(cm: CompiledMapping, hw: HardwareSpec, mode: str, systolic_fold: SystolicFold | None = None,
                job: Job | None = None) -> LayerResult:
    from accelsim.analytical import analyze_layer

    return analyze_layer(cm, hw, mode, systolic_fold)


def _maestro(cm: CompiledMapping, hw: HardwareSpec, mode: str, job: Job | None = None) -> LayerResult:
    """What the MAESTRO binary would print (accelsim.maestro) for the job as written; without
    ``job`` it is refused (the written dataflow cannot be recovered from ``cm``). MAESTRO has
    one set of assumptions, so ``mode`` does not change it."""
    from accelsim.maestro import analyze_job

    if job is None:
        raise InputError("the maestro model reads the mapping as written: pass job=Job(layer, dataflow, source)")
    return analyze_job(job, hw)[0]


MODELS: dict[str, Model] = {
    "analytical": _analytical,
    "maestro": _maestro,
}

UNREPORTED: dict[str, tuple[str, ...]] = {
    "maestro": tuple(f"{tensor}.dram_{kind}" for tensor in TENSORS for kind in ("read", "write")),
}
