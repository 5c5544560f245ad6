"""MAGMA's job analysis table and its bandwidth allocator (Algorithm 1), from our analytical model.

The table holds, per job and sub-accelerator, the *no-stall latency* (cycles with ample
off-chip bandwidth: the analytical model, realistic mode, on the sub-accelerator with a
channel of ``NO_STALL_BYTES_PER_CYCLE``) and the *no-stall bandwidth*: the bytes the job holds
the channel for (its transfers rounded up to whole bursts, as the channel moves them) over that
latency, in bytes per cycle. Algorithm 1 then runs a schedule as a fluid: at every moment
each live job gets the bandwidth it asks for, all of them scaled down in proportion when the
sum exceeds the channel; a job given a fraction f of its ask progresses at f times its
no-stall rate (a job moving no bytes at full rate); when one ends its sub-accelerator starts
its next job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from accelsim.analytical.model import analyze_layer, dram_channel_cycles
from accelsim.hw.spec import HardwareSpec
from accelsim.system.run import Compiled, Schedule
from accelsim.system.spec import System

NO_STALL_BYTES_PER_CYCLE = 1e9  # a channel no job can saturate


@dataclass(frozen=True)
class JobCost:
    """One job on one sub-accelerator: no-stall latency (cycles) and bandwidth (bytes/cycle)."""

    latency_cycles: int
    bandwidth_bytes_per_cycle: float


def with_dram(hw: HardwareSpec, **update: float) -> HardwareSpec:
    """``hw`` with its DRAM fields in ``update`` replaced."""
    return hw.model_copy(update={"dram": hw.dram.model_copy(update=update)})


class CostTable(Protocol):
    """What Algorithm 1 reads: ``cost[job][sub]`` (None: the job does not fit that sub-accelerator)."""

    cost: list[list[JobCost | None]]


class JobTable:
    """``cost[job][sub]`` (None: the job does not fit that sub-accelerator)."""

    def __init__(self, system: System, compiled: Compiled):
        self.system = system
        self.cost: list[list[JobCost | None]] = []
        unbounded: dict[str, HardwareSpec] = {}
        memo: dict[tuple[int, str, str], JobCost | None] = {}
        for job in compiled.jobs:
            row: list[JobCost | None] = []
            for sub in system.subs:
                key = (job.index, sub.hw.name, sub.style)
                if key not in memo:
                    cm = compiled.get(job.index, sub)
                    if cm is None:
                        memo[key] = None
                    else:
                        hw = unbounded.setdefault(sub.hw.name, with_dram(
                            sub.hw, bandwidth_bytes_per_cycle=NO_STALL_BYTES_PER_CYCLE, latency_cycles=0))
                        result = analyze_layer(cm, hw, "realistic")
                        byte_wide = with_dram(sub.hw, bandwidth_bytes_per_cycle=1.0, latency_cycles=0)
                        moved = dram_channel_cycles(cm, byte_wide)
                        memo[key] = JobCost(result.cycles, moved / result.cycles if result.cycles else 0.0)
                row.append(memo[key])
            self.cost.append(row)

    def to_rows(self, names: Sequence[str]) -> list[dict]:
        return [{"job": i, "name": names[i],
                 **{f"{sub.name}_latency_cycles": c.latency_cycles if c else None for sub, c in zip(self.system.subs, row)},
                 **{f"{sub.name}_bandwidth_bytes_per_cycle": c.bandwidth_bytes_per_cycle if c else None
                    for sub, c in zip(self.system.subs, row)}}
                for i, row in enumerate(self.cost)]


@dataclass(frozen=True)
class FluidJob:
    """A job's span under Algorithm 1 (cycles, fractional)."""

    job: int
    sub: int
    start: float
    end: float


def algorithm1(table: CostTable, schedule: Schedule, bandwidth_bytes_per_cycle: float) -> tuple[float, list[FluidJob]]:
    """MAGMA's Algorithm 1 on ``schedule``: (makespan in cycles, every job's span)."""
    queues = [list(order) for order in schedule.order]
    live: dict[int, list] = {}  # sub -> [job, remaining no-stall cycles, ask, start]
    spans: list[FluidJob] = []
    t = 0.0

    def begin(sub: int) -> None:
        while queues[sub]:
            j = queues[sub].pop(0)
            cost = table.cost[j][sub]
            if cost is None:
                raise ValueError(f"job {j} does not fit sub-accelerator {sub}")
            if cost.latency_cycles > 0:
                live[sub] = [j, float(cost.latency_cycles), cost.bandwidth_bytes_per_cycle, t]
                return
            spans.append(FluidJob(j, sub, t, t))

    for sub in range(len(queues)):
        begin(sub)
    while live:
        ask = sum(v[2] for v in live.values())
        scale = 1.0 if ask <= bandwidth_bytes_per_cycle else bandwidth_bytes_per_cycle / ask
        # every job progresses at ``scale`` of its no-stall rate (one asking nothing at full rate)
        rates = {s: (scale if v[2] > 0 else 1.0) for s, v in live.items()}
        dt = min(v[1] / rates[s] for s, v in live.items())
        t += dt
        for s in list(live):
            v = live[s]
            v[1] -= dt * rates[s]
            if v[1] <= 1e-9 * max(1.0, t):
                spans.append(FluidJob(v[0], s, v[3], t))
                del live[s]
                begin(s)
    return t, sorted(spans, key=lambda f: f.job)
