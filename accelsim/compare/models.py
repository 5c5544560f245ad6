"""The cost models ``accelsim compare --model NAME`` can run.

A model takes the compiled mapping the simulator executes, the hardware and the fidelity mode
(and, as a keyword, the SCALE-Sim fold rule ``systolic_fold`` where a run has one) and returns a
LayerResult (the simulator's schema). Adding a model is one entry in MODELS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.model_options import SystolicFold
from accelsim.results import LayerResult

Model = Callable[[CompiledMapping, HardwareSpec, str], LayerResult]


def _analytical(cm: CompiledMapping, hw: HardwareSpec, mode: str, systolic_fold: SystolicFold | None = None
                ) -> LayerResult:
    from accelsim.analytical import analyze_layer

    return analyze_layer(cm, hw, mode, systolic_fold)


MODELS: dict[str, Model] = {
    "analytical": _analytical,
}
