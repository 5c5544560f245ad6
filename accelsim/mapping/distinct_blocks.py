"""MARVEL's distinct-block (DB) off-chip cost model of one L2 (level-3) tile.

MARVEL (Chatarasi et al., Sec. 3.1) scores an off-chip mapping (the L2 tile, the inter-tile loop
order and each tensor's DRAM layout) by the *data movement cost*: the distinct DRAM blocks one L2
tile touches, summed over the tensors, per operation of the tile::

    DB_t(T)  = ceil(E_inner(T) / b) * prod(E_a(T) for the tensor's other axes a)
    DMC(T)   = (DB_W(T) + DB_I(T) + 2 * DB_O(T)) / (T_N * T_K * T_C * T_P * T_Q * T_R * T_S)

``E_a(T)`` is the number of indices axis ``a`` of a tensor covers in a tile of sizes ``T``, the
innermost axis is the tensor's contiguous one in DRAM (its layout) and ``b`` is the DRAM block in
words (MARVEL's Table 1: 64-byte blocks, 1-byte words). Only the innermost axis of a layout
enters the formula, which is why MARVEL (Sec. 4.1) counts 4 x 3 x 3 = 36 layouts rather than 864.

**The reading** (:data:`MARVEL_READING`; the paper's own letters: W[K][C][R][S], I[N][C][Y][X],
O[N][K][P][Q]; its layouts SRCK, XYCN, POKN name the innermost dimension first). The extracted
formulas are garbled; ``validation/marvel/READINGS.md`` (``python -m
accelsim.validation.marvel_readings``) measures every alternative below against Table 3, and
this reading is the one the text supports that agrees with it most:

* the numerator's third term, printed ``DB_I`` a second time, is the output's, counted **twice**
  (:attr:`Reading.output_weight`): an output tile is read back (partial sums) and written, as
  MARVEL's Table 2 counts arithmetic intensity over "ingress traffic + 2 * egress traffic".
  Counting it once leaves Table 3's L7 (K125 C320) and L12 (K64 C256) strictly costlier than
  other tiles (L7: 632 blocks / 40,000 MACs against K200 C256's 808 / 51,200; twice: 634 /
  40,000 against 812 / 51,200, Table 3's the cheaper);
* the denominator's ``T_3X x T_3Y`` is ``T_3P x T_3Q`` (the tile variables are N, K, C, P, Q,
  R, S; X and Y have none), and the output reference ``O[t3P][t3Q][t3N][t3N]`` is
  ``O[t3P][t3Q][t3K][t3N]`` (DB_O below it multiplies ``T_3K x T_3N``);
* the input subscripts ``t3P + t3S`` pair the output width P with the filter width S and the input
  width X (the innermost dimension of XYCN), so MARVEL's P is the output *width* (accelsim's
  ``X'``), Q the height (accelsim's ``Y'``);
* the input reference is the printed one, ``I[t3P + t3S][t3Q + t3R]``: **no stride**
  (:attr:`Reading.input_reference` ``"stride_free"``), and its index ``p + s`` covers exactly
  ``T_P + T_S - 1`` values (the printed ``T_P + T_S`` is the DB model's approximation, marked
  ``~``). The strided window (``(T_P - 1) * stride + T_S``) makes X innermost cost 896 blocks
  against 784 for C on L6, where Table 3 prints X (448 stride-free); the printed ``T_P + T_S``
  matches 9 layers instead of 12;
* the slope that orders the inter-tile loops (:func:`dmc_slopes`) differentiates the ceiling as
  the step function it is: ``ceil(E/b)`` is constant within a block, its derivative 0
  (:attr:`Reading.slope` ``"step"``); relaxing it to ``E/b``, as a geometric program does, orders
  L7 and L9 against Table 3 as well.

Constraint (MARVEL's second one): the tile's words (its distinct elements, not blocks, of the
real, strided tensors), twice when L2 is double-buffered, fit in L2. Tile sizes divide their
loop bounds (MARVEL's "no prologues or epilogues" pruning, in force in its evaluation; Table 3's
tiles all divide) and the filter window is whole in the tile (:attr:`Reading.whole_filter`:
MARVEL's first pruning, "fully unrolling loops corresponding to filter width and height";
every Table 3 tile has ``T_R = R``, ``T_S = S``, and only that makes L15's K500 C2 R7 S7 the
least cost).

Every function is exact (``Fraction``), so ties are ties.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import Literal, Mapping

from accelsim.hw.spec import HardwareSpec
from accelsim.workload.loopnest import Axis, LoopNest, axis_distinct


@dataclass(frozen=True)
class Reading:
    """One reading of MARVEL's garbled DB formulas (module docstring).

    ``output_weight``: times the output's blocks count in the DMC's numerator (2: read and
    written; 1: once). ``input_reference``: the input window's extent in the cost:
    ``"stride_free"`` (the printed reference ``p + s``: ``T_P + T_S - 1`` indices),
    ``"strided"`` (the tensor's real window: innermost axis its span ``(T_P - 1) * stride + T_S``,
    an outer axis its distinct indices) or ``"printed"`` (``T_P + T_S``). ``whole_filter``: the
    filter window's dimensions (:func:`filter_window_dims`) are whole in every tile. ``slope``:
    the ceiling's derivative in :func:`dmc_slopes`, ``"step"`` (0) or ``"relaxed"`` (``1/b``).
    """

    output_weight: int = 2
    input_reference: Literal["stride_free", "strided", "printed"] = "stride_free"
    whole_filter: bool = True
    slope: Literal["step", "relaxed"] = "step"


MARVEL_READING = Reading()
# The tensors as accelsim moves them: the strided window, each tensor's blocks once, the filter
# window tiled like any loop, the ceiling's slope relaxed (the reading before the Table 3 study).
# ``--mapper marvel`` scores its off-chip phase with it: with MARVEL_READING its best mappings
# were slower on marvel15's L6 (689,479 cycles against 402,685) and L15 (9,179,312 against
# 8,410,444), faster on L7 and L12 (README, *MARVEL's mapper against GAMMA*).
PHYSICAL_READING = Reading(output_weight=1, input_reference="strided", whole_filter=False, slope="relaxed")


def block_words(hw: HardwareSpec) -> int:
    """Words in one DRAM block: the DRAM burst (``dram.burst_bytes``, MARVEL's 64-byte block)
    over the word size (at least 1)."""
    return max(1, hw.dram.burst_bytes // hw.word_size_bytes)


def l2_capacity_words(hw: HardwareSpec) -> int:
    """Words one L2 tile may take: L2's size in words, halved when L2 is double-buffered."""
    words = hw.l2.size_bytes // hw.word_size_bytes
    return words // 2 if hw.l2.double_buffered else words


def filter_window_dims(nest: LoopNest) -> tuple[str, ...]:
    """The dimensions that slide a window over the input (``R`` in ``stride * Y' + R``): those
    the output does not depend on that share an input axis with another dimension."""
    windowed = {d for axis in nest.tensors["input"] if len(axis) > 1 for d, _ in axis}
    return tuple(d for d in nest.reduction_dims if d in windowed)


def _coefficient(c: int, reading: Reading) -> int:
    """A term's coefficient as the cost reads it: the stride-free references drop the stride."""
    return c if reading.input_reference == "strided" else 1


def axis_extent(axis: Axis, tile: Mapping[str, int], innermost: bool, reading: Reading) -> int:
    """Indices axis ``axis`` covers in ``tile`` as the cost counts them (:class:`Reading`): with the
    stride-free references ``sum(T_d) - (terms - 1)``, or ``sum(T_d)`` printed; strided, the span
    (gaps included: a block holds them anyway) on the innermost axis and the distinct indices on
    an outer one (rows the stride skips are never fetched)."""
    if reading.input_reference == "strided":
        return sum(c * (tile[d] - 1) for d, c in axis) + 1 if innermost else axis_distinct(axis, tile)
    printed = reading.input_reference == "printed"
    return sum(tile[d] for d, _ in axis) - (0 if printed else len(axis) - 1)


def tensor_blocks(nest: LoopNest, role: str, tile: Mapping[str, int], innermost: int, block: int,
                  reading: Reading = MARVEL_READING) -> int:
    """DB of tensor ``role`` in one tile when axis ``innermost`` is contiguous in DRAM:
    ``ceil(E_innermost / block) * prod(E of every other axis)`` (:func:`axis_extent`)."""
    axes = nest.tensors[role]
    blocks = -(-axis_extent(axes[innermost], tile, True, reading) // block)
    return blocks * prod(axis_extent(a, tile, False, reading) for i, a in enumerate(axes) if i != innermost)


def tensor_words(nest: LoopNest, role: str, tile: Mapping[str, int], span: bool = False) -> int:
    """Distinct elements of tensor ``role`` one tile touches (what MARVEL's L2 holds of it); with
    ``span``, the box from its first to its last index on every axis, a strided window's gaps
    included (what accelsim's L2 holds: :func:`accelsim.mapping.compile.check_fits`)."""
    if span:
        return prod(nest.extents(role, tile))
    return prod(axis_distinct(a, tile) for a in nest.tensors[role])


def tile_ops(tile: Mapping[str, int]) -> int:
    """Iterations (MACs) of one tile: the product of its sizes."""
    return prod(tile.values())


def fits_l2(nest: LoopNest, tile: Mapping[str, int], capacity_words: int, span: bool = False) -> bool:
    """MARVEL's constraint: the tile's words of every tensor (:func:`tensor_words`) fit
    ``capacity_words`` (:func:`l2_capacity_words`, double buffering included)."""
    return sum(tensor_words(nest, role, tile, span) for role in nest.tensors) <= capacity_words


@dataclass(frozen=True)
class DistinctBlocks:
    """DB per tensor of one tile under one layout, the iterations of the tile and the times the
    output's blocks count (:attr:`Reading.output_weight`)."""

    blocks: dict[str, int]  # role -> distinct DRAM blocks of the tile
    ops: int  # iterations of the tile
    output_weight: int = 1

    @property
    def total_blocks(self) -> int:
        """The DMC's numerator: every tensor's blocks, the output's ``output_weight`` times."""
        return sum(n * (self.output_weight if role == "output" else 1) for role, n in self.blocks.items())

    @property
    def dmc(self) -> Fraction:
        """Blocks per operation (MARVEL's DMC), exact."""
        return Fraction(self.total_blocks, self.ops)


def distinct_blocks(nest: LoopNest, tile: Mapping[str, int], innermost: Mapping[str, int],
                    block: int, reading: Reading = MARVEL_READING) -> DistinctBlocks:
    """The DB cost of ``tile`` (size per loop dimension; dimensions left out are whole) with
    ``innermost[role]`` the contiguous axis of each tensor, blocks of ``block`` words."""
    full = {d: tile.get(d, n) for d, n in nest.dims.items()}
    return DistinctBlocks({role: tensor_blocks(nest, role, full, innermost[role], block, reading)
                           for role in nest.tensors}, tile_ops(full), reading.output_weight)


def dmc_slopes(nest: LoopNest, tile: Mapping[str, int], innermost: Mapping[str, int],
               block: int, reading: Reading = MARVEL_READING) -> dict[str, float]:
    """d DMC / d T_d for every dimension, at ``tile``: MARVEL's rule for the inter-tile order
    (Sec. 3.1: the most negative slope goes innermost). The ceiling's derivative is 0 (``"step"``)
    or ``1/b`` (``"relaxed"``, as a geometric program relaxes it); a term contributes its
    coefficient as the cost reads it (the stride only in the ``"strided"`` reading)."""
    full = {d: tile.get(d, n) for d, n in nest.dims.items()}
    cost = distinct_blocks(nest, full, innermost, block, reading)
    slopes = {}
    for dim in nest.dims:
        d_blocks = 0.0
        for role, axes in nest.tensors.items():
            weight = reading.output_weight if role == "output" else 1
            inner = innermost[role]
            for i, axis in enumerate(axes):
                coef = sum(_coefficient(c, reading) for d, c in axis if d == dim)
                if not coef:
                    continue
                rest = prod(axis_extent(a, full, False, reading) for j, a in enumerate(axes) if j not in (i, inner))
                if i == inner:
                    d_blocks += weight * (coef / block * rest if reading.slope == "relaxed" else 0.0)
                else:
                    d_blocks += weight * coef * -(-axis_extent(axes[inner], full, True, reading) // block) * rest
        slopes[dim] = (d_blocks - cost.total_blocks / full[dim]) / cost.ops
    return slopes
