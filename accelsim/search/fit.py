"""Repair of a genome whose tiles overflow a buffer (the co-search's tile repair).

DiGamma's hardware genes change the buffers under a layer's mapping, so a child often carries
tiles that no longer fit its L1 or L2; scored as they are, such a design is refused
(``l1_overflow``/``l2_overflow``) and its evaluation wasted. :func:`fit_tiles` shrinks the
tiles instead, as little as a greedy rule knows how:

* while the L2 tile (one level-0 iteration's, :func:`~accelsim.mapping.compile.nominal_tile_words`)
  needs more bytes than L2 holds, one level-0 tile drops to the largest allowed size of at most
  half of it: of the level's tiles, the one whose halving leaves the fewest L2 bytes (ties: the
  first in loop order; a parallel dimension's tile spread over idle sub-units may save nothing);
  inner tiles are then clipped to their new parents (:meth:`~accelsim.search.space.SearchSpace.repair`);
  a genome with an off-chip block (``--offchip-genes``) shrinks the block's tiles instead, the L2 tile;
* then, while one PE's tiles need more than L1 holds, the same at the innermost level, by L1 bytes.

Sizes come from the space's tile options, so the result stays in the space. Buffer needs count
double buffering where the hardware has it, as the legality check does. A genome that already
fits comes back unchanged; one that cannot fit even with every tile of the level at 1 comes back
with those tiles at 1 (still overflowing: the evaluator refuses it). Deterministic: no random
choice.
"""

from __future__ import annotations

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from dataclasses import replace

from accelsim.mapping.compile import buffer_needs_bytes, compile_mapping
from accelsim.search.genome import Gene, Genome
from accelsim.search.space import SearchSpace


OFFCHIP = -1  # the level index :func:`_shrink` reads as the genome's off-chip block


def buffer_needs(space: SearchSpace, genome: Genome, hw: HardwareSpec) -> tuple[int, int] | None:
    """(L1 bytes per PE, L2 bytes) ``genome`` needs on ``hw`` (None: it does not compile)."""
    try:
        cm = compile_mapping(space.layer, genome.directives(), space.num_pes, source="tile repair")
    except (InputError, MappingError):
        return None
    return buffer_needs_bytes(cm, hw.word_size_bytes, hw.l1.double_buffered, hw.l2.double_buffered,
                              hw.l2.bypassed)


def fit_tiles(space: SearchSpace, genome: Genome, hw: HardwareSpec) -> Genome:
    """``genome`` (in ``space``, on ``hw``'s PEs) with tiles shrunk until they fit L2 and L1
    (see the module docstring)."""
    # L2 (the off-chip block, else level 0), then L1 (the innermost level)
    for which, level in ((1, OFFCHIP if genome.offchip else 0), (0, len(genome.levels) - 1)):
        size = (hw.l1.size_bytes, hw.l2.size_bytes)[which]
        needs = buffer_needs(space, genome, hw)
        while needs is not None and needs[which] > size:
            step = _shrink(space, genome, level, hw, which)
            if step is None:
                break
            genome, needs = step
    return genome


def _shrink(space: SearchSpace, genome: Genome, level: int, hw: HardwareSpec,
            which: int) -> tuple[Genome, tuple[int, int]] | None:
    """Of the genomes with one tile of level ``level`` (:data:`OFFCHIP`: the off-chip block) at the
    largest allowed size of at most half of it (inner levels clipped), the one that needs the
    fewest bytes of buffer ``which`` (0: L1, 1: L2; ties: the first gene in loop order), with its
    needs; None when every tile of the level is at its least or none compiles."""
    parent = space.layer.loop_nest().dims if level == OFFCHIP else space.parents(genome)[level]
    block = genome.offchip if level == OFFCHIP else genome.levels[level]
    best: tuple[Genome, tuple[int, int]] | None = None
    for j, gene in enumerate(block):
        options = space.tile_options(gene.dim, parent[gene.dim])
        smaller = [t for t in options if t <= gene.tile // 2]
        if gene.tile <= min(options):
            continue
        genes = list(block)
        genes[j] = Gene(gene.dim, max(smaller) if smaller else min(options))
        if level == OFFCHIP:
            candidate = space.repair(replace(genome, offchip=tuple(genes)))
        else:
            levels = list(genome.levels)
            levels[level] = tuple(genes)
            candidate = space.repair(replace(genome, levels=tuple(levels)))
        needs = buffer_needs(space, candidate, hw)
        if needs is not None and (best is None or needs[which] < best[1][which]):
            best = (candidate, needs)
    return best
