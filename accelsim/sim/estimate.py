"""What a simulation will cost, known before it starts, and the budget that refuses the rest.

:func:`estimate_layer` reads only the compiled mapping (steps, iteration cases, PEs in use) and
the run's kind (:class:`RunKind`): no engine code runs. Its figures are estimates from
:data:`ENGINE_COST`, constants measured on the engine they describe; they say when a run takes
minutes rather than seconds, or gigabytes rather than megabytes, not its exact cost.

What the constants assume (the engine of issue 9: profile per iteration case, warps over
repeated periods; measured 2026-11-22 on the 2-core development machine, process CPU time and
peak RSS of ``simulate_layer`` in a fresh process, MARVEL's layers on ``eyeriss_like``):

* **time** is the profile's work, one demand per iteration case (well under a millisecond each),
  plus the SimPy events the engine executes, about 10 microseconds each with the processes'
  own work (MARVEL L6_CONV1 under ``maeri_like``: 31,774 events in 0.68 s; 3 microseconds each
  with ``--per-pe``: 1,294,336 events in 4.1 s). A run the engine may warp executes the events
  of the steps before each class of iterations repeats: about 100 steps per iteration case on
  MARVEL's layers (L6_CONV1: 54 cases, 31,774 events of 401,408 steps), never more than every
  step. A run without warps (traces, SCALE-Sim inputs, ``--per-pe``, ``--functional``) executes
  every step's events (``--per-pe`` one more per PE and step); functional execution computes
  each step's values in numpy across its PEs, about 30 times slower per step (L8_CONV2_2_2 of
  MARVEL under ``nvdla_like``, 11,664 steps: 25 s; AlexNet CONV3 on ``interstellar_rf2``,
  13,312 steps: 35 s, 19 CPU s in ``accelsim bench --scenario functional-conv3``).
* **memory**: about 50 MB for the process (numpy, pandas and simpy loaded), plus a few kB per
  iteration case of cached demands, plus, for a traced or SCALE-Sim run, about 1.3 kB per step
  of recorded events, plus, with ``--per-pe``, the per-PE processes and detail (a few kB per PE
  in use). Memory does not follow the array's size or the steps of a warped run: an 8-PE layer
  on a 10**9-PE array takes 50 MB (``accelsim bench --scenario wide-array``). Functional
  execution adds what :mod:`accelsim.functional` holds: per MAC of the iteration space a
  one-byte execution count and the report's comparison of it (one at a time); per output
  element its values, MAC counts and flags in DRAM and L2, the reference and the comparison
  (at most 64 bytes); per operand word its value, L2's residency masks and the reference's
  copy (at most 32 bytes); per PE its accumulator over the largest output tile a PE can hold
  (64 bytes per element: accumulator, drains in flight, read-back seeds); per step the PEs'
  operand windows, products and indices (64 bytes per MAC of the step); the boxes of a chunk
  of steps (32 MB); and per step 8 bytes for each loop's index and two more arrays (output
  runs). Measured peak RSS: AlexNet CONV3 on ``interstellar_rf2`` (149,520,384 MACs) 380 MB
  against an estimate of 401 MB; MARVEL's L8_CONV2_2_2 under ``nvdla_like`` (107,495,424
  MACs) 290 MB against 307 MB.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from accelsim.budget import Budget, format_bytes, format_seconds, refuse_over_budget
from accelsim.mapping.compile import CompiledMapping
from accelsim.workload.operators import OPERAND_ROLES
from accelsim.mapping.geometry import case_count, pe_extent_bound


@dataclass(frozen=True)
class EngineCost:
    """The constants of the estimate (see the module docstring for where they come from)."""

    base_bytes: int = 50 * 2**20  # the process with numpy, pandas and simpy loaded
    bytes_per_case: int = 8 * 2**10  # cached demands and classes of one iteration case
    bytes_per_step_unrolled: int = 1300  # recorded events of one step (traces, SCALE-Sim inputs)
    bytes_per_pe_detailed: int = 8 * 2**10  # --per-pe: one PE's processes and detail
    seconds_per_case: float = 1.0e-3  # one demand of the profile
    seconds_per_event: float = 10.0e-6  # one engine event with the processes' work
    seconds_per_pe_event: float = 3.0e-6  # --per-pe: one PE's event of a step
    seconds_fixed: float = 0.2
    warped_steps_per_case: int = 100  # steps executed per iteration case when warps apply
    functional_factor: float = 30.0  # --functional: values computed per PE and step in Python
    events_per_step: int = 6  # at most: DMA, distribution, compute, drain, write-back
    functional_bytes_per_mac: int = 2  # --functional: execution count, one comparison of it at a time
    functional_bytes_per_output: int = 64  # DRAM and L2 values, counts and flags, reference
    functional_bytes_per_operand: int = 32  # value, L2 residency masks, the reference's copy
    functional_bytes_per_tile_element: int = 64  # a PE's accumulator, drains in flight, seeds
    functional_bytes_per_step_mac: int = 64  # a step's gathered windows, products and indices
    functional_chunk_bytes: int = 32 * 2**20  # the boxes of a chunk of steps
    functional_bytes_per_step_array: int = 8  # a step's entry in each per-step array (loop indices, runs)


ENGINE_COST = EngineCost()


@dataclass(frozen=True)
class RunKind:
    """How the layer will be simulated: one PE per event (``per_pe``), without warps
    (``unrolled``: traces, SCALE-Sim inputs), with values (``functional``), and how many
    simulations of it a command runs (``compare``'s gap attribution: seven)."""

    per_pe: bool = False
    unrolled: bool = False
    functional: bool = False
    simulations: int = 1

    @property
    def every_step(self) -> bool:
        """Whether the engine executes every step's events (no warps)."""
        return self.per_pe or self.unrolled or self.functional


@dataclass(frozen=True)
class LayerEstimate:
    """A layer's expected cost: ``steps``, ``cases`` (iteration cases) and ``used_pes`` (exact,
    from the mapping), ``events`` (at most, for a run without warps; expected otherwise),
    ``wall_seconds`` and ``peak_bytes`` (estimates), ``every_step`` (no warps)."""

    layer: str
    steps: int
    cases: int
    used_pes: int
    events: int
    wall_seconds: float
    peak_bytes: int
    every_step: bool = False

    def describe(self) -> str:
        """One line: ``12,544 steps (27 iteration cases) x 168 PEs, about 3 s and 60 MB``."""
        return (f"{self.steps:,} steps ({self.cases:,} iteration cases) x {self.used_pes:,} PEs, about "
                f"{format_seconds(self.wall_seconds)} and {format_bytes(self.peak_bytes)}")


def estimate_layer(cm: CompiledMapping, kind: RunKind = RunKind(), cost: EngineCost = ENGINE_COST) -> LayerEstimate:
    """The expected cost of simulating ``cm`` as ``kind`` says (no engine code runs)."""
    steps, pes, cases = cm.steps, cm.used_pes, case_count(cm)
    executed = steps if kind.every_step else min(steps, cases * cost.warped_steps_per_case)
    events = executed * cost.events_per_step
    seconds = cost.seconds_fixed + cases * cost.seconds_per_case + events * cost.seconds_per_event
    peak = cost.base_bytes + cost.bytes_per_case * cases
    if kind.per_pe:
        events += steps * pes
        seconds += steps * pes * cost.seconds_per_pe_event
        peak += pes * cost.bytes_per_pe_detailed
    if kind.unrolled:
        peak += steps * cost.bytes_per_step_unrolled
    if kind.functional:
        seconds *= cost.functional_factor
        peak += functional_bytes(cm, cost)
    return LayerEstimate(cm.layer.name, steps, cases, pes, events * kind.simulations, seconds * kind.simulations,
                         peak, kind.every_step)


def functional_bytes(cm: CompiledMapping, cost: EngineCost = ENGINE_COST) -> int:
    """Memory functional execution adds to the simulation of ``cm`` (see the module docstring)."""
    nest, pes = cm.nest, cm.used_pes
    bound = pe_extent_bound(cm)
    tile = prod(nest.extents("output", bound))
    step_macs = min(cm.layer.macs, pes * prod(bound.values()))
    return (cost.functional_bytes_per_mac * prod(nest.dims.values())
            + cost.functional_bytes_per_output * prod(nest.extents("output"))
            + cost.functional_bytes_per_operand * sum(prod(nest.extents(role)) for role in OPERAND_ROLES)
            + cost.functional_bytes_per_tile_element * pes * tile
            + cost.functional_bytes_per_step_mac * step_macs + cost.functional_chunk_bytes
            + cost.functional_bytes_per_step_array * (len(cm.loops) + 2) * cm.steps)


def check_budget(estimate: LayerEstimate, budget: Budget, source: str = "") -> None:
    """Refuse (ResourceError) a layer over ``budget``: the message names the layer, the
    estimate and the ways out (``--max-steps``, ``--max-memory``, ``accelsim analyze``)."""
    refuse_over_budget(estimate.layer, estimate.steps, estimate.peak_bytes, budget,
                       f"estimated {estimate.describe()}; `accelsim analyze` with the same arguments estimates "
                       "it in milliseconds", source, estimate.every_step, estimate.wall_seconds)
