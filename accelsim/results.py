"""Results as plain data: a dataclass that becomes a dict, JSON and a pandas row.

Counts are in words (elements of the operand precision), times in cycles, energy in pJ.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from accelsim.workload.operators import TENSOR_ROLES

TENSORS = TENSOR_ROLES  # every result reports the catalog's tensor roles
ACCESS_FIELDS = ("l1_read", "l1_write", "l2_read", "l2_write", "dram_read", "dram_write")
# The version of a result's dict/JSON form. 2: ``level_accesses`` (reads and writes per tensor at
# every storage level, innermost first, register files inside the PE included).
SCHEMA_VERSION = 2
OUTER_LEVELS = ("L1", "L2", "DRAM")  # the levels ``accesses`` covers, innermost first
STALL_CAUSES = ("compute", "distribution_noc", "reduction", "dram")
# MAESTRO's CSV calls the weight tensor "filter".
_MAESTRO_TENSOR = {"input": "input", "weight": "filter", "output": "output"}


@dataclass
class TensorAccesses:
    """Reads and writes of one tensor at every level, in words."""

    l1_read: int = 0
    l1_write: int = 0
    l2_read: int = 0
    l2_write: int = 0
    dram_read: int = 0
    dram_write: int = 0

    def add(self, other: "TensorAccesses") -> None:
        for name in ACCESS_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class LevelAccesses:
    """Reads and writes of one tensor at one storage level, in words."""

    read: int = 0
    write: int = 0


@dataclass
class LayerResult:
    """What one layer's simulation reports."""

    layer: str
    op: str
    hw: str
    mode: str
    cycles: int
    macs: int
    num_pes: int
    used_pes: int
    pe_utilization: float  # MACs / (PEs * MACs per PE per cycle * cycles)
    compute_busy_cycles: int  # cycles in which the array computed
    stall_cycles: dict[str, int]  # cycles the array waited, by cause (STALL_CAUSES)
    energy_pj: float
    energy_breakdown_pj: dict[str, float]
    accesses: dict[str, TensorAccesses]
    noc_words: int  # words carried by the distribution network (each multicast once)
    noc_delivered_words: int  # words written into PE L1s by it
    multicast_factor: float  # delivered / carried
    egress_words: int  # partial sums entering the reduction / collection network
    l1_required_bytes: int
    l2_required_bytes: int
    l1_size_bytes: int
    l2_size_bytes: int
    steps: int
    events: int
    wall_seconds: float = field(default=0.0, compare=False)
    model: str = "simulator"  # "simulator" or "analytical" (accelsim.analytical)
    compute_bound_cycles: int = 0  # ceil(MACs / (PEs * MACs per PE per cycle))
    dram_bound_cycles: int = 0  # ceil(DRAM bytes / DRAM bandwidth)
    overflowed: bool = False  # its tiles do not fit L1/L2 and it ran anyway (--allow-overflow)
    # the register files inside each PE (below L1), innermost first: level -> tensor it keeps ->
    # words (accelsim.mapping.inner_levels); empty on a design without them
    inner_accesses: dict[str, dict[str, LevelAccesses]] = field(default_factory=dict)
    # the loops of a PE's step each inner level holds (dimension names, outermost first)
    inner_loops: dict[str, list[str]] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def level_accesses(self) -> dict[str, dict[str, dict[str, int]]]:
        """Reads and writes per tensor at every storage level, innermost first (the inner
        levels, then L1, L2 and DRAM from ``accesses``), as plain dicts."""
        out = {level: {t: asdict(a) for t, a in per.items()} for level, per in self.inner_accesses.items()}
        for level in OUTER_LEVELS:
            key = level.lower()
            out[level] = {t: {"read": getattr(a, f"{key}_read"), "write": getattr(a, f"{key}_write")}
                          for t, a in self.accesses.items()}
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["inner_accesses"]
        d["level_accesses"] = self.level_accesses()
        return d

    def repeated(self, layer: str, wall_seconds: float) -> "LayerResult":
        """This result for another layer of the same shape and mapping (named ``layer``; its own
        ``wall_seconds``, the lookup's): every count and time the same, nothing shared."""
        return replace(self, layer=layer, wall_seconds=wall_seconds, stall_cycles=dict(self.stall_cycles),
                       energy_breakdown_pj=dict(self.energy_breakdown_pj),
                       accesses={t: replace(a) for t, a in self.accesses.items()},
                       inner_accesses={lv: {t: replace(a) for t, a in per.items()}
                                       for lv, per in self.inner_accesses.items()},
                       inner_loops={lv: list(d) for lv, d in self.inner_loops.items()})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_row(self) -> dict[str, Any]:
        """Flat row; per-tensor columns use MAESTRO's CSV names (``filter`` for weights)."""
        row: dict[str, Any] = {
            "Layer Number": self.layer,  # MAESTRO's name for the layer's name
            "Type": self.op,
            "Hardware": self.hw,
            "Mode": self.mode,
            "Model": self.model,
            "NumPEs": self.num_pes,
            "Runtime (Cycles)": self.cycles,
            "Num MACs": self.macs,
            "PE Utilization": self.pe_utilization,
            "Activity count-based Energy (nJ)": self.energy_pj / 1000.0,
            "L1 SRAM Size Req (Bytes)": self.l1_required_bytes,
            "L2 SRAM Size Req (Bytes)": self.l2_required_bytes,
            "Compute Busy (Cycles)": self.compute_busy_cycles,
            "Compute Bound (Cycles)": self.compute_bound_cycles,
            "DRAM Bound (Cycles)": self.dram_bound_cycles,
        }
        for cause in STALL_CAUSES:
            row[f"Stall {cause} (Cycles)"] = self.stall_cycles.get(cause, 0)
        for tensor in TENSORS:
            acc = self.accesses[tensor]
            name = _MAESTRO_TENSOR[tensor]
            for level in ("l1", "l2"):
                row[f"{name} {level} read"] = getattr(acc, f"{level}_read")
                row[f"{name} {level} write"] = getattr(acc, f"{level}_write")
            row[f"{name} dram read"] = acc.dram_read
            row[f"{name} dram write"] = acc.dram_write
        for level, per in self.inner_accesses.items():  # the register files inside the PE, if any
            for tensor, la in per.items():
                row[f"{_MAESTRO_TENSOR[tensor]} {level} read"] = la.read
                row[f"{_MAESTRO_TENSOR[tensor]} {level} write"] = la.write
        row["NoC Words"] = self.noc_words
        row["Multicasting Factor"] = self.multicast_factor
        for part, value in self.energy_breakdown_pj.items():
            row[f"Energy {part} (pJ)"] = value
        row["Overflowed"] = self.overflowed
        return row


@dataclass
class NetworkResult:
    """A network run: its layers and their sums."""

    network: str
    layers: list[LayerResult]

    @property
    def cycles(self) -> int:
        return sum(r.cycles for r in self.layers)

    @property
    def macs(self) -> int:
        return sum(r.macs for r in self.layers)

    @property
    def energy_pj(self) -> float:
        return sum(r.energy_pj for r in self.layers)

    def total_accesses(self) -> dict[str, TensorAccesses]:
        total = {t: TensorAccesses() for t in TENSORS}
        for r in self.layers:
            for t in TENSORS:
                total[t].add(r.accesses[t])
        return total

    def to_dicts(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.layers]

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([r.to_row() for r in self.layers])

    def summary(self) -> dict[str, Any]:
        """Network totals (cycles, MACs, energy, stalls, accesses) as a dict. Utilization is
        the layers' utilizations weighted by their cycles (the layers share one array)."""
        cycles = self.cycles
        return {
            "network": self.network,
            "layers": len(self.layers),
            "cycles": cycles,
            "macs": self.macs,
            "pe_utilization": sum(r.pe_utilization * r.cycles for r in self.layers) / cycles if cycles else 0.0,
            "energy_pj": self.energy_pj,
            "stall_cycles": {c: sum(r.stall_cycles[c] for r in self.layers) for c in STALL_CAUSES},
            "accesses": {t: asdict(a) for t, a in self.total_accesses().items()},
        }
