"""Chip area of a design for the hardware co-search, from MAESTRO's 28 nm table.

The figures are those of MAESTRO's built-in cost table (``DSE::Accelerator``, which
:mod:`accelsim.maestro.report` carries to reproduce the ``Area`` column of MAESTRO's CSV;
MAESTRO, Kwon et al., MICRO 2019 and https://github.com/maestro-project/maestro): a MAC unit
of 283 and one SRAM element (one word) of 0.104, which we read as square micrometres at 28 nm
(MAESTRO prints them without a unit; at 0.104 um^2 per word a 28 nm 6T bit cell of about
0.12 um^2 would be under one bit, so the table is an optimistic lower end; DiGamma's Fig. 6.8
prints the 0.2 mm^2 edge budget as 2.00E+5 in the same unit).

As DiGamma (Kao's thesis, Sec. 6.1.2) counts the budget, the area is that of the PEs (a MAC per
``macs_per_pe_per_cycle``), their L1s and the L2; the networks on chip, control and wiring are
left out (its footnote 1: they need physical layout, which neither MAESTRO nor DiGamma model).
MAESTRO's own CSV area adds a bus and an arbiter (:func:`accelsim.maestro.report.accelerator_cost`);
this model does not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import ceil
from typing import Any

from accelsim.hw.spec import HardwareSpec
from accelsim.maestro.report import MAC_AREA, SRAM_AREA

UM2_PER_MM2 = 1_000_000


@dataclass(frozen=True)
class Area:
    """A design's area by part, in um^2 (MAESTRO's 28 nm table): the MACs of all PEs, their
    L1s, the L2; ``total_um2`` their sum and ``total_mm2`` the same in mm^2."""

    mac_um2: float
    l1_um2: float
    l2_um2: float

    @property
    def total_um2(self) -> float:
        return self.mac_um2 + self.l1_um2 + self.l2_um2

    @property
    def total_mm2(self) -> float:
        return self.total_um2 / UM2_PER_MM2

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_um2": self.total_um2, "total_mm2": self.total_mm2}


def words(size_bytes: int, word_size_bytes: int) -> int:
    """SRAM elements (words) of a buffer of ``size_bytes`` (a partial word counts whole)."""
    return ceil(size_bytes / word_size_bytes)


def design_area(hw: HardwareSpec) -> Area:
    """The area of ``hw``'s PEs (MACs and L1s) and L2 (see the module docstring)."""
    pes = hw.pe_array.count
    word = hw.word_size_bytes
    return Area(mac_um2=pes * hw.pe_array.macs_per_pe_per_cycle * MAC_AREA,
                l1_um2=pes * words(hw.l1.size_bytes, word) * SRAM_AREA,
                l2_um2=words(hw.l2.size_bytes, word) * SRAM_AREA)
