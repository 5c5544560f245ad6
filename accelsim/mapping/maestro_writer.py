"""Writer of MAESTRO mapping files: a resolved file (:mod:`accelsim.mapping.ast`) -> canonical
``.m`` text that the reader (:func:`accelsim.mapping.maestro_format.parse_maestro`) reads back to
an equal file (apart from line numbers)."""

from __future__ import annotations

from accelsim.errors import MappingError
from accelsim.mapping.ast import ClusterDirective, MaestroFile, MaestroLayer, MapDirective
from accelsim.mapping.maestro_parser import NAME_RE
from accelsim.mapping.maestro_resolve import CANONICAL_TYPES, dims_for_type, operator_of_type, type_names
from accelsim.mapping.maestro_syntax import MAX_DIGITS


def _check_int(value: object, what: str, layer: MaestroLayer, path: str) -> int:
    """``value`` if the reader can read it back: an integer from 1 to MAX_DIGITS digits."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 10**MAX_DIGITS:
        raise MappingError(
            f"cannot write layer {layer.name!r}: {what} must be an integer from 1 to {10**MAX_DIGITS - 1} "
            f"(what a .m file can hold), got {value!r}",
            source=path,
            line=layer.line or None,
        )
    return value


def write_maestro(mf: MaestroFile) -> str:
    """Canonical ``.m`` text for ``mf``; :func:`parse_maestro` reads it back to an equal file
    (apart from line numbers). Raises MappingError if ``mf`` cannot be written faithfully.
    ``Stride`` is written for types with input windows, for TRCONV (whose default is 2) and for
    any stride other than 1."""
    path = mf.path
    if mf.network and not NAME_RE.fullmatch(mf.network):
        raise MappingError(f"cannot write Network name {mf.network!r}: use letters, digits, _ - .", source=path)
    if not mf.layers:
        raise MappingError("cannot write a Network without layers", source=path)
    header = f"Network {mf.network} {{" if mf.network else "Network {"
    out = ["// MAESTRO data-centric mapping written by accelsim", header]
    seen: set[str] = set()
    for layer in mf.layers:
        out += _layer_lines(layer, path, seen)
    out.append("}")
    return "\n".join(out) + "\n"


def _layer_lines(layer: MaestroLayer, path: str, seen: set[str]) -> list[str]:
    def fail(message: str) -> MappingError:
        return MappingError(message, source=path, line=layer.line or None)

    if not NAME_RE.fullmatch(layer.name or ""):
        raise fail(f"cannot write layer name {layer.name!r}: use letters, digits, _ - .")
    if layer.name in seen:
        raise fail(f"cannot write duplicate layer name {layer.name!r}")
    seen.add(layer.name)
    if layer.type not in CANONICAL_TYPES:
        raise fail(f"cannot write layer {layer.name!r}: unknown Type {layer.type!r}; expected one of {type_names()}")
    allowed = dims_for_type(layer.type)
    unknown = [d for d in layer.dims if d not in allowed]
    if unknown:
        raise fail(f"cannot write layer {layer.name!r}: dimension(s) {' '.join(unknown)} do not exist for "
                   f"Type {layer.type}; allowed: {' '.join(allowed)}")
    out = [f"\tLayer {layer.name} {{", f"\t\tType: {layer.type}"]
    sy = _check_int(layer.stride_y, "stride Y", layer, path)
    sx = _check_int(layer.stride_x, "stride X", layer, path)
    if operator_of_type(layer.type).windows or layer.type == "TRCONV" or (sy, sx) != (1, 1):
        out.append(f"\t\tStride {{ X: {sx}, Y: {sy} }}")
    dims = ", ".join(
        f"{d}: {_check_int(layer.dims[d], f'dimension {d}', layer, path)}" for d in allowed if d in layer.dims
    )
    out.append(f"\t\tDimensions {{ {dims} }}")
    out.append("\t\tDataflow {")
    if not layer.dataflow:
        raise fail(f"cannot write layer {layer.name!r}: its Dataflow is empty")
    for d in layer.dataflow:
        if isinstance(d, ClusterDirective):
            out.append(f"\t\t\tCluster({_check_int(d.size, 'cluster size', layer, path)}, P);")
        elif isinstance(d, MapDirective) and d.kind in ("spatial", "temporal") and d.dim in allowed:
            word = "SpatialMap" if d.kind == "spatial" else "TemporalMap"
            size = _check_int(d.size, f"{word} size", layer, path)
            offset = _check_int(d.offset, f"{word} offset", layer, path)
            out.append(f"\t\t\t{word}({size},{offset}) {d.dim};")
        else:
            raise fail(f"cannot write layer {layer.name!r}: bad directive {d!r}")
    out += ["\t\t}", "\t}"]
    return out
