"""Loop-nest mappings in a YAML form close to Timeloop's, and their conversion to and from
MAESTRO directives.

A file holds one layer (top-level ``problem`` and ``mapping``) or several (``name`` and
``layers: [{problem, mapping}, ...]``). ``problem`` is the layer as in a network table
(``{name, type, N, K, C, R, S, Y, X, stride}``) or Timeloop's convolution problem
(``{name, instance: {C, M, N, P, Q, R, S, Hstride, Wstride}}``: ``M`` output channels, ``P``/``Q``
output rows/cols). ``mapping`` lists the loop nest's entries **outermost first**::

    - {target: DRAM, type: temporal, factors: K=2 C=1 ..., permutation: C K}
    - {target: L2,   type: temporal, factors: ...,          permutation: ...}
    - {target: L2,   type: spatial,  factors: K=16,         fanout: 16}
    - {target: L2,   type: spatial,  factors: C=8}
    - {target: L1,   type: temporal, factors: R=3 S=3 ...}

``factors`` (``D=F`` words, or a mapping) are trip counts over the loop dimensions of the layer's
loop nest (output rows/cols are ``Y'``/``X'``; Timeloop's ``M``/``P``/``Q`` are accepted for a
convolution's ``K``/``Y'``/``X'``); a dimension left out has factor 1. ``permutation`` lists
an entry's loops **innermost first**, as Timeloop writes it (space-separated names, or a string of
one-letter names). ``target`` is ``DRAM``, ``L2`` or ``L1``, or any name that ``targets:``
(top level) maps to one of them, e.g. ``targets: {MainMemory: DRAM, GlobalBuffer: L2}``.

Meaning, in accelsim's model (``README.md``, Loop-nest mappings):

- The tile of a dimension below a loop is the product of that dimension's factors further in
  (spatial factors included); the L1 entry's factors are one PE's tile in one step (its
  permutation is not used: a PE computes its tile in one step). Only the outermost split of a
  dimension may be ragged: its factor must be ``ceil(extent / tile)``.
- Each ``spatial`` entry closes one cluster level: its fanout (``fanout``, default the product
  of its factors) sub-units; the top level spreads over every sub-unit the array holds. Several
  dimensions with factors above 1 in one spatial entry become nested cluster levels, outermost
  first by the permutation. A temporal loop over the dimension a level spreads spatially is that
  level's fold (more windows than sub-units); it needs the fanout to be all sub-units.
- ``L2`` temporal entries between spatial ones are loops of the level they precede; temporal
  entries after the last spatial entry form a last level of one PE.
- A ``DRAM`` entry becomes a top level of one unit spanning every PE, so L2 holds at least
  everything inside it (and, as always, as many of its innermost loops as fit; see "L2 and
  DRAM" in the timing rules). Without one, accelsim decides which top-level loops L2 holds.
- Entries after the L1 entry name register files inside the PE (temporal, one each, outermost
  first) and pin the loops of a PE's step (:class:`~accelsim.mapping.compile.InnerPins`): the
  step's tile is the L1 entry's factors times theirs, the L1 entry's permutation orders L1's
  own loops, and each register file holds its loops and those of the entries after it.
  :class:`NestLayer` keeps the L1 entry as the step's tile and the pins beside it.

:func:`loopnest_dataflow` turns a loop nest into directives; :func:`loopnest_of` turns a compiled
mapping into a loop nest. Each raises a :class:`MappingError` naming what has no equivalent
(reason ``no_directive_equivalent`` / ``no_loopnest_equivalent``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil, prod
from pathlib import Path
from typing import Any, Literal, Sequence

from accelsim.errors import InputError, MappingError
from accelsim.input_files import YamlDocument, load_yaml, read_text, shown
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.mapping.compile import CompiledMapping, InnerPins, Level, LevelDirective, PinnedLevel, PinnedLoop, \
    compile_mapping
from accelsim.mapping.inner_levels import intra_step_order
from accelsim.workload.operators import OpType, operator
from accelsim.workload.ops import Layer
from accelsim.workload.tables import layer_fields, layer_from_entry, yaml_scalar

TARGETS = ("DRAM", "L2", "L1")
# Timeloop's names of a convolution's loop dimensions, accepted in factors and permutations.
TIMELOOP_DIMS = {"M": "K", "P": "Y'", "Q": "X'"}
EntryKind = Literal["temporal", "spatial"]
# A factor written with more digits than this is refused (no layer has a dimension near 10^18).
MAX_FACTOR_DIGITS = 18


@dataclass(frozen=True)
class NestEntry:
    """One entry of a loop nest: its loops (``factors``, every loop dimension) in
    ``permutation`` order, innermost first; ``fanout`` sub-units for a spatial entry (None: the
    product of its factors)."""

    target: str
    kind: EntryKind
    factors: dict[str, int]
    permutation: tuple[str, ...]
    fanout: int | None = None
    line: int | None = None

    def loops(self) -> list[tuple[str, int]]:
        """(dimension, factor) of every loop above 1, outermost first."""
        return [(d, self.factors[d]) for d in reversed(self.permutation) if self.factors[d] > 1]


@dataclass(frozen=True)
class NestLayer:
    """A layer and its loop nest (entries outermost first; the L1 entry's factors are one PE's
    whole step tile) and the loops it pins to the register files inside the PE (None: the
    default rule of :mod:`accelsim.mapping.inner_levels`)."""

    layer: Layer
    entries: tuple[NestEntry, ...]
    source: str
    line: int | None = None
    inner_pins: InnerPins | None = None


# ----- loop nest -> directives ------------------------------------------------------------------
@dataclass
class _Group:
    """The loops of one cluster level: temporal loops outermost first, then its fanout."""

    temporal: list[tuple[str, int, NestEntry]]
    spatial: tuple[str, int] | None  # (dimension, factor), factor 1 when nothing is spread
    fanout: int
    entry: NestEntry | None


def _no_equivalent(nl: NestLayer, message: str, entry: NestEntry | None = None) -> MappingError:
    return MappingError(f"layer {nl.layer.name!r}: no directive equivalent: {message}", source=nl.source,
                        line=entry.line if entry is not None and entry.line is not None else nl.line,
                        reason="no_directive_equivalent")


def _groups(nl: NestLayer) -> list[_Group]:
    """Split the entries into cluster levels (a DRAM entry is a level of its own)."""
    groups: list[_Group] = []
    pending: list[tuple[str, int, NestEntry]] = []
    for entry in nl.entries:
        if entry.target == "L1":
            continue
        if entry.target == "DRAM":
            groups.append(_Group([(d, f, entry) for d, f in entry.loops()], None, 1, entry))
            continue
        if entry.kind == "temporal":
            pending += [(d, f, entry) for d, f in entry.loops()]
            continue
        spread = entry.loops()
        if entry.fanout is not None and len(spread) > 1:
            raise _no_equivalent(nl, f"a spatial entry with a fanout spreads one dimension, not "
                                     f"{', '.join(d for d, _ in spread)}", entry)
        if not spread:
            groups.append(_Group(pending, None, entry.fanout or 1, entry))
        for i, (dim, factor) in enumerate(spread):
            fanout = entry.fanout if entry.fanout is not None else factor
            groups.append(_Group(pending if i == 0 else [], (dim, factor), fanout, entry))
        pending = []
    if pending or not groups:  # no loop above L1 at all: one level whose one tile is the whole layer
        groups.append(_Group(pending, None, 1, None))
    return groups


def _tiles(nl: NestLayer) -> list[dict[str, int]]:
    """Per entry: the tile of every dimension inside it (product of the factors further in);
    checks that the factors cover each dimension with only the outermost split ragged."""
    extents = nl.layer.loop_nest().dims
    tiles: list[dict[str, int]] = [{} for _ in nl.entries]
    inside = {d: 1 for d in extents}
    for i in range(len(nl.entries) - 1, -1, -1):
        tiles[i] = dict(inside)
        for d, f in nl.entries[i].factors.items():
            inside[d] *= f
    for d, extent in extents.items():
        covered = 1
        for i in range(len(nl.entries) - 1, -1, -1):
            entry, f = nl.entries[i], nl.entries[i].factors[d]
            if f == 1:
                continue
            if covered >= extent:
                raise _no_equivalent(nl, f"{d}={f} in this entry splits a tile of {d} that the loops inside it "
                                         f"already cover ({covered} >= {extent}); its factor must be 1", entry)
            if covered * f > extent and f != ceil(extent / covered):
                raise _no_equivalent(nl, f"{d}={f} leaves a whole tile of {d} empty: tiles of {covered} need "
                                         f"{ceil(extent / covered)} trips over {extent}", entry)
            covered *= f
        if covered < extent:
            raise MappingError(f"layer {nl.layer.name!r}: the factors of {d} multiply to {covered}, less than "
                               f"its extent {extent}", source=nl.source, line=nl.line, reason="coverage")
    return tiles


def loopnest_dataflow(nl: NestLayer, num_pes: int) -> list[Directive]:
    """MAESTRO directives (in output coordinates) with the same tile schedule as the nest on an
    array of ``num_pes`` PEs."""
    tiles = _tiles(nl)
    index = {id(e): i for i, e in enumerate(nl.entries)}
    groups = _groups(nl)
    dram = groups[0].entry is not None and groups[0].entry.target == "DRAM"
    top = 1 if dram else 0  # the level that spreads over the whole array
    # PEs of one sub-unit of each level: the fanouts of the levels below multiplied
    unit_pes = [1] * len(groups)
    for g in range(len(groups) - 2, -1, -1):
        unit_pes[g] = unit_pes[g + 1] * groups[g + 1].fanout
    if dram:
        unit_pes[0] = num_pes
    if top < len(groups) and unit_pes[top] > num_pes:
        raise MappingError(f"layer {nl.layer.name!r}: the fanouts below the top level need {unit_pes[top]} PEs "
                           f"but the array has {num_pes}", source=nl.source, line=nl.line, reason="cluster_too_big")
    dataflow: list[Directive] = []
    for g, group in enumerate(groups):
        units = 1 if dram and g == 0 else num_pes // unit_pes[g] if g == top else group.fanout
        if g == top and group.entry is not None and group.entry.fanout not in (None, units):
            raise _no_equivalent(nl, f"the top level spreads over all {units} sub-units the array holds "
                                     f"({unit_pes[g]} PEs each), not fanout {group.entry.fanout}", group.entry)
        if g > 0:
            dataflow.append(ClusterDirective(unit_pes[g - 1], (group.entry.line if group.entry else None) or 0))
        dataflow += _level_directives(nl, group, units, tiles, index)
    return dataflow


def _level_directives(nl: NestLayer, group: _Group, units: int, tiles: list[dict[str, int]],
                      index: dict[int, int]) -> list[Directive]:
    """One cluster level's directives: its temporal loops in order, its SpatialMap where its
    fold loop stands (first when it does not fold)."""
    level: list[Directive] = []
    seen: set[str] = set()
    fold_at = None
    spread = group.spatial[0] if group.spatial is not None and group.spatial[1] > 1 else None
    for dim, _, entry in group.temporal:
        if dim in seen:
            raise _no_equivalent(nl, f"{dim} is split by two temporal loops of one cluster level (a MAESTRO level "
                                     "maps each dimension once); put a spatial entry between them", entry)
        seen.add(dim)
        size = tiles[index[id(entry)]][dim]
        if group.spatial is not None and dim == group.spatial[0]:
            fold_at = len(level)
            continue
        level.append(MapDirective("temporal", size, size, dim, entry.line or 0))
    spatial = group.spatial
    if spatial is None or (spread is None and fold_at is None):  # spread or a fold implies a spatial entry
        return level
    dim, factor = spatial
    spatial_entry = group.entry
    if factor > units:
        raise MappingError(f"layer {nl.layer.name!r}: {dim}={factor} is spread over {units} sub-units",
                           source=nl.source, line=spatial_entry.line if spatial_entry else nl.line, reason="cluster_too_big")
    if fold_at is not None and factor != units:
        raise _no_equivalent(nl, f"{dim} is folded over time and spread over {factor} of {units} sub-units; a "
                                 "SpatialMap folds only over all of them", spatial_entry)
    size = tiles[index[id(spatial_entry)]][dim]
    level.insert(fold_at or 0, MapDirective("spatial", size, size, dim, (spatial_entry.line if spatial_entry else None) or 0))
    return level


# ----- compiled mapping -> loop nest ------------------------------------------------------------
def _trivial(d: LevelDirective) -> bool:
    """A directive whose one window is its whole parent tile (it splits nothing)."""
    return d.windows == 1 and d.size == d.nominal_extent


def canonical_form(cm: CompiledMapping) -> tuple:
    """The tile schedule without what carries no meaning, so that two compiled mappings with
    equal forms give the same steps, boxes and results:

    - directives that split nothing (one window, the whole parent tile): their kind and place
      in a level change no box, loop or tile;
    - the kind of a directive at a level of one sub-unit: a SpatialMap over one sub-unit steps
      through its windows exactly as a TemporalMap does (its fold loop is a temporal loop);
    - the directives' written text and lines, and the source.
    """
    def kind(level: Level, d: LevelDirective) -> str:
        return "temporal" if level.units == 1 else d.kind

    levels = tuple(
        (lvl.units, lvl.unit_pes,
         frozenset((d.dim, kind(lvl, d), d.size, d.offset, d.nominal_extent, d.windows)
                   for d in lvl.directives if not _trivial(d)))
        for lvl in cm.levels)
    loops = tuple(
        (lp.level, "temporal" if cm.levels[lp.level].units == 1 else lp.kind,
         tuple(d for d in lp.dims if any(x.dim == d and not _trivial(x) for x in cm.levels[lp.level].directives)),
         lp.trips)
        for lp in cm.loops)
    return cm.layer.op, dict(cm.layer.sizes), cm.layer.stride_y, cm.layer.stride_x, cm.num_pes, levels, loops


def _no_nest(cm: CompiledMapping, message: str) -> MappingError:
    return MappingError(f"layer {cm.layer.name!r}: no loop-nest equivalent: {message}", source=cm.source,
                        reason="no_loopnest_equivalent")


def loopnest_of(cm: CompiledMapping) -> NestLayer:
    """The loop nest of a compiled mapping; raises when it has none (checked by converting the
    nest back and comparing :func:`canonical_form`)."""
    dims = list(cm.nest.dims)
    entries: list[NestEntry] = []

    def entry(target: str, kind: EntryKind, loops: Sequence[tuple[str, int]], fanout: int | None = None) -> None:
        factors = {d: 1 for d in dims}
        for d, f in loops:
            factors[d] = f
        entries.append(NestEntry(target, kind, factors, tuple(d for d, _ in reversed(loops)), fanout))

    top = 0
    for li, level in enumerate(cm.levels):
        _check_cluster(cm, li, level)
        moving = [d for d in level.spatial if not _trivial(d)]
        temporal: list[tuple[str, int]] = []
        for d in level.directives:
            if d.kind == "temporal" and not _trivial(d):
                temporal.append((d.dim, d.windows))
            elif level.folds > 1 and d is level.spatial[0]:
                temporal.append((moving[0].dim, level.folds))
        if li == 0 and level.units == 1 and level.unit_pes == cm.num_pes and not moving:
            entry("DRAM", "temporal", temporal)
            top = 1  # the level below spreads over the whole array
            continue
        if temporal:
            entry("L2", "temporal", temporal)
        spread = [(moving[0].dim, min(moving[0].windows, level.units))] if moving else []
        fanout = None if li == top or (spread and spread[0][1] == level.units) else level.units
        entry("L2", "spatial", spread, fanout)
    entry("L1", "temporal", [(d.dim, d.size) for d in cm.levels[-1].directives if d.size > 1])
    nl = NestLayer(cm.layer, tuple(entries), cm.source)
    _check_same(cm, nl)
    return nl


def _check_cluster(cm: CompiledMapping, li: int, level: Level) -> None:
    if li > 0:
        parent = cm.levels[li - 1]
        if level.units * level.unit_pes != parent.unit_pes:
            raise _no_nest(cm, f"a cluster of {parent.unit_pes} PEs holds {level.units} sub-units of "
                               f"{level.unit_pes}, leaving {parent.unit_pes - level.units * level.unit_pes} PEs idle "
                               "(a fanout has no idle PEs)")


def _check_same(cm: CompiledMapping, nl: NestLayer) -> None:
    """The nest, converted back, must compile to the same schedule."""
    try:
        back = compile_mapping(cm.layer, loopnest_dataflow(nl, cm.num_pes), cm.num_pes, source=cm.source)
    except MappingError as exc:
        raise _no_nest(cm, _inner_ragged(cm) or exc.detail) from None
    if canonical_form(back) != canonical_form(cm):
        raise _no_nest(cm, _inner_ragged(cm) or "the loop nest converted back differs in its loop order")


def _inner_ragged(cm: CompiledMapping) -> str | None:
    """The first split of a dimension below its outermost one that does not tile its parent
    exactly, said as the reason (a loop nest's tiles are products of the factors inside them, so
    only the outermost split can be ragged); None when there is none."""
    split_above: set[str] = set()
    for li, level in enumerate(cm.levels):
        for d in level.directives:
            if _trivial(d):
                continue
            spread = min(d.windows, level.units) * level.folds if d.kind == "spatial" else d.windows
            if d.dim in split_above and spread * d.size != d.nominal_extent:
                return (f"{d.written} at cluster level {li} splits a tile of {d.nominal_extent} {d.dim} into "
                        f"{d.windows} windows of {d.size}; a loop nest can leave only the outermost split of a "
                        "dimension ragged")
        split_above |= {d.dim for d in level.directives if not _trivial(d)}
    return None


# ----- reading ---------------------------------------------------------------------------------
def parse_loopnest(text: str, path: str = "<string>") -> tuple[str, list[NestLayer]]:
    """(network name, layers) of a loop-nest mapping file's text."""
    doc = load_yaml(text, path)
    data = doc.data
    if not isinstance(data, dict):
        raise InputError("expected a mapping with 'problem' and 'mapping' (one layer) or 'layers' (several)",
                         source=path, line=doc.line(()))
    allowed = {"name", "targets", "layers", "problem", "mapping"}
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        raise InputError(f"unknown top-level key(s) {', '.join(unknown)}; expected {', '.join(sorted(allowed))}",
                         source=path, line=doc.line((unknown[0],)))
    targets = _targets(data.get("targets"), path, doc.line(("targets",)))
    if "layers" in data:
        if "problem" in data or "mapping" in data:
            raise InputError("give 'layers' or one layer's 'problem' and 'mapping', not both", source=path)
        items = data["layers"]
        if not isinstance(items, list) or not items:
            raise InputError("field 'layers': expected a non-empty list of {problem, mapping}", source=path,
                             line=doc.line(("layers",)))
        prefixes: list[tuple[str | int, ...]] = [("layers", i) for i in range(len(items))]
    else:
        items, prefixes = [data], [()]
    layers = [_parse_layer(item, i, path, doc, prefix, targets)
              for i, (item, prefix) in enumerate(zip(items, prefixes))]
    names = [nl.layer.name for nl in layers]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise InputError(f"layer name {duplicate!r} is used twice", source=path)
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str):
        raise InputError(f"field 'name': expected the network's name, got {shown(name)}", source=path,
                         line=doc.line(("name",)))
    return name, layers


def _targets(value: Any, path: str, line: int | None) -> dict[str, str]:
    names = {t.upper(): t for t in TARGETS}
    table = {t.upper(): t for t in TARGETS}
    if value is None:
        return table
    if not isinstance(value, dict):
        raise InputError("field 'targets': expected a mapping from your level names to DRAM, L2 or L1",
                         source=path, line=line)
    for own, ours in value.items():
        if not isinstance(ours, str) or ours.upper() not in names:
            raise InputError(f"field 'targets': {shown(own)} maps to {shown(ours)}; expected DRAM, L2 or L1",
                             source=path, line=line)
        table[str(own).upper()] = names[ours.upper()]
    return table


def _parse_layer(item: Any, i: int, path: str, doc: YamlDocument, at: tuple[str | int, ...],
                 targets: dict[str, str]) -> NestLayer:
    line = doc.line(at)
    if not isinstance(item, dict) or "problem" not in item or "mapping" not in item:
        raise InputError(f"layer {i}: expected a mapping with 'problem' and 'mapping'", source=path, line=line)
    layer = _problem(item["problem"], i, path, doc, at + ("problem",))
    mapping = item["mapping"]
    if not isinstance(mapping, list) or not mapping:
        raise InputError(f"layer {i} ({layer.name}): field 'mapping': expected a non-empty list of entries",
                         source=path, line=doc.line(at + ("mapping",)))
    dims = tuple(layer.loop_nest().dims)
    resolved = [targets.get(e["target"].upper()) if isinstance(e, dict) and isinstance(e.get("target"), str) else ""
                for e in mapping]  # None: not a storage level's name
    l1 = resolved.index("L1") if "L1" in resolved else len(mapping)
    pinned = None in resolved[l1 + 1:]  # register-file entries follow the L1 entry
    entries = [_entry(e, j, layer, dims, path, doc, at + ("mapping", j), targets, j > l1, pinned)
               for j, e in enumerate(mapping)]
    files = [e for e in entries if e.target not in TARGETS]  # register files inside the PE, outermost first
    entries = [e for e in entries if e.target in TARGETS]
    _check_order(entries, layer, path)
    if not files:
        return NestLayer(layer, tuple(entries), path, line)
    names = [e.target for e in files]
    twice = next((e for i, e in enumerate(files) if e.target in names[:i]), None)
    if twice is not None:
        raise InputError(f"layer {layer.name!r}: register file {twice.target} has two entries; give each one "
                         "entry", source=path, line=twice.line)
    # the step's tile is L1's factors and the register files' together (Timeloop's factors per level)
    own = entries[-1]
    step = replace(own, factors={d: own.factors[d] * prod(e.factors[d] for e in files) for d in dims})
    pins = InnerPins(tuple(PinnedLoop(d, f) for d, f in own.loops()),
                     tuple(PinnedLevel(e.target, tuple(PinnedLoop(d, f) for d, f in e.loops())) for e in reversed(files)))
    return NestLayer(layer, (*entries[:-1], step), path, line, pins)


def _problem(problem: Any, i: int, path: str, doc: YamlDocument, at: tuple[str | int, ...]) -> Layer:
    line = doc.line(at)
    if not isinstance(problem, dict):
        raise InputError(f"layer {i}: field 'problem': expected a mapping", source=path, line=line)
    if "instance" not in problem:
        fields = {str(key): doc.line(at + (str(key),)) or 0 for key in problem}
        return layer_from_entry(problem, i, path, line, fields)
    instance = problem["instance"]
    shape = problem.get("shape")
    name = problem.get("name") or (shape.get("name") if isinstance(shape, dict) else None) or f"layer{i}"
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise InputError(f"layer {i}: field 'name': expected a layer name, got {shown(name)}", source=path,
                         line=doc.line(at + ("name",)))
    keys = {"C", "M", "N", "P", "Q", "R", "S", "Hstride", "Wstride", "Hdilation", "Wdilation"}
    if not isinstance(instance, dict) or set(map(str, instance)) - keys:
        raise InputError(f"layer {i}: field 'instance': expected Timeloop's convolution instance "
                         f"({', '.join(sorted(keys))})", source=path, line=line)
    if instance.get("Hdilation", 1) != 1 or instance.get("Wdilation", 1) != 1:
        raise InputError(f"layer {i}: dilation is not modelled", source=path, line=line)
    defaults = {"N": 1, "R": 1, "S": 1, "Hstride": 1, "Wstride": 1}
    values: dict[str, int] = {}
    for key in ("C", "M", "N", "P", "Q", "R", "S", "Hstride", "Wstride"):
        value = instance.get(key, defaults.get(key))
        if value is None:
            raise InputError(f"layer {i}: field 'instance': needs integer C, M, P and Q; {key} is missing",
                             source=path, line=line)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"layer {i}: field 'instance': {key} is {shown(value)}; expected a positive integer",
                             source=path, line=doc.line(at + ("instance", key)) or line)
        values[key] = value
    sy, sx, r, s = values["Hstride"], values["Wstride"], values["R"], values["S"]
    sizes = {"N": values["N"], "K": values["M"], "C": values["C"], "R": r, "S": s,
             "Y": (values["P"] - 1) * sy + r, "X": (values["Q"] - 1) * sx + s}
    return Layer.build(str(name), OpType.CONV2D, sizes, sy, sx, source=f"{path} layer {i} ({name})")


def _dim_name(raw: str, layer: Layer, dims: Sequence[str]) -> str | None:
    name = raw.strip().upper().replace("\u2019", "'")
    if name in dims:
        return name
    if operator(layer.op).windows and name in TIMELOOP_DIMS and TIMELOOP_DIMS[name] in dims:
        return TIMELOOP_DIMS[name]
    return None


def _entry(raw: Any, j: int, layer: Layer, dims: Sequence[str], path: str, doc: YamlDocument,
           at: tuple[str | int, ...], targets: dict[str, str], inner: bool = False, pinned: bool = False) -> NestEntry:
    """One entry; ``inner``: it comes after the L1 entry, so a target that is not DRAM, L2 or L1
    names a register file inside the PE; ``pinned``: register-file entries follow the L1 entry
    (whose loop order then matters)."""
    line = doc.line(at)
    who = f"layer {layer.name!r} mapping entry {j}"

    def fail(message: str, key: str | None = None) -> InputError:
        return InputError(f"{who}: {message}", source=path, line=doc.line(at + (key,)) if key else line)

    if not isinstance(raw, dict):
        raise fail("expected a mapping with target, type, factors and permutation")
    unknown = sorted(set(map(str, raw)) - {"target", "type", "factors", "permutation", "fanout", "split"})
    if unknown:
        raise fail(f"unknown field(s) {', '.join(unknown)}; expected target, type, factors, permutation, fanout",
                   unknown[0])
    given_target = raw.get("target")
    target = targets.get(given_target.upper()) if isinstance(given_target, str) else None
    if target is None and inner and isinstance(given_target, str) and given_target.strip():
        target = given_target.strip()  # a register file inside the PE, named as the hardware names it
        if raw.get("type") != "temporal":
            raise fail(f"register file {target}: expected type temporal (the loops it holds inside a PE's step), "
                       f"got {shown(raw.get('type'))}", "type")
    if target is None:
        raise fail(f"field 'target': {shown(given_target)} is not DRAM, L2 or L1 (name your own levels in "
                   "'targets:'; entries after the L1 entry name register files inside the PE)", "target")
    kind = raw.get("type")
    if kind == "bypass" or kind == "datatype":
        raise fail(f"type {kind}: not modelled (every tensor passes through L2 and L1)", "type")
    if kind not in ("temporal", "spatial"):
        raise fail(f"field 'type': expected temporal or spatial, got {shown(kind)}", "type")
    if kind == "spatial" and target != "L2":
        raise fail(f"a spatial entry spreads an L2 tile over PEs or clusters; target {target} cannot", "type")
    factors = {d: 1 for d in dims}
    given = raw.get("factors") or {}
    if isinstance(given, str):
        words = given.split()
        pairs = [w.split("=", 1) for w in words]
        if any(len(p) != 2 for p in pairs):
            raise fail(f"field 'factors': expected words D=F, got {shown(given)}", "factors")
    elif isinstance(given, dict):
        pairs = [[str(k), v] for k, v in given.items()]
    else:
        raise fail(f"field 'factors': expected D=F words or a mapping, got {shown(given)}", "factors")
    for raw_dim, value in pairs:
        dim = _dim_name(raw_dim, layer, dims)
        if dim is None:
            raise fail(f"field 'factors': {shown(raw_dim)} is not a loop dimension of a {layer.op.value} layer "
                       f"({', '.join(dims)})", "factors")
        # a whole number only: 2.9 is refused, not truncated
        if isinstance(value, str) and value.isdecimal() and len(value) <= MAX_FACTOR_DIGITS:
            factor = int(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            factor = value
        else:
            factor = 0
        if factor < 1:
            raise fail(f"field 'factors': {shown(raw_dim)}={shown(value)} is not a positive integer", "factors")
        factors[dim] = factor
    permutation = _permutation(raw.get("permutation"), layer, dims, fail)
    missing = [d for d in dims if factors[d] > 1 and d not in permutation]
    if missing and ((target != "L1" or pinned) and len([d for d in dims if factors[d] > 1]) > 1):
        raise fail(f"field 'permutation': give the order of {', '.join(missing)} (loops above 1)", "permutation")
    order = tuple(d for d in permutation) + tuple(d for d in dims if d not in permutation)
    fanout = raw.get("fanout")
    if fanout is not None and (kind != "spatial" or not isinstance(fanout, int) or isinstance(fanout, bool)
                               or fanout < prod(factors.values())):
        raise fail(f"field 'fanout': a spatial entry's sub-units, at least the product of its factors; got "
                   f"{shown(fanout)}", "fanout")
    return NestEntry(target, kind, factors, order, fanout, line)


def _permutation(raw: Any, layer: Layer, dims: Sequence[str], fail: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, list):
        words = list(raw)
    elif isinstance(raw, str):
        words = raw.split() if " " in raw.strip() or "'" in raw else list(raw.strip())
    else:
        raise fail(f"field 'permutation': expected dimension names, got {shown(raw)}", "permutation")
    out = []
    for w in words:
        dim = _dim_name(w, layer, dims) if isinstance(w, str) else None
        if dim is None:
            raise fail(f"field 'permutation': {shown(w)} is not a loop dimension of a {layer.op.value} layer "
                       f"({', '.join(dims)})", "permutation")
        if dim in out:
            raise fail(f"field 'permutation': {w} appears twice", "permutation")
        out.append(dim)
    return tuple(out)


def _check_order(entries: list[NestEntry], layer: Layer, path: str) -> None:
    rank = {"DRAM": 0, "L2": 1, "L1": 2}
    for a, b in zip(entries, entries[1:]):
        if rank[b.target] < rank[a.target]:
            raise InputError(f"layer {layer.name!r}: entry for {b.target} comes after one for {a.target}; list "
                             "entries outermost first (DRAM, then L2, then L1)", source=path, line=b.line)
    if [e.target for e in entries].count("DRAM") > 1:
        raise InputError(f"layer {layer.name!r}: more than one DRAM entry", source=path)
    last = entries[-1]
    if last.target != "L1" or [e.target for e in entries].count("L1") != 1:
        raise InputError(f"layer {layer.name!r}: the last entry must be the one L1 entry (one PE's tile)",
                         source=path, line=last.line)


def load_loopnest(path: str | Path) -> tuple[str, list[NestLayer]]:
    """Read a loop-nest mapping file."""
    return parse_loopnest(read_text(path, "loop-nest mapping file"), str(path))


# ----- writing ---------------------------------------------------------------------------------
def write_loopnest(name: str, layers: Sequence[NestLayer]) -> str:
    """The YAML text of a loop-nest mapping file (readable by :func:`parse_loopnest`)."""
    out = ["# accelsim loop-nest mapping: entries outermost first; each permutation lists its loops",
           "# innermost first (as Timeloop writes it). See README.md, Loop-nest mappings.",
           f"name: {yaml_scalar(name)}", "layers:"]
    for nl in layers:
        out.append("  - problem: {" + ", ".join(layer_fields(nl.layer)) + "}")
        if not any(e.target == "DRAM" for e in nl.entries):
            out.append("    # no DRAM entry: accelsim keeps as many of the top level's innermost loops in L2 as fit")
        out.append("    mapping:")
        entries = nl.entries if nl.inner_pins is None else (*nl.entries[:-1], *_pinned_entries(nl, nl.inner_pins))
        for e in entries:
            factors = " ".join(f"{d}={f}" for d, f in e.factors.items())
            perm = " ".join(d for d in e.permutation if e.factors[d] > 1)
            line = f"      - {{target: {e.target}, type: {e.kind}, factors: \"{factors}\""
            if perm and (e.target != "L1" or nl.inner_pins is not None):
                line += f", permutation: \"{perm}\""
            if e.fanout is not None:
                line += f", fanout: {e.fanout}"
            out.append(line + "}")
    return "\n".join(out) + "\n"


def _pinned_entries(nl: NestLayer, pins: InnerPins) -> list[NestEntry]:
    """The L1 entry (one PE's step tile) of a nest whose loops inside the step are pinned, as
    the L1 entry with L1's own loops and one entry per register file, outermost first; raises
    where an entry would need a dimension twice (a loop-nest entry has one loop per dimension)."""
    step = nl.entries[-1]
    dims = list(step.factors)
    files = [(lv.name, lv.loops) for lv in reversed(pins.levels)]  # outermost first
    inside = {d: prod(loop.trips for _, loops in files for loop in loops if loop.dim == d) for d in dims}
    for name, loops in [("L1", pins.outer), *files]:
        seen = [loop.dim for loop in loops]
        twice = next((d for d in seen if seen.count(d) > 1), None)
        if twice is not None or any(step.factors[d] % inside[d] for d in dims):
            raise MappingError(f"layer {nl.layer.name!r}: no loop-nest equivalent: the loops pinned to {name} "
                               + (f"split {twice} twice" if twice else "do not divide the step's tile"),
                               source=nl.source, reason="no_loopnest_equivalent")
    own = {d: step.factors[d] // inside[d] for d in dims}
    pinned = {loop.dim: loop.trips for loop in pins.outer}
    if any(d in pinned and own[d] != pinned[d] for d in dims):
        raise MappingError(f"layer {nl.layer.name!r}: no loop-nest equivalent: L1's pinned loops and the rest of "
                           "the step split one dimension", source=nl.source, reason="no_loopnest_equivalent")
    rest = [d for d in reversed(intra_step_order(nl.layer.loop_nest())) if d not in pinned]  # outermost last

    def entry(target: str, loops: Sequence[PinnedLoop], factors: dict[str, int], after: Sequence[str] = ()) -> NestEntry:
        order = tuple(loop.dim for loop in reversed(loops)) + tuple(after)
        return NestEntry(target, "temporal", factors, order + tuple(d for d in dims if d not in order))

    out = [entry("L1", pins.outer, own, rest)]
    for name, loops in files:
        factors = {d: 1 for d in dims} | {loop.dim: loop.trips for loop in loops}
        out.append(entry(name, loops, factors))
    return out
