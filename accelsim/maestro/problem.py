"""A layer as MAESTRO reads it: its dimensions in file order, strides, tensors and directives.

MAESTRO (maestro-project/maestro, commit 4eb08d17) keeps a layer's ``Dimensions`` as a list in
file order (a repeated name stays twice), attaches the ``Stride`` of a dimension to the entry of
that name, and describes every operator by three tensors, each a list of coupled dimension
names. This module holds that form and the arithmetic helpers with C++'s integer semantics
(division truncates toward zero, ``%`` takes the dividend's sign), which MAESTRO's formulas
depend on when a difference goes negative.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accelsim.errors import MappingError

#: Operator types MAESTRO analyses. ``TRCONV`` is read as a plain ``CONV`` (its parser sets an
#: inner stride of 2 that the dimension object then drops), see :data:`TRCONV_AS_CONV`.
MAESTRO_TYPES = ("CONV", "DSCONV", "NGCONV", "GEMM", "TRCONV")

#: Quirk ``trconv_as_conv``: MAESTRO's parser turns ``Type: TRCONV`` into ``CONV`` with the same
#: dimensions; the transposed convolution's zero insertion is not modelled.
TRCONV_AS_CONV = "trconv_as_conv"

#: accelsim's own ``Type`` names (not MAESTRO's) for convolutions of a special shape: an FC is a
#: CONV with R = S = Y = X = 1, a PWCONV one with R = S = 1. MAESTRO's CONV analysis applies to
#: them; analysed under their own names, no output rows Y' and X' were derived, so every layer of
#: these types came out with 0 MACs and 0 cycles.
CONV_EXTENSIONS = ("FC", "PWCONV")


def cdiv(a: int, b: int) -> int:
    """C++ ``a / b`` on integers: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def cmod(a: int, b: int) -> int:
    """C++ ``a % b``: the remainder has the dividend's sign."""
    return a - b * cdiv(a, b)


@dataclass(frozen=True)
class Tensor:
    """One of MAESTRO's three tensors and the dimensions its index depends on."""

    name: str  # "input", "filter" or "output" (MAESTRO's names)
    is_output: bool
    coupled: tuple[str, ...]


def tensors_for(layer_type: str, has_batch: bool) -> tuple[Tensor, Tensor, Tensor]:
    """MAESTRO's tensor table for a layer type (``ConfigConvTensors``).

    ``N`` couples in only when the layer's ``Dimensions`` name it. DSCONV has no ``K`` in any
    tensor (MAESTRO ignores a DSCONV's K); NGCONV's output also carries ``C``.
    """
    n: tuple[str, ...] = ("N",) if has_batch else ()
    ins: tuple[str, ...]
    wts: tuple[str, ...]
    outs: tuple[str, ...]
    if layer_type == "GEMM":
        ins, wts, outs = ("M", "K"), ("K", "N"), ("M", "N")
    elif layer_type == "DSCONV":
        ins, wts, outs = n + ("C", "Y", "X"), ("C", "R", "S"), n + ("C", "Y", "X")
    elif layer_type == "NGCONV":
        ins, wts, outs = n + ("G", "C", "Y", "X"), ("G", "K", "C", "R", "S"), n + ("G", "K", "C", "Y", "X")
    else:  # CONV (and TRCONV read as CONV)
        ins, wts, outs = n + ("C", "Y", "X"), ("K", "C", "R", "S"), n + ("K", "Y", "X")
    return (Tensor("input", False, ins), Tensor("filter", False, wts), Tensor("output", True, outs))


@dataclass
class Directive:
    """``TemporalMap``/``SpatialMap(size, offset) var`` or ``Cluster(size)`` (``var`` empty).

    Mutable: MAESTRO rewrites directives in place while it splits the dataflow into cluster
    levels (output-to-input conversion, stride scaling).
    """

    kind: str  # "temporal", "spatial" or "cluster"
    size: int
    offset: int
    var: str

    @property
    def spatial(self) -> bool:
        return self.kind == "spatial"

    @property
    def temporal(self) -> bool:
        return self.kind == "temporal"

    def copy(self) -> Directive:
        return Directive(self.kind, self.size, self.offset, self.var)

    def text(self) -> str:
        if self.kind == "cluster":
            return f"Cluster({self.size},P)"
        word = "SpatialMap" if self.spatial else "TemporalMap"
        return f"{word}({self.size},{self.offset}) {self.var}"


@dataclass(frozen=True)
class MaestroProblem:
    """One layer as MAESTRO's parser leaves it.

    ``dims``: ``(name, size)`` in file order, repeats kept. ``strides``: the ``Stride`` block
    (MAESTRO attaches a stride to the dimension entry of the same name). ``dataflow``: the
    directives in file order with ``Sz(D)`` and Constants resolved.
    """

    name: str
    layer_type: str
    dims: tuple[tuple[str, int], ...]
    strides: dict[str, int]
    dataflow: tuple[Directive, ...]
    network: str = ""
    line: int = 0

    @property
    def analysed_type(self) -> str:
        """The type MAESTRO analyses: TRCONV becomes CONV, and so do accelsim's own types that are
        convolutions (:data:`CONV_EXTENSIONS`)."""
        return "CONV" if self.layer_type == "TRCONV" or self.layer_type in CONV_EXTENSIONS else self.layer_type

    @property
    def has_batch(self) -> bool:
        return any(name == "N" for name, _ in self.dims)

    def tensors(self) -> tuple[Tensor, Tensor, Tensor]:
        return tensors_for(self.analysed_type, self.has_batch)

    def first_size(self, name: str) -> int | None:
        """Size of the first entry named ``name`` (MAESTRO's dimension table keeps the first)."""
        for dim, size in self.dims:
            if dim == name:
                return size
        return None

    def error(self, message: str) -> MappingError:
        return MappingError(f"layer {self.name!r}: {message}", line=self.line or None)


@dataclass
class DimTable:
    """MAESTRO's dimension table at one cluster level: sizes and outer strides by name, plus the
    overlap pairs ``(reference, sliding)`` (``(X, S)`` and ``(Y, R)`` for convolutions)."""

    sizes: dict[str, int] = field(default_factory=dict)
    strides: dict[str, int] = field(default_factory=dict)
    overlaps: list[tuple[str, str]] = field(default_factory=list)

    def add(self, name: str, size: int, stride: int = 1) -> None:
        """Insert unless present (``std::map::insert`` keeps the first entry)."""
        if name not in self.sizes:
            self.sizes[name] = size
            self.strides[name] = stride

    def size(self, name: str) -> int:
        try:
            return self.sizes[name]
        except KeyError:
            raise MappingError(f"dimension {name} is missing at a cluster level (MAESTRO: MissingDimension)") from None

    def has(self, name: str) -> bool:
        return name in self.sizes

    def stride(self, name: str) -> int:
        self.size(name)
        return self.strides[name]

    def is_overlapped(self, name: str) -> bool:
        return any(name in pair for pair in self.overlaps)

    def is_sliding(self, name: str) -> bool:
        return any(name == sliding for _, sliding in self.overlaps)

    def counterpart(self, name: str) -> str:
        found = ""
        for reference, sliding in self.overlaps:
            if name == sliding:
                found = reference
            elif name == reference:
                found = sliding
        return found

    def is_reference(self, name: str) -> bool:
        return self.is_overlapped(name) and not self.is_sliding(name)

    def key(self) -> tuple:
        return (tuple(sorted(self.sizes.items())), tuple(self.overlaps))
