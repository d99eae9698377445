"""Whose words a message uses: a Python function's parameters, or a command's options.

A message about a parameter names it as its reader knows it. Called from Python, a check
says ``the `out_dir` parameter of build_report`` and ``overwrite=True``; the same check, run
by ``longitudinal report``, says ``--out`` and ``--overwrite``. The command line enters
:func:`command_line` around each command with the parameters its options stand for; the
checks word their messages with :func:`parameter`, :func:`setting` and :func:`caller`, which
give the Python words everywhere else.

Only the standard library is imported here, so the checks of every package may use it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

__all__ = ["caller", "command_line", "parameter", "setting"]


@dataclass(frozen=True)
class _CommandLine:
    command: str  # "longitudinal report"
    options: Mapping[str, str] = field(default_factory=dict)  # parameter -> "--option"


_CURRENT: contextvars.ContextVar[_CommandLine | None] = contextvars.ContextVar(
    "empathic_command_line", default=None
)


@contextlib.contextmanager
def command_line(command: str, options: Mapping[str, str]) -> Iterator[None]:
    """Within the block, messages name parameters by the options of ``command``.

    Parameters
    ----------
    command : str
        The command as typed, e.g. ``"longitudinal report"``.
    options : mapping
        Python parameter name -> the option that sets it (``{"out_dir": "--out"}``). A
        parameter not in it keeps its Python words.
    """
    token = _CURRENT.set(_CommandLine(command, dict(options)))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def parameter(name: str, func: str | None = None, *, what: str = "parameter") -> str:
    """Name a parameter as the reader knows it: its option on the command line.

    Parameters
    ----------
    name : str
        The Python parameter.
    func : str, optional
        The function it belongs to; without it the words are ``the `name` parameter``.
    what : str, default "parameter"
        What the Python words call it (``"sampling option"``, ...).

    Examples
    --------
    >>> parameter("out_dir", "build_report")
    'the `out_dir` parameter of build_report'
    >>> with command_line("longitudinal report", {"out_dir": "--out"}):
    ...     parameter("out_dir", "build_report")
    '--out'
    """
    current = _CURRENT.get()
    if current is not None and name in current.options:
        return current.options[name]
    return f"the `{name}` {what}" + (f" of {func}" if func else "")


def setting(name: str, value: str = "True") -> str:
    """Name how to set a switch: ``overwrite=True``, or ``--overwrite`` on the command line.

    Examples
    --------
    >>> setting("overwrite")
    'overwrite=True'
    >>> with command_line("longitudinal demo", {"overwrite": "--overwrite"}):
    ...     setting("overwrite")
    '--overwrite'
    """
    current = _CURRENT.get()
    if current is not None and name in current.options:
        return current.options[name]
    return f"{name}={value}"


def caller(func: str) -> str:
    """Name who is refusing: the function, or the command on the command line.

    Examples
    --------
    >>> caller("build_report")
    'build_report'
    >>> with command_line("longitudinal report", {}):
    ...     caller("build_report")
    'longitudinal report'
    """
    current = _CURRENT.get()
    return func if current is None else current.command
