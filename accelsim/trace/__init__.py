"""Execution traces: the engine's events streamed to Perfetto JSON, Parquet/CSV tables and a
DRAM request trace, and PNG figures drawn from them. Formats: ``traces/README.md``.

``trace_jobs`` / ``trace_layer`` simulate with a trace; ``accelsim.trace.plot`` draws figures
(needs matplotlib).
"""

from accelsim.trace.events import CounterSample, TraceConfig, TraceEvent
from accelsim.trace.run import trace_jobs, trace_layer

__all__ = ["CounterSample", "TraceConfig", "TraceEvent", "trace_jobs", "trace_layer"]
