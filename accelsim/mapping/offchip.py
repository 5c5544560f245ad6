"""MARVEL's off-chip optimizer: the L2 tile, inter-tile loop order and DRAM layouts of one layer
that minimize the distinct-block cost (:mod:`accelsim.mapping.distinct_blocks`, whose docstring
states the formula reading).

The search is MARVEL's exhaustive one (Sec. 3.1: "feasible because of only one level of tiling"):

* every tile whose sizes divide their loop bounds, with the filter window whole (the reading's
  ``whole_filter``), and whose words fit L2 (double buffering included); the whole layer as one
  tile when even the smallest does not fit is refused;
* for each tile, each tensor's innermost DRAM axis independently (the DB of a tensor depends
  only on its own layout); the layout is the operator's default order with that axis moved
  innermost (only the innermost axis enters the cost);
* the least DMC wins (exact fractions).

Ties are common (a square layer is symmetric under exchanging width and height; a tensor's DB is
often the same for two innermost axes; DMC is a ratio, so scaling a tile along a dimension whose
blocks grow in proportion keeps it). They are cost-equal and broken as an exhaustive search that
keeps the first least cost breaks them when it scans layouts, then tiles:

1. the preferred innermost axes (:func:`axis_preference`: a tensor's first axis, then its last,
   then the others in order: the weight's K before C and S before R, the width before the height);
2. the first tile in MARVEL's loop-nest order ``t_N t_K t_C t_P t_Q t_R t_S``
   (:data:`PAPER_LOOP_ORDER`), sizes ascending: the smallest ``T_K``, then ``T_C``, then the
   width ``T_P``, then the height ``T_Q``. (``--mapper marvel`` asks for the largest tile first,
   ``large_ties``: more work per tile for the PEs to share.)

* the inter-tile order sorts the loops that iterate (more than one tile) by the DMC's slope at the
  chosen tile (:func:`~accelsim.mapping.distinct_blocks.dmc_slopes`), the most negative innermost
  (MARVEL's rule), equal slopes in MARVEL's loop-nest order; loops with one tile do not move data
  and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Iterable, Mapping

from accelsim.errors import InputError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.mapping.distinct_blocks import (
    MARVEL_READING,
    DistinctBlocks,
    Reading,
    block_words,
    dmc_slopes,
    filter_window_dims,
    fits_l2,
    l2_capacity_words,
    tensor_blocks,
    tile_ops,
)
from accelsim.workload.loopnest import LoopNest


# MARVEL's loop nest, outermost first (its P is the output width, accelsim's X')
PAPER_LOOP_ORDER = ("N", "K", "C", "X'", "Y'", "R", "S")


def paper_rank(nest: LoopNest) -> dict[str, int]:
    """Each dimension's place in :data:`PAPER_LOOP_ORDER`; dimensions MARVEL's nest lacks follow in
    the nest's own order."""
    known = [d for d in PAPER_LOOP_ORDER if d in nest.dims]
    return {d: i for i, d in enumerate(known + [d for d in nest.dims if d not in known])}


def divisors(n: int) -> list[int]:
    """Divisors of ``n``, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


def layout_with_innermost(nest: LoopNest, role: str, innermost: int) -> tuple[int, ...]:
    """The tensor's default DRAM layout (axes outermost first) with axis ``innermost`` moved last."""
    return tuple(a for a in nest.layout(role) if a != innermost) + (innermost,)


@dataclass(frozen=True)
class OffchipChoice:
    """One layer's off-chip mapping and its DB cost.

    ``tile``: L2 tile size per loop dimension; ``order``: the loops with more than one tile,
    outermost first; ``innermost``: each tensor's contiguous axis (index into its axes);
    ``layouts``: each tensor's full layout (axes outermost first); ``blocks``: DB per tensor of
    one tile; ``ops``: iterations of one tile; ``tiles``: number of tiles in the layer.
    """

    tile: dict[str, int]
    order: tuple[str, ...]
    innermost: dict[str, int]
    layouts: dict[str, tuple[int, ...]]
    blocks: dict[str, int]
    ops: int
    tiles: int
    candidates: int  # tiles that fit L2 (each scored under its best layouts)
    output_weight: int  # times the output's blocks count in the DMC (the reading's)

    @property
    def dmc(self) -> Fraction:
        """Distinct blocks per operation of one tile (MARVEL's DMC, the output's blocks counted
        ``output_weight`` times)."""
        return DistinctBlocks(self.blocks, self.ops, self.output_weight).dmc


def axis_preference(axis: int, count: int) -> int:
    """Tie rank of a tensor's axis ``axis`` of ``count`` as its innermost one (lower first): the
    first axis, then the last, then the others in order (module docstring, tie rule 1)."""
    return 0 if axis == 0 else 1 if axis == count - 1 else axis + 1


def best_innermost(nest: LoopNest, tile: Mapping[str, int], block: int,
                   reading: Reading = MARVEL_READING) -> tuple[dict[str, int], dict[str, int]]:
    """(innermost axis, its DB) per tensor: the axis with the fewest blocks, the preferred one
    (:func:`axis_preference`) on a tie."""
    axes: dict[str, int] = {}
    blocks: dict[str, int] = {}
    for role, tensor_axes in nest.tensors.items():
        n = len(tensor_axes)
        blocks[role], _, axes[role] = min((tensor_blocks(nest, role, tile, a, block, reading), axis_preference(a, n), a)
                                          for a in range(n))
    return axes, blocks


def inter_tile_order(nest: LoopNest, tile: Mapping[str, int], innermost: Mapping[str, int],
                     block: int, reading: Reading = MARVEL_READING) -> tuple[str, ...]:
    """Loops with more than one tile, outermost first, by MARVEL's slope rule (most negative
    slope innermost; a tie keeps MARVEL's loop-nest order, :func:`paper_rank`)."""
    slopes = dmc_slopes(nest, tile, innermost, block, reading)
    looping = [d for d, n in nest.dims.items() if n // tile[d] > 1]
    rank = paper_rank(nest)
    return tuple(sorted(looping, key=lambda d: (-slopes[d], rank[d])))


def optimize_offchip(nest: LoopNest, hw: HardwareSpec, span: bool = False, large_ties: bool = False,
                     reading: Reading = MARVEL_READING) -> OffchipChoice:
    """The least-DMC off-chip mapping of ``nest`` on ``hw`` under ``reading`` (module docstring: the
    search and its tie rules). ``span``: a tile fits when its boxes, strided windows' gaps
    included, fit (what accelsim's L2 holds; ``--mapper marvel`` needs it) rather than its
    distinct elements (MARVEL's count; they differ on strided layers only). ``large_ties``:
    among equal DMCs the larger tile first (more work per tile for the PEs to share, which
    ``--mapper marvel`` wants). Raises InputError when no tile fits L2."""
    block = block_words(hw)
    capacity = l2_capacity_words(hw)
    rank = paper_rank(nest)
    dims = sorted(nest.dims, key=rank.__getitem__)
    whole = set(filter_window_dims(nest)) if reading.whole_filter else set()
    best: tuple | None = None
    count = 0
    for sizes in product(*([nest.dims[d]] if d in whole else divisors(nest.dims[d]) for d in dims)):
        tile = {d: sizes[rank[d]] for d in nest.dims}
        if not fits_l2(nest, tile, capacity, span):
            continue
        count += 1
        axes, blocks = best_innermost(nest, tile, block, reading)
        ops = tile_ops(tile)
        preference = sum(axis_preference(a, len(nest.tensors[role])) for role, a in axes.items())
        key = (DistinctBlocks(blocks, ops, reading.output_weight).dmc, -ops if large_ties else 0, preference, sizes)
        if best is None or key < best[0]:
            best = (key, tile, axes, blocks, ops)
    if best is None:
        raise InputError(f"no L2 tile fits: even one iteration's words exceed L2's {capacity} words per tile")
    _, tile, axes, blocks, ops = best
    return OffchipChoice(
        tile, inter_tile_order(nest, tile, axes, block, reading), axes,
        {role: layout_with_innermost(nest, role, a) for role, a in axes.items()}, blocks, ops,
        tile_ops(nest.dims) // ops, count, reading.output_weight)


def l2_tile_loops(dims: Iterable[str], choice: OffchipChoice, num_pes: int) -> list[Directive]:
    """The level-0 loops over ``choice``'s L2 tiles (``TemporalMap(T, T)`` per dimension of
    ``dims``: those with one tile first, then ``choice.order``) and ``Cluster(num_pes)`` below them."""
    outer = [d for d in dims if d not in choice.order] + list(choice.order)
    loops: list[Directive] = [MapDirective("temporal", choice.tile[d], choice.tile[d], d, 0) for d in outer]
    loops.append(ClusterDirective(num_pes, 0))
    return loops


def pinned_dataflow(nest: LoopNest, choice: OffchipChoice, num_pes: int) -> list[Directive]:
    """A MAESTRO dataflow whose level-0 loops are ``choice``'s L2 tiles in its inter-tile order
    (``TemporalMap(T, T)`` per dimension: those with one tile first, then ``choice.order``),
    above one cluster of all ``num_pes`` PEs that runs one MAC per PE per step, spread over the
    dimension with the largest tile. accelsim's L2 then holds one tile, or several consecutive
    ones when they fit together (its capacity rule, :class:`~accelsim.mapping.tiles.TileSchedule`).
    The on-chip part is a placeholder for counting DRAM traffic; ``--mapper marvel`` searches it."""
    dataflow = l2_tile_loops(nest.dims, choice, num_pes)
    widest = max(nest.dims, key=lambda d: choice.tile[d])
    dataflow += [MapDirective("spatial" if d == widest else "temporal", 1, 1, d, 0) for d in nest.dims]
    return dataflow


def _axis_name(nest: LoopNest, role: str, axis: int) -> str:
    """An axis by the dimensions indexing it (``Y'+R``), for the table :func:`main` prints."""
    return "+".join(d for d, _ in nest.tensors[role][axis])


def offchip_table(network: str, hw_ref: str) -> list[str]:
    """One line per layer of ``network`` (a bundled name or a file) on ``hw_ref``: the chosen
    L2 tile, the inter-tile order (outermost first), each tensor's innermost DRAM axis, DB per
    tensor of one tile and the DMC. A layer no tile fits is refused (InputError naming it)."""
    from accelsim.hw.loader import load_hardware
    from accelsim.text_table import table_lines
    from accelsim.workload.tables import load_network

    hw = load_hardware(hw_ref)
    rows = [["layer", "L2 tile", "order", "innermost W/I/O", "blocks W/I/O", "DMC x 1e3", "tiles"]]
    for layer in load_network(network).layers:
        nest = layer.loop_nest()
        try:
            c = optimize_offchip(nest, hw)
        except InputError as e:
            raise InputError(f"layer {layer.name}: {e}") from None
        roles = ("weight", "input", "output")
        rows.append([layer.name, " ".join(f"{d}{n}" for d, n in c.tile.items()), " ".join(c.order) or "-",
                     "/".join(_axis_name(nest, r, c.innermost[r]) for r in roles),
                     "/".join(str(c.blocks[r]) for r in roles), f"{1e3 * float(c.dmc):.4f}", str(c.tiles)])
    return table_lines(rows, left=(0, 1, 2, 3, 4))


def main(argv: list[str] | None = None) -> int:
    """``python -m accelsim.mapping.offchip --hw HW --network NET``: print :func:`offchip_table`.
    A bad input: one ``error:`` line, status 2."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="MARVEL's off-chip optimizer (distinct-block model) per layer")
    parser.add_argument("--hw", required=True, help="hardware preset or YAML file")
    parser.add_argument("--network", required=True, help="bundled network name or network file")
    args = parser.parse_args(argv)
    try:
        print("\n".join(offchip_table(args.network, args.hw)))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
