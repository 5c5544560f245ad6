"""MARVEL's distinct-block off-chip model (``mapping/distinct_blocks.py``), its exhaustive
optimizer (``mapping/offchip.py``) and the Table 3 comparison (``validation/marvel_table3.py``).

Hardware: ``eyeriss_like`` (1-byte words, 64-byte DRAM blocks -> b = 64 words; L2 110,592 bytes,
double-buffered -> 55,296 words per tile).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.hw.loader import load_hardware
from accelsim.mapping.distinct_blocks import (
    block_words,
    distinct_blocks,
    dmc_slopes,
    fits_l2,
    l2_capacity_words,
    tensor_blocks,
)
from accelsim.mapping.offchip import divisors, layout_with_innermost, optimize_offchip
from accelsim.validation.marvel_table3 import table3_rows, table3_section
from accelsim.workload.ops import Layer
from accelsim.workload.tables import load_network

HW = load_hardware("eyeriss_like")
MARVEL = {layer.name: layer for layer in load_network("marvel15").layers}
# axes: weight (k, c, r, s); input (n, c, y, x); output (n, k, y', x')
W_K, I_C, O_K, I_X = 0, 1, 1, 3


def test_block_and_capacity_of_eyeriss_like():
    """64-byte block / 1-byte word = 64 words; 110,592 bytes double-buffered = 55,296 words."""
    assert block_words(HW) == 64
    assert l2_capacity_words(HW) == 55_296


def test_db_of_table3_l9_by_hand():
    """L9 (K=C=512, 3x3, 5x5 output), Table 3's tile K64 C64 R3 S3 P5 Q5, layouts W:K I:C O:K.

    DB_W = ceil(64/64) * 64 (C) * 3 * 3 = 576
    DB_I = ceil(64/64) (C) * 7 (rows (5-1)+3) * 7 (columns)    = 49
    DB_O = ceil(64/64) (K) * 5 * 5                               = 25
    ops  = 64 * 64 * 3 * 3 * 5 * 5 = 921,600;  DMC = 650 / 921,600 = 13 / 18,432.
    """
    nest = MARVEL["L9_CONV5_3_2"].loop_nest()
    tile = {"N": 1, "K": 64, "C": 64, "R": 3, "S": 3, "Y'": 5, "X'": 5}
    cost = distinct_blocks(nest, tile, {"weight": W_K, "input": I_C, "output": O_K}, 64)
    assert cost.blocks == {"weight": 576, "input": 49, "output": 25}
    assert cost.ops == 921_600
    assert cost.dmc == Fraction(13, 18_432)


def test_db_on_a_strided_window_by_hand():
    """L6 (stride 2, 1x1), tile K32 C32 P56 (X') Q14 (Y'): the input's width spans
    (56-1)*2+1 = 111 indices, its rows are 14 distinct ones (the stride skips the others).

    X innermost: ceil(111/64) = 2 blocks * 14 rows * 32 channels = 896
    C innermost: ceil(32/64)  = 1 block  * 14 * 56                = 784
    """
    nest = MARVEL["L6_CONV1"].loop_nest()
    tile = {"N": 1, "K": 32, "C": 32, "R": 1, "S": 1, "Y'": 14, "X'": 56}
    assert tensor_blocks(nest, "input", tile, I_X, 64) == 896
    assert tensor_blocks(nest, "input", tile, I_C, 64) == 784


def test_l2_fit_with_double_buffering_by_hand():
    """L8 (K=C=64, 3x3, 54x54 output), Table 3's tile K64 C32 P54 Q6: words
    W 64*32*9 = 18,432 + I 32*56*8 = 14,336 + O 64*6*54 = 20,736 = 53,504 <= 55,296: fits.
    K64 C64 doubles W and I: 36,864 + 28,672 + 20,736 = 86,272 > 55,296: does not."""
    nest = MARVEL["L8_CONV2_2_2"].loop_nest()
    tile = {"N": 1, "K": 64, "C": 32, "R": 3, "S": 3, "Y'": 6, "X'": 54}
    assert fits_l2(nest, tile, 55_296)
    assert not fits_l2(nest, {**tile, "C": 64}, 55_296)


def test_slopes_order_l9_by_hand():
    """L9 at K64 C64 R3 S3 P5 Q5 (W:K, I:C, O:K), DB = 650, ops = 921,600. With the ceiling
    relaxed to E/64:
      d DB / d T_K = 9*64/64 (W) + 25/64 (O) = 9.390625;  minus DB/T_K = 650/64 = 10.15625
      d DB / d T_C = 9*64/64 (W) + 49/64 (I) = 9.765625;  minus DB/T_C = 10.15625
    so the K slope (-0.765625/ops) is more negative than C's (-0.390625/ops): K innermost, the
    order C K (outermost first), as Table 3 prints it."""
    nest = MARVEL["L9_CONV5_3_2"].loop_nest()
    tile = {"N": 1, "K": 64, "C": 64, "R": 3, "S": 3, "Y'": 5, "X'": 5}
    slopes = dmc_slopes(nest, tile, {"weight": W_K, "input": I_C, "output": O_K}, 64)
    assert abs(slopes["K"] * 921_600 - (9.390625 - 10.15625)) < 1e-9
    assert abs(slopes["C"] * 921_600 - (9.765625 - 10.15625)) < 1e-9
    assert optimize_offchip(nest, HW).order == ("C", "K")


def test_layout_moves_only_the_innermost_axis():
    """The default channel-last input (n, y, x, c) = (0, 2, 3, 1) with x innermost: (0, 2, 1, 3)."""
    nest = MARVEL["L8_CONV2_2_2"].loop_nest()
    assert layout_with_innermost(nest, "input", I_X) == (0, 2, 1, 3)
    assert layout_with_innermost(nest, "input", I_C) == (0, 2, 3, 1)


def _brute_force(nest, hw):
    """Least DMC over every divisor tile that fits and every innermost axis of every tensor."""
    block, capacity = block_words(hw), l2_capacity_words(hw)
    best = None
    dims = list(nest.dims)
    for sizes in product(*(divisors(nest.dims[d]) for d in dims)):
        tile = dict(zip(dims, sizes))
        if not fits_l2(nest, tile, capacity):
            continue
        for axes in product(*(range(len(nest.tensors[r])) for r in nest.tensors)):
            dmc = distinct_blocks(nest, tile, dict(zip(nest.tensors, axes)), block).dmc
            best = dmc if best is None or dmc < best else best
    return best


@settings(max_examples=25, deadline=None)
@given(k=st.sampled_from([1, 4, 6, 8]), c=st.sampled_from([2, 3, 8]), rs=st.sampled_from([1, 3]),
       out=st.sampled_from([2, 4, 6]), stride=st.sampled_from([1, 2]), l2_bytes=st.sampled_from([256, 1024, 4096]),
       burst=st.sampled_from([4, 8, 64]))
def test_optimizer_equals_brute_force(k, c, rs, out, stride, l2_bytes, burst):
    """The optimizer's DMC equals the least over every fitting tile and every layout combination
    (each tensor's innermost axis chosen independently in the optimizer, jointly here)."""
    size = (out - 1) * stride + rs
    layer = Layer.build("t", "CONV2D", {"N": 1, "K": k, "C": c, "R": rs, "S": rs, "Y": size, "X": size},
                        stride_y=stride, stride_x=stride)
    hw = HW.model_copy(update={"l2": HW.l2.model_copy(update={"size_bytes": l2_bytes}),
                               "dram": HW.dram.model_copy(update={"burst_bytes": burst})})
    nest = layer.loop_nest()
    if not fits_l2(nest, {d: 1 for d in nest.dims}, l2_capacity_words(hw)):
        return
    choice = optimize_offchip(nest, hw)
    assert choice.dmc == _brute_force(nest, hw)
    assert fits_l2(nest, choice.tile, l2_capacity_words(hw))
    assert choice.tiles * choice.ops == layer.macs


def test_table3_ours_never_costs_more():
    """Acceptance: on every marvel15 layer our DMC is at most Table 3's under the same reading;
    L3, L4 and L9 (no tie, no stride, no residual) equal it in tile, order and layouts."""
    rows = table3_rows(Path("validation/marvel"))
    assert [r.layer for r in rows] == list(MARVEL)
    assert all(r.ours.dmc <= r.paper_dmc for r in rows)
    equal = {r.layer for r in rows if all(r.equal.values())}
    assert {"L3_Bottleneck4_3_2", "L4_Bottleneck6_2_2", "L9_CONV5_3_2"} <= equal
    text = "\n".join(table3_section(rows))
    assert f"**{len(rows)} of {len(rows)}** layers" in text
    assert f"**{len(equal)} of {len(rows)}**" in text
