"""The budget a run may spend on one layer (steps, memory), sizes as users write them, and the
refusal message both timing models give a layer over it.

The estimates themselves belong to each model: :mod:`accelsim.sim.estimate` (the simulator)
and :mod:`accelsim.analytical.estimate` (the closed-form model).
"""

from __future__ import annotations

import os
import resource
from math import ceil
from dataclasses import dataclass
from pathlib import Path

from accelsim.errors import ResourceError

# Default step budgets of one layer: a run the engine may warp over (repeated periods of steps
# executed as one exact jump, so its cost follows distinct iteration cases, not steps), and a run
# that executes every step's events (traces, --per-pe, --functional).
DEFAULT_MAX_STEPS = 1_000_000_000
DEFAULT_MAX_STEPS_UNWARPED = 10_000_000
# A layer estimated to take longer than this is refused unless --max-seconds allows it.
DEFAULT_MAX_LAYER_SECONDS = 3600.0


def machine_memory_bytes() -> int:
    """This machine's physical memory (0 when the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


_NO_LIMIT = 2**60  # cgroup v1 writes "no limit" as a number near 2**63


def _read_limit(path: Path) -> int:
    """A cgroup memory limit file's bytes (0: none, ``max``, unreadable)."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return 0
    return int(text) if text.isdigit() and 0 < int(text) < _NO_LIMIT else 0


def cgroup_memory_bytes(proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")) -> int:
    """The tightest memory limit of this process's cgroup and its ancestors, v2 (``memory.max``)
    or v1 (``memory.limit_in_bytes`` of the memory controller); 0 when there is none."""
    try:
        lines = proc_cgroup.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 0
    limits = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2].strip("/")
        if controllers == "":  # v2: the unified hierarchy
            base, name = root / "unified" if (root / "unified" / "cgroup.controllers").exists() else root, "memory.max"
        elif "memory" in controllers.split(","):
            base, name = root / "memory", "memory.limit_in_bytes"
        else:
            continue
        steps = [p for p in path.split("/") if p]
        for depth in range(len(steps), -1, -1):  # the cgroup, then each ancestor
            limits.append(_read_limit(base.joinpath(*steps[:depth], name)))
    return min((limit for limit in limits if limit), default=0)


def address_space_bytes() -> int:
    """This process's address-space limit (RLIMIT_AS; 0 when unlimited)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError, AttributeError):
        return 0
    return soft if 0 < soft != resource.RLIM_INFINITY else 0


def memory_limit() -> tuple[int, str]:
    """(bytes, what sets them): the tightest of physical memory, the address-space limit
    (RLIMIT_AS) and the cgroup's memory limit (0, "" when none is known)."""
    known = [(machine_memory_bytes(), "physical memory"), (address_space_bytes(), "the address-space limit"),
             (cgroup_memory_bytes(), "the cgroup's memory limit")]
    return min(((b, what) for b, what in known if b), default=(0, ""))


@dataclass(frozen=True)
class Budget:
    """The most one layer may cost: ``max_steps`` simulated steps (None: the default of the run's
    kind, :data:`DEFAULT_MAX_STEPS` or :data:`DEFAULT_MAX_STEPS_UNWARPED`) and
    ``max_memory_bytes`` of estimated peak memory (0: three quarters of the tightest of physical
    memory, the address-space limit and the cgroup's memory limit, :func:`memory_limit`)."""

    max_steps: int | None = None
    max_memory_bytes: int = 0
    max_seconds: float | None = None  # the run's wall time (None: no limit on it)

    @property
    def layer_seconds(self) -> float:
        """The longest estimated time one layer may take: ``max_seconds`` or
        :data:`DEFAULT_MAX_LAYER_SECONDS`."""
        return self.max_seconds if self.max_seconds is not None else DEFAULT_MAX_LAYER_SECONDS

    def steps_limit(self, unwarped: bool) -> int:
        """The step limit of a run that executes every step's events (``unwarped``) or not."""
        if self.max_steps is not None:
            return self.max_steps
        return DEFAULT_MAX_STEPS_UNWARPED if unwarped else DEFAULT_MAX_STEPS

    @property
    def memory_bytes(self) -> int:
        """The memory limit in bytes (the default resolved on this machine)."""
        return self.max_memory_bytes or (memory_limit()[0] * 3 // 4) or 8 * 2**30


def refuse_over_budget(layer: str, steps: int | None, peak_bytes: int, budget: Budget, cost: str,
                       source: str = "", unwarped: bool = False, seconds: float | None = None) -> None:
    """Raise ResourceError when ``steps`` (None: not a simulation), ``peak_bytes`` or the
    estimated ``seconds`` (None: not estimated) exceed ``budget`` (``unwarped``: the run executes
    every step); the message names the layer, what is over and how to run it anyway, then
    ``cost`` (the model's own description of the estimate and the way out)."""
    over = []
    max_steps = budget.steps_limit(unwarped)
    if steps is not None and steps > max_steps:
        over.append(f"{steps:,} steps, over --max-steps {max_steps:,} (pass --max-steps {steps} to run it "
                    "anyway)")
    if peak_bytes > budget.memory_bytes:
        _, what = memory_limit()
        default = "" if budget.max_memory_bytes or not what else f", three quarters of {what}"
        over.append(f"an estimated {format_bytes(peak_bytes)} of memory, over --max-memory "
                    f"{format_bytes(budget.memory_bytes)}{default} (pass --max-memory {ceil_size(peak_bytes)} if the "
                    "machine has it)")
    if seconds is not None and seconds > budget.layer_seconds:
        limit = (f"--max-seconds {budget.layer_seconds:g}" if budget.max_seconds is not None else
                 f"{budget.layer_seconds:,.0f} s, the most a layer may take without --max-seconds")
        over.append(f"an estimated {format_seconds(seconds)}, over {limit} (pass --max-seconds {ceil(seconds)} to "
                    "run it anyway)")
    if over:
        where = f"{source}: " if source else ""
        raise ResourceError(f"{where}layer {layer!r} is over budget: {' and '.join(over)}; {cost}")


_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20, "MIB": 2**20,
          "G": 2**30, "GB": 2**30, "GIB": 2**30, "T": 2**40, "TB": 2**40, "TIB": 2**40}


def parse_size(text: str) -> int:
    """Bytes of a size such as ``8G``, ``512MB``, ``1.5GiB`` or ``1000000`` (units of 1024);
    ValueError naming the expected form otherwise."""
    raw = text.strip().upper()
    number = raw.rstrip("BKMGTI")
    unit = raw[len(number):]
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in _UNITS or not 0 < value < 2**60:
        raise ValueError(f"expected a size such as 8G, 512M or 1000000 (bytes), got {text!r}")
    return max(1, int(value * _UNITS[unit]))


def format_bytes(n: int) -> str:
    """``n`` bytes as ``290 MB`` or ``1.4 GB`` (units of 1024)."""
    for unit, size in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{n} B"


def ceil_size(n: int) -> str:
    """The smallest whole number of GB (or MB) holding ``n`` bytes, as --max-memory takes it."""
    return f"{-(-n // 2**30)}G" if n >= 2**30 else f"{-(-n // 2**20)}M"


def format_seconds(seconds: float) -> str:
    """``seconds`` as ``40 ms``, ``2.5 s``, ``30 s``, ``4 min``, ``2.5 h`` or ``3 days``."""
    if seconds < 1:
        return f"{max(seconds * 1000, 1):.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"
