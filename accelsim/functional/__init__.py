"""Functional execution: run a mapping with real numbers and check the layer's result.

``simulate_functional`` runs the timing simulation unchanged while :class:`DatapathValues`
moves numpy values along the transfers the engine performs (see
:mod:`accelsim.functional.datapath`), then compares DRAM's output with a numpy reference of the
operator and reports wrong outputs, missing or duplicated MACs and where they happened
(:mod:`accelsim.functional.report`). The timing result is identical to a run without values.

Functional execution is for small layers: values are computed per PE and per step in Python,
so it is limited to ``MAX_MACS`` MACs (the per-MAC coverage map) and ``MAX_PE_STEPS`` steps x
used PEs (the per-PE work).
"""

from __future__ import annotations

from accelsim.errors import InputError
from accelsim.functional.datapath import DatapathValues
from accelsim.functional.operands import DTYPES, Dtype, check_dtype, random_operands, reference_output, tolerance
from accelsim.functional.report import FunctionalReport, build_report
from accelsim.hw.noc import REDUCTION_KINDS
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.engine import LayerSimulation, ProgressHook, SimOptions
from accelsim.results import LayerResult

MAX_MACS = 1 << 22  # 4,194,304 MACs
MAX_PE_STEPS = 1 << 18  # 262,144 (step, PE) pairs

__all__ = ["DTYPES", "FunctionalReport", "MAX_MACS", "MAX_PE_STEPS", "check_dtype", "check_size", "simulate_functional"]


def check_size(cm: CompiledMapping) -> None:
    """Refuse layers too large for functional execution, or whose output index sums several loop
    dimensions (a transposed convolution's scatter), which the datapath cannot follow yet
    (InputError naming the layer)."""
    scattered = [axis for axis in cm.layer.loop_nest().tensors["output"] if len(axis) > 1]
    if scattered:
        raise InputError(
            f"layer {cm.layer.name!r} ({cm.layer.op.value}): functional execution does not follow outputs indexed "
            "by a sum of loop dimensions (each input pixel scattering its filter taps) yet; its timing "
            "simulation runs without --functional", source=cm.source)
    pe_steps = cm.steps * cm.used_pes
    if cm.layer.macs > MAX_MACS or pe_steps > MAX_PE_STEPS:
        raise InputError(
            f"layer {cm.layer.name!r} is too large for functional execution: {cm.layer.macs:,} MACs "
            f"(at most {MAX_MACS:,}) and {cm.steps:,} steps x {cm.used_pes} PEs = {pe_steps:,} "
            f"(at most {MAX_PE_STEPS:,}); check a scaled-down layer of the same shape",
            source=cm.source)


def simulate_functional(cm: CompiledMapping, hw: HardwareSpec, options: SimOptions = SimOptions(),
                        dtype: Dtype = "int8", seed: int = 0,
                        progress: ProgressHook | None = None) -> tuple[LayerResult, FunctionalReport]:
    """Simulate one layer with values riding on its transfers; (timing result, check).
    ``progress``: the engine's progress hook."""
    check_size(cm)
    operands = random_operands(cm.layer, check_dtype(dtype), seed)
    values = DatapathValues(cm, operands, reduction_network=REDUCTION_KINDS[hw.reduction_noc.kind].exists)
    result = LayerSimulation(cm, hw, options, values=values, progress=progress).run()
    if operands.exact:
        expected = reference_output(cm.layer, operands.input, operands.weight)
    else:
        expected = reference_output(cm.layer, operands.input.astype("float64"), operands.weight.astype("float64"))
    return result, build_report(values, expected, tolerance(cm.layer, operands))
