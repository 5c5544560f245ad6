"""The closed-form cost model: cycles, accesses and energy of one layer from its iteration cases.

Per iteration case (the demand table of :mod:`accelsim.mapping.demand`, the same counts the
simulator reads step by step; L2 tiles from :mod:`accelsim.mapping.tiles`) the model knows the words entering
the PEs (ingress delay: words over the distribution bandwidth), the output words leaving them
(egress delay: drained words over the reduction bandwidth), the compute delay
``ceil(busiest PE's MACs / MACs per cycle)`` and, per L2 tile case, the DRAM words and their
time. Accesses and energy are the cases' counts times their occurrences; cycles come from the
max-plus recurrence of :mod:`accelsim.analytical.pipeline` (double buffering overlaps each
step's ingress with the previous step's computation and drain, and each tile's fetch with the
previous tile's steps).

``maestro`` mode takes MAESTRO's assumptions (the simulator's ``--mode maestro``): multicast,
one packed transfer per step, no latencies, double buffering, DRAM at bandwidth only.
``realistic`` mode keeps the hardware's multicast and buffering, charges packets one by one
(packed on systolic links and reduction networks), caps the networks by L2's bandwidths, adds
the network, MAC pipeline and DRAM latencies and lets outputs share the distribution network
where there is no reduction network and charges DRAM transfers by their contiguous runs; it
leaves out the reduction network's depth, so it is an estimate, not the simulator's number.

``systolic_fold`` (the simulator's option of the same name, set for SCALE-Sim's inputs) adds
``fill_drain_cycles`` to the compute delay of every case whose steps start a fold: they load new
words of the stationary operand, or, output-stationary, drain.
"""

from __future__ import annotations

import time
from typing import cast

import numpy as np

from accelsim.analytical.pipeline import Pipeline, StepDelays, Timing
from accelsim.bounds import fill_bounds
from accelsim.hw.noc import DISTRIBUTION_KINDS, REDUCTION_KINDS, port_block_pes
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.demand import DemandTable, ProfileOptions, ScheduleProfile
from accelsim.mapping.geometry import Cases, enumerate_cases
from accelsim.mapping.tiles import TileTable
from accelsim.model_options import Mode, SystolicFold, check_mode
from accelsim.results import TENSORS, LayerResult, TensorAccesses
from accelsim.workload.operators import OPERAND_ROLES


def _ceil_div(words: np.ndarray, per_cycle: float) -> np.ndarray:
    return np.ceil(words / per_cycle).astype(np.int64)


class _Rates:
    """Bandwidths (words/cycle), latencies (cycles) and buffering the model charges in one mode."""

    def __init__(self, hw: HardwareSpec, mode: Mode):
        noc, red = hw.distribution_noc, hw.reduction_noc
        dist_kind, red_kind = DISTRIBUTION_KINDS[noc.kind], REDUCTION_KINDS[red.kind]
        self.maestro = mode == "maestro"
        self.red_kind = red_kind
        self.reduction_hop_latency = red.latency_cycles_per_hop
        self.multicast = self.maestro or noc.multicast or dist_kind.always_multicast
        self.ingress = noc.bandwidth_words_per_cycle
        self.egress = red.bandwidth_words_per_cycle if red_kind.exists else self.ingress
        self.double_l1 = self.maestro or hw.l1.double_buffered
        self.double_l2 = self.maestro or hw.l2.double_buffered
        # root ports (realistic mode): each feeds a fixed block of PEs at its share of the width
        self.ports = 1 if self.maestro else dist_kind.ports(hw.num_pes, noc.bandwidth_words_per_cycle)
        self.port_block_pes = port_block_pes(hw.num_pes, self.ports)
        self.port_bandwidth = noc.bandwidth_words_per_cycle / self.ports
        self.shared_network = False
        self.ingress_latency = self.drain_delay = self.dram_latency = self.register_stages = 0
        if not self.maestro:
            self.ingress = min(self.ingress, hw.l2.read_bandwidth_words_per_cycle)
            self.egress = min(self.egress, hw.l2.write_bandwidth_words_per_cycle)
            self.shared_network = not red_kind.exists
            self.ingress_latency = noc.latency_cycles * dist_kind.hops(hw.pe_array.rows, hw.pe_array.cols)
            # each hop's register holds one step's operands (systolic): steps in flight
            self.register_stages = self.ingress_latency if dist_kind.registers_steps else 0
            self.drain_delay = hw.pe_array.mac_pipeline_latency_cycles - 1
            self.dram_latency = hw.dram.latency_cycles if hw.dram.model == "simple" else 0

    def landing(self, group_pes: np.ndarray) -> list[int]:
        """Cycles for the partial sums of reduction groups of ``group_pes`` PEs to meet on the
        way to L2 (hops times the per-hop latency; none in maestro mode)."""
        if self.maestro:
            return []
        hops = [self.red_kind.hops(int(g)) if g > 1 else 0 for g in group_pes]
        return [h * self.reduction_hop_latency for h in hops]

    def dram_cycles(self, words: np.ndarray, runs: np.ndarray, hw: HardwareSpec) -> np.ndarray:
        """Channel cycles of one transfer per entry of ``runs`` contiguous pieces: bytes over
        bandwidth (maestro); realistic mode: every piece rounded up to whole bursts
        (``simple``), or the DMA engine's setup per piece plus its cost per byte."""
        nbytes = words * hw.word_size_bytes
        dram = hw.dram
        runs = np.maximum(runs, 1)
        if self.maestro:
            cycles = np.ceil(nbytes / dram.bandwidth_bytes_per_cycle)
        elif dram.model == "dmazerunner":
            dma = runs * dram.setup_dma_cycles + dram.dma_cycles_per_byte * nbytes
            cycles = np.ceil(dma * hw.clock_mhz / (dram.dma_clock_mhz or hw.clock_mhz))
        else:
            bursts = runs * np.ceil(np.ceil(nbytes / runs) / dram.burst_bytes)
            cycles = np.ceil(bursts * dram.burst_bytes / dram.bandwidth_bytes_per_cycle)
        return np.where(words > 0, cycles, 0).astype(np.int64)


def analyze_layer(cm: CompiledMapping, hw: HardwareSpec, mode: str = "maestro",
                  systolic_fold: SystolicFold | None = None) -> LayerResult:
    """Estimate one compiled layer on ``hw`` in closed form; same schema as the simulator's
    :class:`LayerResult`, with ``model="analytical"`` and ``events=0``. ``systolic_fold``:
    SCALE-Sim's fill/drain per fold (see the module docstring), None for none."""
    wall0 = time.perf_counter()
    rates = _Rates(hw, check_mode(mode))
    l2_words = hw.l2.size_bytes // hw.word_size_bytes // (2 if rates.double_l2 else 1)
    profile = ScheduleProfile(cm, ProfileOptions(rates.multicast, rates.ingress, rates.egress, ports=rates.ports,
                                                 port_block_pes=rates.port_block_pes,
                                                 port_bandwidth_words_per_cycle=rates.port_bandwidth), l2_words)
    cases = enumerate_cases(profile.loop_classes)
    steps = profile.table(cases.klass)
    tiles = profile.tiles.table()
    acc = _accesses(cases, steps, tiles)
    cycles, busy, stall = _cycles(hw, rates, profile, cases, steps, tiles, systolic_fold)
    count = cases.count
    n = len(steps)
    macs = int((count * steps.macs).sum())
    readback = int((count * steps.readback.total(n)).sum())
    sent = sum(acc[t].l2_read for t in OPERAND_ROLES) + readback
    delivered = sum(acc[t].l1_write for t in OPERAND_ROLES) + readback
    egress = int((count * steps.drain_pe_words).sum())
    energy = _energy(hw, macs, acc, delivered + egress)
    mpc = hw.pe_array.macs_per_pe_per_cycle
    result = LayerResult(
        layer=cm.layer.name,
        op=cm.layer.op.value,
        hw=hw.name,
        mode=mode,
        cycles=cycles,
        macs=macs,
        num_pes=hw.num_pes,
        used_pes=cm.used_pes,
        pe_utilization=macs / (hw.num_pes * mpc * cycles) if cycles else 0.0,
        compute_busy_cycles=busy,
        stall_cycles=stall,
        energy_pj=sum(energy.values()),
        energy_breakdown_pj=energy,
        accesses=acc,
        noc_words=sent,
        noc_delivered_words=delivered,
        multicast_factor=delivered / sent if sent else 1.0,
        egress_words=egress,
        l1_required_bytes=int(steps.peak_pe_words.max(initial=0)) * hw.word_size_bytes * (2 if rates.double_l1 else 1),
        l2_required_bytes=profile.tiles.l2_required_words * hw.word_size_bytes * (2 if rates.double_l2 else 1),
        l1_size_bytes=hw.l1.size_bytes,
        l2_size_bytes=hw.l2.size_bytes,
        steps=int(count.sum()),
        events=0,
        model="analytical",
    )
    fill_bounds(result, hw)
    result.wall_seconds = time.perf_counter() - wall0
    return result


def _accesses(cases: Cases, steps: DemandTable, tiles: TileTable) -> dict[str, TensorAccesses]:
    """Per-tensor reads and writes (words): operands are read from L2 once per transfer,
    written into L1 once per delivered word and read from L1 once per MAC; outputs are
    accumulated in L1 (a read and a write per MAC), drained (L1 read, L2 write after
    reduction), read back as partial sums and moved between L2 and DRAM per L2 tile."""
    n, k = cases.count, len(steps)
    macs = int((n * steps.macs).sum())
    acc = {t: TensorAccesses() for t in TENSORS}
    for role in OPERAND_ROLES:
        acc[role].l2_read = int((n * steps.sent[role].total(k)).sum())
        acc[role].l1_write = int((n * steps.delivered_words[role]).sum())
        acc[role].l1_read = macs
    readback = int((n * steps.readback.total(k)).sum())
    out = acc["output"]
    out.l1_read = macs + int((n * steps.drain_pe_words).sum())
    out.l1_write = macs + readback
    out.l2_write = int((n * steps.drained.total(k)).sum())
    out.l2_read = readback
    m = tiles.cases.count
    for role in TENSORS:
        fetched = int((m * tiles.read_words[role]).sum())
        acc[role].dram_read += fetched
        acc[role].l2_write += fetched
    written = int((m * tiles.write_words).sum())
    out.dram_write += written
    out.l2_read += written
    return acc


def _fold_cycles(steps: DemandTable, fold: SystolicFold | None) -> np.ndarray:
    """Fill/drain cycles per case: ``fill_drain_cycles`` where the case's steps are fold
    boundaries (they send new words of the stationary operand; output-stationary: they drain),
    else 0."""
    if fold is None:
        return np.zeros(len(steps), dtype=np.int64)
    boundary = steps.drains if fold.stationary == "output" else steps.sent[fold.stationary].total(len(steps)) > 0
    return np.where(boundary, fold.fill_drain_cycles, 0).astype(np.int64)


def _cycles(hw: HardwareSpec, rates: _Rates, profile: ScheduleProfile, cases: Cases, steps: DemandTable,
            tiles: TileTable, fold: SystolicFold | None) -> tuple[int, int, dict[str, int]]:
    """(cycles, compute-busy cycles, stall cycles by cause) from the per-case delays."""
    n = len(steps)
    # a step's words share the network's width; with root ports, also the busiest port's
    ingress = _ceil_div(steps.sent["input"].total(n) + steps.sent["weight"].total(n) + steps.readback.total(n),
                        rates.ingress)
    if rates.ports > 1:
        ingress = np.maximum(ingress, _ceil_div(steps.busiest_port_words, rates.port_bandwidth))
    egress = _ceil_div(steps.drained.total(n), rates.egress)
    compute = _ceil_div(steps.max_pe_macs, hw.pe_array.macs_per_pe_per_cycle) + _fold_cycles(steps, fold)
    egress = np.where(steps.drains, egress, 0)
    dram_in = rates.dram_cycles(cast(np.ndarray, sum(tiles.read_words[t] for t in TENSORS)), tiles.read_runs, hw)
    dram_out = rates.dram_cycles(tiles.write_words, tiles.write_runs, hw)
    pipeline = Pipeline(StepDelays(ingress.tolist(), compute.tolist(), egress.tolist(), steps.drains.tolist(),
                                   steps.readback_source_steps.tolist(), rates.landing(steps.drained.max_members(n)),
                                   _barrier(hw, rates, profile, steps)),
                        dram_in.tolist(), dram_out.tolist(), tiles.partial_sums_source.tolist(), Timing(
                            2 if rates.double_l1 else 1, 2 if rates.double_l2 else 1, rates.ingress_latency,
                            rates.drain_delay, rates.dram_latency, rates.shared_network, rates.register_stages))
    case_of = {tuple(row): i for i, row in enumerate(cases.klass.tolist())}
    tile_of = {tuple(row): i for i, row in enumerate(tiles.cases.klass.tolist())}
    cycles = pipeline.run(profile.loop_classes, case_of, profile.tiles.tile_loops, tile_of)
    return cycles, pipeline.s.busy, pipeline.stalls(cycles)


def _barrier(hw: HardwareSpec, rates: _Rates, profile: ScheduleProfile, steps: DemandTable) -> list[bool]:
    """Per case, whether the controller's tile barrier holds its steps (``hw.controller``;
    none in maestro mode): the first step of an output tile, or a step loading weights."""
    policy = "none" if rates.maestro else hw.controller.tile_barrier
    if policy == "none":
        return []
    if policy == "output_tile":
        return (steps.steps % profile.run_steps == 0).tolist()
    return (steps.sent["weight"].total(len(steps)) > 0).tolist()


def _energy(hw: HardwareSpec, macs: int, acc: dict[str, TensorAccesses], noc_words: int) -> dict[str, float]:
    """Energy (pJ): MACs, accesses at each level, and words moved into or out of the PEs."""
    return {
        "mac": macs * hw.energy.mac_pj,
        "l1": sum(a.l1_read + a.l1_write for a in acc.values()) * hw.l1_energy_pj,
        "l2": sum(a.l2_read + a.l2_write for a in acc.values()) * hw.l2_energy_pj,
        "dram": sum(a.dram_read + a.dram_write for a in acc.values()) * hw.energy.dram_access_pj,
        "noc": noc_words * hw.energy.noc_hop_pj,
    }
