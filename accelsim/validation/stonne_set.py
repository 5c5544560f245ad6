"""The STONNE reference set in ``accelsim validate``: every case STONNE ran correctly
(``validation/stonne/cases.csv``, its cycles and counters) as its kept mapping
(``validation/stonne/mappings/<case>.m``) on the ``stonne_maeri`` or ``stonne_tpu`` preset with
STONNE's flags as ``--set`` (``-num_ms``, ``-ms_rows``/``-ms_cols``, ``-dn_bw``, ``-rn_bw``), run
by the simulator in realistic and maestro mode and by the analytical model in realistic mode.

Each case gets a ladder from STONNE's cycles to ours (:class:`accelsim.compare.ladder.Ladder`):
``maestro_mode`` (the simulator in maestro mode against STONNE: what is left with every
realistic effect ideal), then one rung per group of realistic effects, each the cycles that group
alone adds (the simulator with only that group ideal, against realistic mode; see
:data:`RUNGS`), and ``overlap`` (effects that cost only together, or hide behind each other),
so that the parts sum exactly to ``realistic - STONNE``. The ``forwarding`` rung is negative where
the multipliers forward inputs to their neighbours (``stonne_maeri``'s
``distribution_noc.neighbour_forwarding``): maestro mode has no such links.

Acceptance (issue 17): realistic mode within 5% of STONNE's cycles on every case. The whole set
(112 cases, 9 runs each) takes about 11 s (11.0 s wall, 7.4 CPU s, measured 2026-11-26 at a load of 4).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from accelsim.compare.ladder import Ladder
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import jobs_from_maestro, prepare
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.validation.runner import analytical_model, simulator_model

TOLERANCE = 0.05
SOURCE = "STONNE"
MAESTRO_MODE = "maestro_mode"
OVERLAP = "overlap"
# rung -> the engine's ideal effects it switches (every effect in exactly one rung; tested)
RUNGS: dict[str, frozenset[str]] = {
    "ports": frozenset({"multicast", "l2_ports", "packed_ingress", "shared_egress", "write_ports"}),
    "tile_barrier": frozenset({"tile_barrier"}),
    "fill_drain": frozenset({"ingress_latency", "mac_pipeline", "reduction_latency", "multiply_on_arrival"}),
    "input_streaming": frozenset({"l1_reuse"}),
    "forwarding": frozenset({"neighbour_forwarding"}),
    "buffers_dram": frozenset({"double_buffering", "dram"}),
}
LADDER = (MAESTRO_MODE, *RUNGS, OVERLAP)
RUNG_MEANING = {
    MAESTRO_MODE: "the simulator in maestro mode (every effect below ideal) against STONNE",
    "ports": "the distribution tree's root ports (each feeding its fixed block of multipliers, a ragged fold's "
             "padding included: `distribution_noc.pads_ragged_tiles`) against one packed transfer per step, the TPU's write ports (`reduction_noc.write_ports: interleaved`: "
             "each output written through its fixed port as the wavefront finishes it) and MAERI's collection bus "
             "(`collection_bus`: each VN's output through the bus line its adder switch is wired to, then STONNE's "
             "write queue) against one shared width after the step",
    "tile_barrier": "the controller's barrier: the next weight tile (MAERI) or stationary tile (TPU) only after "
                    "the previous tile's outputs are written",
    "fill_drain": "the network's latencies (on the TPU to the PEs a tile uses, `distribution_noc.fill: used`), the "
                  "adder tree's (on MAERI's `art` at least one adder level) and the write latency "
                  "(`reduction_noc.write_latency_cycles`) and the MAC pipeline (fill and drain of each step, exposed at every "
                  "barrier), less the MACs done as a step's operands arrive (`pe_array.multiply_on_arrival`)",
    "input_streaming": "inputs sent again every step (STONNE's multipliers keep only their weights; "
                       "`l1.reused_operands`)",
    "forwarding": "inputs the multipliers forward to their neighbours instead of reading them from SRAM "
                  "(`distribution_noc.neighbour_forwarding`; negative: the links save cycles)",
    "buffers_dram": "single-buffered L2 and DRAM latency (0 here: L2 holds the layer and there is no DRAM, "
                    "`dram.model: none`)",
    OVERLAP: "effects that cost only together, or hide behind each other",
}


@dataclass(frozen=True)
class StonneRow:
    """One case: STONNE's cycles, ours, and the ladder between them."""

    case_id: str
    operation: str
    network: str
    stonne_cycles: int
    realistic_cycles: int
    maestro_cycles: int
    analytical_cycles: int  # the analytical model, realistic mode
    ladder: Ladder

    @property
    def ratio(self) -> float:
        """Ours (realistic) over STONNE's."""
        return self.realistic_cycles / self.stonne_cycles

    @property
    def ok(self) -> bool:
        return abs(self.realistic_cycles - self.stonne_cycles) <= TOLERANCE * self.stonne_cycles


def cases(stonne_dir: Path) -> dict[str, dict[str, str]]:
    """The rows of ``cases.csv`` that STONNE ran correctly, by case id."""
    with (stonne_dir / "cases.csv").open(encoding="utf-8", newline="") as f:
        return {r["case_id"]: r for r in csv.DictReader(f) if r["status"] == "ok"}


def case_layer(stonne_dir: Path, row: dict[str, str]) -> tuple[CompiledMapping, HardwareSpec]:
    """A case on its preset with STONNE's flags as --set overrides: (compiled mapping, hw)."""
    bandwidths = [f"distribution_noc.bandwidth_words_per_cycle={row['dn_bw']}",
                  f"reduction_noc.bandwidth_words_per_cycle={row['rn_bw']}"]
    if row["network"] == "MAERI":
        hw = load_hardware("stonne_maeri", [f"pe_array.count={row['num_ms']}", *bandwidths])
    else:
        hw = load_hardware("stonne_tpu", [f"pe_array.rows={row['ms_rows']}", f"pe_array.cols={row['ms_cols']}",
                                          *bandwidths])
    _, jobs = jobs_from_maestro(stonne_dir / "mappings" / f"{row['case_id']}.m")
    return prepare(jobs[0], hw), hw


def stonne_row(stonne_dir: Path, row: dict[str, str]) -> StonneRow:
    """Run one case (9 runs: realistic, maestro, one per rung (6), the analytical model)."""
    cm, hw = case_layer(stonne_dir, row)
    realistic = simulator_model(cm, hw, "realistic").cycles
    maestro = simulator_model(cm, hw, "maestro").cycles
    walk = Ladder(SOURCE, int(row["cycles"]))
    walk.climb(MAESTRO_MODE, maestro)
    cycles = maestro
    for rung, effects in RUNGS.items():
        cycles += realistic - simulate_layer(cm, hw, SimOptions(ideal=effects)).cycles
        walk.climb(rung, cycles)
    walk.climb(OVERLAP, realistic)
    return StonneRow(row["case_id"], row["operation"], row["network"], int(row["cycles"]), realistic, maestro,
                     analytical_model()(cm, hw, "realistic").cycles, walk)


def stonne_rows(stonne_dir: Path, progress: Callable[[str], None] | None = None) -> list[StonneRow]:
    """Every case of the set, in case-id order."""
    rows = []
    for case_id, row in sorted(cases(stonne_dir).items()):
        rows.append(stonne_row(stonne_dir, row))
        if progress is not None:
            progress(f"ran STONNE case {case_id}")
    return rows


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _group(row: StonneRow) -> str:
    if row.network != "MAERI":
        return "TPU mesh GEMM"
    return "MAERI micro GEMM" if row.case_id.startswith("micro_") else f"MAERI {row.operation}"


def stonne_section(rows: list[StonneRow]) -> list[str]:
    """Markdown lines of the section (every number from ``rows``)."""
    ok = sum(r.ok for r in rows)
    agree = sum(r.analytical_cycles == r.realistic_cycles for r in rows)
    lines = [
        "Every case STONNE ran correctly (`validation/stonne/cases.csv`, stonne-simulator/stonne 22634b8b) as its "
        "kept mapping (`validation/stonne/mappings/`) on `stonne_maeri` / `stonne_tpu` with STONNE's flags as "
        "`--set` (`accelsim.validation.stonne_set`). *ratio*: ours (realistic) / STONNE. The ladder walks from "
        "STONNE's cycles to ours, one rung per named effect; the parts sum to realistic - STONNE:",
        "",
        *(f"- `{name}`: {RUNG_MEANING[name]}" for name in LADDER),
        "",
        f"- realistic mode within 5% of STONNE: **{ok} of {len(rows)}**; geometric mean ratio "
        f"{_geomean([r.ratio for r in rows]):.3f} (maestro mode "
        f"{_geomean([r.maestro_cycles / r.stonne_cycles for r in rows]):.3f})",
        f"- the analytical model's realistic mode equals the simulator on {agree} of {len(rows)}",
    ]
    groups: dict[str, list[StonneRow]] = {}
    for r in rows:
        groups.setdefault(_group(r), []).append(r)
    lines += ["", "| cases | n | within 5% | ratio min | ratio max | geometric mean |", "|---|---|---|---|---|---|"]
    for name, members in sorted(groups.items()):
        ratios = [r.ratio for r in members]
        lines.append(f"| {name} | {len(members)} | {sum(r.ok for r in members)} | {min(ratios):.3f} | "
                     f"{max(ratios):.3f} | {_geomean(ratios):.3f} |")
    lines += ["", "| case | STONNE | realistic | ratio | maestro | analytical | " + " | ".join(LADDER) + " |",
              "|" + "---|" * (6 + len(LADDER))]
    for r in rows:
        parts = r.ladder.parts()
        lines.append(f"| {r.case_id} | {r.stonne_cycles:,} | {r.realistic_cycles:,} | {r.ratio:.3f}"
                     + ("" if r.ok else " *") + f" | {r.maestro_cycles:,} | {r.analytical_cycles:,} | "
                     + " | ".join(f"{parts[name]:+,}" for name in LADDER) + " |")
    lines += ["", "\\* not within 5%."]
    return lines


def stonne_csv_rows(rows: list[StonneRow]) -> list[dict[str, Any]]:
    """The rows as plain dicts, one column per rung (``stonne.csv``)."""
    return [{"case_id": r.case_id, "operation": r.operation, "network": r.network, "stonne_cycles": r.stonne_cycles,
             "realistic_cycles": r.realistic_cycles, "ratio": round(r.ratio, 6), "within_5pct": r.ok,
             "maestro_cycles": r.maestro_cycles, "analytical_cycles": r.analytical_cycles,
             **{f"rung_{name}": part for name, part in r.ladder.parts().items()}} for r in rows]
