"""User-facing errors.

Every mistake in something the user gave us (a file, a flag, a mapping that does not fit)
is raised as an :class:`InputError` whose message names the source (file and line, or field)
and what was expected. The CLI prints the message and exits non-zero, never a traceback.
"""

from __future__ import annotations


class InputError(Exception):
    """A problem with user input; the message is complete and shown to the user as is."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(f"{where}{message}")


class MappingError(InputError):
    """A mapping that is malformed or illegal for its layer and hardware."""


class InputWarning(UserWarning):
    """Something in the user's input that accelsim left out or changed on purpose (e.g. ONNX
    nodes it does not simulate); the CLI shows each as one ``warning:`` line."""
