"""The SimPy engine: executes a compiled tile schedule on a hardware model.

Five processes cooperate through queues and buffer pools (:mod:`accelsim.sim.slots`, SimPy's
stores and containers, cheaper):

- ``dma_in`` fetches every L2 tile from DRAM into a free L2 buffer (two when double-buffered;
  with ``l2.prefetch: free_space`` a single-buffered L2 holds up to two tiles, the next one
  fetched once its new words fit in L2's free words), partial sums spilled to DRAM only once
  their write-back has ended;
- ``distribute`` sends each step's new operand words and partial-sum read-backs from L2 to the
  PE L1s over the distribution network, once a free L1 buffer exists and, for a read-back,
  once the drain of the tile's previous visit has landed in L2 (:mod:`accelsim.sim.milestones`);
- ``compute`` runs the step on the PE array once its operands have arrived;
- ``drain`` reduces finished (or spilled) output tiles over the reduction network and writes
  them to L2;
- ``dma_out`` writes output tiles from L2 back to DRAM.

A network or the DRAM channel is a ``simpy.Resource`` held for the serialization time of a
packet (``ceil(words / bandwidth)``); latency is added to the arrival, not to the occupancy, so
packets pipeline. The PEs of a step compute as one lock-step group and the packets of one
tensor in one step go as one burst of the same total serialization. ``per_pe`` execution adds
one SimPy process per PE and per step's packets, fed from the per-PE and per-packet lists of
the profile, and checks at every step that each PE ends with its group and the packets with
their burst.

**Warps: periodic blocks as one exact jump.** The profile says which steps repeat: along a
loop, the iterations of one class (see :mod:`accelsim.mapping.geometry`) have identical
demands. Every process keeps the state it carries across a wait in an explicit record, so at a
*checkpoint* (the first moment with no event left at the current cycle after ``distribute``
has begun an iteration of such a class) the whole simulation state is one canonical value:
each process's position and pending times, the steps and tiles in flight, the event queue in
firing order, buffer levels and resource queues, and the partial sums and write-backs not yet
in place, all relative to the checkpoint's cycle, step and tile. The engine is deterministic
and time-invariant, so when the state at the start of iteration ``j`` equals the state at the
start of iteration ``j - 1`` shifted by ``P`` cycles, every later iteration of the class repeats
iteration ``j - 1`` shifted by ``P`` as long as the inputs it reads repeat: the engine then
jumps ``K`` iterations at once (stopping short of the class's end and of any tile beyond it
that the DMA reads ahead): it moves the clock, every pending event and every time and index in
flight on by ``K`` periods, adds ``K`` times the counts of one period, and records the skipped
drains and write-backs as lattices for later read-backs. Results are identical with and
without warps (tested); only ``events`` (engine events executed) differs. Runs with a trace
sink, value hooks or per-PE execution are never warped.

Every timed activity goes through :meth:`LayerSimulation._record`, which an optional event sink
receives as ``(component, kind, start_cycle, end_cycle, step, tensor, words, pes)``: the hook for
execution traces and functional execution. A sink also hears the array's stall spans (component
``pe_array``, kind ``stall_<cause>``; not counted as events) and, if it has a ``level`` method,
every change of the number of L2, L1 operand and L1 output buffers in use (see
:mod:`accelsim.trace`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import ceil
from typing import Any, Generator, Protocol

import simpy

from accelsim.hw.noc import DISTRIBUTION_KINDS, REDUCTION_KINDS
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.compile import CompiledMapping, check_reduction_support
from accelsim.model_options import IDEAL_EFFECTS, Mode, SystolicFold
from accelsim.rates import effective_rates, idealized
from accelsim.tally import LayerCounts, layer_result
from accelsim.results import LayerResult
from accelsim.sim.dram import dma_cycles
from accelsim.sim.milestones import Milestones
from accelsim.mapping.demand import ProfileOptions, ScheduleProfile, StepDemand, compute_cycles
from accelsim.mapping.tiles import TileDemand
from accelsim.sim.records import Counters, DrainToken, ProcessState, StepToken, TileArrival, Trackers
from accelsim.sim.components import (
    Announcements, ArrivalQueue, Channel, DrainQueue, Pools, Processes, StepQueue, Tally, TileQueue)
from accelsim.sim.context import SimContext
from accelsim.sim.slots import Fifo, ObservedSlots, Slots
from accelsim.sim.warp import LoopCursor, Warp

Process = Generator[simpy.Event, Any, None]  # a SimPy process body

class ValueHooks(Protocol):
    """Functional execution (:class:`accelsim.functional.datapath.DatapathValues`): called
    when each transfer happens, with the step (or L2 tile); it moves values and never changes
    timing. (Runs with value hooks are never warped, so every step is called.)"""

    def start(self, profile: ScheduleProfile) -> None: ...
    def tile_loaded(self, tile: int) -> None: ...
    def delivered(self, step: int, demand: StepDemand) -> None: ...
    def computed(self, step: int) -> None: ...
    def drained(self, step: int, demand: StepDemand) -> None: ...
    def written_back(self, tile: int) -> None: ...


class ProgressHook(Protocol):
    """Told how many of the layer's steps have been computed, after every step (a warp
    advances it by many at once)."""

    def __call__(self, steps_done: int, steps_total: int) -> None: ...


class EventSink(Protocol):
    """Receives every timed activity of the engine."""

    def __call__(self, component: str, kind: str, start: int, end: int, step: int,
                 tensor: str, words: int, pes: int) -> None: ...


@dataclass(frozen=True)
class SimOptions:
    """How to simulate: fidelity ``mode``; ``per_pe`` (one event per PE and packet, the
    unrolled reference); ``fast_forward`` (warp over proven periodic blocks: same cycles and
    counts, fewer events)."""

    mode: Mode = "realistic"
    per_pe: bool = False
    fast_forward: bool = True
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
        return idealized(self.mode, self.ideal)


@dataclass(frozen=True)
class Burst:
    """One step's transfers on a network, back to back: ``parts`` (tensor, words, cycles,
    packets), their ``cycles`` in all, and whether any part lists its ``packets``."""

    parts: list[tuple[str, int, int, tuple[int, ...]]]
    cycles: int
    packets: bool

    @staticmethod
    def of(parts: list[tuple[str, int, int, tuple[int, ...]]]) -> Burst:
        return Burst(parts, sum(serial for _, _, serial, _ in parts), any(listed for _, _, _, listed in parts))


@dataclass(frozen=True)
class Ingress:
    """What one step's delivery adds to the counters, in words (``macs``: MACs, each reading
    one word of every tensor in L1), and its operands' ``latency`` in cycles."""

    input_l2_read: int
    input_l1_write: int
    weight_l2_read: int
    weight_l1_write: int
    macs: int
    output_l2_read: int
    output_l1_write: int
    noc_words: int
    noc_dest: int  # delivered into L1 by the network (forwarded words are not)
    forwarded: int
    latency: int


class LayerSimulation:
    """Simulate one compiled layer on one hardware spec."""

    def __init__(self, cm: CompiledMapping, hw: HardwareSpec, options: SimOptions = SimOptions(),
                 sink: EventSink | None = None, values: ValueHooks | None = None,
                 progress: ProgressHook | None = None):
        self.cm = cm
        self.hw = hw
        self.options = options
        self.sink = sink
        self.values = values  # functional execution: values ride on the transfers
        self.progress = progress
        self.ideal = options.idealized
        self.dist_kind = DISTRIBUTION_KINDS[hw.distribution_noc.kind]
        self.red_kind = REDUCTION_KINDS[hw.reduction_noc.kind]
        self.rates = rates = effective_rates(hw, self.ideal)
        self.ingress_bw = rates.ingress_words_per_cycle
        self.egress_bw = rates.egress_words_per_cycle
        self.profile_options = ProfileOptions(
            multicast=rates.multicast,
            noc_bandwidth_words_per_cycle=self.ingress_bw,
            egress_bandwidth_words_per_cycle=self.egress_bw,
            detail=options.per_pe,
            exact=not options.check_legality,
            ports=rates.ports,
            port_block_pes=rates.port_block_pes,
            port_bandwidth_words_per_cycle=rates.port_words_per_cycle,
            reused_operands=rates.reused_operands,
            write_ports=rates.write_ports,
            write_bus=rates.write_bus,
            fill_used=rates.used_fill_hop_cycles > 0,
            pad_ragged=rates.pads_ragged_tiles,
            array_rows=hw.pe_array.rows,
            array_cols=hw.pe_array.cols,
            wavefront=rates.write_wavefront,
            forwarding=rates.neighbour_forwarding,
            l2_bypass=hw.l2.bypassed,
        )
        self.l2_buffers = rates.l2_buffers
        # l2.prefetch free_space: L2's words; the next tile's new words may come in while the
        # current tile is in use, so up to two tiles hold a buffer (0: off)
        self.l2_space_words = rates.l2_prefetch_words
        self.l2_tiles = 2 if self.l2_space_words else self.l2_buffers
        self.buffers = rates.l1_buffers  # L1 operand buffers = L1 output buffers per PE
        self.pipeline = rates.drain_delay_cycles
        # operand tiles in flight: L1's buffers, plus on systolic links and a pipelined tree one
        # per pipeline stage (each hop's register holds one step's data, so the latency does not
        # throttle)
        self.operand_slots = self.buffers + rates.register_stages
        # MAESTRO assumes no contention: outputs do not compete with operands
        self.shared_egress = rates.shared_egress
        # the controller's tile barrier (hw.controller; none where idealized)
        self.barrier = rates.tile_barrier
        self.events = 0

    @property
    def buffer_capacities(self) -> dict[str, int]:
        """Buffers of each pool: ``l2``, ``l1_operand``, ``l1_output``."""
        return {"l2": self.l2_tiles, "l1_operand": self.operand_slots, "l1_output": self.buffers}

    # ------------------------------------------------------------------ timing rules
    def _announces(self, d: StepDemand) -> bool:
        """Whether a step's drain is promised and announced on ``partial_sums``: a later visit
        reads its partial sums back, or (with a tile barrier) the barrier waits for them."""
        return d.drain_partial or (self.barrier != "none" and bool(d.drain_groups))

    def _record(self, component: str, kind: str, start: float, end: float, step: int,
                tensor: str = "", words: int = 0, pes: int = 0) -> None:
        self.events += 1
        if self.sink is not None:
            self.sink(component, kind, int(start), int(end), step, tensor, words, pes)

    def _stall(self, cause: str, start: float, end: float, step: int) -> None:
        """Tell the sink the array waited from ``start`` to ``end`` for ``cause``."""
        if self.sink is not None and end > start:
            self.sink("pe_array", f"stall_{cause}", int(start), int(end), step, "", 0, 0)

    def _slots(self, name: str, capacity: int) -> Slots:
        """A pool of ``capacity`` buffers; a sink with a ``level`` method hears its use."""
        level = getattr(self.sink, "level", None)
        if level is None:  # one process takes from each pool, one buffer at a time
            return Slots(self.env, capacity, capacity, one_taker_of_one=True)
        return ObservedSlots(self.env, capacity, lambda in_use: level(name, int(self.env.now), in_use, capacity),
                             one_taker_of_one=True)

    # ------------------------------------------------------------------ run
    def run(self) -> LayerResult:
        """Simulate the layer alone on a context of its own and return its result."""
        context = SimContext()
        context.enter()
        finished = self.start(context)
        context.run()
        context.leave()
        result = finished.value
        assert isinstance(result, LayerResult)
        return result

    def start(self, context: SimContext, channel_priority: int = 0) -> simpy.Event:
        """Start the layer's processes on ``context`` at its current cycle, its DMA transfers on
        the context's channel (``channel_priority``: lower first, where the channel grants by
        priority); the event returned succeeds with the :class:`LayerResult` (cycles counted
        from the start) once the last output has been written back."""
        self.wall0 = time.perf_counter()
        cm, hw = self.cm, self.hw
        if self.options.check_legality:
            check_reduction_support(cm, self.red_kind.exists)
        env = context.env
        self.context = context
        self.env = env
        self.t0 = self.clock()
        self.noc = simpy.Resource(env, 1) if self.shared_egress else None  # None: one user, no arbitration
        self.egress = self.noc
        self.dram = context.channel
        self.channel_priority = channel_priority
        self.l2_slots = self._slots("l2", self.l2_tiles)
        self.l1_slots = self._slots("l1_operand", self.operand_slots)
        self.out_slots = self._slots("l1_output", self.buffers)
        self.l2_ready = Fifo(env)
        self.ready = Fifo(env)
        self.drain_q = Fifo(env)
        self.wb_q = Fifo(env)
        # read-after-write: a partial-sum read-back waits for the drain of the previous visit
        # to land in L2 (by drain step); a DMA read of spilled outputs for their write-back
        self.partial_sums = Milestones(env, in_key_order=True)
        self.write_backs = Milestones(env, in_key_order=False)
        l2_words = hw.l2.size_bytes // hw.word_size_bytes // self.l2_buffers
        self.profile = ScheduleProfile(cm, self.profile_options, l2_words)
        self.tiles = self.profile.tiles
        # with prefetch, L2's free words (a tile's new words are taken when its fetch begins;
        # a tile's words the next one does not keep are freed once it has been distributed)
        space = self.tiles.prefetch_space_words(self.l2_space_words)
        self.l2_space = Slots(env, space, space) if space else None
        if self.values is not None:
            self.values.start(self.profile)
        self.count = Counters()
        self.track = Trackers(self.t0, self.t0, self.t0)
        self.accounted_until = self.t0  # the array's cycles up to here are busy or attributed stalls
        self.warps = (self.options.fast_forward and not self.options.per_pe and self.sink is None
                      and self.values is None)
        self.states = {name: ProcessState(name) for name in ("dma_in", "distribute", "compute", "drain", "dma_out")}
        self.owner: dict[simpy.Process, ProcessState] = {}
        processes = Processes(self.states, self.owner)
        self.warp = Warp(context, processes, [
            processes, StepQueue(self.ready), DrainQueue(self.drain_q), TileQueue(self.wb_q),
            ArrivalQueue(self.l2_ready),
            Pools([self.l1_slots, self.out_slots, self.l2_slots, *([self.l2_space] if self.l2_space is not None else [])]),
            Channel(self.dram, processes), Channel(self.noc, processes),
            Announcements(self.partial_sums, by_step=True), Announcements(self.write_backs, by_step=False),
            Tally(self.count, self.track)], self._jumped)
        self._parts_cache: dict[int, Burst] = {}  # by the demand's id (the profile keeps every demand)
        self._drain_cache: dict[int, Burst] = {}
        self._ingress_cache: dict[int, Ingress] = {}
        self.finished = env.event()
        context.attach(self.warp)
        self._spawn(self._dma_in(), self.states["dma_in"])
        self._spawn(self._distribute(), self.states["distribute"])
        self._spawn(self._compute(), self.states["compute"])
        self._spawn(self._drain(), self.states["drain"])
        self._spawn(self._dma_out(), self.states["dma_out"])
        return self.finished

    def _finish(self) -> None:
        """The last output is written back: attribute the cycles after the array's last one and
        hand the result to whoever waits for ``finished``."""
        self.context.detach(self.warp)
        track = self.track
        end = int(max(track.write_end, track.compute_end, track.drain_end))
        # time after the array's last attributed cycle (its last computation, or its wait for an
        # output buffer after it): the MAC pipeline empties (compute), outputs drain
        # (reduction) and are written back (dram)
        after = int(self.accounted_until)
        emptied = max(after, min(int(track.compute_end) + self.pipeline, int(track.drain_end)))
        drained = max(after, int(track.drain_end))
        for cause, start, stop in (("compute", after, emptied), ("reduction", emptied, drained),
                                   ("dram", drained, max(drained, end))):
            self.count.stall[cause] += stop - start
            self._stall(cause, start, stop, self.count.steps_done)
        self.finished.succeed(self._result(end - self.t0, time.perf_counter() - self.wall0))

    def _jumped(self, steps: int) -> None:
        """A warp skipped ``steps`` steps."""
        if self.progress is not None:
            self.progress(self.count.steps_done, self.cm.steps)

    def clock(self) -> int:
        """The current cycle (every delay is a whole number of cycles, so the clock is too;
        the processes read it as ``int(env._now)``, SimPy's field behind ``env.now``, in one
        step instead of two calls)."""
        return int(self.env.now)

    def _channel_request(self) -> simpy.resources.resource.Request:
        """Ask for the off-chip channel (by priority where it grants by priority)."""
        if isinstance(self.dram, simpy.PriorityResource):
            return self.dram.request(priority=self.channel_priority)
        return self.dram.request()

    def _retire(self) -> None:
        """The active transient process is done: it no longer belongs to the state."""
        process = self.env.active_process
        if process is not None:
            del self.owner[process]

    def _spawn(self, generator: Process, state: ProcessState) -> simpy.Process:
        process = self.env.process(generator)
        self.owner[process] = state
        return process

    # ------------------------------------------------------------------ processes
    def _dma_in(self) -> Process:
        env, st, tiles = self.env, self.states["dma_in"], self.tiles
        st.tile = 0
        while st.tile < tiles.count:
            st.phase = "slot"
            yield self.l2_slots.get(1)
            tile = tiles.traffic(st.tile)
            new_words = tile.footprint_words - tile.kept_words
            if self.l2_space is not None and new_words:  # prefetch: once its new words fit
                st.phase = "space"
                yield self.l2_space.get(new_words)
            source = tile.partial_sums_tile
            if source >= 0 and tiles.traffic(source).write_words:  # spilled partial sums: not
                st.key = source  # before their write-back has ended
                yield from self._wait(self.write_backs, st, "wb")
            words = sum(tile.read_words.values())
            if words:
                busy, latency = dma_cycles(self.hw, words, sum(tile.read_runs.values()), self.rates.ideal_dram)
                st.phase = "dram_request"
                request = self._channel_request()
                yield request
                st.phase = "dma"
                st.start = int(env._now)
                if self.values is not None:
                    self.values.tile_loaded(st.tile)
                yield env.timeout(busy)
                self._record("dram", "read", st.start, env.now + latency, st.tile, "", words)
                self.dram.release(request)
                for t, w in tile.read_words.items():
                    self.count.acc[t].dram_read += w
                    if t not in self.profile_options.l2_bypass:  # a bypassed operand goes to the PEs, not L2
                        self.count.acc[t].l2_write += w
                if latency:
                    arrive = ProcessState("arrive", phase="latency", tile=st.tile)
                    self._spawn(self._arrive(arrive, latency), arrive)
                    st.tile += 1
                    continue
            elif self.values is not None:
                self.values.tile_loaded(st.tile)
            self.l2_ready.put(TileArrival(st.tile, int(env._now)))
            st.tile += 1
        st.phase = "done"

    def _arrive(self, st: ProcessState, latency: int) -> Process:
        env = self.env
        yield env.timeout(latency)
        self.l2_ready.put(TileArrival(st.tile, int(env._now)))
        self._retire()

    def _wait(self, milestones: Milestones, st: ProcessState, what: str) -> Generator[simpy.Event, Any, bool]:
        """Process: wait until result ``st.key`` is in place; its value: whether it exists.
        (The key lives in ``st`` so a warp can move it.)"""
        env = self.env
        while True:
            if milestones.landed_through(st.key, int(env._now)):
                return True
            cycle = milestones.cycle_of(st.key)
            if cycle is not None:
                break
            if not milestones.may_come(st.key):
                return False
            st.phase = f"{what}_news"
            yield milestones.news
        if cycle > env.now:
            st.phase = f"{what}_landing"
            yield env.timeout(cycle - env.now)
        return True

    def _parts(self, demand: StepDemand) -> Burst:
        """A step's transfers on the distribution network: (tensor, words, cycles, packets).
        The tensors share the network for the step's ``ingress_cycles``; each is shown for its
        share of them, in proportion to its words (the cycles add up to the step's)."""
        found = self._parts_cache.get(id(demand))
        if found is None:
            sets = [(tensor, ts) for tensor, ts in (("input", demand.input), ("weight", demand.weight),
                                                    ("output", demand.readback)) if ts.words]
            total = sum(ts.words for _, ts in sets)
            parts, sent, shown = [], 0, 0
            for tensor, ts in sets:
                sent += ts.words
                share = ceil(sent * demand.ingress_cycles / total) - shown
                shown += share
                parts.append((tensor, ts.words, share, ts.packet_words))
            found = self._parts_cache[id(demand)] = Burst.of(parts)
        return found

    def _drain_burst(self, demand: StepDemand) -> Burst:
        """A step's transfer on the reduction network (its drain groups)."""
        found = self._drain_cache.get(id(demand))
        if found is None:
            found = self._drain_cache[id(demand)] = Burst.of(
                [("output", demand.drain_words, demand.reduction_serial_cycles, demand.drain_group_words)])
        return found

    def _at_barrier(self, step: int, demand: StepDemand) -> bool:
        """Whether the controller holds ``step`` until every earlier output has landed: the
        first step of an output tile (``output_tile``) or a step loading weights (``weight_tile``)."""
        if self.barrier == "output_tile":
            return step % self.profile.run_steps == 0
        return demand.weight.words > 0

    def _distribute(self) -> Process:
        env, st, profile = self.env, self.states["distribute"], self.profile
        total = self.cm.steps
        cursor = LoopCursor(profile, self.tiles.steps_per_tile)
        st.step = 0
        while st.step < total:
            demand, checkpoint = cursor.at(st.step)
            if checkpoint is not None and self.warps:
                self.warp.reach(checkpoint)
            parts = self._parts(demand)
            if demand.tile_first:
                st.phase = "l2_ready"
                arrival: TileArrival = yield self.l2_ready.get()
                st.tile, st.l2_arrival = arrival.tile, arrival.cycle
            st.phase = "slot"
            yield self.l1_slots.get(1)
            st.since = int(env._now)
            if demand.readback.words:  # not before the previous visit's drain has landed
                st.key = profile.visits.previous_end(st.step)
                # a visit in which no PE worked drained nothing: the one before it did
                while st.key >= 0 and not (yield from self._wait(self.partial_sums, st, "psum")):
                    st.key = profile.visits.previous_end(st.key)
            if self.barrier != "none" and st.step and self._at_barrier(st.step, demand):
                st.key = st.step - st.step % profile.run_steps - 1  # the last drain so far
                yield from self._wait(self.partial_sums, st, "psum")
            held = int(env._now) - st.since  # cycles the step was held for partial sums or the barrier
            if parts.parts:
                st.phase = "send"
                yield from self._send(self.noc, "distribution_noc", st.step, parts)
            ingress = self._ingress(demand)
            self._count_ingress(ingress)
            if self.values is not None:
                self.values.delivered(st.step, demand)
            self.ready.put(StepToken(st.step, demand, int(env._now) + ingress.latency,
                                     st.l2_arrival if demand.tile_first else 0, held, st.tile))
            if demand.tile_last:
                self.l2_slots.put(1)
                if self.l2_space is not None:
                    self._free_space(st.tile)
            st.step += 1
        st.phase = "done"

    def _free_space(self, tile: int) -> None:
        """Tile ``tile`` has been distributed: free its words the next tile does not keep."""
        assert self.l2_space is not None
        kept = self.tiles.traffic(tile + 1).kept_words if tile + 1 < self.tiles.count else 0
        freed = self.tiles.traffic(tile).footprint_words - kept
        if freed:
            self.l2_space.put(freed)

    def _send(self, network: simpy.Resource | None, component: str, step: int, burst: Burst) -> Process:
        """Occupy a network for all parts (tensor, words, cycles, packets) of one step's
        ``burst``, back to back. ``network`` is None when one process owns it alone.

        Per-PE execution also sends the listed packets one by one in a process of their own,
        which must end exactly when the burst does (checked)."""
        env = self.env
        request = network.request() if network is not None else None
        if request is not None:
            yield request
        parts, total = burst.parts, burst.cycles
        if burst.packets:
            env.process(self._packets(component, step, parts, env.now + total))
        yield env.timeout(total)
        start = env.now - total
        for tensor, words, serial, _ in parts:
            self._record(component, "transfer", start, start + serial, step, tensor, words)
            start += serial
        if network is not None and request is not None:
            network.release(request)

    def _packets(self, component: str, step: int, parts: list[tuple[str, int, int, tuple[int, ...]]],
                 end: float) -> Process:
        """The packets of one step, one event each: the packets of a tensor share its part of
        the burst, so packet i ends once the words sent so far have had their share of it."""
        env = self.env
        for tensor, words, serial, packets in parts:
            began, sent = env.now, 0
            for w in packets:
                start = env.now
                sent += w
                yield env.timeout(began + ceil(sent * serial / words) - env.now)
                self._record(component, "packet", start, env.now, step, tensor, w)
            if env.now != began + serial:
                raise AssertionError(f"step {step}: {tensor} packets end at {env.now}, burst at {began + serial}")
        if env.now != end:
            raise AssertionError(f"step {step}: packets end at {env.now}, transfers at {end}")

    def _ingress(self, d: StepDemand) -> Ingress:
        """One step's operand deliveries and MAC operand accesses (words forwarded between
        neighbours are written into L1 but not carried by the network), and its operands'
        latency; cached by the demand's id."""
        found = self._ingress_cache.get(id(d))
        if found is None:
            bypass = self.profile_options.l2_bypass  # a bypassed operand's words come from DRAM
            found = self._ingress_cache[id(d)] = Ingress(
                input_l2_read=d.input.words if "input" not in bypass else 0,
                input_l1_write=d.input.dest_words,
                weight_l2_read=d.weight.words if "weight" not in bypass else 0,
                weight_l1_write=d.weight.dest_words,
                macs=d.macs,
                output_l2_read=d.readback.words,
                output_l1_write=d.readback.dest_words + d.macs,
                noc_words=d.input.words + d.weight.words + d.readback.words,
                noc_dest=d.input.dest_words + d.weight.dest_words - d.forwarded_words + d.readback.dest_words,
                forwarded=d.forwarded_words,
                latency=self.rates.ingress_latency_of(d.used_rows, d.used_cols))
        return found

    def _count_ingress(self, x: Ingress) -> None:
        """Count one step's :class:`Ingress`."""
        count = self.count
        acc = count.acc
        inp, weight, out = acc["input"], acc["weight"], acc["output"]
        inp.l2_read += x.input_l2_read
        inp.l1_write += x.input_l1_write
        inp.l1_read += x.macs
        weight.l2_read += x.weight_l2_read
        weight.l1_write += x.weight_l1_write
        weight.l1_read += x.macs
        out.l2_read += x.output_l2_read
        out.l1_write += x.output_l1_write
        out.l1_read += x.macs
        count.noc_words += x.noc_words
        count.noc_dest += x.noc_dest
        count.forwarded += x.forwarded

    def _compute(self) -> Process:
        env, st = self.env, self.states["compute"]
        mpc = self.hw.pe_array.macs_per_pe_per_cycle
        fold = self.options.systolic_fold
        on_arrival = self.rates.multiply_on_arrival
        total = self.cm.steps
        count, stall, track = self.count, self.count.stall, self.track
        ready, l1_slots, out_slots, drain_q = self.ready, self.l1_slots, self.out_slots, self.drain_q
        partial_sums, per_pe, sink = self.partial_sums, self.options.per_pe, self.sink
        step_cycles: dict[int, int] = {}  # a demand's compute cycles, by the demand's id
        while count.steps_done < total:
            st.phase = "ready"
            st.since = int(env._now)
            token: StepToken = yield ready.get()
            st.token = token
            d = token.demand
            st.start = max(int(env._now), token.arrival)
            waited = st.start - st.since
            dram_part = min(waited, max(0, token.l2_arrival - st.since))
            # holding the read-back for its partial sums delayed the arrival by up to ``held``
            # cycles: that part of the rest of the wait is the reduction's
            st.held_part = min(waited - dram_part, token.held)
            st.stalls = [int(dram_part), int(waited - dram_part - st.held_part), 0]  # dram, noc, reduction
            cycles = step_cycles.get(id(d))
            if cycles is None:  # the profile keeps every case's demand for the run, so ids stay unique
                cycles = step_cycles[id(d)] = int(compute_cycles(d.max_pe_macs, mpc, d.ingress_cycles, on_arrival))
            st.cycles = cycles
            if fold is not None:
                st.cycles += fold.overhead_cycles(d.drain_groups > 0, {"input": d.input.words,
                                                                       "weight": d.weight.words})
            if per_pe:
                for pe, macs in enumerate(d.pe_macs):
                    if macs:
                        cycles = int(compute_cycles(macs, mpc, d.ingress_cycles, on_arrival))
                        env.process(self._pe(token.step, pe, macs, cycles, st.start, st.start + st.cycles))
            if st.start + st.cycles > env.now:
                st.phase = "compute"
                yield env.timeout(st.start + st.cycles - env.now)
            if st.cycles:
                self._record("pe_array", "compute", st.start, env.now, token.step, "", d.macs, d.active_pes)
            if self.values is not None:
                self.values.computed(token.step)
            st.done_at = int(env._now)
            last_tile_step = d.tile_last and self.tiles.traffic(token.tile).write_words > 0
            l1_slots.put(1)
            if d.drain_groups or last_tile_step:
                st.phase = "out_slot"
                yield out_slots.get(1)
                st.stalls[2] = int(env._now) - st.done_at
                drain_q.put(DrainToken(token.step, d, int(env._now) + self.pipeline,
                                       token.tile if last_tile_step else -1))
                if self._announces(d):
                    partial_sums.promise(token.step)
            partial_sums.reach(token.step + 1)
            stalls = st.stalls
            stall["dram"] += stalls[0]
            stall["distribution_noc"] += stalls[1]
            stall["reduction"] += stalls[2] + int(st.held_part)
            if sink is not None:
                w = st.since
                self._stall("dram", w, w + stalls[0], token.step)
                self._stall("reduction", w + stalls[0], w + stalls[0] + st.held_part, token.step)
                self._stall("distribution_noc", w + stalls[0] + st.held_part, st.start, token.step)
                self._stall("reduction", st.done_at, st.done_at + stalls[2], token.step)
            count.busy += st.cycles
            count.macs += d.macs
            if st.done_at > track.compute_end:
                track.compute_end = st.done_at
            count.steps_done += 1
            st.token = None
            if self.progress is not None:
                self.progress(count.steps_done, total)
        self.accounted_until = int(env._now)  # the last step's computation and its output-buffer wait
        st.phase = "done"
        self.drain_q.put(None)

    def _pe(self, step: int, pe: int, macs: int, cycles: int, start: float, group_end: float) -> Process:
        """One PE's computation in per-PE execution (``cycles`` after its step's operands have
        arrived); it must end with its lock-step group."""
        yield self.env.timeout(start + cycles - self.env.now)
        self._record(f"pe{pe}", "compute", start, self.env.now, step, "", macs, 1)
        if self.env.now > group_end:
            raise AssertionError(f"step {step}: PE {pe} ends at {self.env.now} after its group ({group_end})")

    def _drain(self) -> Process:
        env, st = self.env, self.states["drain"]
        landing: list[simpy.Process] = []
        while True:
            st.phase = "get"
            token: DrainToken | None = yield self.drain_q.get()
            if token is None:
                st.phase = "landing"
                yield env.all_of(landing)  # write-backs wait for the outputs to land in L2
                self.wb_q.put(None)
                st.phase = "done"
                return
            st.token = token
            if env.now < token.ready_at:
                st.phase = "pipeline"
                yield env.timeout(token.ready_at - env.now)
            d = token.demand
            latency = 0
            if d.drain_groups:
                # pipelined behind the words: the reduction's depth, then a write queue's backlog
                latency = self.rates.reduction_latency_cycles(d.drain_max_group) + d.drain_queue_cycles
                st.phase = "send"
                yield from self._send(self.egress, "reduction_noc", token.step, self._drain_burst(d))
                out = self.count.acc["output"]
                out.l1_read += d.drain_pe_words
                out.l2_write += d.drain_words
                self.count.egress_words += d.drain_pe_words
                if self.values is not None:
                    self.values.drained(token.step, d)
            # a later visit reads these partial sums back once they landed; a barrier waits for them
            if self._announces(d):
                self.partial_sums.announce(token.step, int(env._now) + latency)
            self.out_slots.put(1)  # the PE buffers are free once the words have left
            st.token = None
            if latency:
                landing = [p for p in landing if p.is_alive]
                land = ProcessState("land", phase="latency", tile=token.tile)
                landing.append(self._spawn(self._land(land, latency), land))
            else:
                self._landed(token.tile)

    def _land(self, st: ProcessState, latency: int) -> Process:
        """Partial sums reach L2 ``latency`` cycles after leaving the PEs (reduction depth)."""
        yield self.env.timeout(latency)
        self._retire()
        self._landed(st.tile)

    def _landed(self, tile: int) -> None:
        self.track.drain_end = max(self.track.drain_end, int(self.env._now))
        if tile >= 0:
            self.wb_q.put(tile)

    def _dma_out(self) -> Process:
        env, st = self.env, self.states["dma_out"]
        while True:
            st.phase = "get"
            tile = yield self.wb_q.get()
            if tile is None:
                st.phase = "done"
                break
            st.tile = tile
            td: TileDemand = self.tiles.traffic(tile)
            busy, latency = dma_cycles(self.hw, td.write_words, td.write_runs, self.rates.ideal_dram)
            st.phase = "dram_request"
            request = self._channel_request()
            yield request
            st.phase = "dma"
            st.start = int(env._now)
            yield env.timeout(busy)
            self._record("dram", "write", st.start, env.now + latency, st.tile, "output", td.write_words)
            if self.values is not None:
                self.values.written_back(st.tile)
            self.write_backs.announce(st.tile, int(env._now) + latency)
            self.dram.release(request)
            out = self.count.acc["output"]
            out.l2_read += td.write_words
            out.dram_write += td.write_words
            self.track.write_end = max(self.track.write_end, int(env._now) + latency)
        self._finish()

    # ------------------------------------------------------------------ result
    def _result(self, cycles: int, wall: float) -> LayerResult:
        count = self.count
        counts = LayerCounts(
            cycles=cycles, compute_busy_cycles=int(count.busy), stall_cycles=dict(count.stall), macs=count.macs,
            accesses=count.acc, noc_words=count.noc_words, noc_delivered_words=count.noc_dest,
            egress_words=count.egress_words, steps=count.steps_done, forwarded_words=count.forwarded,
            l1_required_words=self.profile.l1_required_words, l2_required_words=self.profile.l2_required_words)
        return layer_result(self.cm, self.hw, self.options.mode, self.rates, counts, model="simulator",
                            events=self.events, wall_seconds=wall, exact=not self.options.check_legality)


def simulate_layer(cm: CompiledMapping, hw: HardwareSpec, options: SimOptions = SimOptions(),
                   sink: EventSink | None = None, progress: ProgressHook | None = None) -> LayerResult:
    """Run one compiled layer and return its result (``progress``: see :class:`ProgressHook`)."""
    return LayerSimulation(cm, hw, options, sink, progress=progress).run()


__all__ = ["IDEAL_EFFECTS", "LayerSimulation", "SimOptions", "simulate_layer"]
