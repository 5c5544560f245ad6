"""MAESTRO's cycle gap to the simulator, one named rule at a time.

From MAESTRO's number (its CSV, or our model of it) to the simulator's, each rung is a computed
variant that changes one rule; its *part* is its cycles minus the previous rung's, so the parts
sum exactly to ``simulator - MAESTRO``:

1. ``maestro_model``: our model of the MAESTRO binary (accelsim.maestro), against the number the
   source gives (0 when the model reproduces a CSV; always 0 for the model itself);
2. ``output_counts``: the model with the outputs of each step counted right: a neighbouring unit of
   an input-row SpatialMap on a strided layer adds ``offset / stride`` output rows (not
   ``min(offset, size)``) and the partial last unit of a map that fills its dimension writes its
   outputs (not 0); they set egress delays and the output part of the off-chip floor;
3. ``offchip_floor``: and its per-step off-chip floor (half a double-buffered all-Init L2 tile
   over the off-chip bandwidth, whatever the step moves) replaced by the DRAM traffic the
   execution really moves (our analytical model's DRAM words, maestro mode) over the off-chip
   bandwidth, as a bound on the whole layer: ``max(cases without floor, DRAM words / bw)``;
   the later model rungs keep that bound;
4. ``subcluster_init_serial``: and without each sub-unit tile paying its first case serially;
5. ``noc_latency``: and with NoC delays of ``ceil(words / bw)`` (no hop latency);
6. ``case_arithmetic``: our analytical model in maestro mode, the exact cost of the true layer
   under MAESTRO's assumptions, in place of MAESTRO's case arithmetic: MAC coverage at spatial
   edges, stride-ignored output sizes, zero-counted edge units, what each step really sends and
   holds, L2 tiles of the true footprint;
7. ``model_residual``: the simulator in maestro mode against the analytical model (transitions
   between cases, the pipeline's fill and drain);
8. realistic mode only: the simulator's realistic effects, one ablation cause per rung
   (accelsim.compare.attribution: ``noc_contention``, ``reduction_latency``,
   ``pipeline_fill_drain``, ``dram_latency``, ``buffer_limits``, ``other/interaction``), or one
   rung ``realistic_effects`` when attribution is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accelsim.compare.attribution import CAUSES, INTERACTION, Ablation
from accelsim.hw.spec import HardwareSpec
from accelsim.maestro import (
    Corrections,
    analyze_problem,
    hardware_of,
    maestro_layer_of,
    problem_of,
)
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job

_COUNTS = {"strided_egress": True, "zero_edge_egress": True}
MODEL_RUNGS: tuple[tuple[str, Corrections], ...] = (
    ("maestro_model", Corrections()),
    ("output_counts", Corrections(**_COUNTS)),
    ("offchip_floor", Corrections(offchip_floor=True, **_COUNTS)),
    ("subcluster_init_serial", Corrections(offchip_floor=True, subcluster_init_serial=True, **_COUNTS)),
    ("noc_latency", Corrections(offchip_floor=True, subcluster_init_serial=True, noc_latency=True, **_COUNTS)),
)
CASE_ARITHMETIC = "case_arithmetic"
MODEL_RESIDUAL = "model_residual"
REALISTIC_EFFECTS = "realistic_effects"
RUNGS = (*(name for name, _ in MODEL_RUNGS), CASE_ARITHMETIC, MODEL_RESIDUAL, *CAUSES, INTERACTION, REALISTIC_EFFECTS)


@dataclass(frozen=True)
class Rung:
    """One variant on the way: its cycles and what it changed against the previous one."""

    name: str
    cycles: int
    part: int


@dataclass
class Ladder:
    """The walk from a MAESTRO source's cycles to the simulator's."""

    source: str
    source_cycles: int
    rungs: list[Rung] = field(default_factory=list)

    def climb(self, name: str, cycles: int) -> None:
        previous = self.rungs[-1].cycles if self.rungs else self.source_cycles
        self.rungs.append(Rung(name, cycles, cycles - previous))

    @property
    def gap(self) -> int:
        """Simulator cycles minus the source's: the sum of the parts."""
        return self.rungs[-1].cycles - self.source_cycles

    def parts(self) -> dict[str, int]:
        return {r.name: r.part for r in self.rungs}

    def to_dict(self) -> dict:
        return {"source": self.source, "source_cycles": self.source_cycles, "gap": self.gap,
                "rungs": [{"name": r.name, "cycles": r.cycles, "part": r.part} for r in self.rungs]}


@dataclass(frozen=True)
class LadderSteps:
    """The variants of one layer that every MAESTRO source's ladder shares."""

    model_cycles: tuple[int, ...]  # MODEL_RUNGS in order
    analytical_maestro_cycles: int
    simulator_maestro_cycles: int
    simulator_cycles: int  # in the comparison's mode
    ablation: Ablation | None  # realistic mode with attribution


def ladder(source: str, source_cycles: int, steps: LadderSteps) -> Ladder:
    """The ladder of one source (MAESTRO's CSV or our model of it) over the shared variants."""
    walk = Ladder(source, source_cycles)
    for (name, _), cycles in zip(MODEL_RUNGS, steps.model_cycles, strict=True):
        walk.climb(name, cycles)
    walk.climb(CASE_ARITHMETIC, steps.analytical_maestro_cycles)
    walk.climb(MODEL_RESIDUAL, steps.simulator_maestro_cycles)
    if steps.simulator_cycles != steps.simulator_maestro_cycles or steps.ablation is not None:
        if steps.ablation is None:
            walk.climb(REALISTIC_EFFECTS, steps.simulator_cycles)
        else:
            ab = steps.ablation
            cycles = ab.maestro_cycles
            for cause in CAUSES:
                cycles += ab.realistic_cycles - ab.ideal_cycles[cause]
                walk.climb(cause, cycles)
            walk.climb(INTERACTION, ab.realistic_cycles)
    return walk


def ladder_steps(job: Job, cm: CompiledMapping, hw: HardwareSpec, simulator_cycles: int,
                 simulator_maestro_cycles: int, ablation: Ablation | None) -> LadderSteps:
    """Compute the shared variants of one layer: the MAESTRO model under each correction set
    and the analytical model in maestro mode (the simulator's runs are the caller's)."""
    from accelsim.analytical import analyze_layer

    problem = problem_of(maestro_layer_of(job))
    maestro_hw = hardware_of(hw)
    analytical = analyze_layer(cm, hw, "maestro")
    dram_words = sum(a.dram_read + a.dram_write for a in analytical.accesses.values())
    dram_cycles = -(-dram_words // maestro_hw.offchip_bandwidth_words_per_cycle)
    model_cycles = tuple(
        max(analyze_problem(problem, maestro_hw, fix).cycles, dram_cycles if fix.offchip_floor else 0)
        for _, fix in MODEL_RUNGS)
    return LadderSteps(model_cycles, analytical.cycles, simulator_maestro_cycles, simulator_cycles, ablation)
