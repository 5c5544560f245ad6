"""Reader and writer for MAESTRO data-centric mapping files (``.m``).

A file holds optional top-level ``Constant NAME value;`` lines and exactly one ``Network``::

    Constant T 64;
    Network resnet {
      Layer conv1 {
        Type: CONV
        Stride { X: 2, Y: 2 }
        Dimensions { K: 64, C: 3, R: 7, S: 7, Y: 224, X: 224 }
        Dataflow {
          SpatialMap(1,1) K;
          TemporalMap(T,T) C;
          TemporalMap(Sz(R),1) Y;
          Cluster(64, P);
          SpatialMap(1,1) C;
        }
      }
    }

Reading is two steps over typed trees: :mod:`accelsim.mapping.maestro_parser` (scanner and
grammar: text -> :mod:`accelsim.mapping.maestro_syntax`) and :mod:`accelsim.mapping.maestro_resolve`
(what the file means: types, dimensions and defaults, Constants and ``Sz``, MAESTRO's conventions
-> :mod:`accelsim.mapping.ast`); :mod:`accelsim.mapping.maestro_writer` writes the resolved form
back. Each module's docstring states its rules. This module reads files (UTF-8, optional BOM, LF,
CRLF or CR line ends) and is the one entry point the rest of accelsim uses.
"""

from __future__ import annotations

from pathlib import Path

from accelsim.errors import InputError, MappingError
from accelsim.input_files import read_text
from accelsim.mapping.ast import MaestroFile, strip_lines
from accelsim.mapping.maestro_parser import parse_syntax
from accelsim.mapping.maestro_resolve import (CANONICAL_TYPES, DEFAULT_DIMS, TYPE_ALIASES, dims_for_type,
                                              layer_from_maestro, op_type, resolve)
from accelsim.mapping.maestro_writer import write_maestro

__all__ = [
    "CANONICAL_TYPES",
    "DEFAULT_DIMS",
    "TYPE_ALIASES",
    "dims_for_type",
    "layer_from_maestro",
    "load_maestro",
    "op_type",
    "parse_maestro",
    "strip_lines",
    "write_maestro",
]


def parse_maestro(text: str, path: str = "<string>") -> MaestroFile:
    """Parse the text of a ``.m`` file; every problem raises :class:`MappingError`."""
    path = str(path)
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return resolve(parse_syntax(text, path))
    except RecursionError:
        raise MappingError("expression is nested too deeply", source=path) from None


def load_maestro(path: str | Path) -> MaestroFile:
    """Read and parse a ``.m`` file (UTF-8, optional BOM, any line endings)."""
    name = str(path)
    try:
        text = read_text(path, "mapping file")
    except InputError as exc:
        raise MappingError(exc.detail, source=exc.source, line=exc.line) from None
    return parse_maestro(text, name)
