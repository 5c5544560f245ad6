"""A system: several sub-accelerators sharing one off-chip channel, read from YAML or a preset.

A system file names its off-chip ``channel`` (bandwidth in GB/s, latency in cycles, burst in
bytes, arbitration ``fifo`` or ``priority``) and its ``sub_accelerators``, each a hardware spec
(a preset name, a file path, or the spec inline), the dataflow ``style`` it runs every job in,
and a ``count`` of copies. All sub-accelerators run on one clock (``clock_mhz``, the same in
every spec). Each sub-accelerator's DRAM is the shared channel: its spec's ``dram`` section is
replaced by the channel's bandwidth (GB/s over the clock, in bytes per cycle), latency and burst
size (model ``simple``), so a system of one sub-accelerator whose channel equals its DRAM
simulates exactly as ``simulate`` does.

Presets ``magma_s1`` ... ``magma_s6`` (``accelsim/system/presets``) are MAGMA's Table 7.2
(Kao's thesis, Ch. 7); each file says which numbers are the paper's and which are ours.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from accelsim.errors import InputError
from accelsim.hw.loader import hardware_from_data, load_hardware
from accelsim.hw.spec import DRAMSpec, HardwareSpec
from accelsim.input_files import YamlDocument, load_yaml, read_text
from accelsim.mapping.styles import STYLES

Arbitration = Literal["fifo", "priority"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChannelSpec(_Strict):
    """The off-chip channel every sub-accelerator's DMA transfers share, one transfer at a time:
    ``fifo`` grants it in request order, ``priority`` to the job earliest in the schedule's
    priority order first."""

    bandwidth_gbps: float = Field(gt=0)
    latency_cycles: int = Field(default=0, ge=0)
    burst_bytes: PositiveInt = 64
    arbitration: Arbitration = "fifo"


class SubAcceleratorSpec(_Strict):
    """``count`` copies of one sub-accelerator: its hardware (preset name, file, or inline spec)
    and the named dataflow style of its jobs."""

    name: str
    hw: str | dict[str, Any]
    style: str
    count: PositiveInt = 1


class SystemSpec(_Strict):
    name: str
    source: str = ""
    notes: str = ""
    channel: ChannelSpec
    sub_accelerators: list[SubAcceleratorSpec] = Field(min_length=1)


@dataclass(frozen=True)
class SubAccelerator:
    """One sub-accelerator of a system: ``name`` (with its copy number), its hardware with the
    channel as DRAM, and its style."""

    index: int
    name: str
    hw: HardwareSpec
    style: str


@dataclass(frozen=True)
class System:
    """A loaded system: its sub-accelerators, channel and clock (MHz)."""

    name: str
    source: str
    channel: ChannelSpec
    clock_mhz: float
    subs: tuple[SubAccelerator, ...]

    @property
    def sha256(self) -> str:
        """SHA-256 of the resolved system (channel, every sub-accelerator's spec and style)."""
        data = {"channel": self.channel.model_dump(mode="json"),
                "subs": [{"name": s.name, "style": s.style, "hw": s.hw.model_dump(mode="json")} for s in self.subs]}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @property
    def bytes_per_cycle(self) -> float:
        """The channel's bandwidth in bytes per cycle of the system's clock."""
        return channel_bytes_per_cycle(self.channel.bandwidth_gbps, self.clock_mhz)


def channel_bytes_per_cycle(bandwidth_gbps: float, clock_mhz: float) -> float:
    """GB/s (10^9 bytes per second) at ``clock_mhz`` in bytes per cycle."""
    return bandwidth_gbps * 1000.0 / clock_mhz


def available_systems() -> list[str]:
    """Names of the bundled system presets, sorted."""
    folder = resources.files("accelsim.system") / "presets"
    return sorted(e.name[:-5] for e in folder.iterdir() if e.name.endswith(".yaml"))


def load_system(ref: str, bandwidth_gbps: float | None = None) -> System:
    """Load a system preset or file; ``bandwidth_gbps`` replaces the channel's bandwidth.
    Every problem is an InputError naming the file, the field and its line."""
    path = Path(ref)
    if path.is_file() or os.sep in ref or ref.endswith((".yaml", ".yml")):
        text, source, base = read_text(path, "system file"), ref, path.parent
    elif ref in available_systems():
        text = (resources.files("accelsim.system") / "presets" / f"{ref}.yaml").read_text(encoding="utf-8")
        source, base = f"accelsim/system/presets/{ref}.yaml", Path(".")
    else:
        raise InputError(f"unknown system preset {ref!r} (and no such file); available: "
                         f"{', '.join(available_systems())}; or give the path of a system YAML file")
    doc = load_yaml(text, source)
    if not isinstance(doc.data, dict):
        raise InputError("a system file must be a mapping with name, channel and sub_accelerators", source=source)
    try:
        spec = SystemSpec.model_validate(doc.data)
    except ValidationError as err:
        raise _validation_error(err, doc, source, ()) from None
    channel = spec.channel
    if bandwidth_gbps is not None:
        if not bandwidth_gbps > 0:
            raise InputError(f"--bandwidth-gbps must be positive, got {bandwidth_gbps}")
        channel = channel.model_copy(update={"bandwidth_gbps": bandwidth_gbps})
    subs: list[SubAccelerator] = []
    clock: float | None = None
    for i, sub in enumerate(spec.sub_accelerators):
        where = ("sub_accelerators", i)
        if sub.style not in STYLES:
            raise InputError(f"sub_accelerators[{i}].style: unknown style {sub.style!r}; expected one of "
                             f"{', '.join(STYLES)}", source=source, line=doc.line(where + ("style",)))
        hw = _hardware(sub.hw, doc, source, base, where + ("hw",))
        if clock is None:
            clock = hw.clock_mhz
        elif hw.clock_mhz != clock:
            raise InputError(f"sub_accelerators[{i}].hw: clock_mhz {hw.clock_mhz} differs from the first "
                             f"sub-accelerator's {clock}; a system runs on one clock",
                             source=source, line=doc.line(where + ("hw",)))
        dram = DRAMSpec(model="simple", bandwidth_bytes_per_cycle=channel_bytes_per_cycle(channel.bandwidth_gbps, clock),
                        latency_cycles=channel.latency_cycles, burst_bytes=channel.burst_bytes)
        hw = hw.model_copy(update={"dram": dram})
        for copy in range(sub.count):
            name = sub.name if sub.count == 1 else f"{sub.name}_{copy}"
            subs.append(SubAccelerator(len(subs), name, hw, sub.style))
    assert clock is not None
    names = [s.name for s in subs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"sub_accelerators: names given twice: {', '.join(twice)}", source=source)
    return System(spec.name, source, channel, clock, tuple(subs))


def _hardware(ref: str | dict[str, Any], doc: YamlDocument, source: str, base: Path,
              where: tuple[str | int, ...]) -> HardwareSpec:
    """A sub-accelerator's hardware: inline, a preset, or a file relative to the system file."""
    if isinstance(ref, dict):
        try:
            return hardware_from_data(ref, source=source)
        except InputError as err:
            raise InputError(f"{'.'.join(map(str, where))}: {err.detail}", source=source,
                             line=doc.line(where)) from None
    candidate = base / ref
    try:
        return load_hardware(str(candidate) if candidate.is_file() else ref)
    except InputError as err:
        raise InputError(f"{'.'.join(map(str, where))}: {err}", source=source, line=doc.line(where)) from None


def _validation_error(err: ValidationError, doc: YamlDocument, source: str, prefix: tuple[str | int, ...]) -> InputError:
    first = err.errors()[0]
    loc = prefix + tuple(first["loc"])
    field = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
    return InputError(f"{field or 'document'}: {first['msg']}", source=source, line=doc.line(loc))
