"""Scanner and parser of MAESTRO mapping files (``.m``): text -> syntax tree
(:mod:`accelsim.mapping.maestro_syntax`). Nothing is evaluated or checked against a layer type
here; the resolver (:mod:`accelsim.mapping.maestro_resolve`) does that.

Grammar decisions (MAESTRO's own tokenizer splits lines on ``space , - > ( ) : tab ;`` so it
is very lax; we keep its leniency where it is unambiguous and are precise everywhere else):

* Whitespace and line breaks are free-form (the caller turns CRLF and CR into LF and drops a
  UTF-8 BOM). Comments: ``// ...`` and ``# ...`` to end of line, ``/* ... */`` blocks.
* Semicolons are optional everywhere (after directives, Constants, Type, blocks): MAESTRO
  treats ``;`` as whitespace, and every statement here is self-delimiting. Stray extra ``;``
  are ignored.
* Keywords (``Network``, ``Layer``, ``Constant``, ``Type``, ``Stride``, ``Dimensions``,
  ``Dataflow``, ``SpatialMap``, ``TemporalMap``, ``Cluster``, ``Sz``) and ``Type`` values are
  case-insensitive; Constant names are case-sensitive. Dimension names are upper-cased and
  ``Y'``/``X'`` (also written with a typographic quote) normalised to exactly ``Y'``/``X'``.
* ``Type: CONV`` or ``Type CONV``; inside ``Stride``/``Dimensions`` both ``K: 64`` and
  ``K 64``, with ``,`` or ``;`` between entries optional. ``Stride`` may come before or after
  ``Dimensions`` (MAESTRO requires it before).
* Sizes, offsets, Cluster sizes, Constants, dimensions and strides are integer expressions:
  integers, Constant names, ``Sz(D)``, ``+ - *``, unary minus and parentheses.
* A Constant name is declared once. Exactly one ``Network`` (its name may be omitted, as MAESTRO allows); every layer needs a
  name, ``Type``, ``Dimensions`` and a ``Dataflow`` block, each given once.
* ``Cluster(n, P)`` only; MAESTRO's logical ``L`` clusters are rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Literal

from accelsim.errors import MappingError
from accelsim.mapping.maestro_syntax import (BinaryOp, ClusterSyntax, ConstantRef, ConstantSyntax, DataflowSyntax,
                                             DirectiveSyntax, Entry, Expr, FileSyntax, LayerSyntax, MapSyntax, Negate,
                                             NetworkSyntax, Number, SizeOf, TypeSyntax, MAX_DIGITS, norm_dim)
from accelsim.mapping.maestro_resolve import type_names

BLOCK_KEYWORDS = ("NETWORK", "LAYER", "TYPE", "STRIDE", "DIMENSIONS", "DATAFLOW")
DIRECTIVE_KEYWORDS = ("SPATIALMAP", "TEMPORALMAP", "CLUSTER")
KEYWORD_SPELLING = {
    "NETWORK": "Network", "LAYER": "Layer", "TYPE": "Type", "STRIDE": "Stride",
    "DIMENSIONS": "Dimensions", "DATAFLOW": "Dataflow", "SPATIALMAP": "SpatialMap",
    "TEMPORALMAP": "TemporalMap", "CLUSTER": "Cluster", "CONSTANT": "Constant",
}
_LAYER_PARTS = ("TYPE", "STRIDE", "DIMENSIONS", "DATAFLOW")

#: Network and layer names: letters, digits, ``_ - .``.
NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:['\u2019\u2032])?")
_NUMBER_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
_CONSTANT_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


# ----- scanner ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tok:
    kind: str  # "ident", "number", "eof" or the punctuation character itself
    text: str
    line: int

    def describe(self) -> str:
        return "end of file" if self.kind == "eof" else repr(self.text)

    @property
    def keyword(self) -> str:
        """Upper-cased identifier text, or '' for non-identifiers."""
        return self.text.upper() if self.kind == "ident" else ""


class _Scanner:
    """Hand-written lexer with on-demand tokens (layer names need a different rule)."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.pos = 0
        self.line = 1
        self.last = _Tok("eof", "", 1)  # the last token taken

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
                    raise MappingError("block comment '/*' is never closed with '*/'", source=self.path, line=self.line)
                self.line += text.count("\n", self.pos, end)
                self.pos = end + 2
            else:
                return

    def next(self) -> _Tok:
        self.last = self._read()
        return self.last

    def _read(self) -> _Tok:
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
        raise MappingError(f"unexpected character {ch!r}", source=self.path, line=self.line)

    def peek(self, k: int = 1) -> _Tok:
        """The k-th next token, without consuming anything."""
        saved = (self.pos, self.line)
        try:
            tok = self._read()
            for _ in range(k - 1):
                tok = self._read()
            return tok
        finally:
            self.pos, self.line = saved

    def read_name(self) -> str:
        """A Network/Layer name (:data:`NAME_RE`); empty string if none."""
        self._skip()
        m = NAME_RE.match(self.text, self.pos)
        if not m:
            return ""
        self.pos = m.end()
        return m.group()


# ----- parser ----------------------------------------------------------------------------------
class _Parser:
    def __init__(self, text: str, path: str):
        self.sc = _Scanner(text, path)
        self.path = path
        # what is complete so far, for the tree up to a syntax error (see parse_syntax)
        self.done: list[ConstantSyntax | NetworkSyntax] = []
        self.network_open: tuple[str, int] | None = None  # (name, line) of the Network being read
        self.layers: list[LayerSyntax] = []  # its complete layers
        self.constant_lines: dict[str, int] = {}

    def error(self, message: str, line: int | None) -> MappingError:
        return MappingError(message, source=self.path, line=line)

    def items(self, closer: Literal["}", "eof"], label: str = "", open_line: int = 0) -> Iterator[_Tok]:
        """The first token of each item of a block, up to its ``closer`` (``}``, or the end of
        the file at top level), skipping ``;``; the end of the file inside a block is an
        unbalanced brace. The closing token is then ``self.sc.last``."""
        while True:
            tok = self.sc.next()
            if tok.kind == closer:
                return
            if tok.kind == ";":
                continue
            if tok.kind == "eof":
                raise self.error(
                    f"unbalanced braces: '{{' of {label} opened at line {open_line} is never closed "
                    "(end of file reached)",
                    open_line,
                )
            yield tok

    @staticmethod
    def shown(tok: _Tok, noun: str = "keyword") -> str:
        return f"{noun} {tok.text!r}" if tok.kind == "ident" else tok.describe()

    # ----- expressions ----------------------------------------------------------------------
    def expr(self, what: str) -> Expr:
        node = self._term(what)
        while self.sc.peek().kind in ("+", "-"):
            op = self.sc.next()
            node = BinaryOp("+" if op.kind == "+" else "-", node, self._term(what), op.line)
        return node

    def _term(self, what: str) -> Expr:
        node = self._unary(what)
        while True:
            tok = self.sc.peek()
            if tok.kind == "*":
                self.sc.next()
                node = BinaryOp("*", node, self._unary(what), tok.line)
            elif tok.kind == "/":
                raise self.error(f"division is not supported in {what}; only + - * and parentheses", tok.line)
            else:
                return node

    def _unary(self, what: str) -> Expr:
        tok = self.sc.peek()
        if tok.kind in ("-", "+"):
            self.sc.next()
            inner = self._unary(what)
            return Negate(inner, tok.line) if tok.kind == "-" else inner
        return self._primary(what)

    def _primary(self, what: str) -> Expr:
        tok = self.sc.next()
        if tok.kind == "number":
            if not tok.text.isdigit():
                raise self.error(f"non-integer value {tok.text!r} in {what}; sizes are whole numbers", tok.line)
            if len(tok.text) > MAX_DIGITS:
                raise self.error(f"number {tok.text[:12]}... in {what} is too large", tok.line)
            return Number(int(tok.text), tok.line)
        if tok.kind == "ident":
            if tok.keyword == "SZ" and self.sc.peek().kind == "(":
                open_tok = self.sc.next()
                dim_tok = self.sc.next()
                if dim_tok.kind != "ident":
                    raise self.error(
                        f"Sz( must be followed by a dimension name in {what}, found {dim_tok.describe()}",
                        dim_tok.line,
                    )
                self.close(f"of Sz at line {open_tok.line}", f" in {what}")
                return SizeOf(norm_dim(dim_tok.text), tok.line)
            return ConstantRef(tok.text, tok.line)
        if tok.kind == "(":
            inner = self.expr(what)
            self.close(f"at line {tok.line}", f" in {what}")
            return inner
        if tok.kind == ")":
            raise self.error(f"unbalanced parentheses in {what}: unexpected ')' where a value was expected", tok.line)
        raise self.error(
            f"missing value in {what}: expected a number, a Constant or Sz(D), found {tok.describe()}",
            tok.line,
        )

    def close(self, opened: str, within: str = "") -> None:
        """Expect the ``)`` closing the ``(`` that ``opened`` describes (``within``: the expression)."""
        tok = self.sc.next()
        if tok.kind != ")":
            raise self.error(f"unbalanced parentheses{within}: '(' {opened} is not closed (found {tok.describe()} "
                             "where ')' was expected)", tok.line)

    # ----- top level ------------------------------------------------------------------------
    def parse_file(self) -> FileSyntax:
        network: NetworkSyntax | None = None
        for tok in self.items("eof"):
            kw = tok.keyword
            if kw == "CONSTANT":
                self.done.append(self.parse_constant())
            elif kw == "NETWORK":
                if network is not None:
                    raise self.error(
                        f"a file holds exactly one Network; Network {network.name!r} was already given "
                        f"at line {network.line}",
                        tok.line,
                    )
                network = self.parse_network(tok)
                self.done.append(network)
            elif tok.kind == "}":
                closed = f" (Network {network.name!r} was closed at line {network.close_line})" if network else ""
                raise self.error(f"stray '}}': no block is open here{closed}", tok.line)
            else:
                closed = ""
                if network is not None and kw in BLOCK_KEYWORDS + DIRECTIVE_KEYWORDS:
                    closed = (f"; Network {network.name!r} was already closed at line {network.close_line} "
                              "(one '}' too many?)")
                raise self.error(f"unknown {self.shown(tok)} at top level; expected Constant or Network{closed}",
                                 tok.line)
        return FileSyntax(self.path, tuple(self.done), self.sc.line)

    def partial(self, error: MappingError) -> FileSyntax:
        """The tree of what was complete before ``error``, which it carries."""
        items = list(self.done)
        if self.network_open is not None:
            items.append(NetworkSyntax(*self.network_open, self.sc.line, tuple(self.layers)))
        return FileSyntax(self.path, tuple(items), self.sc.line, error)

    def parse_constant(self) -> ConstantSyntax:
        name_tok = self.sc.next()
        if name_tok.kind != "ident" or not _CONSTANT_NAME_RE.match(name_tok.text):
            raise self.error(f"expected a Constant name after 'Constant', found {name_tok.describe()}", name_tok.line)
        name = name_tok.text
        if name in self.constant_lines:
            raise self.error(f"Constant {name!r} is already defined at line {self.constant_lines[name]}",
                             name_tok.line)
        self.constant_lines[name] = name_tok.line
        if self.sc.peek().kind in (":", "="):
            self.sc.next()
        nxt = self.sc.peek()
        if nxt.kind in (";", "}", "eof") or nxt.keyword in ("CONSTANT", "NETWORK"):
            raise self.error(f"missing value for Constant {name!r}", nxt.line)
        return ConstantSyntax(name, self.expr(f"Constant {name}"), name_tok.line)

    def expect_open(self, what: str, line: int) -> None:
        tok = self.sc.next()
        if tok.kind != "{":
            raise self.error(f"expected '{{' to open {what} (line {line}), found {tok.describe()}", tok.line)

    def parse_network(self, kw_tok: _Tok) -> NetworkSyntax:
        name = self.sc.read_name()
        label = f"Network {name!r}" if name else "Network"
        self.expect_open(label, kw_tok.line)
        self.network_open, self.layers = (name, kw_tok.line), []
        layers = self.layers
        for tok in self.items("}", label, kw_tok.line):
            kw = tok.keyword
            if kw == "LAYER":
                layers.append(self.parse_layer(tok))
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
                hint = ""
                if kw in BLOCK_KEYWORDS + DIRECTIVE_KEYWORDS:
                    hint = " (it belongs inside a Layer block; is a '}' too many or a 'Layer NAME {' missing?)"
                raise self.error(f"unknown {self.shown(tok)} in {label}; expected Layer or '}}'{hint}", tok.line)
        if not layers:
            raise self.error(f"{label} has no layers", kw_tok.line)
        self.network_open = None
        return NetworkSyntax(name, kw_tok.line, self.sc.last.line, tuple(layers))

    # ----- layer ----------------------------------------------------------------------------
    def parse_layer(self, kw_tok: _Tok) -> LayerSyntax:
        name = self.sc.read_name()
        if not name:
            nxt = self.sc.peek()
            raise self.error(
                f"missing layer name after 'Layer' (names use letters, digits, _ - .), found {nxt.describe()}",
                nxt.line,
            )
        label = f"Layer {name!r}"
        self.expect_open(label, kw_tok.line)
        layer_type: TypeSyntax | None = None
        stride: tuple[Entry, ...] = ()
        dims: tuple[Entry, ...] | None = None
        dataflow: DataflowSyntax | None = None
        seen: dict[str, int] = {}
        for tok in self.items("}", label, kw_tok.line):
            kw = tok.keyword
            if kw in _LAYER_PARTS:
                if kw in seen:
                    raise self.error(f"{label}: {KEYWORD_SPELLING[kw]} is given twice (first at line {seen[kw]})",
                                     tok.line)
                seen[kw] = tok.line
            if kw == "TYPE":
                layer_type = self.parse_type(tok, label)
            elif kw == "STRIDE":
                stride = self.parse_entries(f"Stride of {label}", tok.line)
            elif kw == "DIMENSIONS":
                dims = self.parse_entries(f"Dimensions of {label}", tok.line)
            elif kw == "DATAFLOW":
                dataflow = DataflowSyntax(self.parse_dataflow(f"Dataflow of {label}", tok.line), tok.line)
            elif kw in ("LAYER", "NETWORK"):
                raise self.error(
                    f"unbalanced braces: {label} opened at line {kw_tok.line} is not closed before "
                    f"'{tok.text}' (missing '}}')",
                    tok.line,
                )
            else:
                hint = " (directives go inside 'Dataflow { ... }')" if kw in DIRECTIVE_KEYWORDS else ""
                raise self.error(
                    f"unknown {self.shown(tok)} in {label}; expected Type, Stride, Dimensions, Dataflow or '}}'{hint}",
                    tok.line,
                )
        where = f"layer {name!r}"
        if layer_type is None:
            raise self.error(f"{where} has no Type; add e.g. 'Type: CONV'", kw_tok.line)
        if dims is None:
            raise self.error(f"{where} has no Dimensions block; add e.g. 'Dimensions {{ K: 64, C: 3, ... }}'",
                             kw_tok.line)
        if dataflow is None:
            raise self.error(f"{where} has no Dataflow block", kw_tok.line)
        return LayerSyntax(name, kw_tok.line, layer_type, stride, dims, dataflow)

    def parse_type(self, kw_tok: _Tok, label: str) -> TypeSyntax:
        if self.sc.peek().kind == ":":
            self.sc.next()
        val = self.sc.next()
        if val.kind in ("}", ";", "eof") or val.keyword in BLOCK_KEYWORDS:
            raise self.error(f"missing value after 'Type:' in {label}; expected one of {type_names()}", kw_tok.line)
        if val.kind != "ident":
            raise self.error(
                f"expected a layer type after 'Type' in {label}, found {val.describe()}; expected one of {type_names()}",
                val.line,
            )
        return TypeSyntax(val.text, val.line)

    def parse_entries(self, block: str, open_line: int) -> tuple[Entry, ...]:
        """``{ KEY: expr, KEY expr ... }``."""
        self.expect_open(block, open_line)
        entries: list[Entry] = []
        for tok in self.items("}", block, open_line):
            if tok.kind == ",":
                continue
            if tok.kind != "ident":
                raise self.error(f"expected a dimension name in {block}, found {tok.describe()}", tok.line)
            if tok.keyword in BLOCK_KEYWORDS + DIRECTIVE_KEYWORDS:
                raise self.error(
                    f"unbalanced braces: '{{' of {block} opened at line {open_line} is not closed "
                    f"before {tok.text!r} (missing '}}')",
                    tok.line,
                )
            key = norm_dim(tok.text)
            if self.sc.peek().kind in (":", "="):
                self.sc.next()
            nxt = self.sc.peek()
            if nxt.kind in ("}", ",", ";", ":", "eof") or (nxt.kind == "ident" and self.sc.peek(2).kind == ":"):
                raise self.error(f"missing ':' value for {key} in {block}", nxt.line if nxt.kind != "eof" else tok.line)
            entries.append(Entry(key, self.expr(f"{key} of {block}"), tok.line))
        return tuple(entries)

    def parse_dataflow(self, block: str, open_line: int) -> tuple[DirectiveSyntax, ...]:
        self.expect_open(block, open_line)
        out: list[DirectiveSyntax] = []
        for tok in self.items("}", block, open_line):
            kw = tok.keyword
            if kw in ("SPATIALMAP", "TEMPORALMAP"):
                out.append(self.parse_map(tok))
            elif kw == "CLUSTER":
                out.append(self.parse_cluster(tok))
            elif kw in BLOCK_KEYWORDS:
                raise self.error(
                    f"unbalanced braces: '{{' of {block} opened at line {open_line} is not closed "
                    f"before {tok.text!r} (missing '}}')",
                    tok.line,
                )
            else:
                raise self.error(
                    f"unknown {self.shown(tok, 'directive')} in {block}; expected SpatialMap, TemporalMap, Cluster "
                    "or '}'",
                    tok.line,
                )
        return tuple(out)

    def parse_map(self, tok: _Tok) -> MapSyntax:
        word = KEYWORD_SPELLING[tok.keyword]
        open_line = self.expect_paren(word)
        size = self.expr(f"the size of {word}")
        self.expect_comma(word, "size and offset")
        offset = self.expr(f"the offset of {word}")
        self.close(f"of {word} at line {open_line}")
        dim_tok = self.sc.next()
        if dim_tok.kind == ")":
            raise self.error(f"unbalanced parentheses: unexpected ')' after {word}(...)", dim_tok.line)
        if dim_tok.kind != "ident" or dim_tok.keyword in BLOCK_KEYWORDS + DIRECTIVE_KEYWORDS:
            raise self.error(
                f"missing dimension name after {word}(...) (line {tok.line}), found {dim_tok.describe()}",
                dim_tok.line if dim_tok.kind != "eof" else tok.line,
            )
        kind: Literal["spatial", "temporal"] = "spatial" if tok.keyword == "SPATIALMAP" else "temporal"
        return MapSyntax(kind, size, offset, norm_dim(dim_tok.text), tok.line, dim_tok.line)

    def parse_cluster(self, tok: _Tok) -> ClusterSyntax:
        open_line = self.expect_paren("Cluster")
        size = self.expr("the size of Cluster")
        self.expect_comma("Cluster", "size and type", example="Cluster(64, P)")
        ctype = self.sc.next()
        if ctype.keyword != "P":
            extra = " (logical 'L' clusters are not supported)" if ctype.keyword == "L" else ""
            raise self.error(
                f"the second argument of Cluster must be P (physical), found {ctype.describe()}{extra}",
                ctype.line,
            )
        self.close(f"of Cluster at line {open_line}")
        return ClusterSyntax(size, tok.line)

    def expect_paren(self, word: str) -> int:
        """Expect ``(`` after ``word``; its line."""
        tok = self.sc.next()
        if tok.kind != "(":
            raise self.error(f"expected '(' after {word}, found {tok.describe()}", tok.line)
        return tok.line

    def expect_comma(self, word: str, between: str, example: str = "SpatialMap(1,1) K") -> None:
        tok = self.sc.next()
        if tok.kind == ",":
            return
        if tok.kind == ")":
            raise self.error(f"{word} needs two arguments ({between}), e.g. {example}", tok.line)
        raise self.error(f"expected ',' between {between} of {word}, found {tok.describe()}", tok.line)


def parse_syntax(text: str, path: str) -> FileSyntax:
    """The syntax tree of ``text`` (LF line ends, no BOM). A syntax error does not raise: the
    tree then holds what was complete before it and the error, so that the resolver reports a
    problem in an earlier Constant or layer first (errors come in file order)."""
    parser = _Parser(text, path)
    try:
        return parser.parse_file()
    except MappingError as error:
        return parser.partial(error)
