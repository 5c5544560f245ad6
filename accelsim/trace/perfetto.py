"""Chrome Trace Event JSON (opens in ui.perfetto.dev and chrome://tracing), streamed.

One process per layer, one track (thread) per component, complete events (``ph: X``) for
spans, async events (``ph: b/e``) for DRAM latency (latency spans may overlap), and counters
(``ph: C``) for buffers in use, for each network's bandwidth in use and, on a design with
register files inside the PE, for each register file's reads and writes of each tensor
(words per cycle over each step's compute span: ``register file RF16: input read
(words/cycle)``; exact words are in the events table). ``ts`` and ``dur`` are
in microseconds of real time, as the format defines them: a cycle lasts ``1 / clock_mhz`` us (the
hardware's clock, also in ``otherData``), so a viewer's time axis reads as the accelerator's.
Events are written in the order the engine records them; viewers sort by time.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from accelsim.trace.events import BANDWIDTH_KINDS, STALL_PREFIX, CounterSample, TraceEvent

PID = 1
TRACKS = {  # component (and packets) -> (tid, track name)
    "dram": (1, "dram (DMA channel)"),
    "distribution_noc": (2, "distribution_noc (L2 -> L1)"),
    "distribution_noc/packet": (3, "distribution_noc packets"),
    "reduction_noc": (4, "reduction_noc (L1 -> L2)"),
    "reduction_noc/packet": (5, "reduction_noc packets"),
    "pe_array": (6, "pe_array"),
}
PE_TID_BASE = 100


def _dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


@lru_cache(maxsize=4096)
def _quoted(text: str) -> str:
    return json.dumps(text)


def _span(ev: TraceEvent, tid: int, name: str, clock_mhz: float) -> str:
    """A complete event, formatted as _dumps would (keys sorted) but fast: spans are most of
    a trace."""
    return (f'{{"args":{{"kind":{_quoted(ev.kind)},"pes":{ev.pes},"step":{ev.step},"tensor":{_quoted(ev.tensor)},'
            f'"words":{ev.words}}},"cat":{_quoted(ev.component)},"dur":{(ev.end_cycle - ev.start_cycle) / clock_mhz!r},'
            f'"name":{_quoted(name)},"ph":"X","pid":{PID},"tid":{tid},"ts":{ev.start_cycle / clock_mhz!r}}}')


class PerfettoWriter:
    """Writes ``path`` as the events arrive; ``close`` finishes the JSON document."""

    def __init__(self, path: Path, title: str, other: dict, clock_mhz: float = 1.0,
                 register_files: tuple[str, ...] = ()):
        self.clock_mhz = clock_mhz  # cycles per microsecond
        self.register_files = register_files  # components written as rate counters
        self.f = open(path, "w", encoding="utf-8", newline="\n")
        self.f.write('{"traceEvents":[\n')
        self.first = True
        self.other = other
        self.named: set[int] = set()
        self.async_id = 0
        self.zero_at: dict[str, int] = {}  # rate counter -> cycle it returns to 0
        self._write({"ph": "M", "pid": PID, "name": "process_name", "args": {"name": title}})

    def _write(self, obj: dict | str) -> None:
        self.f.write(("" if self.first else ",\n") + (obj if isinstance(obj, str) else _dumps(obj)))
        self.first = False

    def _us(self, cycle: int) -> float:
        """Microseconds from the layer's start at ``cycle``."""
        return cycle / self.clock_mhz

    def _track(self, ev: TraceEvent) -> int:
        if ev.component.startswith("pe") and ev.component[2:].isdigit():
            tid, name = PE_TID_BASE + int(ev.component[2:]), ev.component
        else:
            tid, name = TRACKS.get(f"{ev.component}/{ev.kind}", TRACKS[ev.component])
        if tid not in self.named:
            self.named.add(tid)
            self._write({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name", "args": {"name": name}})
            self._write({"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}})
        return tid

    def event(self, ev: TraceEvent) -> None:
        if ev.component in self.register_files:
            if ev.end_cycle > ev.start_cycle:
                self._rate(f"register file {ev.component}: {ev.tensor} {ev.kind} (words/cycle)", ev)
            return
        if ev.kind.endswith("_latency"):
            args = {"kind": ev.kind, "step": ev.step, "tensor": ev.tensor, "words": ev.words, "pes": ev.pes}
            self.async_id += 1
            common = {"cat": ev.component, "name": ev.kind, "pid": PID, "id": self.async_id}
            self._write({**common, "ph": "b", "ts": self._us(ev.start_cycle), "args": args})
            self._write({**common, "ph": "e", "ts": self._us(ev.end_cycle)})
            return
        if ev.kind.startswith(STALL_PREFIX):
            name = "stall: " + ev.kind[len(STALL_PREFIX):]
        elif ev.kind == "transfer" and ev.tensor:
            name = ev.tensor
        else:
            name = ev.kind
        self._write(_span(ev, self._track(ev), name, self.clock_mhz))
        if ev.kind in BANDWIDTH_KINDS and ev.end_cycle > ev.start_cycle:
            self._rate(f"bandwidth in use: {ev.component} (words/cycle)", ev)

    def _rate(self, name: str, ev: TraceEvent) -> None:
        """Counter ``name`` of words/cycle over the event's span (bandwidth in use on a network,
        or a register file's accesses); a counter's events come in time order, so a 0 is
        written only where it really falls idle."""
        zero_at = self.zero_at.get(name)
        if zero_at is not None and zero_at < ev.start_cycle:
            self._write({"ph": "C", "pid": PID, "name": name, "ts": self._us(zero_at), "args": {"words_per_cycle": 0}})
        value = round(ev.words / (ev.end_cycle - ev.start_cycle), 6)
        self._write(f'{{"args":{{"words_per_cycle":{value!r}}},"name":{_quoted(name)},"ph":"C","pid":{PID},'
                    f'"ts":{self._us(ev.start_cycle)!r}}}')
        self.zero_at[name] = ev.end_cycle

    def counter(self, sample: CounterSample) -> None:
        self._write(f'{{"args":{{"buffers":{sample.value}}},"name":{_quoted("buffers in use: " + sample.counter)},'
                    f'"ph":"C","pid":{PID},"ts":{self._us(sample.cycle)!r}}}')

    def close(self) -> None:
        for name, zero_at in sorted(self.zero_at.items()):
            self._write({"ph": "C", "pid": PID, "name": name, "ts": self._us(zero_at), "args": {"words_per_cycle": 0}})
        self.f.write('\n],\n"otherData":' + _dumps(self.other) + "}\n")
        self.f.close()
