"""The ``longitudinal`` command line.

Each subcommand is two functions: one that registers its parser on the subparsers object
(arguments, help, an example in the epilog) and one that runs it and returns the exit code.
They live in ``cli/score.py``, ``study.py``, ``fit.py``, ``evaluate.py`` and ``power.py``;
what they share (exit codes, atomic outputs, messages) in ``cli/_common.py``.
:data:`COMMANDS` maps the subcommand name to both; adding a subcommand means writing the
two functions and adding one entry to the table.

Exit codes: 0 on success, 2 on bad input or bad arguments. Data problems are printed as one
message listing every failure (file, row, column, value, reason), never as a traceback, and
outputs are written only after everything succeeded (through a temporary file and a
rename), so a failed run leaves no partial output behind.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from longitudinal.cli._interrupt import EXIT_INTERRUPTED, interrupted, signals_held

__all__ = ["COMMANDS", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``longitudinal`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``None`` reads ``sys.argv[1:]`` and then *ends the
        process* with the exit code (the ``longitudinal`` command and ``python -m
        longitudinal.cli``), without the interpreter's teardown of native thread pools, which
        can abort a finished command ("terminate called without an active exception").

    Returns
    -------
    int
        Exit code: 0 on success, 2 on bad arguments or bad input, 130 when interrupted.

    Notes
    -----
    Errors from the packages' trees (:class:`surveys.SurveysError`,
    :class:`longitudinal.LongitudinalError`, ``models.ModelsError``), unreadable files
    (``OSError``) and missing optional packages (``ImportError``) end the command with one
    message on stderr and exit code 2; data problems list every failure. Warnings raised
    while a command runs are printed as ``warning: ...`` lines. Ctrl-C (or SIGTERM) at any
    moment, the first seconds of imports included, ends the command with one line and exit
    code 130, never a traceback. The arguments are parsed before anything heavy is
    imported (``--help``, ``--version`` and usage errors load neither pandas nor SciPy); the
    imports happen here, not when :mod:`longitudinal.cli` is imported, so that Ctrl-C during
    them is caught too. The command runs its BLAS on one thread unless the environment
    already says how many (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``):
    its products are small, and its parallel work (a sampler's chains, the workers of
    ``--scheduler``) already takes the cores.

    Examples
    --------
    >>> from longitudinal.cli import main
    >>> main(["score", "no-such-file.csv", "--instrument", "tas4", "--out", "s.csv"])
    2
    """
    if argv is None:
        _one_blas_thread_by_default()
    try:
        run = _import_run()
        code = run(argv)
    except KeyboardInterrupt:
        interrupted()
        code = EXIT_INTERRUPTED
    if argv is None:
        _end_process(code)
    return code


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread_by_default() -> None:
    """One BLAS thread for the command, unless set; read when NumPy loads, so only before.

    OpenBLAS's threads wait for work by spinning after each call: on sleepstudy they cost
    ``fit --engine lmm`` about 0.2 s of CPU that the fit does not use.
    """
    if "numpy" in sys.modules:  # too late to matter; leave the environment as it is
        return
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


def _import_run() -> Any:
    """Import the command line's parser and dispatch with Ctrl-C (and SIGTERM) held.

    A signal during the imports is remembered and raised as ``KeyboardInterrupt`` once they
    end: raised inside an import, numpy and pandas turn it into an ImportError message.
    """
    with signals_held():
        from longitudinal.cli._main import run
    return run


def _end_process(code: int) -> None:
    """End the process with ``code`` once stdout and stderr are flushed, skipping teardown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def __getattr__(name: str) -> Any:
    """``COMMANDS`` and ``build_parser``, imported on first use (see :func:`main`)."""
    if name in ("COMMANDS", "build_parser"):
        from longitudinal.cli import _main

        return getattr(_main, name)
    raise AttributeError(f"module 'longitudinal.cli' has no attribute {name!r}")
