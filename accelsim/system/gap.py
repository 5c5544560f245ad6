"""Why a simulated makespan differs from Algorithm 1's, in three named parts that add up to it.

- ``burstiness``: a job alone on the whole channel is not the fluid Algorithm 1 assumes (its
  first tile is fetched before anything computes, its last written back after, its demand
  comes in phases). Measured by Algorithm 1 run again with each job's no-stall latency
  replaced by its simulated cycles alone on its sub-accelerator with the whole channel
  (latency 0), the same channel bytes: that makespan minus Algorithm 1's.
- ``arbitration``: sharing the channel one whole transfer at a time (first come or by
  priority) instead of in proportion to each job's ask: the simulated makespan with channel
  latency 0 minus the burstiness-corrected prediction.
- ``latency``: the channel's latency: the simulated makespan minus the one with latency 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from accelsim.system.analysis import JobCost, JobTable, algorithm1, with_dram
from accelsim.system.run import Compiled, Schedule, simulate_schedule
from accelsim.system.spec import System


@dataclass(frozen=True)
class GapParts:
    """Simulated and predicted makespans (cycles) and the gap's parts (cycles)."""

    simulated_cycles: int
    algorithm1_cycles: float
    burstiness_cycles: float
    arbitration_cycles: float
    latency_cycles: int

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


@dataclass
class _Costs:
    """A job table with other latencies (cost[job][sub])."""

    cost: list[list[JobCost | None]]


def attribute_gap(system: System, compiled: Compiled, table: JobTable, schedule: Schedule,
                  simulated_cycles: int) -> GapParts:
    """The parts of ``simulated_cycles - Algorithm 1`` for ``schedule`` (simulates every job
    alone once, and the schedule again without channel latency where the channel has one)."""
    bandwidth = system.bytes_per_cycle
    predicted = algorithm1(table, schedule, bandwidth)[0]
    no_latency = replace(system, subs=tuple(
        replace(s, hw=with_dram(s.hw, latency_cycles=0))
        for s in system.subs))
    at_zero = simulated_cycles if system.channel.latency_cycles == 0 else \
        simulate_schedule(no_latency, compiled, schedule).makespan_cycles
    alone: dict[tuple[int, int], int] = {}
    for s, order in enumerate(schedule.order):
        sub = replace(no_latency.subs[s], index=0)
        lone = replace(no_latency, subs=(sub,))
        for j in order:
            alone[j, s] = simulate_schedule(lone, compiled, Schedule(((j,),), schedule.priority)).rows[0].cycles
    costs: list[list[JobCost | None]] = []
    for j, row in enumerate(table.cost):
        out: list[JobCost | None] = []
        for s, cost in enumerate(row):
            if cost is None or (j, s) not in alone:
                out.append(cost)
                continue
            moved = cost.bandwidth_bytes_per_cycle * cost.latency_cycles
            cycles = alone[j, s]
            out.append(JobCost(cycles, moved / cycles if cycles else 0.0))
        costs.append(out)
    corrected = algorithm1(_Costs(costs), schedule, bandwidth)[0]
    return GapParts(simulated_cycles, predicted, corrected - predicted, at_zero - corrected,
                    simulated_cycles - at_zero)
