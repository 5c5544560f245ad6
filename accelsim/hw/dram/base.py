"""What the timing models ask of a DRAM kind, and the registry of kinds.

A DRAM kind says how long one DMA transfer between DRAM and L2 occupies the channel, given
the words it moves and the contiguous runs they form in DRAM, and how much longer until the
data has arrived. Each kind is one class in its own module of this package, registered with
:func:`dram_kind`; the hardware spec accepts exactly the registered names (``dram.model``),
and the simulator (:mod:`accelsim.sim`) and the analytical model (:mod:`accelsim.analytical`)
ask the class, never the name. :func:`ideal_cycles` is MAESTRO's assumption, bytes over
bandwidth, whatever the kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

if TYPE_CHECKING:  # the spec validates against this registry
    from accelsim.hw.spec import DRAMSpec


class DramModel(Protocol):
    """DRAM behind a DMA engine, of one kind."""

    kind: str
    # False: there is no off-chip memory (kind ``none``); transfers take no cycles in any mode
    off_chip: bool

    def busy_cycles(self, dram: DRAMSpec, clock_mhz: float, nbytes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """Accelerator cycles the channel is busy per transfer of ``nbytes`` bytes in ``runs``
        (>= 1) contiguous pieces (arrays of equal shape; float64 result, whole numbers)."""
        ...

    def latency_cycles(self, dram: DRAMSpec) -> int:
        """Further cycles after the channel is free until a transfer's data has arrived."""
        ...


DRAM_KINDS: dict[str, DramModel] = {}

K = TypeVar("K", bound=DramModel)


def dram_kind(cls: type[K]) -> type[K]:
    """Class decorator: register a DRAM kind under its ``kind``."""
    instance = cls()
    DRAM_KINDS[instance.kind] = instance
    return cls


def burst_count(nbytes: np.ndarray, runs: np.ndarray, burst_bytes: int) -> np.ndarray:
    """Bursts of a transfer of ``nbytes`` bytes in ``runs`` contiguous runs (at least 1): each
    run, of the transfer's mean length, rounded up to whole bursts (the ``simple`` kind's count)."""
    return runs * np.ceil(np.ceil(nbytes / runs) / burst_bytes)


def ideal_cycles(dram: DRAMSpec, nbytes: np.ndarray) -> np.ndarray:
    """MAESTRO's DRAM: bytes over bandwidth, no latency, bursts or DMA setup."""
    return np.ceil(nbytes / dram.bandwidth_bytes_per_cycle)


def transfer_cycles(dram: DRAMSpec, word_size_bytes: int, clock_mhz: float, words: np.ndarray, runs: np.ndarray,
                    ideal: bool) -> np.ndarray:
    """Channel cycles (int64) per transfer of ``words`` words in ``runs`` contiguous pieces
    (0 where nothing moves): :func:`ideal_cycles` if ``ideal``, else the kind's (0 for a kind
    without off-chip memory, ideal or not: there is no DRAM to idealize)."""
    nbytes = np.asarray(words, dtype=np.int64) * word_size_bytes
    if ideal and DRAM_KINDS[dram.model].off_chip:
        cycles = ideal_cycles(dram, nbytes)
    else:
        cycles = DRAM_KINDS[dram.model].busy_cycles(dram, clock_mhz, nbytes, np.maximum(runs, 1))
    return np.where(nbytes > 0, cycles, 0).astype(np.int64)


def latency_cycles(dram: DRAMSpec, ideal: bool) -> int:
    """Cycles from the end of a transfer's channel time to its data's arrival."""
    return 0 if ideal else DRAM_KINDS[dram.model].latency_cycles(dram)
