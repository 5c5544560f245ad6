"""MAESTRO's result CSV (``--print_res_csv_file=true``), column for column.

Besides the analysis counts, MAESTRO's CSV holds an energy figure (accesses x its per-access
multipliers x its MAC energy), an area and power estimate of a bus-plus-arbiter accelerator
from its built-in 28 nm table, bandwidth requirements and delay statistics. Values are printed
as C++'s default stream does (``%g``, six significant digits). Quirks kept on purpose:

* ``energy_stale_l1_counts``: for a mapping with more than one cluster level, MAESTRO adds the
  L1 accesses of the *previous* layer's top level (zero for the first layer) to a layer's
  energy, because it reads them before it sets them.
* ``layer_name_split``: MAESTRO's tokenizer splits names at ``-`` and ``>`` (and the other
  separators ``space , ( ) : ; tab``) and keeps the last piece, so ``Conv2d-1`` is printed as
  ``1``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from accelsim.maestro.engine import TENSOR_NAMES, LevelResult
from accelsim.output_files import spreadsheet_safe

L1_ENERGY_MULTIPLIER = 1.68
L2_ENERGY_MULTIPLIER = 18.61
MAC_ENERGY_NJ = 0.00023
MAC_AREA, MAC_POWER = 283.0, 1.2223
SRAM_AREA, SRAM_POWER = 0.104, 0.00345  # per element (unit size 1)
BUS_AREA, BUS_POWER = 101.7938, 0.8
ARBITER_AREA, ARBITER_POWER = 395.473, 0.34
ARBITER_C2, ARBITER_C1, ARBITER_C0 = 1.2886, 5.5814, -23.711
BUS_C1, BUS_C0 = 14.662, 28.895

HEADER = (
    "Neural Network Name, Layer Number, NumPEs, Runtime (Cycles), Activity count-based Energy (nJ), "
    "Throughput (MACs/Cycle), Throughput Per Energy (GMACs/s*J), Area, Power, NoC BW Req (Elements/cycle), "
    "Avg BW Req, Peak BW Req, Vector Width, Offchip BW Req (Elements/cycle),  L2 SRAM Size Req (Bytes), "
    "L1 SRAM Size Req (Bytes), Multicasting Factor (Weight), Multicasting Factor (Input), Num Total Input "
    "Pixels, Num Total Weight Pixels, Ops/J, Num MACs, PE power, L1 power, L2 power, NOC power, "
    + "".join(f"{t} l1 read, {t} l1 write, {t} l2 read, {t} l2 write, {t} reuse factor," for t in TENSOR_NAMES)
    + "Ingress Delay (Min), Ingress Delay (Max), Ingress Delay (Avg), Egress Delay (Min), Egress Delay (Max),  "
    "Egress Delay (Avg),Compute Delay (Min), Compute Delay (Min), Compute Delay (Avg),Avg number of utilized "
    "PEs, Arithmetic Intensity"
)

_SEPARATORS = re.compile(r"[ ,\->():\t;]+")


def maestro_name(name: str) -> str:
    """The name MAESTRO prints for a layer or network (quirk ``layer_name_split``)."""
    pieces = [p for p in _SEPARATORS.split(name) if p]
    return pieces[-1] if pieces else name


def maestro_cell(name: str) -> str:
    """A name as MAESTRO prints it (:func:`maestro_name`: commas, blanks and the like already cut
    away), made safe for a CSV cell: a formula lead quoted for spreadsheets
    (:func:`~accelsim.output_files.spreadsheet_safe`), and a name MAESTRO's unquoted format
    cannot hold (a quote, a newline or another control character) written as a quoted CSV field,
    which our reader and every CSV reader read back whole."""
    cell = spreadsheet_safe(maestro_name(name))
    if '"' in cell or not cell.isprintable():
        return '"' + cell.replace('"', '""') + '"'
    return cell


def fmt(value: float) -> str:
    """A floating value as C++'s default ostream prints it (``%g``; NaN from 0/0 is ``-nan``)."""
    if isinstance(value, float) and math.isnan(value):
        return "-nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, "g")


def _divide(a: float, b: float) -> float:
    """IEEE division as C++ does it on doubles (x/0 is inf, 0/0 NaN)."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


@dataclass(frozen=True)
class AcceleratorCost:
    """MAESTRO's area and power estimate (``DSE::Accelerator``)."""

    area: float
    power: float
    pe_power: float
    l1_power: float
    l2_power: float
    noc_power: float


def accelerator_cost(num_pes: int, vector_width: int, noc_bw: int, l1_words: int, l2_words: int) -> AcceleratorCost:
    """PEs (a MAC and an L1 of ``l1_words`` each), an L2 of ``l2_words``, a bus of ``noc_bw`` and a
    matrix arbiter over all PEs; summed in MAESTRO's order so the rounding matches."""
    l1_cells = float(l1_words) if l1_words != 0 else 1.0  # an SRAM of 0 elements counts one cell
    l2_cells = float(l2_words) if l2_words != 0 else 1.0
    pe_area = pe_power_total = pe_power = l1_power = 0.0
    mac_area, mac_power = MAC_AREA * vector_width, MAC_POWER * vector_width
    sram_area, sram_power = SRAM_AREA * l1_cells, SRAM_POWER * l1_cells
    for _ in range(num_pes):
        pe_area += 0.0 + mac_area + sram_area
        pe_power_total += 0.0 + mac_power + sram_power
        l1_power += sram_power
        pe_power += mac_power
    l2_area, l2_power = SRAM_AREA * l2_cells, SRAM_POWER * l2_cells
    n = float(num_pes)
    bus_scaled = BUS_C1 * n + BUS_C0
    bus_area = BUS_AREA * bus_scaled * noc_bw
    bus_power = BUS_POWER * bus_scaled / 1000 * noc_bw
    arb_scaled = ARBITER_C2 * n**2 + ARBITER_C1 * n + ARBITER_C0
    arb_area = ARBITER_AREA * arb_scaled
    arb_area = max(arb_area, ARBITER_AREA)
    arb_power = ARBITER_POWER * arb_scaled / 1000
    arb_power = max(arb_power, ARBITER_POWER)
    noc_area = 0.0 + bus_area + arb_area
    noc_power = 0.0 + bus_power + arb_power
    return AcceleratorCost(
        area=0.0 + pe_area + l2_area + noc_area,
        power=0.0 + pe_power_total + l2_power + noc_power,
        pe_power=pe_power,
        l1_power=l1_power,
        l2_power=l2_power,
        noc_power=noc_power,
    )


@dataclass(frozen=True)
class CsvLayer:
    """What MAESTRO's CSV writer reads of one analysed layer."""

    network: str
    layer: str
    num_pes: int
    noc_bw: int
    vector_width: int
    top: LevelResult
    first: LevelResult  # the first level analysis MAESTRO finished (an innermost one): its L1 sizes
    multi_level: bool
    input_pixels: int
    weight_pixels: int


def _l1_counts(top: LevelResult) -> list[int]:
    return [top.l1_read["input"], top.l1_write["input"], top.l1_read["filter"], top.l1_write["filter"],
            top.l1_read["output"], top.l1_write["output"]]


def csv_rows(layers: list[CsvLayer]) -> list[str]:
    """MAESTRO's CSV lines (header first) for the layers of one run, in order."""
    lines = [HEADER]
    stale = [0, 0, 0, 0, 0, 0]  # MAESTRO's l1 counters, carried from layer to layer
    for item in layers:
        top = item.top
        l2_terms = [top.l2_read["input"], top.l2_write["input"], top.l2_read["filter"], top.l2_write["filter"],
                    top.l2_write["output"]]
        energy = 0.0
        if item.multi_level:
            for count in stale:
                energy += count * L1_ENERGY_MULTIPLIER
            for count in l2_terms:
                energy += count * L2_ENERGY_MULTIPLIER
            stale = _l1_counts(top)
        else:
            stale = _l1_counts(top)
            for count in l2_terms:
                energy += count * L2_ENERGY_MULTIPLIER
            for count in stale:
                energy += count * L1_ENERGY_MULTIPLIER
        energy *= MAC_ENERGY_NJ
        l2_words = sum(top.l2_size[t] for t in ("input", "output", "filter"))
        l1_words = sum(item.first.l1_size[t] for t in ("input", "output", "filter"))
        cost = accelerator_cost(item.num_pes, item.vector_width, item.noc_bw, l1_words, l2_words)
        runtime, macs = top.runtime, top.macs
        throughput = _divide(float(macs), float(runtime))
        perf_per_energy = _divide(_divide(float(macs), float(runtime)), energy) * 1000000000
        ops_per_joule = _divide(float(macs), energy) * 1000000000
        cells = [
            maestro_cell(item.network), maestro_cell(item.layer), str(item.num_pes), str(runtime), fmt(energy),
            fmt(throughput), fmt(perf_per_energy), fmt(cost.area), fmt(cost.power), str(top.peak_bw),
            fmt(top.avg_bw), str(top.peak_bw), str(item.vector_width), str(top.offchip_bw), str(l2_words),
            str(l1_words), fmt(_divide(float(top.l1_write["filter"]), float(top.l2_read["filter"]))),
            fmt(_divide(float(top.l1_write["input"]), float(top.l2_read["input"]))), str(item.input_pixels),
            str(item.weight_pixels), fmt(ops_per_joule), str(macs), fmt(cost.pe_power), fmt(cost.l1_power),
            fmt(cost.l2_power), fmt(cost.noc_power),
        ]
        line = ",".join(cells) + ","
        for t in TENSOR_NAMES:
            l1r, l1w, l2r, l2w = top.l1_read[t], top.l1_write[t], top.l2_read[t], top.l2_write[t]
            line += f"{l1r}, {l1w}, {l2r}, {l2w}, {fmt(_divide(float(l1r), float(l1w)))}, "
        delays = [top.delay_min, top.delay_max, top.delay_avg]
        line += ", ".join(str(d.get(kind, 0)) for kind in ("ingress", "egress", "compute") for d in delays)
        line += f", {fmt(top.avg_active_clusters)}, {fmt(top.arithmetic_intensity)}"
        lines.append(line)
    return lines
