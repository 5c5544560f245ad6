"""MARVEL's distinct-block (DB) off-chip cost model of one L2 (level-3) tile.

MARVEL (Chatarasi et al., Sec. 3.1) scores an off-chip mapping (the L2 tile, the inter-tile loop
order and each tensor's DRAM layout) by the *data movement cost*: the distinct DRAM blocks one L2
tile touches, summed over the tensors, per operation of the tile::

    DB_t(T)  = ceil(E_inner(T) / b) * prod(E_a(T) for the tensor's other axes a)
    DMC(T)   = (DB_W(T) + DB_I(T) + DB_O(T)) / (T_N * T_K * T_C * T_P * T_Q * T_R * T_S)

``E_a(T)`` is the number of indices axis ``a`` of a tensor covers in a tile of sizes ``T``, the
innermost axis is the tensor's contiguous one in DRAM (its layout) and ``b`` is the DRAM block in
words (MARVEL: 64-byte blocks, 1-byte words). Only the innermost axis of a layout enters the
formula, which is why MARVEL (Sec. 4.1) counts 4 x 3 x 3 = 36 layouts rather than 864.

**The reading taken where the extracted text is garbled** (the paper's own letters: W[K][C][R][S],
I[N][C][Y][X], O[N][K][P][Q]; its layouts SRCK, XYCN, POKN name the innermost dimension first):

* its DMC numerator reads ``DB_W + DB_I + DB_I``; the third term is ``DB_O``: the text defines
  DB_O just above and says the numerator counts "all references in the tile", and counting the
  input twice would leave the output's blocks out of the cost altogether;
* its denominator multiplies ``T_3X x T_3Y``, but X and Y are *input* dimensions with no tile
  sizes of their own (the tile variables are N, K, C, P, Q, R, S); the operations of a tile are
  ``T_P x T_Q`` output points times the rest, so we read ``T_3P x T_3Q``;
* the output reference ``O[t3P][t3Q][t3N][t3N]`` names N twice; DB_O below it multiplies
  ``T_3K x T_3N``, so the reference is ``O[t3P][t3Q][t3K][t3N]``;
* the input subscripts ``t3P + t3S`` pair the output width P with the filter width S and the input
  width X (the innermost dimension of XYCN), so MARVEL's P is the output *width* (accelsim's
  ``X'``), Q the output height (accelsim's ``Y'``);
* the input window's extent is written ``T_3P + T_3S`` (the DB formula is marked approximate).
  We take the exact one, ``(T_P - 1) * stride + T_S``, from the tensor's index projection: the
  approximation counts one row too many and ignores the stride, and with it Table 3's own
  L8 tile (K64 C32 P54 Q6, 3x3) would not fit the 108 KB L2 with double buffering (input
  57 x 9 x 32 instead of 56 x 8 x 32 words: 111,168 bytes double-buffered against 110,592),
  while with the exact extent it fits (107,008). Measured on all 15 layers (Table 3 comparison):
  with the printed extent in both the cost and the fit, 8 of Table 3's 15 tiles fit L2 and the
  optimizer equals Table 3 on 5 layers; with the exact extent 13 fit and 7 are equal. On a strided axis the innermost extent is the
  span the window's indices cover (gaps included: a block holds them anyway); an outer axis
  counts the distinct indices (rows the stride skips are never fetched).

Constraint (MARVEL's second one): the tile's words (its distinct elements, not blocks), twice
when L2 is double-buffered, fit in L2. Tile sizes divide their loop bounds (MARVEL's "no
prologues or epilogues" pruning, in force in its evaluation; Table 3's tiles all divide).

Every function is exact (``Fraction``), so ties are ties.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import Mapping

from accelsim.hw.spec import HardwareSpec
from accelsim.workload.loopnest import Axis, LoopNest, axis_distinct


def block_words(hw: HardwareSpec) -> int:
    """Words in one DRAM block: the DRAM burst (``dram.burst_bytes``, MARVEL's 64-byte block)
    over the word size (at least 1)."""
    return max(1, hw.dram.burst_bytes // hw.word_size_bytes)


def l2_capacity_words(hw: HardwareSpec) -> int:
    """Words one L2 tile may take: L2's size in words, halved when L2 is double-buffered."""
    words = hw.l2.size_bytes // hw.word_size_bytes
    return words // 2 if hw.l2.double_buffered else words


def _span(axis: Axis, tile: Mapping[str, int]) -> int:
    """Indices from the first to the last one axis ``axis`` covers in ``tile`` (gaps included)."""
    return sum(c * (tile[d] - 1) for d, c in axis) + 1


def tensor_blocks(nest: LoopNest, role: str, tile: Mapping[str, int], innermost: int, block: int) -> int:
    """DB of tensor ``role`` in one tile when axis ``innermost`` is contiguous in DRAM:
    ``ceil(span_innermost / block) * prod(distinct indices of every other axis)``."""
    axes = nest.tensors[role]
    blocks = -(-_span(axes[innermost], tile) // block)
    return blocks * prod(axis_distinct(a, tile) for i, a in enumerate(axes) if i != innermost)


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
    """DB per tensor of one tile under one layout, and the DMC (blocks per operation)."""

    blocks: dict[str, int]  # role -> distinct DRAM blocks of the tile
    ops: int  # iterations of the tile

    @property
    def total_blocks(self) -> int:
        return sum(self.blocks.values())

    @property
    def dmc(self) -> Fraction:
        """Blocks per operation (MARVEL's DMC), exact."""
        return Fraction(self.total_blocks, self.ops)


def distinct_blocks(nest: LoopNest, tile: Mapping[str, int], innermost: Mapping[str, int],
                    block: int) -> DistinctBlocks:
    """The DB cost of ``tile`` (size per loop dimension; dimensions left out are whole) with
    ``innermost[role]`` the contiguous axis of each tensor, blocks of ``block`` words."""
    full = {d: tile.get(d, n) for d, n in nest.dims.items()}
    return DistinctBlocks({role: tensor_blocks(nest, role, full, innermost[role], block) for role in nest.tensors},
                          tile_ops(full))


def dmc_slopes(nest: LoopNest, tile: Mapping[str, int], innermost: Mapping[str, int],
               block: int) -> dict[str, float]:
    """d DMC / d T_d for every dimension, at ``tile``: MARVEL's rule for the inter-tile order
    (Sec. 3.1: the most negative slope goes innermost). The ceiling is relaxed to its slope
    (``d ceil(E/b) / dE = 1/b``), as a geometric program relaxes it; a strided term contributes its
    coefficient."""
    full = {d: tile.get(d, n) for d, n in nest.dims.items()}
    cost = distinct_blocks(nest, full, innermost, block)
    ops = cost.ops
    slopes = {}
    for dim in nest.dims:
        d_blocks = 0.0
        for role, axes in nest.tensors.items():
            for i, axis in enumerate(axes):
                coef = sum(c for d, c in axis if d == dim)
                if not coef:
                    continue
                if i == innermost[role]:
                    rest = prod(axis_distinct(a, full) for j, a in enumerate(axes) if j != i)
                    d_blocks += coef / block * rest
                else:
                    inner = -(-_span(axes[innermost[role]], full) // block)
                    rest = prod(axis_distinct(a, full) for j, a in enumerate(axes) if j not in (i, innermost[role]))
                    d_blocks += coef * inner * rest
        slopes[dim] = (d_blocks - cost.total_blocks / full[dim]) / ops
    return slopes
