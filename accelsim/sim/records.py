"""What the engine's processes pass to each other and keep across a wait, as named records.

Times are whole cycles, steps index the flattened loop nest, tiles the L2 tiles. The warp
(:mod:`accelsim.sim.warp`) reads and moves every time, step and tile held here, so a process
keeps nothing it needs after a wait anywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accelsim.results import ACCESS_FIELDS, STALL_CAUSES, TENSORS, TensorAccesses
from accelsim.mapping.demand import StepDemand


@dataclass(eq=False)
class StepToken:
    """A step on its way from distribution to computation."""

    step: int
    demand: StepDemand
    arrival: int  # cycle its operands are in the farthest L1
    l2_arrival: int  # cycle its L2 tile arrived (a tile's first step only; 0 otherwise)
    held: int  # cycles its read-back waited for the partial sums it reads
    tile: int


@dataclass(eq=False)
class DrainToken:
    """A computed step whose outputs leave the PEs."""

    step: int
    demand: StepDemand
    ready_at: int  # cycle the MAC pipeline has emptied
    tile: int  # the L2 tile whose write-back follows this drain, or -1


@dataclass(eq=False)
class TileArrival:
    """An L2 tile in place."""

    tile: int
    cycle: int


@dataclass(eq=False)
class ProcessState:
    """What a process carries across a wait: where it is (``phase``), the step or tile it
    works on, the cycles it remembers and the token it holds."""

    name: str
    phase: str = "start"
    step: int = 0
    tile: int = -1
    key: int = -1  # the partial sums or write-back it waits for
    since: int = 0  # distribute: held from; compute: waited from
    start: int = 0
    done_at: int = 0  # compute: computed at
    cycles: int = 0
    stalls: list[int] = field(default_factory=lambda: [0, 0, 0])
    held_part: int = 0
    l2_arrival: int = 0
    token: Any = None


@dataclass
class Counters:
    """Everything a result adds up, in words, cycles and steps."""

    acc: dict[str, TensorAccesses] = field(default_factory=lambda: {t: TensorAccesses() for t in TENSORS})
    stall: dict[str, int] = field(default_factory=lambda: {c: 0 for c in STALL_CAUSES})
    busy: int = 0
    macs: int = 0
    noc_words: int = 0
    noc_dest: int = 0
    egress_words: int = 0
    steps_done: int = 0
    forwarded: int = 0  # input words PEs took from their neighbours

    def vector(self) -> list[int]:
        out = [getattr(self.acc[t], f) for t in TENSORS for f in ACCESS_FIELDS]
        out += [self.stall[c] for c in STALL_CAUSES]
        return out + [self.busy, self.macs, self.noc_words, self.noc_dest, self.egress_words, self.steps_done,
                      self.forwarded]

    def add_scaled(self, now: list[int], before: list[int], times: int) -> None:
        """Add ``times`` x (``now`` - ``before``), vectors of :meth:`vector`."""
        delta = [(a - b) * times for a, b in zip(now, before)]
        i = 0
        for t in TENSORS:
            for f in ACCESS_FIELDS:
                setattr(self.acc[t], f, getattr(self.acc[t], f) + delta[i])
                i += 1
        for c in STALL_CAUSES:
            self.stall[c] += delta[i]
            i += 1
        self.busy += delta[i]
        self.macs += delta[i + 1]
        self.noc_words += delta[i + 2]
        self.noc_dest += delta[i + 3]
        self.egress_words += delta[i + 4]
        self.steps_done += delta[i + 5]
        self.forwarded += delta[i + 6]


@dataclass
class Trackers:
    """Latest cycles: computation end, drain landing, write-back end (each only grows)."""

    compute_end: int = 0
    drain_end: int = 0
    write_end: int = 0

    def values(self) -> tuple[int, int, int]:
        return self.compute_end, self.drain_end, self.write_end
