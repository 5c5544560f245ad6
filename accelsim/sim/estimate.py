"""What a simulation will cost, known before it starts, and the budget that refuses the rest.

:func:`estimate_layer` reads only the compiled mapping (steps, PEs in use) and the run's kind
(:class:`RunKind`): no engine code runs. Its figures are estimates from :data:`ENGINE_COST`,
constants measured on the engine they describe; they say when a run takes minutes rather than
seconds, or gigabytes rather than megabytes, not its exact cost.

What the constants assume (the grouped engine of commit ea49be8, measured 2026-11-22 on the
2-core development machine, ``/usr/bin/time`` peak RSS and process CPU time of
``simulate_layer`` in a fresh process):

* **time** grows with steps x PEs in use (the per-step profile is computed per PE with numpy,
  0.6-0.8 microseconds per PE-step on MARVEL's layers and on 144 steps x 2**20 PEs) plus
  the SimPy events of steps that fast-forward does not cover (up to about 4 microseconds a
  step); ``per_pe`` adds one event per PE and step, running without fast-forward (traces,
  SCALE-Sim inputs) about doubles the time (a 2000 x 2000 x 1000 GEMM on SCALE-Sim's 32 x 32
  array: 4,032 steps in 11 s, 16,128 in 35 s) and functional execution costs about 30x.
* **memory**: about 60 MB for the process, plus the profile's numpy arrays for one chunk of
  ``max(MAX_CHUNK_ELEMENTS, PEs in use)`` step x PE elements (about 1 kB each: 230 MB for
  MARVEL's layers on 168 PEs, 1.06 GB for 2**20 PEs), plus about 330 bytes per step of state
  the engine keeps (1.4 GB for 4,194,304 steps on one PE), about 1.2 kB per step without
  fast-forward (the SCALE-Sim GEMM: 15 MB more for 12,096 more steps).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.budget import Budget, format_bytes, format_seconds, refuse_over_budget
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.profile import MAX_CHUNK_ELEMENTS


@dataclass(frozen=True)
class EngineCost:
    """The constants of the estimate (see the module docstring for where they come from)."""

    base_bytes: int = 60 * 2**20  # the process with numpy, pandas and simpy loaded
    bytes_per_chunk_element: int = 1024  # profile arrays per step x PE element of one chunk
    bytes_per_step: int = 400  # engine state kept per step
    bytes_per_step_unrolled: int = 1300  # the same without fast-forward (every step's events)
    seconds_per_pe_step: float = 1.0e-6
    seconds_per_step: float = 4.0e-6  # events of steps not fast-forwarded
    seconds_fixed: float = 0.2
    per_pe_factor: float = 30.0  # --per-pe: one process per PE and packet
    unrolled_factor: float = 2.0  # no fast-forward (--trace, SCALE-Sim inputs): every step's events
    functional_factor: float = 30.0  # --functional: values computed per PE and step in Python
    events_per_step: int = 6  # at most, unrolled: DMA, distribution, compute, drain, write-back
    chunk_elements: int = MAX_CHUNK_ELEMENTS


ENGINE_COST = EngineCost()


@dataclass(frozen=True)
class RunKind:
    """How the layer will be simulated: one PE per event (``per_pe``), without fast-forward
    (``unrolled``: traces, SCALE-Sim inputs), with values (``functional``), and how many
    simulations of it a command runs (``compare``'s gap attribution: seven)."""

    per_pe: bool = False
    unrolled: bool = False
    functional: bool = False
    simulations: int = 1


@dataclass(frozen=True)
class LayerEstimate:
    """A layer's expected cost: ``steps`` and ``used_pes`` (exact, from the mapping),
    ``events`` (at most), ``wall_seconds`` and ``peak_bytes`` (estimates)."""

    layer: str
    steps: int
    used_pes: int
    events: int
    wall_seconds: float
    peak_bytes: int

    def describe(self) -> str:
        """One line: ``12,544 steps x 168 PEs, about 3 s and 290 MB``."""
        return (f"{self.steps:,} steps x {self.used_pes:,} PEs, about {format_seconds(self.wall_seconds)} and "
                f"{format_bytes(self.peak_bytes)}")


def estimate_layer(cm: CompiledMapping, kind: RunKind = RunKind(), cost: EngineCost = ENGINE_COST) -> LayerEstimate:
    """The expected cost of simulating ``cm`` as ``kind`` says (no engine code runs)."""
    steps, pes = cm.steps, cm.used_pes
    pe_steps = steps * pes
    seconds = cost.seconds_fixed + pe_steps * cost.seconds_per_pe_step + steps * cost.seconds_per_step
    events = steps * cost.events_per_step
    if kind.per_pe:
        seconds += pe_steps * cost.seconds_per_pe_step * cost.per_pe_factor
        events += pe_steps * cost.events_per_step
    if kind.unrolled:
        seconds *= cost.unrolled_factor
    if kind.functional:
        seconds *= cost.functional_factor
    per_step = cost.bytes_per_step_unrolled if kind.unrolled else cost.bytes_per_step
    peak = cost.base_bytes + cost.bytes_per_chunk_element * max(cost.chunk_elements, pes) + per_step * steps
    return LayerEstimate(cm.layer.name, steps, pes, events * kind.simulations, seconds * kind.simulations, peak)


def check_budget(estimate: LayerEstimate, budget: Budget, source: str = "") -> None:
    """Refuse (ResourceError) a layer over ``budget``: the message names the layer, the
    estimate and the ways out (``--max-steps``, ``--max-memory``, ``accelsim analyze``)."""
    refuse_over_budget(estimate.layer, estimate.steps, estimate.peak_bytes, budget,
                       f"estimated {estimate.describe()}; `accelsim analyze` with the same arguments estimates "
                       "it in milliseconds", source)
