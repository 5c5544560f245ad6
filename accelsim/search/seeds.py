"""Where a search starts: the named styles' mappings of a layer on a design, and the genomes
among them (a style's mapping is a genome when every level has one SpatialMap and its windows
advance by their size). The mapping search (:mod:`accelsim.search.session`) scores them first
and seeds GAMMA with the genomes; the co-search (:mod:`accelsim.search.cosearch`) starts its
first generation from them; the co-search report seeds GAMMA on its fixed designs the same way.

A style whose top level is loops only over one unit of every PE reads back as a genome with an
off-chip block (:mod:`accelsim.search.genome`). Such a genome belongs only to a space with
off-chip genes (``--offchip-genes``): in any other space it is no genome (the style is still
scored as a seed), so a search without those genes never carries a block.
"""

from __future__ import annotations

from collections.abc import Sequence

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import Directive
from accelsim.mapping.styles import STYLES, style_mapping
from accelsim.search.genome import Genome, genome_from_directives
from accelsim.search.space import SearchSpace
from accelsim.workload.ops import Layer


def named_style_seeds(layer: Layer, hw: HardwareSpec) -> dict[str, tuple[Directive, ...]]:
    """The mapping of ``layer`` in each named style that can map it on ``hw``, by style (in the
    order of :data:`~accelsim.mapping.styles.STYLES`)."""
    seeds = {}
    for style in STYLES:
        try:
            seeds[style] = tuple(style_mapping(style, layer, hw))
        except (InputError, MappingError):
            continue  # this style cannot map this layer on this hardware
    return seeds


def style_seeds(layer: Layer, hw: HardwareSpec) -> list[tuple[Directive, ...]]:
    """The mappings of ``layer`` in each named style that can map it on ``hw``: where a search
    starts, so that its best is never worse than the best named style under the scoring model."""
    return list(named_style_seeds(layer, hw).values())


def genome_of(space: SearchSpace, dataflow: Sequence[Directive]) -> Genome | None:
    """The genome of ``space`` that ``dataflow`` is (:func:`~accelsim.search.genome.genome_from_directives`
    on the space's layer and PEs), or None where it is not one (a genome with an off-chip block
    in a space without off-chip genes included) or does not compile."""
    try:
        genome = genome_from_directives(space.layer, tuple(dataflow), space.num_pes)
    except (InputError, MappingError):
        return None
    return genome if space.offchip or not genome.offchip else None


def seed_genomes(space: SearchSpace, dataflows: Sequence[Sequence[Directive]]) -> tuple[Genome, ...]:
    """The dataflows that are genomes of ``space``, in order."""
    genomes = (genome_of(space, dataflow) for dataflow in dataflows)
    return tuple(g for g in genomes if g is not None)


def style_genomes(space: SearchSpace, hw: HardwareSpec) -> dict[str, Genome]:
    """Each named style's mapping of the space's layer on ``hw`` (whose PEs are the space's)
    that is a genome of ``space``, by style."""
    genomes = {style: genome_of(space, dataflow) for style, dataflow in named_style_seeds(space.layer, hw).items()}
    return {style: g for style, g in genomes.items() if g is not None}
