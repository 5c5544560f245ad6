"""Regenerate the STONNE reference set: run STONNE on every case and write cases.csv and counters.json.

Usage (from the repository root; STONNE built as validation/stonne/README.md says)::

    python validation/stonne/run_stonne.py /path/to/stonne/stonne/stonne validation/stonne

Each case is one STONNE command line (CONV, FC or DenseGEMM on MAERI's linear multiplier network with
its distribution tree and adder tree, or DenseGEMM on the TPU-like output-stationary mesh). STONNE is
run in a temporary directory with ``-print_stats=1``; its JSON statistics file gives every counter
recorded here. A case STONNE refuses (non-zero exit, no "Test passed" line, no statistics file) is
written with ``status`` set to the reason and no counters. Tests never run this script: they read the
CSV it wrote. Standard library only.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# The cases. Layer and tile parameters keep STONNE's names (see README.md for their meaning).
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One STONNE run: operation, layer and tile parameters, hardware flags."""

    case_id: str
    operation: str  # CONV, FC or GEMM
    network: str  # MAERI (linear MS network + ASNetwork) or TPU_OS (OS_MESH + TEMPORALRN)
    layer: dict[str, int]
    tile: dict[str, int]
    num_ms: int = 0  # MAERI only
    ms_rows: int = 0  # TPU only
    ms_cols: int = 0  # TPU only
    dn_bw: int = 8
    rn_bw: int = 8
    note: str = field(default="")

    def argv(self, binary: str) -> list[str]:
        """STONNE's command line for this case."""
        op_flag = {"CONV": "-CONV", "FC": "-FC", "GEMM": "-DenseGEMM"}[self.operation]
        args = [binary, op_flag, f"-layer_name={self.case_id}"]
        args += [f"-{k}={v}" for k, v in self.layer.items()]
        args += [f"-{k}={v}" for k, v in self.tile.items()]
        if self.network == "TPU_OS":
            args += [f"-ms_rows={self.ms_rows}", f"-ms_cols={self.ms_cols}"]
        else:
            args += [f"-num_ms={self.num_ms}"]
        args += [f"-dn_bw={self.dn_bw}", f"-rn_bw={self.rn_bw}", "-accumulation_buffer=1"]
        if self.network == "TPU_OS":
            args += ["-rn_type=TEMPORALRN", "-mn_type=OS_MESH", "-mem_ctrl=TPU_OS_DENSE"]
        args += ["-print_stats=1"]
        return args


def conv(case_id: str, *, R: int, S: int, C: int, K: int, X: int, Y: int, stride: int, T_R: int, T_S: int,
         T_C: int, T_K: int, T_X_: int, T_Y_: int, num_ms: int, dn_bw: int, rn_bw: int, note: str = "") -> Case:
    """A CONV case (G = N = T_G = T_N = 1: STONNE supports batch 1 only)."""
    layer = {"R": R, "S": S, "C": C, "K": K, "G": 1, "N": 1, "X": X, "Y": Y, "strides": stride}
    tile = {"T_R": T_R, "T_S": T_S, "T_C": T_C, "T_K": T_K, "T_G": 1, "T_N": 1, "T_X_": T_X_, "T_Y_": T_Y_}
    return Case(case_id, "CONV", "MAERI", layer, tile, num_ms=num_ms, dn_bw=dn_bw, rn_bw=rn_bw, note=note)


def gemm(case_id: str, *, M: int, N: int, K: int, T_M: int, T_N: int, T_K: int, dn_bw: int, rn_bw: int,
         num_ms: int = 0, ms_rows: int = 0, ms_cols: int = 0, operation: str = "GEMM", note: str = "") -> Case:
    """A DenseGEMM (or FC, the same code path in STONNE) case on MAERI, or on the TPU mesh when ms_rows > 0."""
    layer = {"M": M, "N": N, "K": K}
    tile = {"T_M": T_M, "T_N": T_N, "T_K": T_K}
    network = "TPU_OS" if ms_rows else "MAERI"
    return Case(case_id, operation, network, layer, tile, num_ms=num_ms, ms_rows=ms_rows, ms_cols=ms_cols,
                dn_bw=dn_bw, rn_bw=rn_bw, note=note)


BASE = dict(R=3, S=3, C=6, K=6, X=20, Y=20, stride=1, T_R=3, T_S=3, T_C=1, T_K=1, T_X_=3, T_Y_=1, num_ms=64)

CASES: list[Case] = [
    # --- CONV, stride 1: STONNE's own example layer, dn_bw and rn_bw swept ---
    conv("conv_ex_dn8_rn8", **BASE, dn_bw=8, rn_bw=8, note="STONNE's README example; C folded (6 folds)"),
    *[conv(f"conv_ex_dn{d}_rn8", **BASE, dn_bw=d, rn_bw=8) for d in (1, 2, 4, 16, 32, 64)],
    *[conv(f"conv_ex_dn8_rn{r}", **BASE, dn_bw=8, rn_bw=r) for r in (1, 2, 4, 32)],
    # --- CONV, stride 1: folded C, R, S; several output pixels per step ---
    conv("conv_fc4_k1", R=3, S=3, C=16, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=1, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=16, rn_bw=8, note="C folded 4x"),
    conv("conv_fc4_k1_dn1", R=3, S=3, C=16, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=1, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=1, rn_bw=1, note="C folded 4x, one read port"),
    conv("conv_fc4_k2", R=3, S=3, C=16, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=2, T_X_=1, T_Y_=1,
         num_ms=128, dn_bw=16, rn_bw=16, note="C folded 4x, 2 filters per step"),
    conv("conv_fr3", R=3, S=3, C=8, K=4, X=14, Y=14, stride=1, T_R=1, T_S=3, T_C=4, T_K=2, T_X_=2, T_Y_=1,
         num_ms=64, dn_bw=8, rn_bw=4, note="R folded 3x, C folded 2x"),
    conv("conv_fs3", R=3, S=3, C=8, K=4, X=14, Y=14, stride=1, T_R=3, T_S=1, T_C=4, T_K=2, T_X_=2, T_Y_=1,
         num_ms=64, dn_bw=8, rn_bw=4, note="S folded 3x, C folded 2x (T_S=1: no forwarding)"),
    conv("conv_frs", R=3, S=3, C=8, K=4, X=10, Y=10, stride=1, T_R=1, T_S=1, T_C=8, T_K=4, T_X_=2, T_Y_=1,
         num_ms=64, dn_bw=16, rn_bw=8, note="R and S folded (9 folds)"),
    conv("conv_ty3", R=3, S=3, C=4, K=4, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=1, T_K=2, T_X_=1, T_Y_=3,
         num_ms=64, dn_bw=16, rn_bw=8, note="3 output columns per step (T_Y'>1: no forwarding)"),
    conv("conv_tx2_ty2", R=3, S=3, C=2, K=2, X=10, Y=10, stride=1, T_R=3, T_S=3, T_C=2, T_K=1, T_X_=2, T_Y_=2,
         num_ms=128, dn_bw=32, rn_bw=16, note="2x2 output pixels per step"),
    conv("conv_5x5", R=5, S=5, C=3, K=8, X=16, Y=16, stride=1, T_R=5, T_S=5, T_C=1, T_K=2, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=8, rn_bw=8, note="5x5 filter, C folded 3x"),
    conv("conv_1x1", R=1, S=1, C=32, K=16, X=8, Y=8, stride=1, T_R=1, T_S=1, T_C=16, T_K=4, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=16, rn_bw=8, note="pointwise; T_X'*T_Y'=1: weights unicast"),
    conv("conv_1x1_dn64", R=1, S=1, C=32, K=16, X=8, Y=8, stride=1, T_R=1, T_S=1, T_C=16, T_K=4, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=64, rn_bw=64, note="pointwise, one port per multiplier"),
    conv("conv_1x1_xy", R=1, S=1, C=32, K=16, X=8, Y=8, stride=1, T_R=1, T_S=1, T_C=8, T_K=4, T_X_=2, T_Y_=2,
         num_ms=128, dn_bw=32, rn_bw=16, note="pointwise, 2x2 pixels per step"),
    conv("conv_ms256", R=3, S=3, C=16, K=16, X=10, Y=10, stride=1, T_R=3, T_S=3, T_C=8, T_K=2, T_X_=1, T_Y_=1,
         num_ms=256, dn_bw=32, rn_bw=32, note="256 multipliers"),
    conv("conv_ms256_tx3_dn64", R=3, S=3, C=8, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=2, T_X_=3,
         T_Y_=1, num_ms=256, dn_bw=64, rn_bw=64, note="256 multipliers, 6 VNs of 36"),
    conv("conv_ms256_tx3_dn4", R=3, S=3, C=8, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=2, T_X_=3,
         T_Y_=1, num_ms=256, dn_bw=4, rn_bw=4, note="as conv_ms256_tx3_dn64 with 4 ports"),
    conv("conv_ms256_tx2_dn64", R=3, S=3, C=8, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=2, T_X_=2,
         T_Y_=1, num_ms=256, dn_bw=64, rn_bw=64, note="256 multipliers, 4 VNs of 36"),
    conv("conv_ms256_tx2_dn4", R=3, S=3, C=8, K=8, X=12, Y=12, stride=1, T_R=3, T_S=3, T_C=4, T_K=2, T_X_=2,
         T_Y_=1, num_ms=256, dn_bw=4, rn_bw=4, note="as conv_ms256_tx2_dn64 with 4 ports"),
    conv("conv_s_rem", R=3, S=3, C=6, K=4, X=10, Y=10, stride=1, T_R=3, T_S=2, T_C=3, T_K=2, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=8, rn_bw=8, note="T_S does not divide S: ragged fold, no forwarding"),
    # --- CONV, stride 2 ---
    conv("conv_s2_c4", R=3, S=3, C=4, K=4, X=15, Y=15, stride=2, T_R=3, T_S=3, T_C=4, T_K=1, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=8, rn_bw=8, note="stride 2"),
    conv("conv_s2_k2_tx2", R=3, S=3, C=4, K=4, X=15, Y=15, stride=2, T_R=3, T_S=3, T_C=2, T_K=2, T_X_=2, T_Y_=1,
         num_ms=128, dn_bw=16, rn_bw=16, note="stride 2, C folded 2x"),
    conv("conv_s2_ty2", R=3, S=3, C=4, K=4, X=13, Y=13, stride=2, T_R=3, T_S=3, T_C=2, T_K=1, T_X_=1, T_Y_=2,
         num_ms=64, dn_bw=16, rn_bw=8, note="stride 2, 2 output columns per step"),
    conv("conv_s2_fr3", R=3, S=3, C=8, K=8, X=11, Y=11, stride=2, T_R=1, T_S=3, T_C=8, T_K=2, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=8, rn_bw=2, note="stride 2, R folded 3x"),
    conv("conv_s2_5x5", R=5, S=5, C=2, K=4, X=15, Y=15, stride=2, T_R=5, T_S=5, T_C=2, T_K=1, T_X_=1, T_Y_=1,
         num_ms=64, dn_bw=32, rn_bw=8, note="stride 2, 5x5 filter"),
    conv("conv_s2_ms256", R=3, S=3, C=16, K=8, X=17, Y=17, stride=2, T_R=3, T_S=3, T_C=8, T_K=2, T_X_=1, T_Y_=1,
         num_ms=256, dn_bw=16, rn_bw=16, note="stride 2, 256 multipliers"),
    # --- GEMM on MAERI (DenseGEMM: C[M][N] = A[M][K] B[K][N]; B is STONNE's stationary operand) ---
    gemm("gemm_64_t444", M=64, N=64, K=64, T_M=4, T_N=4, T_K=4, num_ms=64, dn_bw=8, rn_bw=8, note="K folded 16x"),
    gemm("gemm_64_t2216", M=64, N=64, K=64, T_M=2, T_N=2, T_K=16, num_ms=64, dn_bw=16, rn_bw=16, note="K folded 4x"),
    gemm("gemm_k64_full", M=32, N=32, K=64, T_M=1, T_N=1, T_K=64, num_ms=64, dn_bw=64, rn_bw=64,
         note="K whole on 64 multipliers; weights unicast"),
    gemm("gemm_t2216_dn2", M=32, N=32, K=64, T_M=2, T_N=2, T_K=16, num_ms=64, dn_bw=2, rn_bw=2, note="2 ports"),
    gemm("gemm_ms128", M=64, N=32, K=32, T_M=4, T_N=4, T_K=8, num_ms=128, dn_bw=16, rn_bw=16),
    gemm("gemm_ms256_t848", M=64, N=64, K=32, T_M=8, T_N=4, T_K=8, num_ms=256, dn_bw=32, rn_bw=32),
    gemm("gemm_ms256_t884_dn64", M=64, N=64, K=32, T_M=8, T_N=8, T_K=4, num_ms=256, dn_bw=64, rn_bw=64),
    gemm("gemm_ms256_t884_dn8", M=64, N=64, K=32, T_M=8, T_N=8, T_K=4, num_ms=256, dn_bw=8, rn_bw=8),
    gemm("gemm_tall_m", M=128, N=16, K=16, T_M=4, T_N=1, T_K=16, num_ms=64, dn_bw=16, rn_bw=4),
    gemm("gemm_wide_n", M=16, N=128, K=32, T_M=1, T_N=8, T_K=8, num_ms=64, dn_bw=8, rn_bw=8,
         note="T_M=1: weights unicast"),
    gemm("gemm_unicast16_dn8", M=32, N=64, K=64, T_M=1, T_N=16, T_K=4, num_ms=64, dn_bw=8, rn_bw=8,
         note="T_M=1: 64 unicast weights per tile, inputs multicast to 16 VNs"),
    gemm("gemm_unicast16_dn64", M=32, N=64, K=64, T_M=1, T_N=16, T_K=4, num_ms=64, dn_bw=64, rn_bw=64),
    # --- GEMM micro cases on 64 multipliers, one read and write port each: pipeline latency and barrier ---
    *[gemm(f"micro_vn{k}", M=1, N=1, K=k, T_M=1, T_N=1, T_K=k, num_ms=64, dn_bw=64, rn_bw=64,
           note="one output, one VN of K multipliers") for k in (1, 2, 4, 8, 16, 32, 64)],
    gemm("micro_vn8_n2", M=1, N=2, K=8, T_M=1, T_N=1, T_K=8, num_ms=64, dn_bw=64, rn_bw=64, note="2 weight tiles"),
    *[gemm(f"micro_fold{8 // t}", M=1, N=1, K=8, T_M=1, T_N=1, T_K=t, num_ms=64, dn_bw=64, rn_bw=64,
           note=f"K folded {8 // t}x") for t in (4, 2, 1)],
    *[gemm(f"micro_fold{8 // t}_m4", M=4, N=1, K=8, T_M=1, T_N=1, T_K=t, num_ms=64, dn_bw=64, rn_bw=64,
           note=f"K folded {8 // t}x, 4 inputs") for t in (4, 2, 1)],
    *[gemm(f"micro_tm{t}", M=t, N=1, K=8, T_M=t, T_N=1, T_K=8, num_ms=64, dn_bw=64, rn_bw=64,
           note=f"{t} VNs of 8, one step") for t in (2, 4, 8)],
    *[gemm(f"micro_tn{t}", M=1, N=t, K=8, T_M=1, T_N=t, T_K=8, num_ms=64, dn_bw=64, rn_bw=64,
           note=f"{t} VNs of 8 sharing the input") for t in (2, 4, 8)],
    *[gemm(f"micro_tm{t}_m{4 * t}", M=4 * t, N=1, K=8, T_M=t, T_N=1, T_K=8, num_ms=64, dn_bw=64, rn_bw=64,
           note=f"{t} VNs of 8, 4 steps") for t in (1, 2, 4, 8)],
    gemm("micro_tm4_rn8", M=4, N=1, K=8, T_M=4, T_N=1, T_K=8, num_ms=64, dn_bw=64, rn_bw=8, note="8 write ports"),
    # --- FC (STONNE's -FC runs the DenseGEMM code path: M = batch, K = inputs, N = outputs) ---
    gemm("fc_b1_256_128", M=1, N=128, K=256, T_M=1, T_N=4, T_K=16, num_ms=64, dn_bw=16, rn_bw=16, operation="FC"),
    gemm("fc_b4_128_64", M=4, N=64, K=128, T_M=2, T_N=4, T_K=8, num_ms=64, dn_bw=8, rn_bw=8, operation="FC"),
    gemm("fc_b1_128_256_ms256", M=1, N=256, K=128, T_M=1, T_N=8, T_K=32, num_ms=256, dn_bw=64, rn_bw=32,
         operation="FC"),
    gemm("fc_b8_64_64_ms256", M=8, N=64, K=64, T_M=8, T_N=2, T_K=16, num_ms=256, dn_bw=32, rn_bw=8, operation="FC"),
    gemm("fc_b1_512_64_dn4", M=1, N=64, K=512, T_M=1, T_N=1, T_K=64, num_ms=64, dn_bw=4, rn_bw=1, operation="FC"),
    # --- GEMM on the TPU-like output-stationary mesh ---
    gemm("tpu8_16x16x32_dn16", M=16, N=16, K=32, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=16, rn_bw=16),
    gemm("tpu8_16x16x32_dn4", M=16, N=16, K=32, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=4, rn_bw=4),
    gemm("tpu8_16x16x32_dn1", M=16, N=16, K=32, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=1, rn_bw=1),
    gemm("tpu8_32x32x64_dn16", M=32, N=32, K=64, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=16, rn_bw=16),
    gemm("tpu8_ragged_20x12x16", M=20, N=12, K=16, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=16, rn_bw=16,
         note="M and N not multiples of the tile: ragged edge tiles"),
    gemm("tpu8_tm4_16x16x16", M=16, N=16, K=16, T_M=4, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=16, rn_bw=16,
         note="tile uses 4 of 8 rows"),
    gemm("tpu8_24x40x24_dn8", M=24, N=40, K=24, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=8, rn_bw=8,
         note="2 edge elements per port"),
    gemm("tpu8_16x16x16_dn2", M=16, N=16, K=16, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=2, rn_bw=2),
    gemm("tpu8_64x8x16_dn16", M=64, N=8, K=16, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=16, rn_bw=16,
         note="8 stationary tiles down M"),
    *[gemm(f"tpu8_1tile_dn{d}_rn{r}", M=8, N=8, K=16, T_M=8, T_N=8, T_K=1, ms_rows=8, ms_cols=8, dn_bw=d,
           rn_bw=r, note="one stationary tile: fill/drain against read and write ports")
      for d in (16, 8, 4, 2, 1) for r in (64, 16, 8, 4, 2, 1)],
    gemm("tpu16_64x64x32_dn32", M=64, N=64, K=32, T_M=16, T_N=16, T_K=1, ms_rows=16, ms_cols=16, dn_bw=32,
         rn_bw=32),
    gemm("tpu16_64x64x32_dn8", M=64, N=64, K=32, T_M=16, T_N=16, T_K=1, ms_rows=16, ms_cols=16, dn_bw=8, rn_bw=8),
    gemm("tpu4x16_16x32x16_dn4", M=16, N=32, K=16, T_M=4, T_N=16, T_K=1, ms_rows=4, ms_cols=16, dn_bw=4, rn_bw=4,
         note="4 rows x 16 columns"),
]


# ---------------------------------------------------------------------------------------------
# Parsing STONNE's statistics file
# ---------------------------------------------------------------------------------------------


def load_stats(stats_path: str) -> dict:
    """The JSON object of STONNE's ``output_stats_*.txt`` (the file starts with it)."""
    with open(stats_path) as fh:
        text = fh.read()
    start = text.index("{")
    obj, _ = json.JSONDecoder().raw_decode(text[start:])
    return obj


def summed_counters(node: object, prefix: str = "", out: dict[str, int] | None = None) -> dict[str, int]:
    """Every numeric counter, summed over the component instances (list positions dropped from the path)."""
    out = {} if out is None else out
    if isinstance(node, dict):
        for key, value in node.items():
            summed_counters(value, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(node, list):
        for item in node:
            summed_counters(item, prefix, out)
    elif isinstance(node, bool):
        pass
    elif isinstance(node, (int, float)):
        out[prefix] = out.get(prefix, 0) + int(node)
    return out


def row_for(case: Case, stats: dict, cycles_printed: int, command: str) -> dict[str, object]:
    """The cases.csv row: parameters, cycles and the counters the README lists."""
    sd = stats["SDMemoryStats"]
    tile = stats["TileConfiguration"]
    sums = summed_counters(stats)
    w_ports = sd["N_SRAM_read_ports_weights_use"]
    i_ports = sd["N_SRAM_read_ports_inputs_use"]
    p_ports = sd["N_SRAM_read_ports_psums_use"]
    wr_ports = sd["N_SRAM_write_ports_use"]
    dn_ports = [w + i + p for w, i, p in zip(w_ports, i_ports, p_ports)]
    lay = case.layer
    row: dict[str, object] = {
        "case_id": case.case_id,
        "operation": case.operation,
        "network": case.network,
        "status": "ok",
    }
    if case.operation == "CONV":
        x_out = (lay["X"] - lay["R"] + lay["strides"]) // lay["strides"]
        y_out = (lay["Y"] - lay["S"] + lay["strides"]) // lay["strides"]
        row.update(R=lay["R"], S=lay["S"], C=lay["C"], K=lay["K"], G=lay["G"], N=lay["N"], X=lay["X"], Y=lay["Y"],
                   stride=lay["strides"], X_out=x_out, Y_out=y_out, gemm_M="", gemm_N="", gemm_K="")
        row.update({k: v for k, v in case.tile.items()})
        row.update(T_M="", T_N_gemm="", T_K_gemm="")
        macs = lay["R"] * lay["S"] * lay["C"] * lay["K"] * x_out * y_out
    else:
        row.update(R="", S="", C="", K="", G="", N="", X="", Y="", stride="", X_out="", Y_out="",
                   gemm_M=lay["M"], gemm_N=lay["N"], gemm_K=lay["K"])
        row.update(T_R="", T_S="", T_C="", T_K="", T_G="", T_N="", T_X_="", T_Y_="")
        row.update(T_M=case.tile["T_M"], T_N_gemm=case.tile["T_N"], T_K_gemm=case.tile["T_K"])
        macs = lay["M"] * lay["N"] * lay["K"]
    row.update(
        num_ms=case.num_ms if case.network == "MAERI" else case.ms_rows * case.ms_cols,
        ms_rows=case.ms_rows or "", ms_cols=case.ms_cols or "",
        dn_bw=case.dn_bw, rn_bw=case.rn_bw,
        vn_size=tile.get("VN_Size", ""), num_vns=tile.get("Num_VNs", ""),
        cycles=cycles_printed,
        macs=macs,
        multiplications=sums.get("MSNetworkStats.MSwitchStats.N_multiplications", 0),
        sram_weight_reads=sd["N_SRAM_weight_reads"],
        sram_input_reads=sd["N_SRAM_input_reads"],
        sram_psum_reads=sd["N_SRAM_psum_reads"],
        sram_psum_writes=sd["N_SRAM_psum_writes"],
        n_reconfigurations=sd["N_reconfigurations"],
        dn_port_weight_sends=sum(w_ports),
        dn_port_input_sends=sum(i_ports),
        dn_port_psum_sends=sum(p_ports),
        dn_busiest_port_sends=max(dn_ports) if dn_ports else 0,
        rn_port_writes=sum(wr_ports),
        rn_busiest_port_writes=max(wr_ports) if wr_ports else 0,
        ms_inputs_from_memory=sums.get("MSNetworkStats.MSwitchStats.N_inputs_receive_from_memory", ""),
        ms_weights_from_memory=sums.get("MSNetworkStats.MSwitchStats.N_weights_receive_from_memory", ""),
        ms_input_forwardings=sums.get("MSNetworkStats.MSwitchStats.N_input_forwardings_receive", ""),
        ms_top_forwardings=sums.get("MSNetworkStats.MSwitchStats.N_top_forwardings_receive", ""),
        ms_left_forwardings=sums.get("MSNetworkStats.MSwitchStats.N_left_forwardings_receive", ""),
        as_adds_2_1=sums.get("ASNetworkStats.ASwitchStats.N_2_1_sums", ""),
        as_adds_3_1=sums.get("ASNetworkStats.ASwitchStats.N_3_1_sums", ""),
        accumulator_adds=sums.get("ASNetworkStats.AccumulationBufferStats.AccumulatorStats.N_adds", ""),
        accumulator_memory_sends=sums.get("ASNetworkStats.AccumulationBufferStats.AccumulatorStats.N_memory_send",
                                          ""),
        dn_port_weight_sends_per_port=";".join(map(str, w_ports)),
        dn_port_input_sends_per_port=";".join(map(str, i_ports)),
        rn_port_writes_per_port=";".join(map(str, wr_ports)),
        note=case.note,
        command=command,
    )
    return row


def run_case(binary: str, case: Case) -> tuple[dict[str, object], dict[str, int]]:
    """Run one case; its CSV row and its summed counters (empty when STONNE refused it)."""
    argv = case.argv(binary)
    command = " ".join(["./stonne"] + argv[1:])
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, OUTPUT_DIR=work)
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        out = proc.stdout + proc.stderr
        stats_files = glob.glob(os.path.join(work, "output_stats_*.txt"))
        cycles = [int(line.split(":")[1]) for line in out.splitlines() if line.startswith("Number of cycles running:")]
        if proc.returncode != 0 or "Test passed correctly" not in out or not stats_files or not cycles:
            last = [line for line in out.splitlines() if line.strip()][-1:] or [f"exit {proc.returncode}"]
            if "test not passed" in out:
                reason = "wrong output: STONNE's own check against its CPU reference failed"
            elif proc.returncode == -11:
                reason = "crashed: segmentation fault"
            else:
                reason = f"refused: exit {proc.returncode}: {last[0].strip()[:160]}"
            return {"case_id": case.case_id, "operation": case.operation, "network": case.network,
                    "status": reason, "note": case.note, "command": command}, {}
        stats = load_stats(stats_files[0])
    if stats["GlobalStats"]["N_cycles"] != cycles[0]:
        raise RuntimeError(f"{case.case_id}: printed cycles {cycles[0]} != stats N_cycles")
    return row_for(case, stats, cycles[0], command), summed_counters(stats)


def main(argv: list[str]) -> int:
    """Run every case with the STONNE binary argv[1]; write cases.csv and counters.json into argv[2]."""
    if len(argv) != 3:
        print("usage: run_stonne.py STONNE_BINARY OUTPUT_DIR", file=sys.stderr)
        return 2
    binary, out_dir = os.path.abspath(argv[1]), argv[2]
    rows, counters = [], {}
    for case in CASES:
        row, sums = run_case(binary, case)
        print(f"{case.case_id}: {row['status']} cycles={row.get('cycles', '')}", flush=True)
        rows.append(row)
        if sums:
            counters[case.case_id] = {key: value for key, value in sums.items() if value}
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with open(os.path.join(out_dir, "cases.csv"), "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(out_dir, "counters.json"), "w") as fh:
        fh.write("{\n" + ",\n".join(f"{json.dumps(case_id)}: {json.dumps(sums, sort_keys=True)}"
                                   for case_id, sums in counters.items()) + "\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
