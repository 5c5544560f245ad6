"""The fixed benchmark behind ``accelsim bench``: the simulator's speed and memory on the
scenarios of issue 9, each with its target.

Every scenario runs in a fresh process (so its peak memory is its own) in realistic mode and
prints one line: what it ran, the CPU time its simulations took (and the wall time beside it),
simulated cycles per CPU second, engine events per CPU second, peak resident memory, the
target and whether it was met. Targets are judged on CPU time: the simulator is
single-threaded, so on an idle machine wall time is the same, and on a shared one CPU time is
what the run itself cost.

- ``alexnet-tpu``: AlexNet's five convolutions on ``tpu_like_32x32`` (``tpu_like`` style);
- ``resnet50-eyeriss``: all 70 ResNet-50 layers on ``eyeriss_like`` (``eyeriss_like`` style);
- ``marvel15-layer``: every marvel15 layer under each of the five styles on ``eyeriss_like``,
  one at a time: the median and the slowest;
- ``vgg16-maeri``: VGG-16 on ``flash_edge`` (``maeri_like`` style), the README's example;
- ``wide-array``: a GEMM spread over 8 PEs of a 10^6-PE array.

``--quick`` runs smaller versions (a CI smoke test). ``--against-scalesim`` (needs the
``scalesim`` extra) runs SCALE-Sim 3.0.0 and accelsim on the same AlexNet layer and the same
32x32 array, alternating, and prints both times and their ratio.
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from accelsim.hw.loader import load_hardware
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.jobs import Job, jobs_from_network, prepare
from accelsim.mapping.styles import STYLES
from accelsim.sim.engine import SimOptions, simulate_layer
from accelsim.workload.ops import Layer, OpType

ALEXNET_CONVS = ("conv1", "conv2", "conv3", "conv4", "conv5")


@dataclass
class Figures:
    """What a scenario measured (cycles are simulated cycles; seconds are wall time)."""

    layers: int = 0
    cycles: int = 0
    steps: int = 0
    events: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    layer_seconds: list[float] = field(default_factory=list)  # CPU seconds of each layer
    peak_rss_mb: float = 0.0


@dataclass(frozen=True)
class Scenario:
    """One line of the benchmark: ``name``, what it runs, its target and how to run it."""

    name: str
    description: str
    target: str
    met: Callable[[Figures], bool]
    run: Callable[[bool], Figures]


def _peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def _simulate(jobs: list[Job], hw_name: str, overrides: list[str] | None = None) -> Figures:
    hw = load_hardware(hw_name, overrides or [])
    figures = Figures()
    start, cpu = time.perf_counter(), time.process_time()
    for job in jobs:
        t = time.process_time()
        result = simulate_layer(prepare(job, hw), hw, SimOptions())
        figures.layer_seconds.append(time.process_time() - t)
        figures.layers += 1
        figures.cycles += result.cycles
        figures.steps += result.steps
        figures.events += result.events
    figures.cpu_seconds = time.process_time() - cpu
    figures.wall_seconds = time.perf_counter() - start
    return figures


def _network(network: str, hw_name: str, style: str, only: tuple[str, ...] | None = None,
             first: int | None = None) -> list[Job]:
    _, jobs = jobs_from_network(network, style, load_hardware(hw_name))
    if only is not None:
        jobs = [j for j in jobs if j.layer.name in only]
    return jobs[:first] if first is not None else jobs


def _alexnet(quick: bool) -> Figures:
    return _simulate(_network("alexnet", "tpu_like_32x32", "tpu_like", ALEXNET_CONVS[-2:] if quick else ALEXNET_CONVS),
                     "tpu_like_32x32")


def _resnet50(quick: bool) -> Figures:
    return _simulate(_network("resnet50", "eyeriss_like", "eyeriss_like", first=10 if quick else None), "eyeriss_like")


def _marvel15(quick: bool) -> Figures:
    hw = load_hardware("eyeriss_like")
    jobs = []
    for style in sorted(STYLES):
        for job in _network("marvel15", "eyeriss_like", style, first=3 if quick else None):
            try:
                prepare(job, hw)
            except Exception:  # noqa: BLE001 (a style that cannot map a layer is not timed)
                continue
            jobs.append(job)
    return _simulate(jobs, "eyeriss_like")


def _vgg16(quick: bool) -> Figures:
    return _simulate(_network("vgg16", "flash_edge", "maeri_like", first=2 if quick else None), "flash_edge")


WIDE_ARRAY_PES = 10**6


def wide_array_job() -> Job:
    """A GEMM whose 8 rows go to 8 PEs of the array (every other PE idles)."""
    layer = Layer.build("gemm_8_rows", OpType.GEMM, {"M": 8, "N": 256, "K": 256})
    dataflow = (MapDirective("spatial", 1, 1, "M", 0), MapDirective("temporal", 8, 8, "N", 0),
                MapDirective("temporal", 16, 16, "K", 0))
    return Job(layer, dataflow, "bench wide-array")


def _wide(quick: bool) -> Figures:
    return _simulate([wide_array_job()], "eyeriss_like", [f"pe_array.count={WIDE_ARRAY_PES}"])


def _median_ms(f: Figures) -> float:
    return 1000 * statistics.median(f.layer_seconds) if f.layer_seconds else 0.0


SCENARIOS = (
    Scenario("alexnet-tpu", "AlexNet conv1-5 on tpu_like_32x32, tpu_like style",
             ">= 500,000 simulated cycles/s", lambda f: f.cycles / f.cpu_seconds >= 500_000, _alexnet),
    Scenario("resnet50-eyeriss", "ResNet-50, 70 layers, on eyeriss_like, eyeriss_like style",
             "<= 8 s", lambda f: f.cpu_seconds <= 8, _resnet50),
    Scenario("marvel15-layer", "one marvel15 layer on eyeriss_like, each of the 5 styles x 15 layers",
             "median <= 50 ms", lambda f: _median_ms(f) <= 50, _marvel15),
    Scenario("vgg16-maeri", "VGG-16 on flash_edge, maeri_like style (README example)",
             "<= 60 s", lambda f: f.cpu_seconds <= 60, _vgg16),
    Scenario("wide-array", f"an 8-PE-wide GEMM on a {WIDE_ARRAY_PES:,}-PE array",
             "<= 2 s and <= 300 MB", lambda f: f.cpu_seconds <= 2 and f.peak_rss_mb <= 300, _wide),
)
MEMORY_TARGET_MB = 400


def _child(name: str, quick: bool, queue: multiprocessing.Queue) -> None:
    scenario = next(s for s in SCENARIOS if s.name == name)
    figures = scenario.run(quick)
    figures.peak_rss_mb = _peak_rss_mb()
    queue.put(figures)


def run_scenario(scenario: Scenario, quick: bool) -> Figures:
    """Run one scenario in a fresh process and return its figures."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_child, args=(scenario.name, quick, queue))
    process.start()
    figures = queue.get()
    process.join()
    return figures


def format_line(scenario: Scenario, f: Figures, quick: bool) -> str:
    """One printable line for a scenario's figures."""
    rate = f.cycles / f.cpu_seconds if f.cpu_seconds else 0.0
    events = f.events / f.cpu_seconds if f.cpu_seconds else 0.0
    per_layer = ""
    if scenario.name == "marvel15-layer":
        per_layer = f", median {_median_ms(f):.1f} ms, slowest {1000 * max(f.layer_seconds):.0f} ms per layer"
    verdict = "" if quick else ("  [met]" if scenario.met(f) and f.peak_rss_mb <= MEMORY_TARGET_MB else "  [NOT met]")
    return (f"{scenario.name}: {scenario.description}{' (quick subset)' if quick else ''}: {f.layers} layers, "
            f"{f.steps:,} steps, {f.cycles:,} cycles in {f.cpu_seconds:.2f} CPU s ({f.wall_seconds:.2f} s wall) = "
            f"{rate:,.0f} simulated cycles/s, "
            f"{events:,.0f} events/s{per_layer}; peak memory {f.peak_rss_mb:.0f} MB; target {scenario.target}, "
            f"peak memory <= {MEMORY_TARGET_MB} MB{verdict}")


def run_bench(quick: bool = False, only: tuple[str, ...] = ()) -> Iterator[str]:
    """Run the scenarios (``only``: those named); yield one printable line each and a total."""
    total = Figures()
    for scenario in SCENARIOS:
        if only and scenario.name not in only:
            continue
        f = run_scenario(scenario, quick)
        total.cycles += f.cycles
        total.events += f.events
        total.cpu_seconds += f.cpu_seconds
        total.wall_seconds += f.wall_seconds
        total.peak_rss_mb = max(total.peak_rss_mb, f.peak_rss_mb)
        yield format_line(scenario, f, quick)
    if total.cpu_seconds:
        yield (f"total: {total.cycles:,} cycles in {total.cpu_seconds:.2f} CPU s ({total.wall_seconds:.2f} s wall) = "
               f"{total.cycles / total.cpu_seconds:,.0f} simulated cycles/s, {total.events / total.cpu_seconds:,.0f} "
               f"events/s; largest peak memory {total.peak_rss_mb:.0f} MB")


# ------------------------------------------------------------------------------------------
def against_scalesim(layer_name: str = "conv2", rounds: int = 2) -> Iterator[str]:
    """SCALE-Sim 3.0.0 and accelsim on the same AlexNet layer and 32x32 weight-stationary array,
    alternating ``rounds`` times; lines with both times and their ratio."""
    from accelsim.scalesim.config import ScaleSimConfig
    from accelsim.scalesim.parity import run_scalesim
    from accelsim.scalesim.topology import ScaleSimLayer, ScaleSimTopology

    hw = load_hardware("tpu_like_32x32")
    (job,) = _network("alexnet", "tpu_like_32x32", "tpu_like", (layer_name,))
    cm = prepare(job, hw)
    s = job.layer.sizes
    # SCALE-Sim's own default configuration (its scale.cfg): 32x32, 64 kB per SRAM, ws
    config = ScaleSimConfig("bench", 32, 32, 64, 64, 64, "ws", "CALC", (10,), 10, 10, 10, "bench")
    topology = ScaleSimTopology("alexnet", "conv", (ScaleSimLayer(
        layer_name, s["Y"], s["X"], s["R"], s["S"], s["C"], s["K"], job.layer.stride_y, job.layer.stride_x),), "bench")
    theirs, ours = [], []
    cycles = {"scalesim": 0, "accelsim": 0}
    with tempfile.TemporaryDirectory() as work:
        for r in range(rounds):
            t = time.process_time()
            report = run_scalesim(config, topology, f"{work}/{r}")
            theirs.append(time.process_time() - t)
            cycles["scalesim"] = int(report.iloc[0]["total_cycles"])
            t = time.process_time()
            cycles["accelsim"] = simulate_layer(cm, hw, SimOptions()).cycles
            ours.append(time.process_time() - t)
            yield (f"round {r + 1}: SCALE-Sim {theirs[-1]:.2f} CPU s ({cycles['scalesim']:,} cycles), "
                   f"accelsim {ours[-1]:.3f} CPU s ({cycles['accelsim']:,} cycles)")
    t_theirs, t_ours = statistics.median(theirs), statistics.median(ours)
    rate_ratio = (cycles["accelsim"] / t_ours) / (cycles["scalesim"] / t_theirs)
    yield (f"AlexNet {layer_name} on a 32x32 weight-stationary array, median of {rounds} (CPU time): SCALE-Sim 3.0.0 "
           f"{t_theirs:.2f} s = {cycles['scalesim'] / t_theirs:,.0f} simulated cycles/s; accelsim "
           f"(tpu_like_32x32, tpu_like style) {t_ours:.3f} s = {cycles['accelsim'] / t_ours:,.0f} simulated cycles/s; "
           f"accelsim is {t_theirs / t_ours:,.0f}x faster ({rate_ratio:,.0f}x "
           "in simulated cycles per second)")
