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

Grammar decisions (MAESTRO's own tokenizer splits lines on ``space , - > ( ) : tab ;`` so it
is very lax; we keep its leniency where it is unambiguous and are precise everywhere else):

* Whitespace and line breaks are free-form; LF, CRLF and CR are all accepted, as is a UTF-8 BOM.
  Comments: ``// ...`` and ``# ...`` to end of line, ``/* ... */`` blocks.
* Semicolons are optional everywhere (after directives, Constants, Type, blocks): MAESTRO
  treats ``;`` as whitespace, and every statement here is self-delimiting. Stray extra ``;``
  are ignored.
* Keywords (``Network``, ``Layer``, ``Constant``, ``Type``, ``Stride``, ``Dimensions``,
  ``Dataflow``, ``SpatialMap``, ``TemporalMap``, ``Cluster``, ``Sz``) and ``Type`` values are
  case-insensitive; Constant names are case-sensitive. Dimension names are upper-cased and
  ``Y'``/``X'`` (also written with a typographic quote) normalised to exactly ``Y'``/``X'``.
* ``Type: CONV`` or ``Type CONV``; inside ``Stride``/``Dimensions`` both ``K: 64`` and
  ``K 64``, with ``,`` or ``;`` between entries optional. ``Stride`` takes X and Y only and
  may come before or after ``Dimensions`` (MAESTRO requires it before).
* Sizes, offsets, Cluster sizes, Constants, dimensions and strides are integer expressions:
  integers, Constant names, ``Sz(D)`` (not inside ``Dimensions``), ``+ - *``, unary minus and
  parentheses. Sizes/offsets/dimensions/strides must come out >= 1.
* ``Sz(D)`` needs D to be given in ``Dimensions`` or to have a default for the layer type
  (``N`` = 1 always; see :data:`DEFAULT_DIMS`). ``Sz(Y')``/``Sz(X')`` are rejected unless the
  ``Dimensions`` block itself gives ``Y'``/``X'``.
* A directive may map a dimension given in ``Dimensions``, one with a type default, ``Y'``/``X'``
  (output rows/cols) and, when ``Dimensions`` gives ``Y'``/``X'``, the input ``Y``/``X``.
* ``Dimensions`` may give the output size ``Y'``/``X'`` instead of the input ``Y``/``X`` (real
  MAESTRO files do); giving both Y and Y' is an error. :func:`layer_from_maestro` derives the
  input size ``(Y' - 1) * stride + R``.
* ``Constant`` must be at top level before use (as in MAESTRO); redefinition is an error.
* Exactly one ``Network`` (its name may be omitted, as MAESTRO allows); every layer needs a
  name, ``Type``, ``Dimensions`` and a non-empty ``Dataflow`` (MAESTRO silently reuses the
  previous layer's dataflow when one is missing; we refuse). Layer names are unique.
* ``Cluster(n, P)`` only; MAESTRO's logical ``L`` clusters are rejected.

Legality against the hardware (sizes larger than a dimension, clusters larger than the PE
array, ...) is checked later by the compiler; this module only parses.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Callable

from accelsim.errors import InputError, MappingError
from accelsim.input_files import read_text
from accelsim.mapping.ast import ClusterDirective, Directive, MaestroFile, MaestroLayer, MapDirective
from accelsim.workload.operators import OPERATORS, Operator, OpType
from accelsim.workload.ops import Layer

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

# ----- vocabulary ------------------------------------------------------------------------------

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

_BLOCK_KEYWORDS = ("NETWORK", "LAYER", "TYPE", "STRIDE", "DIMENSIONS", "DATAFLOW")
_DIRECTIVE_KEYWORDS = ("SPATIALMAP", "TEMPORALMAP", "CLUSTER")
_KEYWORD_SPELLING = {
    "NETWORK": "Network", "LAYER": "Layer", "TYPE": "Type", "STRIDE": "Stride",
    "DIMENSIONS": "Dimensions", "DATAFLOW": "Dataflow", "SPATIALMAP": "SpatialMap",
    "TEMPORALMAP": "TemporalMap", "CLUSTER": "Cluster", "CONSTANT": "Constant",
}

_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:['\u2019\u2032])?")
_NUMBER_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
_CONSTANT_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MAX_DIGITS = 18


def dims_for_type(type_name: str) -> tuple[str, ...]:
    """Dimension names a canonical layer type accepts (in canonical order): the operator's sizes,
    then the output sizes of its windows (``Y'``/``X'``, which may replace ``Y``/``X``)."""
    spec = _operator(type_name)
    return tuple(spec.dims) + tuple(w.output_dim for w in spec.windows)


def _operator(type_name: str) -> Operator:
    return OPERATORS[CANONICAL_TYPES[type_name]]


_ALL_DIMS = tuple(dict.fromkeys(d for t in CANONICAL_TYPES for d in dims_for_type(t)))


def op_type(layer: MaestroLayer) -> OpType:
    """The accelsim operator a parsed layer describes."""
    try:
        return CANONICAL_TYPES[layer.type]
    except KeyError:
        raise MappingError(
            f"layer {layer.name!r}: unknown Type {layer.type!r}; expected one of "
            + ", ".join(CANONICAL_TYPES),
            line=layer.line or None,
        ) from None


def _norm_dim(raw: str) -> str:
    return raw.replace("\u2019", "'").replace("\u2032", "'").upper()


# ----- scanner ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Tok:
    kind: str  # "ident", "number", "eof" or the punctuation character itself
    text: str
    line: int

    def describe(self) -> str:
        return "end of file" if self.kind == "eof" else repr(self.text)


class _Scanner:
    """Hand-written lexer with on-demand tokens (layer names need a different rule)."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.pos = 0
        self.line = 1

    def error(self, message: str, line: int | None) -> MappingError:
        return MappingError(message, source=self.path, line=line)

    def _skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch == "\n":
                self.line += 1
                self.pos += 1
            elif ch.isspace():
                self.pos += 1
            elif ch == "#" or text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.error("block comment '/*' is never closed with '*/'", self.line)
                self.line += text.count("\n", self.pos, end)
                self.pos = end + 2
            else:
                return

    def next(self) -> _Tok:
        self._skip()
        if self.pos >= len(self.text):
            return _Tok("eof", "", self.line)
        ch = self.text[self.pos]
        for kind, regex in (("ident", _IDENT_RE), ("number", _NUMBER_RE)):
            m = regex.match(self.text, self.pos)
            if m:
                self.pos = m.end()
                return _Tok(kind, m.group(), self.line)
        if ch in "{}():,;+-*/=":
            self.pos += 1
            return _Tok(ch, ch, self.line)
        raise self.error(f"unexpected character {ch!r}", self.line)

    def peek(self, k: int = 1) -> _Tok:
        """The k-th next token, without consuming anything."""
        saved = (self.pos, self.line)
        try:
            tok = self.next()
            for _ in range(k - 1):
                tok = self.next()
            return tok
        finally:
            self.pos, self.line = saved

    def read_name(self) -> tuple[str, int]:
        """A Network/Layer name: letters, digits, ``_ - .``; empty string if none."""
        self._skip()
        m = _NAME_RE.match(self.text, self.pos)
        if not m:
            return "", self.line
        self.pos = m.end()
        return m.group(), self.line


def _kw(tok: _Tok) -> str:
    """Upper-cased identifier text, or '' for non-identifiers."""
    return tok.text.upper() if tok.kind == "ident" else ""


# ----- expressions -----------------------------------------------------------------------------
# Nodes: ("int", value, line) ("const", name, line) ("sz", dim, line) ("neg", node, line)
#        ("bin", op, left, right, line)


class _Ctx:
    """What an expression may refer to while it is evaluated."""

    def __init__(self, constants: dict[str, tuple[int, int]], sz: Callable[[str, int], int] | None, where: str):
        self.constants = constants
        self.sz = sz
        self.where = where


class _Parser:
    def __init__(self, text: str, path: str):
        self.sc = _Scanner(text, path)
        self.path = path
        self.constants: dict[str, tuple[int, int]] = {}  # name -> (value, line)

    def error(self, message: str, line: int | None) -> MappingError:
        return MappingError(message, source=self.path, line=line)

    # ----- expressions ----------------------------------------------------------------------
    def parse_expr(self, what: str) -> tuple:
        node = self._term(what)
        while self.sc.peek().kind in ("+", "-"):
            op = self.sc.next()
            node = ("bin", op.kind, node, self._term(what), op.line)
        return node

    def _term(self, what: str) -> tuple:
        node = self._unary(what)
        while True:
            tok = self.sc.peek()
            if tok.kind == "*":
                self.sc.next()
                node = ("bin", "*", node, self._unary(what), tok.line)
            elif tok.kind == "/":
                raise self.error(
                    f"division is not supported in {what}; only + - * and parentheses", tok.line
                )
            else:
                return node

    def _unary(self, what: str) -> tuple:
        tok = self.sc.peek()
        if tok.kind in ("-", "+"):
            self.sc.next()
            inner = self._unary(what)
            return ("neg", inner, tok.line) if tok.kind == "-" else inner
        return self._primary(what)

    def _primary(self, what: str) -> tuple:
        tok = self.sc.next()
        if tok.kind == "number":
            if not tok.text.isdigit():
                raise self.error(f"non-integer value {tok.text!r} in {what}; sizes are whole numbers", tok.line)
            if len(tok.text) > _MAX_DIGITS:
                raise self.error(f"number {tok.text[:12]}... in {what} is too large", tok.line)
            return ("int", int(tok.text), tok.line)
        if tok.kind == "ident":
            if _kw(tok) == "SZ" and self.sc.peek().kind == "(":
                open_tok = self.sc.next()
                dim_tok = self.sc.next()
                if dim_tok.kind != "ident":
                    raise self.error(
                        f"Sz( must be followed by a dimension name in {what}, found {dim_tok.describe()}",
                        dim_tok.line,
                    )
                close = self.sc.next()
                if close.kind != ")":
                    raise self.error(
                        f"unbalanced parentheses in {what}: '(' of Sz at line {open_tok.line} is not "
                        f"closed (found {close.describe()} where ')' was expected)",
                        close.line,
                    )
                return ("sz", _norm_dim(dim_tok.text), tok.line)
            return ("const", tok.text, tok.line)
        if tok.kind == "(":
            inner = self.parse_expr(what)
            close = self.sc.next()
            if close.kind != ")":
                raise self.error(
                    f"unbalanced parentheses in {what}: '(' at line {tok.line} is not closed "
                    f"(found {close.describe()} where ')' was expected)",
                    close.line,
                )
            return inner
        if tok.kind == ")":
            raise self.error(f"unbalanced parentheses in {what}: unexpected ')' where a value was expected", tok.line)
        raise self.error(
            f"missing value in {what}: expected a number, a Constant or Sz(D), found {tok.describe()}",
            tok.line,
        )

    def evaluate(self, node: tuple, ctx: _Ctx) -> int:
        kind = node[0]
        if kind == "int":
            return node[1]
        if kind == "const":
            name, line = node[1], node[2]
            if name not in ctx.constants:
                known = ", ".join(sorted(ctx.constants)) or "none are defined"
                hint = " (use Sz(D) for a dimension's size)" if _norm_dim(name) in _ALL_DIMS else ""
                raise self.error(
                    f"unknown Constant {name!r} in {ctx.where}{hint}; defined Constants: {known}", line
                )
            return ctx.constants[name][0]
        if kind == "sz":
            if ctx.sz is None:
                raise self.error(f"Sz({node[1]}) cannot be used in {ctx.where}", node[2])
            return ctx.sz(node[1], node[2])
        if kind == "neg":
            return -self.evaluate(node[1], ctx)
        _, op, left, right, _line = node
        a, b = self.evaluate(left, ctx), self.evaluate(right, ctx)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        result = a * b
        if abs(result) >= 10**_MAX_DIGITS:
            raise self.error(f"value in {ctx.where} is too large", _line)
        return result

    def positive(self, node: tuple, ctx: _Ctx, line: int) -> int:
        value = self.evaluate(node, ctx)
        if value < 1:
            raise self.error(f"{ctx.where} must be an integer >= 1, got {value}", line)
        return value

    # ----- top level ------------------------------------------------------------------------
    def parse_file(self) -> MaestroFile:
        network: tuple[str, int, int, list[MaestroLayer]] | None = None  # name, open, close, layers
        while True:
            tok = self.sc.next()
            kw = _kw(tok)
            if tok.kind == "eof":
                break
            if tok.kind == ";":
                continue
            if kw == "CONSTANT":
                self.parse_constant()
            elif kw == "NETWORK":
                if network is not None:
                    raise self.error(
                        f"a file holds exactly one Network; Network {network[0]!r} was already given "
                        f"at line {network[1]}",
                        tok.line,
                    )
                network = self.parse_network(tok)
            elif tok.kind == "}":
                closed = f" (Network {network[0]!r} was closed at line {network[2]})" if network else ""
                raise self.error(f"stray '}}': no block is open here{closed}", tok.line)
            else:
                closed = ""
                if network is not None and kw in _BLOCK_KEYWORDS + _DIRECTIVE_KEYWORDS:
                    closed = f"; Network {network[0]!r} was already closed at line {network[2]} (one '}}' too many?)"
                shown = f"keyword {tok.text!r}" if tok.kind == "ident" else tok.describe()
                raise self.error(f"unknown {shown} at top level; expected Constant or Network{closed}", tok.line)
        if network is None:
            raise self.error("no Network block found; a mapping file needs 'Network NAME { Layer ... }'", self.sc.line)
        name, _open, _close, layers = network
        return MaestroFile(network=name, layers=tuple(layers), path=self.path)

    def parse_constant(self) -> None:
        name_tok = self.sc.next()
        if name_tok.kind != "ident" or not _CONSTANT_NAME_RE.match(name_tok.text):
            raise self.error(f"expected a Constant name after 'Constant', found {name_tok.describe()}", name_tok.line)
        name = name_tok.text
        if name in self.constants:
            raise self.error(
                f"Constant {name!r} is already defined at line {self.constants[name][1]}", name_tok.line
            )
        if self.sc.peek().kind in (":", "="):
            self.sc.next()
        nxt = self.sc.peek()
        if nxt.kind in (";", "}", "eof") or (nxt.kind == "ident" and _kw(nxt) in ("CONSTANT", "NETWORK")):
            raise self.error(f"missing value for Constant {name!r}", nxt.line)
        node = self.parse_expr(f"Constant {name}")
        value = self.evaluate(node, _Ctx(self.constants, None, f"Constant {name}"))
        self.constants[name] = (value, name_tok.line)

    def expect_open(self, what: str, line: int) -> _Tok:
        tok = self.sc.next()
        if tok.kind != "{":
            raise self.error(f"expected '{{' to open {what} (line {line}), found {tok.describe()}", tok.line)
        return tok

    def parse_network(self, kw_tok: _Tok) -> tuple[str, int, int, list[MaestroLayer]]:
        name, _ = self.sc.read_name()
        label = f"Network {name!r}" if name else "Network"
        self.expect_open(label, kw_tok.line)
        layers: list[MaestroLayer] = []
        seen: dict[str, int] = {}
        while True:
            tok = self.sc.next()
            kw = _kw(tok)
            if tok.kind == "}":
                if not layers:
                    raise self.error(f"{label} has no layers", kw_tok.line)
                return name, kw_tok.line, tok.line, layers
            if tok.kind == ";":
                continue
            if tok.kind == "eof":
                raise self.error(
                    f"unbalanced braces: '{{' of {label} opened at line {kw_tok.line} is never closed "
                    "(end of file reached)",
                    kw_tok.line,
                )
            if kw == "LAYER":
                layer = self.parse_layer(tok)
                if layer.name in seen:
                    raise self.error(
                        f"duplicate layer name {layer.name!r}: already defined at line {seen[layer.name]}",
                        layer.line,
                    )
                seen[layer.name] = layer.line
                layers.append(layer)
            elif kw == "CONSTANT":
                raise self.error(
                    "Constant must be declared at top level, before the Network (MAESTRO reads "
                    "Constants only outside Network)",
                    tok.line,
                )
            elif kw == "NETWORK":
                raise self.error(
                    f"unbalanced braces: {label} opened at line {kw_tok.line} is not closed before "
                    f"another Network (a file holds exactly one Network)",
                    tok.line,
                )
            else:
                shown = f"keyword {tok.text!r}" if tok.kind == "ident" else tok.describe()
                hint = ""
                if kw in _BLOCK_KEYWORDS + _DIRECTIVE_KEYWORDS:
                    hint = " (it belongs inside a Layer block; is a '}' too many or a 'Layer NAME {' missing?)"
                raise self.error(f"unknown {shown} in {label}; expected Layer or '}}'{hint}", tok.line)

    # ----- layer ----------------------------------------------------------------------------
    def parse_layer(self, kw_tok: _Tok) -> MaestroLayer:
        name, _ = self.sc.read_name()
        if not name:
            nxt = self.sc.peek()
            raise self.error(
                f"missing layer name after 'Layer' (names use letters, digits, _ - .), found {nxt.describe()}",
                nxt.line,
            )
        label = f"Layer {name!r}"
        self.expect_open(label, kw_tok.line)
        type_info: tuple[str, int] | None = None  # (raw upper name, line)
        stride: list[tuple[str, tuple, int]] | None = None
        dims: list[tuple[str, tuple, int]] | None = None
        dataflow: list[tuple] | None = None
        dataflow_line = 0
        seen_blocks: dict[str, int] = {}
        while True:
            tok = self.sc.next()
            kw = _kw(tok)
            if tok.kind == "}":
                break
            if tok.kind == ";":
                continue
            if tok.kind == "eof":
                raise self.error(
                    f"unbalanced braces: '{{' of {label} opened at line {kw_tok.line} is never closed "
                    "(end of file reached)",
                    kw_tok.line,
                )
            if kw in ("TYPE", "STRIDE", "DIMENSIONS", "DATAFLOW"):
                if kw in seen_blocks:
                    raise self.error(
                        f"{label}: {_KEYWORD_SPELLING[kw]} is given twice (first at line {seen_blocks[kw]})",
                        tok.line,
                    )
                seen_blocks[kw] = tok.line
            if kw == "TYPE":
                if self.sc.peek().kind == ":":
                    self.sc.next()
                val = self.sc.next()
                if val.kind in ("}", ";", "eof") or _kw(val) in _BLOCK_KEYWORDS:
                    raise self.error(
                        f"missing value after 'Type:' in {label}; expected one of "
                        + ", ".join(CANONICAL_TYPES),
                        tok.line,
                    )
                if val.kind != "ident":
                    raise self.error(
                        f"expected a layer type after 'Type' in {label}, found {val.describe()}; expected "
                        "one of " + ", ".join(CANONICAL_TYPES),
                        val.line,
                    )
                type_info = (val.text, val.line)
            elif kw == "STRIDE":
                self.expect_open(f"Stride of {label}", tok.line)
                stride = self.parse_entries(f"Stride of {label}", tok.line)
            elif kw == "DIMENSIONS":
                self.expect_open(f"Dimensions of {label}", tok.line)
                dims = self.parse_entries(f"Dimensions of {label}", tok.line)
            elif kw == "DATAFLOW":
                self.expect_open(f"Dataflow of {label}", tok.line)
                dataflow, dataflow_line = self.parse_dataflow(f"Dataflow of {label}", tok.line), tok.line
            elif kw in ("LAYER", "NETWORK"):
                raise self.error(
                    f"unbalanced braces: {label} opened at line {kw_tok.line} is not closed before "
                    f"'{tok.text}' (missing '}}')",
                    tok.line,
                )
            else:
                shown = f"keyword {tok.text!r}" if tok.kind == "ident" else tok.describe()
                hint = " (directives go inside 'Dataflow { ... }')" if kw in _DIRECTIVE_KEYWORDS else ""
                raise self.error(
                    f"unknown {shown} in {label}; expected Type, Stride, Dimensions, Dataflow or '}}'{hint}",
                    tok.line,
                )
        return self.finish_layer(name, kw_tok.line, type_info, stride, dims, dataflow, dataflow_line)

    def parse_entries(self, block: str, open_line: int) -> list[tuple[str, tuple, int]]:
        """``{ KEY: expr, KEY expr ... }`` -> [(normalised key, expression, line)]."""
        entries: list[tuple[str, tuple, int]] = []
        while True:
            tok = self.sc.next()
            if tok.kind == "}":
                return entries
            if tok.kind in (",", ";"):
                continue
            if tok.kind == "eof":
                raise self.error(
                    f"unbalanced braces: '{{' of {block} opened at line {open_line} is never closed "
                    "(end of file reached)",
                    open_line,
                )
            if tok.kind != "ident":
                raise self.error(f"expected a dimension name in {block}, found {tok.describe()}", tok.line)
            kw = _kw(tok)
            if kw in _BLOCK_KEYWORDS + _DIRECTIVE_KEYWORDS:
                raise self.error(
                    f"unbalanced braces: '{{' of {block} opened at line {open_line} is not closed "
                    f"before {tok.text!r} (missing '}}')",
                    tok.line,
                )
            key = _norm_dim(tok.text)
            if self.sc.peek().kind in (":", "="):
                self.sc.next()
            nxt = self.sc.peek()
            if nxt.kind in ("}", ",", ";", ":", "eof") or (
                nxt.kind == "ident" and self.sc.peek(2).kind == ":"
            ):
                raise self.error(f"missing ':' value for {key} in {block}", nxt.line if nxt.kind != "eof" else tok.line)
            node = self.parse_expr(f"{key} of {block}")
            entries.append((key, node, tok.line))

    def parse_dataflow(self, block: str, open_line: int) -> list[tuple]:
        """Raw directives: ("map", kind, size_node, offset_node, dim, line) / ("cluster", node, line)."""
        out: list[tuple] = []
        while True:
            tok = self.sc.next()
            kw = _kw(tok)
            if tok.kind == "}":
                return out
            if tok.kind == ";":
                continue
            if tok.kind == "eof":
                raise self.error(
                    f"unbalanced braces: '{{' of {block} opened at line {open_line} is never closed "
                    "(end of file reached)",
                    open_line,
                )
            if kw in ("SPATIALMAP", "TEMPORALMAP"):
                word = _KEYWORD_SPELLING[kw]
                open_tok = self.expect_paren(word)
                size = self.parse_expr(f"the size of {word}")
                self.expect_comma(word, "size and offset")
                offset = self.parse_expr(f"the offset of {word}")
                self.expect_close(word, open_tok)
                dim_tok = self.sc.next()
                if dim_tok.kind == ")":
                    raise self.error(f"unbalanced parentheses: unexpected ')' after {word}(...)", dim_tok.line)
                if dim_tok.kind != "ident" or _kw(dim_tok) in _BLOCK_KEYWORDS + _DIRECTIVE_KEYWORDS:
                    raise self.error(
                        f"missing dimension name after {word}(...) (line {tok.line}), found {dim_tok.describe()}",
                        dim_tok.line if dim_tok.kind != "eof" else tok.line,
                    )
                kind = "spatial" if kw == "SPATIALMAP" else "temporal"
                out.append(("map", kind, size, offset, _norm_dim(dim_tok.text), tok.line, dim_tok.line))
            elif kw == "CLUSTER":
                open_tok = self.expect_paren("Cluster")
                size = self.parse_expr("the size of Cluster")
                self.expect_comma("Cluster", "size and type", example="Cluster(64, P)")
                ctype = self.sc.next()
                if _kw(ctype) != "P":
                    extra = " (logical 'L' clusters are not supported)" if _kw(ctype) == "L" else ""
                    raise self.error(
                        f"the second argument of Cluster must be P (physical), found {ctype.describe()}{extra}",
                        ctype.line,
                    )
                self.expect_close("Cluster", open_tok)
                out.append(("cluster", size, tok.line))
            elif kw in _BLOCK_KEYWORDS:
                raise self.error(
                    f"unbalanced braces: '{{' of {block} opened at line {open_line} is not closed "
                    f"before {tok.text!r} (missing '}}')",
                    tok.line,
                )
            else:
                shown = f"directive {tok.text!r}" if tok.kind == "ident" else tok.describe()
                raise self.error(
                    f"unknown {shown} in {block}; expected SpatialMap, TemporalMap, Cluster or '}}'",
                    tok.line,
                )

    def expect_paren(self, word: str) -> _Tok:
        tok = self.sc.next()
        if tok.kind != "(":
            raise self.error(f"expected '(' after {word}, found {tok.describe()}", tok.line)
        return tok

    def expect_comma(self, word: str, between: str, example: str = "SpatialMap(1,1) K") -> None:
        tok = self.sc.next()
        if tok.kind == ",":
            return
        if tok.kind == ")":
            raise self.error(f"{word} needs two arguments ({between}), e.g. {example}", tok.line)
        raise self.error(
            f"expected ',' between {between} of {word}, found {tok.describe()}", tok.line
        )

    def expect_close(self, word: str, open_tok: _Tok) -> None:
        tok = self.sc.next()
        if tok.kind != ")":
            raise self.error(
                f"unbalanced parentheses: '(' of {word} at line {open_tok.line} is not closed "
                f"(found {tok.describe()} where ')' was expected)",
                tok.line,
            )

    # ----- resolution -----------------------------------------------------------------------
    def finish_layer(
        self,
        name: str,
        line: int,
        type_info: tuple[str, int] | None,
        stride: list | None,
        dims_raw: list | None,
        dataflow_raw: list | None,
        dataflow_line: int,
    ) -> MaestroLayer:
        label = f"layer {name!r}"
        if type_info is None:
            raise self.error(f"{label} has no Type; add e.g. 'Type: CONV'", line)
        if dims_raw is None:
            raise self.error(f"{label} has no Dimensions block; add e.g. 'Dimensions {{ K: 64, C: 3, ... }}'", line)
        if dataflow_raw is None:
            raise self.error(f"{label} has no Dataflow block", line)
        raw_type, type_line = type_info
        tname = TYPE_ALIASES.get(raw_type.upper())
        if tname is None:
            supported = ", ".join(CANONICAL_TYPES)
            if raw_type.upper() in _UNSUPPORTED_MAESTRO_TYPES:
                msg = f"{label}: MAESTRO layer Type {raw_type!r} is not supported by accelsim; supported: {supported}"
            else:
                msg = f"{label}: unknown Type {raw_type!r}; expected one of {supported}"
            raise self.error(msg, type_line)
        allowed = dims_for_type(tname)

        # Dimensions
        dims: dict[str, int] = {}
        dim_lines: dict[str, int] = {}
        for key, node, kline in dims_raw:
            if key not in allowed:
                raise self.error(
                    f"{label}: unknown dimension {key!r} in Dimensions for Type {tname}; "
                    f"allowed: {' '.join(allowed)}",
                    kline,
                )
            if key in dims:
                raise self.error(
                    f"{label}: duplicate dimension {key} in Dimensions (first given at line {dim_lines[key]})",
                    kline,
                )
            ctx = _Ctx(self.constants, None, f"dimension {key} of {label}")
            dims[key] = self.positive(node, ctx, kline)
            dim_lines[key] = kline
        spec = _operator(tname)
        output_dims = {w.output_dim for w in spec.windows}
        for w in spec.windows:
            if w.output_dim in dims and w.input_dim in dims:
                raise self.error(
                    f"{label}: give either {w.input_dim} (input size) or {w.output_dim} (output size) in "
                    "Dimensions, not both",
                    max(dim_lines[w.output_dim], dim_lines[w.input_dim]),
                )

        # Stride
        strides = {"Y": 1, "X": 1}
        stride_seen: dict[str, int] = {}
        for key, node, kline in stride or ():
            if key not in strides:
                raise self.error(f"{label}: unknown Stride key {key!r}; expected X or Y", kline)
            if key in stride_seen:
                raise self.error(
                    f"{label}: duplicate Stride key {key} (first given at line {stride_seen[key]})", kline
                )
            stride_seen[key] = kline
            strides[key] = self.positive(node, _Ctx(self.constants, None, f"Stride {key} of {label}"), kline)

        defaults = DEFAULT_DIMS[tname]

        def sz(dim: str, sline: int) -> int:
            if dim not in allowed:
                raise self.error(
                    f"{label}: unknown dimension {dim!r} in Sz({dim}) for Type {tname}; allowed: "
                    f"{' '.join(allowed)}",
                    sline,
                )
            if dim in dims:
                return dims[dim]
            if dim in output_dims:
                raise self.error(
                    f"{label}: Sz({dim}) is not allowed: {dim} is the output size, which Dimensions does "
                    f"not give; use Sz of a Dimensions entry (e.g. Sz(R)) or a number",
                    sline,
                )
            if dim in defaults:
                return defaults[dim]
            raise self.error(f"{label}: Sz({dim}): dimension {dim} is not given in Dimensions", sline)

        directives: list[Directive] = []
        for raw in dataflow_raw:
            if raw[0] == "cluster":
                _, node, dline = raw
                size = self.positive(node, _Ctx(self.constants, sz, f"the size of Cluster in {label}"), dline)
                directives.append(ClusterDirective(size=size, line=dline))
                continue
            _, kind, size_node, offset_node, dim, dline, dim_line = raw
            word = "SpatialMap" if kind == "spatial" else "TemporalMap"
            if dim not in allowed:
                raise self.error(
                    f"{label}: unknown dimension {dim!r} in {word} for Type {tname}; allowed: "
                    f"{' '.join(allowed)}",
                    dim_line,
                )
            window = spec.window(dim)
            derivable = window is not None and window.output_dim in dims
            if dim not in dims and dim not in output_dims and dim not in defaults and not derivable:
                raise self.error(
                    f"{label}: {word} maps dimension {dim}, which is not given in Dimensions "
                    f"(given: {' '.join(dims)})",
                    dim_line,
                )
            size = self.positive(size_node, _Ctx(self.constants, sz, f"the size of {word} {dim} in {label}"), dline)
            offset = self.positive(
                offset_node, _Ctx(self.constants, sz, f"the offset of {word} {dim} in {label}"), dline
            )
            directives.append(MapDirective(kind=kind, size=size, offset=offset, dim=dim, line=dline))
        if not directives:
            raise self.error(f"{label}: Dataflow is empty; give at least one SpatialMap/TemporalMap", dataflow_line)
        return MaestroLayer(
            name=name,
            type=tname,
            stride_y=strides["Y"],
            stride_x=strides["X"],
            dims=dims,
            dataflow=tuple(directives),
            line=line,
        )


# ----- public API ------------------------------------------------------------------------------


def parse_maestro(text: str, path: str = "<string>") -> MaestroFile:
    """Parse the text of a ``.m`` file; every problem raises :class:`MappingError`."""
    path = str(path)
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return _Parser(text, path).parse_file()
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


def _check_int(value: object, what: str, layer: MaestroLayer, path: str) -> int:
    """``value`` if the parser can read it back: an integer from 1 to 18 digits."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 10**_MAX_DIGITS:
        raise MappingError(
            f"cannot write layer {layer.name!r}: {what} must be an integer from 1 to {10**_MAX_DIGITS - 1} "
            f"(what a .m file can hold), got {value!r}",
            source=path,
            line=layer.line or None,
        )
    return value


def write_maestro(mf: MaestroFile) -> str:
    """Canonical ``.m`` text for ``mf``; :func:`parse_maestro` reads it back to an equal file
    (apart from line numbers). Raises MappingError if ``mf`` cannot be written faithfully."""
    path = mf.path
    if mf.network and not _NAME_RE.fullmatch(mf.network):
        raise MappingError(f"cannot write Network name {mf.network!r}: use letters, digits, _ - .", source=path)
    if not mf.layers:
        raise MappingError("cannot write a Network without layers", source=path)
    header = f"Network {mf.network} {{" if mf.network else "Network {"
    out = ["// MAESTRO data-centric mapping written by accelsim", header]
    seen: set[str] = set()
    for layer in mf.layers:
        where = dict(source=path, line=layer.line or None)
        if not _NAME_RE.fullmatch(layer.name or ""):
            raise MappingError(f"cannot write layer name {layer.name!r}: use letters, digits, _ - .", **where)
        if layer.name in seen:
            raise MappingError(f"cannot write duplicate layer name {layer.name!r}", **where)
        seen.add(layer.name)
        if layer.type not in CANONICAL_TYPES:
            raise MappingError(
                f"cannot write layer {layer.name!r}: unknown Type {layer.type!r}; expected one of "
                + ", ".join(CANONICAL_TYPES),
                **where,
            )
        allowed = dims_for_type(layer.type)
        unknown = [d for d in layer.dims if d not in allowed]
        if unknown:
            raise MappingError(
                f"cannot write layer {layer.name!r}: dimension(s) {' '.join(unknown)} do not exist for "
                f"Type {layer.type}; allowed: {' '.join(allowed)}",
                **where,
            )
        out.append(f"\tLayer {layer.name} {{")
        out.append(f"\t\tType: {layer.type}")
        sy = _check_int(layer.stride_y, "stride Y", layer, path)
        sx = _check_int(layer.stride_x, "stride X", layer, path)
        if _operator(layer.type).windows or (sy, sx) != (1, 1):
            out.append(f"\t\tStride {{ X: {sx}, Y: {sy} }}")
        dims = ", ".join(
            f"{d}: {_check_int(layer.dims[d], f'dimension {d}', layer, path)}" for d in allowed if d in layer.dims
        )
        out.append(f"\t\tDimensions {{ {dims} }}")
        out.append("\t\tDataflow {")
        if not layer.dataflow:
            raise MappingError(f"cannot write layer {layer.name!r}: its Dataflow is empty", **where)
        for d in layer.dataflow:
            if isinstance(d, ClusterDirective):
                out.append(f"\t\t\tCluster({_check_int(d.size, 'cluster size', layer, path)}, P);")
            elif isinstance(d, MapDirective) and d.kind in ("spatial", "temporal") and d.dim in allowed:
                word = "SpatialMap" if d.kind == "spatial" else "TemporalMap"
                size = _check_int(d.size, f"{word} size", layer, path)
                offset = _check_int(d.offset, f"{word} offset", layer, path)
                out.append(f"\t\t\t{word}({size},{offset}) {d.dim};")
            else:
                raise MappingError(f"cannot write layer {layer.name!r}: bad directive {d!r}", **where)
        out.append("\t\t}")
        out.append("\t}")
    out.append("}")
    return "\n".join(out) + "\n"


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

