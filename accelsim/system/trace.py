"""A system run as a Perfetto trace (Chrome JSON): one track per sub-accelerator with a span per
job (its stalls by cause and bytes in the span's arguments), and a channel track with two
counters: the no-stall bandwidth the live jobs ask for (the job table's, summed over the jobs
running at each moment) and the channel's bandwidth, both in bytes per cycle. Times are cycles
shown as microseconds (1 cycle = 1 us in the viewer). The same demand as a PNG plot against the
channel: :func:`demand_plot`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from accelsim.errors import InputError

if TYPE_CHECKING:  # the report it draws
    from accelsim.system.command import MulticoreReport


def demand_steps(report: MulticoreReport) -> list[tuple[int, float]]:
    """(cycle, summed no-stall bandwidth of the jobs running from then on) at every change."""
    subs = {sub.name: sub.index for sub in report.system.subs}
    spans = []
    for row in report.outcomes[0].run.rows:
        cost = report.table.cost[row.job][subs[row.sub_accelerator]]
        spans.append((row.start_cycle, row.end_cycle, cost.bandwidth_bytes_per_cycle if cost is not None else 0.0))
    cycles = sorted({c for start, end, _ in spans for c in (start, end)})
    return [(c, sum(ask for start, end, ask in spans if start <= c < end)) for c in cycles]


def perfetto_json(report: MulticoreReport) -> str:
    events: list[dict[str, Any]] = [{"ph": "M", "pid": 1, "name": "process_name",
                                     "args": {"name": f"{report.system.name}: {report.workload}"}}]
    tids = {sub.name: sub.index + 1 for sub in report.system.subs}
    channel_tid = len(tids) + 1
    for name, tid in list(tids.items()) + [("channel", channel_tid)]:
        events.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_name", "args": {"name": name}})
    for row in report.outcomes[0].run.rows:
        events.append({"ph": "X", "pid": 1, "tid": tids[row.sub_accelerator], "name": row.name,
                       "ts": row.start_cycle, "dur": row.cycles,
                       "args": {"job": row.job, "stall_cycles": row.stall_cycles, "dram_read_bytes": row.dram_read_bytes,
                                "dram_write_bytes": row.dram_write_bytes}})
    bandwidth = report.system.bytes_per_cycle
    for cycle, ask in demand_steps(report):
        events.append({"ph": "C", "pid": 1, "tid": channel_tid, "name": "bytes_per_cycle", "ts": cycle,
                       "args": {"demand": ask, "channel": bandwidth}})
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}) + "\n"


def demand_plot(report: MulticoreReport, path: str) -> None:
    """A PNG of the running jobs' summed no-stall bandwidth against the channel's over time
    (needs matplotlib: ``pip install 'accelsim[plot]'``)."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'accelsim[plot]' (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = demand_steps(report)
    cycles = [c for c, _ in steps]
    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.step(cycles, [a for _, a in steps], where="post", label="summed no-stall bandwidth of the running jobs")
    ax.axhline(report.system.bytes_per_cycle, color="black", linestyle="--", label="channel")
    ax.set_xlabel("cycle")
    ax.set_ylabel("bytes per cycle")
    ax.set_title(f"{report.workload} on {report.system.name}, {report.outcomes[0].name}")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
