"""The space of genomes a mapper searches: tile sizes, cluster sizes, parallel dimensions, levels.

A :class:`SearchSpace` says which tile sizes each dimension may take (by default its divisors
and the powers of two below it, and its full size), which cluster sizes (PEs per sub-unit) a
level may have (by default the divisors of the PE count and the powers of two below it,
including 1: a one-PE level tiles a PE's work in time), which dimensions may be parallel, and
how many levels a genome has. A tile is never larger than the same dimension's tile one level
up, and a cluster never larger than the one above it. With ``offchip`` every random genome also
has an off-chip block (:mod:`accelsim.search.genome`: the L2 tile and the inter-tile loop order,
tiles from the same sizes, the order a random permutation) above its levels, whose tiles are
then the level-0 parents. Every mapper draws from and stays in one
space, so their results compare.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from accelsim.search.genome import MAX_LEVELS, Gene, Genome
from accelsim.workload.ops import Layer


def default_sizes(n: int) -> tuple[int, ...]:
    """Divisors of ``n`` and powers of two below it, ascending (``n`` included)."""
    sizes = {d for d in range(1, int(n ** 0.5) + 1) if n % d == 0}
    sizes |= {n // d for d in sizes}
    p = 1
    while p < n:
        sizes.add(p)
        p *= 2
    return tuple(sorted(sizes))


@dataclass(frozen=True)
class SearchSpace:
    """Genomes of ``layer`` on ``num_pes`` PEs with ``min_levels``..``max_levels`` levels (1-3),
    tiles from ``tiles[dim]``, cluster sizes from ``clusters`` and parallel dimensions from
    ``spatial_dims``."""

    layer: Layer
    num_pes: int
    tiles: Mapping[str, tuple[int, ...]]
    clusters: tuple[int, ...]
    spatial_dims: tuple[str, ...]
    min_levels: int = 1
    max_levels: int = 3
    offchip: bool = False  # random genomes carry an off-chip block (--offchip-genes)

    def __post_init__(self) -> None:
        dims = self.layer.loop_nest().dims
        if not 1 <= self.min_levels <= self.max_levels <= MAX_LEVELS:
            raise ValueError(f"levels must satisfy 1 <= min <= max <= {MAX_LEVELS}, got "
                             f"{self.min_levels}..{self.max_levels}")
        if set(self.tiles) != set(dims):
            raise ValueError(f"tiles must name every dimension of {self.layer.name}: {' '.join(dims)}")
        for dim, sizes in self.tiles.items():
            if not sizes or any(not 1 <= t <= dims[dim] for t in sizes):
                raise ValueError(f"tile sizes of {dim} must lie in 1..{dims[dim]}: {sizes}")
        if any(not 1 <= c < self.num_pes for c in self.clusters):
            raise ValueError(f"cluster sizes must lie in 1..{self.num_pes - 1}: {self.clusters}")
        if not self.spatial_dims or not set(self.spatial_dims) <= set(dims):
            raise ValueError(f"parallel dimensions must be dimensions of {self.layer.name}: {self.spatial_dims}")

    @classmethod
    def default(cls, layer: Layer, num_pes: int, min_levels: int = 1, max_levels: int = 3,
                offchip: bool = False) -> SearchSpace:
        """Every dimension's divisors and powers of two as tiles, the PE count's as clusters,
        every dimension larger than 1 as a parallel dimension."""
        dims = layer.loop_nest().dims
        clusters = tuple(c for c in default_sizes(num_pes) if c < num_pes) or (1,)
        spatial = tuple(d for d, n in dims.items() if n > 1) or tuple(dims)
        return cls(layer, num_pes, {d: default_sizes(n) for d, n in dims.items()}, clusters, spatial,
                   min_levels, max_levels, offchip)

    @cached_property
    def sizes(self) -> Mapping[str, int]:
        """Each dimension's size (the layer's loop nest, lowered once: the mappers ask for it
        with every genome they vary); read it, copy it to change it."""
        return dict(self.layer.loop_nest().dims)

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(self.sizes)

    def tile_options(self, dim: str, parent: int) -> tuple[int, ...]:
        """Tile sizes of ``dim`` allowed under a parent tile of ``parent`` (each answer kept: a
        mapper asks again for every gene it varies or repairs)."""
        key = (dim, parent)
        if key not in self._tile_options:
            self._tile_options[key] = tuple(t for t in self.tiles[dim] if t <= parent)
        return self._tile_options[key]

    @cached_property
    def _tile_options(self) -> dict[tuple[str, int], tuple[int, ...]]:
        return {}

    def cluster_options(self, outer: int) -> tuple[int, ...]:
        """Cluster sizes allowed inside a level whose sub-units hold ``outer`` PEs each (the
        whole array for level 0): smaller than ``outer`` (each answer kept, as tile sizes are)."""
        if outer not in self._cluster_options:
            self._cluster_options[outer] = tuple(c for c in self.clusters if c < outer)
        return self._cluster_options[outer]

    @cached_property
    def _cluster_options(self) -> dict[int, tuple[int, ...]]:
        return {}

    def parents(self, genome: Genome) -> list[dict[str, int]]:
        """Per level, each dimension's tile one level up (at level 0 the L2 tile: the layer's size
        without an off-chip block)."""
        parent = genome.l2_tile(self.layer)
        out = []
        for genes in genome.levels:
            out.append(dict(parent))
            parent.update({g.dim: g.tile for g in genes})
        return out

    def random_level(self, rng: random.Random, parent: Mapping[str, int]) -> tuple[Gene, ...]:
        """A level: a parallel dimension first, the others in random order, random tiles."""
        first = rng.choice(self.spatial_dims)
        rest = [d for d in self.dims if d != first]
        rng.shuffle(rest)
        return tuple(Gene(d, rng.choice(self.tile_options(d, parent[d]))) for d in (first, *rest))

    def random_genome(self, rng: random.Random, levels: int | None = None) -> Genome:
        """A genome of ``levels`` levels (default: a random count in the space's range)."""
        count = levels if levels is not None else rng.randint(self.min_levels, self.max_levels)
        parent = dict(self.sizes)
        offchip = self.random_offchip(rng) if self.offchip else ()
        parent.update({g.dim: g.tile for g in offchip})
        outer = self.num_pes
        genes_per_level, clusters = [], []
        for i in range(count):
            if i:
                options = self.cluster_options(outer)
                if not options:
                    break
                outer = rng.choice(options)
                clusters.append(outer)
            genes = self.random_level(rng, parent)
            genes_per_level.append(genes)
            parent.update({g.dim: g.tile for g in genes})
        return Genome(tuple(genes_per_level), tuple(clusters), offchip, self.num_pes if offchip else 0)

    def random_offchip(self, rng: random.Random) -> tuple[Gene, ...]:
        """An off-chip block: every dimension in a random order, each a random tile."""
        dims = self.sizes
        order = list(self.dims)
        rng.shuffle(order)
        return tuple(Gene(d, rng.choice(self.tile_options(d, dims[d]))) for d in order)

    def repair(self, genome: Genome) -> Genome:
        """``genome`` with every tile clipped to the largest allowed size under its parent (a parent is
        the full size or an allowed size, so some size fits) and
        every cluster to the largest allowed size under the one above (used after crossover and
        mutation change a parent); an off-chip block's tiles under the layer's sizes, its PE count
        the array's. A genome of the space comes back as it is (the same object)."""
        parent = dict(self.sizes)
        offchip = self._clipped(genome.offchip, parent)
        outer = self.num_pes
        levels, clusters = [], []
        for i, genes in enumerate(genome.levels):
            if i:
                options = self.cluster_options(outer)
                if not options:  # no PEs left to split: the inner levels go
                    break
                fitting = [c for c in options if c <= genome.clusters[i - 1]]
                outer = max(fitting) if fitting else min(options)
                clusters.append(outer)
            levels.append(self._clipped(genes, parent))
        repaired = (tuple(levels), tuple(clusters), offchip, self.num_pes if offchip else 0)
        if repaired == (genome.levels, genome.clusters, genome.offchip, genome.offchip_pes):
            return genome
        return Genome(*repaired)

    def _clipped(self, genes: tuple[Gene, ...], parent: dict[str, int]) -> tuple[Gene, ...]:
        """``genes`` (one level, or the off-chip block) with each tile the largest allowed size of
        at most it under ``parent`` (the same tuple when no tile changes); ``parent`` then holds
        their tiles."""
        tiles = []
        for g in genes:
            key = (g.dim, parent[g.dim], g.tile)
            if key not in self._clips:
                options = self.tile_options(*key[:2])
                self._clips[key] = max((t for t in options if t <= g.tile), default=options[0])
            tiles.append(self._clips[key])
            parent[g.dim] = tiles[-1]
        if all(t == g.tile for g, t in zip(genes, tiles)):
            return genes
        return tuple(Gene(g.dim, t) for g, t in zip(genes, tiles))

    @cached_property
    def _clips(self) -> dict[tuple[str, int, int], int]:
        """(dimension, parent tile, tile) -> the tile clipped (what :meth:`_clipped` found)."""
        return {}
