"""Where the cycle gap between the simulator and a model (or another tool) comes from.

Ablation: the layer is simulated in realistic mode (cycles ``R``), in maestro mode (``M``, every
effect MAESTRO ignores replaced by its ideal) and, for each cause below, in realistic mode with
only that cause's effects ideal (``R_cause``). Then, for a source reporting ``S`` cycles (and
``S_m`` in maestro mode, for a model we can run both ways; ``S_m = S`` for a file)::

    cause part        = R - R_cause          (cycles that effect alone adds)
    other/interaction = (R - M) - sum(cause parts)
    model_residual    = M - S_m              (the gap left under identical assumptions)
    model_effects     = S_m - S              (minus what the model itself charges for
                                              realistic effects)

so the parts always sum to the gap ``R - S``. In maestro mode ``R`` is ``M`` and ``S`` is
``S_m``: the whole gap is the model residual and no ablation runs. The causes group the engine
switches of accelsim.sim.engine.IDEAL_EFFECTS, each switch in exactly one cause (tested):

- ``noc_contention``: no multicast where the hardware has none, L2 ports capping the NoC
  bandwidth, a tree's root ports (each feeding its own block of PEs) instead of one shared
  width, fixed write ports of the reduction network instead of one shared width, outputs
  sharing the distribution network when there is no reduction network, and neighbour
  forwarding where the hardware has it (its part is negative: the links take words off
  the network);
- ``reduction_latency``: reduction-network hop latency;
- ``pipeline_fill_drain``: distribution-network latency and the MAC pipeline depth (the cycles
  before a step's operands are usable and after its last MAC), and the controller's tile
  barrier (a tile's fill and drain exposed);
- ``dram_latency``: DRAM latency, burst rounding of contiguous runs and DMA setup cost
  (``dram.model``), against bytes over bandwidth;
- ``buffer_limits``: single-buffered L1/L2 where the hardware is, against MAESTRO's ideal
  double buffering (0 on hardware that double-buffers both), and operands a PE does not reuse
  from its L1 across steps (``l1.reused_operands``; 0 where it reuses both);
- ``model_residual``: what the model gets wrong about an execution that obeys its own
  assumptions (edge-tile cases, transitions between cases, L2-tile boundaries, per-step
  overlap);
- ``model_effects``: minus the cycles the model itself adds for realistic effects.

Only the last two depend on the source.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.engine import SimOptions, simulate_layer

CAUSES: dict[str, frozenset[str]] = {
    "noc_contention": frozenset({"multicast", "l2_ports", "packed_ingress", "shared_egress", "write_ports",
                                  "neighbour_forwarding"}),
    "reduction_latency": frozenset({"reduction_latency"}),
    "pipeline_fill_drain": frozenset({"ingress_latency", "mac_pipeline", "tile_barrier", "multiply_on_arrival"}),
    "dram_latency": frozenset({"dram"}),
    "buffer_limits": frozenset({"double_buffering", "l1_reuse"}),
}
INTERACTION = "other/interaction"
RESIDUAL = "model_residual"
MODEL_EFFECTS = "model_effects"
PARTS = tuple(CAUSES) + (INTERACTION, RESIDUAL, MODEL_EFFECTS)


@dataclass(frozen=True)
class Ablation:
    """Simulated cycles of one layer: realistic, maestro, and realistic with each cause ideal."""

    realistic_cycles: int
    maestro_cycles: int
    ideal_cycles: dict[str, int]  # cause -> cycles with that cause's effects ideal

    def split(self, source_cycles: float, source_maestro_cycles: float | None = None) -> dict[str, float]:
        """The gap ``realistic - source`` as parts (PARTS, in order) summing exactly to it;
        ``source_maestro_cycles``: the source's estimate under MAESTRO's assumptions, when known."""
        if source_maestro_cycles is None:
            source_maestro_cycles = source_cycles
        parts: dict[str, float] = {cause: self.realistic_cycles - self.ideal_cycles[cause] for cause in CAUSES}
        parts[INTERACTION] = self.realistic_cycles - self.maestro_cycles - sum(parts.values())
        parts[RESIDUAL] = self.maestro_cycles - source_maestro_cycles
        parts[MODEL_EFFECTS] = source_maestro_cycles - source_cycles
        return parts


def ablate(cm: CompiledMapping, hw: HardwareSpec, realistic_cycles: int, maestro_cycles: int) -> Ablation:
    """Run the one-cause-ideal simulations of a layer (one per CAUSES entry)."""
    ideal = {cause: simulate_layer(cm, hw, SimOptions(ideal=effects)).cycles for cause, effects in CAUSES.items()}
    return Ablation(realistic_cycles, maestro_cycles, ideal)


def no_ablation(maestro_cycles: int) -> Ablation:
    """The trivial ablation of a maestro-mode comparison: every cause part is 0."""
    return Ablation(maestro_cycles, maestro_cycles, {cause: maestro_cycles for cause in CAUSES})
