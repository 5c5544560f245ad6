"""The quantities a comparison lines up, and how two values of one are judged.

A *metrics* dict maps metric names to numbers; a source (simulator, model, external tool)
gives only the metrics it reports. Names:

- ``cycles``: total cycles of the layer;
- ``macs``: multiply-accumulates;
- ``<tensor>.<access>``: words read or written, tensor ``input``/``weight``/``output``, access
  ``l1_read`` ... ``dram_write`` (results.ACCESS_FIELDS);
- ``l1_required_bytes``, ``l2_required_bytes``: buffer sizes the mapping needs;
- ``compute_cycles``, ``stall_cycles``: cycles in which the array computes and cycles in which
  it waits (any cause); they sum to ``cycles`` (SCALE-Sim's COMPUTE_REPORT separates them);
- ``pe_utilization``: MACs / (PEs x MACs per PE per cycle x cycles), a fraction.

Counts (``macs`` and the accesses) must agree exactly in ``maestro`` mode; ``cycles`` within
:data:`CYCLE_TOLERANCE`.
"""

from __future__ import annotations

from typing import Mapping

from accelsim.results import ACCESS_FIELDS, TENSORS, LayerResult

Metrics = dict[str, float]

ACCESS_METRICS = tuple(f"{tensor}.{access}" for tensor in TENSORS for access in ACCESS_FIELDS)
COUNT_METRICS = ("macs",) + ACCESS_METRICS  # exact agreement required in maestro mode
METRICS = (("cycles",) + COUNT_METRICS
           + ("l1_required_bytes", "l2_required_bytes", "compute_cycles", "stall_cycles", "pe_utilization"))
CYCLE_TOLERANCE = 0.02  # |relative cycle error| allowed in maestro mode


def metrics_of(result: LayerResult) -> Metrics:
    """Every metric of a LayerResult (simulator or analytical model), as Python ints (and a
    float utilization) whatever number types the result holds."""
    m: Metrics = {"cycles": int(result.cycles), "macs": int(result.macs)}
    for tensor in TENSORS:
        for access in ACCESS_FIELDS:
            m[f"{tensor}.{access}"] = int(getattr(result.accesses[tensor], access))
    m["l1_required_bytes"] = int(result.l1_required_bytes)
    m["l2_required_bytes"] = int(result.l2_required_bytes)
    m["compute_cycles"] = int(result.compute_busy_cycles)
    m["stall_cycles"] = int(result.cycles) - int(result.compute_busy_cycles)
    m["pe_utilization"] = float(result.pe_utilization)
    return m


def relative_error(reference: float, value: float) -> float | None:
    """(value - reference) / reference; 0 when both are 0, None when only the reference is."""
    if reference == 0:
        return 0.0 if value == 0 else None
    return (value - reference) / reference


def exceptions(reference: Mapping[str, float], other: Mapping[str, float]) -> list[str]:
    """The metrics on which ``other`` fails the maestro-mode agreement with ``reference``:
    counts not exactly equal, cycles off by more than CYCLE_TOLERANCE. Metrics ``other`` does
    not report are not judged. Each entry names the metric and the difference."""
    found = []
    if "cycles" in other:
        err = relative_error(reference["cycles"], other["cycles"])
        if err is None or abs(err) > CYCLE_TOLERANCE:
            found.append("cycles " + format_error(err))
    for name in COUNT_METRICS:
        if name in other and other[name] != reference[name]:
            found.append(f"{name} {format_error(relative_error(reference[name], other[name]))}")
    return found


def format_error(err: float | None) -> str:
    """A relative error as a signed percentage (``n/a`` against a zero reference)."""
    return "n/a" if err is None else f"{100 * err:+.2f}%"
