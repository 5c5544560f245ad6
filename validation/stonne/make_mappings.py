"""Write, for every STONNE case of cases.csv that ran, the MAESTRO .m mapping with STONNE's placement.

Usage (from the repository root)::

    python validation/stonne/make_mappings.py validation/stonne

writes ``validation/stonne/mappings/<case_id>.m``. The translation rules (README.md, "Translating a
case into a mapping") in short:

* level 0 is the whole array (``Cluster(num_ms)`` below it) and holds STONNE's temporal tile loop in
  STONNE's order: for CONV ``K`` (T_K filters), ``Y`` (T_X' output rows), ``X`` (T_Y' output columns);
  for GEMM/FC ``N`` (T_N columns of the stationary KN matrix), ``M`` (T_M rows of MK);
* one level per spatial dimension of STONNE's virtual neurons (VNs), outermost first as STONNE
  numbers them (vn = k*T_X'*T_Y' + x*T_Y' + y; GEMM vn = n*T_M + m), each ``SpatialMap(1,1)`` over
  clusters of the remaining VN size, so that VN v occupies multipliers [v*VN_Size, (v+1)*VN_Size)
  as in STONNE;
* inside a VN one level per reduced dimension in STONNE's order (c*T_R*T_S + r*T_S + s; GEMM k),
  each ``SpatialMap(f,f)`` where f is the number of folds of that dimension: a multiplier gets all
  its folded elements in one step (STONNE keeps every fold's weight in the multiplier's weight
  FIFO), never a temporal fold loop. Filter rows and columns are zipped with the input rows and
  columns (``SpatialMap(f,f) Y; SpatialMap(f,f) R``);
* the TPU mesh: columns are clusters of ``ms_rows`` PEs (accelsim's systolic convention), N across
  columns (its spatial folds are STONNE's N tiles, so T_N must equal ms_cols), M down the rows, K
  streamed one k per step (each PE accumulates its output over the tile's K steps); the M tile
  loop outside the N folds, as STONNE's TPU_OS_DENSE controller iterates them.

Standard library only; tests never run it (they read the files it wrote).
"""

from __future__ import annotations

import csv
import os
import sys
from math import ceil


def _i(row: dict[str, str], key: str) -> int:
    """An integer column of cases.csv."""
    return int(float(row[key]))


def conv_mapping(row: dict[str, str]) -> list[str]:
    """Dataflow lines of a CONV case on MAERI."""
    R, S, C, K, s = (_i(row, k) for k in ("R", "S", "C", "K", "stride"))
    T_R, T_S, T_C, T_K, T_X, T_Y = (_i(row, k) for k in ("T_R", "T_S", "T_C", "T_K", "T_X_", "T_Y_"))
    num_ms = _i(row, "num_ms")
    f_c, f_r, f_s = ceil(C / T_C), ceil(R / T_R), ceil(S / T_S)
    vn = T_C * T_R * T_S
    lines = [f"TemporalMap({T_K},{T_K}) K;",
             f"TemporalMap({R + (T_X - 1) * s},{T_X * s}) Y;",
             f"TemporalMap({S + (T_Y - 1) * s},{T_Y * s}) X;",
             f"Cluster({num_ms}, P);"]
    if T_K > 1:
        lines += ["SpatialMap(1,1) K;", f"Cluster({T_X * T_Y * vn}, P);"]
    if T_X > 1:
        lines += [f"SpatialMap({R},{s}) Y;", f"Cluster({T_Y * vn}, P);"]
    if T_Y > 1:
        lines += [f"SpatialMap({S},{s}) X;", f"Cluster({vn}, P);"]
    inner: list[list[str]] = []
    if T_C > 1:
        inner.append([f"SpatialMap({f_c},{f_c}) C;"])
    if T_R > 1:
        inner.append([f"SpatialMap({f_r},{f_r}) Y;", f"SpatialMap({f_r},{f_r}) R;"])
    if T_S > 1:
        inner.append([f"SpatialMap({f_s},{f_s}) X;", f"SpatialMap({f_s},{f_s}) S;"])
    sizes = [T_C, T_R, T_S]
    sizes = [n for n in sizes if n > 1]
    for i, level in enumerate(inner):
        lines += level
        rest = 1
        for n in sizes[i + 1:]:
            rest *= n
        if i + 1 < len(inner):
            lines.append(f"Cluster({rest}, P);")
    return lines


def gemm_mapping(row: dict[str, str]) -> list[str]:
    """Dataflow lines of a GEMM or FC case on MAERI (KN stationary, MK streamed)."""
    K = _i(row, "gemm_K")
    T_M, T_N, T_K = _i(row, "T_M"), _i(row, "T_N_gemm"), _i(row, "T_K_gemm")
    num_ms = _i(row, "num_ms")
    f_k = ceil(K / T_K)
    lines = [f"TemporalMap({T_N},{T_N}) N;", f"TemporalMap({T_M},{T_M}) M;", f"Cluster({num_ms}, P);"]
    if T_N > 1:
        lines += ["SpatialMap(1,1) N;", f"Cluster({T_M * T_K}, P);"]
    if T_M > 1:
        lines += ["SpatialMap(1,1) M;", f"Cluster({T_K}, P);"]
    if T_K > 1:
        lines += [f"SpatialMap({f_k},{f_k}) K;"]
    return lines


def tpu_mapping(row: dict[str, str]) -> list[str]:
    """Dataflow lines of a GEMM case on the TPU output-stationary mesh."""
    T_M, T_N = _i(row, "T_M"), _i(row, "T_N_gemm")
    rows = _i(row, "ms_rows")
    if T_N != _i(row, "ms_cols"):
        raise ValueError(f"{row['case_id']}: T_N must equal ms_cols (the N folds are the array's columns)")
    return [f"TemporalMap({T_M},{T_M}) M;", "SpatialMap(1,1) N;",
            "TemporalMap(1,1) K;", f"Cluster({rows}, P);", "SpatialMap(1,1) M;"]


def mapping_text(row: dict[str, str]) -> str:
    """The whole .m file of one case."""
    name = row["case_id"]
    if row["operation"] == "CONV":
        s = _i(row, "stride")
        head = ["Type: CONV", f"Stride {{ X: {s}, Y: {s} }}",
                f"Dimensions {{ K: {_i(row, 'K')}, C: {_i(row, 'C')}, R: {_i(row, 'R')}, S: {_i(row, 'S')}, "
                f"Y: {_i(row, 'X')}, X: {_i(row, 'Y')} }}"]
        body = conv_mapping(row)
    else:
        head = ["Type: GEMM",
                f"Dimensions {{ M: {_i(row, 'gemm_M')}, N: {_i(row, 'gemm_N')}, K: {_i(row, 'gemm_K')} }}"]
        body = tpu_mapping(row) if row["network"] == "TPU_OS" else gemm_mapping(row)
    text = [f"// STONNE case {name}: {row['command']}", f"Network stonne_{name} {{", f"Layer {name} {{"]
    text += head + ["Dataflow {"] + [f"  {line}" for line in body] + ["}", "}", "}"]
    return "\n".join(text) + "\n"


def main(argv: list[str]) -> int:
    """Write mappings/<case_id>.m for every ok row of argv[1]/cases.csv."""
    if len(argv) != 2:
        print("usage: make_mappings.py STONNE_SET_DIR", file=sys.stderr)
        return 2
    out_dir = os.path.join(argv[1], "mappings")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(argv[1], "cases.csv"), newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    for row in rows:
        with open(os.path.join(out_dir, f"{row['case_id']}.m"), "w") as fh:
            fh.write(mapping_text(row))
    print(f"wrote {len(rows)} mappings into {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
