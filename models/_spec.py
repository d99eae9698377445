"""The parsed formula's types and the names in backticks, shared by parsing and evaluation.

:mod:`models.formula` parses a formula into a :class:`FormulaSpec` and :mod:`models._design`
evaluates it on data; both import the types and the backtick-name codec from here, so neither
imports the other back (``formula`` imports ``_design``). The public names are re-exported by
:mod:`models.formula`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from models._errors import FormulaError, InvalidParameterError


@dataclass(frozen=True)
class RandomTerm:
    """One random-effects term of a formula, after ``/`` nesting has been expanded.

    Attributes
    ----------
    group : str
        Name of the grouping factor; ``"g1:g2"`` for the inner factor of ``g1/g2``.
    factors : tuple of str
        Data columns whose combination defines the groups (``("g1", "g2")`` for ``g1:g2``).
    expr : str
        Random-effects right-hand side as written, e.g. ``"1 + week"``.
    correlated : bool
        ``False`` for terms written with ``||``.
    """

    group: str
    factors: tuple[str, ...]
    expr: str
    correlated: bool


@dataclass(frozen=True)
class FormulaSpec:
    """A parsed mixed-model formula.

    Attributes
    ----------
    formula : str
        The formula as given.
    response : str
        Left-hand side: a column name or a formulaic expression such as ``"np.log(y)"``.
    fixed : str
        Fixed-part right-hand side passed to formulaic (``"1"`` when only random terms were
        written).
    random : tuple of RandomTerm
        Random-effects terms in the order written, nesting expanded outer factor first.
    response_is_column : bool
        ``True`` when the left-hand side is one column name (bare or in backticks); ``response``
        is then that name without backticks.
    """

    formula: str
    response: str
    fixed: str
    random: tuple[RandomTerm, ...]
    response_is_column: bool = field(default=False, compare=False, repr=False)


# ---------------------------------------------------------------------------------------------
# names in backticks

_QUOTED = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)
"""A name in backticks; inside, ``\\``` stands for a backtick and ``\\\\`` for a backslash."""


def quote_name(name: str) -> str:
    r"""Write a column name as one name of a formula, whatever characters it holds.

    The name goes in backticks; a backtick or a backslash inside it is escaped with a backslash.
    :func:`parse_formula` reads the result back as exactly that column, so a name cannot add,
    remove or change a term.

    Examples
    --------
    >>> from models.formula import quote_name
    >>> quote_name("story_id) + I(10**10**10) + (1 | story_id")
    '`story_id) + I(10**10**10) + (1 | story_id`'
    >>> print(quote_name("a`b"))
    `a\`b`
    """
    if not isinstance(name, str):
        raise InvalidParameterError(
            f"the `name` parameter of quote_name must be a str; got {type(name).__name__}"
        )
    escaped = name.replace("\\", "\\\\").replace("`", "\\`")
    return f"`{escaped}`"


def _unquote(body: str) -> str:
    """Return the column name written as ``body`` between backticks."""
    return re.sub(r"\\([`\\])", r"\1", body)


def _mask(text: str) -> str:
    """``text`` with every name in backticks blanked out (same length), for finding structure."""
    if "`" not in text:
        return text
    return _QUOTED.sub(lambda m: "_" * len(m.group(0)), text)


def _encode_name(name: str) -> str:
    """Name a quoted column by a Python identifier while formulaic evaluates an expression.

    Names starting with an underscore are refused outside backticks, so it cannot meet a name
    written in a formula.
    """
    return f"_q{name.encode('utf-8').hex()}_"


_ENCODED = re.compile(r"_q((?:[0-9a-f]{2})*)_")


def _encode(text: str) -> str:
    """``text`` with each name in backticks replaced by :func:`_encode_name` (for formulaic)."""
    if "`" not in text:
        return text
    return _QUOTED.sub(lambda m: _encode_name(_unquote(m.group(1))), text)


def decode_message(err: object) -> str:
    """Return the text of a formulaic error with encoded names written back in backticks."""
    return _ENCODED.sub(
        lambda m: quote_name(bytes.fromhex(m.group(1)).decode("utf-8", errors="replace")), str(err)
    )


def _decode(label: str) -> str:
    """Write the encoded names of a formulaic column or term name back.

    A name that is a whole factor (``name``, ``name[T.level]``, ``a:name``) is written plain, as
    formulaic writes a column it looks up; a name inside an expression (``C(`a b`)``) keeps
    its backticks.
    """
    if "_q" not in label:
        return label

    def back(m: re.Match) -> str:
        name = bytes.fromhex(m.group(1)).decode("utf-8", errors="replace")
        before = label[m.start() - 1] if m.start() else ":"
        after = label[m.end()] if m.end() < len(label) else ":"
        return name if before == ":" and after in ":[" else quote_name(name)

    return _ENCODED.sub(back, label)


# ---------------------------------------------------------------------------------------------
# parsing


def _scan_depth(text: str) -> list[int]:
    """Parenthesis depth before each character of ``text`` (names in backticks are skipped)."""
    depth, out = 0, []
    for ch in _mask(text):
        if ch == ")":
            depth -= 1
        out.append(depth)
        if ch == "(":
            depth += 1
        if depth < 0:
            raise FormulaError(f"unbalanced parentheses in formula part {text!r}")
    if depth != 0:
        raise FormulaError(f"unbalanced parentheses in formula part {text!r}")
    return out


def _split_top(text: str, sep: str) -> list[str]:
    """Split ``text`` at the one-character ``sep`` outside parentheses and backticks."""
    depth = _scan_depth(text)
    masked = _mask(text)
    pieces, start = [], 0
    for i, ch in enumerate(masked):
        if ch == sep and depth[i] == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces
