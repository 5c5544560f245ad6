"""Candidates a mapper hands the evaluator, their text, and their canonical form.

A candidate is a MAESTRO directive list (``MapDirective``/``ClusterDirective`` objects, or the
text of a ``Dataflow`` block: ``"SpatialMap(1,1) K; TemporalMap(64,64) C; Cluster(64,P); ..."``),
a GAMMA-style :class:`~accelsim.search.genome.Genome`, or a loop nest
(:class:`~accelsim.mapping.loopnest_format.NestLayer`, Timeloop-style factors and permutations per
storage level, as ``parse_loopnest`` reads them). Each is *encoded* as its kind, one line
of text and the directives it stands for.

Two candidates that compile to the same schedule (same levels, windows and loops: input windows
written as ``Y`` or as ``Y'``, a tile clipped to its parent, a dimension left out or written
whole) cost the same in every model; :func:`canonical_key` names that schedule, and the
evaluator runs each schedule once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.errors import InputError, MappingError
from accelsim.mapping.ast import (
    ClusterDirective,
    Directive,
    MaestroFile,
    MaestroLayer,
    MapDirective,
)
from accelsim.mapping.compile import CompiledMapping
from accelsim.mapping.jobs import Job, to_maestro
from accelsim.mapping.loopnest_format import NestLayer, loopnest_dataflow
from accelsim.mapping.maestro_format import parse_maestro, write_maestro
from accelsim.search.genome import Genome
from accelsim.workload.ops import Layer

Candidate = Genome | NestLayer | Sequence[Directive] | str


@dataclass(frozen=True)
class Encoded:
    """A candidate as the evaluator sees it: ``kind`` (``directives`` or ``genome``), its text
    (one line) and the directives it decodes to."""

    kind: str
    text: str
    dataflow: tuple[Directive, ...]


def dataflow_text(dataflow: Sequence[Directive]) -> str:
    """One line of MAESTRO directives: ``SpatialMap(1,1) K; ...; Cluster(64,P); ...``."""
    parts = []
    for d in dataflow:
        if isinstance(d, ClusterDirective):
            parts.append(f"Cluster({d.size},P)")
        else:
            word = "SpatialMap" if d.kind == "spatial" else "TemporalMap"
            parts.append(f"{word}({d.size},{d.offset}) {d.dim}")
    return "; ".join(parts)


_PLACEHOLDER = MapDirective("temporal", 1, 1, "N", 0)


def parse_dataflow(text: str, layer: Layer) -> tuple[Directive, ...]:
    """The directives of a ``Dataflow`` block's text for ``layer`` (``Sz(R)``, constants and
    ``//`` comments as in a ``.m`` file); InputError naming the text's problem."""
    job = Job(layer, (_PLACEHOLDER,), "<dataflow>")
    mf = to_maestro("candidate", [job])
    skeleton = write_maestro(mf)
    marker = "TemporalMap(1,1) N;"
    start = skeleton.index(marker)
    wrapped = skeleton[:start] + "\n" + text + "\n" + skeleton[start + len(marker):]
    try:
        parsed: MaestroFile = parse_maestro(wrapped, "<dataflow>")
    except MappingError as exc:
        raise InputError(f"dataflow {text!r}: {exc.detail}") from None
    layer_block: MaestroLayer = parsed.layers[0]
    return tuple(layer_block.dataflow)


def loopnest_text(nest: NestLayer) -> str:
    """One line per loop nest: each entry, outermost first, as ``TARGET:kind[D=factor ...]``
    (loops above 1, outermost first) with ``/fanout`` where one is given."""
    parts = []
    for e in nest.entries:
        loops = " ".join(f"{d}={f}" for d, f in e.loops())
        parts.append(f"{e.target}:{e.kind}[{loops}]" + (f"/{e.fanout}" if e.fanout is not None else ""))
    return " ".join(parts)


def encode(candidate: Candidate, layer: Layer, num_pes: int) -> Encoded:
    """The kind, text and directives of a candidate on ``num_pes`` PEs (InputError for something
    else, MappingError for a loop nest that directives cannot express, that is of another
    layer or that pins register files)."""
    if isinstance(candidate, Genome):
        return Encoded("genome", candidate.text(), candidate.directives())
    if isinstance(candidate, NestLayer):
        if candidate.layer.loop_nest().dims != layer.loop_nest().dims:
            raise MappingError(f"the loop nest is of layer {candidate.layer.name!r}, whose loop dimensions "
                               f"differ from {layer.name!r}'s", reason="unknown_dim")
        if candidate.inner_pins is not None:
            raise MappingError(f"the loop nest of layer {candidate.layer.name!r} pins loops to register files inside "
                               "the PE; search candidates are scored with the default rule: leave those entries out",
                               reason="inner_pins")
        return Encoded("loopnest", loopnest_text(candidate), tuple(loopnest_dataflow(candidate, num_pes)))
    if isinstance(candidate, str):
        dataflow = parse_dataflow(candidate, layer)
        return Encoded("directives", dataflow_text(dataflow), dataflow)
    dataflow = tuple(candidate)
    if not all(isinstance(d, (MapDirective, ClusterDirective)) for d in dataflow):
        raise InputError(f"a candidate is a Genome, a NestLayer, a list of MapDirective/ClusterDirective or "
                         f"a Dataflow text; got {type(candidate).__name__}")
    return Encoded("directives", dataflow_text(dataflow), dataflow)


def canonical_form(cm: CompiledMapping) -> tuple:
    """Everything a cost model reads of a compiled mapping: PEs, and per level its sub-units,
    PEs per sub-unit and directives (dimension, kind, size, offset, parent extent, windows) in
    loop order; not how the user wrote them. A TemporalMap with one window makes no loop and
    leaves its parent's window as it is, so where it stands does not matter: those come last,
    by dimension."""
    levels = []
    for level in cm.levels:
        fields = [(d.dim, d.kind, d.size, d.offset, d.nominal_extent, d.windows) for d in level.directives]
        inert = sorted(f for f, d in zip(fields, level.directives) if d.kind == "temporal" and d.windows == 1)
        moving = [f for f, d in zip(fields, level.directives) if not (d.kind == "temporal" and d.windows == 1)]
        levels.append((level.units, level.unit_pes, tuple(moving), tuple(inert)))
    return (cm.num_pes, tuple(levels))


def canonical_key(cm: CompiledMapping) -> str:
    """16 hex digits naming :func:`canonical_form` (the same for the same schedule in every run)."""
    return _digest(repr(canonical_form(cm)))


def written_key(text: str) -> str:
    """The key of a candidate's written directives (``text:`` and a digest), for models that read
    the mapping as written."""
    return "text:" + _digest(text)


def text_key(text: str) -> str:
    """The key of a candidate that does not compile: its text's digest, marked ``raw:``."""
    return "raw:" + _digest(text)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
