"""The inline markup of manuscript cells: ``*italic*`` and ``_{subscript}``.

Both writers (:mod:`.word`, :mod:`.latex`) read cells through :func:`runs`; a row that is a
:class:`GroupRow` spans the whole table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GroupRow", "plain", "runs"]

_TOKEN = re.compile(r"\*([^*]+)\*|_\{([^}]*)\}")


def runs(text: str) -> list[tuple[str, str]]:
    """Split marked-up text into ``(text, style)`` pieces; style is ``""``, ``"i"`` or ``"sub"``.

    Examples
    --------
    >>> from longitudinal.manuscript.markup import runs
    >>> runs("*F*(2, 28) = 0.33, η²_{G} = .01")
    [('F', 'i'), ('(2, 28) = 0.33, η²', ''), ('G', 'sub'), (' = .01', '')]
    """
    out: list[tuple[str, str]] = []
    at = 0
    for match in _TOKEN.finditer(text):
        if match.start() > at:
            out.append((text[at : match.start()], ""))
        if match.group(1) is not None:
            out.append((match.group(1), "i"))
        else:
            out.append((match.group(2), "sub"))
        at = match.end()
    if at < len(text):
        out.append((text[at:], ""))
    return out


def plain(text: str) -> str:
    """Return the text without its markup (what a reader of the document sees).

    Examples
    --------
    >>> from longitudinal.manuscript.markup import plain
    >>> plain("*M*_{diff}")
    'Mdiff'
    """
    return "".join(piece for piece, _ in runs(text))


@dataclass(frozen=True)
class GroupRow:
    """A label row spanning every column (the rows below it belong to it)."""

    label: str
