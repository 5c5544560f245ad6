"""Syntax tree of a MAESTRO mapping file (``.m``): what the file says, before anything is resolved.

The parser (:mod:`accelsim.mapping.maestro_parser`) builds it; the resolver
(:mod:`accelsim.mapping.maestro_resolve`) evaluates its expressions and applies MAESTRO's
conventions to produce the resolved form (:mod:`accelsim.mapping.ast`). Every node remembers
its 1-based source line. Names are as written except dimensions (upper-cased, ``Y'``/``X'``
normalised: :func:`norm_dim`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from accelsim.errors import MappingError


MAX_DIGITS = 18  # integers and the products of expressions stay below 10**18


def norm_dim(raw: str) -> str:
    """A dimension name as the tree holds it: upper-cased, typographic quotes made ``'``."""
    return raw.replace("\u2019", "'").replace("\u2032", "'").upper()


# ----- integer expressions (sizes, offsets, dimensions, strides, Constants) ----------------------
@dataclass(frozen=True)
class Number:
    """An integer literal."""

    value: int
    line: int


@dataclass(frozen=True)
class ConstantRef:
    """The name of a ``Constant`` (case-sensitive)."""

    name: str
    line: int


@dataclass(frozen=True)
class SizeOf:
    """``Sz(D)``: the size of dimension ``dim``."""

    dim: str
    line: int


@dataclass(frozen=True)
class Negate:
    """Unary minus."""

    operand: Expr
    line: int


@dataclass(frozen=True)
class BinaryOp:
    """``left op right`` with ``op`` one of ``+ - *``."""

    op: Literal["+", "-", "*"]
    left: Expr
    right: Expr
    line: int


Expr = Union[Number, ConstantRef, SizeOf, Negate, BinaryOp]


# ----- statements --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """``KEY: expr`` inside ``Stride { }`` or ``Dimensions { }`` (key normalised like a dimension)."""

    key: str
    value: Expr
    line: int


@dataclass(frozen=True)
class MapSyntax:
    """``SpatialMap(size, offset) D`` or ``TemporalMap(size, offset) D``."""

    kind: Literal["spatial", "temporal"]
    size: Expr
    offset: Expr
    dim: str
    line: int  # of the keyword
    dim_line: int  # of the dimension name


@dataclass(frozen=True)
class ClusterSyntax:
    """``Cluster(size, P)``."""

    size: Expr
    line: int


DirectiveSyntax = Union[MapSyntax, ClusterSyntax]


@dataclass(frozen=True)
class TypeSyntax:
    """``Type: NAME`` (the name as written)."""

    name: str
    line: int


@dataclass(frozen=True)
class DataflowSyntax:
    """``Dataflow { ... }``: its directives in order (possibly none)."""

    directives: tuple[DirectiveSyntax, ...]
    line: int


@dataclass(frozen=True)
class LayerSyntax:
    """``Layer NAME { ... }`` with its four parts (``Stride`` is optional)."""

    name: str
    line: int
    type: TypeSyntax
    stride: tuple[Entry, ...]
    dimensions: tuple[Entry, ...]
    dataflow: DataflowSyntax


@dataclass(frozen=True)
class ConstantSyntax:
    """A top-level ``Constant NAME value;``."""

    name: str
    value: Expr
    line: int


@dataclass(frozen=True)
class NetworkSyntax:
    """``Network NAME { Layer ... }`` (the name may be empty)."""

    name: str
    line: int
    close_line: int
    layers: tuple[LayerSyntax, ...]


@dataclass(frozen=True)
class FileSyntax:
    """A whole file: its top-level Constants and its Network (at most one), in the order written.
    ``error``: the syntax error that ended reading early (the items are those complete before it)."""

    path: str
    items: tuple[Union[ConstantSyntax, NetworkSyntax], ...]
    end_line: int  # the last line
    error: MappingError | None = None
