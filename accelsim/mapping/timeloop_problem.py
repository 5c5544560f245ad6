"""Timeloop's ``problem`` (a shape: dimensions and data-space projections, and an instance:
each dimension's extent) read as an accelsim layer.

A shape is accepted when its projections are a convolution or a matrix product: one data space
is written (``read_write``, else the one named like an output), the two others are read; every
dimension indexes the tensors in one of these ways, and becomes the convolution dimension
(``CONV2D``: ``N K C R S Y' X'``) with that role:

======================================  ==========================================
the dimension indexes                   accelsim's dimension
======================================  ==========================================
output and weight                       ``K`` (output channels; Timeloop's ``M``)
output and input                        ``N`` (batch; a matrix product's rows)
input and weight                        ``C`` (the reduction)
an input term ``filter + output``       ``R`` and ``Y'`` (first sum), ``S`` and ``X'`` (second)
======================================  ==========================================

so the CNN layer, conv1d, conv1d with output/input channels, a matrix multiply (``Z[m][n] =
A[m][k] B[k][n]``: ``A`` is the input, ``m`` -> ``N``, ``k`` -> ``C``, ``n`` -> ``K``) and a dot
product all become a ``CONV2D`` layer (a matrix product is one with ``R = S = Y = X = 1``). The
input is the read data space with a sum in its projection, else the one not named like a
weight (``Weights``, ``Filter``, ``B``). A dimension of size 1 may have any role. Anything
else (a dimension indexing all three tensors at once, dilation, a sum of three terms) is one
:class:`InputError` saying what.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from accelsim.errors import InputError, InputWarning
from accelsim.workload.operators import OpType
from accelsim.workload.ops import Layer

# Timeloop's CNN layer (its built-in default shape), used when a problem names no projections.
CNN_LAYER_SHAPE: dict[str, Any] = {
    "name": "CNN-Layer",
    "dimensions": ["C", "M", "R", "S", "N", "P", "Q"],
    "coefficients": [{"name": "Wstride", "default": 1}, {"name": "Hstride", "default": 1},
                     {"name": "Wdilation", "default": 1}, {"name": "Hdilation", "default": 1}],
    "data_spaces": [
        {"name": "Weights", "projection": [[["C"]], [["M"]], [["R"]], [["S"]]]},
        {"name": "Inputs", "projection": [[["N"]], [["C"]], [["R", "Wdilation"], ["P", "Wstride"]],
                                          [["S", "Hdilation"], ["Q", "Hstride"]]]},
        {"name": "Outputs", "projection": [[["N"]], [["M"]], [["Q"]], [["P"]]], "read_write": True},
    ],
}
_WEIGHT_NAMES = ("weight", "filter", "b")
# Timeloop's names kept where they say the same thing: filter rows/cols, output rows/cols.
_CONV_PAIRS = (("R", "P"), ("S", "Q"))


@dataclass(frozen=True)
class TimeloopProblem:
    """A Timeloop problem as an accelsim layer: ``rename`` maps each Timeloop dimension to the
    layer's loop dimension (``None``: a dimension of size 1 with no place in the layer);
    ``extents`` are Timeloop's; ``tensors`` maps ``input``/``weight``/``output`` to Timeloop's
    data-space names."""

    layer: Layer
    rename: dict[str, str | None]
    extents: dict[str, int]
    tensors: dict[str, str]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Term:
    dim: str
    coefficient: int


def _fail(message: str, source: str) -> InputError:
    return InputError(f"problem: {message}", source=source)


def _coefficients(shape: dict, instance: dict, source: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for c in shape.get("coefficients") or []:
        if isinstance(c, dict) and "name" in c:
            values[str(c["name"])] = _int(instance.get(c["name"], c.get("default", 1)), f"coefficient {c['name']}",
                                          source)
    return values


def _int(value: Any, what: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(f"{what}: expected a non-negative integer, got {value!r}", source)
    return value


def _terms(axis: Any, coefficients: dict[str, int], space: str, source: str) -> list[_Term]:
    """One projection axis (a sum of ``[dim]`` or ``[dim, coefficient]`` terms)."""
    if not isinstance(axis, list):
        axis = [[axis]]
    terms = []
    for term in axis:
        term = term if isinstance(term, list) else [term]
        if not term or len(term) > 2:
            raise _fail(f"data space {space}: projection term {term!r} is not [dimension] or [dimension, "
                        "coefficient]", source)
        coefficient = 1
        if len(term) == 2:
            c = term[1]
            coefficient = c if isinstance(c, int) and not isinstance(c, bool) else coefficients.get(str(c), -1)
            if coefficient < 0:
                raise _fail(f"data space {space}: coefficient {c!r} is not defined", source)
        terms.append(_Term(str(term[0]), coefficient))
    return terms


def _projection(space: dict, coefficients: dict[str, int], source: str) -> list[list[_Term]]:
    name = space.get("name")
    proj = space.get("projection")
    if not isinstance(proj, list):
        raise _fail(f"data space {name}: expected a projection list", source)
    return [_terms(axis, coefficients, str(name), source) for axis in proj]


def _is_output(space: dict) -> bool:
    return bool(space.get("read_write", space.get("read-write", False)))


def read_problem(problem: Any, source: str) -> TimeloopProblem:
    """The layer a Timeloop ``problem`` describes (raises InputError; warns about ``densities``)."""
    if not isinstance(problem, dict):
        raise _fail("expected a mapping with 'shape' and 'instance'", source)
    shape = problem.get("shape")
    if not isinstance(shape, dict) or not (shape.get("data_spaces") or shape.get("data-spaces")):
        shape = {**CNN_LAYER_SHAPE, "name": shape.get("name", "CNN-Layer") if isinstance(shape, dict) else
                 str(shape or "CNN-Layer")}
    instance = problem.get("instance")
    if not isinstance(instance, dict):
        raise _fail("expected 'instance': the extent of every dimension", source)
    if "densities" in instance:
        warnings.warn(f"{source}: problem: densities are read as dense (accelsim does not model sparsity: "
                      "every MAC and every word is counted)", InputWarning, stacklevel=2)
    dims = [str(d) for d in shape.get("dimensions") or []]
    if not dims:
        raise _fail("shape: expected 'dimensions'", source)
    extents = {d: _int(instance.get(d, 1), f"instance {d}", source) or 1 for d in dims}
    coefficients = _coefficients(shape, instance, source)
    spaces = shape.get("data_spaces") or shape.get("data-spaces")
    if not isinstance(spaces, list) or len(spaces) != 3 or not all(isinstance(s, dict) for s in spaces):
        raise _fail("shape: accelsim reads problems of three data spaces (two read, one written: a convolution "
                    f"or a matrix product); this one has {len(spaces) if isinstance(spaces, list) else 0}", source)
    written = [s for s in spaces if _is_output(s)] or [s for s in spaces if "out" in str(s.get("name", "")).lower()]
    if len(written) != 1:
        raise _fail("shape: expected exactly one written data space (read_write: true)", source)
    out = written[0]
    reads = [s for s in spaces if s is not out]
    projections = {id(s): _projection(s, coefficients, source) for s in spaces}
    summed = [s for s in reads if any(len(axis) > 1 for axis in projections[id(s)])]
    if len(summed) == 2:
        raise _fail("shape: both read data spaces have sums in their projections; not a convolution", source)
    if summed:
        inp = summed[0]
    else:
        named_weight = [s for s in reads if str(s.get("name", "")).lower().startswith(_WEIGHT_NAMES)]
        inp = reads[0] if named_weight != [reads[0]] else reads[1]
    wgt = reads[1] if inp is reads[0] else reads[0]
    roles = {"input": inp, "weight": wgt, "output": out}
    return _layer(shape, dims, extents, roles, projections, source)


def _layer(shape: dict, dims: list[str], extents: dict[str, int], roles: dict[str, dict],
           projections: dict[int, list[list[_Term]]], source: str) -> TimeloopProblem:
    single: dict[str, set[str]] = {d: set() for d in dims}
    pairs: list[tuple[_Term, _Term]] = []
    for role, space in roles.items():
        for axis in projections[id(space)]:
            if len(axis) == 1:
                if axis[0].dim not in single:
                    raise _fail(f"data space {space.get('name')}: {axis[0].dim} is not a dimension", source)
                single[axis[0].dim].add(role)
            elif role == "input" and len(axis) == 2:
                pairs.append((axis[0], axis[1]))
            else:
                raise _fail(f"data space {space.get('name')}: a sum of {len(axis)} terms is not a convolution "
                            "window", source)
    rename: dict[str, str | None] = {}
    sizes: dict[str, int] = {}
    strides = [1, 1]

    def place(tl: str, ours: str) -> None:
        if extents[tl] == 1 and ours in sizes:
            rename[tl] = None
            return
        if ours in sizes and sizes[ours] != 1:
            raise _fail(f"dimensions {next(k for k, v in rename.items() if v == ours)} and {tl} both play the role "
                        f"of accelsim's {ours}; accelsim's convolution has one of each", source)
        rename[tl] = ours
        sizes[ours] = extents[tl]

    if len(pairs) > 2:
        raise _fail("the input has more than two windowed axes; accelsim's convolution has two", source)
    ordered = _order_pairs(pairs, roles, projections)
    for i, (filt, outp) in enumerate(ordered):
        for term in (filt, outp):
            if term.dim not in extents:
                raise _fail(f"{term.dim} is not a dimension", source)
        if filt.coefficient != 1:
            raise _fail(f"dilation {filt.coefficient} on {filt.dim} is not modelled", source)
        place(filt.dim, ("R", "S")[i])
        place(outp.dim, ("Y'", "X'")[i])
        strides[i] = outp.coefficient or 1
    windowed = {t.dim for pair in ordered for t in pair}
    for d in dims:
        if d in windowed:
            continue
        indexed = frozenset(single[d])
        ours = {frozenset({"output", "weight"}): "K", frozenset({"output", "input"}): "N",
                frozenset({"input", "weight"}): "C"}.get(indexed)
        if ours is None and extents[d] != 1:
            said = ", ".join(sorted(indexed)) or "no data space"
            raise _fail(f"dimension {d} indexes {said}; accelsim reads convolutions and matrix products (a dimension "
                        "indexes two of input, weight and output)", source)
        if ours is None:
            rename[d] = None
        else:
            place(d, ours)
    r, s = sizes.get("R", 1), sizes.get("S", 1)
    layer_sizes = {"N": sizes.get("N", 1), "K": sizes.get("K", 1), "C": sizes.get("C", 1), "R": r, "S": s,
                   "Y": (sizes.get("Y'", 1) - 1) * strides[0] + r, "X": (sizes.get("X'", 1) - 1) * strides[1] + s}
    name = str(shape.get("name") or "problem")
    layer = Layer.build(name, OpType.CONV2D, layer_sizes, strides[0], strides[1], source=f"{source} problem")
    tensors = {role: str(space.get("name")) for role, space in roles.items()}
    return TimeloopProblem(layer, rename, extents, tensors)


def _order_pairs(pairs: list[tuple[_Term, _Term]], roles: dict[str, dict],
                 projections: dict[int, list[list[_Term]]]) -> list[tuple[_Term, _Term]]:
    """Each windowed axis as (filter term, output term), Timeloop's R/P pair first, S/Q second."""
    out_dims = {axis[0].dim for axis in projections[id(roles["output"])] if len(axis) == 1}
    ordered = []
    for a, b in pairs:
        filt, outp = (b, a) if a.dim in out_dims else (a, b)
        ordered.append((filt, outp))
    ordered.sort(key=lambda p: next((i for i, (f, _) in enumerate(_CONV_PAIRS) if f == p[0].dim), len(_CONV_PAIRS)))
    return ordered
