"""Test-only reference: the engine as it was before issue 9 (frozen copy).

The SimPy engine: executes a compiled tile schedule on a hardware model.

Five processes cooperate through SimPy stores and containers:

- ``dma_in`` fetches every L2 tile from DRAM into a free L2 buffer (two when double-buffered),
  partial sums spilled to DRAM only once their write-back has ended;
- ``distribute`` sends each step's new operand words and partial-sum read-backs from L2 to the
  PE L1s over the distribution network, once a free L1 buffer exists and, for a read-back,
  once the drain of the tile's previous visit has landed in L2 (:class:`Milestones`);
- ``compute`` runs the step on the PE array once its operands have arrived;
- ``drain`` reduces finished (or spilled) output tiles over the reduction network and writes
  them to L2;
- ``dma_out`` writes output tiles from L2 back to DRAM.

A network or the DRAM channel is a ``simpy.Resource`` held for the serialization time of a
packet (``ceil(words / bandwidth)``); latency is added to the arrival, not to the occupancy, so
packets pipeline. The PEs of a step compute as one lock-step group and the packets of one
tensor in one step go as one burst of the same total serialization. ``per_pe`` execution adds
one SimPy process per PE and per step's packets, fed from the per-PE and per-packet lists of
the profile (a separate code path from its sums), and checks at every step that each PE ends
with its group and the packets with their burst.

Every timed activity goes through :meth:`LayerSimulation._record`, which an optional event sink
receives as ``(component, kind, start_cycle, end_cycle, step, tensor, words, pes)``: the hook for
execution traces and functional execution. A sink also hears the array's stall spans (component
``pe_array``, kind ``stall_<cause>``; not counted as events) and, if it has a ``level`` method,
every change of the number of L2, L1 operand and L1 output buffers in use (see
:mod:`accelsim.trace`). Stall spans are exact for unrolled runs (``fast_forward=False``).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from dataclasses import dataclass
from math import ceil, floor, log2
from typing import Protocol

import simpy

from accelsim.bounds import fill_bounds
from accelsim.errors import MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping
from accelsim.sim.dram import dma_cycles
from .profile_v1 import ProfileOptions, ScheduleProfile, StepDemand, TileDemand
from accelsim.model_options import Mode, SystolicFold
from accelsim.results import STALL_CAUSES, TENSORS, LayerResult, TensorAccesses

MIN_BLOCK_STEPS = 4  # fewest identical steps worth executing as one steady-state block
# The realistic effects that mode "maestro" replaces by MAESTRO's ideal all at once;
# ``SimOptions.ideal`` replaces single ones (ablation: accelsim.compare.attribution).
IDEAL_EFFECTS = (
    "multicast",  # every network multicasts
    "l2_ports",  # NoC bandwidths not capped by L2's read/write bandwidth
    "packed_ingress",  # one step's operands as one transfer: ceil(all words / bandwidth)
    "shared_egress",  # outputs never compete with operands on the distribution network
    "ingress_latency",  # no distribution-network latency
    "reduction_latency",  # no reduction-network hop latency
    "mac_pipeline",  # no MAC pipeline depth
    "double_buffering",  # L1 and L2 double-buffered whatever the hardware says
    "dram",  # DRAM at bandwidth only: no latency, bursts or DMA setup
)


class ValueHooks(Protocol):
    """Functional execution (:class:`accelsim.functional.datapath.DatapathValues`): called
    when each transfer happens, with the step (or L2 tile) and how many identical steps it
    stands for; it moves values and never changes timing."""

    def start(self, profile: ScheduleProfile) -> None: ...
    def tile_loaded(self, tile: int) -> None: ...
    def delivered(self, step: int, count: int, demand: StepDemand) -> None: ...
    def computed(self, step: int, count: int) -> None: ...
    def drained(self, step: int, count: int, demand: StepDemand) -> None: ...
    def written_back(self, tile: int) -> None: ...


class ProgressHook(Protocol):
    """Told how many of the layer's steps have been computed, after every step or block of
    steps (fast-forward and warps advance it by many at once)."""

    def __call__(self, steps_done: int, steps_total: int) -> None: ...


class EventSink(Protocol):
    """Receives every timed activity of the engine."""

    def __call__(self, component: str, kind: str, start: int, end: int, step: int,
                 tensor: str, words: int, pes: int) -> None: ...


@dataclass(frozen=True)
class SimOptions:
    """How to simulate: fidelity ``mode``; ``per_pe`` (one event per PE and packet, the
    unrolled reference); ``fast_forward`` (identical steps in a proven steady state run as one
    block: same cycles and counts, fewer events)."""

    mode: Mode = "realistic"
    per_pe: bool = False
    fast_forward: bool = True  # execute proven steady-state repeats as one block
    # False (--unchecked): skip check_reduction_support, to let functional execution show
    # what an illegal mapping computes
    check_legality: bool = True
    ideal: frozenset[str] = frozenset()  # IDEAL_EFFECTS idealized in realistic mode
    # SCALE-Sim's per-fold fill/drain of a systolic array (SystolicFold); None: off
    systolic_fold: SystolicFold | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.ideal) - set(IDEAL_EFFECTS))
        if unknown:
            raise ValueError(f"unknown ideal effects {unknown}; known: {', '.join(IDEAL_EFFECTS)}")

    @property
    def idealized(self) -> frozenset[str]:
        """The effects replaced by MAESTRO's ideal: all of them in mode ``maestro``, else ``ideal``."""
        return frozenset(IDEAL_EFFECTS) if self.mode == "maestro" else self.ideal


class Milestones:
    """When numbered results are in place: the partial sums drained at a step (in L2), or an
    L2 tile's write-back (in DRAM). A process that needs one waits until it is announced and
    then until its cycle.

    Partial sums are promised (by ``compute``, in step order) before they are announced (by
    ``drain``, once their landing cycle is known); ``reach(n)`` says every result below ``n``
    that will exist has been promised, so a wait for one that was not returns at once. A
    fast-forwarded block of ``count`` identical steps is promised and announced at once: result
    ``key + i`` is in place at ``cycle + i * period``."""

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.at: dict[int, float] = {}  # single results announced and not yet waited for
        self.block_keys: list[int] = []
        self.blocks: list[tuple[int, float, float]] = []  # (count, cycle, period) per block
        self.promised: set[int] = set()  # single results promised, not yet announced
        self.promised_blocks: list[tuple[int, int]] = []  # (first key, count)
        self.reached = 0
        self.news = env.event()

    def promise(self, key: int, count: int = 1) -> None:
        if count == 1:
            self.promised.add(key)
        else:
            self.promised_blocks.append((key, count))

    def reach(self, key: int) -> None:
        self.reached = key
        self._tell()

    def announce(self, key: int, cycle: float, count: int = 1, period: float = 0) -> None:
        if count == 1:
            self.promised.discard(key)
            self.at[key] = cycle
        else:
            self.block_keys.append(key)
            self.blocks.append((count, cycle, period))
        self._tell()

    def _tell(self) -> None:
        if self.news.callbacks:  # someone waits
            self.news.succeed()
            self.news = self.env.event()

    def _cycle(self, key: int) -> float | None:
        if key in self.at:
            return self.at.pop(key)  # each result has one consumer
        i = bisect_right(self.block_keys, key) - 1
        if i >= 0 and key < self.block_keys[i] + self.blocks[i][0]:
            count, cycle, period = self.blocks[i]
            return cycle + (key - self.block_keys[i]) * period
        return None

    def _promised(self, key: int) -> bool:
        if key in self.promised:
            return True
        i = bisect_right(self.promised_blocks, (key, float("inf"))) - 1
        return i >= 0 and key < self.promised_blocks[i][0] + self.promised_blocks[i][1]

    def wait(self, key: int):
        """Process: wait until result ``key`` is in place; its value: whether it exists."""
        while (cycle := self._cycle(key)) is None:
            if key < self.reached and not self._promised(key):
                return False
            yield self.news
        if cycle > self.env.now:
            yield self.env.timeout(cycle - self.env.now)
        return True


def check_reduction_support(cm: CompiledMapping, hw: HardwareSpec) -> None:
    """A mapping that reduces partial sums across PEs needs a reduction network."""
    if hw.reduction_noc.kind != "none":
        return
    red = set(cm.nest.reduction_dims)
    for level in cm.levels:
        for ld in level.spatial:
            if ld.dim in red and ld.offset > 0 and ld.windows > 1 and level.units > 1:
                raise MappingError(
                    f"{ld.written} spreads the reduction dimension {ld.dim} across PEs, but the "
                    "hardware has no reduction network (reduction_noc.kind: none); partial sums "
                    "of one output would never meet",
                    source=cm.source, line=ld.line,
                )


class LayerSimulation:
    """Simulate one compiled layer on one hardware spec."""

    def __init__(self, cm: CompiledMapping, hw: HardwareSpec, options: SimOptions = SimOptions(),
                 sink: EventSink | None = None, values: ValueHooks | None = None,
                 progress: ProgressHook | None = None):
        self.cm = cm
        self.progress = progress  # told (steps done, steps in all) as steps complete
        self.hw = hw
        self.options = options
        self.sink = sink
        self.values = values  # functional execution: values ride on the transfers
        self.ideal = options.idealized
        noc = hw.distribution_noc
        red = hw.reduction_noc
        ingress_bw = noc.bandwidth_words_per_cycle
        egress_bw = red.bandwidth_words_per_cycle if red.kind != "none" else ingress_bw
        if "l2_ports" not in self.ideal:
            ingress_bw = min(ingress_bw, hw.l2.read_bandwidth_words_per_cycle)
            egress_bw = min(egress_bw, hw.l2.write_bandwidth_words_per_cycle)
        self.ingress_bw = ingress_bw
        self.egress_bw = egress_bw
        # (issue 17) a tree has one root port per word of width (one per PE at most)
        ports = 1 if noc.kind != "tree" or "packed_ingress" in self.ideal else \
            max(1, min(hw.num_pes, floor(noc.bandwidth_words_per_cycle)))
        self.profile_options = ProfileOptions(
            multicast=True if "multicast" in self.ideal else (noc.multicast or noc.kind == "systolic"),
            noc_bandwidth_words_per_cycle=ingress_bw,
            egress_bandwidth_words_per_cycle=egress_bw,
            detail=options.per_pe,
            ports=ports,
            port_block_pes=-(-hw.num_pes // ports),
            port_bandwidth_words_per_cycle=noc.bandwidth_words_per_cycle / ports,
        )
        self.events = 0

    # ------------------------------------------------------------------ timing rules
    def _ingress_latency(self) -> int:
        """Cycles from the last word leaving L2 until it is in the farthest L1."""
        if "ingress_latency" in self.ideal:
            return 0
        noc = self.hw.distribution_noc
        pes = self.hw.pe_array
        if noc.kind == "bus":
            return noc.latency_cycles
        if noc.kind == "tree":
            return noc.latency_cycles * max(1, ceil(log2(max(2, pes.count))))
        return noc.latency_cycles * (pes.rows + pes.cols - 1)  # systolic: hop by hop

    def _reduction_latency(self, group: int) -> int:
        """Cycles for partial sums of ``group`` PEs to meet (pipelined behind the words)."""
        if "reduction_latency" in self.ideal or group <= 1:
            return 0
        red = self.hw.reduction_noc
        if red.kind == "tree":
            return red.latency_cycles_per_hop * ceil(log2(group))
        return red.latency_cycles_per_hop * (group - 1)

    def _record(self, component: str, kind: str, start: float, end: float, step: int,
                tensor: str = "", words: int = 0, pes: int = 0) -> None:
        self.events += 1
        if self.sink is not None:
            self.sink(component, kind, int(start), int(end), step, tensor, words, pes)

    def _stall(self, cause: str, start: float, end: float, step: int) -> None:
        """Tell the sink the array waited from ``start`` to ``end`` for ``cause``."""
        if self.sink is not None and end > start:
            self.sink("pe_array", f"stall_{cause}", int(start), int(end), step, "", 0, 0)

    def _slots(self, name: str, capacity: int) -> simpy.Container:
        """A pool of ``capacity`` buffers; a sink with a ``level`` method hears its use."""
        level = getattr(self.sink, "level", None)
        if level is None:
            return simpy.Container(self.env, capacity=capacity, init=capacity)
        from accelsim.sim.slots import ObservedSlots

        return ObservedSlots(self.env, capacity, lambda in_use: level(name, int(self.env.now), in_use, capacity))

    # ------------------------------------------------------------------ run
    def run(self) -> LayerResult:
        wall0 = time.perf_counter()
        cm, hw = self.cm, self.hw
        if self.options.check_legality:
            check_reduction_support(cm, hw)
        env = simpy.Environment()
        self.env = env
        double_l1 = "double_buffering" in self.ideal or hw.l1.double_buffered
        double_l2 = "double_buffering" in self.ideal or hw.l2.double_buffered
        # MAESTRO assumes no contention: outputs do not compete with operands. A network used
        # by one process alone needs no arbitration (None).
        shared_egress = hw.reduction_noc.kind == "none" and "shared_egress" not in self.ideal
        self.noc = simpy.Resource(env, 1) if shared_egress else None
        self.egress = self.noc
        self.dram = simpy.Resource(env, 1)
        self.l2_buffers = 2 if double_l2 else 1
        self.l2_slots = self._slots("l2", self.l2_buffers)
        self.buffers = 2 if double_l1 else 1  # L1 operand buffers = L1 output buffers per PE
        self.ingress_latency = self._ingress_latency()
        self.pipeline = 0 if "mac_pipeline" in self.ideal else hw.pe_array.mac_pipeline_latency_cycles - 1
        # operand tiles in flight: L1's buffers, plus on systolic links one per pipeline stage
        # (each hop's register holds one step's data, so the latency does not throttle)
        # (issue 17: a tree's levels are pipelined too)
        self.operand_slots = self.buffers + (self.ingress_latency if hw.distribution_noc.kind in ("systolic", "tree")
                                             else 0)
        self.l1_slots = self._slots("l1_operand", self.operand_slots)
        self.out_slots = self._slots("l1_output", self.buffers)
        self.l2_ready = simpy.Store(env)
        self.ready = simpy.Store(env)
        self.drain_q = simpy.Store(env)
        self.wb_q = simpy.Store(env)
        # read-after-write: a partial-sum read-back waits for the drain of the previous visit
        # to land in L2 (by drain step); a DMA read of spilled outputs for their write-back
        self.partial_sums = Milestones(env)
        self.write_backs = Milestones(env)
        l2_words = hw.l2.size_bytes // hw.word_size_bytes // self.l2_buffers
        self.profile = ScheduleProfile(cm, self.profile_options, l2_words)
        self.tiles = self.profile.tiles
        if self.values is not None:
            self.values.start(self.profile)
        self.acc = {t: TensorAccesses() for t in TENSORS}
        self.stall = {c: 0 for c in STALL_CAUSES}
        self.busy = 0
        self.macs = 0
        self.noc_words = 0
        self.noc_dest = 0
        self.egress_words = 0
        self.last_compute_end = 0
        self.accounted_until = 0  # the array's cycles up to here are busy or attributed stalls
        self.last_drain_end = 0
        self.end_time = 0
        self.steps_done = 0
        # steady-state fast-forward (see _completed); needs outputs not to share the
        # operands' network, and per-PE execution is the unrolled reference
        self.fast_forward = self.options.fast_forward and not self.options.per_pe and not shared_egress
        self.ff_hint: tuple | None = None
        self.rec: dict[int, list[float]] = {}
        self.rec_stalls: dict[int, tuple] = {}
        self.recent: list[tuple] = []
        env.process(self._dma_in())
        env.process(self._distribute())
        env.process(self._compute())
        env.process(self._drain())
        env.process(self._dma_out())
        env.run()
        cycles = int(max(self.end_time, self.last_compute_end, self.last_drain_end))
        # time after the array's last attributed cycle (its last computation, or its wait for an
        # output buffer after it): the MAC pipeline empties (compute), outputs drain
        # (reduction) and are written back (dram)
        after = int(self.accounted_until)
        emptied = max(after, min(int(self.last_compute_end) + self.pipeline, int(self.last_drain_end)))
        drained = max(after, int(self.last_drain_end))
        for cause, start, end in (("compute", after, emptied), ("reduction", emptied, drained),
                                  ("dram", drained, max(drained, cycles))):
            self.stall[cause] += end - start
            self._stall(cause, start, end, self.steps_done)
        return self._result(cycles, time.perf_counter() - wall0)

    # ------------------------------------------------------------------ processes
    def _dma_in(self):
        env = self.env
        for index, tile in enumerate(self.tiles):
            yield self.l2_slots.get(1)
            source = tile.partial_sums_tile
            if source >= 0 and self.tiles[source].write_words:  # spilled partial sums: not
                yield from self.write_backs.wait(source)  # before their write-back has ended
            words = sum(tile.read_words.values())
            if words:
                runs = sum(tile.read_runs.values())
                busy, latency = dma_cycles(self.hw, words, runs, "dram" in self.ideal)
                with self.dram.request() as req:
                    yield req
                    start = env.now
                    if self.values is not None:
                        self.values.tile_loaded(index)
                    yield env.timeout(busy)
                    self._record("dram", "read", start, env.now + latency, index, "", words)
                for t, w in tile.read_words.items():
                    self.acc[t].dram_read += w
                    self.acc[t].l2_write += w
                if latency:
                    env.process(self._arrive(index, latency))
                    continue
            elif self.values is not None:
                self.values.tile_loaded(index)
            self.l2_ready.put((index, env.now))

    def _arrive(self, index: int, latency: int):
        yield self.env.timeout(latency)
        self.l2_ready.put((index, self.env.now))

    def _send(self, network: simpy.Resource | None, component: str, step: int,
              parts: list[tuple[str, int, int, tuple[int, ...]]], bandwidth: float, packed: bool):
        """Occupy a network for all ``parts`` (tensor, words, serial cycles, packets) of one
        step, back to back. ``network`` is None when one process owns it alone.

        Per-PE execution also sends the listed packets one by one in a process of their own,
        which must end exactly when the burst does (checked)."""
        env = self.env
        request = network.request() if network is not None else None
        if request is not None:
            yield request
        start = env.now
        total = sum(serial for _, _, serial, _ in parts)
        if any(packets for _, _, _, packets in parts):
            env.process(self._packets(component, step, parts, bandwidth, packed, start + total))
        yield env.timeout(total)
        for tensor, words, serial, _ in parts:
            self._record(component, "transfer", start, start + serial, step, tensor, words)
            start += serial
        if request is not None:
            network.release(request)

    def _packets(self, component: str, step: int, parts, bandwidth: float, packed: bool, end: float):
        """The packets of one step, one event each: packed packets share the width, so packet i
        of a tensor ends at ceil(words sent so far / bandwidth)."""
        env = self.env
        for tensor, _words, serial, packets in parts:
            began, sent = env.now, 0
            for w in packets:
                start = env.now
                sent += w
                finish = began + ceil(sent / bandwidth) if packed else start + ceil(w / bandwidth)
                yield env.timeout(finish - env.now)
                self._record(component, "packet", start, env.now, step, tensor, w)
            if env.now != began + serial:
                raise AssertionError(f"step {step}: {tensor} packets end at {env.now}, burst at {began + serial}")
        if env.now != end:
            raise AssertionError(f"step {step}: packets end at {env.now}, transfers at {end}")

    def _distribute(self):
        env = self.env
        latency = self.ingress_latency
        step = 0
        tile = -1
        l2_arrival = 0.0
        for run, (demand, repeat) in enumerate(self.profile.steps()):
            # (issue 17) the step's words share the network for its ingress cycles
            words = demand.input.words + demand.weight.words + demand.readback.words
            parts = [("", words, demand.ingress_cycles, ())] if words else []
            # a read-back waits for its own drain, which the steady-state proof does not cover
            eligible = self.fast_forward and not (demand.tile_first or demand.tile_last or demand.readback.words)
            done = 0
            while done < repeat:
                begin = env.now
                if demand.tile_first:
                    tile, l2_arrival = yield self.l2_ready.get()
                yield self.l1_slots.get(1)
                held_from = env.now
                if demand.readback.words:  # not before the previous visit's drain has landed
                    source = self.profile.visits.previous_end(step)
                    # a visit in which no PE worked drained nothing: the one before it did
                    while source >= 0 and not (yield from self.partial_sums.wait(source)):
                        source = self.profile.visits.previous_end(source)
                held = env.now - held_from  # cycles the step was held for its partial sums
                hint = self.ff_hint
                count = 1
                if eligible and hint is not None and hint[0] == run and repeat - done >= MIN_BLOCK_STEPS + self.operand_slots:
                    count = repeat - done
                slot_at = env.now
                if parts:
                    yield from self._send(self.noc, "distribution_noc", step, parts, self.ingress_bw,
                                          True)
                self._count_ingress(demand, count)
                if self.values is not None:
                    self.values.delivered(step, count, demand)
                if self.fast_forward and count == 1:
                    self.rec[step] = [begin, slot_at, env.now]
                self.ready.put((step, run, count, demand, env.now + latency, l2_arrival, held, tile))
                if count > 1:
                    # the remaining identical steps repeat the steady state, one period each;
                    # the other operand buffers are taken when the next steps would take them
                    put_at = env.now
                    for later in range(1, self.operand_slots):
                        # step k+1+later takes its buffer when the unrolled step would
                        yield env.timeout(max(0, put_at + (later - 1) * hint[1] - env.now))
                        yield self.l1_slots.get(1)
                    yield env.timeout(put_at + (count - 1) * hint[1] - env.now)
                if demand.tile_last:
                    self.l2_slots.put(1)
                step += count
                done += count

    def _count_ingress(self, d: StepDemand, n: int) -> None:
        """Count ``n`` steps' operand deliveries and MAC operand accesses."""
        for tensor, ts in (("input", d.input), ("weight", d.weight)):
            self.acc[tensor].l2_read += n * ts.words
            self.acc[tensor].l1_write += n * ts.dest_words
            self.acc[tensor].l1_read += n * d.macs
            self.noc_words += n * ts.words
            self.noc_dest += n * ts.dest_words
        out = self.acc["output"]
        out.l2_read += n * d.readback.words
        out.l1_write += n * (d.readback.dest_words + d.macs)
        out.l1_read += n * d.macs
        self.noc_words += n * d.readback.words
        self.noc_dest += n * d.readback.dest_words

    def _compute(self):
        env = self.env
        mpc = self.hw.pe_array.macs_per_pe_per_cycle
        pipeline = self.pipeline
        fold = self.options.systolic_fold
        total = self.cm.steps
        while self.steps_done < total:
            waited_from = env.now
            step, run, count, demand, arrival, l2_arrival, held, tile = yield self.ready.get()
            period = self.ff_hint[1] if count > 1 else 0  # steady-state cycles per step of a block
            start = max(env.now, arrival)
            waited = start - waited_from
            dram_part = min(waited, max(0.0, l2_arrival - waited_from))
            # holding the read-back for its partial sums delayed the arrival by up to ``held``
            # cycles: that part of the rest of the wait is the reduction's
            held_part = min(waited - dram_part, held)
            stalls = [int(dram_part), int(waited - dram_part - held_part), 0]  # dram, noc, reduction
            cycles = ceil(demand.max_pe_macs / mpc)
            if fold is not None:
                cycles += fold.overhead_cycles(demand.drain_groups > 0, {"input": demand.input.words,
                                                                          "weight": demand.weight.words})
            if self.options.per_pe:
                for pe, macs in enumerate(demand.pe_macs):
                    if macs:
                        env.process(self._pe(step, pe, macs, mpc, start, start + cycles))
            if start + cycles > env.now:
                yield env.timeout(start + cycles - env.now)
            if cycles:
                self._record("pe_array", "compute", start, env.now, step, "", demand.macs, demand.active_pes)
            if self.values is not None:
                self.values.computed(step, count)
            computed_at = env.now
            last_tile_step = demand.tile_last and self.tiles[tile].write_words > 0
            drains = bool(demand.drain_groups or last_tile_step)
            if count == 1:
                self.l1_slots.put(1)
            if drains:
                yield self.out_slots.get(1)
                stalls[2] = int(env.now - computed_at)
                self.drain_q.put((step, run, count, demand, env.now + pipeline,
                                  tile if last_tile_step else -1, period))
                if demand.drain_partial:
                    self.partial_sums.promise(step, count)
            self.partial_sums.reach(step + count)
            if count > 1:
                per_step_stalls = self.ff_hint[2]
                # steady state: step i of the block computes one period after step i-1; the
                # second output buffer is taken when the second step would take it, and the
                # buffers are freed when the last steps' computations end
                if drains and self.buffers == 2:
                    yield env.timeout(computed_at + period - env.now)
                    yield self.out_slots.get(1)
                last_end = computed_at + (count - 1) * period
                for release_at in range(self.operand_slots - 1, -1, -1):
                    yield env.timeout(last_end - release_at * period - env.now)
                    self.l1_slots.put(1)
                if per_step_stalls[2]:
                    yield env.timeout(per_step_stalls[2])
                stalls = [a + (count - 1) * b for a, b in zip(stalls, per_step_stalls)]
            elif self.fast_forward:
                self.rec[step] += [waited_from, start, computed_at, env.now]
                self.rec_stalls[step] = tuple(stalls)
                if not drains:
                    self._completed(step, run)
            self.stall["dram"] += stalls[0]
            self.stall["distribution_noc"] += stalls[1]
            self.stall["reduction"] += stalls[2] + int(held_part)
            if count == 1 and self.sink is not None:
                self._stall("dram", waited_from, waited_from + stalls[0], step)
                self._stall("reduction", waited_from + stalls[0], waited_from + stalls[0] + held_part, step)
                self._stall("distribution_noc", waited_from + stalls[0] + held_part, start, step)
                self._stall("reduction", computed_at, computed_at + stalls[2], step)
            self.busy += count * cycles
            self.macs += count * demand.macs
            self.last_compute_end = max(self.last_compute_end, computed_at + (count - 1) * period)
            self.steps_done += count
            if self.progress is not None:
                self.progress(self.steps_done, total)
        self.accounted_until = env.now  # the last step's computation and its output-buffer wait
        self.drain_q.put(None)

    def _completed(self, step: int, run: int) -> None:
        """A step has left every stage: look for the steady state of its run.

        The pipeline is a deterministic max-plus system whose state at a step is the event
        times of the last B steps (B: buffers in flight). When B + 1 consecutive identical steps
        show every event time shifted by one common period, all later identical steps repeat
        that shift exactly, so they can be executed as one block of ``count`` periods.
        """
        self.recent.append((step, run, tuple(self.rec.pop(step)), self.rec_stalls.pop(step)))
        window = self.operand_slots + 1  # operand_slots >= buffers
        if len(self.recent) > window:
            self.recent.pop(0)
        if len(self.recent) < window or self.ff_hint is not None and self.ff_hint[0] == run:
            return
        steps = [r[0] for r in self.recent]
        if any(r[1] != run for r in self.recent) or steps != list(range(steps[0], steps[0] + window)):
            return
        if len({r[3] for r in self.recent[1:]}) != 1 or len({len(r[2]) for r in self.recent}) != 1:
            return
        shifts = {b - a for prev, cur in zip(self.recent, self.recent[1:]) for a, b in zip(prev[2], cur[2])}
        if len(shifts) == 1:
            self.ff_hint = (run, shifts.pop(), self.recent[-1][3])

    def _pe(self, step: int, pe: int, macs: int, mpc: int, start: float, group_end: float):
        """One PE's computation in per-PE execution; it must end with its lock-step group."""
        yield self.env.timeout(start + ceil(macs / mpc) - self.env.now)
        self._record(f"pe{pe}", "compute", start, self.env.now, step, "", macs, 1)
        if self.env.now > group_end:
            raise AssertionError(f"step {step}: PE {pe} ends at {self.env.now} after its group ({group_end})")

    def _drain(self):
        env = self.env
        landing: list = []
        while True:
            item = yield self.drain_q.get()
            if item is None:
                yield env.all_of(landing)  # write-backs wait for the outputs to land in L2
                self.wb_q.put(None)
                return
            step, run, count, d, ready_at, tile, period = item
            if env.now < ready_at:
                yield env.timeout(ready_at - env.now)
            began = env.now
            latency = 0
            if d.drain_groups:
                part = ("output", d.drain_words, d.reduction_serial_cycles, ())
                latency = self._reduction_latency(d.drain_max_group)
                yield from self._send(self.egress, "reduction_noc", step, [part], self.egress_bw,
                                      True)
                out = self.acc["output"]
                out.l1_read += count * d.drain_pe_words
                out.l2_write += count * d.drain_words
                self.egress_words += count * d.drain_pe_words
                if self.values is not None:
                    self.values.drained(step, count, d)
            if d.drain_partial:  # a later visit reads these partial sums back once they landed
                self.partial_sums.announce(step, env.now + latency, count, period)
            if count > 1:
                sent_at = env.now
                for release_at in range(self.buffers - 1, -1, -1):
                    yield env.timeout(sent_at + (count - 1 - release_at) * period - env.now)
                    self.out_slots.put(1)
            else:
                if self.fast_forward:
                    self.rec[step] += [began, env.now]
                    self._completed(step, run)
                self.out_slots.put(1)  # the PE buffers are free once the words have left
            if latency:
                landing = [p for p in landing if p.is_alive]
                landing.append(env.process(self._land(latency, tile)))
            else:
                self._landed(tile)

    def _land(self, latency: int, tile: int):
        """Partial sums reach L2 ``latency`` cycles after leaving the PEs (reduction depth)."""
        yield self.env.timeout(latency)
        self._landed(tile)

    def _landed(self, tile: int) -> None:
        self.last_drain_end = max(self.last_drain_end, self.env.now)
        if tile >= 0:
            self.wb_q.put(tile)

    def _dma_out(self):
        env = self.env
        while True:
            tile = yield self.wb_q.get()
            if tile is None:
                return
            td: TileDemand = self.tiles[tile]
            busy, latency = dma_cycles(self.hw, td.write_words, td.write_runs, "dram" in self.ideal)
            with self.dram.request() as req:
                yield req
                start = env.now
                yield env.timeout(busy)
                self._record("dram", "write", start, env.now + latency, tile, "output", td.write_words)
                if self.values is not None:
                    self.values.written_back(tile)
                self.write_backs.announce(tile, env.now + latency)
            out = self.acc["output"]
            out.l2_read += td.write_words
            out.dram_write += td.write_words
            self.end_time = max(self.end_time, env.now + latency)

    # ------------------------------------------------------------------ result
    def _result(self, cycles: int, wall: float) -> LayerResult:
        cm, hw = self.cm, self.hw
        l1_req = self.profile.l1_required_words * hw.word_size_bytes * self.buffers
        l2_req = self.profile.l2_required_words * hw.word_size_bytes * self.l2_buffers
        energy = self._energy()
        mpc = hw.pe_array.macs_per_pe_per_cycle
        return fill_bounds(LayerResult(
            layer=cm.layer.name,
            op=cm.layer.op.value,
            hw=hw.name,
            mode=self.options.mode,
            cycles=cycles,
            macs=self.macs,
            num_pes=hw.num_pes,
            used_pes=cm.used_pes,
            pe_utilization=self.macs / (hw.num_pes * mpc * cycles) if cycles else 0.0,
            compute_busy_cycles=int(self.busy),
            stall_cycles=dict(self.stall),
            energy_pj=sum(energy.values()),
            energy_breakdown_pj=energy,
            accesses=self.acc,
            noc_words=self.noc_words,
            noc_delivered_words=self.noc_dest,
            multicast_factor=self.noc_dest / self.noc_words if self.noc_words else 1.0,
            egress_words=self.egress_words,
            l1_required_bytes=l1_req,
            l2_required_bytes=l2_req,
            l1_size_bytes=hw.l1.size_bytes,
            l2_size_bytes=hw.l2.size_bytes,
            steps=self.steps_done,
            events=self.events,
            wall_seconds=wall,
        ), hw)

    def _energy(self) -> dict[str, float]:
        hw = self.hw
        l1 = sum(a.l1_read + a.l1_write for a in self.acc.values())
        l2 = sum(a.l2_read + a.l2_write for a in self.acc.values())
        dram = sum(a.dram_read + a.dram_write for a in self.acc.values())
        return {
            "mac": self.macs * hw.energy.mac_pj,
            "l1": l1 * hw.l1_energy_pj,
            "l2": l2 * hw.l2_energy_pj,
            "dram": dram * hw.energy.dram_access_pj,
            "noc": (self.noc_dest + self.egress_words) * hw.energy.noc_hop_pj,
        }


def simulate_layer(cm: CompiledMapping, hw: HardwareSpec, options: SimOptions = SimOptions(),
                   sink: EventSink | None = None, progress: ProgressHook | None = None) -> LayerResult:
    """Run one compiled layer and return its result (``progress``: see :class:`ProgressHook`)."""
    return LayerSimulation(cm, hw, options, sink, progress=progress).run()


