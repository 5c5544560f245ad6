"""Legality of one candidate as data: compiled or not, legal or not, and why.

A candidate is checked as the simulator would check it before running: compiled (windows cover
every MAC once, clusters fit the array, ...), its tiles held against L1 and L2, and a reduction
dimension spread across PEs only where the hardware has a reduction network. Every refusal is
a :class:`~accelsim.errors.MappingError` whose ``reason`` code goes into the result row; nothing
here raises for a bad candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from accelsim.errors import InputError, MappingError
from accelsim.hw.noc import REDUCTION_KINDS
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import Directive
from accelsim.mapping.compile import CompiledMapping, check_fits, check_reduction_support, compile_mapping
from accelsim.search.candidates import canonical_key, dataflow_text, text_key
from accelsim.workload.ops import Layer

SOURCE = "candidate"


@dataclass(frozen=True)
class Legality:
    """``status``: ``ok`` or ``illegal``; ``reason``: a MappingError reason code (None when
    legal); ``key``: the canonical key (``raw:...`` when the candidate does not compile);
    ``compiled``: the compiled mapping, when it compiles."""

    status: str
    reason: str | None
    message: str | None
    key: str
    compiled: CompiledMapping | None

    @property
    def legal(self) -> bool:
        return self.status == "ok"


def check_candidate(layer: Layer, hw: HardwareSpec, dataflow: Sequence[Directive],
                    dram_layouts: Mapping[str, tuple[int, ...]] | None = None) -> Legality:
    """Compile ``dataflow`` for ``layer`` on ``hw`` (with ``dram_layouts``, role -> axis indices,
    outermost first; None: the operator's) and check it as the simulator would."""
    try:
        cm = compile_mapping(layer, dataflow, hw.num_pes, source=SOURCE, dram_layouts=dram_layouts)
    except MappingError as exc:
        return Legality("illegal", exc.reason or "invalid", exc.detail, text_key(dataflow_text(dataflow)), None)
    except InputError as exc:
        return Legality("illegal", "invalid", exc.detail, text_key(dataflow_text(dataflow)), None)
    key = canonical_key(cm)
    problems = check_fits(cm, hw.l1.size_bytes, hw.l2.size_bytes, hw.word_size_bytes,
                          hw.l1.double_buffered, hw.l2.double_buffered, hw.l2.bypassed)
    if problems:
        return Legality("illegal", problems[0].reason, "; ".join(p.message for p in problems), key, cm)
    try:
        check_reduction_support(cm, REDUCTION_KINDS[hw.reduction_noc.kind].exists)
    except MappingError as exc:
        return Legality("illegal", exc.reason or "no_reduction_network", exc.detail, key, cm)
    return Legality("ok", None, None, key, cm)
