"""Run the MAESTRO model on a mapping: from our parsed files (or a named style's mapping) and
hardware spec to MAESTRO's numbers, as a :class:`MaestroLayerAnalysis` per layer, our
:class:`~accelsim.results.LayerResult` schema, and MAESTRO's CSV lines."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.bounds import fill_bounds
from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.maestro.clusters import build_levels
from accelsim.maestro.engine import (
    NO_CORRECTIONS,
    Analysis,
    CaseRecord,
    Corrections,
    LevelResult,
    MaestroHardware,
)
from accelsim.maestro.problem import Directive, MaestroProblem
from accelsim.maestro.report import CsvLayer, csv_rows
from accelsim.mapping.ast import ClusterDirective, MaestroLayer
from accelsim.results import TENSORS, LayerResult, TensorAccesses

_OUR_TENSOR = {"input": "input", "weight": "filter", "output": "output"}


def hardware_of(hw: HardwareSpec) -> MaestroHardware:
    """The MAESTRO hardware-file parameters a spec stands for: PEs, the distribution NoC's
    bandwidth and latency (``NoC_NumHops``), DRAM bandwidth in words, buffer sizes in words and
    the MACs per PE per cycle (MAESTRO's SIMD lanes). Bandwidths are truncated to integers as
    MAESTRO reads them; below one word per cycle is refused (MAESTRO would divide by zero), and
    so is a design with register files inside the PE (MAESTRO has no such level) or an L2 that
    bypasses a tensor (MAESTRO has no bypass)."""
    if hw.inner_levels:
        raise InputError(f"{hw.name}: MAESTRO models one buffer per PE and one shared buffer; the register files "
                         f"inside its PEs ({', '.join(lv.name for lv in hw.inner_levels)}) are not in MAESTRO's "
                         "model: use the simulator or --model analytical")
    if hw.l2.bypassed:
        raise InputError(f"{hw.name}: MAESTRO's shared buffer holds every tensor; l2.keeps leaves out "
                         f"{', '.join(sorted(hw.l2.bypassed))} (bypass), which is not in MAESTRO's model: use the "
                         "simulator or --model analytical")
    noc = int(hw.distribution_noc.bandwidth_words_per_cycle)
    offchip = int(hw.dram.bandwidth_bytes_per_cycle / hw.word_size_bytes)
    for name, value in (("distribution_noc.bandwidth_words_per_cycle", noc), ("dram bandwidth in words", offchip)):
        if value < 1:
            raise InputError(f"{hw.name}: {name} is below 1 word per cycle; MAESTRO's model needs an integer >= 1")
    return MaestroHardware(
        num_pes=hw.num_pes,
        noc_bandwidth_words_per_cycle=noc,
        offchip_bandwidth_words_per_cycle=offchip,
        l1_size_words=hw.l1.size_bytes // hw.word_size_bytes,
        l2_size_words=hw.l2.size_bytes // hw.word_size_bytes,
        noc_hop_latency_cycles=hw.distribution_noc.latency_cycles,
        simd_lanes=hw.pe_array.macs_per_pe_per_cycle,
    )


def problem_of(layer: MaestroLayer, network: str = "") -> MaestroProblem:
    """A parsed layer in MAESTRO's form: its dimensions and directives as the file wrote them
    (repeats kept, before our reading of MAESTRO's conventions), strides on Y and X."""
    written = layer.written_dataflow or layer.dataflow
    dataflow = tuple(
        Directive("cluster", d.size, 0, "") if isinstance(d, ClusterDirective) else Directive(d.kind, d.size, d.offset, d.dim)
        for d in written
    )
    dims = layer.written_dims or tuple(layer.dims.items())
    # MAESTRO takes strides from the Stride block only (a TRCONV's upsampling 2 is dropped)
    strides = dict(layer.written_strides) if layer.written_dims else {"Y": layer.stride_y, "X": layer.stride_x}
    return MaestroProblem(layer.name, layer.type, dims, strides, dataflow, network, layer.line)


@dataclass
class MaestroLayerAnalysis:
    """MAESTRO's analysis of one layer: the top level's result and the cases behind it."""

    problem: MaestroProblem
    hw: MaestroHardware
    top: LevelResult
    first: LevelResult  # the first level analysis finished (MAESTRO's L1 size requirement)
    num_levels: int
    used_pes: int
    wall_seconds: float

    @property
    def cycles(self) -> int:
        return self.top.runtime

    @property
    def cases(self) -> list[CaseRecord]:
        return self.top.cases

    @property
    def l1_required_words(self) -> int:
        return sum(self.first.l1_size.values())

    @property
    def l2_required_words(self) -> int:
        return sum(self.top.l2_size.values())

    def tensor_pixels(self, tensor: str) -> int:
        """MAESTRO's ``Num Total ... Pixels``: the layer's dimensions (repeats included) that
        the tensor couples, multiplied."""
        coupled = next(t for t in self.problem.tensors() if t.name == tensor).coupled
        return math.prod(size for name, size in self.problem.dims if name in coupled)

    def csv_layer(self) -> CsvLayer:
        return CsvLayer(self.problem.network, self.problem.name, self.hw.num_pes, self.hw.noc_bandwidth_words_per_cycle,
                        self.hw.simd_lanes, self.top, self.first, self.first is not self.top,
                        self.tensor_pixels("input"), self.tensor_pixels("filter"))


def analyze_problem(problem: MaestroProblem, hw: MaestroHardware, corrections: Corrections = NO_CORRECTIONS
                    ) -> MaestroLayerAnalysis:
    """MAESTRO's analysis of one layer (``corrections`` switch named rules off; see
    :class:`~accelsim.maestro.engine.Corrections`). Raises MappingError where MAESTRO stops
    with an error or crashes."""
    start = time.perf_counter()
    _check_filter_maps(problem)
    levels, used = build_levels(problem, hw.num_pes)
    analysis = Analysis(problem, levels, hw, corrections)
    top = analysis.run()
    assert analysis.first_completed is not None
    return MaestroLayerAnalysis(problem, hw, top, analysis.first_completed, len(levels), used,
                                time.perf_counter() - start)


def _check_filter_maps(problem: MaestroProblem) -> None:
    """MAESTRO's parser stops on a TemporalMap of R or S whose size differs from its offset or
    from the filter size."""
    for d in problem.dataflow:
        if d.temporal and d.var in ("R", "S"):
            if d.size != d.offset:
                raise problem.error(f"TemporalMap({d.size},{d.offset}) {d.var}: MAESTRO requires the size of {d.var} "
                                    "to equal its offset (it stops with 'Invalid mapping')")
            size = problem.first_size(d.var)
            last = [s for n, s in problem.dims if n == d.var]
            if last and d.size != last[-1] or size is not None and not last:
                raise problem.error(f"TemporalMap({d.size},{d.offset}) {d.var}: MAESTRO requires the size of "
                                    f"{d.var} to equal its dimension {last[-1] if last else size} "
                                    "(it stops with 'Invalid mapping')")


def layer_result(analysis: MaestroLayerAnalysis, hw: HardwareSpec, layer_name: str, op: str) -> LayerResult:
    """MAESTRO's numbers in the simulator's schema (``model: "maestro"``).

    Cycles, MACs, the L1/L2 reads and writes of each tensor and the buffer requirements are
    MAESTRO's (sizes x the word size); MAESTRO has no DRAM counts (0 here). Of each top-level
    case's cost, its compute delay counts as busy and the rest as a stall of what set the cost
    (off-chip floor: ``dram``, ingress: ``distribution_noc``, egress: ``reduction``).
    Energy is MAESTRO's activity-based estimate (accesses only, no MACs, no DRAM).
    """
    top = analysis.top
    busy = 0
    stalls = {"compute": 0, "distribution_noc": 0, "reduction": 0, "dram": 0}
    for case in top.cases:
        if case.skipped:
            continue
        compute = min(case.compute_delay, case.delay)
        busy += case.occurrences * compute
        extra = case.delay - compute
        if extra <= 0:
            continue
        if case.delay > max(case.ingress_delay, case.egress_delay, case.compute_delay) and not _serial(case):
            cause = "dram"
        elif case.delay == case.egress_delay and case.egress_delay > case.ingress_delay:
            cause = "reduction"
        else:
            cause = "distribution_noc"
        stalls[cause] += case.occurrences * extra
    accesses: dict[str, TensorAccesses] = {}
    for ours in TENSORS:
        t = _OUR_TENSOR[ours]
        accesses[ours] = TensorAccesses(top.l1_read[t], top.l1_write[t], top.l2_read[t], top.l2_write[t], 0, 0)
    from accelsim.maestro.report import (
        L1_ENERGY_MULTIPLIER,
        L2_ENERGY_MULTIPLIER,
        MAC_ENERGY_NJ,
    )

    l1_energy = sum(top.l1_read.values()) + sum(top.l1_write.values())
    l2_energy = top.l2_read["input"] + top.l2_write["input"] + top.l2_read["filter"] + top.l2_write["filter"] \
        + top.l2_write["output"]
    breakdown = {"mac": 0.0, "l1": l1_energy * L1_ENERGY_MULTIPLIER * MAC_ENERGY_NJ * 1000,
                 "l2": l2_energy * L2_ENERGY_MULTIPLIER * MAC_ENERGY_NJ * 1000, "dram": 0.0, "noc": 0.0}
    delivered = top.l1_write["input"] + top.l1_write["filter"]
    carried = top.l2_read["input"] + top.l2_read["filter"]
    cycles = top.runtime
    result = LayerResult(
        layer=layer_name, op=op, hw=hw.name, mode="maestro", cycles=cycles, macs=top.macs, num_pes=hw.num_pes,
        used_pes=analysis.used_pes,
        pe_utilization=top.macs / (hw.num_pes * hw.pe_array.macs_per_pe_per_cycle * cycles) if cycles else 0.0,
        compute_busy_cycles=busy, stall_cycles=stalls, energy_pj=sum(breakdown.values()),
        energy_breakdown_pj=breakdown, accesses=accesses, noc_words=carried, noc_delivered_words=delivered,
        multicast_factor=delivered / carried if carried else 1.0, egress_words=top.l2_write["output"],
        l1_required_bytes=analysis.l1_required_words * hw.word_size_bytes,
        l2_required_bytes=analysis.l2_required_words * hw.word_size_bytes,
        l1_size_bytes=hw.l1.size_bytes, l2_size_bytes=hw.l2.size_bytes,
        steps=sum(c.occurrences for c in top.cases if not c.skipped), events=0,
        wall_seconds=analysis.wall_seconds, model="maestro",
    )
    return fill_bounds(result, hw)


def _serial(case: CaseRecord) -> bool:
    return case.delay == case.compute_delay + case.ingress_delay


def csv_text(analyses: Sequence[MaestroLayerAnalysis]) -> str:
    """MAESTRO's result CSV for these layers (one run, in order), header included."""
    return "\n".join(csv_rows([a.csv_layer() for a in analyses])) + "\n"


__all__ = ["MappingError", "analyze_problem", "csv_text", "hardware_of", "layer_result", "problem_of"]
