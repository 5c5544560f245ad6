"""GAMMA-style genomes: a mapping as ordered (dimension, tile size) genes per cluster level.

A genome (Kao's thesis, Fig. 4.1/4.2) has one to three levels, outermost first. A level is an
ordered list of genes ``(dimension, tile)``, one per dimension of the layer's loop nest (in
output coordinates: ``Y'``/``X'``, so filter rows and output rows tile independently); the order
is the loop order and the first gene is the level's parallel dimension. Between two levels a
cluster size says how many PEs each sub-unit of the outer level holds (GAMMA's ``P``). A genome
decodes to MAESTRO directives::

    level [K:1 C:64 Y':3 ...], cluster 64, level [C:1 K:1 ...]
    ->  SpatialMap(1,1) K; TemporalMap(64,64) C; TemporalMap(3,3) Y'; ...
        Cluster(64,P); SpatialMap(1,1) C; TemporalMap(1,1) K; ...

An optional *off-chip block* (``--offchip-genes``; MARVEL's off-chip subspace) pins the L2 tile
and the order of the loops over L2 tiles: one gene ``(dimension, tile)`` per dimension, in the
inter-tile loop order, outermost first, with the array's PE count after it. It decodes as
:func:`accelsim.mapping.offchip.l2_tile_loops` builds MARVEL's loops: a top level of
``TemporalMap(T,T)`` loops and ``Cluster(num_pes)``, one unit of every PE, and the on-chip levels
tile the block's tile. The compiler's L2 tile is then one iteration of the block's loops (refused
with ``l2_overflow`` when it does not fit), or, by its capacity rule ("L2 and DRAM" in README),
a run of consecutive ones of its innermost loops when they fit together: the pin is a lower
bound, with the inter-tile order fixed, as for ``--mapper marvel`` and a loop-nest ``DRAM``
entry::

    {K:16 C:64 Y':7 X':7 R:3 S:3 N:1} 168 [K:1 C:64 ...]
    ->  TemporalMap(16,16) K; TemporalMap(64,64) C; ...; Cluster(168,P); SpatialMap(1,1) K; ...

Tiles are windows advancing by their own size, so every decoded genome covers each MAC exactly
once; what can still make it illegal is a cluster larger than its level's PEs, tiles that do not
fit L1 or L2, or a reduction dimension spread across PEs without a reduction network.
``genome_from_directives`` reads a mapping of that form back (through the compiler, so input
windows ``Y``/``X`` and unmentioned dimensions are read as the compiler reads them).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.errors import InputError
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.mapping.compile import compile_mapping
from accelsim.workload.ops import Layer

MAX_LEVELS = 3  # cluster levels of a genome (GAMMA's encoding: one to three)


@dataclass(frozen=True)
class Gene:
    """One dimension of one level: its tile (window) size, in the loop nest's coordinates."""

    dim: str
    tile: int


@dataclass(frozen=True)
class Genome:
    """``levels``: per level, outermost first, its genes in loop order (the first one is the
    parallel dimension); ``clusters[i]``: PEs per sub-unit of level ``i`` (one fewer than levels)."""

    levels: tuple[tuple[Gene, ...], ...]
    clusters: tuple[int, ...] = ()
    # the off-chip block (module docstring): the L2 tile in the inter-tile loop order, outermost
    # first (empty: none, the compiler's capacity rule alone decides the L2 tile), and the PEs of
    # the one unit below it (the whole array)
    offchip: tuple[Gene, ...] = ()
    offchip_pes: int = 0

    def __post_init__(self) -> None:
        if not 1 <= len(self.levels) <= MAX_LEVELS:
            raise ValueError(f"a genome has 1 to {MAX_LEVELS} levels, got {len(self.levels)}")
        if len(self.clusters) != len(self.levels) - 1:
            raise ValueError(f"{len(self.levels)} levels need {len(self.levels) - 1} cluster sizes, "
                             f"got {len(self.clusters)}")
        if bool(self.offchip) != (self.offchip_pes > 0):
            raise ValueError(f"an off-chip block needs its PE count (>= 1), got {self.offchip_pes}")
        for genes in (self.offchip, *self.levels) if self.offchip else self.levels:
            dims = [g.dim for g in genes]
            if not genes or len(set(dims)) != len(dims):
                raise ValueError(f"each level names every dimension once, got {' '.join(dims)}")
            if any(g.tile < 1 for g in genes):
                raise ValueError(f"tiles must be >= 1: {self.text()}")
        if any(c < 1 for c in self.clusters):
            raise ValueError(f"cluster sizes must be >= 1: {self.clusters}")

    def text(self) -> str:
        """``[K:1 C:64 ...] 64 [C:1 ...]``: levels in brackets, cluster sizes between them; an
        off-chip block first in braces with its PE count: ``{K:16 ...} 168 [K:1 ...]``."""
        parts = []
        if self.offchip:
            parts += ["{" + " ".join(f"{g.dim}:{g.tile}" for g in self.offchip) + "}", str(self.offchip_pes)]
        for i, genes in enumerate(self.levels):
            if i:
                parts.append(str(self.clusters[i - 1]))
            parts.append("[" + " ".join(f"{g.dim}:{g.tile}" for g in genes) + "]")
        return " ".join(parts)

    def directives(self) -> tuple[Directive, ...]:
        """The MAESTRO directives this genome decodes to (line numbers 0)."""
        out: list[Directive] = [MapDirective("temporal", g.tile, g.tile, g.dim, 0) for g in self.offchip]
        if self.offchip:
            out.append(ClusterDirective(self.offchip_pes, 0))
        for i, genes in enumerate(self.levels):
            if i:
                out.append(ClusterDirective(self.clusters[i - 1], 0))
            for j, g in enumerate(genes):
                out.append(MapDirective("spatial" if j == 0 else "temporal", g.tile, g.tile, g.dim, 0))
        return tuple(out)

    def normalized(self, layer: Layer) -> Genome:
        """Each tile clipped to its dimension's tile one level up (the layer's size at level 0),
        as the compiler clips it: the genome whose decoding reads back to itself."""
        parent = dict(layer.loop_nest().dims)
        offchip = tuple(Gene(g.dim, min(g.tile, parent[g.dim])) for g in self.offchip)
        parent.update({g.dim: g.tile for g in offchip})
        levels = []
        for genes in self.levels:
            clipped = tuple(Gene(g.dim, min(g.tile, parent[g.dim])) for g in genes)
            parent.update({g.dim: g.tile for g in clipped})
            levels.append(clipped)
        return Genome(tuple(levels), self.clusters, offchip, self.offchip_pes)

    def l2_tile(self, layer: Layer) -> dict[str, int]:
        """The tile one level-0 iteration spans, per dimension: the off-chip block's tiles (the
        layer's sizes where there is none; clipped as the compiler clips them)."""
        dims = dict(layer.loop_nest().dims)
        return {**dims, **{g.dim: min(g.tile, dims[g.dim]) for g in self.offchip}}


def genome_from_directives(layer: Layer, dataflow: tuple[Directive, ...] | list[Directive],
                           num_pes: int) -> Genome:
    """The genome of a mapping whose every level has one SpatialMap, preceded by no directive that
    loops, and whose windows advance by their size, with an off-chip block when its top level is
    loops only over one unit of all ``num_pes`` PEs above further levels; InputError (saying which directive) for any
    other mapping. Read through the compiler: input windows become output windows, unmentioned
    dimensions whole; directives that do not loop (one window) may stand anywhere."""
    cm = compile_mapping(layer, dataflow, num_pes, check_legality=False)
    top = cm.levels[0]
    # an off-chip block: a top level of loops only, over one unit of every PE, above on-chip levels
    offchip = len(cm.levels) > 1 and not top.spatial and top.units == 1 and top.unit_pes == num_pes
    block = []
    if offchip:
        for ld in top.directives:
            if ld.windows > 1 and ld.offset != ld.size:
                raise InputError(f"{ld.written}: an off-chip block's windows advance by their own size "
                                 f"({ld.dim}: size {ld.size}, offset {ld.offset})", line=ld.line)
            block.append(Gene(ld.dim, ld.size))
    onchip = cm.levels[1:] if offchip else cm.levels
    if len(onchip) > MAX_LEVELS:
        raise InputError(f"a genome has at most {MAX_LEVELS} levels; this mapping has {len(onchip)}")
    levels = []
    for i, level in enumerate(onchip):
        spatial = level.spatial
        if len(spatial) != 1:
            where = spatial[1] if spatial else level.directives[0]
            raise InputError(f"{where.written}: a genome level has exactly one SpatialMap, level {i} has "
                             f"{len(spatial)}", line=where.line)
        first = level.directives.index(spatial[0])
        looping = [ld for ld in level.directives[:first] if ld.windows > 1]
        if looping:
            raise InputError(f"{looping[0].written}: a genome level loops over its SpatialMap first; this "
                             f"directive loops before {spatial[0].written} (level {i})", line=looping[0].line)
        genes = []
        for ld in (spatial[0], *level.directives[:first], *level.directives[first + 1:]):
            if ld.windows > 1 and ld.offset != ld.size:
                raise InputError(f"{ld.written}: a genome's windows advance by their own size "
                                 f"(level {i}, {ld.dim}: size {ld.size}, offset {ld.offset})", line=ld.line)
            genes.append(Gene(ld.dim, ld.size))
        levels.append(tuple(genes))
    return Genome(tuple(levels), tuple(level.unit_pes for level in onchip[:-1]), tuple(block),
                  num_pes if offchip else 0)
