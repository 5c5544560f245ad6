"""Named dataflow styles: for any layer and array, a legal MAESTRO mapping in that style.

Each style fixes which dimensions are spatial and the loop order (as the accelerator it is
named after constrains them) and picks tile sizes: the largest that fit L1 and L2 (double
buffered where the hardware is) and the PE array. The directive forms follow MAESTRO's own
example mappings and FLASH Table 2 for GEMM:

- ``nvdla_like`` (KC-P, weight stationary): K across clusters, C within a cluster.
- ``eyeriss_like`` (YR-P, row stationary): PE sets of (output rows x Sz(R)) PEs work on
  different filters (K across sets); within a set, output rows across clusters of Sz(R) PEs;
  within a cluster input rows and filter rows together, partial sums reduced across it.
- ``shidiannao_like`` (YX-P, output stationary): output rows across clusters, output columns
  within; each PE accumulates one output over C, R and S.
- ``tpu_like`` (systolic weight stationary): K across array columns, as much of the flattened
  (C, R, S) filter (GEMM: K) as fits down each column; one weight per PE, activations stream.
- ``maeri_like``: a virtual neuron of ``c x R x S`` multipliers per output (K across virtual
  neurons), reduced over the adder tree; ``c`` chosen to keep the most multipliers busy.

A residual add (no reduction, no reuse) is mapped the same way in every style: output columns
across PEs, a run of channels per PE.

A style knows operators only by their catalog ``form`` (:mod:`accelsim.workload.operators`):
``conv`` and ``depthwise`` layers take the convolution templates, ``matmul`` layers the GEMM
forms above, ``elementwise`` layers the residual-add one; every batch dimension of the operator
is iterated one index at a time, outermost (one image, one head at a time).
"""

from __future__ import annotations

from typing import Callable

from accelsim.errors import InputError, MappingError
from accelsim.hw.spec import HardwareSpec
from accelsim.mapping.ast import ClusterDirective, Directive, MapDirective
from accelsim.mapping.compile import check_fits, compile_mapping
from accelsim.workload.ops import Layer

SecondTile = int | tuple[int, int]  # a style's second tile parameter (0: none); eyeriss_like: (cols, rows)
StyleFn = Callable[[Layer, HardwareSpec, int, SecondTile], list[Directive]]


def _t(size: int, offset: int, dim: str) -> MapDirective:
    return MapDirective("temporal", size, offset, dim, 0)


def _s(size: int, offset: int, dim: str) -> MapDirective:
    return MapDirective("spatial", size, offset, dim, 0)


def _c(size: int) -> ClusterDirective:
    return ClusterDirective(size, 0)


def pow2_at_most(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def _has_filter(layer: Layer) -> bool:
    """A convolution (regular or depthwise): the templates with filter windows apply."""
    return layer.operator.form in ("conv", "depthwise")


def _candidates(limit: int) -> list[int]:
    """Tile sizes to try, largest first: powers of two up to ``limit`` and ``limit`` itself."""
    sizes = {limit}
    p = 1
    while p < limit:
        sizes.add(p)
        p *= 2
    return sorted(sizes, reverse=True)


def _eltwise(layer: Layer, hw: HardwareSpec, t: int, u: SecondTile = 0) -> list[Directive]:
    """Residual add in every style: output columns across PEs, a run of ``t`` channels (the
    contiguous axis in DRAM) per PE, one output row at a time."""
    return [_t(1, 1, "Y"), _s(1, 1, "X"), _t(t, t, "C")]


# ---------------------------------------------------------------------------- conv family
def _nvdla(layer: Layer, hw: HardwareSpec, t: int, u: SecondTile = 0) -> list[Directive]:
    s = layer.sizes
    if layer.operator.form == "matmul":
        lam = min(pow2_at_most(min(64, hw.num_pes)), layer.sizes["K"])
        return [_s(1, 1, "N"), _t(lam * t, lam * t, "K"), _t(1, 1, "M"), _c(lam),
                _t(1, 1, "M"), _t(1, 1, "N"), _s(t, t, "K")]
    if layer.operator.form == "depthwise":
        return [_s(1, 1, "C"), _t(s["R"], layer.stride_y, "Y"), _t(s["S"], layer.stride_x, "X")]
    lam = u if isinstance(u, int) and u else min(pow2_at_most(min(64, hw.num_pes)), s["C"])  # u: cluster size
    return [_s(1, 1, "K"), _t(lam * t, lam * t, "C"), _t(s["R"], layer.stride_y, "Y"),
            _t(s["S"], layer.stride_x, "X"), _c(lam), _s(t, t, "C")]


def _eyeriss(layer: Layer, hw: HardwareSpec, t: int, u: SecondTile = 0) -> list[Directive]:
    s = layer.sizes
    if layer.operator.form == "matmul":
        lam = min(12, hw.num_pes, s["K"])
        return [_s(1, 1, "M"), _t(1, 1, "N"), _t(lam * t, lam * t, "K"), _c(lam),
                _t(1, 1, "M"), _t(1, 1, "N"), _s(t, t, "K")]
    r = s["R"]
    cols, rows = u if isinstance(u, tuple) else (layer.out_x, min(layer.out_y, max(1, hw.num_pes // r)))
    # cols: output columns per L2 tile; rows: output rows per PE set
    work: list[Directive] = [_s(t, t, "C")] if layer.operator.form == "depthwise" else [_s(t, t, "K"), _t(t, t, "C")]
    sx = layer.stride_x
    return work + [_t((cols - 1) * sx + s["S"], cols * sx, "X"), _c(rows * r), _s(r, layer.stride_y, "Y"),
                   _t(s["S"], sx, "X"), _c(r), _s(1, 1, "Y"), _s(1, 1, "R")]


def _shidiannao(layer: Layer, hw: HardwareSpec, t: int, u: SecondTile = 0) -> list[Directive]:
    s = layer.sizes
    if layer.operator.form == "matmul":
        lam = min(8, hw.num_pes, s["N"])
        return [_s(1, 1, "M"), _t(lam, lam, "N"), _t(t, t, "K"), _c(lam),
                _t(1, 1, "M"), _s(1, 1, "N"), _t(t, t, "K")]
    lam = min(8, hw.num_pes, layer.out_x)
    sy, sx = layer.stride_y, layer.stride_x
    first: list[Directive] = [_t(1, 1, "K")] if layer.operator.form != "depthwise" else []
    return first + [_s(s["R"], sy, "Y"), _t((lam - 1) * sx + s["S"], lam * sx, "X"), _t(t, t, "C"),
                    _c(lam), _s(s["S"], sx, "X")]


def _tpu(layer: Layer, hw: HardwareSpec, t: int, u: SecondTile = 0) -> list[Directive]:
    rows = hw.pe_array.rows
    s = layer.sizes
    if layer.operator.form == "matmul":
        k = min(rows, s["K"])
        return [_s(1, 1, "N"), _t(k, k, "K"), _t(t, t, "M"), _c(k), _s(1, 1, "K")]
    if layer.operator.form == "depthwise":
        # t channels per L2 tile, one per PE
        return [_t(t, t, "C"), _t(s["R"], layer.stride_y, "Y"), _t(s["S"], layer.stride_x, "X"),
                _c(hw.num_pes), _s(1, 1, "C")]
    # a column holds as much of the flattened (C, R, S) filter as fits its rows, one weight per
    # PE; the rest of the filter is walked in time; t output columns stream per step
    r, sz = s["R"], s["S"]
    if r * sz <= rows:
        c = min(rows // (r * sz), s["C"])
        return [_s(1, 1, "K"), _t(c, c, "C"), _t(1, 1, "Y'"), _t(t, t, "X'"),
                _c(c * r * sz), _s(1, 1, "C"), _c(r * sz), _s(1, 1, "R"), _c(sz), _s(1, 1, "S")]
    if sz <= rows:
        c = min(rows // sz, s["C"])
        return [_s(1, 1, "K"), _t(c, c, "C"), _t(1, 1, "R"), _t(1, 1, "Y'"), _t(t, t, "X'"),
                _c(c * sz), _s(1, 1, "C"), _c(sz), _s(1, 1, "S")]
    c = min(rows, s["C"])
    return [_s(1, 1, "K"), _t(c, c, "C"), _t(1, 1, "R"), _t(1, 1, "S"),
            _t(1, 1, "Y'"), _t(t, t, "X'"), _c(c), _s(1, 1, "C")]


def _maeri(layer: Layer, hw: HardwareSpec, t: int, u: SecondTile = 0) -> list[Directive]:
    s = layer.sizes
    if layer.operator.form == "matmul":
        lam = min(t, s["K"])
        return [_t(1, 1, "M"), _s(1, 1, "N"), _t(lam, lam, "K"), _c(lam),
                _t(1, 1, "M"), _t(1, 1, "N"), _s(1, 1, "K")]
    r, sz = s["R"], s["S"]
    if layer.operator.form == "depthwise":
        return [_s(1, 1, "C"), _t(r, layer.stride_y, "Y"), _t(sz, layer.stride_x, "X"),
                _c(r * sz), _s(1, 1, "R"), _c(sz), _s(1, 1, "S")]
    return [_s(1, 1, "K"), _t(t, t, "C"), _t(r, layer.stride_y, "Y"), _t(sz, layer.stride_x, "X"),
            _c(t * r * sz), _s(1, 1, "C"), _c(r * sz), _s(1, 1, "R"), _c(sz), _s(1, 1, "S")]


STYLES: dict[str, StyleFn] = {
    "nvdla_like": _nvdla,
    "eyeriss_like": _eyeriss,
    "shidiannao_like": _shidiannao,
    "tpu_like": _tpu,
    "maeri_like": _maeri,
}


def _tile_limit(style: str, layer: Layer, hw: HardwareSpec) -> int:
    """Upper bound of the style's free tile parameter."""
    s = layer.sizes
    if layer.operator.form == "elementwise":
        return s["C"]
    if layer.operator.form == "matmul":
        return {"nvdla_like": max(1, s["K"] // min(pow2_at_most(min(64, hw.num_pes)), s["K"])),
                "eyeriss_like": max(1, s["K"] // min(12, hw.num_pes, s["K"])),
                "shidiannao_like": s["K"], "tpu_like": s["M"],
                "maeri_like": min(s["K"], hw.num_pes)}[style]
    if style == "nvdla_like":
        return s["C"]
    if style == "eyeriss_like":
        return min(s["C"], s.get("K", 1)) if layer.operator.form != "depthwise" else s["C"]
    if style == "shidiannao_like":
        return s["C"]
    if style == "tpu_like":
        return min(s["C"], hw.num_pes) if layer.operator.form == "depthwise" else layer.out_x
    return max(1, min(s["C"], hw.num_pes // (s["R"] * s["S"])))


def _build(style: str, layer: Layer, hw: HardwareSpec, t: int, u: SecondTile) -> list[Directive]:
    """The style's directives after the operator's batch dimensions, one index at a time,
    outermost."""
    template = _eltwise if layer.operator.form == "elementwise" else STYLES[style]
    return [_t(1, 1, dim) for dim in layer.operator.batch_dims] + template(layer, hw, t, u)


def _second_candidates(style: str, layer: Layer, hw: HardwareSpec) -> list[SecondTile]:
    """Values of the style's second tile parameter, largest first (0: not used)."""
    if style == "eyeriss_like" and _has_filter(layer):
        most = min(layer.out_y, max(1, hw.num_pes // layer.sizes["R"]))
        return [(cols, rows) for rows in _candidates(most) for cols in _candidates(layer.out_x)]
    if style == "nvdla_like" and layer.operator.form == "conv":
        # NVDLA's cluster size is design-time flexible between 16 and 64 (FLASH Table 2);
        # smaller ones only when nothing else fits
        return list(_candidates(min(64, hw.num_pes, layer.sizes["C"])))
    return [0]


def _filter_pieces(layer: Layer) -> list[tuple[int, int]]:
    """(filter rows, filter cols) held at once, whole filter first, then rows, then columns."""
    if not _has_filter(layer):
        return [(0, 0)]
    r, s = layer.sizes["R"], layer.sizes["S"]
    return [(r, s)] + [(rt, s) for rt in _candidates(r) if rt < r] + [(1, st) for st in _candidates(s) if st < s]


def _split_filter(style: str, layer: Layer, dataflow: list[Directive], rows: int, cols: int) -> list[Directive]:
    """Walk the filter in pieces of ``rows`` x ``cols`` when a tile cannot hold all of it.

    nvdla_like does it as the innermost level-0 loops (shrinking L1 and L2 tiles; its level-0
    input windows are rewritten in output coordinates, which is the same mapping); the other
    styles as an innermost one-PE level (shrinking L1 tiles). Partial sums stay in the PEs.
    """
    if not rows or (rows, cols) == (layer.sizes["R"], layer.sizes["S"]):
        return dataflow
    walk = [_t(rows, rows, "R")] + ([_t(cols, cols, "S")] if cols < layer.sizes["S"] else [])
    if style != "nvdla_like":
        return dataflow + [_c(1)] + walk
    top = next((i for i, d in enumerate(dataflow) if isinstance(d, ClusterDirective)), len(dataflow))
    outer = []
    for d in dataflow[:top]:
        if isinstance(d, MapDirective) and d.dim in ("Y", "X"):
            filt, stride = ("R", layer.stride_y) if d.dim == "Y" else ("S", layer.stride_x)
            size = (d.size - layer.sizes[filt]) // stride + 1
            d = MapDirective(d.kind, size, d.offset // stride, d.dim + "'", d.line)
        outer.append(d)
    return outer + walk + list(dataflow[top:])


def style_mapping(style: str, layer: Layer, hw: HardwareSpec) -> list[Directive]:
    """The mapping of ``layer`` in ``style`` with the largest tiles that fit ``hw``."""
    if style not in STYLES:
        raise InputError(f"unknown dataflow style {style!r}; expected one of {', '.join(STYLES)}")
    if layer.operator.form == "transposed":
        raise InputError(f"layer {layer.name!r}: no named style maps a {layer.op.value} (transposed convolution) "
                         "yet; give its mapping in a MAESTRO file (--mapping)")
    if style == "maeri_like" and _has_filter(layer):
        need = layer.sizes["R"] * layer.sizes["S"]
        if need > hw.num_pes:
            raise InputError(
                f"layer {layer.name!r}: maeri_like needs a virtual neuron of R x S = {need} "
                f"multipliers but the array has {hw.num_pes} PEs")
    failures = []
    candidates = _candidates(_tile_limit(style, layer, hw))
    if style == "maeri_like" and _has_filter(layer):
        # virtual neurons of t x R x S multipliers: fill the array first, then prefer larger ones
        vn = layer.sizes["R"] * layer.sizes["S"]
        candidates.sort(key=lambda t: (-(hw.num_pes // (t * vn)) * t * vn, -t))
    for rows, cols in _filter_pieces(layer):
        for t in candidates:
            for u in _second_candidates(style, layer, hw):
                dataflow = _split_filter(style, layer, _build(style, layer, hw, t, u), rows, cols)
                try:
                    cm = compile_mapping(layer, dataflow, hw.num_pes, source=f"style {style}")
                except MappingError:
                    continue  # this combination of tile sizes does not divide the layer
                problems = check_fits(cm, hw.l1.size_bytes, hw.l2.size_bytes, hw.word_size_bytes,
                                      hw.l1.double_buffered, hw.l2.double_buffered, hw.l2.bypassed)
                if not problems:
                    return dataflow
                failures = [p.message for p in problems]
    raise InputError(
        f"layer {layer.name!r}: no {style} mapping fits {hw.name}: " + "; ".join(failures))
