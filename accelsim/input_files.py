"""Reading the files a user gives us: one text reader, one YAML loader and one CSV reader for
every input kind.

:func:`read_text` turns every way a file can fail to be read (missing, a directory, a device or
pipe, unreadable, too large, not UTF-8) into one :class:`InputError` naming the file and the
kind of input it should be. :func:`load_yaml` is the only YAML loader: safe (no Python tags),
a key given twice in one mapping is refused with both lines, integers longer than
:data:`MAX_YAML_INTEGER_DIGITS` digits are refused with their line, and it returns the line
of every key and list item so that later checks can name it. Aliases are checked before the
document is built: one that refers to its own anchor (a recursive structure) or aliases that
expand the document by more than :data:`MAX_YAML_ALIAS_NODES` nodes (an alias bomb) are
refused with their line.
"""

from __future__ import annotations

import csv
import io
import os
import reprlib
import stat
from dataclasses import dataclass, field
from typing import Any

import yaml

from accelsim.errors import InputError

# Input files larger than this are refused: every input accelsim reads (mappings, hardware,
# networks, SCALE-Sim and MAESTRO files) is a few kilobytes to a few megabytes.
MAX_INPUT_BYTES = 64 * 1024 * 1024
# An integer with more digits than this in a YAML file is refused (no field accepts one).
MAX_YAML_INTEGER_DIGITS = 30
# Aliases that would add more nodes than this to a YAML document, were it written out without
# them, are refused (an alias bomb: a kilobyte that means billions of values to anything that
# walks, prints or validates it).
MAX_YAML_ALIAS_NODES = 1_000_000

FilePath = str | os.PathLike[str]


def check_regular_file(path: FilePath, what: str) -> os.stat_result:
    """The status of ``path``; InputError (``what`` names its kind) when it is missing, a
    directory, or not a regular file (a device, pipe or socket: reading it could block or never
    end)."""
    source = os.fspath(path)
    try:
        info = os.stat(source)
    except FileNotFoundError:
        raise InputError(f"{what} not found", source=source) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=source) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"is a directory, not a {what}", source=source)
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"is not a regular file (a device, pipe or socket); expected a {what}", source=source)
    return info


def read_bytes(path: FilePath, what: str) -> bytes:
    """The bytes of the regular file ``path``; ``what`` names its kind (``"mapping file"``) in
    the InputError raised when it is missing, a directory, not a regular file, unreadable or
    larger than :data:`MAX_INPUT_BYTES`."""
    source = os.fspath(path)
    info = check_regular_file(path, what)
    if info.st_size > MAX_INPUT_BYTES:
        raise InputError(f"{what} is {info.st_size:,} bytes; input files are limited to "
                         f"{MAX_INPUT_BYTES:,} bytes", source=source)
    try:
        with open(source, "rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=source) from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"{what} is larger than {MAX_INPUT_BYTES:,} bytes, the limit for input files",
                         source=source)
    return data


def decode_text(data: bytes, source: str, what: str) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped); InputError naming the line and byte
    offset of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start} "
                         "cannot be decoded); save it as UTF-8", source=source, line=line) from None


def read_text(path: FilePath, what: str) -> str:
    """The UTF-8 text of the file ``path`` (see :func:`read_bytes` and :func:`decode_text`)."""
    return decode_text(read_bytes(path, what), os.fspath(path), what)


def read_csv_rows(path: FilePath, what: str) -> list[tuple[int, list[str]]]:
    """The non-blank rows of a CSV file as ``(line number, cells)``: cells stripped of blanks,
    trailing empty cells (a trailing comma) dropped. ``what`` names the file's kind in the
    InputError raised when it cannot be read."""
    rows = []
    reader = csv.reader(io.StringIO(read_text(path, what), newline=""))  # a quoted cell may span lines
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # a field over the csv module's limit, a NUL byte
            raise InputError(f"{what}: cannot read this row as CSV ({exc})", source=os.fspath(path),
                             line=reader.line_num) from None
        line = reader.line_num
        cells = [c.strip() for c in row]
        while cells and cells[-1] == "":
            cells.pop()
        if cells:
            rows.append((line, cells))
    return rows


# ----- YAML ----------------------------------------------------------------------------------

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML document: its data and the line (1-based) of every mapping key and list
    item by path, e.g. ``("layers", 0, "K")``; ``lines[()]`` is the document's first line."""

    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line(self, path: KeyPath) -> int | None:
        """The line of ``path``, or of its nearest enclosing key or item that has one."""
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader refusing a key given twice in one mapping and integers too long to be sizes."""


def _unique_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"key '{key}' given twice (first on line {first})", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


def _bounded_int(loader: _StrictLoader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isdigit() for ch in str(node.value))
    if digits > MAX_YAML_INTEGER_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {digits} digits is too large (at most {MAX_YAML_INTEGER_DIGITS})",
            node.start_mark)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _bounded_int)


class _TaggedLoader(_StrictLoader):
    """_StrictLoader that also reads local tags (Timeloop's ``!Container``, ``!Component``) as
    plain data: a tagged mapping gets its tag's name under the key ``!``; a tagged list or
    scalar is read as if untagged."""


def _local_tag(loader: _TaggedLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        data = _unique_mapping(loader, node, deep=True)
        return {"!": suffix, **data}
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_TaggedLoader.add_multi_constructor("!", _local_tag)


def _yaml_error(exc: yaml.YAMLError, source: str) -> InputError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}"
    if context:
        context_mark = getattr(exc, "context_mark", None)
        if context_mark is not None and (mark is None or context_mark.line != mark.line):
            context += f" started on line {context_mark.line + 1}"
        message += f" ({context})"
    if mark is not None:
        return InputError(f"{message} at column {mark.column + 1}", source=source, line=mark.line + 1)
    return InputError(message, source=source)


def _node_lines(root: yaml.Node | None) -> dict[KeyPath, int]:
    """Line of every mapping key and list item below ``root``; a node reached again through an
    alias is not walked twice (alias bombs stay linear)."""
    lines: dict[KeyPath, int] = {}
    if root is None:
        return lines
    lines[()] = root.start_mark.line + 1
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, KeyPath]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    child = path + (str(key_node.value),)
                    lines.setdefault(child, key_node.start_mark.line + 1)
                    stack.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines.setdefault(path + (i,), item.start_mark.line + 1)
                stack.append((item, path + (i,)))
    return lines


def _check_aliases(root: yaml.Node, source: str) -> None:
    """Refuse a recursive alias, and aliases that would add more than MAX_YAML_ALIAS_NODES
    nodes to the document written out in full (counted per distinct node, so in linear time;
    refused at the first value whose expansion alone is that much over every node seen)."""
    expanded: dict[int, int] = {}  # id(node) -> nodes of its full expansion
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    distinct = 0
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if done:
            on_path.discard(id(node))
            expanded[id(node)] = 1 + sum(expanded[id(c)] for c in children)
            # at least this many values come from aliases inside this node: name its line
            added = expanded[id(node)] - distinct
            if added > MAX_YAML_ALIAS_NODES:
                raise InputError(f"invalid YAML: aliases expand this value by {added:,} or more values, over "
                                 f"the limit of {MAX_YAML_ALIAS_NODES:,} (an alias bomb?); write the values out",
                                 source=source, line=node.start_mark.line + 1)
            continue
        if id(node) in expanded:
            continue
        if id(node) in on_path:
            raise InputError("invalid YAML: an alias refers to the anchor it is inside (a recursive structure)",
                             source=source, line=node.start_mark.line + 1)
        on_path.add(id(node))
        distinct += 1
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise InputError("invalid YAML: an alias refers to the anchor it is inside (a recursive "
                                 "structure)", source=source, line=child.start_mark.line + 1)
            if id(child) not in expanded:
                stack.append((child, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def load_yaml(text: str, source: str, local_tags: bool = False) -> YamlDocument:
    """Parse YAML ``text`` (from ``source``, for messages) safely; every problem (syntax, a key
    given twice, a Python tag, an over-long integer, several documents) is an InputError with
    the file and line. ``local_tags``: read ``!Name`` tags as data (see :class:`_TaggedLoader`)
    instead of refusing them."""
    loader = _TaggedLoader(text) if local_tags else _StrictLoader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _check_aliases(root, source)
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source) from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", source=source) from None
    finally:
        loader.dispose()
    return YamlDocument(data, _node_lines(root))


_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother, _SHORT_REPR.maxlong = 2, 60, 60, 40
_SHORT_REPR.maxdict = _SHORT_REPR.maxlist = _SHORT_REPR.maxtuple = _SHORT_REPR.maxset = 4


def shown(value: Any) -> str:
    """``repr(value)`` cut to a few dozen characters (nested lists and long strings elided), for
    messages about what a user gave: a value may be a megabyte string or an alias bomb."""
    return _SHORT_REPR.repr(value)


def yaml_type_name(value: Any) -> str:
    """What a YAML value is, in words (for messages): list, string, boolean, number, ..."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__
