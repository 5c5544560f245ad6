"""The ``accelsim`` command's entry point: imports the command line (a few tenths of a second)
with Ctrl-C turned into the same one ``error:`` line and exit status 130 the commands give, so
an interrupt before they start prints no traceback either; and with a signal that arrives once
the command has finished ending the process by the signal's default action."""

from __future__ import annotations

import sys

from accelsim.errors import EXIT_SIGINT, end_signals_by_default


def main() -> None:
    """Import :mod:`accelsim.cli` and run its command group."""
    try:
        from accelsim.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(EXIT_SIGINT)
    try:
        cli_main()
    finally:
        end_signals_by_default()
