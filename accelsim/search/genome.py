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

    def __post_init__(self) -> None:
        if not 1 <= len(self.levels) <= MAX_LEVELS:
            raise ValueError(f"a genome has 1 to {MAX_LEVELS} levels, got {len(self.levels)}")
        if len(self.clusters) != len(self.levels) - 1:
            raise ValueError(f"{len(self.levels)} levels need {len(self.levels) - 1} cluster sizes, "
                             f"got {len(self.clusters)}")
        for genes in self.levels:
            dims = [g.dim for g in genes]
            if not genes or len(set(dims)) != len(dims):
                raise ValueError(f"each level names every dimension once, got {' '.join(dims)}")
            if any(g.tile < 1 for g in genes):
                raise ValueError(f"tiles must be >= 1: {self.text()}")
        if any(c < 1 for c in self.clusters):
            raise ValueError(f"cluster sizes must be >= 1: {self.clusters}")

    def text(self) -> str:
        """``[K:1 C:64 ...] 64 [C:1 ...]``: levels in brackets, cluster sizes between them."""
        parts = []
        for i, genes in enumerate(self.levels):
            if i:
                parts.append(str(self.clusters[i - 1]))
            parts.append("[" + " ".join(f"{g.dim}:{g.tile}" for g in genes) + "]")
        return " ".join(parts)

    def directives(self) -> tuple[Directive, ...]:
        """The MAESTRO directives this genome decodes to (line numbers 0)."""
        out: list[Directive] = []
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
        levels = []
        for genes in self.levels:
            clipped = tuple(Gene(g.dim, min(g.tile, parent[g.dim])) for g in genes)
            parent.update({g.dim: g.tile for g in clipped})
            levels.append(clipped)
        return Genome(tuple(levels), self.clusters)


def genome_from_directives(layer: Layer, dataflow: tuple[Directive, ...] | list[Directive],
                           num_pes: int) -> Genome:
    """The genome of a mapping whose every level has one SpatialMap, preceded by no directive that
    loops, and whose windows advance by their size; InputError (saying which directive) for any
    other mapping. Read through the compiler: input windows become output windows, unmentioned
    dimensions whole; directives that do not loop (one window) may stand anywhere."""
    cm = compile_mapping(layer, dataflow, num_pes, check_legality=False)
    if len(cm.levels) > MAX_LEVELS:
        raise InputError(f"a genome has at most {MAX_LEVELS} levels; this mapping has {len(cm.levels)}")
    levels = []
    for i, level in enumerate(cm.levels):
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
    return Genome(tuple(levels), tuple(level.unit_pes for level in cm.levels[:-1]))
