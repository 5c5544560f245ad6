"""Parsed form of a MAESTRO mapping file (``.m``): what the file says, resolved to integers.

Sizes written as ``Sz(R)`` or as a ``Constant`` are already resolved to integers here; every
element remembers its 1-based source line so later checks can point at it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, Union


@dataclass(frozen=True)
class MapDirective:
    """``SpatialMap(size,offset) D`` or ``TemporalMap(size,offset) D``.

    ``dim`` is the dimension as written, normalised: ``N K C R S Y X Y' X'`` (``Y'``/``X'``
    are output rows/cols) or ``M N K`` for GEMM.
    """

    kind: Literal["spatial", "temporal"]
    size: int
    offset: int
    dim: str
    line: int


@dataclass(frozen=True)
class ClusterDirective:
    """``Cluster(size, P)``: groups ``size`` units; directives after it map within a cluster."""

    size: int
    line: int


Directive = Union[MapDirective, ClusterDirective]


@dataclass(frozen=True)
class MaestroLayer:
    """One ``Layer name { ... }`` block."""

    name: str
    type: str  # the catalog's maestro_type: CONV, DSCONV, GEMM, BMM, FC, RESADD, PWCONV (see maestro_resolve)
    stride_y: int
    stride_x: int
    dims: dict[str, int]
    dataflow: tuple[Directive, ...]
    line: int


@dataclass(frozen=True)
class MaestroFile:
    """A whole ``.m`` file: one ``Network`` holding its layers."""

    network: str
    layers: tuple[MaestroLayer, ...]
    path: str


def strip_lines(mf: MaestroFile) -> MaestroFile:
    """``mf`` with every line number set to 0 (to compare files that differ only in layout)."""
    return dataclasses.replace(
        mf,
        layers=tuple(
            dataclasses.replace(
                layer,
                line=0,
                dataflow=tuple(dataclasses.replace(d, line=0) for d in layer.dataflow),
            )
            for layer in mf.layers
        ),
    )
