"""Functional execution: run a mapping with real numbers and check the layer's result.

``simulate_functional`` runs the timing simulation unchanged while :class:`DatapathValues`
moves numpy values along the transfers the engine performs (see
:mod:`accelsim.functional.datapath`), then compares DRAM's output with a numpy reference of the
operator and reports wrong outputs, missing or duplicated MACs and where they happened
(:mod:`accelsim.functional.report`). The timing result is identical to a run without values.

Each step's values are computed in numpy across the step's PEs; what limits a layer is memory
(a one-byte execution count per MAC of the iteration space, the tensors, the PEs' output
tiles): the simulator's estimate counts it (:func:`accelsim.sim.estimate.functional_bytes`) and
a layer over the budget's memory (``--max-memory``) is refused before it runs.
"""

from __future__ import annotations

from accelsim.budget import Budget
from accelsim.errors import InputError
from accelsim.functional.datapath import DatapathValues
from accelsim.functional.operands import DTYPES, Dtype, check_dtype, random_operands, reference_output, tolerance
from accelsim.functional.report import FunctionalReport, build_report
from accelsim.hw.noc import REDUCTION_KINDS
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.engine import LayerSimulation, ProgressHook, SimOptions
from accelsim.sim.estimate import RunKind, check_budget, estimate_layer
from accelsim.results import LayerResult

__all__ = ["DTYPES", "FunctionalReport", "check_dtype", "check_size", "simulate_functional"]


def check_size(cm: CompiledMapping, budget: Budget = Budget()) -> None:
    """Refuse a layer whose output index sums several loop dimensions (a transposed
    convolution's scatter), which the datapath cannot follow yet (InputError naming the layer),
    or whose functional execution is estimated over ``budget`` (ResourceError naming the
    estimated memory and the limit)."""
    scattered = [axis for axis in cm.layer.loop_nest().tensors["output"] if len(axis) > 1]
    if scattered:
        raise InputError(
            f"layer {cm.layer.name!r} ({cm.layer.op.value}): functional execution does not follow outputs indexed "
            "by a sum of loop dimensions (each input pixel scattering its filter taps) yet; its timing "
            "simulation runs without --functional", source=cm.source)
    check_budget(estimate_layer(cm, RunKind(functional=True)), budget, cm.layer.source)


def simulate_functional(cm: CompiledMapping, hw: HardwareSpec, options: SimOptions = SimOptions(),
                        dtype: Dtype = "int8", seed: int = 0, progress: ProgressHook | None = None,
                        budget: Budget = Budget()) -> tuple[LayerResult, FunctionalReport]:
    """Simulate one layer with values riding on its transfers; (timing result, check).
    ``progress``: the engine's progress hook; ``budget``: refuses a layer estimated over it
    (:func:`check_size`)."""
    check_size(cm, budget)
    operands = random_operands(cm.layer, check_dtype(dtype), seed)
    values = DatapathValues(cm, operands, reduction_network=REDUCTION_KINDS[hw.reduction_noc.kind].exists,
                            bypass=hw.l2.bypassed)
    result = LayerSimulation(cm, hw, options, values=values, progress=progress).run()
    if operands.exact:
        expected = reference_output(cm.layer, operands.input, operands.weight)
    else:
        expected = reference_output(cm.layer, operands.input.astype("float64"), operands.weight.astype("float64"))
    return result, build_report(values, expected, tolerance(cm.layer, operands))
