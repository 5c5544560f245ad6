"""Timeloop's ``architecture`` as a list of storage levels, outermost first, with their
instance counts, and the hardware spec accelsim models it with.

Three forms are read: the 2024 form (``architecture: {version: 0.4, nodes: [...]}`` with
``!Container``, ``!Component``, ``!Parallel`` and ``!Hierarchical`` tags; a container's
``spatial: {meshX, meshY}`` multiplies the instances of everything below it), the 2020-2023
tree (``architecture: {subtree: [{name: PE[0..15], local: [...], subtree: [...]}]}``: a name
suffix ``[0..N-1]`` means N instances of it inside its parent) and the flat v0.2 form
(``arch: {arithmetic: {...}, storage: [...]}``, storage listed innermost first). A component
whose class names an arithmetic unit (``intmac``, ``fpmac``, ``mac``, ``compute``) is a MAC;
every other component is a storage level.

Sizes: ``depth`` x ``width`` bits (or ``entries`` x word bits, or ``sizeKB``), in bytes; no size
(DRAM) means unbounded. Word bits: ``datawidth``, ``word-bits``, ``word_bits`` (default 16, as
Timeloop's). Bandwidths ``read_bandwidth``/``write_bandwidth`` are words per cycle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import prod
from typing import Any

from accelsim.errors import InputError

_MAC_CLASSES = ("intmac", "fpmac", "mac", "compute", "multiplier")
_ARRAY = re.compile(r"^(.*)\[(\d+)\.\.(\d+)\]$")
DEFAULT_WORD_BITS = 16


@dataclass(frozen=True)
class StorageLevel:
    """One Timeloop storage level: ``instances`` in the whole design; ``size_bytes`` of one
    instance (None: unbounded); bandwidths in words per cycle (None: not limited)."""

    name: str
    instances: int
    size_bytes: int | None
    word_bits: int
    read_bandwidth: float | None
    write_bandwidth: float | None


@dataclass(frozen=True)
class Container:
    """A container with a spatial fanout: ``fanout`` instances of what is below it for each
    one above it, below storage level ``above`` (the index of the last level above it)."""

    above: int
    fanout: int


@dataclass(frozen=True)
class TimeloopArch:
    """The storage levels outermost first, the MACs, the containers whose ``spatial`` fanout a
    spatial mapping entry may name (outermost first), and the clock (MHz, None when not
    given)."""

    name: str
    levels: tuple[StorageLevel, ...]
    macs: int
    mac_word_bits: int
    containers: dict[str, "Container"]
    clock_mhz: float | None

    def fanout(self, i: int) -> int:
        """Instances below storage level ``i`` for each one of it (the last: MACs per instance)."""
        below = self.levels[i + 1].instances if i + 1 < len(self.levels) else self.macs
        return max(1, below // self.levels[i].instances)


def _fail(message: str, source: str) -> InputError:
    return InputError(f"architecture: {message}", source=source)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def _attr(attrs: dict, *names: str) -> float | None:
    for n in names:
        if n in attrs:
            value = _number(attrs[n])
            if value is not None:
                return value
    return None


def _word_bits(attrs: dict) -> int:
    bits = _attr(attrs, "datawidth", "word-bits", "word_bits", "word_width")
    return int(bits) if bits and bits > 0 else DEFAULT_WORD_BITS


def _is_mac(component: dict) -> bool:
    cls = str(component.get("class", "")).lower()
    sub = str(component.get("subclass", "")).lower()
    return any(cls.endswith(m) or cls == m for m in _MAC_CLASSES) or sub.endswith("mac")


def _storage(name: str, attrs: dict, instances: int) -> StorageLevel:
    bits = _word_bits(attrs)
    depth = _attr(attrs, "depth", "memory_depth", "data_storage_depth")
    width = _attr(attrs, "width", "memory_width", "data_storage_width")
    entries = _attr(attrs, "entries")
    size_kb = _attr(attrs, "sizeKB")
    size: int | None = None
    if depth is not None and width is not None and depth < 1e15:
        size = max(1, int(depth * width) // 8)
    elif entries is not None:
        size = max(1, int(entries * bits) // 8)
    elif size_kb is not None:
        size = max(1, int(size_kb * 1024))
    return StorageLevel(name, instances, size, bits, _attr(attrs, "read_bandwidth", "shared_bandwidth"),
                        _attr(attrs, "write_bandwidth", "shared_bandwidth"))


def _mesh(spatial: Any) -> int:
    if not isinstance(spatial, dict):
        return 1
    return int(prod(max(1, int(_number(spatial.get(k, 1)) or 1)) for k in ("meshX", "meshY")))


class _Builder:
    def __init__(self, source: str):
        self.source = source
        self.levels: list[StorageLevel] = []
        self.macs = 0
        self.mac_bits = DEFAULT_WORD_BITS
        self.containers: dict[str, Container] = {}
        self.current = 1  # instances of the last level or container recorded
        self.clock_mhz: float | None = None

    def component(self, name: str, node: dict, instances: int) -> None:
        attrs = node.get("attributes") or {}
        if not isinstance(attrs, dict):
            raise _fail(f"component {name}: attributes must be a mapping", self.source)
        if _is_mac(node):
            self.macs = max(self.macs, instances)
            self.mac_bits = _word_bits(attrs)
        else:
            self.levels.append(_storage(name, attrs, instances))
            self.current = instances

    def container(self, name: str, instances: int) -> None:
        """Record a container of ``instances`` in all when it fans out below the last level."""
        if instances > self.current:
            self.containers[name] = Container(len(self.levels) - 1, instances // self.current)
            self.current = instances

    def clock(self, attrs: Any) -> None:
        seconds = _attr(attrs, "global_cycle_seconds") if isinstance(attrs, dict) else None
        if seconds and self.clock_mhz is None:
            self.clock_mhz = 1e-6 / seconds

    # 2024 form
    def nodes(self, nodes: Any, mult: int) -> int:
        if not isinstance(nodes, list):
            raise _fail("'nodes' must be a list", self.source)
        for node in nodes:
            if not isinstance(node, dict):
                raise _fail(f"a node must be a mapping, got {node!r}", self.source)
            tag = str(node.get("!", "Component" if "class" in node else "Container"))
            name = str(node.get("name", ""))
            if tag == "Parallel":
                for child in node.get("nodes") or []:
                    self.nodes([child], mult)
                continue
            if tag == "Hierarchical" or (tag == "Container" and "nodes" in node):
                mult = self.nodes(node.get("nodes") or [], mult * _mesh(node.get("spatial")))
                continue
            own = mult * _mesh(node.get("spatial"))
            if tag == "Container":
                self.clock(node.get("attributes"))
                self.container(name, own)
                mult = own
                continue
            self.component(name, node, own)
            mult = own
        return mult

    # 2020-2023 tree
    def subtree(self, node: Any, mult: int) -> None:
        if not isinstance(node, dict):
            raise _fail(f"a subtree entry must be a mapping, got {node!r}", self.source)
        name, count = _array(str(node.get("name", "")))
        mult *= count
        self.clock(node.get("attributes"))
        self.container(name, mult)
        for comp in node.get("local") or []:
            if not isinstance(comp, dict):
                raise _fail(f"a local component must be a mapping, got {comp!r}", self.source)
            cname, ccount = _array(str(comp.get("name", "")))
            attrs = comp.get("attributes") or {}
            inst = _attr(attrs, "instances") if isinstance(attrs, dict) else None
            self.component(cname, comp, mult * ccount if inst is None else int(inst))
        for child in node.get("subtree") or []:
            self.subtree(child, mult)


def _array(name: str) -> tuple[str, int]:
    m = _ARRAY.match(name.strip())
    if m is None:
        return name.strip(), 1
    return m.group(1), int(m.group(3)) - int(m.group(2)) + 1


def read_architecture(spec: Any, source: str, flat: bool = False) -> TimeloopArch:
    """The storage levels of a Timeloop architecture (``architecture:`` or, ``flat``, v0.2's
    ``arch:``); raises InputError."""
    b = _Builder(source)
    if not isinstance(spec, dict):
        raise _fail("expected a mapping", source)
    name = "timeloop"
    if flat:
        storage = spec.get("storage")
        if not isinstance(storage, list):
            raise _fail("arch: expected a 'storage' list", source)
        arithmetic = spec.get("arithmetic") or {}
        for level in reversed(storage):
            if isinstance(level, dict):
                b.levels.append(_storage(str(level.get("name", "")), level, int(_number(level.get("instances", 1))
                                                                                   or 1)))
        b.macs = int(_number(arithmetic.get("instances", 1)) or 1)
        b.mac_bits = _word_bits(arithmetic)
    elif "nodes" in spec:
        b.nodes(spec["nodes"], 1)
        first = spec["nodes"][0] if spec["nodes"] else {}
        name = str(first.get("name", name)) if isinstance(first, dict) else name
    elif "subtree" in spec:
        for node in spec["subtree"] or []:
            b.subtree(node, 1)
        first = spec["subtree"][0] if spec["subtree"] else {}
        name = str(first.get("name", name)) if isinstance(first, dict) else name
    else:
        raise _fail("expected 'nodes' (the 2024 form) or 'subtree' (the 2020-2023 form)", source)
    if not b.levels:
        raise _fail("no storage level (a component other than a MAC)", source)
    if b.macs == 0:
        b.macs = b.levels[-1].instances
    for a, c in zip(b.levels, b.levels[1:]):
        if c.instances % a.instances:
            raise _fail(f"{c.name} has {c.instances} instances, not a multiple of {a.name}'s {a.instances}", source)
    if b.macs % b.levels[-1].instances:
        raise _fail(f"{b.macs} MACs are not a multiple of {b.levels[-1].name}'s {b.levels[-1].instances} instances",
                    source)
    return TimeloopArch(name, tuple(b.levels), b.macs, b.mac_bits, b.containers, b.clock_mhz)
