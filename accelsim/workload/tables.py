"""Network layer tables: the bundled ones in ``networks/`` and a loader for any table file.

A table is a YAML file::

    name: resnet50
    source: "where the shapes come from"
    notes: "conventions (padding, omitted layers, ...)"
    layers:
      - {name: conv1, type: CONV2D, N: 1, K: 64, C: 3, R: 7, S: 7, Y: 230, X: 230, stride: 2}
      - {name: fc, type: FC, N: 1, K: 1000, C: 2048}

Each layer has a ``name`` (unique in the file), a ``type`` (an :class:`OpType` value), the
sizes its operator takes (see the catalog, :mod:`accelsim.workload.operators`; Y and X are *input* extents
including padding) and optionally ``stride`` (both axes) or ``stride_y`` / ``stride_x``.
``source`` and ``notes`` are free text and optional; ``name`` defaults to the file's stem.

A layer may carry its own mapping: ``dataflow``, the MAESTRO directives of its ``Dataflow``
block as a string (a ``|`` block, one directive a line; ``Sz(R)`` and the like refer to the
layer's sizes). The table keeps the text (:class:`~accelsim.workload.ops.LayerDataflow`); the
mapping layer parses and checks it when the network is run without ``--style``.

Every mistake is reported as an :class:`~accelsim.errors.InputError` that names the file, the
line, the layer (index from 0 and name), the field and what was expected.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from accelsim.errors import InputError
from accelsim.input_files import MAX_INPUT_BYTES, load_yaml, read_text, shown
from accelsim.workload.operators import OPERATORS, op_names, operator, parse_op
from accelsim.workload.ops import Layer, LayerDataflow, Network

_TOP_KEYS = ("name", "source", "notes", "layers")
_STRIDE_KEYS = ("stride", "stride_y", "stride_x")
_ALL_DIMS = tuple(dict.fromkeys(d for spec in OPERATORS.values() for d in spec.dims))
_SUFFIXES = (".yaml", ".yml")


def _bundled_dir() -> Any:
    """The ``networks`` data folder as an importlib.resources Traversable."""
    return resources.files("accelsim.workload").joinpath("networks")


def available_networks() -> list[str]:
    """Names of the bundled network tables (file stems), sorted."""
    folder = _bundled_dir()
    if not folder.is_dir():
        return []
    return sorted(
        entry.name.rsplit(".", 1)[0]
        for entry in folder.iterdir()
        if entry.is_file() and entry.name.endswith(_SUFFIXES)
    )


def load_network(name_or_path: str | os.PathLike[str]) -> Network:
    """Load a bundled table by name (see :func:`available_networks`) or a table file by path.

    A string with a path separator or a ``.yaml``/``.yml`` suffix is always a path; otherwise a
    bundled name wins over a file of the same name in the working directory.
    """
    text_arg = os.fspath(name_or_path)
    if text_arg.lower().endswith(".onnx"):
        return _load_onnx(text_arg)
    if not _is_path(name_or_path):
        entry = _bundled_entry(text_arg)
        if entry is not None:  # messages name it as users do, not by where it is installed
            return _parse(entry.read_text(encoding="utf-8"), f"bundled network {text_arg}", text_arg)
        if not Path(text_arg).is_file():
            raise InputError(
                f"unknown network {text_arg!r}; bundled networks are: "
                + (", ".join(available_networks()) or "(none)")
                + "; or give the path of a .yaml layer table"
            )
    path = Path(text_arg)
    return _parse(read_text(path, "network file"), str(path), path.stem)


def _is_path(name_or_path: str | os.PathLike[str]) -> bool:
    """Whether :func:`load_network` reads ``name_or_path`` as a path (not a bundled name)."""
    text_arg = os.fspath(name_or_path)
    return (
        not isinstance(name_or_path, str)
        or "/" in text_arg
        or (os.altsep is not None and os.altsep in text_arg)
        or os.sep in text_arg
        or text_arg.lower().endswith(_SUFFIXES)
    )


def _bundled_entry(name: str) -> Any:
    """The installed file of bundled table ``name`` (None: no such bundled table)."""
    if name in available_networks():
        for suffix in _SUFFIXES:
            entry = _bundled_dir().joinpath(name + suffix)
            if entry.is_file():
                return entry
    return None


def network_file(name_or_path: str) -> str | None:
    """The file :func:`load_network` reads for ``name_or_path`` (a bundled table's installed
    file), found without reading it; None when there is none."""
    text_arg = os.fspath(name_or_path)
    if not text_arg.lower().endswith(".onnx") and not _is_path(name_or_path):
        entry = _bundled_entry(text_arg)
        if entry is not None:
            return str(entry)
    return text_arg if Path(text_arg).is_file() else None


def _load_onnx(path: str) -> Network:
    """An ONNX model at its own batch size; the nodes it skips are announced once as an
    :class:`~accelsim.errors.InputWarning` (``accelsim import-onnx`` offers --batch and --strict)."""
    import warnings

    from accelsim.errors import InputWarning
    from accelsim.workload.onnx_import import import_onnx

    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0  # import_onnx says what is wrong with the path
    if size > MAX_INPUT_BYTES:
        raise InputError(f"ONNX model is {size:,} bytes; --network reads models of at most {MAX_INPUT_BYTES:,} "
                         "bytes (the input file limit): import a larger one once with `accelsim import-onnx` and "
                         "run the table it writes", source=path)
    imported = import_onnx(path)
    if imported.skipped:
        warnings.warn(f"{path}: {imported.skipped_summary()}", InputWarning, stacklevel=3)
    return imported.network


def network_yaml(network: Network, source: str | None = None, notes: str | None = None) -> str:
    """The table file of ``network`` (loadable with :func:`load_network`): one flow-style line per
    layer with its type, the sizes that differ from the operator's defaults, and its strides."""
    lines = [f"name: {yaml_scalar(network.name)}"]
    for key, value in (("source", source), ("notes", notes)):
        if value:
            lines.append(f"{key}: {yaml_scalar(value)}")
    lines.append("layers:")
    lines += ["  - {" + ", ".join(layer_fields(layer)) + "}" for layer in network.layers]
    return "\n".join(lines) + "\n"


def layer_fields(layer: Layer) -> list[str]:
    """A layer as the ``key: value`` fields of a table entry: name, type, the sizes that differ
    from the operator's defaults, and its strides where they are not 1."""
    spec = operator(layer.op)
    fields = [f"name: {yaml_scalar(layer.name)}", f"type: {layer.op.value}"]
    fields += [f"{dim}: {layer.sizes[dim]}" for dim, default in spec.dims.items() if layer.sizes[dim] != default]
    if spec.windows:
        if layer.stride_y == layer.stride_x != 1:
            fields.append(f"stride: {layer.stride_y}")
        elif layer.stride_y != layer.stride_x:
            fields.append(f"stride_y: {layer.stride_y}, stride_x: {layer.stride_x}")
    return fields


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar, quoted where a plain one would change it (also inside a flow
    mapping, where commas and braces are syntax)."""
    return yaml.safe_dump({"k": text}, default_flow_style=True, width=1 << 30, allow_unicode=True).strip()[4:-1]


# ----- parsing and validation ----------------------------------------------------------------
def _parse(text: str, label: str, default_name: str) -> Network:
    doc = load_yaml(text, label)
    data = doc.data
    layers_line = doc.lines.get(("layers",))

    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type(data).__name__}"
        raise InputError(
            f"expected a mapping with keys {', '.join(_TOP_KEYS)} at the top level, got {got}", source=label
        )
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise InputError(
            f"unknown top-level key(s) {', '.join(shown(k) for k in unknown[:5])}; expected {', '.join(_TOP_KEYS)}",
            source=label,
        )
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise InputError(f"field 'name': expected a non-empty string, got {shown(name)}", source=label)
    for key in ("source", "notes"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise InputError(f"field {shown(key)}: expected a string, got {shown(data[key])}", source=label)
    if "layers" not in data:
        raise InputError("missing field 'layers' (a list of layers)", source=label)
    entries = data["layers"]
    if not isinstance(entries, list) or not entries:
        raise InputError(
            f"field 'layers': expected a non-empty list of layers, got {shown(entries)}", source=label, line=layers_line
        )

    layers: list[Layer] = []
    dataflows: list[LayerDataflow] = []
    first_index: dict[str, int] = {}
    key_lines: dict[int, dict[str, int]] = {}  # layer index -> line of each of its keys
    for path, n in doc.lines.items():
        if len(path) == 3 and path[0] == "layers" and isinstance(path[1], int):
            key_lines.setdefault(path[1], {})[str(path[2])] = n
    for i, entry in enumerate(entries):
        layer = _parse_layer(entry, i, label, doc.lines.get(("layers", i)), key_lines.get(i, {}))
        if layer.name in first_index:
            raise InputError(
                f"layer {i} ({layer.name}): duplicate layer name; layer {first_index[layer.name]} "
                "already has it (names must be unique)",
                source=label,
                line=doc.line(("layers", i, "name")),
            )
        first_index[layer.name] = i
        layers.append(layer)
        if isinstance(entry, dict) and "dataflow" in entry:
            dataflows.append(_dataflow(entry["dataflow"], layer.name, i, label, doc.lines.get(("layers", i, "dataflow"))))
    return Network(name=name, layers=tuple(layers), source=label, dataflows=tuple(dataflows))


def _dataflow(text: Any, layer: str, i: int, label: str, line: int | None) -> LayerDataflow:
    """A layer's ``dataflow`` field: non-empty text, starting on the line after the key when it
    is a block (``|``), else on the key's line."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"layer {i} ({layer}): field 'dataflow': expected MAESTRO dataflow directives as text "
                         f"(e.g. a '|' block of 'SpatialMap(1,1) K;' lines), got {shown(text)}", source=label, line=line)
    first = line + 1 if line is not None and text.endswith("\n") else line
    return LayerDataflow(layer, text, label, first)


def layer_from_entry(entry: Any, index: int, label: str, line: int | None = None,
                     field_lines: dict[str, int] | None = None) -> Layer:
    """One layer written as a table's ``layers`` entry (``{name, type, sizes..., stride}``),
    checked the same way; other formats (loop-nest mapping files) describe their problem so."""
    return _parse_layer(entry, index, label, line, field_lines or {})


def _is_pos_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _parse_layer(entry: Any, i: int, label: str, line: int | None, fields: dict[str, int]) -> Layer:
    def fail(message: str, key: str | None = None) -> InputError:
        return InputError(message, source=label, line=fields.get(key, line) if key else line)

    if not isinstance(entry, dict):
        raise fail(f"layer {i}: expected a mapping with at least 'name' and 'type', got {shown(entry)}")
    if "name" not in entry:
        raise fail(f"layer {i}: missing field 'name'")
    name = entry["name"]
    if not isinstance(name, str) or not name.strip():
        raise fail(f"layer {i}: field 'name': expected a non-empty string, got {shown(name)}", "name")
    who = f"layer {i} ({name})"
    if "type" not in entry:
        raise fail(f"{who}: missing field 'type'; expected one of {op_names()}")
    type_value = entry["type"]
    op = parse_op(type_value) if isinstance(type_value, str) else None
    if op is None:
        raise fail(f"{who}: field 'type': unknown operator {shown(type_value)}; expected one of {op_names()}", "type")

    spec = operator(op)
    dims = spec.dims
    stride_keys = _STRIDE_KEYS if spec.windows else ()
    for key in entry:
        if key in ("name", "type", "dataflow") or key in stride_keys or key in dims:
            continue
        if key in _STRIDE_KEYS:
            raise fail(f"{who}: field {shown(key)}: a {op.value} layer has no stride", key)
        if key in _ALL_DIMS:
            raise fail(
                f"{who}: field {shown(key)} does not exist for {op.value}; its sizes are {', '.join(dims)}", key
            )
        raise fail(
            f"{who}: unknown field {shown(key)}; expected name, type, "
            + ("stride (or stride_y/stride_x), " if spec.windows else "")
            + f"dataflow, and the {op.value} sizes {', '.join(dims)}",
            key,
        )

    sizes: dict[str, int] = {}
    for dim, default in dims.items():
        if dim not in entry:
            if default is None:
                raise fail(f"{who}: missing field {dim!r} (required for {op.value}: "
                           f"{', '.join(d for d, v in dims.items() if v is None)})")
            continue
        value = entry[dim]
        if not _is_pos_int(value):
            raise fail(f"{who}: field {dim!r}: expected a positive integer, got {shown(value)}", dim)
        sizes[dim] = value
    full = {**{dim: default for dim, default in dims.items() if default is not None}, **sizes}
    for rule in spec.rules:  # rules about one field point at its line; Layer.build checks the rest
        if rule.field is not None and not rule.holds(full):
            raise fail(f"{who}: field {rule.field!r}: {rule.message(full)}", rule.field)

    if "stride" in entry and ("stride_y" in entry or "stride_x" in entry):
        key = "stride_y" if "stride_y" in entry else "stride_x"
        raise fail(f"{who}: field {shown(key)}: give either 'stride' (both axes) or 'stride_y'/'stride_x', not both", key)
    strides: dict[str, int] = {}
    for key in _STRIDE_KEYS:
        if key in entry:
            if not _is_pos_int(entry[key]):
                raise fail(f"{who}: field {shown(key)}: expected a positive integer, got {shown(entry[key])}", key)
            strides[key] = entry[key]
    stride_y = strides.get("stride_y", strides.get("stride", 1))
    stride_x = strides.get("stride_x", strides.get("stride", 1))

    return Layer.build(name, op, sizes, stride_y, stride_x, source=f"{label} layer {i} ({name})")
