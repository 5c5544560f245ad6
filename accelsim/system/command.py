"""``accelsim multicore``: load a system and a workload, schedule, simulate, report.

The scheduler searches with Algorithm 1 on the job-analysis table (``score="alg1"``, fast) or
with the simulator itself (``score="sim"``); the schedule it returns is then simulated, and the
report holds both makespans. ``compare`` also schedules with the Herald-like and AI-MT-like
heuristics and simulates theirs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Literal

from accelsim.budget import Budget
from accelsim.sim.engine import SimOptions
from accelsim.sim.estimate import RunKind, check_budget, estimate_layer
from accelsim.system.analysis import JobTable, algorithm1
from accelsim.system.gap import GapParts, attribute_gap
from accelsim.system.run import Compiled, Schedule, SystemRun, simulate_schedule
from accelsim.system.schedulers import Search, SearchResult, run_scheduler
from accelsim.system.spec import System, load_system
from accelsim.system.workload import WorkloadJob, load_workload
from accelsim.text_table import format_table

Score = Literal["alg1", "sim"]
NO_BUDGET = Budget()  # the default limits


@dataclass(frozen=True)
class MulticoreSettings:
    """Everything ``accelsim multicore`` was asked to do."""

    system: str
    workload: str
    networks: tuple[str, ...] = ()
    scheduler: str = "magma"
    budget: int = 2000
    bandwidth_gbps: float | None = None
    batch: int = 1
    group_size: int | None = 100
    score: Score = "alg1"
    seed: int = 0
    compare: tuple[str, ...] = ()
    attribute_gap: bool = False
    top_k: int = 2


@dataclass
class SchedulerOutcome:
    """One scheduler's search and its schedule simulated."""

    name: str
    search: SearchResult
    run: SystemRun
    algorithm1_cycles: float
    simulate_seconds: float


@dataclass
class MulticoreReport:
    system: System
    workload: str
    jobs: list[WorkloadJob]
    table: JobTable
    outcomes: list[SchedulerOutcome]
    settings: MulticoreSettings
    gap: GapParts | None = None

    def to_dict(self) -> dict[str, Any]:
        main = self.outcomes[0]
        run = main.run
        macs = sum(r.macs for r in run.rows)
        names = [j.name for j in self.jobs]
        moved = sum(r.dram_read_bytes + r.dram_write_bytes for r in run.rows)
        return {
            "system": self.system.name,
            "workload": self.workload,
            "scheduler": main.name,
            "score": self.settings.score,
            "bandwidth_gbps": self.system.channel.bandwidth_gbps,
            "channel_bytes_per_cycle": self.system.bytes_per_cycle,
            "arbitration": self.system.channel.arbitration,
            "clock_mhz": self.system.clock_mhz,
            "makespan_cycles": run.makespan_cycles,
            "algorithm1_makespan_cycles": main.algorithm1_cycles,
            "gap_vs_algorithm1": run.makespan_cycles / main.algorithm1_cycles - 1 if main.algorithm1_cycles else None,
            "throughput_macs_per_cycle": macs / run.makespan_cycles if run.makespan_cycles else 0.0,
            "search": {"evaluated": main.search.evaluated, "seconds": main.search.seconds,
                       "best_score_cycles": main.search.score},
            "schedule": main.search.schedule.to_dict(self.system, self.jobs),
            "jobs": [r.to_dict() for r in run.rows],
            "sub_accelerators": [
                {"name": sub.name, "hw": sub.hw.name, "style": sub.style,
                 "jobs": len(main.search.schedule.order[sub.index]),
                 "busy_cycles": run.busy_cycles[sub.name], "compute_busy_cycles": run.compute_cycles[sub.name],
                 "utilization": run.compute_cycles[sub.name] / run.makespan_cycles if run.makespan_cycles else 0.0}
                for sub in self.system.subs],
            "channel": {"bytes_moved": moved,
                        "utilization": moved / (self.system.bytes_per_cycle * run.makespan_cycles)
                        if run.makespan_cycles else 0.0},
            "compared": [{"scheduler": o.name, "makespan_cycles": o.run.makespan_cycles,
                          "algorithm1_makespan_cycles": o.algorithm1_cycles, "search_seconds": o.search.seconds,
                          "simulate_cpu_seconds": o.simulate_seconds, "candidates_simulated": len(o.search.candidates),
                          "evaluated": o.search.evaluated} for o in self.outcomes],
            "gap_parts": self.gap.to_dict() if self.gap is not None else None,
            "job_table": self.table.to_rows(names),
            "events": run.events,
        }

    def text(self) -> str:
        run = self.outcomes[0].run
        rows = [(f"{sub.name}", sub.style, str(len(self.outcomes[0].search.schedule.order[sub.index])),
                 f"{run.busy_cycles[sub.name]:,}",
                 f"{100 * run.compute_cycles[sub.name] / run.makespan_cycles:.1f}" if run.makespan_cycles else "0")
                for sub in self.system.subs]
        out = [format_table(("sub-accelerator", "style", "jobs", "busy_cycles", "util%"), rows, left=(0, 1))]
        table = [(o.name, f"{o.run.makespan_cycles:,}", f"{o.algorithm1_cycles:,.0f}",
                  f"{100 * (o.run.makespan_cycles / o.algorithm1_cycles - 1):+.2f}%" if o.algorithm1_cycles else "",
                  f"{o.search.evaluated:,}", f"{o.search.seconds:.2f}", f"{o.simulate_seconds:.1f}")
                 for o in self.outcomes]
        out.append(format_table(("scheduler", "makespan_cycles", "algorithm1_cycles", "gap", "scored", "search_s",
                                 "simulate_cpu_s"),
                                table, left=(0,)))
        if self.gap is not None:
            g = self.gap
            out.append(f"gap to Algorithm 1: {g.simulated_cycles - g.algorithm1_cycles:+,.0f} cycles = burstiness "
                       f"{g.burstiness_cycles:+,.0f} + arbitration {g.arbitration_cycles:+,.0f} + latency "
                       f"{g.latency_cycles:+,}")
        return "\n".join(out)


def prepare_system(settings: MulticoreSettings, budget: Budget = NO_BUDGET) -> tuple[System, str, list[WorkloadJob],
                                                                                      Compiled, JobTable]:
    """Load, compile every job for every sub-accelerator (each simulated job within
    ``budget``, counted as a run of every step: contention runs unwarped), build the table."""
    system = load_system(settings.system, settings.bandwidth_gbps)
    name, jobs = load_workload(settings.workload, list(settings.networks), settings.batch, settings.group_size)
    compiled = Compiled(system, jobs)
    compiled.check()
    for job in jobs:
        for sub in system.subs:
            cm = compiled.get(job.index, sub)
            if cm is not None:
                check_budget(estimate_layer(cm, RunKind(unrolled=True)), budget, f"job {job.index} ({job.name})")
    return system, name, jobs, compiled, JobTable(system, compiled)


def run_multicore(settings: MulticoreSettings, budget: Budget = NO_BUDGET,
                  say: Callable[[str], None] | None = None) -> MulticoreReport:
    """Schedule and simulate (``say`` hears what happens, one line at a time)."""
    system, name, jobs, compiled, table = prepare_system(settings, budget)
    tell = say or (lambda _: None)
    bandwidth = system.bytes_per_cycle

    def fluid(schedule: Schedule) -> float:
        return algorithm1(table, schedule, bandwidth)[0]

    simulated_runs: dict[Schedule, tuple[SystemRun, float]] = {}

    def simulate(schedule: Schedule) -> tuple[SystemRun, float]:
        """The schedule simulated and the CPU seconds it took (each schedule once)."""
        if schedule not in simulated_runs:
            t0 = time.process_time()
            run = simulate_schedule(system, compiled, schedule, SimOptions())
            simulated_runs[schedule] = run, time.process_time() - t0
        return simulated_runs[schedule]

    def simulated(schedule: Schedule) -> float:
        return float(simulate(schedule)[0].makespan_cycles)

    outcomes = []
    for scheduler in (settings.scheduler,) + tuple(s for s in settings.compare if s != settings.scheduler):
        search = Search(table, fluid if settings.score == "alg1" else simulated, settings.seed)
        found = run_scheduler(scheduler, search, settings.budget, settings.top_k)
        tell(f"{scheduler}: scored {found.evaluated:,} schedules in {found.seconds:.2f} s; simulating "
             f"{max(1, len(found.candidates)) if settings.score == 'alg1' else 1}")
        if settings.score == "alg1" and found.candidates:  # second stage: the best simulated
            best = min(found.candidates, key=simulated)
            found = replace(found, schedule=best, score=fluid(best))
        run, cpu = simulate(found.schedule)
        outcomes.append(SchedulerOutcome(scheduler, found, run, fluid(found.schedule), cpu))
    gap = None
    if settings.attribute_gap:
        tell("attributing the gap to Algorithm 1 (every job simulated alone)")
        gap = attribute_gap(system, compiled, table, outcomes[0].search.schedule, outcomes[0].run.makespan_cycles)
    return MulticoreReport(system, name, jobs, table, outcomes, settings, gap)


def report_json(report: MulticoreReport, provenance: dict[str, Any]) -> str:
    return json.dumps({**report.to_dict(), "provenance": provenance}, indent=1) + "\n"
