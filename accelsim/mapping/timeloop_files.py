"""Timeloop's own input files (``--timeloop FILE``, repeated): the architecture, problem and
mapping YAML files ``timeloop-model`` takes, merged as Timeloop merges them (each file's
top-level keys together; a key given in two files is refused), read as one accelsim job and the
hardware spec that models the architecture.

How Timeloop's levels become accelsim's (``README.md``, Timeloop's files):

- the outermost storage level is DRAM; its temporal loops are the loop nest's ``DRAM`` entry;
- the PE is one instance of the innermost storage level (its MACs: ``macs_per_pe_per_cycle``);
  every level with as many instances as PEs is inside the PE (below the first shared level,
  which is L2 even in a one-PE design); their loops, and the spatial loops onto a PE's MACs,
  are one PE's tile (the ``L1`` entry); of several such levels the outermost is L1 and the
  others are register files (``inner_levels``) holding the mapping's loops at them
  (``Job.inner_pins``), unless :func:`_register_files` says they are summed into L1 (L1's size
  then the sum of theirs);
- the first level below DRAM is L2; its loops and those of every level between it and the PEs
  (cluster buffers, which accelsim does not hold) are ``L2`` entries, and each fanout between
  them is a spatial entry (a spatial entry over several dimensions becomes nested cluster
  levels, the outermost taking the rest of the fanout, the others their factor);
- a level the architecture lacks (no shared buffer, no per-PE storage) passes its tile through:
  it is sized to hold it.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace
from math import ceil, prod
from pathlib import Path
from typing import Any, Literal, Sequence

from pydantic import ValidationError

from accelsim.errors import InputError, InputWarning
from accelsim.hw.loader import apply_overrides, load_hardware
from accelsim.hw.spec import RESERVED_LEVEL_NAMES, HardwareSpec, StorageLevelSpec
from accelsim.input_files import load_yaml, read_text
from accelsim.mapping.compile import CompiledMapping, InnerPins, PinnedLevel, PinnedLoop, buffer_needs_bytes, \
    compile_mapping
from accelsim.mapping.inner_levels import inner_tiling
from accelsim.mapping.jobs import Job
from accelsim.mapping.loopnest_format import NestEntry, NestLayer, loopnest_dataflow
from accelsim.mapping.timeloop_arch import TimeloopArch, read_architecture
from accelsim.mapping.timeloop_problem import TimeloopProblem, read_problem

_FACTOR = re.compile(r"([A-Za-z]+)\s*=*\s*([0-9]+)(,([0-9]+))?")
UNLIMITED_WORDS_PER_CYCLE = 2 ** 20
UNBOUNDED_BYTES = 2 ** 30  # a level the architecture lacks, when no mapping sizes it
_EMPTY_YIELDS = {"mapping", "problem", "architecture"}  # an empty one yields to the file that gives it
_KIND_WORDS = ("temporal", "spatial", "bypass", "datatype", "dataspace")
# keys of the other tools' inputs that may sit beside the three timeloop-model reads
_IGNORED_KEYS = {"mapper", "constraints", "architecture_constraints", "mapspace", "mapspace_constraints",
                 "components", "compound_components", "variables", "globals", "model", "ERT", "ART", "version",
                 "mapper_constraints", "architecture_extensions"}


@dataclass(frozen=True)
class TimeloopInput:
    """The merged files: each top-level key's value and the file it came from."""

    data: dict[str, Any]
    origin: dict[str, str]

    def need(self, *keys: str) -> tuple[str, Any]:
        """(key, value) of the first of ``keys`` given; InputError naming the files otherwise."""
        for key in keys:
            if key in self.data:
                return key, self.data[key]
        files = ", ".join(sorted(set(self.origin.values()))) or "no file"
        raise InputError(f"--timeloop: no '{keys[0]}' in {files}; give the {keys[0]} file too")


def read_files(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(text, path) of each of Timeloop's YAML files (a libconfig ``.cfg`` file is refused)."""
    texts = []
    for path in paths:
        if str(path).lower().endswith(".cfg"):
            raise InputError("libconfig (.cfg) files are not read; give Timeloop's YAML files (timeloop-model "
                             "reads both; the YAML ones carry the same fields)", source=str(path))
        texts.append((read_text(path, "Timeloop file"), str(path)))
    return texts


def merge_texts(texts: Sequence[tuple[str, str]]) -> TimeloopInput:
    """Merge the top-level keys of Timeloop's YAML documents, given as (text, source)."""
    data: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for text, path in texts:
        if "{{" in text or "{%" in text:
            raise InputError("a Jinja template (its {{ }} or {% %}) is not expanded by accelsim; give the file "
                             "timeloopfe writes (parsed-processed-input.yaml) or expand it first", source=str(path))
        doc = load_yaml(text, str(path), local_tags=True)
        if not isinstance(doc.data, dict):
            raise InputError("expected a mapping of Timeloop's top-level keys (architecture, problem, mapping, ...)",
                             source=str(path), line=doc.line(()))
        for key, value in doc.data.items():
            if value in (None, [], {}) and key in _EMPTY_YIELDS:
                continue  # the front end's dump holds "mapping: []" beside the mapper's file
            if key in data and data[key] in (None, [], {}):
                del data[key]
            if key in data:
                raise InputError(f"top-level key '{key}' is also given in {origin[key]}", source=str(path),
                                 line=doc.line((str(key),)))
            data[str(key)] = value
            origin[str(key)] = str(path)
    return TimeloopInput(data, origin)


@dataclass(frozen=True)
class _LevelMap:
    """Per Timeloop storage level: temporal and spatial factors (Timeloop's dimensions) and
    permutations (innermost first)."""

    temporal: list[dict[str, int]]
    temporal_perm: list[list[str]]
    spatial: list[dict[str, int]]
    spatial_perm: list[list[str]]
    kept: list[set[str] | None]
    container_spatial: dict[str, tuple[dict[str, int], list[str]]]


def _factors(raw: Any, dims: Sequence[str], extents: dict[str, int], where: str, source: str) -> dict[str, int]:
    """Timeloop's factors in any of its forms: ``R=3 P=16``, ``R3 P16``, ``R 3``, ``R=3, P=16``,
    a YAML list of such words or a mapping; 0 means the whole dimension."""
    if isinstance(raw, dict):
        words = " ".join(f"{k}={v}" for k, v in raw.items())
    elif isinstance(raw, list):
        words = " ".join(str(w) for w in raw)
    else:
        words = str(raw or "").split("#")[0]
    out: dict[str, int] = {}
    for m in _FACTOR.finditer(words):
        dim, end = m.group(1), int(m.group(2))
        if dim not in extents:
            raise InputError(f"{where}: factors: dimension {dim} is not in the problem ({', '.join(dims)})",
                             source=source)
        if m.group(4) is not None and int(m.group(4)) != end:
            raise InputError(f"{where}: factors: {m.group(0)} (a residual factor) is not modelled; give factors "
                             "that divide the dimension", source=source)
        out[dim] = extents[dim] if end == 0 else end
    leftover = _FACTOR.sub("", words).replace(",", " ").strip()
    if leftover:
        raise InputError(f"{where}: factors: cannot read {leftover!r} (expected words like R=3, R3 or R 3)",
                         source=source)
    return out


def _permutation(raw: Any, dims: Sequence[str], where: str, source: str) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, list):
        words = [str(w).strip() for w in raw]
    else:
        text = str(raw)  # one letter per dimension, whitespace ignored, unless a name is longer
        words = list(re.sub(r"\s+", "", text)) if all(len(d) == 1 for d in dims) else text.split()
    for w in words:
        if w not in dims:
            raise InputError(f"{where}: permutation: {w!r} is not a dimension of the problem ({', '.join(dims)})",
                             source=source)
    return words


def _level_of(target: Any, arch: TimeloopArch, where: str, source: str) -> int | str:
    """The storage level an entry tiles (its index), or the name of the container whose
    fanout it fills (``inter_<name>_spatial`` as timeloopfe names it)."""
    names = [lv.name for lv in arch.levels]
    name = str(target)
    if name in names:
        return names.index(name)
    m = re.fullmatch(r"inter_(.*)_spatial", name)
    container = m.group(1) if m else name
    if container in arch.containers:
        if arch.containers[container].above < 0:
            raise InputError(f"{where}: container {container} is above every storage level", source=source)
        return container
    raise InputError(f"{where}: target {name!r} is not a storage level ({', '.join(names)})"
                     + (f" or a container with a fanout ({', '.join(arch.containers)})" if arch.containers else ""),
                     source=source)


def _read_mapping(mapping: Any, arch: TimeloopArch, prob: TimeloopProblem, source: str) -> _LevelMap:
    dims = list(prob.extents)
    n = len(arch.levels)
    lm = _LevelMap([{} for _ in range(n)], [[] for _ in range(n)], [{} for _ in range(n)], [[] for _ in range(n)],
                   [None] * n, {})
    if isinstance(mapping, dict) and "mapping" in mapping:
        mapping = mapping["mapping"]
    if not isinstance(mapping, list):
        raise InputError("mapping: expected a list of entries", source=source)
    for j, entry in enumerate(mapping):
        where = f"mapping entry {j}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: expected a mapping with target and type", source=source)
        kind = str(entry.get("type", "temporal"))
        if kind not in _KIND_WORDS:
            raise InputError(f"{where}: type {kind!r}; expected one of {', '.join(_KIND_WORDS)}", source=source)
        where = f"{where} ({entry.get('target')}, {kind})"
        level = _level_of(entry.get("target"), arch, where, source)
        factors = _factors(entry.get("factors"), dims, prob.extents, where, source)
        perm = _permutation(entry.get("permutation"), dims, where, source)
        if isinstance(level, str):  # a container's fanout
            if kind == "spatial":
                lm.container_spatial[level] = (factors, perm)
            elif kind == "temporal" and any(f > 1 for f in factors.values()):
                raise InputError(f"{where}: temporal loops at a container's fanout are not modelled (accelsim has no "
                                 "storage there)", source=source)
            continue
        if kind in ("bypass", "datatype", "dataspace"):
            keep = entry.get("keep") or []
            lm.kept[level] = {str(k) for k in keep} if isinstance(keep, list) else {str(keep)}
            continue
        if kind == "temporal":
            lm.temporal[level].update(factors)
            lm.temporal_perm[level] = perm or lm.temporal_perm[level]
        else:
            lm.spatial[level].update(factors)
            lm.spatial_perm[level] = perm or lm.spatial_perm[level]
    for d in dims:
        total = prod(f.get(d, 1) for f in lm.temporal + lm.spatial + [c[0] for c in lm.container_spatial.values()])
        if total != prob.extents[d]:
            raise InputError(f"mapping: the factors of {d} multiply to {total}, not its extent {prob.extents[d]}",
                             source=source)
    return lm


def _ordered(factors: dict[str, int], perm: list[str], dims: Sequence[str]) -> list[str]:
    """Dimensions innermost first: the permutation, then the rest in the problem's order."""
    return perm + [d for d in dims if d not in perm]


@dataclass(frozen=True)
class _Plan:
    """Which Timeloop levels are which accelsim levels: ``pe_first`` is the first level inside
    the PE (``len(levels)``: none)."""

    num_pes: int
    macs_per_pe: int
    pe_first: int


def _plan(arch: TimeloopArch) -> _Plan:
    n = len(arch.levels)
    num_pes = arch.levels[-1].instances
    pe_first = next((i for i in range(1, n) if arch.levels[i].instances == num_pes and (num_pes > 1 or i >= 2)), n)
    return _Plan(num_pes, arch.macs // num_pes, pe_first)


def _entries(lm: _LevelMap, arch: TimeloopArch, prob: TimeloopProblem, plan: _Plan,
             source: str) -> list[NestEntry]:
    dims = list(prob.extents)
    ours = [d for d in prob.layer.loop_nest().dims]

    def entry(target: str, kind: str, tl: dict[str, int], perm: list[str], fanout: int | None = None) -> NestEntry:
        factors = {d: 1 for d in ours}
        order = []
        for d in _ordered(tl, perm, dims):
            a = prob.rename.get(d)
            if a is None:
                continue
            factors[a] *= tl.get(d, 1)
            if a not in order:
                order.append(a)
        return NestEntry(target, kind, factors, tuple(order) + tuple(d for d in ours if d not in order),  # type: ignore[arg-type]
                         fanout)

    out = [entry("DRAM", "temporal", lm.temporal[0], lm.temporal_perm[0])]
    n = len(arch.levels)
    top = True
    pending: set[str] = set()  # dimensions of the temporal loops of the cluster level being built

    def close_level() -> None:
        """End the cluster level here with one sub-unit (a level of loops only): a dimension
        looped twice in one level, or a fold over part of a fanout, has no directive form."""
        nonlocal top
        out.append(entry("L2", "spatial", {}, [], None if top else 1))
        top = False
        pending.clear()

    for i in range(0, min(plan.pe_first, n)):
        if i > 0:
            looped = entry("L2", "temporal", lm.temporal[i], lm.temporal_perm[i])
            dims_here = {d for d, f in looped.factors.items() if f > 1}
            if dims_here & pending:
                close_level()
            out.append(looped)
            pending |= dims_here
        if i == n - 1:
            break  # the fanout onto the MACs belongs to the PE's tile
        groups = _fanouts(lm, arch, i, dims, source)
        if not groups:
            continue
        for fan, spread in groups:
            if not spread:
                out.append(entry("L2", "spatial", {}, [], None if top else fan))
                top = False
                pending.clear()
            inner = prod(g for _, g in spread[1:])
            if spread and fan % inner:
                raise InputError(f"mapping: spatial factors at {arch.levels[i].name} over {len(spread)} dimensions "
                                 f"do not divide its fanout {fan}; accelsim nests them as cluster levels",
                                 source=source)
            for k, (d, f) in enumerate(spread):
                if k == 0 and prob.rename.get(d) in pending and f < fan // inner:
                    close_level()  # the temporal loop over d stays a loop, not a fold over part of the fanout
                fanout = (None if top else fan // inner) if k == 0 else f
                out.append(entry("L2", "spatial", {d: f}, [d], fanout))
            top = False
            pending.clear()
    pe: dict[str, int] = {}
    inside = [f for i in range(plan.pe_first, n) for f in (lm.temporal[i], lm.spatial[i])]
    inside += [lm.spatial[n - 1]] if plan.pe_first >= n else []  # the last level's fanout onto a PE's MACs
    inside += [lm.container_spatial.get(name, ({}, []))[0] for name, c in arch.containers.items()
               if c.above >= min(plan.pe_first, n - 1)]
    for factors in inside:
        for d, v in factors.items():
            pe[d] = pe.get(d, 1) * v
    out.append(entry("L1", "temporal", pe, []))
    return out


def _fanouts(lm: _LevelMap, arch: TimeloopArch, i: int, dims: Sequence[str],
             source: str) -> list[tuple[int, list[tuple[str, int]]]]:
    """The fanouts below storage level ``i``, outermost first, each with its spatial loops
    (dimension, factor) outermost first: one per container there, and the rest of the fanout
    for an entry naming the storage level itself."""
    fan = arch.fanout(i)
    groups: list[tuple[int, dict[str, int], list[str], str]] = []
    rest = fan
    for name, c in arch.containers.items():
        if c.above == i and name in lm.container_spatial:
            factors, perm = lm.container_spatial[name]
            groups.append((c.fanout, factors, perm, name))
            rest //= c.fanout
    if rest > 1 or lm.spatial[i]:
        groups.append((rest, lm.spatial[i], lm.spatial_perm[i], arch.levels[i].name))
    out = []
    for fanout, factors, perm, name in groups:
        spread = [(d, factors[d]) for d in reversed(_ordered(factors, perm, dims)) if factors.get(d, 1) > 1]
        used = prod(f for _, f in spread)
        if used > fanout:
            raise InputError(f"mapping: spatial factors at {name} need {used} instances; its fanout is {fanout}",
                             source=source)
        if len(spread) > 1 and fanout % prod(f for _, f in spread[1:]):
            # the outermost nested level takes the rest of the fanout, the others their factor:
            # put outermost a dimension whose companions' factors divide the fanout
            fits = [k for k in range(len(spread)) if fanout % (used // spread[k][1]) == 0]
            if fits:
                spread = [spread[fits[0]]] + spread[:fits[0]] + spread[fits[0] + 1:]
        if fanout > 1:
            out.append((fanout, spread))
    return out


def _l2_bypass(lm: _LevelMap, prob: TimeloopProblem, plan: _Plan) -> frozenset[str]:
    """The operands the level that becomes L2 (Timeloop's level 1, when the PEs are below it)
    bypasses, where accelsim models it: operands only, with outputs kept (else none)."""
    if plan.pe_first <= 1 or len(lm.kept) < 2:
        return frozenset()
    bypassed = frozenset(("input", "weight", "output")) - set(_keeps(lm, 1, prob))
    return bypassed if "output" not in bypassed else frozenset()


def _bypass_note(lm: _LevelMap, arch: TimeloopArch, prob: TimeloopProblem, plan: _Plan) -> str | None:
    """What accelsim does not model of the mapping's bypass entries (None: nothing): every
    bypass but operands bypassing the level that becomes L2 (``l2.keeps``)."""
    names = set(prob.tensors.values())
    skipped = []
    for i in range(min(plan.pe_first, len(arch.levels))):
        kept = lm.kept[i]
        if i == 1 and _l2_bypass(lm, prob, plan):
            continue
        if kept is not None and names - kept:
            skipped.append(f"{arch.levels[i].name} bypasses {', '.join(sorted(names - kept))}")
    inside = [lm.kept[i] for i in range(plan.pe_first, len(arch.levels))]
    if inside and all(k is not None for k in inside):
        union = set().union(*[k for k in inside if k is not None])
        if names - union:
            skipped.append(f"no level inside the PE keeps {', '.join(sorted(names - union))}")
    if not skipped:
        return None
    return ("; ".join(skipped) + ": accelsim keeps these tensors at L1 and at the buffers between L2 and the "
            "PEs (and outputs at L2), so the counts of the bypassed tensors at those levels differ from Timeloop's")


@dataclass(frozen=True)
class _RegisterFile:
    """A Timeloop level inside the PE that accelsim models as a register file: its index, the
    tensors it keeps and its size (bytes of accelsim's words)."""

    index: int
    keeps: tuple[str, ...]
    size_bytes: int


def _word_bytes(arch: TimeloopArch) -> int:
    """accelsim's word: the MAC's operand width, in whole bytes."""
    return max(1, ceil(arch.mac_word_bits / 8))


def _register_files(arch: TimeloopArch, plan: _Plan, lm: _LevelMap, prob: TimeloopProblem) -> list[int]:
    """The Timeloop levels inside the PE that become accelsim register files (inner levels),
    innermost first: every per-PE level below the outermost one (which is L1), when the
    architecture has several, each has a size and keeps one of the problem's tensors, their
    names are free, and no spatial loop runs inside the PE (a register file feeds one MAC).
    Otherwise none: the PE's levels are summed into L1."""
    n = len(arch.levels)
    inside = list(range(n - 1, plan.pe_first, -1))
    names = [arch.levels[i].name.lower() for i in inside]
    if (not inside or _macs_used(lm, arch, plan) > 1 or len(set(names)) < len(names)
            or any(name in RESERVED_LEVEL_NAMES for name in names)):
        return []
    if any(arch.levels[i].size_bytes is None or not _keeps(lm, i, prob) for i in inside):
        return []
    return inside


def _pins(arch: TimeloopArch, lm: _LevelMap, prob: TimeloopProblem, plan: _Plan, files: list[int]) -> InnerPins:
    """The mapping's temporal loops at L1 (the outermost level inside the PE) and at each
    register file, in accelsim's dimensions, outermost first."""
    dims = list(prob.extents)

    def loops(i: int) -> tuple[PinnedLoop, ...]:
        order = reversed(_ordered(lm.temporal[i], lm.temporal_perm[i], dims))
        return tuple(PinnedLoop(a, lm.temporal[i][d]) for d in order
                     if lm.temporal[i].get(d, 1) > 1 and (a := prob.rename.get(d)) is not None)

    return InnerPins(loops(plan.pe_first), tuple(PinnedLevel(arch.levels[i].name, loops(i)) for i in files))


def _ample(arch: TimeloopArch, plan: _Plan) -> float:
    """Words per cycle for a level whose bandwidth the architecture leaves out: Timeloop does
    not limit it, so high enough that a transfer takes at most a cycle or so."""
    return float(UNLIMITED_WORDS_PER_CYCLE)


def _hardware_data(arch: TimeloopArch, plan: _Plan, l1_bytes: int, l2_bytes: int,
                   files: Sequence[_RegisterFile] = (), l2_bypass: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The spec's data; ``files``: the Timeloop levels that become register files inside the
    PE, innermost first; ``l2_bypass``: the operands L2 does not keep."""
    word_bytes = _word_bytes(arch)
    ample = _ample(arch, plan)
    n = len(arch.levels)
    l2 = arch.levels[1] if plan.pe_first > 1 else None
    dram = arch.levels[0]
    data: dict[str, Any] = {
        "name": arch.name, "source": "Timeloop architecture", "word_size_bytes": word_bytes,
        "pe_array": {"count": plan.num_pes, "macs_per_pe_per_cycle": plan.macs_per_pe},
        "l1": {"size_bytes": l1_bytes, "double_buffered": True},
        "l2": {"size_bytes": l2_bytes, "double_buffered": True,
               "read_bandwidth_words_per_cycle": (l2.read_bandwidth if l2 and l2.read_bandwidth else ample),
               "write_bandwidth_words_per_cycle": (l2.write_bandwidth if l2 and l2.write_bandwidth else ample),
               **({"keeps": [t for t in ("input", "weight", "output") if t not in l2_bypass]} if l2_bypass else {})},
        "distribution_noc": {"kind": "bus", "multicast": True, "bandwidth_words_per_cycle": ample,
                             "latency_cycles": 0},
        "reduction_noc": {"kind": "tree", "bandwidth_words_per_cycle": ample, "latency_cycles_per_hop": 0},
        "dram": {"model": "simple", "latency_cycles": 0, "burst_bytes": word_bytes,
                 "bandwidth_bytes_per_cycle": (dram.read_bandwidth or ample) * word_bytes if n > 0 else ample},
    }
    if arch.clock_mhz:
        data["clock_mhz"] = arch.clock_mhz
    if files:
        data["inner_levels"] = [{"name": arch.levels[f.index].name, "instances": "per_pe", "kind": "buffer",
                                 "size_bytes": f.size_bytes, "double_buffered": False, "keeps": list(f.keeps)}
                                for f in files]
    return data


@dataclass(frozen=True)
class TimeloopJob:
    """The hardware spec, the network name and the one job the files describe; ``levels``:
    Timeloop's storage levels as data, innermost first, and ``roles``: which accelsim level
    each one became (``L1``, ``L2``, ``DRAM``, or ``cluster``: a buffer between L2 and the PEs
    whose loops accelsim runs from L2)."""

    hw: HardwareSpec
    name: str
    jobs: list[Job]
    levels: tuple[StorageLevelSpec, ...] = ()
    roles: dict[str, str] = field(default_factory=dict)
    tensors: dict[str, str] = field(default_factory=dict)  # input/weight/output -> Timeloop's data space


def _keeps(lm: _LevelMap, i: int, prob: TimeloopProblem) -> tuple[str, ...]:
    """The accelsim tensors Timeloop level ``i`` keeps (its ``keep``; every tensor without one)."""
    kept = lm.kept[i]
    return tuple(t for t in ("input", "weight", "output") if kept is None or prob.tensors[t] in kept)


def _as_data(arch: TimeloopArch, plan: _Plan, lm: _LevelMap, prob: TimeloopProblem, files: Sequence[int] = ()) -> tuple[
        tuple[StorageLevelSpec, ...], dict[str, str], dict[str, str]]:
    """Timeloop's levels as :class:`StorageLevelSpec` (innermost first) and their accelsim roles
    (``files``: the levels that became register files inside the PE)."""
    levels, roles = [], {}
    n = len(arch.levels)
    for i in range(n - 1, -1, -1):
        lv = arch.levels[i]
        keeps = _keeps(lm, i, prob)
        where: Literal["per_pe", "per_cluster", "shared"] = (
            "per_pe" if i >= plan.pe_first else "shared" if lv.instances == 1 else "per_cluster")
        levels.append(StorageLevelSpec(
            name=lv.name, instances=where, kind="dram" if i == 0 else "buffer", size_bytes=lv.size_bytes,
            read_bandwidth_words_per_cycle=lv.read_bandwidth, write_bandwidth_words_per_cycle=lv.write_bandwidth,
            double_buffered=False, keeps=keeps))  # type: ignore[arg-type]
        roles[lv.name] = ("DRAM" if i == 0 else "register file" if i in files else "L1" if i >= plan.pe_first
                          else "L2" if i == 1 else "cluster")
    return tuple(levels), roles, dict(prob.tensors)


def load_timeloop(paths: Sequence[str], overrides: Sequence[str] = (), hw_ref: str | None = None) -> TimeloopJob:
    """Read Timeloop's files (``--timeloop``, each path once) as one job; the hardware is the
    architecture's model (``--set`` applies to it) unless ``hw_ref`` names one (whose register
    files, when the architecture's levels inside the PE name them innermost first, take the
    mapping's loops at those levels as ``Job.inner_pins``)."""
    return timeloop_job(read_files(paths), overrides, hw_ref)


def timeloop_job(texts: Sequence[tuple[str, str]], overrides: Sequence[str] = (),
                 hw_ref: str | HardwareSpec | None = None, mapping_used: bool | None = True) -> TimeloopJob:
    """:func:`load_timeloop` of documents given as (text, source); ``hw_ref`` may be a spec.
    ``mapping_used=False`` (search): the layer and the hardware only; a mapping, if given, is
    not read, and the jobs carry the problem's layer with an empty dataflow; None: the mapping
    when the files give one."""
    merged = merge_texts(texts)
    if mapping_used is None:
        mapping_used = bool(merged.data.get("mapping"))
    source = ", ".join(dict.fromkeys(merged.origin.values()))
    if "sparse_optimizations" in merged.data:
        warnings.warn(f"{merged.origin['sparse_optimizations']}: sparse_optimizations are not modelled (no "
                      "skipping or gating: every MAC and every word is counted)", InputWarning, stacklevel=2)
    key, arch_spec = merged.need("architecture", "arch")
    arch = read_architecture(arch_spec, merged.origin[key], flat=key == "arch")
    _, problem = merged.need("problem")
    prob = read_problem(problem, merged.origin["problem"])
    plan = _plan(arch)
    name = Path(texts[0][1]).stem if texts else "timeloop"
    if not mapping_used:
        n = len(arch.levels)
        lm = _LevelMap([{}] * n, [[]] * n, [{}] * n, [[]] * n, [None] * n, {})
        job = Job(prob.layer, (), source)
        hw = hw_ref if isinstance(hw_ref, HardwareSpec) else (
            load_hardware(hw_ref, list(overrides)) if hw_ref is not None else _hardware(arch, plan, None, overrides,
                                                                                       source))
        return TimeloopJob(hw, name, [job], *_as_data(arch, plan, lm, prob))
    _, mapping = merged.need("mapping")
    msource = merged.origin["mapping"]
    lm = _read_mapping(mapping, arch, prob, msource)
    note = _bypass_note(lm, arch, prob, plan)
    if note is not None:
        warnings.warn(f"{msource}: {note}", InputWarning, stacklevel=2)
    nl = NestLayer(prob.layer, tuple(_entries(lm, arch, prob, plan, msource)), msource)
    job = Job(prob.layer, tuple(loopnest_dataflow(nl, plan.num_pes)), msource)
    if hw_ref is not None:
        ref = hw_ref if isinstance(hw_ref, HardwareSpec) else load_hardware(hw_ref, list(overrides))
        files = _register_files(arch, plan, lm, prob)
        if ref.inner_levels and [arch.levels[i].name for i in files] == [lv.name for lv in ref.inner_levels]:
            # the files' levels inside the PE are the given hardware's register files: their loops pin them
            job = replace(job, inner_pins=_pins(arch, lm, prob, plan, files))
        else:
            files = []
        return TimeloopJob(ref, name, [job], *_as_data(arch, plan, lm, prob, files))
    used = replace(plan, macs_per_pe=min(plan.macs_per_pe, _macs_used(lm, arch, plan)))
    files = _register_files(arch, plan, lm, prob)
    if files:
        job = replace(job, inner_pins=_pins(arch, lm, prob, plan, files))
    # a register file holds as many of accelsim's words as it has words of its own
    rfs = [_RegisterFile(i, _keeps(lm, i, prob), (arch.levels[i].size_bytes or 0) * 8 // arch.levels[i].word_bits
                         * _word_bytes(arch)) for i in files]
    hw = _hardware(arch, used, job, overrides, source, rfs, _l2_bypass(lm, prob, plan))
    return TimeloopJob(hw, name, [job], *_as_data(arch, plan, lm, prob, files))


def _macs_used(lm: _LevelMap, arch: TimeloopArch, plan: _Plan) -> int:
    """The MACs of a PE the mapping's spatial loops onto them use (Timeloop's cycles count the
    used ones: a PE computing at all its MACs would be faster than Timeloop says)."""
    n = len(arch.levels)
    spread = [lm.spatial[i] for i in range(min(plan.pe_first, n - 1), n)]
    spread += [lm.container_spatial.get(name, ({}, []))[0] for name, c in arch.containers.items()
               if c.above >= min(plan.pe_first, n - 1)]
    return max(1, prod(f for factors in spread for f in factors.values()))


def _grown_register_files(arch: TimeloopArch, plan: _Plan, cm: CompiledMapping,
                          files: Sequence[_RegisterFile]) -> tuple[list[_RegisterFile], list[str]]:
    """``files`` each at least as large as its pinned tile of ``cm``, and what grew."""
    probe = HardwareSpec.model_validate(_hardware_data(arch, plan, UNBOUNDED_BYTES, UNBOUNDED_BYTES,
                                                       [replace(f, size_bytes=UNBOUNDED_BYTES) for f in files]))
    out, grown = [], []
    for f, tile in zip(files, inner_tiling(cm, probe).levels):
        need = tile.tile_words * _word_bytes(arch)
        if need > f.size_bytes:
            grown.append(f"{tile.name} from {f.size_bytes} to {need} bytes")
        out.append(replace(f, size_bytes=max(f.size_bytes, need)))
    return out, grown


def _hardware(arch: TimeloopArch, plan: _Plan, job: Job | None, overrides: Sequence[str], source: str,
              files: Sequence[_RegisterFile] = (), l2_bypass: frozenset[str] = frozenset()) -> HardwareSpec:
    """The architecture's spec with L1 and L2 double-buffered (Timeloop overlaps every transfer
    with compute), L1 at least as large as both halves of a PE's tile and L2 exactly as large as
    both halves of the mapping's L2 tile; a warning when the architecture's own size does not
    hold one half (a level that bypasses a tensor). Without a job (search), the architecture's
    sizes (a level it lacks: unbounded, 2^30 bytes). ``files``: the levels inside the PE that
    are register files, innermost first, each grown (with the same warning) to its pinned tile
    where that is larger (accelsim's dense tile of a strided window, or a word wider than the
    level's own); L1 is then the outermost level inside the PE alone, else the sum of them all.
    ``l2_bypass``: the operands the level that becomes L2 bypasses (``l2.keeps``; they take no
    L2 space)."""
    word_bytes = _word_bytes(arch)
    n = len(arch.levels)
    inside = [lv.size_bytes for lv in arch.levels[plan.pe_first:plan.pe_first + 1 if files else n]]
    l1_arch = sum(s for s in inside if s is not None) if inside and None not in inside else None
    l2_arch = arch.levels[1].size_bytes if plan.pe_first > 1 and n > 1 else None
    if job is None:
        data = _hardware_data(arch, plan, l1_arch or UNBOUNDED_BYTES, l2_arch or UNBOUNDED_BYTES)
    else:
        cm = compile_mapping(job.layer, job.dataflow, plan.num_pes, source=job.source)
        need_l1, need_l2 = buffer_needs_bytes(cm, word_bytes, False, False, l2_bypass)
        room_l1, room_l2 = buffer_needs_bytes(cm, word_bytes, True, True, l2_bypass)
        grown: list[str] = []
        if files:
            files, grown = _grown_register_files(arch, plan, replace(cm, inner_pins=job.inner_pins), files)
        for what, have, need in (("L1" if files else "L1 (the PE's levels)", l1_arch, need_l1), ("L2", l2_arch, need_l2)):
            if have is not None and have < need:
                grown.append(f"{what} from {have} to {need} bytes")
        if grown:
            warnings.warn(f"{source}: accelsim holds every tensor of a tile at L2 and L1; sized "
                          + ", ".join(grown) + " to hold the mapping's tiles", InputWarning, stacklevel=3)
        # L2 holds exactly the mapping's tile: accelsim's L2 keeps as many further DRAM iterations
        # as fit, which Timeloop's global buffer does not (its DRAM loops are the mapping's)
        data = _hardware_data(arch, plan, max(l1_arch or 0, room_l1, 1), max(room_l2, 1), files, l2_bypass)
    set_paths = apply_overrides(data, list(overrides), source=source)
    try:
        return HardwareSpec.model_validate(data)
    except ValidationError as err:
        shown = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        raise InputError(f"the architecture's hardware spec is invalid: {shown}"
                         + (" (check your --set values)" if set_paths else ""), source=source) from None
