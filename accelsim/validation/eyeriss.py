"""The Eyeriss chip in ``accelsim validate``: ``eyeriss_alexnet`` (AlexNet CONV1-5 at batch 4
with JSSC Table III's row-stationary mappings) on the ``eyeriss_chip`` preset, per layer against
the chip's measured latencies and DRAM accesses (JSSC Table V,
``validation/eyeriss/alexnet_measured.csv``) and the ideal (MACs / 168 PEs). Cycles become
milliseconds at the preset's clock; DRAM words become MB (10^6 bytes) at the preset's word size.

Acceptance (issue 17): the total within 10% of the chip's 115.3 ms per batch of 4.
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.validation.runner import simulator_model

HW = "eyeriss_chip"
NETWORK = "eyeriss_alexnet"
TOLERANCE = 0.10


@dataclass(frozen=True)
class EyerissRow:
    """One layer (or ``Total``): ours per mode (None: not run), the ideal and the chip's; DRAM
    traffic in MB (10^6 bytes): ours in realistic mode (reads and writes, every tensor) and
    Table V's DRAM accesses."""

    layer: str
    macs: int
    ideal_cycles: int  # MACs / 168, rounded up
    chip_total_ms: float  # JSSC Table V total latency (batch of 4)
    chip_processing_ms: float  # JSSC Table V processing latency
    maestro_cycles: int | None
    realistic_cycles: int | None
    clock_mhz: float
    realistic_dram_mb: float | None
    chip_dram_mb: float

    def ms(self, cycles: int | None) -> float | None:
        """``cycles`` in milliseconds at the preset's clock."""
        return None if cycles is None else cycles / (self.clock_mhz * 1e3)

    def rel(self, cycles: int | None) -> float | None:
        """(ours - chip total) / chip total, in time."""
        ms = self.ms(cycles)
        return None if ms is None else (ms - self.chip_total_ms) / self.chip_total_ms


def eyeriss_rows(eyeriss_dir: Path, realistic: bool = True) -> list[EyerissRow]:
    """Per layer and the total; realistic mode only when ``realistic`` (``--quick`` skips it)."""
    hw = load_hardware(HW)
    with (eyeriss_dir / "alexnet_measured.csv").open(encoding="utf-8", newline="") as f:
        chip = {r["layer"]: r for r in csv.DictReader(f)}
    _, jobs = jobs_from_network(NETWORK, None, hw)
    rows = []
    for job in jobs:
        cm = prepare(job, hw)
        m = chip[job.layer.name]
        ours = simulator_model(cm, hw, "realistic") if realistic else None
        dram_mb = None if ours is None else sum(
            a.dram_read + a.dram_write for a in ours.accesses.values()) * hw.word_size_bytes / 1e6
        rows.append(EyerissRow(job.layer.name, job.layer.macs, -(-job.layer.macs // hw.num_pes),
                               float(m["total_latency_ms"]), float(m["processing_latency_ms"]),
                               simulator_model(cm, hw, "maestro").cycles, None if ours is None else ours.cycles,
                               hw.clock_mhz, dram_mb, float(m["dram_accesses_MB"])))
    total = chip["Total"]
    macs = sum(r.macs for r in rows)
    rows.append(EyerissRow("Total", macs, -(-macs // hw.num_pes), float(total["total_latency_ms"]),
                           float(total["processing_latency_ms"]), sum(r.maestro_cycles or 0 for r in rows),
                           sum(r.realistic_cycles or 0 for r in rows) if realistic else None, hw.clock_mhz,
                           sum(r.realistic_dram_mb or 0.0 for r in rows) if realistic else None,
                           float(total["dram_accesses_MB"])))
    return rows


def _f(v: float | None, digits: int = 1) -> str:
    return "" if v is None else f"{v:,.{digits}f}"


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:+.1f}%"


def eyeriss_section(rows: list[EyerissRow]) -> list[str]:
    """Markdown lines of the section (every number from ``rows``)."""
    total = rows[-1]
    verdicts = []
    for mode, cycles in (("maestro", total.maestro_cycles), ("realistic", total.realistic_cycles)):
        rel = total.rel(cycles)
        verdicts.append(f"- {mode} mode: " + ("not run (`--quick`)" if rel is None else
                        f"{_f(total.ms(cycles))} ms, {_pct(rel)} against the chip's {total.chip_total_ms} ms: "
                        + ("**within 10%**" if abs(rel) <= TOLERANCE else "**not within 10%**")))
    lines = [
        f"`accelsim simulate --hw {HW} --network {NETWORK}` (the mappings are JSSC Table III's, carried by the "
        f"network table; `accelsim.validation.eyeriss`), against the chip's measured AlexNet CONV layers at batch 4 "
        "(JSSC Table V, `validation/eyeriss/alexnet_measured.csv`). ms at the preset's "
        f"{total.clock_mhz:g} MHz; *ideal*: MACs / 168 PEs; errors against the chip's total latency. The preset's "
        "network widths and off-chip link are assumptions (see its comments), and the chip skips MACs on zero "
        "ifmaps and run-length compresses ifmaps and ofmaps in DRAM, which accelsim does not model. *DRAM MB*: "
        "words read and written, every tensor, in realistic mode, against Table V's DRAM accesses (10^6 bytes).",
        "",
        *verdicts,
        "",
        "| layer | MACs | ideal cycles | ideal ms | maestro cycles | maestro ms | err | realistic cycles | realistic ms "
        "| err | chip total ms | chip processing ms | DRAM MB | chip DRAM MB |",
        "|" + "---|" * 14,
    ]
    for r in rows:
        lines.append("| " + " | ".join((
            r.layer, f"{r.macs:,}", f"{r.ideal_cycles:,}", _f(r.ms(r.ideal_cycles)),
            "" if r.maestro_cycles is None else f"{r.maestro_cycles:,}", _f(r.ms(r.maestro_cycles)),
            _pct(r.rel(r.maestro_cycles)), "" if r.realistic_cycles is None else f"{r.realistic_cycles:,}",
            _f(r.ms(r.realistic_cycles)), _pct(r.rel(r.realistic_cycles)), f"{r.chip_total_ms}",
            f"{r.chip_processing_ms}", _f(r.realistic_dram_mb, 2), f"{r.chip_dram_mb}")) + " |")
    return lines


def eyeriss_csv_rows(rows: list[EyerissRow]) -> list[dict[str, Any]]:
    """The rows as plain dicts with ms columns (``eyeriss.csv``)."""
    return [{**asdict(r), "maestro_ms": r.ms(r.maestro_cycles), "realistic_ms": r.ms(r.realistic_cycles),
             "ideal_ms": r.ms(r.ideal_cycles)} for r in rows]
