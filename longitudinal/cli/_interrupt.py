"""How a command ends on Ctrl-C: its exit code and its one line (no import beyond ``sys``)."""

from __future__ import annotations

import sys

#: Exit code of a command ended by Ctrl-C (SIGINT) or SIGTERM.
EXIT_INTERRUPTED = 130


def interrupted() -> None:
    """Say, in one line, that the command was interrupted (nothing is left half-written)."""
    try:
        print("interrupted; nothing was written", file=sys.stderr, flush=True)
    except (OSError, ValueError, KeyboardInterrupt):  # a closed stderr, a second Ctrl-C
        pass
