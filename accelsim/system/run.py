"""Run a schedule on a system: every sub-accelerator's jobs in order, all on one clock, their DMA
transfers contending for the one off-chip channel cycle by cycle.

Each sub-accelerator has a driver process that starts its next job (a
:class:`~accelsim.sim.engine.LayerSimulation` on the shared
:class:`~accelsim.sim.context.SimContext`) when the previous one has ended (its last write-back
in place). A job's cycles are its own simulation's (from its start); the makespan is the last
job's end. Warps apply while one sub-accelerator runs alone (see the context).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Sequence

import simpy

from accelsim.errors import InputError
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job, prepare
from accelsim.mapping.styles import style_mapping
from accelsim.results import LayerResult
from accelsim.sim.context import SimContext
from accelsim.sim.engine import LayerSimulation, SimOptions
from accelsim.system.spec import SubAccelerator, System
from accelsim.system.workload import WorkloadJob


@dataclass(frozen=True)
class Schedule:
    """Which sub-accelerator runs which job in which order: ``order[s]`` lists the job indices
    sub-accelerator ``s`` runs, first to last; ``priority`` ranks every job (0 first) for a
    channel that arbitrates by priority."""

    order: tuple[tuple[int, ...], ...]
    priority: tuple[int, ...]

    def to_dict(self, system: System, jobs: Sequence[WorkloadJob]) -> dict[str, list[str]]:
        return {sub.name: [jobs[j].name for j in self.order[sub.index]] for sub in system.subs}


@dataclass
class JobRow:
    """One job as it ran: where, when (cycles), its stalls by cause and the bytes it moved
    over the channel."""

    job: int
    name: str
    sub_accelerator: str
    start_cycle: int
    end_cycle: int
    cycles: int
    macs: int
    compute_busy_cycles: int
    stall_cycles: dict[str, int]
    dram_read_bytes: int
    dram_write_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SystemRun:
    """A schedule's simulated execution: one row per job (in job order), the makespan, and
    per sub-accelerator the cycles it computed and was busy with a job."""

    makespan_cycles: int
    rows: list[JobRow]
    busy_cycles: dict[str, int] = field(default_factory=dict)
    compute_cycles: dict[str, int] = field(default_factory=dict)
    events: int = 0


class Compiled:
    """Each job compiled for each sub-accelerator in its style, once per distinct (hardware,
    style); a job that does not fit a sub-accelerator is None there."""

    def __init__(self, system: System, jobs: Sequence[WorkloadJob]):
        self.system = system
        self.jobs = jobs
        self._cache: dict[tuple[int, str, str], CompiledMapping | None] = {}
        self.errors: dict[tuple[int, str, str], str] = {}

    def get(self, job: int, sub: SubAccelerator) -> CompiledMapping | None:
        key = (job, sub.hw.name, sub.style)
        if key not in self._cache:
            layer = self.jobs[job].layer
            try:
                dataflow = tuple(style_mapping(sub.style, layer, sub.hw))
                self._cache[key] = prepare(Job(layer, dataflow, f"style {sub.style}"), sub.hw)
            except InputError as err:
                self._cache[key] = None
                self.errors[key] = str(err)
        return self._cache[key]

    def check(self) -> None:
        """Every job runs on at least one sub-accelerator (else an InputError naming it)."""
        for job in self.jobs:
            if all(self.get(job.index, sub) is None for sub in self.system.subs):
                reasons = {msg for (j, _, _), msg in self.errors.items() if j == job.index}
                raise InputError(f"job {job.index} ({job.name}) fits no sub-accelerator of {self.system.name}: "
                                 + "; ".join(sorted(reasons)))


def simulate_schedule(system: System, compiled: Compiled, schedule: Schedule,
                      options: SimOptions = SimOptions(),
                      job_done: Callable[[JobRow], None] | None = None) -> SystemRun:
    """Simulate ``schedule`` on ``system`` (``job_done`` hears each job as it ends)."""
    env = simpy.Environment()
    channel = simpy.PriorityResource(env, 1) if system.channel.arbitration == "priority" else simpy.Resource(env, 1)
    context = SimContext(env, channel)
    rows: dict[int, JobRow] = {}
    run = SystemRun(0, [])

    def driver(sub: SubAccelerator, order: Sequence[int]) -> Generator[simpy.Event, Any, None]:
        for j in order:
            cm = compiled.get(j, sub)
            if cm is None:
                raise InputError(f"job {j} ({compiled.jobs[j].name}) does not fit {sub.name}")
            start = int(env.now)
            sim = LayerSimulation(cm, sub.hw, options)
            result: LayerResult = yield sim.start(context, channel_priority=schedule.priority[j])
            end = start + result.cycles
            if end > env.now:
                yield env.timeout(end - env.now)
            word = sub.hw.word_size_bytes
            acc = result.accesses
            row = JobRow(j, compiled.jobs[j].name, sub.name, start, end, result.cycles, result.macs,
                         result.compute_busy_cycles, dict(result.stall_cycles),
                         sum(a.dram_read for a in acc.values()) * word, sum(a.dram_write for a in acc.values()) * word)
            rows[j] = row
            run.busy_cycles[sub.name] += result.cycles
            run.compute_cycles[sub.name] += result.compute_busy_cycles
            run.events += result.events
            if job_done is not None:
                job_done(row)
        context.leave()

    for sub in system.subs:
        run.busy_cycles[sub.name] = run.compute_cycles[sub.name] = 0
        context.enter()
    for sub in system.subs:
        env.process(driver(sub, schedule.order[sub.index]))
    context.run()
    run.rows = [rows[j] for j in sorted(rows)]
    run.makespan_cycles = max((r.end_cycle for r in run.rows), default=0)
    return run
