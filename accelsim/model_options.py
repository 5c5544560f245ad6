"""Options every timing model takes: the fidelity mode, the effects it idealizes, and SCALE-Sim's
systolic fold rule.

The simulator (:mod:`accelsim.sim`) and the analytical model (:mod:`accelsim.analytical`) both
read these; they sit beside the neutral result schema (:mod:`accelsim.results`) so neither model
depends on the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from accelsim.errors import InputError
from accelsim.workload.operators import TensorRole

Mode = Literal["realistic", "maestro"]
MODES: tuple[Mode, ...] = ("realistic", "maestro")

# The realistic effects that mode "maestro" replaces by MAESTRO's ideal all at once;
# ``SimOptions.ideal`` replaces single ones (ablation: accelsim.compare.attribution).
IDEAL_EFFECTS = (
    "multicast",  # every network multicasts
    "l2_ports",  # NoC bandwidths not capped by L2's read/write bandwidth
    "packed_ingress",  # no root ports: a step's operands share the whole width
    "shared_egress",  # outputs never compete with operands on the distribution network
    "ingress_latency",  # no distribution-network latency
    "reduction_latency",  # no reduction-network hop latency
    "mac_pipeline",  # no MAC pipeline depth
    "double_buffering",  # L1 and L2 double-buffered whatever the hardware says
    "l1_reuse",  # every operand a PE holds is reused across steps (hw.l1.reused_operands)
    "dram",  # DRAM at bandwidth only: no latency, bursts or DMA setup
    "tile_barrier",  # no controller barrier between tiles (hw.controller.tile_barrier)
    "write_ports",  # no fixed write ports: a step's drains share the reduction network's width
    "multiply_on_arrival",  # a step's MACs start when all its operands have arrived (hw.pe_array)
    "neighbour_forwarding",  # no links between neighbouring PEs (MAESTRO has none): every input word fetched
)


def check_mode(mode: str) -> Mode:
    """``mode`` as a :data:`Mode`; InputError for anything else (every API entry point calls it)."""
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    return mode


@dataclass(frozen=True)
class SystolicFold:
    """SCALE-Sim's fold timing rule for a systolic array (see :mod:`accelsim.scalesim.translate`).

    A fold is the run of steps over one tile of the ``stationary`` tensor (``weight`` for
    SCALE-Sim's ws, ``input`` for is, ``output`` for os). Each fold pays ``fill_drain_cycles``
    of compute on top of its streamed MACs (os: rows + cols - 2; ws and is: 2 rows + cols - 2),
    charged to the step that loads a new stationary tile (input, weight) or drains it
    (output). Steps never overlap on the array, so neither do folds.
    """

    stationary: TensorRole
    fill_drain_cycles: int

    def overhead_cycles(self, drains: bool, new_words: Mapping[str, int]) -> int:
        """Fill/drain cycles of a step that ``drains`` outputs (or not) and sends ``new_words``
        of each operand: ``fill_drain_cycles`` at a fold boundary, else 0."""
        boundary = drains if self.stationary == "output" else new_words[self.stationary] > 0
        return self.fill_drain_cycles if boundary else 0
