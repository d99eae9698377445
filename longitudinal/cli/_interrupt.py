"""How a command ends on Ctrl-C: its exit code, its one line, and imports that cannot be cut.

Nothing beyond the standard library is imported here (:mod:`longitudinal.cli` imports this
module before it parses the arguments).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

#: Exit code of a command ended by Ctrl-C (SIGINT) or SIGTERM.
EXIT_INTERRUPTED = 130


def interrupted() -> None:
    """Say, in one line, that the command was interrupted (nothing is left half-written)."""
    try:
        print("interrupted; nothing was written", file=sys.stderr, flush=True)
    except (OSError, ValueError, KeyboardInterrupt):  # a closed stderr, a second Ctrl-C
        pass


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM) while the block runs; raise ``KeyboardInterrupt`` after it.

    Used around imports: raised inside an import, numpy and pandas turn the interrupt into an
    ImportError message. A signal that arrives during the block is remembered and raised as
    ``KeyboardInterrupt`` once the block has ended. Outside the main thread, and for a signal
    that is ignored or handled outside Python, nothing is changed.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) in (signal.SIG_IGN, None):
            continue  # ignored (a background job) or set outside Python: left alone
        if signum == signal.SIGTERM and signal.getsignal(signum) != signal.SIG_DFL:
            continue
        held[signum] = signal.signal(signum, lambda n, frame: caught.append(n))
    try:
        yield
    finally:
        for signum, previous in held.items():
            signal.signal(signum, previous)
    if caught:
        raise KeyboardInterrupt
