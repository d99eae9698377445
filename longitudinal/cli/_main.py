"""The ``longitudinal`` command line, imported by :func:`longitudinal.cli.main` when it runs.

The subcommand table, the parser and the dispatch with its exit codes; see
:mod:`longitudinal.cli`. A command runs inside :func:`_empathic_base.words.command_line`, so a
refusal raised by the package's functions names the command's options (``--out``,
``--overwrite``) and the command, not the Python parameters and functions.

Start-up: this module and every subcommand module import, at their top, only the standard
library, :mod:`longitudinal._errors` and the parser helpers of :mod:`longitudinal.cli._common`
(``import surveys`` and ``import models`` load only their error trees). pandas, NumPy, SciPy
and the packages' working modules are imported inside the run functions, after the
arguments are parsed, so ``longitudinal --help``, ``--version``, ``COMMAND --help`` and usage
errors answer at once. :func:`run` loads the modules every command shares with Ctrl-C held
(:func:`~longitudinal.cli._interrupt.signals_held`). A new subcommand module keeps to the
same rule (``tests/test_startup.py`` checks it).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from _empathic_base.words import command_line
from longitudinal._errors import LongitudinalError
from longitudinal.cli._common import (
    EXIT_INPUT,
    _format_failures,
    _format_os_error,
    _Formatter,
    _print_warnings,
)
from longitudinal.cli._interrupt import EXIT_INTERRUPTED, interrupted, signals_held
from longitudinal.cli.agreement import _agreement, _agreement_parser
from longitudinal.cli.evaluate import _evaluate, _evaluate_parser, _splits, _splits_parser
from longitudinal.cli.fit import _fit, _fit_parser
from longitudinal.cli.power import _power, _power_parser
from longitudinal.cli.reliability import _reliability, _reliability_parser
from longitudinal.cli.score import _instruments, _instruments_parser, _score, _score_parser
from longitudinal.cli.study import (
    _demo,
    _demo_parser,
    _report,
    _report_parser,
    _simulate,
    _simulate_parser,
)
from models import ModelsError
from surveys import InputValidationError, SurveysError

__all__ = ["COMMANDS", "build_parser", "run"]

_Handler = Callable[[argparse.Namespace], int]
_Register = Callable[[Any], argparse.ArgumentParser]

#: Subcommands, in the order ``--help`` lists them: name -> (register parser, run).
COMMANDS: dict[str, tuple[_Register, _Handler]] = {
    "score": (_score_parser, _score),
    "instruments": (_instruments_parser, _instruments),
    "simulate": (_simulate_parser, _simulate),
    "report": (_report_parser, _report),
    "demo": (_demo_parser, _demo),
    "fit": (_fit_parser, _fit),
    "evaluate": (_evaluate_parser, _evaluate),
    "splits": (_splits_parser, _splits),
    "power": (_power_parser, _power),
    "agreement": (_agreement_parser, _agreement),
    "reliability": (_reliability_parser, _reliability),
}

#: Commands that write CSV files: they take ``--raw-csv`` after their name too.
CSV_COMMANDS = (
    "score",
    "simulate",
    "report",
    "demo",
    "evaluate",
    "splits",
    "power",
    "agreement",
    "reliability",
)
#: Python parameters set by an option of another name: parameter -> the option's ``dest``.
#: A message about one of them names the option (:mod:`_empathic_base.words`).
PARAMETER_OPTIONS = {
    "out_dir": "out",
    "n_participants": "participants",
    "k": "kfold",
}
RAW_CSV_HELP = (
    "write CSV text cells exactly as they are. By default a text cell that a spreadsheet "
    "would run as a formula (it begins with =, +, -, @, a tab or a carriage return and is "
    "not a number, nor exactly a lavaan operator such as =~) is written with a leading "
    "apostrophe ('=HYPERLINK(...)); numbers, negative ones included, never change"
)


class _Version(argparse.Action):
    """``--version``: the installed version, read (importlib.metadata) only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=0, default=argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from surveys import __version__

        print(f"{parser.prog} {__version__}", file=sys.stdout)  # as argparse's version action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """Build the ``longitudinal`` argument parser with every subcommand in :data:`COMMANDS`.

    Returns
    -------
    argparse.ArgumentParser
        The top-level parser; the chosen subcommand is stored in ``args.command``.
    """
    parser = argparse.ArgumentParser(
        prog="longitudinal",
        description="Statistics for longitudinal empathy studies.",
        epilog="example:\n  longitudinal score surveys/pre.csv --instrument tas4 --out scores.csv",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    parser.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (register, _) in COMMANDS.items():
        command = register(subparsers)
        if name in CSV_COMMANDS:  # also after the command; SUPPRESS keeps a --raw-csv before it
            command.add_argument(
                "--raw-csv", action="store_true", default=argparse.SUPPRESS, help=RAW_CSV_HELP
            )
        command.set_defaults(_option_words=_option_words(command))
    return parser


def _option_words(command: argparse.ArgumentParser) -> dict[str, str]:
    """Map each parameter an option of ``command`` sets to the option (``out_dir: --out``).

    An option's ``dest`` is taken as the Python parameter of the same name, and
    :data:`PARAMETER_OPTIONS` adds the parameters named otherwise; a message about one of
    them, raised while the command runs, names the option instead of the parameter.
    """
    words: dict[str, str] = {}
    for action in command._actions:  # argparse keeps its actions here; no public accessor
        long = [s for s in action.option_strings if s.startswith("--")]
        if long and action.dest not in ("help", "raw_csv"):
            words[action.dest] = long[0]
    for name, dest in PARAMETER_OPTIONS.items():
        if dest in words:
            words[name] = words[dest]
    return words


def _on_sigterm() -> Any:
    """Treat SIGTERM like Ctrl-C while a command runs, so that every cleanup runs."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def _restore_sigterm(previous: Any) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run its subcommand, return the exit code (see :func:`main`)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_INPUT)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    _, handler = COMMANDS[args.command]
    try:
        with signals_held():  # numpy and pandas, which every command needs, loaded whole
            from longitudinal._output import raw_csv
    except KeyboardInterrupt:
        interrupted()
        return EXIT_INTERRUPTED
    caught: list[warnings.WarningMessage] = []
    previous = _on_sigterm()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            words = command_line(f"longitudinal {args.command}", args._option_words)
            with raw_csv(args.raw_csv), words:
                code = handler(args)
    except InputValidationError as err:
        _print_warnings(caught)
        print(_format_failures(err), file=sys.stderr)
        return EXIT_INPUT
    except OSError as err:
        _print_warnings(caught)
        print(_format_os_error(err), file=sys.stderr)
        return EXIT_INPUT
    except (SurveysError, LongitudinalError, ModelsError, ImportError) as err:
        if isinstance(err, ModuleNotFoundError):  # a broken installation, not bad input
            raise
        _print_warnings(caught)
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the staging folders were removed on the way out, nothing written
        interrupted()
        return EXIT_INTERRUPTED
    finally:
        _restore_sigterm(previous)
    notes = None
    if args.command in ("report", "demo") and code == 0:
        from longitudinal.report.context import NOTES_FILE

        notes = args.out / NOTES_FILE
    _print_warnings(caught, notes)
    return code
