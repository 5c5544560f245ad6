"""The cost models ``accelsim compare --model NAME`` can run.

A model takes the compiled mapping the simulator executes, the hardware and the fidelity mode
and returns a LayerResult (the simulator's schema). Adding a model is one entry in MODELS.
"""

from __future__ import annotations

from typing import Callable

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.results import LayerResult

Model = Callable[[CompiledMapping, HardwareSpec, str], LayerResult]


def _analytical(cm: CompiledMapping, hw: HardwareSpec, mode: str) -> LayerResult:
    from accelsim.analytical import analyze_layer

    return analyze_layer(cm, hw, mode)


MODELS: dict[str, Model] = {
    "analytical": _analytical,
}
