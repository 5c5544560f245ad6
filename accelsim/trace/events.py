"""The trace event model and the recorder that turns engine callbacks into trace events.

The engine calls its sink with ``(component, kind, start, end, step, tensor, words, pes)`` for
every timed activity and every stall span, and :meth:`TraceRecorder.level` for every change of
a buffer pool. The recorder applies the level of detail and the component filter and hands
:class:`TraceEvent` and :class:`CounterSample` records to the writers as the simulation runs;
it keeps at most one pending event per component, so memory does not grow with the trace.

Components (all times in accelerator cycles, counts in words):

- ``dram``: the DRAM channel / DMA. ``read`` and ``write`` span the cycles the channel is busy
  (``step`` holds the L2 tile index); ``read_latency`` / ``write_latency`` span the DRAM
  latency after it until the data has arrived (``words`` 0).
- ``distribution_noc``: L2 to PE L1s (its bandwidth is capped by L2's read port, so it is also
  the L2 read port's activity; an operand L2 bypasses is sent from the DRAM words of the
  tile's ``read``, not read from L2). ``transfer``: one tensor's burst of one step;
  ``packet``: one packet (``pe`` detail only).
- ``reduction_noc``: PE L1s to L2 (outputs after spatial reduction). Without a reduction
  network (``reduction_noc.kind: none``) these are the outputs returning over the distribution
  network, sharing its bandwidth.
- ``pe_array``: the array as one lock-step group: ``compute`` (``words`` = MACs, ``pes`` =
  active PEs) and ``stall_<cause>`` spans (cause as in the result's ``stall_cycles``).
- ``pe<N>``: PE N's computation (``pe`` detail only).
- buffer counters ``l2``, ``l1_operand``, ``l1_output``: buffers in use.
- a register file inside the PE (named as the hardware names it, e.g. ``RF16``; a design with
  register files only): ``read`` and ``write`` of one tensor in one step by all PEs, spanning
  the step's ``compute`` span (:mod:`accelsim.trace.register_files`); kept with ``pe_array``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple, Protocol

from accelsim.errors import InputError
from accelsim.trace.register_files import RegisterFileAccess

DETAILS = ("step", "transfer", "pe")
FORMATS = ("perfetto", "parquet", "csv", "dram")
# component filter names: each names one or more engine components
COMPONENT_GROUPS = ("dram", "distribution_noc", "reduction_noc", "pe_array", "pe", "buffers")
BUFFERS = ("l2", "l1_operand", "l1_output")
STALL_PREFIX = "stall_"
BANDWIDTH_KINDS = ("transfer", "read", "write")  # kinds that move words over a network or DRAM


class TraceEvent(NamedTuple):
    """One span of activity: ``[start_cycle, end_cycle)`` on ``component`` (a tuple: cheap
    to make, written as a table row as it is)."""

    component: str
    kind: str
    start_cycle: int
    end_cycle: int
    step: int  # tile step (for dram: L2 tile index)
    tensor: str  # input, weight, output, several joined by '+', or '' when not one tensor
    words: int  # words moved; MACs for compute
    pes: int  # PEs involved (compute)


class CounterSample(NamedTuple):
    """``value`` buffers of pool ``counter`` are in use from ``cycle`` on."""

    counter: str
    cycle: int
    value: int


@dataclass(frozen=True)
class TraceConfig:
    """What to trace: formats to write, level of detail, component groups to keep."""

    formats: tuple[str, ...] = ("perfetto", "parquet", "dram")
    detail: str = "transfer"
    components: tuple[str, ...] = COMPONENT_GROUPS

    @classmethod
    def parse(cls, formats: str, detail: str, components: str | None) -> "TraceConfig":
        """From the CLI's comma-separated lists; unknown names raise InputError."""
        fmts = _names(formats, FORMATS, "--trace-format")
        comps = _names(components, COMPONENT_GROUPS, "--trace-components") if components else COMPONENT_GROUPS
        if detail not in DETAILS:
            raise InputError(f"--trace-detail: expected one of {', '.join(DETAILS)}, got {detail!r}")
        return cls(fmts, detail, comps)

    def keeps(self, component: str) -> bool:
        """Whether events of an engine component pass the component filter."""
        if _per_pe(component, ""):
            return "pe" in self.components
        return component in self.components


def _per_pe(component: str, kind: str) -> bool:
    """Events that exist only in per-PE execution: one PE's compute, one packet."""
    return kind == "packet" or component.startswith("pe") and component[2:].isdigit()


def _names(text: str, allowed: Iterable[str], option: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    allowed = tuple(allowed)
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise InputError(f"{option}: unknown name(s) {', '.join(bad) or '(none given)'}; expected a comma-separated "
                         f"list of {', '.join(allowed)}")
    return tuple(dict.fromkeys(names))


class TraceWriter(Protocol):
    """A sink for trace records, streamed to disk."""

    def event(self, ev: TraceEvent) -> None: ...

    def counter(self, sample: CounterSample) -> None: ...

    def close(self) -> None: ...


class TraceRecorder:
    """The engine's event sink: detail, filters, and fan-out to the writers.

    ``now`` returns the engine's current cycle: DRAM records are made when the channel
    frees, which splits them into busy and latency spans. ``raw`` writers (the DRAM request
    trace) receive every DRAM event whatever the component filter says. ``register_files``
    (a design with register files inside the PE) gives a step's accesses of each; they are
    recorded after the step's ``compute`` span, over it.
    """

    def __init__(self, config: TraceConfig, writers: list[TraceWriter], raw: list[TraceWriter], now,
                 register_files: Callable[[int], list[RegisterFileAccess]] | None = None):
        self.config = config
        self.writers = writers
        self.raw = raw
        self.now = now
        self.register_files = register_files
        self.pending: dict[str, TraceEvent] = {}  # step detail: a network's span being merged

    def __call__(self, component: str, kind: str, start: int, end: int, step: int,
                 tensor: str, words: int, pes: int) -> None:
        if component == "dram":
            busy_end = int(self.now())
            events = [TraceEvent(component, kind, start, busy_end, step, tensor, words, pes)]
            if end > busy_end:
                events.append(TraceEvent(component, f"{kind}_latency", busy_end, end, step, tensor, 0, 0))
            for w in self.raw:
                w.event(events[0])
        else:
            events = [TraceEvent(component, kind, start, end, step, tensor, words, pes)]
        if not self.config.keeps(component) or self.config.detail != "pe" and _per_pe(component, kind):
            return
        for ev in events:
            if self.config.detail == "step" and kind == "transfer":
                self._merge(ev)
            else:
                self._emit(ev)
        if self.register_files is not None and component == "pe_array" and kind == "compute":
            for a in self.register_files(step):
                for rw, words in (("read", a.read), ("write", a.write)):
                    if words:
                        self._emit(TraceEvent(a.level, rw, start, end, step, a.tensor, words, pes))

    def level(self, buffer: str, cycle: int, in_use: int, capacity: int) -> None:
        if "buffers" in self.config.components:
            sample = CounterSample(buffer, cycle, in_use)
            for w in self.writers:
                w.counter(sample)

    def _merge(self, ev: TraceEvent) -> None:
        """Step detail: one span per network and step (its tensors' bursts back to back)."""
        prev = self.pending.get(ev.component)
        if prev is not None and prev.step == ev.step and prev.end_cycle == ev.start_cycle:
            self.pending[ev.component] = TraceEvent(
                prev.component, prev.kind, prev.start_cycle, ev.end_cycle, prev.step,
                "+".join(t for t in (prev.tensor, ev.tensor) if t), prev.words + ev.words, 0)
            return
        if prev is not None:
            self._emit(prev)
        self.pending[ev.component] = ev

    def _emit(self, ev: TraceEvent) -> None:
        for w in self.writers:
            w.event(ev)

    def close(self) -> None:
        for ev in self.pending.values():
            self._emit(ev)
        self.pending.clear()
        for w in self.writers + self.raw:
            w.close()
