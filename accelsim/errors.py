"""User-facing errors.

Every mistake in something the user gave us (a file, a flag, a mapping that does not fit)
is raised as an :class:`InputError` whose message names the source (file and line, or field)
and what was expected. The CLI prints the message and exits non-zero, never a traceback.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable


class InputError(Exception):
    """A problem with user input; the message is complete and shown to the user as is."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        self.detail = message  # the message without its "source:line: " prefix
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(f"{where}{message}")


def run_module(main: Callable[[], None]) -> None:
    """Run a ``python -m`` module's ``main``: an :class:`InputError` becomes one ``error:`` line
    on stderr and exit status 2 (README, exit statuses), never a traceback."""
    try:
        main()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


class MappingError(InputError):
    """A mapping that is malformed or illegal for its layer and hardware.

    ``reason`` is a machine-readable code of what is wrong, for programs that score many
    mappings (:mod:`accelsim.search`): one of :data:`MAPPING_REASONS`, or None for problems of
    a file rather than of a mapping (a missing file, a syntax error)."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 reason: str | None = None):
        if reason is not None and reason not in MAPPING_REASONS:
            raise ValueError(f"unknown mapping error reason {reason!r}")
        self.reason = reason
        super().__init__(message, source=source, line=line)


# Why a mapping is illegal: code -> what it means.
MAPPING_REASONS: dict[str, str] = {
    "unknown_dim": "a directive names a dimension the operator does not have",
    "duplicate_dim": "a dimension is mapped twice at one cluster level",
    "size_exceeds_dim": "a directive's size is larger than its dimension",
    "cluster_too_big": "a Cluster is larger than the PEs available at its level",
    "filter_split": "input rows/cols mapped while the filter is split at the same level (not row-stationary)",
    "window_too_small": "an input window cannot hold the filter window",
    "stride": "input windows advance by a step that is not a multiple of the stride",
    "coverage": "an offset-0 window leaves part of the dimension uncomputed",
    "overlap": "windows overlap, so some MACs would be computed twice",
    "gap": "windows leave gaps, so some MACs would never be computed",
    "diagonal": "several SpatialMaps advance together, covering only a diagonal",
    "l1_overflow": "one PE's tiles do not fit L1",
    "l2_overflow": "one level-0 iteration's tiles do not fit L2",
    "inner_overflow": "a register file inside the PE cannot hold its tile (one word of each tensor it keeps, or the loops of a level below it)",
    "inner_pins": "a mapping's loops pinned to the register files inside the PE do not name them innermost first, do not divide a PE's step, or split a dimension a ragged step clips",
    "no_reduction_network": "a reduction dimension is spread across PEs without a reduction network",
    "unknown_layer": "the mapping file has no layer of that name",
    "no_directive_equivalent": "a loop-nest mapping that MAESTRO directives cannot express",
    "no_loopnest_equivalent": "a MAESTRO mapping that a loop nest cannot express",
    "no_timeloop_equivalent": "a mapping that Timeloop's three-level files (accelsim mapping --format timeloop) cannot express",
}


class InputWarning(UserWarning):
    """Something in the user's input that accelsim left out or changed on purpose (e.g. ONNX
    nodes it does not simulate); the CLI shows each as one ``warning:`` line."""


class ResourceError(Exception):
    """A run refused or stopped by a limit rather than by a mistake in its input: over its
    budget (steps, memory), out of memory, or an output the machine cannot hold (a full disk,
    a file size limit). The message says what was too big and the way out."""


# Exit statuses of the ``accelsim`` command (README, "Limits and exit codes").
EXIT_FAILED = 1  # a functional check failed, or compare --fail-on-disagree found a disagreement
EXIT_INPUT = 2  # a mistake in an input, an option or an output path (InputError)
EXIT_RESOURCES = 3  # over budget or out of resources (ResourceError, MemoryError)
EXIT_INTERNAL = 70  # a bug in accelsim (EX_SOFTWARE): please report it
EXIT_SIGINT = 130  # interrupted by Ctrl-C (128 + SIGINT)
EXIT_SIGTERM = 143  # stopped by SIGTERM (128 + SIGTERM)


def end_signals_by_default() -> None:
    """Give SIGINT and SIGTERM back their default action (end the process) once a command has
    finished and chosen its exit status. A signal that arrives while the interpreter shuts down
    then ends the process at once (the shell sees 130 or 143) instead of meeting Python's
    handler half torn down, which could abort with a fatal error. Called by the entry points
    only, never by a command run inside another program (tests, notebooks)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
