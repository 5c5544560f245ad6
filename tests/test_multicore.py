"""Systems of several sub-accelerators sharing one channel (accelsim/system, `accelsim multicore`)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.errors import InputError
from accelsim.hw.loader import load_hardware
from accelsim.mapping.jobs import jobs_from_network
from accelsim.sim.engine import SimOptions
from accelsim.sim.network import run_jobs
from accelsim.system.analysis import JobCost, algorithm1
from accelsim.system.command import MulticoreSettings, prepare_system, run_multicore
from accelsim.system.run import Compiled, Schedule, simulate_schedule
from accelsim.system.schedulers import Individual, Search, magma
from accelsim.system.spec import available_systems, load_system
from accelsim.system.workload import GROUPS, load_workload, network_jobs
from accelsim.workload.tables import available_networks

REPO = Path(__file__).resolve().parent.parent


def system_file(tmp_path: Path, hw: str = "eyeriss_like", count: int = 1, gbps: float = 2.4, latency: int = 7,
                arbitration: str = "fifo") -> str:
    """A system of ``count`` copies of a preset with the eyeriss_like style; 2.4 GB/s at 200 MHz
    is eyeriss_like's own DRAM (12 bytes per cycle)."""
    path = tmp_path / "system.yaml"
    path.write_text(f"""name: test_system
channel: {{bandwidth_gbps: {gbps}, latency_cycles: {latency}, burst_bytes: 64, arbitration: {arbitration}}}
sub_accelerators:
  - {{name: ey, hw: {hw}, style: eyeriss_like, count: {count}}}
""")
    return str(path)


def one_sub_matches_simulate(tmp_path: Path, network: str) -> None:
    system = load_system(system_file(tmp_path))
    jobs = network_jobs([network])
    compiled = Compiled(system, jobs)
    run = simulate_schedule(system, compiled, Schedule((tuple(range(len(jobs))),), tuple(range(len(jobs)))))
    hw = load_hardware("eyeriss_like", ["dram.latency_cycles=7"])
    name, plain_jobs = jobs_from_network(network, "eyeriss_like", hw)
    alone = run_jobs(name, plain_jobs, hw).layers
    assert [r.cycles for r in run.rows] == [r.cycles for r in alone]
    assert [r.stall_cycles for r in run.rows] == [r.stall_cycles for r in alone]
    assert [r.dram_read_bytes for r in run.rows] == [sum(a.dram_read for a in r.accesses.values()) for r in alone]
    # each job starts when the one before it has ended: the makespan is the network's sum
    assert [r.start_cycle for r in run.rows] == [sum(x.cycles for x in alone[:i]) for i in range(len(alone))]
    assert run.makespan_cycles == sum(r.cycles for r in alone)


def test_one_sub_accelerator_reproduces_simulate(tmp_path):
    """One sub-accelerator whose channel is its own DRAM (12 B/cycle, latency 7): every job's
    cycles and stalls equal `simulate`'s, back to back."""
    one_sub_matches_simulate(tmp_path, "dlrm")


@pytest.mark.slow
@pytest.mark.parametrize("network", available_networks())
def test_one_sub_accelerator_reproduces_simulate_on_every_network(tmp_path, network):
    one_sub_matches_simulate(tmp_path, network)


def test_contention_is_exact_with_and_without_warps(tmp_path):
    """Two sub-accelerators contending: the warp acts only while one runs alone, so results
    equal the unwarped run's; contention makes the pair slower than either job alone, and the
    channel cannot have moved more bytes than its bandwidth allows."""
    system = load_system(system_file(tmp_path, count=2, gbps=0.4))  # 2 bytes per cycle
    jobs = load_workload("recommendation", group_size=4)[1]
    compiled = Compiled(system, jobs)
    schedule = Schedule(((0, 2), (1, 3)), (0, 1, 2, 3))
    warped = simulate_schedule(system, compiled, schedule)
    plain = simulate_schedule(system, compiled, schedule, SimOptions(fast_forward=False))
    assert [r.to_dict() for r in warped.rows] == [r.to_dict() for r in plain.rows]
    alone = [simulate_schedule(replace(system, subs=system.subs[:1]), Compiled(system, [job]),
                               Schedule(((0,),), (0,))).rows[0].cycles for job in [replace(j, index=0) for j in jobs]]
    assert warped.rows[0].cycles >= alone[0] and warped.rows[1].cycles >= alone[1]
    assert warped.rows[0].cycles + warped.rows[1].cycles > alone[0] + alone[1]  # they did contend
    moved = sum(r.dram_read_bytes + r.dram_write_bytes for r in warped.rows)
    assert warped.makespan_cycles >= moved / system.bytes_per_cycle


class FakeTable:
    """A job table by hand (cost[job][sub])."""

    def __init__(self, cost):
        self.cost = cost


def test_algorithm1_by_hand():
    """Sub 0 runs A (100 cycles asking 6 B/cycle) then B (50, asking nothing); sub 1 runs C (200,
    2 B/cycle); channel 4 B/cycle. A and C ask 8 > 4: both at half speed; A ends at 200 when C
    has done 100 of its 200. Then B (full speed, ends at 250) and C (asks 2 <= 4: full speed,
    ends at 300)."""
    a, b, c = JobCost(100, 6.0), JobCost(50, 0.0), JobCost(200, 2.0)
    table = FakeTable([[a, a], [b, b], [c, c]])
    makespan, spans = algorithm1(table, Schedule(((0, 1), (2,)), (0, 1, 2)), 4.0)
    assert makespan == pytest.approx(300)
    assert [(s.start, s.end) for s in spans] == [pytest.approx((0, 200)), pytest.approx((200, 250)),
                                                 pytest.approx((0, 300))]
    # ample bandwidth: every job at its no-stall latency
    assert algorithm1(table, Schedule(((0, 1), (2,)), (0, 1, 2)), 8.0)[0] == pytest.approx(200)


def fake_search(n_jobs: int, n_subs: int, seed: int) -> Search:
    table = FakeTable([[JobCost(10 + (7 * j + 3 * s) % 13, float((j + s) % 5)) for s in range(n_subs)]
                       for j in range(n_jobs)])
    table.system = type("S", (), {"subs": [None] * n_subs})()
    return Search(table, lambda schedule: algorithm1(table, schedule, 4.0)[0], seed)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.integers(0, 1000))
def test_schedule_round_trips_through_the_encoding(n_jobs, n_subs, seed):
    search = fake_search(n_jobs, n_subs, seed)
    ind = search.random_individual()
    schedule = search.schedule(ind)
    assert sorted(j for order in schedule.order for j in order) == list(range(n_jobs))
    assert search.schedule(search.from_schedule(schedule)) == schedule
    for order in schedule.order:  # each sub-accelerator's jobs run by priority
        assert [ind.priority[j] for j in order] == sorted(ind.priority[j] for j in order)


def test_magma_keeps_its_best_seed():
    """The GA keeps its elite, so its best is never worse than the schedules it started from."""
    search = fake_search(20, 3, 1)
    seed = search.schedule(Individual(search.rng.integers(0, 3, 20), search.rng.random(20)))
    start = search.score_fn(seed)
    ranked = magma(search, 300, population=20, seeds=(seed,))
    score, best = ranked[0]
    assert score <= start and search.score_fn(best) == score
    assert [r[0] for r in ranked] == sorted(r[0] for r in ranked)


def test_presets_and_groups():
    assert available_systems() == [f"magma_s{i}" for i in range(1, 7)]
    sizes = {name: len(load_system(name).subs) for name in available_systems()}
    assert sizes == {"magma_s1": 4, "magma_s2": 4, "magma_s3": 8, "magma_s4": 8, "magma_s5": 8, "magma_s6": 16}
    s2 = load_system("magma_s2", bandwidth_gbps=1)
    assert s2.bytes_per_cycle == 5.0  # 1 GB/s at 200 MHz
    assert [s.style for s in s2.subs] == ["nvdla_like"] * 3 + ["eyeriss_like"]
    name, jobs = load_workload("mix", group_size=100)
    assert name == "mix" and len(jobs) == 100
    assert {j.network for j in jobs} == set(GROUPS["mix"])


def test_batch_multiplies_the_batch_dimension():
    _, jobs = load_workload("recommendation", batch=8, group_size=2)
    assert jobs[0].layer.sizes["M"] == 8  # dlrm bot_fc1, a GEMM of M = 1
    assert jobs[1].layer.sizes["M"] == 128 * 8  # flash_mlp FC1, batch 128 already


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "accelsim.cli", "multicore", *args], cwd=cwd, capture_output=True,
                          text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


def test_cli_writes_the_report(tmp_path):
    workload = tmp_path / "jobs.yaml"
    workload.write_text("name: two\njobs:\n  - {network: dlrm, layers: [bot_fc1, bot_fc2]}\n"
                        "  - {network: flash_mlp, layers: [FC4], batch: 2}\n")
    out = tmp_path / "out.json"
    done = run_cli("--system", system_file(tmp_path, count=2), "--workload", str(workload), "--scheduler", "herald",
                   "--json", str(out), "--trace", str(tmp_path / "t.json"), "--plot", str(tmp_path / "d.png"),
                   "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["makespan_cycles"] == max(r["end_cycle"] for r in report["jobs"])
    assert [r["name"] for r in report["jobs"]] == ["dlrm/bot_fc1", "flash_mlp/FC4", "dlrm/bot_fc2"]
    assert sorted(sum(report["schedule"].values(), [])) == sorted(r["name"] for r in report["jobs"])
    assert report["provenance"]["command"] == "multicore"
    trace = json.loads((tmp_path / "t.json").read_text())
    assert {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"} == {"ey_0", "ey_1", "channel"}
    # the channel track: the demand at each job's start and end, against the channel's 2.4 GB/s
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters[-1]["args"] == {"demand": 0.0, "channel": 12.0}
    assert (tmp_path / "d.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("system, workload, message", [
    ("nope", "vision", "unknown system preset 'nope'"),
    ("magma_s1", "nope", "unknown workload 'nope'"),
    ("BAD", "vision", "channel.bandwidth_gbps: Input should be greater than 0"),
])
def test_cli_refuses_bad_inputs(tmp_path, system, workload, message):
    if system == "BAD":
        system = system_file(tmp_path, gbps=0)
    done = run_cli("--system", system, "--workload", workload, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], done.stderr


def test_prepare_refuses_a_job_over_the_step_budget(tmp_path):
    from accelsim.budget import Budget
    from accelsim.errors import ResourceError

    with pytest.raises(ResourceError, match="over budget"):
        prepare_system(MulticoreSettings(system_file(tmp_path), "recommendation", group_size=1), Budget(max_steps=1))


def test_run_multicore_reports_every_scheduler(tmp_path):
    report = run_multicore(MulticoreSettings(system_file(tmp_path, count=2), "recommendation", group_size=4,
                                             budget=40, compare=("herald", "aimt", "random")))
    doc = report.to_dict()
    assert [c["scheduler"] for c in doc["compared"]] == ["magma", "herald", "aimt", "random"]
    assert len(doc["jobs"]) == 4 and len(doc["job_table"]) == 4
    assert 0 < doc["sub_accelerators"][0]["utilization"] <= 1
    # magma's schedule is the best simulated of its top schedules and its seeds (the heuristics')
    makespan = {c["scheduler"]: c["makespan_cycles"] for c in doc["compared"]}
    assert makespan["magma"] <= min(makespan["herald"], makespan["aimt"])


@pytest.mark.slow
def test_below_the_channel_algorithm1_predicts_the_simulation():
    """Two HB sub-accelerators, ten vision jobs (Herald-like schedule) at 16 GB/s: the summed
    no-stall bandwidth of the running jobs never reaches the channel, and the simulated makespan
    is within 2% of Algorithm 1's (measured: +0.61%)."""
    settings = MulticoreSettings(str(REPO / "examples/multicore/two_hb.yaml"), "vision", group_size=10,
                                 scheduler="herald")
    report = run_multicore(settings)
    run = report.outcomes[0].run
    subs = {sub.name: sub.index for sub in report.system.subs}
    for row in run.rows:  # at every job's start, the jobs running then ask less than the channel
        live = [r for r in run.rows if r.start_cycle <= row.start_cycle < r.end_cycle]
        asked = sum(report.table.cost[r.job][subs[r.sub_accelerator]].bandwidth_bytes_per_cycle for r in live)
        assert asked < report.system.bytes_per_cycle
    assert run.makespan_cycles == pytest.approx(report.outcomes[0].algorithm1_cycles, rel=0.02)


def test_inline_hardware_reads_as_a_hardware_file(tmp_path):
    """A sub-accelerator's hardware written inline goes through the hardware loader: a
    ``levels`` list is expanded as in a hardware YAML (eyeriss_like written that way loads to
    eyeriss_like, the channel replacing its DRAM in both), and a wrong field gets the loader's
    message ("valid fields here"), prefixed with where it sits in the system file."""
    from tests.test_hw_levels import _as_levels

    inline = yaml.safe_load(_as_levels("eyeriss_like"))
    doc = {"name": "inline", "channel": {"bandwidth_gbps": 2.4},
           "sub_accelerators": [{"name": "ey", "hw": inline, "style": "eyeriss_like"}]}
    path = tmp_path / "inline.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    by_name = load_system(system_file(tmp_path, latency=0))
    assert load_system(str(path)).subs[0].hw == by_name.subs[0].hw
    inline["pe_array"]["colour"] = "red"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InputError) as err:
        load_system(str(path))
    message = str(err.value)
    assert message.startswith(f"{path}:") and "sub_accelerators.0.hw: field pe_array.colour: unknown field" in message
    assert "valid fields here" in message
