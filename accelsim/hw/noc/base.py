"""What the timing models ask of a network kind, and the registry of kinds.

A *distribution* network carries operands from L2 to the PEs' L1s; a *reduction* network
carries partial sums from the PEs to L2, adding those of one output on the way. Bandwidths
are words per cycle: the words of one step share a network's width (its root ports' widths,
where it has several), whatever the number of packets. Each kind is
one class in its own module of this package, registered with :func:`distribution_kind` or
:func:`reduction_kind`; the hardware spec accepts exactly the registered names, and the
simulator (:mod:`accelsim.sim`) and the analytical model (:mod:`accelsim.analytical`) ask the
class, never the name, for latency, serialization and sharing.
"""

from __future__ import annotations

from typing import Protocol, TypeVar


class DistributionNetwork(Protocol):
    """L2 -> PE network of one kind."""

    kind: str
    # forwarding hands the same words to every PE on the way: always one packet per group
    always_multicast: bool
    # every hop's register holds one step's operands, so a step in flight on the links does
    # not occupy an L1 buffer (the latency adds that many buffers in flight)
    registers_steps: bool
    # operands reach PE (row, col) row + col cycles after PE (0, 0) (a wavefront), so the PEs
    # finish a step in that order (used by fixed write ports, ReductionNoCSpec.write_ports)
    wavefront: bool

    def ports(self, pes: int, bandwidth_words_per_cycle: float) -> int:
        """Root ports of a network of ``bandwidth_words_per_cycle`` over ``pes`` PEs. Port p
        feeds the fixed block of PEs ``[p * b, (p + 1) * b)`` with ``b = ceil(pes / ports)``
        and carries ``bandwidth / ports`` words per cycle; a word for PEs in k blocks costs one
        slot on each of the k ports, and a step's words (every tensor) share the ports, so a
        step takes as many cycles as its busiest port needs. One port: all words of a step
        share the whole width."""
        ...

    def hops(self, rows: int, cols: int) -> int:
        """Hops from L2 to the farthest PE of a ``rows`` x ``cols`` array (each costs the
        network's ``latency_cycles``)."""
        ...


class ReductionNetwork(Protocol):
    """PE -> L2 network of one kind, adding the partial sums of one output on the way."""

    kind: str
    # False: there is no reduction network; outputs go back over the distribution network,
    # competing with operands, and partial sums of one output are not added
    exists: bool

    def hops(self, group_pes: int) -> int:
        """Hops for the partial sums of ``group_pes`` PEs to meet (each costs the network's
        ``latency_cycles_per_hop``)."""
        ...


DISTRIBUTION_KINDS: dict[str, DistributionNetwork] = {}
REDUCTION_KINDS: dict[str, ReductionNetwork] = {}

def port_block_pes(pes: int, ports: int) -> int:
    """PEs behind each root port (the last block may be short)."""
    return -(-pes // ports)


D = TypeVar("D", bound=DistributionNetwork)
R = TypeVar("R", bound=ReductionNetwork)


def distribution_kind(cls: type[D]) -> type[D]:
    """Class decorator: register a distribution network kind under its ``kind``."""
    instance = cls()
    DISTRIBUTION_KINDS[instance.kind] = instance
    return cls


def reduction_kind(cls: type[R]) -> type[R]:
    """Class decorator: register a reduction network kind under its ``kind``."""
    instance = cls()
    REDUCTION_KINDS[instance.kind] = instance
    return cls
