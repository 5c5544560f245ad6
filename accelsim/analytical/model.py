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
``realistic`` mode keeps the hardware's multicast and buffering, charges a step's words over
the network's width and at least its busiest root port's words over the port's width (see
:mod:`accelsim.rates`), caps the networks by L2's bandwidths, adds the network, MAC pipeline,
reduction-depth and DRAM latencies (hop registers holding steps in flight), holds steps at the
controller's tile barrier, lets outputs share the distribution network where there is no
reduction network and charges DRAM transfers by their contiguous runs. It leaves out only the
order in which outputs and operands interleave on a shared network.

``systolic_fold`` (the simulator's option of the same name, set for SCALE-Sim's inputs) adds
``fill_drain_cycles`` to the compute delay of every case whose steps start a fold: they load new
words of the stationary operand, or, output-stationary, drain.
"""

from __future__ import annotations

import time
from typing import cast

import numpy as np

from accelsim.analytical.pipeline import Pipeline, StepDelays, Timing
from accelsim.hw.dram import transfer_cycles
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.demand import DemandTable, ProfileOptions, ScheduleProfile, compute_cycles
from accelsim.mapping.geometry import Cases, enumerate_cases
from accelsim.mapping.tiles import TileTable
from accelsim.model_options import SystolicFold, check_mode
from accelsim.rates import Rates, effective_rates, idealized
from accelsim.tally import LayerCounts, layer_result
from accelsim.results import TENSORS, LayerResult, TensorAccesses
from accelsim.workload.operators import OPERAND_ROLES


def _ceil_div(words: np.ndarray, per_cycle: float) -> np.ndarray:
    return np.ceil(words / per_cycle).astype(np.int64)


def analyze_layer(cm: CompiledMapping, hw: HardwareSpec, mode: str = "maestro",
                  systolic_fold: SystolicFold | None = None) -> LayerResult:
    """Estimate one compiled layer on ``hw`` in closed form; same schema as the simulator's
    :class:`LayerResult`, with ``model="analytical"`` and ``events=0``. ``systolic_fold``:
    SCALE-Sim's fill/drain per fold (see the module docstring), None for none."""
    wall0 = time.perf_counter()
    rates = effective_rates(hw, idealized(check_mode(mode)))
    l2_words = hw.l2.size_bytes // hw.word_size_bytes // rates.l2_buffers
    profile = ScheduleProfile(cm, ProfileOptions(rates.multicast, rates.ingress_words_per_cycle,
                                                 rates.egress_words_per_cycle, ports=rates.ports,
                                                 port_block_pes=rates.port_block_pes,
                                                 port_bandwidth_words_per_cycle=rates.port_words_per_cycle,
                                                 reused_operands=rates.reused_operands,
                                                 write_ports=rates.write_ports, write_bus=rates.write_bus,
                                                 fill_used=rates.used_fill_hop_cycles > 0,
                                                 pad_ragged=rates.pads_ragged_tiles,
                                                 array_rows=hw.pe_array.rows,
                                                 array_cols=hw.pe_array.cols, wavefront=rates.write_wavefront,
                                                 forwarding=rates.neighbour_forwarding,
                                                 l2_bypass=hw.l2.bypassed),
                            l2_words)
    cases = enumerate_cases(profile.loop_classes)
    steps = profile.table(cases.klass)
    tiles = profile.tiles.table()
    acc = _accesses(cases, steps, tiles, hw.l2.bypassed)
    cycles, busy, stall = _cycles(hw, rates, profile, cases, steps, tiles, systolic_fold)
    count = cases.count
    n = len(steps)
    readback = int((count * steps.readback.total(n)).sum())
    forwarded = int((count * steps.forwarded).sum())
    counts = LayerCounts(
        cycles=cycles, compute_busy_cycles=busy, stall_cycles=stall, macs=int((count * steps.macs).sum()),
        accesses=acc, noc_words=sum(int((count * steps.sent[t].total(n)).sum()) for t in OPERAND_ROLES) + readback,
        noc_delivered_words=sum(acc[t].l1_write for t in OPERAND_ROLES) + readback - forwarded,
        egress_words=int((count * steps.drain_pe_words).sum()), steps=int(count.sum()), forwarded_words=forwarded,
        l1_required_words=int(steps.peak_pe_words.max(initial=0)),
        l2_required_words=profile.tiles.l2_required_words)
    return layer_result(cm, hw, mode, rates, counts, model="analytical", events=0,
                        wall_seconds=time.perf_counter() - wall0)


def dram_channel_cycles(cm: CompiledMapping, hw: HardwareSpec, mode: str = "realistic") -> int:
    """Cycles the layer's DMA transfers hold the DRAM channel, summed over its L2 tiles (every
    transfer's bursts over the bandwidth in realistic mode; on a channel of 1 byte per cycle,
    the bytes it occupies the channel for)."""
    rates = effective_rates(hw, idealized(check_mode(mode)))
    l2_words = hw.l2.size_bytes // hw.word_size_bytes // rates.l2_buffers
    tiles = ScheduleProfile(cm, ProfileOptions(rates.multicast, rates.ingress_words_per_cycle,
                                               rates.egress_words_per_cycle, l2_bypass=hw.l2.bypassed),
                            l2_words).tiles.table()
    dram_in = _dram_cycles(hw, rates, cast(np.ndarray, sum(tiles.read_words[t] for t in TENSORS)), tiles.read_runs)
    dram_out = _dram_cycles(hw, rates, tiles.write_words, tiles.write_runs)
    return int((tiles.cases.count * (dram_in + dram_out)).sum())


def _accesses(cases: Cases, steps: DemandTable, tiles: TileTable, bypass: frozenset[str]) -> dict[str, TensorAccesses]:
    """Per-tensor reads and writes (words): operands are read from L2 once per transfer,
    written into L1 once per delivered word and read from L1 once per MAC; outputs are
    accumulated in L1 (a read and a write per MAC), drained (L1 read, L2 write after
    reduction), read back as partial sums and moved between L2 and DRAM per L2 tile. An
    operand in ``bypass`` (L2 does not keep it) is never read from or written to L2: its
    transfers are DRAM reads, in the tiles' reads."""
    n, k = cases.count, len(steps)
    macs = int((n * steps.macs).sum())
    acc = {t: TensorAccesses() for t in TENSORS}
    for role in OPERAND_ROLES:
        acc[role].l2_read = 0 if role in bypass else int((n * steps.sent[role].total(k)).sum())
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
        if role not in bypass:
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


def _cycles(hw: HardwareSpec, rates: Rates, profile: ScheduleProfile, cases: Cases, steps: DemandTable,
            tiles: TileTable, fold: SystolicFold | None) -> tuple[int, int, dict[str, int]]:
    """(cycles, compute-busy cycles, stall cycles by cause) from the per-case delays."""
    n = len(steps)
    # a step's words share the network's width; with root ports, also the busiest port's
    ingress = _ceil_div(steps.sent["input"].total(n) + steps.sent["weight"].total(n) + steps.readback.total(n),
                        rates.ingress_words_per_cycle)
    if rates.ports > 1:
        ingress = np.maximum(ingress, _ceil_div(steps.busiest_port_words, rates.port_words_per_cycle))
    egress = steps.egress_cycles(rates.egress_words_per_cycle)  # a shared width, or fixed write ports
    compute = compute_cycles(steps.max_pe_macs, hw.pe_array.macs_per_pe_per_cycle, ingress,
                             rates.multiply_on_arrival) + _fold_cycles(steps, fold)
    egress = np.where(steps.drains, egress, 0)
    dram_in = _dram_cycles(hw, rates, cast(np.ndarray, sum(tiles.read_words[t] for t in TENSORS)), tiles.read_runs)
    dram_out = _dram_cycles(hw, rates, tiles.write_words, tiles.write_runs)
    members = steps.drained.max_members(n)
    reduction = {g: rates.reduction_latency_cycles(g) for g in np.unique(members).tolist()}
    pipeline = Pipeline(StepDelays(ingress.tolist(), compute.tolist(), egress.tolist(), steps.drains.tolist(),
                                   steps.readback_source_steps.tolist(), [reduction[g] + q for g, q in
                                    zip(members.tolist(), steps.drain_queue_cycles.tolist())],
                                   _barrier(rates, profile, steps),
                                   [rates.ingress_latency_of(int(r), int(c)) for r, c in
                                    zip(steps.used_rows, steps.used_cols)] if rates.used_fill_hop_cycles else []),
                        dram_in.tolist(), dram_out.tolist(), tiles.partial_sums_source.tolist(), Timing(
                            rates.l1_buffers, rates.l2_buffers, rates.ingress_latency_cycles,
                            rates.drain_delay_cycles, rates.dram_latency_cycles, rates.shared_egress,
                            rates.register_stages,
                            profile.tiles.prefetch_space_words(rates.l2_prefetch_words)),
                        tiles.footprint_words.tolist(), tiles.kept_words.tolist())
    case_of = dict(zip(map(tuple, cases.klass.tolist()), range(n)))
    tile_of = dict(zip(map(tuple, tiles.cases.klass.tolist()), range(len(tiles.cases.klass))))
    cycles = pipeline.run(profile.loop_classes, case_of, profile.tiles.tile_loops, tile_of)
    return cycles, pipeline.s.busy, pipeline.stalls(cycles)


def _barrier(rates: Rates, profile: ScheduleProfile, steps: DemandTable) -> list[bool]:
    """Per case, whether the controller's tile barrier holds its steps (``hw.controller``;
    none where idealized, as in maestro mode): the first step of an output tile, or a step
    loading weights."""
    if rates.tile_barrier == "none":
        return []
    if rates.tile_barrier == "output_tile":
        return (steps.steps % profile.run_steps == 0).tolist()
    return (steps.sent["weight"].total(len(steps)) > 0).tolist()


def _dram_cycles(hw: HardwareSpec, rates: Rates, words: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Channel cycles of one transfer per entry (the DRAM kind's, or bytes over bandwidth)."""
    return transfer_cycles(hw.dram, hw.word_size_bytes, hw.clock_mhz, words, runs, rates.ideal_dram)
