"""The budget a run may spend on one layer (steps, memory), sizes as users write them, and the
refusal message both timing models give a layer over it.

The estimates themselves belong to each model: :mod:`accelsim.sim.estimate` (the simulator)
and :mod:`accelsim.analytical.estimate` (the closed-form model).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from accelsim.errors import ResourceError

# Default step budgets of one layer: a run the engine may warp over (repeated periods of steps
# executed as one exact jump, so its cost follows distinct iteration cases, not steps), and a run
# that executes every step's events (traces, --per-pe, --functional).
DEFAULT_MAX_STEPS = 1_000_000_000
DEFAULT_MAX_STEPS_UNWARPED = 10_000_000


def machine_memory_bytes() -> int:
    """This machine's physical memory (0 when the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


@dataclass(frozen=True)
class Budget:
    """The most one layer may cost: ``max_steps`` simulated steps (None: the default of the run's
    kind, :data:`DEFAULT_MAX_STEPS` or :data:`DEFAULT_MAX_STEPS_UNWARPED`) and
    ``max_memory_bytes`` of estimated peak memory (0: three quarters of the machine's memory)."""

    max_steps: int | None = None
    max_memory_bytes: int = 0

    def steps_limit(self, unwarped: bool) -> int:
        """The step limit of a run that executes every step's events (``unwarped``) or not."""
        if self.max_steps is not None:
            return self.max_steps
        return DEFAULT_MAX_STEPS_UNWARPED if unwarped else DEFAULT_MAX_STEPS

    @property
    def memory_bytes(self) -> int:
        """The memory limit in bytes (the default resolved on this machine)."""
        return self.max_memory_bytes or (machine_memory_bytes() * 3 // 4) or 8 * 2**30


def refuse_over_budget(layer: str, steps: int | None, peak_bytes: int, budget: Budget, cost: str,
                       source: str = "", unwarped: bool = False) -> None:
    """Raise ResourceError when ``steps`` (None: not a simulation) or ``peak_bytes`` exceed
    ``budget`` (``unwarped``: the run executes every step); the message names the layer, what is
    over and how to run it anyway, then ``cost`` (the model's own description of the estimate
    and the way out)."""
    over = []
    max_steps = budget.steps_limit(unwarped)
    if steps is not None and steps > max_steps:
        over.append(f"{steps:,} steps, over --max-steps {max_steps:,} (pass --max-steps {steps} to run it "
                    "anyway)")
    if peak_bytes > budget.memory_bytes:
        over.append(f"an estimated {format_bytes(peak_bytes)} of memory, over --max-memory "
                    f"{format_bytes(budget.memory_bytes)} (pass --max-memory {ceil_size(peak_bytes)} if the "
                    "machine has it)")
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
