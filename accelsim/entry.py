"""The ``accelsim`` command's entry point: imports the command line (a few tenths of a second)
with Ctrl-C turned into the same one ``error:`` line and exit status 130 the commands give, so
an interrupt before they start prints no traceback either."""

from __future__ import annotations

import sys

from accelsim.errors import EXIT_SIGINT


def main() -> None:
    """Import :mod:`accelsim.cli` and run its command group."""
    try:
        from accelsim.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(EXIT_SIGINT)
    cli_main()
