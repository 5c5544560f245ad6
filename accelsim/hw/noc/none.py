"""No reduction network: outputs return over the distribution network, competing with
operands (a step's drained words share its width, as its operands do), and the partial sums
of one output held in several PEs are never added (a mapping that needs that is refused)."""

from __future__ import annotations

from accelsim.hw.noc.base import reduction_kind


@reduction_kind
class NoReduction:
    kind = "none"
    exists = False

    def hops(self, group_pes: int) -> int:
        return 0
