"""Loading hardware descriptions: bundled presets, YAML files and MAESTRO hardware files.

``load_hardware(ref, overrides)`` accepts

* the name of a bundled preset (``available_presets()``; the YAML files live in
  ``accelsim/hwconfigs/`` and are shipped as package data, ``hwconfigs/`` at the top of the
  repository links to them);
* a path to a YAML file with every :class:`~accelsim.hw.spec.HardwareSpec` field;
* a path to a MAESTRO hardware file (``.m``, or any file whose first meaningful line starts
  with a MAESTRO key such as ``num_pes: 256``), see :func:`parse_maestro_hw`.

``overrides`` are ``--set`` items such as ``l2.size_bytes=65536`` applied to the mapping
before validation. Every problem is raised as :class:`~accelsim.errors.InputError` whose
message names the file (or ``hwconfigs/<preset>.yaml``) and the field; never a traceback.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Optional, Union, get_args

import yaml
from pydantic import BaseModel, ValidationError

from accelsim.errors import InputError
from accelsim.input_files import load_yaml, read_text, shown, yaml_type_name
from accelsim.hw.spec import TENSORS, HardwareSpec, StorageLevelSpec

__all__ = [
    "available_presets",
    "load_hardware",
    "dump_hardware",
    "parse_maestro_hw",
    "apply_overrides",
]

_PRESET_PACKAGE = "accelsim"
_PRESET_DIR = "hwconfigs"


# --------------------------------------------------------------------------------------------
# presets


def _preset_dir():
    return resources.files(_PRESET_PACKAGE) / _PRESET_DIR


def available_presets() -> list[str]:
    """Names of the bundled hardware presets, sorted."""
    return sorted(
        entry.name[: -len(".yaml")]
        for entry in _preset_dir().iterdir()
        if entry.name.endswith(".yaml") and entry.is_file()
    )


# --------------------------------------------------------------------------------------------
# public entry points


def load_hardware(
    ref: Union[str, os.PathLike], overrides: Iterable[str] = ()
) -> HardwareSpec:
    """Load a hardware spec from a preset name, a YAML file or a MAESTRO hardware file,
    apply ``--set key=value`` overrides and validate it.

    Raises :class:`InputError` (message names the file or preset and the field) on any
    problem: unknown preset, missing file, YAML syntax error (with its line), unknown or
    missing fields, out-of-range values, malformed overrides.
    """
    if isinstance(overrides, str):
        overrides = [overrides]
    overrides = list(overrides)
    text, source, is_maestro = _read_ref(ref)
    lines: dict[tuple[str, ...], int] = {}
    if is_maestro:
        data = parse_maestro_hw(text, source=source, name=_stem(ref))
    else:
        data, lines = _parse_yaml(text, source)
    return hardware_from_data(data, source=source, overrides=overrides, lines=lines)


def hardware_from_data(
    data: dict,
    *,
    source: str,
    overrides: Iterable[str] = (),
    lines: dict[tuple[str, ...], int] | None = None,
) -> HardwareSpec:
    """A validated hardware spec from an already parsed mapping (a YAML document's contents, or
    a hardware table written inline in another file): expands ``levels``, applies ``--set``
    overrides and validates, with the same messages as :func:`load_hardware`. ``lines`` maps
    field paths to their line in ``source`` where known. Raises :class:`InputError`."""
    lines = lines or {}
    data = dict(data)
    if "levels" in data:
        data = expand_levels(data, source, lines.get(("levels",)))
    set_paths = apply_overrides(data, overrides, source=source)
    try:
        return HardwareSpec.model_validate(data)
    except ValidationError as err:
        raise InputError(_format_validation_error(err, set_paths, lines), source=source) from None


def expand_levels(data: dict, source: str, line: int | None = None) -> dict:
    """A hardware mapping whose memory hierarchy is given as ``levels`` (innermost first) with
    ``inner_levels``, ``l1``, ``l2`` and the DRAM bandwidth filled in from it: the list must be
    per-PE buffers (the last is L1, the ones before it the register files inside the PE,
    which may bypass tensors), one shared buffer (which may bypass input and weight) and DRAM,
    L1 and DRAM keeping every tensor (anything else is an InputError saying what is not modelled)."""
    raw = data["levels"]
    if not isinstance(raw, list):
        raise InputError("field 'levels': expected a list of storage levels, innermost first", source=source,
                         line=line)
    try:
        levels = [StorageLevelSpec.model_validate(item) for item in raw]
    except ValidationError as err:
        shown = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'level'}: {e['msg']}" for e in err.errors())
        raise InputError(f"field 'levels': {shown}", source=source, line=line) from None
    shape = [(lv.instances, lv.kind) for lv in levels]
    inner_count = len(levels) - 3
    if inner_count < 0 or shape != [("per_pe", "buffer")] * (inner_count + 1) + [("shared", "buffer"),
                                                                               ("shared", "dram")]:
        raise InputError("field 'levels': the models run per-PE buffers (register files, then L1), one shared "
                         f"buffer and DRAM, innermost first; this list has {len(levels)} ("
                         + ", ".join(f"{lv.name}: {lv.instances} {lv.kind}" for lv in levels)
                         + "); per-cluster levels and more than one shared buffer are not modelled yet",
                         source=source, line=line)
    inner, (l1, l2, dram) = levels[:inner_count], levels[inner_count:]
    for lv in (l1, dram):
        if set(lv.keeps) != set(TENSORS):
            raise InputError(f"field 'levels': {lv.name} keeps only {', '.join(lv.keeps)}; "
                             "bypass is modelled at the register files inside a PE and at the shared buffer (L2) "
                             "only (every tensor passes through L1 and DRAM)", source=source, line=line)
    if "output" not in l2.keeps:
        raise InputError(f"field 'levels': {l2.name} keeps only {', '.join(l2.keeps) or 'nothing'}; outputs "
                         "bypassing the shared buffer are not modelled yet (only input and weight may bypass it)",
                         source=source, line=line)
    for lv in inner:
        if lv.size_bytes is None:
            raise InputError(f"field 'levels': {lv.name} needs size_bytes", source=source, line=line)
        if not lv.keeps:
            raise InputError(f"field 'levels': {lv.name} keeps no tensor", source=source, line=line)
        if lv.read_bandwidth_words_per_cycle is not None or lv.write_bandwidth_words_per_cycle is not None:
            raise InputError(f"field 'levels': {lv.name}: the bandwidth of a register file inside the PE is not "
                             "modelled (it is taken as not limiting); remove its bandwidth fields", source=source,
                             line=line)
    for lv in (*inner, l1, dram):
        if lv.prefetch is not None:
            raise InputError(f"field 'levels': {lv.name}: prefetch applies to the shared buffer (L2) only",
                             source=source, line=line)
    for lv in (*inner, l2, dram):
        if set(lv.reused_operands) != {"input", "weight"}:
            raise InputError(f"field 'levels': {lv.name}: reused_operands applies to L1 (the last per-PE level) only",
                             source=source, line=line)
    given = sorted(k for k in ("l1", "l2", "inner_levels") if k in data)
    if given:
        raise InputError(f"give the hierarchy once: 'levels' or {' and '.join(given)}, not both", source=source,
                         line=line)
    for lv in (l1, l2):
        if lv.size_bytes is None:
            raise InputError(f"field 'levels': {lv.name} needs size_bytes", source=source, line=line)
    if l2.read_bandwidth_words_per_cycle is None or l2.write_bandwidth_words_per_cycle is None:
        raise InputError(f"field 'levels': {l2.name} needs read_bandwidth_words_per_cycle and "
                         "write_bandwidth_words_per_cycle", source=source, line=line)
    out = {k: v for k, v in data.items() if k != "levels"}
    if inner:
        out["inner_levels"] = [lv.model_dump(mode="json", exclude_none=True) for lv in inner]
    out["l1"] = {"size_bytes": l1.size_bytes, "double_buffered": l1.double_buffered,
                 "reused_operands": list(l1.reused_operands)}
    out["l2"] = {"size_bytes": l2.size_bytes, "double_buffered": l2.double_buffered,
                 "read_bandwidth_words_per_cycle": l2.read_bandwidth_words_per_cycle,
                 "write_bandwidth_words_per_cycle": l2.write_bandwidth_words_per_cycle,
                 **({"prefetch": l2.prefetch} if l2.prefetch is not None else {}),
                 **({"keeps": list(l2.keeps)} if set(l2.keeps) != set(TENSORS) else {})}
    dram_section = dict(data.get("dram") or {})
    if dram.read_bandwidth_words_per_cycle is not None:
        if "bandwidth_bytes_per_cycle" in dram_section:
            raise InputError("give DRAM's bandwidth once: in 'levels' or in 'dram', not both", source=source,
                             line=line)
        word = data.get("word_size_bytes", 1)
        word = word if isinstance(word, int) and not isinstance(word, bool) else 1
        dram_section["bandwidth_bytes_per_cycle"] = dram.read_bandwidth_words_per_cycle * word
    out["dram"] = dram_section
    energy = dict(data.get("energy") or {})
    for lv, key in ((l1, "l1_access_pj"), (l2, "l2_access_pj"), (dram, "dram_access_pj")):
        if lv.access_energy_pj is not None:
            energy[key] = lv.access_energy_pj
    if energy:
        out["energy"] = energy
    return out


def dump_hardware(spec: HardwareSpec) -> str:
    """YAML text of ``spec`` (every field, in schema order); ``load_hardware`` reads it back
    to an equal spec."""
    return yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, default_flow_style=False)


# --------------------------------------------------------------------------------------------
# locating and reading the input


def _stem(ref: Union[str, os.PathLike]) -> str:
    return Path(os.fspath(ref)).stem


def _read_ref(ref: Union[str, os.PathLike]) -> tuple[str, str, bool]:
    """Returns (text, source label for messages, is_maestro)."""
    if not isinstance(ref, (str, os.PathLike)):
        raise InputError(f"hardware must be a preset name or a file path, got {ref!r}")
    ref_str = os.fspath(ref)
    if not ref_str.strip():
        raise InputError(_unknown_preset_message(ref_str))
    path = Path(ref_str)
    if path.exists():
        text = read_text(path, "hardware file")
        return text, ref_str, _looks_like_maestro(path.suffix, text)
    if isinstance(ref, str) and ref in available_presets():
        text = (_preset_dir() / f"{ref}.yaml").read_text(encoding="utf-8")
        return text, f"{_PRESET_DIR}/{ref}.yaml", False
    looks_like_path = (
        "/" in ref_str or os.sep in ref_str or path.suffix.lower() in (".yaml", ".yml", ".m")
    )
    if looks_like_path:
        raise InputError("file not found", source=ref_str)
    raise InputError(_unknown_preset_message(ref_str))


def _unknown_preset_message(ref: str) -> str:
    return (
        f"unknown hardware preset '{ref}' (and no such file); available presets: "
        f"{', '.join(available_presets())}; or give the path of a YAML or MAESTRO (.m) "
        "hardware file"
    )


def _parse_yaml(text: str, source: str) -> tuple[dict, dict[tuple[str, ...], int]]:
    """The hardware mapping of a YAML file and the line of every key, by dotted path."""
    doc = load_yaml(text, source)
    data = doc.data
    if data is None:
        raise InputError(
            "the file is empty; expected a mapping of hardware fields "
            f"({', '.join(HardwareSpec.model_fields)})",
            source=source,
        )
    if not isinstance(data, dict):
        raise InputError(
            f"expected a mapping of hardware fields ({', '.join(HardwareSpec.model_fields)}), "
            f"got a {yaml_type_name(data)}",
            source=source,
        )
    lines = {tuple(str(p) for p in path): line for path, line in doc.lines.items() if path}
    return data, lines


# --------------------------------------------------------------------------------------------
# MAESTRO hardware files

# Keys MAESTRO's hardware parser (cost-model/include/dataflow-specification-language/
# DFSL_hw-parser.hpp, tokens in DFSL_syntax_tokens.hpp) accepts, and the older spelling used by
# the first data/hw/accelerator_*.m files.
_MAESTRO_KEYS = {
    "num_pes": "num_pes",
    "l1_size_cstr": "l1_size_cstr",
    "l2_size_cstr": "l2_size_cstr",
    "noc_bw_cstr": "noc_bw_cstr",
    "NoC_NumHops": "noc_hops",
    "offchip_bw_cstr": "offchip_bw_cstr",
    # older files
    "NumPEs": "num_pes",
    "L1Size": "l1_size_cstr",
    "L2Size": "l2_size_cstr",
    "NoC_BW": "noc_bw_cstr",
}
_MAESTRO_REQUIRED = ("num_pes", "l1_size_cstr", "l2_size_cstr", "noc_bw_cstr", "offchip_bw_cstr")
_MAESTRO_INTEGER = {"num_pes", "l1_size_cstr", "l2_size_cstr", "noc_hops"}
_MAESTRO_SPLIT = re.compile(r"[\s,:;()]+")


def _maestro_tokens(line: str) -> list[str]:
    line = line.split("//", 1)[0].replace("->", " ")
    return [tok for tok in _MAESTRO_SPLIT.split(line) if tok]


def _looks_like_maestro(suffix: str, text: str) -> bool:
    suffix = suffix.lower()
    if suffix == ".m":
        return True
    if suffix in (".yaml", ".yml"):
        return False
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("//"):
            continue
        tokens = _maestro_tokens(stripped)
        return bool(tokens) and tokens[0] in _MAESTRO_KEYS
    return False


def parse_maestro_hw(text: str, *, source: str = "<maestro>", name: str = "maestro_hw") -> dict:
    """Translate a MAESTRO hardware file into a HardwareSpec mapping (not yet validated).

    MAESTRO's format is one ``key: value`` per line (its tokenizer splits on spaces, tabs and
    ``,->():;``; ``//`` starts a comment), e.g.::

        num_pes: 256
        l1_size_cstr: 100
        l2_size_cstr: 3000
        noc_bw_cstr: 1000
        offchip_bw_cstr: 50

    with the optional ``NoC_NumHops: 1``; the older spelling ``NumPEs``, ``L1Size``, ``L2Size``,
    ``NoC_BW`` is accepted too. MAESTRO treats an absent size or bandwidth as unbounded; we
    cannot simulate an unbounded buffer, so ``num_pes``, ``l1_size_cstr``, ``l2_size_cstr``,
    ``noc_bw_cstr`` and ``offchip_bw_cstr`` are required.

    The mapping copies MAESTRO's modelling assumptions:

    * ``pe_array``: ``count = num_pes`` as a 1 x num_pes array (MAESTRO has no 2-D shape),
      1 MAC per PE per cycle (``num_simd_lanes`` 1), MAC latency 1.
    * ``l1.size_bytes = l1_size_cstr`` (per PE), ``l2.size_bytes = l2_size_cstr``; 1-byte words;
      both ideally double-buffered.
    * ``distribution_noc``: bus, multicast on (MAESTRO always multicasts),
      ``bandwidth = noc_bw_cstr`` words/cycle, latency ``NoC_NumHops`` (default 1) x 1 cycle
      per hop.
    * one NoC bandwidth for every level: L2 read and write bandwidth ``= noc_bw_cstr``, the
      reduction network too.
    * ``reduction_noc``: adder tree with 0 cycles per hop (MAESTRO does not charge spatial
      reduction).
    * ``dram``: simple model, ``bandwidth_bytes_per_cycle = offchip_bw_cstr`` (1-byte words),
      no fixed latency, no burst rounding (``burst_bytes`` 1).
    * ``clock_mhz`` 1000 (MAESTRO has no clock) and the default (Interstellar) energies.

    This is what the bundled ``maestro_default`` preset holds for MAESTRO's example file.
    """
    values: dict[str, float] = {}
    seen_line: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        tokens = _maestro_tokens(raw)
        if not tokens:
            continue
        if len(tokens) % 2:
            raise InputError(
                f"expected 'key: value' pairs, got '{raw.strip()}' (key '{tokens[-1]}' has no value)"
                if tokens[-1] in _MAESTRO_KEYS
                else f"expected 'key: value' pairs, got '{raw.strip()}'",
                source=source,
                line=lineno,
            )
        for key_tok, value_tok in zip(tokens[::2], tokens[1::2]):
            key = _MAESTRO_KEYS.get(key_tok)
            if key is None:
                raise InputError(
                    f"unknown MAESTRO hardware key '{key_tok}'; valid keys: "
                    f"{', '.join(_MAESTRO_REQUIRED)}, NoC_NumHops",
                    source=source,
                    line=lineno,
                )
            if key in seen_line:
                raise InputError(
                    f"{key_tok} given twice (first on line {seen_line[key]})",
                    source=source,
                    line=lineno,
                )
            seen_line[key] = lineno
            values[key] = _maestro_number(key_tok, key, value_tok, source, lineno)
    missing = [k for k in _MAESTRO_REQUIRED if k not in values]
    if missing:
        raise InputError(
            f"{', '.join(missing)}: required field missing (a MAESTRO hardware file needs "
            f"{', '.join(_MAESTRO_REQUIRED)})",
            source=source,
        )
    num_pes = int(values["num_pes"])
    noc_bw = values["noc_bw_cstr"]
    hops = int(values.get("noc_hops", 1))
    return {
        "name": name,
        "source": f"MAESTRO hardware file {source}",
        "word_size_bytes": 1,
        "clock_mhz": 1000.0,
        "pe_array": {
            "count": num_pes,
            "rows": 1,
            "cols": num_pes,
            "macs_per_pe_per_cycle": 1,
            "mac_pipeline_latency_cycles": 1,
        },
        "l1": {"size_bytes": int(values["l1_size_cstr"]), "double_buffered": True},
        "l2": {
            "size_bytes": int(values["l2_size_cstr"]),
            "read_bandwidth_words_per_cycle": noc_bw,
            "write_bandwidth_words_per_cycle": noc_bw,
            "double_buffered": True,
        },
        "distribution_noc": {
            "kind": "bus",
            "multicast": True,
            "bandwidth_words_per_cycle": noc_bw,
            "latency_cycles": hops,
        },
        "reduction_noc": {
            "kind": "tree",
            "bandwidth_words_per_cycle": noc_bw,
            "latency_cycles_per_hop": 0,
        },
        "dram": {
            "model": "simple",
            "bandwidth_bytes_per_cycle": values["offchip_bw_cstr"],
            "latency_cycles": 0,
            "burst_bytes": 1,
        },
        "energy": {},
    }


def _maestro_number(key_tok: str, key: str, token: str, source: str, lineno: int):
    try:
        value: float = int(token)
    except ValueError:
        if key in _MAESTRO_INTEGER:
            raise InputError(
                f"{key_tok} expects a whole number, got '{token}'", source=source, line=lineno
            ) from None
        try:
            value = float(token)
        except ValueError:
            raise InputError(
                f"{key_tok} expects a number, got '{token}'", source=source, line=lineno
            ) from None
    if key == "noc_hops":
        if value < 0:
            raise InputError(f"{key_tok} must be >= 0, got {token}", source=source, line=lineno)
    elif not value > 0:
        raise InputError(f"{key_tok} must be > 0, got {token}", source=source, line=lineno)
    return value


# --------------------------------------------------------------------------------------------
# --set overrides


def _submodel(annotation: Any) -> Optional[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _model_at(loc: tuple) -> Optional[type[BaseModel]]:
    model: Optional[type[BaseModel]] = HardwareSpec
    for part in loc:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        model = _submodel(model.model_fields[part].annotation)
    return model


def apply_overrides(data: dict, overrides: Iterable[str], *, source: str = "") -> set[tuple[str, ...]]:
    """Apply ``key.path=value`` items to the mapping ``data`` in place, before validation.

    The value is parsed as YAML (:func:`~accelsim.input_files.load_yaml`) (``false`` -> bool, ``65536`` -> int, ``null``
    -> None). Keys are checked against the HardwareSpec schema, so an optional field the file
    omits can still be set. Setting ``pe_array.rows``/``cols`` drops a ``count`` the overrides
    do not also set (the spec re-derives it); setting only ``pe_array.count`` drops ``rows`` and
    ``cols`` (a 1 x count array). Returns the set paths.
    """
    src = source or None
    set_paths: set[tuple[str, ...]] = set()
    for item in overrides:
        if not isinstance(item, str) or "=" not in item:
            raise InputError(
                f"--set {shown(item)}: expected key=value, e.g. l2.size_bytes=65536", source=src
            )
        key, _, raw = item.partition("=")
        key = key.strip()
        parts = tuple(p.strip() for p in key.split("."))
        if not key or any(not p for p in parts):
            raise InputError(
                f"--set {shown(item)}: expected key=value with a dotted key, e.g. l2.size_bytes=65536",
                source=src,
            )
        try:
            value = load_yaml(raw, "--set").data if raw.strip() else None
        except InputError as exc:
            problem = str(exc).removeprefix("--set:1: ").removeprefix("invalid YAML: ")
            raise InputError(f"--set {item}: value is not valid YAML: {problem}", source=src) from None
        model: type[BaseModel] = HardwareSpec
        node = data
        for i, part in enumerate(parts):
            fields = model.model_fields
            where = ".".join(parts[:i]) or "the top level"
            if part not in fields:
                raise InputError(
                    f"--set {item}: unknown key '{part}' in {where}; valid keys: {', '.join(fields)}",
                    source=src,
                )
            if i == len(parts) - 1:
                node[part] = value
                break
            sub = _submodel(fields[part].annotation)
            if sub is None:
                raise InputError(
                    f"--set {item}: '{'.'.join(parts[: i + 1])}' is a value, not a section; "
                    f"it has no key '{parts[i + 1]}'",
                    source=src,
                )
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise InputError(
                    f"--set {item}: field {'.'.join(parts[: i + 1])} is not a mapping in the file",
                    source=src,
                )
            node, model = child, sub
        set_paths.add(parts)

    pe_set = {p[1] for p in set_paths if len(p) == 2 and p[0] == "pe_array"}
    pe = data.get("pe_array")
    if isinstance(pe, dict):
        if pe_set & {"rows", "cols"} and "count" not in pe_set:
            pe.pop("count", None)
        elif "count" in pe_set and not pe_set & {"rows", "cols"}:
            pe.pop("rows", None)
            pe.pop("cols", None)
    return set_paths


# --------------------------------------------------------------------------------------------
# readable validation errors


def _loc_str(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _format_validation_error(
    err: ValidationError,
    set_paths: set[tuple[str, ...]],
    lines: dict[tuple[str, ...], int],
) -> str:
    problems = []
    for e in err.errors():
        loc = tuple(e.get("loc", ()))
        typ = e.get("type", "")
        notes: list[str] = []
        if typ == "missing":
            msg = "required field missing"
        elif typ == "extra_forbidden" and tuple(map(str, loc)) == ("l2", "banks"):
            msg = "banks are not modelled (the L2 is one memory with a read and a write bandwidth); remove the field"
        elif typ == "extra_forbidden":
            parent = _model_at(loc[:-1])
            msg = "unknown field"
            if parent is not None:
                msg += f"; valid fields here: {', '.join(parent.model_fields)}"
        else:
            msg = str(e.get("msg", "invalid value"))
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, "):]
            value = e.get("input")
            if "got " not in msg and (value is None or isinstance(value, (bool, int, float, str))):
                notes.append(f"got {shown(value)}")
        str_loc = tuple(str(p) for p in loc)
        if any(str_loc[: len(p)] == p for p in set_paths):
            notes.append("from --set")
        elif str_loc in lines:
            notes.append(f"line {lines[str_loc]}")
        if notes:
            msg += f" ({', '.join(notes)})"
        problems.append(f"field {_loc_str(loc)}: {msg}")
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems in the hardware description:\n  " + "\n  ".join(problems)
