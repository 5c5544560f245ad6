"""MAESTRO's cost analysis over the cluster levels (its ``AnalyzeClusterLevel_V2``).

Per level and case: ingress and egress words, MACs, a compute delay (innermost level: the
first sub-unit's MACs over the SIMD width; upper levels: the slowest sub-unit tile's whole
runtime, analysed recursively on that tile), NoC delays ``hops x latency + ceil(words / bw) - 1``
and, at the top level, the off-chip floor. A case costs ``compute + ingress`` when all-Init and
``max(ingress, compute, egress)`` otherwise; the level's runtime is the sum over cases of
occurrences x cost. The quirks that decide cycles can be switched off one at a time
(:class:`Corrections`) for the ``compare`` ladder; with none switched off this is MAESTRO.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from accelsim.errors import MappingError
from accelsim.maestro.cases import Case, iteration_cases
from accelsim.maestro.clusters import ClusterLevel
from accelsim.maestro.problem import DimTable, MaestroProblem, Tensor, cdiv
from accelsim.maestro.reuse import LevelReuse

TENSOR_NAMES = ("input", "filter", "output")
LONG_MIN = -(2**63)  # what MAESTRO prints for a delay statistic of a layer with no analysed case


@dataclass(frozen=True)
class MaestroHardware:
    """The parameters MAESTRO's analysis reads (a hardware file's keys).

    ``noc_hop_latency_cycles`` is ``NoC_NumHops`` (default 1): MAESTRO's NoC delay is
    ``1 x latency + ceil(words / noc_bw) - 1``. Sizes and bandwidths are in elements (words).
    """

    num_pes: int
    noc_bandwidth_words_per_cycle: int
    offchip_bandwidth_words_per_cycle: int
    l1_size_words: int
    l2_size_words: int
    noc_hop_latency_cycles: int = 1
    simd_lanes: int = 1


@dataclass(frozen=True)
class Corrections:
    """MAESTRO rules replaced by what the execution really does (all off = MAESTRO).

    * ``offchip_floor``: no top-level floor ``max((L2_in + L2_w) // bw // 2, L2_out // bw //
      2)`` from the case-0 tile (``accelsim compare``'s ladder then bounds the layer by the DRAM
      traffic the execution really moves).
    * ``subcluster_init_serial``: below the top level each sub-unit tile pays its all-Init case
      as ``compute + ingress``; corrected, it overlaps like every other case (``max``).
    * ``noc_latency``: the NoC delay ``latency + ceil(words / bw) - 1`` becomes
      ``ceil(words / bw)`` (the simulator's maestro mode charges no latency).
    * ``zero_edge_egress``: the partial last unit of a spatial map whose windows fill the
      dimension exactly is counted with its outputs (quirk ``spatial_edge_zero_egress``; it
      changes counts, which ``accelsim lint`` reports).
    * ``strided_egress``: a neighbouring unit of an input-row SpatialMap on a strided layer
      adds ``offset / stride`` output rows, not ``min(offset, size)`` (quirk
      ``spatial_edge_output_inflation``; counts and egress delays).
    """

    offchip_floor: bool = False
    subcluster_init_serial: bool = False
    noc_latency: bool = False
    zero_edge_egress: bool = False
    strided_egress: bool = False


NO_CORRECTIONS = Corrections()


@dataclass
class LevelResult:
    """One analysis of a cluster level on one tile (MAESTRO's ``CostAnalyisResults``)."""

    level: int
    num_sub_clusters: int
    runtime: int = 0
    macs: int = 0
    l2_read: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TENSOR_NAMES, 0))
    l2_write: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TENSOR_NAMES, 0))
    l1_read: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TENSOR_NAMES, 0))
    l1_write: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TENSOR_NAMES, 0))
    l2_size: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TENSOR_NAMES, 0))
    l1_size: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TENSOR_NAMES, 0))
    delay_min: dict[str, int] = field(default_factory=dict)  # ingress, egress, compute
    delay_max: dict[str, int] = field(default_factory=dict)
    delay_avg: dict[str, int] = field(default_factory=dict)
    peak_bw: int = 0
    avg_bw: float = 0.0
    offchip_bw: int = 0
    avg_active_clusters: float = 0.0
    arithmetic_intensity: float = 0.0
    cases: list[CaseRecord] = field(default_factory=list)


@dataclass(frozen=True)
class CaseRecord:
    """One top-level case as analysed (for hand checks and the ladder)."""

    label: str
    occurrences: int
    skipped: bool
    ingress: dict[str, int]
    egress: int
    macs: int
    ingress_delay: int
    egress_delay: int
    compute_delay: int
    delay: int


class _Crash(MappingError):
    """A layer on which the MAESTRO binary itself crashes."""


class Analysis:
    """Runs MAESTRO's recursive analysis of one layer over its levels."""

    def __init__(
        self,
        problem: MaestroProblem,
        levels: list[ClusterLevel],
        hw: MaestroHardware,
        corrections: Corrections = NO_CORRECTIONS,
    ):
        self.problem = problem
        self.levels = levels
        self.hw = hw
        self.fix = corrections
        self.tensors: tuple[Tensor, ...] = problem.tensors()
        self.reuse = [LevelReuse(level, corrections.zero_edge_egress, corrections.strided_egress) for level in levels]
        self.cases_cache: dict[tuple, list[Case]] = {}
        self.memo: dict[tuple, LevelResult] = {}
        self.first_completed: LevelResult | None = None

    def noc_delay(self, words: int) -> int:
        sends = cdiv(words, self.hw.noc_bandwidth_words_per_cycle)
        if words % self.hw.noc_bandwidth_words_per_cycle:
            sends += 1
        if self.fix.noc_latency:
            return sends
        return self.hw.noc_hop_latency_cycles + sends - 1

    def run(self) -> LevelResult:
        return self.level(0, self.levels[0].dims)

    def level(self, index: int, dims: DimTable) -> LevelResult:
        key = (index, dims.key())
        cached = self.memo.get(key)
        if cached is None:
            cached = self._analyse(index, dims)
            self.memo[key] = cached
        if self.first_completed is None:
            self.first_completed = cached
        return cached

    def _buffer_requirements(self, res: LevelResult, dims: DimTable, reuse: LevelReuse, case: Case) -> None:
        """MAESTRO's ``UpdateBufferSizeReq`` at the first analysed case: L2 needs twice the case's
        traffic (double buffering), L1 twice the innermost tile; input-side L2 writes are the
        tile's size, the output's L2 reads its size (quirk ``output_size_ignores_stride``:
        ``Y - R + 1`` rows)."""
        for t in self.tensors:
            if not t.is_output:
                size = math.prod(dims.size(v) for v in t.coupled)
                res.l2_size[t.name] += 2 * reuse.ingress(t, case)
                res.l2_write[t.name] = size
                res.l1_size[t.name] += 2 * reuse.mapped_volume(t)
            else:
                size = 1
                for v in t.coupled:
                    if dims.is_overlapped(v):
                        size *= dims.size(v) - dims.size(dims.counterpart(v)) + 1
                    else:
                        size *= dims.size(v)
                res.l2_size[t.name] = 2 * reuse.egress(t, case)
                res.l2_read[t.name] = size
                res.l1_size[t.name] = 2 * reuse.mapped_volume(t)

    def _analyse(self, index: int, dims: DimTable) -> LevelResult:
        level = self.levels[index]
        reuse = self.reuse[index]
        last = index == len(self.levels) - 1
        res = LevelResult(level=index, num_sub_clusters=level.num_sub_clusters)
        cases = iteration_cases(level, dims)
        spatial = level.first_spatial()
        outputs = [t for t in self.tensors if t.is_output]
        inputs = [t for t in self.tensors if not t.is_output]
        delays_sum = {"ingress": 0, "egress": 0, "compute": 0}
        delays_min: dict[str, int] = {}
        delays_max: dict[str, int] = {}
        avg_bw = 0.0
        total_occurrences = 0
        offchip_bw = 0
        analysed = 0
        for case in cases:
            if analysed == 0:
                self._buffer_requirements(res, dims, reuse, case)
            occ = case.occurrences
            egress = 0
            macs = 0
            critical = 0
            for t in outputs:
                out_words = reuse.egress(t, case)
                macs += reuse.output_mapping_size(t, case, True)
                egress += out_words
                res.l2_write[t.name] += occ * out_words
                res.l1_write[t.name] += occ * macs
                res.l1_read[t.name] += occ * macs
                critical += reuse.critical_path_partial_sums(t, case)
            if critical <= 0:
                if index == 0:
                    res.cases.append(CaseRecord(case.label(), occ, True, {}, egress, macs, 0, 0, 0, 0))
                continue
            ingress = 0
            per_tensor: dict[str, int] = {}
            for t in inputs:
                words = reuse.ingress(t, case)
                per_tensor[t.name] = words
                ingress += words
                res.l2_read[t.name] += occ * words
                res.l1_write[t.name] = res.l2_read[t.name]  # MAESTRO writes L1 = L2 reads
                res.l1_read[t.name] += occ * macs
            res.arithmetic_intensity = macs / ingress if ingress else (math.inf if macs else math.nan)
            sp_state = case.state(spatial.var)
            active = level.num_edge_clusters if sp_state.is_edge else level.num_sub_clusters
            subs: list[tuple[LevelResult, int]] = []
            if not last:
                if sp_state.is_edge and sp_state.sp_edge_edge:
                    subs.append((self.level(index + 1, reuse.sub_cluster_dims(case, True)), 1))
                    if level.num_edge_clusters - 1 > 0:
                        subs.append(
                            (self.level(index + 1, reuse.sub_cluster_dims(case, False)), level.num_edge_clusters - 1)
                        )
                elif sp_state.is_edge:
                    subs.append((self.level(index + 1, reuse.sub_cluster_dims(case, False)), level.num_edge_clusters))
                else:
                    subs.append((self.level(index + 1, reuse.sub_cluster_dims(case, False)), level.num_sub_clusters))
                compute = max([0] + [r.runtime for r, _ in subs])
            else:
                compute = -(-critical // self.hw.simd_lanes)
            ingress_delay = self.noc_delay(ingress)
            egress_delay = self.noc_delay(egress)
            serial_init = case.all_init and not (self.fix.subcluster_init_serial and index > 0)
            if serial_init:
                delay = compute + ingress_delay
            else:
                delay = max(egress_delay, compute, ingress_delay)
            if index == 0:
                bw = self.hw.offchip_bandwidth_words_per_cycle
                if self.fix.offchip_floor:
                    in_floor = out_floor = 0
                else:
                    in_floor = cdiv(cdiv(res.l2_size["input"] + res.l2_size["filter"], bw), 2)
                    out_floor = cdiv(cdiv(res.l2_size["output"], bw), 2)
                delay = max(in_floor, delay, out_floor)
                if compute == 0:
                    raise _Crash(
                        f"layer {self.problem.name!r}: MAESTRO divides by a zero compute delay here "
                        "(its off-chip bandwidth requirement); the binary stops with SIGFPE"
                    )
                offchip_bw = max(offchip_bw, cdiv(res.l2_size["output"], compute))
                offchip_bw = max(offchip_bw, cdiv(res.l2_size["input"] + res.l2_size["filter"], compute))
                offchip_bw = cdiv(offchip_bw, 2)
                res.offchip_bw = offchip_bw
                res.cases.append(
                    CaseRecord(case.label(), occ, False, per_tensor, egress, macs, ingress_delay, egress_delay, compute, delay)
                )
            res.runtime += occ * delay
            res.macs += occ * macs
            units = sum(r.avg_active_clusters * n for r, n in subs)
            res.avg_active_clusters += (units if units != 0 else active) * occ
            divisor = compute if compute != 0 else 1
            res.peak_bw = max(res.peak_bw, cdiv(max(ingress, egress), divisor))
            avg_bw += cdiv(occ * max(ingress, egress), divisor)
            for name, value in (("ingress", ingress_delay), ("egress", egress_delay), ("compute", divisor)):
                delays_sum[name] += occ * value
                delays_min[name] = min(delays_min.get(name, value), value)
                delays_max[name] = max(delays_max.get(name, value), value)
            total_occurrences += occ
            analysed += 1
        if total_occurrences:
            res.avg_bw = avg_bw / total_occurrences
            res.avg_active_clusters /= total_occurrences
            res.delay_avg = {k: v // total_occurrences for k, v in delays_sum.items()}
            res.delay_min, res.delay_max = delays_min, delays_max
        else:
            # No case ran: MAESTRO divides 0 by 0 and casts its untouched extremes to long.
            res.avg_bw = math.nan
            res.delay_min = dict.fromkeys(delays_sum, LONG_MIN)
            res.delay_max = dict.fromkeys(delays_sum, 0)
            res.delay_avg = dict.fromkeys(delays_sum, LONG_MIN)
        return res


CRASH = _Crash
