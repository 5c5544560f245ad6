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
- ``wide-array``: a GEMM spread over 8 PEs of a 10^6-PE array;
- ``functional-conv3``: AlexNet CONV3 on ``interstellar_rf2`` (``eyeriss_like`` style) with
  values riding on the transfers (``--functional``, int8), its check required to pass;
- ``many-layers``: ``accelsim simulate`` with ``--json`` and ``--csv`` on MAESTRO files of
  500, 1,000 and 5,000 tiny identical layers generated at run time (the command as a user runs
  it, start-up included; CPU time of each command, wall time beside it): its cost must grow
  linearly with the number of layers.

``--quick`` runs smaller versions (a CI smoke test). ``--against-scalesim`` (needs the
``scalesim`` extra) runs SCALE-Sim 3.0.0 and accelsim on the same AlexNet layer and the same
32x32 array, alternating, and prints both times and their ratio.
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from accelsim.functional import simulate_functional
from accelsim.hw.loader import load_hardware
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import MapDirective
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job, jobs_from_network, prepare
from accelsim.mapping.styles import STYLES
from accelsim.results import LayerResult
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
    layer_seconds: list[float] = field(default_factory=list)  # CPU seconds of each layer (many-layers: wall)
    network_seconds: dict[int, float] = field(default_factory=dict)  # many-layers: layers -> CPU seconds
    peak_rss_mb: float = 0.0


@dataclass(frozen=True)
class Scenario:
    """One line of the benchmark: ``name``, what it runs, its target and how to run it."""

    name: str
    description: str
    target: str
    met: Callable[[Figures], bool]
    run: Callable[[bool], Figures]
    memory_mb: int = 400  # peak memory target


def _peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def _timing_only(cm: CompiledMapping, hw: HardwareSpec) -> LayerResult:
    return simulate_layer(cm, hw, SimOptions())


def _simulate(jobs: list[Job], hw_name: str, overrides: list[str] | None = None,
              run: Callable[[CompiledMapping, HardwareSpec], LayerResult] = _timing_only) -> Figures:
    hw = load_hardware(hw_name, overrides or [])
    figures = Figures()
    start, cpu = time.perf_counter(), time.process_time()
    for job in jobs:
        t = time.process_time()
        result = run(prepare(job, hw), hw)
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


def _checked(cm: CompiledMapping, hw: HardwareSpec) -> LayerResult:
    """The layer simulated with values; its functional check must pass."""
    result, report = simulate_functional(cm, hw)
    if not report.passed:
        raise RuntimeError(f"bench functional-conv3: {report.text()}")
    return result


def _functional(quick: bool) -> Figures:
    if quick:  # 6,422,528 MACs in 672 steps
        return _simulate(_network("marvel15", "eyeriss_like", "tpu_like", ("L5_Bottleneck1_1_3",)), "eyeriss_like",
                         run=_checked)
    return _simulate(_network("alexnet", "interstellar_rf2", "eyeriss_like", ("conv3",)), "interstellar_rf2",
                     run=_checked)


WIDE_ARRAY_PES = 10**6


def wide_array_job() -> Job:
    """A GEMM whose 8 rows go to 8 PEs of the array (every other PE idles)."""
    layer = Layer.build("gemm_8_rows", OpType.GEMM, {"M": 8, "N": 256, "K": 256})
    dataflow = (MapDirective("spatial", 1, 1, "M", 0), MapDirective("temporal", 8, 8, "N", 0),
                MapDirective("temporal", 16, 16, "K", 0))
    return Job(layer, dataflow, "bench wide-array")


def _wide(quick: bool) -> Figures:
    return _simulate([wide_array_job()], "eyeriss_like", [f"pe_array.count={WIDE_ARRAY_PES}"])


MANY_LAYERS = (500, 1000, 5000)
MANY_LAYERS_QUICK = (50, 100, 500)


def tiny_layers_file(path: str, layers: int) -> None:
    """Write a MAESTRO file of ``layers`` identical tiny convolutions (K=C=4, 4x4, 1x1 filter)."""
    layer = ("    Type: CONV\n    Stride { X: 1, Y: 1 }\n    Dimensions { K: 4, C: 4, R: 1, S: 1, Y: 4, X: 4 }\n"
             "    Dataflow {\n      SpatialMap(1,1) K;\n      TemporalMap(4,4) C;\n      TemporalMap(1,1) Y;\n"
             "      TemporalMap(1,1) X;\n    }\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write("Network tiny {\n" + "".join(f"  Layer l{i} {{\n{layer}  }}\n" for i in range(layers)) + "}\n")


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _many_layers(quick: bool) -> Figures:
    """``accelsim simulate --json --csv`` on files of tiny identical layers, each in its own
    process: CPU seconds (``network_seconds``) and wall seconds by layer count."""
    figures = Figures()
    with tempfile.TemporaryDirectory() as work:
        for layers in MANY_LAYERS_QUICK if quick else MANY_LAYERS:
            path = f"{work}/tiny{layers}.m"
            tiny_layers_file(path, layers)
            start, cpu = time.perf_counter(), _children_cpu_seconds()
            subprocess.run([sys.executable, "-m", "accelsim.cli", "simulate", "--hw", "eyeriss_like", "--mapping",
                            path, "--json", f"{path}.json", "--csv", f"{path}.csv", "--no-progress"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # its wrote lines
            figures.network_seconds[layers] = _children_cpu_seconds() - cpu
            figures.wall_seconds += time.perf_counter() - start
            figures.layer_seconds.append(time.perf_counter() - start)
            figures.layers += layers
    figures.cpu_seconds = sum(figures.network_seconds.values())
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    figures.peak_rss_mb = rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024
    return figures


def _many_layers_met(f: Figures) -> bool:
    small, middle, large = MANY_LAYERS
    seconds = f.network_seconds
    return seconds[middle] <= 2 * seconds[small] and seconds[large] <= 30


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
    Scenario("functional-conv3", "AlexNet conv3 on interstellar_rf2, eyeriss_like style, with --functional values",
             "<= 60 s", lambda f: f.cpu_seconds <= 60, _functional, memory_mb=1000),
    Scenario("many-layers", "accelsim simulate --json --csv on 500, 1,000 and 5,000 tiny identical layers",
             "1,000 layers <= 2x the CPU time of 500, 5,000 <= 30 s", _many_layers_met, _many_layers),
)


def _child(name: str, quick: bool, queue: multiprocessing.Queue) -> None:
    scenario = next(s for s in SCENARIOS if s.name == name)
    figures = scenario.run(quick)
    figures.peak_rss_mb = max(figures.peak_rss_mb, _peak_rss_mb())
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
    if scenario.name == "many-layers":
        (small, s_small), (middle, s_middle), (large, s_large) = sorted(f.network_seconds.items())
        w_small, w_middle, w_large = f.layer_seconds
        verdict = "" if quick else ("  [met]" if scenario.met(f) else "  [NOT met]")
        return (f"{scenario.name}: {scenario.description}{' (quick subset)' if quick else ''}: {small:,} layers "
                f"{s_small:.2f} CPU s ({w_small:.2f} s wall), {middle:,} layers {s_middle:.2f} CPU s ({w_middle:.2f} s "
                f"wall; {s_middle / s_small:.2f}x), {large:,} layers {s_large:.2f} CPU s ({w_large:.2f} s wall), "
                f"start-up included; peak memory {f.peak_rss_mb:.0f} MB; target {scenario.target}{verdict}")
    verdict = "" if quick else ("  [met]" if scenario.met(f) and f.peak_rss_mb <= scenario.memory_mb else "  [NOT met]")
    return (f"{scenario.name}: {scenario.description}{' (quick subset)' if quick else ''}: {f.layers} layers, "
            f"{f.steps:,} steps, {f.cycles:,} cycles in {f.cpu_seconds:.2f} CPU s ({f.wall_seconds:.2f} s wall) = "
            f"{rate:,.0f} simulated cycles/s, "
            f"{events:,.0f} events/s{per_layer}; peak memory {f.peak_rss_mb:.0f} MB; target {scenario.target}, "
            f"peak memory <= {scenario.memory_mb} MB{verdict}")


def run_bench(quick: bool = False, only: tuple[str, ...] = ()) -> Iterator[str]:
    """Run the scenarios (``only``: those named); yield one printable line each and a total."""
    total = Figures()
    for scenario in SCENARIOS:
        if only and scenario.name not in only:
            continue
        f = run_scenario(scenario, quick)
        yield format_line(scenario, f, quick)
        if f.network_seconds:  # whole commands, not simulations: not in the simulator's total
            continue
        total.cycles += f.cycles
        total.events += f.events
        total.cpu_seconds += f.cpu_seconds
        total.wall_seconds += f.wall_seconds
        total.peak_rss_mb = max(total.peak_rss_mb, f.peak_rss_mb)
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
