"""The fixed benchmark behind ``accelsim bench``.

Scenario (full): the five convolution layers of AlexNet on ``tpu_like_32x32`` under the
``tpu_like`` style (the kind of run SCALE-Sim is usually timed on), then every layer of
ResNet-50 on ``eyeriss_like`` under ``eyeriss_like`` (row stationary), realistic mode.
``--quick``: the first ten ResNet-50 layers only. Figures: simulated cycles per wall second,
engine events per second and peak resident memory of the process.
"""

from __future__ import annotations

import resource
import sys
import time
from typing import Iterator

from accelsim.mapping.jobs import jobs_from_network, prepare
from accelsim.hw.loader import load_hardware
from accelsim.sim.engine import SimOptions, simulate_layer

SCENARIOS = (
    ("alexnet", "tpu_like_32x32", "tpu_like", ("conv1", "conv2", "conv3", "conv4", "conv5")),
    ("resnet50", "eyeriss_like", "eyeriss_like", None),
)


def _peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def run_bench(quick: bool = False) -> Iterator[str]:
    """Run the scenario; yield one printable line per scenario and a total."""
    scenarios = SCENARIOS[1:] if quick else SCENARIOS
    total_cycles = total_events = 0
    total_wall = 0.0
    for network, hw_name, style, only in scenarios:
        hw = load_hardware(hw_name)
        _, jobs = jobs_from_network(network, style, hw)
        if only is not None:
            jobs = [j for j in jobs if j.layer.name in only]
        if quick:
            jobs = jobs[:10]
        cycles = events = 0
        start = time.perf_counter()
        for job in jobs:
            result = simulate_layer(prepare(job, hw), hw, SimOptions())
            cycles += result.cycles
            events += result.events
        wall = time.perf_counter() - start
        total_cycles += cycles
        total_events += events
        total_wall += wall
        yield (f"{network} on {hw_name} ({style}, {len(jobs)} layers): {cycles:,} cycles in {wall:.2f} s "
               f"= {cycles / wall:,.0f} simulated cycles/s, {events / wall:,.0f} events/s")
    yield (f"total: {total_cycles:,} cycles in {total_wall:.2f} s = {total_cycles / total_wall:,.0f} "
           f"simulated cycles/s, {total_events / total_wall:,.0f} events/s; peak memory {_peak_rss_mb():.0f} MB")
