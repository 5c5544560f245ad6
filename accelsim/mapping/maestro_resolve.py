"""Resolver of MAESTRO mapping files: syntax tree (:mod:`accelsim.mapping.maestro_syntax`) ->
resolved file (:mod:`accelsim.mapping.ast`) -> accelsim layers.

This is the one place that decides what a ``.m`` file *means*: which ``Type`` names are accepted
and which operator each is (read from the operator catalog, :mod:`accelsim.workload.operators`),
which dimensions a type takes and their defaults, how Constants, ``Sz(D)`` and the arithmetic
in sizes evaluate, which dimensions a directive may map, and how an output size ``Y'``/``X'``
becomes an input size. Its rules:

* Sizes, offsets, dimensions and strides must come out >= 1; values stay below 10**18.
* ``Constant`` must be at top level before use (as in MAESTRO; the parser refuses redefinitions).
* A file holds exactly one ``Network``.
* ``Sz(D)`` needs D to be given in ``Dimensions`` or to have a default for the layer type
  (``N`` = 1 always; see :data:`DEFAULT_DIMS`); it cannot be used inside ``Dimensions``.
  ``Sz(Y')``/``Sz(X')`` are rejected unless the ``Dimensions`` block itself gives ``Y'``/``X'``.
* A directive may map a dimension given in ``Dimensions``, one with a type default, ``Y'``/``X'``
  (output rows/cols) and, when ``Dimensions`` gives ``Y'``/``X'``, the input ``Y``/``X``.
* ``Dimensions`` may give the output size ``Y'``/``X'`` instead of the input ``Y``/``X`` (real
  MAESTRO files do); giving both Y and Y' is an error. :func:`layer_from_maestro` derives the
  input size ``(Y' - 1) * stride + R``.
* ``Stride`` takes X and Y only. Every layer needs a non-empty ``Dataflow`` (MAESTRO silently
  reuses the previous layer's dataflow when one is missing; we refuse). Layer names are unique.

Legality against the hardware (sizes larger than a dimension, clusters larger than the PE
array, ...) is checked later by the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from accelsim.errors import MappingError
from accelsim.mapping.ast import ClusterDirective, Directive, MaestroFile, MaestroLayer, MapDirective
from accelsim.mapping.maestro_syntax import (ClusterSyntax, ConstantRef, ConstantSyntax, Entry, Expr, FileSyntax,
                                             LayerSyntax, Negate, NetworkSyntax, Number, SizeOf, MAX_DIGITS, norm_dim)
from accelsim.workload.operators import OPERATORS, Operator, OpType
from accelsim.workload.ops import Layer

# ----- vocabulary (from the operator catalog) --------------------------------------------------

#: Canonical ``Type`` names as stored in :attr:`MaestroLayer.type`, and the operator each means
#: (the operator catalog's ``maestro_type``). CONV, DSCONV and GEMM are MAESTRO's; FC, RESADD and
#: PWCONV are accelsim extensions.
CANONICAL_TYPES: dict[str, OpType] = {spec.maestro_type: op for op, spec in OPERATORS.items()}

#: Accepted spellings of ``Type`` (upper-cased) -> canonical name: the canonical name, the
#: network-table name and the catalog's aliases.
TYPE_ALIASES: dict[str, str] = {
    alias: spec.maestro_type
    for spec in OPERATORS.values()
    for alias in (spec.maestro_type, spec.name, *spec.maestro_aliases)
}

# MAESTRO layer types we know of but cannot simulate (to say so instead of "unknown").
_UNSUPPORTED_MAESTRO_TYPES = tuple(t for t in ("TRCONV", "NGCONV", "POOL", "LSTM", "BMM") if t not in TYPE_ALIASES)

#: Sizes a layer type assumes for dimensions its ``Dimensions`` block leaves out.
DEFAULT_DIMS: dict[str, dict[str, int]] = {
    spec.maestro_type: {d: v for d, v in spec.dims.items() if v is not None} for spec in OPERATORS.values()
}


def type_names() -> str:
    """The canonical ``Type`` names, comma-separated (for messages)."""
    return ", ".join(CANONICAL_TYPES)


def operator_of_type(type_name: str) -> Operator:
    """The catalog entry of a canonical ``Type`` name."""
    return OPERATORS[CANONICAL_TYPES[type_name]]


def dims_for_type(type_name: str) -> tuple[str, ...]:
    """Dimension names a canonical layer type accepts (in canonical order): the operator's sizes,
    then the output sizes of its windows (``Y'``/``X'``, which may replace ``Y``/``X``)."""
    spec = operator_of_type(type_name)
    return tuple(spec.dims) + tuple(w.output_dim for w in spec.windows)


_ALL_DIMS = tuple(dict.fromkeys(d for t in CANONICAL_TYPES for d in dims_for_type(t)))


def op_type(layer: MaestroLayer) -> OpType:
    """The accelsim operator a parsed layer describes."""
    try:
        return CANONICAL_TYPES[layer.type]
    except KeyError:
        raise MappingError(
            f"layer {layer.name!r}: unknown Type {layer.type!r}; expected one of {type_names()}", line=layer.line,
        ) from None


# ----- expressions -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Constant:
    value: int
    line: int


@dataclass(frozen=True)
class _Scope:
    """What an expression may refer to while it is evaluated, and what it is (for messages)."""

    constants: dict[str, _Constant]
    sz: Callable[[str, int], int] | None
    where: str


class _Resolver:
    def __init__(self, path: str):
        self.path = path
        self.constants: dict[str, _Constant] = {}

    def error(self, message: str, line: int | None) -> MappingError:
        return MappingError(message, source=self.path, line=line)

    def evaluate(self, node: Expr, scope: _Scope) -> int:
        if isinstance(node, Number):
            return node.value
        if isinstance(node, ConstantRef):
            if node.name not in scope.constants:
                known = ", ".join(sorted(scope.constants)) or "none are defined"
                hint = " (use Sz(D) for a dimension's size)" if norm_dim(node.name) in _ALL_DIMS else ""
                raise self.error(
                    f"unknown Constant {node.name!r} in {scope.where}{hint}; defined Constants: {known}", node.line)
            return scope.constants[node.name].value
        if isinstance(node, SizeOf):
            if scope.sz is None:
                raise self.error(f"Sz({node.dim}) cannot be used in {scope.where}", node.line)
            return scope.sz(node.dim, node.line)
        if isinstance(node, Negate):
            return -self.evaluate(node.operand, scope)
        a, b = self.evaluate(node.left, scope), self.evaluate(node.right, scope)
        if node.op == "+":
            return a + b
        if node.op == "-":
            return a - b
        result = a * b
        if abs(result) >= 10**MAX_DIGITS:
            raise self.error(f"value in {scope.where} is too large", node.line)
        return result

    def positive(self, node: Expr, scope: _Scope, line: int) -> int:
        value = self.evaluate(node, scope)
        if value < 1:
            raise self.error(f"{scope.where} must be an integer >= 1, got {value}", line)
        return value

    # ----- file and network -----------------------------------------------------------------
    def resolve_file(self, tree: FileSyntax) -> MaestroFile:
        network: MaestroFile | None = None
        for item in tree.items:  # in file order: a Constant counts only after it is declared
            if isinstance(item, ConstantSyntax):
                self.declare(item)
            else:
                network = self.resolve_network(item)
        if tree.error is not None:  # the syntax error after everything resolved so far
            raise tree.error
        if network is None:
            raise self.error("no Network block found; a mapping file needs 'Network NAME { Layer ... }'",
                             tree.end_line)
        return network

    def declare(self, item: ConstantSyntax) -> None:
        value = self.evaluate(item.value, _Scope(self.constants, None, f"Constant {item.name}"))
        self.constants[item.name] = _Constant(value, item.line)

    def resolve_network(self, net: NetworkSyntax) -> MaestroFile:
        layers: list[MaestroLayer] = []
        seen: dict[str, int] = {}
        for syntax in net.layers:
            layer = self.resolve_layer(syntax)
            if syntax.name in seen:
                raise self.error(f"duplicate layer name {syntax.name!r}: already defined at line {seen[syntax.name]}",
                                 syntax.line)
            seen[syntax.name] = syntax.line
            layers.append(layer)
        return MaestroFile(network=net.name, layers=tuple(layers), path=self.path)

    # ----- layer ----------------------------------------------------------------------------
    def resolve_layer(self, syntax: LayerSyntax) -> MaestroLayer:
        label = f"layer {syntax.name!r}"
        tname = self.resolve_type(syntax, label)
        dims = self.resolve_dimensions(syntax.dimensions, tname, label)
        strides = self.resolve_strides(syntax.stride, label)
        directives = self.resolve_dataflow(syntax, tname, dims, label)
        return MaestroLayer(name=syntax.name, type=tname, stride_y=strides["Y"], stride_x=strides["X"], dims=dims,
                            dataflow=directives, line=syntax.line)

    def resolve_type(self, syntax: LayerSyntax, label: str) -> str:
        raw = syntax.type.name
        tname = TYPE_ALIASES.get(raw.upper())
        if tname is None:
            if raw.upper() in _UNSUPPORTED_MAESTRO_TYPES:
                msg = f"{label}: MAESTRO layer Type {raw!r} is not supported by accelsim; supported: {type_names()}"
            else:
                msg = f"{label}: unknown Type {raw!r}; expected one of {type_names()}"
            raise self.error(msg, syntax.type.line)
        return tname

    def resolve_dimensions(self, entries: tuple[Entry, ...], tname: str, label: str) -> dict[str, int]:
        allowed = dims_for_type(tname)
        dims: dict[str, int] = {}
        dim_lines: dict[str, int] = {}
        for entry in entries:
            if entry.key not in allowed:
                raise self.error(
                    f"{label}: unknown dimension {entry.key!r} in Dimensions for Type {tname}; "
                    f"allowed: {' '.join(allowed)}",
                    entry.line,
                )
            if entry.key in dims:
                raise self.error(
                    f"{label}: duplicate dimension {entry.key} in Dimensions (first given at line "
                    f"{dim_lines[entry.key]})",
                    entry.line,
                )
            dims[entry.key] = self.positive(entry.value, _Scope(self.constants, None, f"dimension {entry.key} of {label}"),
                                            entry.line)
            dim_lines[entry.key] = entry.line
        for w in operator_of_type(tname).windows:
            if w.output_dim in dims and w.input_dim in dims:
                raise self.error(
                    f"{label}: give either {w.input_dim} (input size) or {w.output_dim} (output size) in "
                    "Dimensions, not both",
                    max(dim_lines[w.output_dim], dim_lines[w.input_dim]),
                )
        return dims

    def resolve_strides(self, entries: tuple[Entry, ...], label: str) -> dict[str, int]:
        strides = {"Y": 1, "X": 1}
        seen: dict[str, int] = {}
        for entry in entries:
            if entry.key not in strides:
                raise self.error(f"{label}: unknown Stride key {entry.key!r}; expected X or Y", entry.line)
            if entry.key in seen:
                raise self.error(f"{label}: duplicate Stride key {entry.key} (first given at line {seen[entry.key]})",
                                 entry.line)
            seen[entry.key] = entry.line
            strides[entry.key] = self.positive(entry.value,
                                               _Scope(self.constants, None, f"Stride {entry.key} of {label}"), entry.line)
        return strides

    def resolve_dataflow(self, syntax: LayerSyntax, tname: str, dims: dict[str, int],
                         label: str) -> tuple[Directive, ...]:
        allowed = dims_for_type(tname)
        spec = operator_of_type(tname)
        defaults = DEFAULT_DIMS[tname]
        output_dims = {w.output_dim for w in spec.windows}

        def sz(dim: str, line: int) -> int:
            if dim not in allowed:
                raise self.error(
                    f"{label}: unknown dimension {dim!r} in Sz({dim}) for Type {tname}; allowed: {' '.join(allowed)}",
                    line,
                )
            if dim in dims:
                return dims[dim]
            if dim in output_dims:
                raise self.error(
                    f"{label}: Sz({dim}) is not allowed: {dim} is the output size, which Dimensions does "
                    f"not give; use Sz of a Dimensions entry (e.g. Sz(R)) or a number",
                    line,
                )
            if dim in defaults:
                return defaults[dim]
            raise self.error(f"{label}: Sz({dim}): dimension {dim} is not given in Dimensions", line)

        directives: list[Directive] = []
        for d in syntax.dataflow.directives:
            if isinstance(d, ClusterSyntax):
                size = self.positive(d.size, _Scope(self.constants, sz, f"the size of Cluster in {label}"), d.line)
                directives.append(ClusterDirective(size=size, line=d.line))
                continue
            word = "SpatialMap" if d.kind == "spatial" else "TemporalMap"
            if d.dim not in allowed:
                raise self.error(
                    f"{label}: unknown dimension {d.dim!r} in {word} for Type {tname}; allowed: {' '.join(allowed)}",
                    d.dim_line,
                )
            window = spec.window(d.dim)
            derivable = window is not None and window.output_dim in dims
            if d.dim not in dims and d.dim not in output_dims and d.dim not in defaults and not derivable:
                raise self.error(
                    f"{label}: {word} maps dimension {d.dim}, which is not given in Dimensions "
                    f"(given: {' '.join(dims)})",
                    d.dim_line,
                )
            size = self.positive(d.size, _Scope(self.constants, sz, f"the size of {word} {d.dim} in {label}"), d.line)
            offset = self.positive(d.offset, _Scope(self.constants, sz, f"the offset of {word} {d.dim} in {label}"),
                                   d.line)
            directives.append(MapDirective(kind=d.kind, size=size, offset=offset, dim=d.dim, line=d.line))
        if not directives:
            raise self.error(f"{label}: Dataflow is empty; give at least one SpatialMap/TemporalMap",
                             syntax.dataflow.line)
        return tuple(directives)


def resolve(tree: FileSyntax) -> MaestroFile:
    """The resolved file of a syntax tree; every problem raises MappingError."""
    return _Resolver(tree.path).resolve_file(tree)


# ----- MAESTRO layer -> accelsim layer ---------------------------------------------------------
def layer_from_maestro(ml: MaestroLayer, path: str) -> Layer:
    """Build the accelsim :class:`Layer` a parsed MAESTRO layer describes.

    ``Y``/``X`` are input sizes as in MAESTRO; an output size ``Y'``/``X'`` given instead is
    converted to the input size ``(Y' - 1) * stride + R``. Layer.build validates the rest (and
    raises InputError naming ``path:line``).
    """
    op = op_type(ml)
    spec = OPERATORS[op]
    source = f"{path}:{ml.line}"
    outputs = {w.output_dim: w for w in spec.windows if w.output_dim in ml.dims}
    sizes = {d: v for d, v in ml.dims.items() if d not in outputs}
    strides = {"stride_y": ml.stride_y, "stride_x": ml.stride_x}
    for out_dim, w in outputs.items():
        filt = w.filter_dim
        f = 1 if filt is None else ml.dims.get(filt, DEFAULT_DIMS[ml.type].get(filt))
        if f is None:
            raise MappingError(
                f"layer {ml.name!r}: Dimensions give {out_dim} but not {filt}; cannot derive the input "
                f"size {w.input_dim}",
                source=path,
                line=ml.line,
            )
        sizes[w.input_dim] = (ml.dims[out_dim] - 1) * strides[w.stride] + f
    return Layer.build(ml.name, op, sizes, ml.stride_y, ml.stride_x, source=source)
