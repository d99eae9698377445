r"""The inline markup of manuscript text: ``*italic*``, ``_{subscript}`` and ``\`` escapes.

Sentences and table cells are written in a small subset of Markdown: ``*F*`` is italic,
``η²_{G}`` a subscript, and a backslash before an ASCII punctuation character (``\*``,
``\_``, ``\<``) stands for that character itself. The writers read the text through
:func:`runs` (Word, LaTeX) or :func:`to_markdown` (``results.md``); :func:`plain` is what a
reader of the document sees.

Text that comes from the study (its name, wave labels, instrument titles, column and feature
names, file names) enters marked-up text only through :func:`literal`, so it is never read
as markup. Each output format has one escaping rule, applied by every writer:

* the markup itself: :func:`escape_markup` (``\``, ``*`` and ``_{`` escaped), the default of
  :func:`literal` and what ``to_apa()`` returns;
* Markdown: :func:`escape_markdown`, which :func:`literal` applies inside
  :func:`markdown_literals` (the manuscript's ``results.md``, whose text pandoc may turn
  into HTML or LaTeX); what :func:`runs` reads from it is the same text;
* LaTeX: :func:`longitudinal.manuscript.latex.escape`, applied to every piece of every cell;
* Word: none is needed, python-docx writes each piece as a text run;
* HTML: the report's templates escape every value.

A row that is a :class:`GroupRow` spans the whole table.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = [
    "MARKDOWN_SPECIAL",
    "GroupRow",
    "escape_markdown",
    "escape_markup",
    "literal",
    "markdown_literals",
    "plain",
    "runs",
    "to_markdown",
]

_PUNCT = r"!-/:-@\[-`{-~"  # the ASCII punctuation characters, as a character class body
_ESCAPE = rf"\\[{_PUNCT}]"
_TOKEN = re.compile(
    rf"\\([{_PUNCT}])"
    rf"|\*((?:{_ESCAPE}|\\(?![{_PUNCT}])|[^*\\])+)\*"
    rf"|_\{{((?:{_ESCAPE}|\\(?![{_PUNCT}])|[^}}\\])*)\}}"
)
_ESCAPED = re.compile(rf"\\([{_PUNCT}])")

MARKDOWN_SPECIAL = frozenset("\\`*_{}[]<>()#+-.!|~&$^@:")
"""The characters :func:`escape_markdown` escapes: Markdown's and HTML's metacharacters, with
``$`` (pandoc's math), ``^`` and ``~`` (super- and subscripts), ``@`` (citations) and ``:``
(a link's scheme)."""

#: Line breaks, tabs and other control characters, and the line and paragraph separators: in
#: Markdown text from the study they become one space (a line break would start a new block).
_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def _unescape(text: str) -> str:
    return _ESCAPED.sub(r"\1", text)


def runs(text: str) -> list[tuple[str, str]]:
    r"""Split marked-up text into ``(text, style)`` pieces; style is ``""``, ``"i"`` or ``"sub"``.

    Escaped characters (``\*``) are returned as themselves, inside the piece they belong to.

    Examples
    --------
    >>> from longitudinal.narrate.markup import runs
    >>> runs("*F*(2, 28) = 0.33, η²_{G} = .01")
    [('F', 'i'), ('(2, 28) = 0.33, η²', ''), ('G', 'sub'), (' = .01', '')]
    >>> runs(r"\*\*bold\*\* and \_{x}")
    [('**bold** and _{x}', '')]
    """
    out: list[tuple[str, str]] = []

    def add(piece: str, style: str) -> None:
        if out and out[-1][1] == style == "":
            out[-1] = (out[-1][0] + piece, "")
        elif piece or style:
            out.append((piece, style))

    at = 0
    for match in _TOKEN.finditer(text):
        if match.start() > at:
            add(text[at : match.start()], "")
        if match.group(1) is not None:
            add(match.group(1), "")
        elif match.group(2) is not None:
            add(_unescape(match.group(2)), "i")
        else:
            add(_unescape(match.group(3)), "sub")
        at = match.end()
    if at < len(text):
        add(text[at:], "")
    return out


def plain(text: str) -> str:
    """Return the text without its markup (what a reader of the document sees).

    Examples
    --------
    >>> from longitudinal.narrate.markup import plain
    >>> plain("*M*_{diff}")
    'Mdiff'
    """
    return "".join(piece for piece, _ in runs(text))


def to_markdown(text: str) -> str:
    r"""Return marked-up text as Markdown: subscripts become ``<sub>`` elements.

    Italics and escapes are Markdown already and stay as they are, so text from the study
    that entered through :func:`literal` inside :func:`markdown_literals` stays escaped.

    Examples
    --------
    >>> from longitudinal.narrate.markup import to_markdown
    >>> print(to_markdown(r"*d*_{z} = 0.64 for \<b\>"))
    *d*<sub>z</sub> = 0.64 for \<b\>
    """

    def convert(match: re.Match[str]) -> str:
        if match.group(3) is not None:
            return f"<sub>{match.group(3)}</sub>"
        return match.group(0)

    return _TOKEN.sub(convert, text)


def _kept(text: str, at: int) -> bool:
    """Say whether a decimal point between digits or a hyphen inside a word stays unescaped."""
    if not 0 < at < len(text) - 1:
        return False
    before, ch, after = text[at - 1], text[at], text[at + 1]
    if ch == ".":
        return before.isdigit() and after.isdigit()
    return ch == "-" and before.isalnum() and after.isalnum()


def escape_markdown(text: str) -> str:
    r"""Escape text from the study for Markdown (CommonMark and pandoc's Markdown alike).

    Every character of :data:`MARKDOWN_SPECIAL` gets a backslash, so no tag, link, image,
    emphasis, code span, math, raw TeX (``\input{...}`` becomes ``\\input\{...\}``) or
    entity can form; line breaks, tabs and other control characters become one space. A
    decimal point between digits and a hyphen between letters or digits (``0.95``,
    ``WHO-5``) are left as they are: there they are never markup.

    Parameters
    ----------
    text : str
        Text supplied by the user (a study, wave, instrument or feature name).

    Returns
    -------
    str
        Markdown that renders as ``text``.

    Examples
    --------
    >>> from longitudinal.narrate.markup import escape_markdown
    >>> print(escape_markdown("[x](javascript:alert(1))"))
    \[x\]\(javascript\:alert\(1\)\)
    >>> print(escape_markdown(r"<img src=x> \input{/etc/passwd} WHO-5 at 0.95"))
    \<img src=x\> \\input\{/etc/passwd\} WHO-5 at 0.95
    """
    text = _BREAKS.sub(" ", str(text))
    return "".join(
        "\\" + ch if ch in MARKDOWN_SPECIAL and not _kept(text, k) else ch
        for k, ch in enumerate(text)
    )


def escape_markup(text: str) -> str:
    r"""Escape text for the manuscript's markup only: ``\``, ``*`` and ``_{`` get a backslash.

    What :func:`runs` and :func:`plain` read back is ``text`` itself, so ``**bold**`` in a
    study's label is printed with its asterisks, not in italics.

    Examples
    --------
    >>> from longitudinal.narrate.markup import escape_markup, plain
    >>> print(escape_markup("**bold** x_{1}"))
    \*\*bold\*\* x\_{1}
    >>> plain(escape_markup("**bold** x_{1}"))
    '**bold** x_{1}'
    """
    return re.sub(r"[\\*]|_(?=\{)", lambda m: "\\" + m.group(0), str(text))


_LITERAL: contextvars.ContextVar[Callable[[str], str]] = contextvars.ContextVar(
    "manuscript_literal", default=escape_markup
)


def literal(text: object) -> str:
    r"""Return text from the study ready to sit inside marked-up text, read as itself.

    Escaped with :func:`escape_markup`, or with :func:`escape_markdown` inside
    :func:`markdown_literals`. Either way :func:`runs` and :func:`plain` give back ``text``.

    Examples
    --------
    >>> from longitudinal.narrate.markup import literal, markdown_literals
    >>> print(literal("<b>*WHO-5*</b>"))
    <b>\*WHO-5\*</b>
    >>> with markdown_literals():
    ...     print(literal("<b>*WHO-5*</b>"))
    \<b\>\*WHO-5\*\</b\>
    """
    return _LITERAL.get()(str(text))


@contextlib.contextmanager
def markdown_literals() -> Iterator[None]:
    """Within this block :func:`literal` escapes for Markdown (:func:`escape_markdown`).

    The manuscript writer builds the results text inside it, so ``results.md`` holds the
    study's text escaped; the Word writer reads the same text through :func:`runs`.
    """
    token = _LITERAL.set(escape_markdown)
    try:
        yield
    finally:
        _LITERAL.reset(token)


@dataclass(frozen=True)
class GroupRow:
    """A label row spanning every column (the rows below it belong to it).

    The label is marked-up text, like a cell: text from the study enters through
    :func:`literal`.
    """

    label: str
