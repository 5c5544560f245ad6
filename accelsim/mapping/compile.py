"""Compile a mapping (MAESTRO directives) + a layer + hardware into one tile schedule.

The schedule is a hierarchy of levels split at ``Cluster`` directives. Level 0 maps across
the top-level clusters (or across PEs when there is no cluster), the last level across the PEs
of one innermost cluster. Every level has exactly one directive per canonical loop-nest
dimension (dimensions the mapping does not mention get ``TemporalMap(extent, extent)``).
Directives on input rows/cols (``Y``/``X``) are translated into output coordinates
(``Y'``/``X'``): with the filter whole at that level, ``TemporalMap(sY, oY) Y`` covers
``(sY - R) / stride + 1`` output rows and advances ``oY / stride`` rows; when ``Y`` and ``R``
are both spatially mapped at one level (row-stationary), the output window advances by
``(oY - oR) / stride`` per sub-unit (0: all sub-units work on the same output rows).

Trip counts follow the nominal (full) tile sizes, so every sub-unit runs the same loop nest in
lock-step; where a ragged parent tile is smaller, windows are clipped and sub-units with
nothing left to do idle (they still cost cycles).

The flattened nest (``loops``, outermost first) is what the simulator executes step by step
(see :mod:`accelsim.mapping.geometry`) and what the analytical model reasons about in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil, prod
from typing import Literal, Mapping, Sequence

from accelsim.errors import MappingError
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.workload.operators import Window
from accelsim.workload.ops import Layer, LoopNest


@dataclass(frozen=True)
class LevelDirective:
    """One canonical-dimension directive at one level (sizes in canonical coordinates)."""

    dim: str
    kind: Literal["spatial", "temporal"]
    size: int
    offset: int  # 0 only for spatial: every sub-unit gets the same window
    nominal_extent: int  # extent of the parent tile this directive splits
    windows: int  # number of windows over the nominal extent
    written: str  # the directive as the user wrote it (for messages)
    line: int | None


@dataclass(frozen=True)
class Level:
    """One cluster level: ``units`` sub-units of ``unit_pes`` PEs each."""

    units: int
    unit_pes: int
    directives: tuple[LevelDirective, ...]  # loop order, outermost first

    @property
    def spatial(self) -> tuple[LevelDirective, ...]:
        return tuple(d for d in self.directives if d.kind == "spatial")

    @property
    def spatial_windows(self) -> int:
        """Windows handed out across sub-units per fold cycle (max over zipped spatial maps)."""
        return max((d.windows for d in self.spatial), default=1)

    @property
    def folds(self) -> int:
        return ceil(self.spatial_windows / self.units) if self.spatial else 1


@dataclass(frozen=True)
class Loop:
    """One loop of the flattened nest: a temporal loop over ``dims[0]`` or the fold loop of a
    level's spatial maps (``dims`` = the zipped spatially mapped dimensions)."""

    level: int
    kind: Literal["temporal", "fold"]
    dims: tuple[str, ...]
    trips: int


@dataclass(frozen=True)
class PinnedLoop:
    """One loop of the nest inside a PE's step: its dimension and trips (a part of the
    dimension's extent in the step box when the dimension is split over several loops)."""

    dim: str
    trips: int


@dataclass(frozen=True)
class PinnedLevel:
    """The loops one register file adds to those of the register files below it (outermost
    first): it holds these and every loop below."""

    name: str
    loops: tuple[PinnedLoop, ...]


@dataclass(frozen=True)
class InnerPins:
    """A mapping's own nest inside a PE's step (Timeloop's loops at the levels inside a PE):
    ``outer``, the loops outside every register file (L1's own, outermost first), and
    ``levels``, innermost register file first, what each adds. The trips of a dimension's loops
    multiply to its extent in the step box."""

    outer: tuple[PinnedLoop, ...]
    levels: tuple[PinnedLevel, ...]


@dataclass(frozen=True)
class CompiledMapping:
    """The tile schedule of one layer on one array; ``inner_pins``: the loops inside a PE's
    step the mapping pins to its register files (None: the default rule of
    :mod:`accelsim.mapping.inner_levels`)."""

    layer: Layer
    nest: LoopNest
    levels: tuple[Level, ...]
    loops: tuple[Loop, ...]
    num_pes: int
    source: str
    inner_pins: InnerPins | None = None

    @property
    def used_pes(self) -> int:
        return self.levels[0].units * self.levels[0].unit_pes

    @property
    def steps(self) -> int:
        return prod(loop.trips for loop in self.loops)

    @property
    def steps_per_top_step(self) -> int:
        """Steps in one iteration of all level-0 loops (one L2 tile)."""
        return prod(loop.trips for loop in self.loops if loop.level > 0)

    def loop_kind_flags(self) -> list[tuple[bool, bool]]:
        """For each loop: (changes the output tile, changes the reduction window)."""
        red = set(self.nest.reduction_dims)
        flags = []
        for loop in self.loops:
            lvl = self.levels[loop.level]
            moving = [d for d in lvl.directives if d.dim in loop.dims and (d.kind == "temporal" or d.offset > 0)]
            flags.append(
                (any(d.dim not in red for d in moving), any(d.dim in red for d in moving))
            )
        return flags


def _checked_layouts(nest: LoopNest, layouts: Mapping[str, tuple[int, ...]], source: str) -> dict[str, tuple[int, ...]]:
    """``layouts`` after checking each names a tensor and permutes its axes (MappingError)."""
    for role, order in layouts.items():
        if role not in nest.tensors:
            raise MappingError(f"DRAM layout for {role!r}: the layer has no such tensor (its tensors: "
                               f"{', '.join(nest.tensors)})", source=source)
        if sorted(order) != list(range(len(nest.tensors[role]))):
            raise MappingError(f"DRAM layout {list(order)} for {role!r}: expected a permutation of its "
                               f"{len(nest.tensors[role])} axes 0..{len(nest.tensors[role]) - 1}", source=source)
    return dict(layouts)


def _fmt(d: MapDirective) -> str:
    kind = "SpatialMap" if d.kind == "spatial" else "TemporalMap"
    return f"{kind}({d.size},{d.offset}) {d.dim}"


def _windows(extent: int, size: int, offset: int) -> int:
    if offset == 0 or extent <= size:
        return 1
    return ceil((extent - size) / offset) + 1


def compile_mapping(
    layer: Layer,
    dataflow: Sequence[Directive],
    num_pes: int,
    source: str = "<mapping>",
    check_legality: bool = True,
    dram_layouts: Mapping[str, tuple[int, ...]] | None = None,
) -> CompiledMapping:
    """Build the tile schedule; raise MappingError (with file and line) for illegal mappings.

    ``check_legality=False`` (``--unchecked``, for testing mappers) skips the coverage checks
    (windows that overlap, leave gaps or only cover a diagonal), so functional execution can
    show what such a mapping computes; malformed mappings are still refused.
    ``dram_layouts``: a DRAM layout (axis indices, outermost first) per tensor role replacing the
    operator's (channel-last) one; the DRAM runs both timing models count follow it."""
    nest = layer.loop_nest()
    if dram_layouts:
        nest = replace(nest, layouts={**nest.layouts, **_checked_layouts(nest, dram_layouts, source)})
    dims = nest.dims
    # ---- split into levels -------------------------------------------------------------
    groups: list[list[MapDirective]] = [[]]
    clusters: list[ClusterDirective] = []
    for d in dataflow:
        if isinstance(d, ClusterDirective):
            clusters.append(d)
            groups.append([])
        else:
            groups[-1].append(d)
    units: list[int] = []
    unit_pes: list[int] = []
    outer = num_pes
    for c in clusters:
        if c.size > outer:
            raise MappingError(
                f"Cluster({c.size},P) is larger than the {outer} PEs available at this level "
                f"(the array has {num_pes} PEs)",
                source=source, line=c.line, reason="cluster_too_big",
            )
        units.append(outer // c.size)
        unit_pes.append(c.size)
        outer = c.size
    units.append(outer)
    unit_pes.append(1)
    # ---- per level: canonical directives -----------------------------------------------
    extents = dict(dims)  # nominal parent extent per canonical dim
    levels: list[Level] = []
    for lvl_index, written in enumerate(groups):
        by_dim: dict[str, MapDirective] = {}
        for d in written:
            canon = _canonical_name(layer, dims, d, source)
            if canon in by_dim:
                raise MappingError(
                    f"dimension {d.dim} is mapped twice at the same cluster level "
                    f"(first at line {by_dim[canon].line})",
                    source=source, line=d.line, reason="duplicate_dim",
                )
            by_dim[canon] = d
        canon_dirs: dict[str, LevelDirective] = {}
        for canon, d in by_dim.items():
            if layer.window_of(d.dim) is not None:
                continue  # translated below, once the filter directive is known
            if d.size > dims[canon]:
                raise MappingError(
                    f"{_fmt(d)}: size {d.size} is larger than dimension {d.dim} ({dims[canon]})",
                    source=source, line=d.line, reason="size_exceeds_dim",
                )
            canon_dirs[canon] = _directive(canon, d.kind, min(d.size, extents[canon]), d.offset,
                                           extents[canon], _fmt(d), d.line)
        for canon, d in by_dim.items():
            window = layer.window_of(d.dim)
            if window is not None:
                canon_dirs[canon] = _translate_window(layer, window, d, canon_dirs, extents, source)
        # default: whole extent, temporally
        ordered: list[LevelDirective] = [canon_dirs[_canonical_name(layer, dims, d, source)] for d in written]
        for dim in dims:
            if dim not in canon_dirs:
                ordered.append(
                    LevelDirective(dim, "temporal", extents[dim], extents[dim], extents[dim], 1, f"(whole {dim})", None)
                )
        level = Level(units[lvl_index], unit_pes[lvl_index], tuple(ordered))
        if check_legality:
            _check_coverage(level, source)
        levels.append(level)
        for ld in ordered:
            extents[ld.dim] = ld.size
    # ---- flatten the loops ---------------------------------------------------------------
    loops: list[Loop] = []
    for li, level in enumerate(levels):
        fold_done = False
        for ld in level.directives:
            if ld.kind == "temporal":
                if ld.windows > 1:
                    loops.append(Loop(li, "temporal", (ld.dim,), ld.windows))
            elif not fold_done:
                fold_done = True
                if level.folds > 1:
                    loops.append(Loop(li, "fold", tuple(s.dim for s in level.spatial), level.folds))
    return CompiledMapping(layer, nest, tuple(levels), tuple(loops), num_pes, source)


def _canonical_name(layer: Layer, dims: Mapping[str, int], d: MapDirective, source: str) -> str:
    """The loop nest's name of ``d``'s dimension (``dims``: the nest's) or MappingError."""
    window = layer.window_of(d.dim)
    if window is not None:
        return window.output_dim
    if d.dim in dims:
        return d.dim
    raise MappingError(
        f"{_fmt(d)}: unknown dimension {d.dim} for a {layer.op.value} layer; expected one of "
        + ", ".join(sorted(set(dims) | {w.input_dim for w in layer.operator.windows})),
        source=source, line=d.line, reason="unknown_dim",
    )


def _translate_window(
    layer: Layer,
    window: Window,
    d: MapDirective,
    canon_dirs: dict[str, LevelDirective],
    extents: dict[str, int],
    source: str,
) -> LevelDirective:
    """Turn a directive on input rows/cols (``window``'s input dimension) into one on output
    rows/cols."""
    out_dim, filt_dim, stride = window.output_dim, window.filter_dim, layer.stride(window)
    full_input = layer.sizes[d.dim]
    if d.size > full_input:
        raise MappingError(
            f"{_fmt(d)}: size {d.size} is larger than dimension {d.dim} ({full_input})",
            source=source, line=d.line, reason="size_exceeds_dim",
        )
    filt = canon_dirs.get(filt_dim) if filt_dim else None
    filt_extent = extents[filt_dim] if filt_dim else 1
    extent = extents[out_dim]
    # zipped: the filter window moves across sub-units together with the input window
    zipped = filt if filt is not None and filt.kind == "spatial" and d.kind == "spatial" and filt.offset > 0 else None
    if filt is not None and filt.size < filt.nominal_extent and zipped is None:
        raise MappingError(
            f"{_fmt(d)}: the filter dimension {filt_dim} is split at this cluster level "
            f"({filt.written}, line {filt.line}); {d.dim} can then only be mapped as a "
            f"SpatialMap together with a SpatialMap on {filt_dim} (row-stationary style)",
            source=source, line=d.line, reason="filter_split",
        )
    held = zipped.size if zipped else filt_extent  # filter rows/cols inside each input window
    if d.size < held:
        what = f"its {filt_dim} window ({held})" if zipped else f"the whole filter ({filt_dim}={held})"
        hint = f"the {filt_dim} window" if zipped else f"Sz({filt_dim})"
        raise MappingError(
            f"{_fmt(d)}: a window of {d.size} input rows/cols cannot hold {what}; "
            f"use a size of at least {hint}",
            source=source, line=d.line, reason="window_too_small",
        )
    size = min((d.size - held) // stride + 1, extent)
    advance = d.offset - (zipped.offset if zipped else 0)  # input rows per window, net of the filter's
    if advance < 0 or (advance % stride and _windows(extent, size, max(1, advance // stride)) > 1):
        raise MappingError(
            f"{_fmt(d)}: its windows advance by {advance} input rows/cols"
            + (f" relative to {zipped.written}" if zipped else "")
            + f", which is not a multiple of the stride {stride}",
            source=source, line=d.line, reason="stride",
        )
    return _directive(out_dim, d.kind, size, advance // stride, extent, _fmt(d), d.line)


def _directive(dim: str, kind: Literal["spatial", "temporal"], size: int, offset: int, extent: int, written: str,
               line: int | None) -> LevelDirective:
    """A canonical directive; a SpatialMap whose one window covers the whole extent is shared
    by every sub-unit (offset 0), as nothing is left for a second window."""
    windows = _windows(extent, size, offset)
    if kind == "spatial" and windows == 1:
        offset = 0
    return LevelDirective(dim, kind, size, offset, extent, windows, written, line)


def _check_coverage(level: Level, source: str) -> None:
    """Every point of the parent tile is covered exactly once by this level's windows."""
    for ld in level.directives:
        if ld.offset == 0:
            if ld.size < ld.nominal_extent:
                raise MappingError(
                    f"{ld.written}: with offset 0 every sub-unit gets the first {ld.size} of "
                    f"{ld.nominal_extent} {ld.dim}; the rest would never be computed",
                    source=source, line=ld.line, reason="coverage",
                )
            continue
        if ld.windows > 1 and ld.offset < ld.size:
            raise MappingError(
                f"{ld.written}: windows of {ld.size} advancing by {ld.offset} overlap, so some "
                f"MACs would be computed twice (in output coordinates {ld.dim}: size {ld.size}, "
                f"offset {ld.offset})",
                source=source, line=ld.line, reason="overlap",
            )
        if ld.windows > 1 and ld.offset > ld.size:
            raise MappingError(
                f"{ld.written}: windows of {ld.size} advancing by {ld.offset} leave gaps, so some "
                f"MACs would never be computed (in output coordinates {ld.dim}: size {ld.size}, "
                f"offset {ld.offset})",
                source=source, line=ld.line, reason="gap",
            )
    moving = [ld for ld in level.spatial if ld.offset > 0 and ld.windows > 1]
    if len(moving) > 1:
        names = " and ".join(ld.written for ld in moving)
        raise MappingError(
            f"{names} advance together across sub-units (sub-unit i gets window i of each), so "
            "only a diagonal of their combinations would be computed; map one of them "
            "temporally or at another cluster level",
            source=source, line=moving[1].line, reason="diagonal",
        )


def _footprint(nest: LoopNest, role: str, sizes: dict[str, int]) -> int:
    """Words of tensor ``role`` touched by a box of ``sizes`` per dimension."""
    return prod(nest.extents(role, sizes))


def nominal_tile_words(cm: CompiledMapping) -> tuple[dict[str, int], dict[str, int]]:
    """Largest per-PE tile and largest L2 tile of each tensor, in words.

    The PE tile is the innermost level's window sizes; the L2 tile is the union of the
    level-0 windows of all top-level sub-units. Full windows are the largest (edges only
    shrink), so these are the buffer needs of the mapping.
    """
    pe = {ld.dim: ld.size for ld in cm.levels[-1].directives}
    l0 = cm.levels[0]
    used = min(l0.units, l0.spatial_windows) if l0.spatial else 1
    top = {}
    for ld in l0.directives:
        span = ld.size if ld.kind == "temporal" or ld.offset == 0 else ld.size + (used - 1) * ld.offset
        top[ld.dim] = min(span, ld.nominal_extent)
    roles = cm.nest.tensors
    return ({r: _footprint(cm.nest, r, pe) for r in roles}, {r: _footprint(cm.nest, r, top) for r in roles})


def _needs(words: dict[str, int], word_size_bytes: int, double: bool) -> int:
    return sum(words.values()) * word_size_bytes * (2 if double else 1)


def _l2_tile_words(cm: CompiledMapping, l2_bypass: frozenset[str]) -> tuple[dict[str, int], dict[str, int]]:
    """:func:`nominal_tile_words`, the L2 tile without the tensors L2 bypasses (they take no L2 space)."""
    pe, top = nominal_tile_words(cm)
    return pe, {r: w for r, w in top.items() if r not in l2_bypass}


def buffer_needs_bytes(cm: CompiledMapping, word_size_bytes: int, l1_double: bool, l2_double: bool,
                       l2_bypass: frozenset[str] = frozenset()) -> tuple[int, int]:
    """(L1 bytes per PE, L2 bytes) the mapping needs, doubled where double-buffered; the
    tensors in ``l2_bypass`` (``hw.l2.bypassed``) take no L2 space."""
    pe, top = _l2_tile_words(cm, l2_bypass)
    return _needs(pe, word_size_bytes, l1_double), _needs(top, word_size_bytes, l2_double)


@dataclass(frozen=True)
class BufferOverflow:
    """Tiles that do not fit one buffer: ``buffer`` (``L1``: one PE's tiles, ``L2``: one
    level-0 iteration's), the bytes needed and available, and the message users see."""

    buffer: Literal["L1", "L2"]
    need_bytes: int
    size_bytes: int
    message: str

    @property
    def reason(self) -> str:
        """The :class:`MappingError` reason code: ``l1_overflow`` or ``l2_overflow``."""
        return f"{self.buffer.lower()}_overflow"


def check_fits(cm: CompiledMapping, l1_bytes: int, l2_bytes: int, word_size_bytes: int,
               l1_double: bool, l2_double: bool, l2_bypass: frozenset[str] = frozenset()) -> list[BufferOverflow]:
    """Buffers (empty if none) whose tiles do not fit, L1 first, one message each; the tensors
    in ``l2_bypass`` take no L2 space."""
    problems = []
    buffers: tuple[Literal["L1", "L2"], ...] = ("L1", "L2")
    for level, words, size, double in zip(buffers, _l2_tile_words(cm, l2_bypass), (l1_bytes, l2_bytes),
                                          (l1_double, l2_double)):
        need = _needs(words, word_size_bytes, double)
        if need > size:
            holder = "each PE needs" if level == "L1" else "the L2 tile needs"
            shown = ", ".join(f"{role} {words[role]}" for role in ("input", "weight", "output") if role in words)
            problems.append(BufferOverflow(level, need, size,
                f"{level} overflow: {holder} {need} bytes ({shown} words{', double-buffered' if double else ''}) "
                f"but {level} has {size} bytes"
            ))
    return problems


def check_reduction_support(cm: CompiledMapping, reduction_network: bool) -> None:
    """A mapping that reduces partial sums across PEs needs a reduction network (MappingError,
    reason ``no_reduction_network``, when ``reduction_network`` is False)."""
    if reduction_network:
        return
    red = set(cm.nest.reduction_dims)
    for level in cm.levels:
        for ld in level.spatial:
            if ld.dim in red and ld.offset > 0 and ld.windows > 1 and level.units > 1:
                raise MappingError(
                    f"{ld.written} spreads the reduction dimension {ld.dim} across PEs, but the "
                    "hardware has no reduction network (reduction_noc.kind: none); partial sums "
                    "of one output would never meet",
                    source=cm.source, line=ld.line, reason="no_reduction_network",
                )
