"""Mixed-model formulas in lme4 syntax: parsing and design matrices.

A formula such as ``"Reaction ~ Days + (Days | Subject)"`` has a fixed part, handed to
:mod:`formulaic` (so categorical predictors, interactions and transforms follow formulaic's
rules and term names), and random-effects terms in parentheses:

==========================  ===============================================================
``(1 | g)``                 random intercept per level of ``g``
``(1 + x | g)``, ``(x | g)``  correlated random intercept and slope of ``x``
``(0 + x | g)``             random slope without intercept
``(1 + x || g)``            uncorrelated terms: one block per formulaic term
``(1 | g1/g2)``             nesting: ``(1 | g1) + (1 | g1:g2)``
``(1 | g1) + (1 | g2)``     crossed factors
``(1 | g1:g2)``             one factor per observed combination of ``g1`` and ``g2``
==========================  ===============================================================

:func:`parse_formula` turns the text into a :class:`FormulaSpec`; :func:`build_design` evaluates
it on a DataFrame and returns a :class:`Design` (response, fixed-effects matrix and one
:class:`RandomBlock` per random-effects block).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from models._errors import FormulaError, InvalidParameterError

__all__ = [
    "Design",
    "FormulaSpec",
    "RandomBlock",
    "RandomTerm",
    "build_design",
    "parse_formula",
]


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
    """

    formula: str
    response: str
    fixed: str
    random: tuple[RandomTerm, ...]


@dataclass(frozen=True, eq=False)
class RandomBlock:
    """Random-effects design of one block (one term, or one part of a ``||`` term).

    Attributes
    ----------
    group : str
        Grouping factor name (``"g1:g2"`` for an interaction of factors).
    terms : tuple of str
        Column names of ``Z`` as formulaic names them (``"Intercept"``, ``"Days"``, ...).
    Z : numpy.ndarray
        ``n x p`` random-effects model matrix (one column per entry of ``terms``).
    codes : numpy.ndarray
        Integer group index (0-based position in ``levels``) of every row; ``-1`` marks a
        level not seen when the design was built (only in :meth:`Design.transform`).
    levels : pandas.Index
        Group labels. A single factor keeps its own values (sorted, or the categorical order);
        a combination of factors uses strings ``"a:b"``.
    factors : tuple of str
        Data columns defining the groups.
    expr : str
        Random-effects right-hand side of the originating term.
    correlated : bool
        ``False`` when the block comes from a ``||`` term.
    """

    group: str
    terms: tuple[str, ...]
    Z: np.ndarray
    codes: np.ndarray
    levels: pd.Index
    factors: tuple[str, ...]
    expr: str
    correlated: bool
    _model_spec: Any = field(default=None, repr=False)
    _columns: tuple[int, ...] = field(default=(), repr=False)

    @property
    def n_levels(self) -> int:
        """Number of groups (levels of the grouping factor)."""
        return len(self.levels)


@dataclass(frozen=True, eq=False)
class Design:
    """Response, fixed-effects and random-effects design matrices of a mixed model.

    Attributes
    ----------
    spec : FormulaSpec
        The parsed formula.
    y : numpy.ndarray
        Response (float), one value per row used; all NaN when the design was built for new
        data without a response column.
    X : pandas.DataFrame
        Fixed-effects model matrix (float), columns named by formulaic (``Intercept``,
        ``Days``, ``age:Sex[T.Male]``), indexed like ``rows``.
    random : list of RandomBlock
        One block per random term after ``||`` expansion and ``/`` nesting, in formula order.
    rows : pandas.Index
        Index labels of the data rows used.
    n_dropped : int
        Rows left out because a variable the model uses was missing.
    """

    spec: FormulaSpec
    y: np.ndarray
    X: pd.DataFrame
    random: list[RandomBlock]
    rows: pd.Index
    n_dropped: int
    _fixed_spec: Any = field(default=None, repr=False)

    @property
    def n_obs(self) -> int:
        """Number of rows used."""
        return len(self.rows)

    def transform(self, data: pd.DataFrame, *, random: bool = True) -> Design:
        """Build the same design (same coding, same group levels) for other rows.

        Parameters
        ----------
        data : pandas.DataFrame
            New data with the predictor columns (the response column is optional).
        random : bool, default True
            Also build the random-effects blocks (needs the grouping columns).

        Returns
        -------
        Design
            Rows with a missing predictor are left out (see ``rows``); group levels not seen
            in the original data get code ``-1``; ``y`` is NaN when the response is absent.

        Raises
        ------
        FormulaError
            When a needed column is missing or cannot be encoded as before.
        """
        from models._design import _transform

        return _transform(self, data, random=random)


# ---------------------------------------------------------------------------------------------
# parsing


def _scan_depth(text: str) -> list[int]:
    """Parenthesis depth before each character of ``text``."""
    depth, out = 0, []
    for ch in text:
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
    """Split ``text`` at occurrences of the one-character ``sep`` outside parentheses."""
    depth = _scan_depth(text)
    pieces, start = [], 0
    for i, ch in enumerate(text):
        if ch == sep and depth[i] == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces


def _strip_name(name: str, formula: str) -> str:
    name = name.strip()
    if name.startswith("`") and name.endswith("`") and len(name) > 1:
        name = name[1:-1]
    if not name or any(ch in name for ch in "()|~+*^"):
        raise FormulaError(
            f"parse_formula: grouping factor {name!r} in {formula!r} is not a column name; "
            "write groups as `g`, `g1/g2` (nesting) or `g1:g2` (combination)"
        )
    return name


RE_FORM_NONE = ("~0", "NA", "none", "0")
"""``re_form`` values of ``predict`` that leave the random effects out (lme4's NA and ~0)."""

TRANSFORMS = ("I", "C", "log", "exp", "sqrt", "center", "scale", "poly", "bs")
"""The functions a formula may call; everything else that looks like code is refused."""

_OPERATORS = {"~", "+", "-", "*", "/", ":", "**", "^", "|", "(", ")", ","}


def _check_safe(formula: str) -> None:
    """Refuse a formula that is not data: the allow-list of :func:`parse_formula`.

    The text is tokenised, never evaluated. Allowed: names (data columns, checked against the
    data when the design is built), numbers, ``+ - * / : ** ^ | ~ ( ) ,``, calls of
    :data:`TRANSFORMS`, ``name=`` keyword arguments inside those calls, and column names in
    backticks. Refused, with the offending part named: attribute access (``.``), subscripts,
    braces, strings, keywords, names starting with an underscore, and any other call.
    """
    import io
    import keyword
    import tokenize

    def refuse(part: str, why: str) -> None:
        raise FormulaError(
            f"parse_formula: {part!r} in {formula!r} is not allowed: {why}. A formula may use "
            f"data columns, numbers, + - * / : ** ^ | ~ and the functions "
            f"{', '.join(TRANSFORMS)}; it is never run as code"
        )

    quoted = []

    def placeholder(match: Any) -> str:
        name = match.group(1)
        if any(ch in name for ch in "`\n"):
            refuse(match.group(0), "a backtick name must be one column name")
        quoted.append(name)
        return f"QUOTED{len(quoted) - 1}Q"

    import re

    text = re.sub(r"`([^`]*)`", placeholder, formula)
    if "`" in text:
        refuse("`", "an unclosed backtick")
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT)
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError) as err:
        raise FormulaError(
            f"parse_formula: {formula!r} cannot be read as a formula ({err})"
        ) from err
    calls: list[bool] = []  # per open parenthesis: is it the argument list of an allowed call
    for k, tok in enumerate(tokens):
        nxt = tokens[k + 1].string if k + 1 < len(tokens) else ""
        prev = tokens[k - 1].string if k else ""
        if tok.type == tokenize.NAME:
            if keyword.iskeyword(tok.string) and tok.string not in ("class", "True", "False"):
                refuse(tok.string, "a Python keyword")
            if tok.string.startswith("_"):
                refuse(tok.string, "a name starting with an underscore")
            if nxt == "(" and tok.string not in TRANSFORMS:
                refuse(f"{tok.string}(", "a call of a function outside the allowed list")
            if nxt == "=" and not (calls and calls[-1] and prev in ("(", ",")):
                refuse(f"{tok.string}=", "'=' outside the arguments of an allowed function")
        elif tok.type == tokenize.NUMBER:
            if not re.fullmatch(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?|\.[0-9]+", tok.string):
                refuse(tok.string, "not a plain decimal number")
        elif tok.type == tokenize.OP:
            if tok.string == "(":
                if prev == ")":
                    refuse(")(", "a call of an expression")
                calls.append(prev in TRANSFORMS)
            elif tok.string == ")":
                if calls:
                    calls.pop()
            elif tok.string == "=":
                if not (calls and calls[-1] and tokens[k - 1].type == tokenize.NAME):
                    refuse("=", "'=' outside the arguments of an allowed function")
            elif tok.string not in _OPERATORS:
                refuse(tok.string, "an operator that formulas do not use")
        elif tok.type == tokenize.STRING:
            refuse(tok.string, "a string (name an odd column with backticks)")
        else:
            refuse(tok.string, "not part of a formula")


def _check_formulaic(text: str, formula: str, what: str) -> None:
    from formulaic import Formula

    try:
        Formula(text)
    except Exception as err:  # formulaic raises several parser error types
        raise FormulaError(
            f"parse_formula: the {what} {text!r} of {formula!r} is not a valid formulaic "
            f"expression: {err}"
        ) from err


def _parse_random(inner: str, formula: str) -> list[RandomTerm]:
    depth = _scan_depth(inner)
    bars = [i for i, ch in enumerate(inner) if ch == "|" and depth[i] == 0]
    if not bars:
        raise FormulaError(f"parse_formula: no '|' in random-effects term ({inner}) of {formula!r}")
    first = bars[0]
    double = len(bars) >= 2 and bars[1] == first + 1
    if len(bars) > (2 if double else 1):
        raise FormulaError(
            f"parse_formula: random-effects term ({inner}) of {formula!r} has more than one "
            "'|'; write (expr | group) or (expr || group)"
        )
    expr = inner[:first].strip()
    group_text = inner[first + (2 if double else 1) :].strip()
    if not expr:
        raise FormulaError(
            f"parse_formula: random-effects term ({inner}) of {formula!r} has nothing left of "
            "'|'; write (1 | group) for a random intercept"
        )
    if not group_text:
        raise FormulaError(
            f"parse_formula: random-effects term ({inner}) of {formula!r} names no grouping factor"
        )
    _check_formulaic(expr, formula, "random-effects expression")
    nests = group_text.split("/")
    terms: list[RandomTerm] = []
    factors: tuple[str, ...] = ()
    for nest in nests:
        parts = tuple(_strip_name(p, formula) for p in nest.split(":"))
        factors = factors + parts
        terms.append(
            RandomTerm(group=":".join(factors), factors=factors, expr=expr, correlated=not double)
        )
    return terms


def _collect_terms(
    rhs: str, formula: str, fixed_pieces: list[str], random_terms: list[RandomTerm]
) -> None:
    for piece in _split_top(rhs, "+"):
        text = piece.strip()
        if not text:
            raise FormulaError(f"parse_formula: empty term (a stray '+') in {formula!r}")
        if text.startswith("(") and text.endswith(")"):
            inner_depth = _scan_depth(text)
            closes_at_end = all(d > 0 for d in inner_depth[1:-1])
            inner = text[1:-1]
            if closes_at_end and "|" in inner:
                depth = _scan_depth(inner)
                if any(ch == "|" and depth[i] == 0 for i, ch in enumerate(inner)):
                    random_terms.extend(_parse_random(inner, formula))
                else:  # a parenthesised sum of terms, as R deparses `||` terms
                    _collect_terms(inner, formula, fixed_pieces, random_terms)
                continue
        if "|" in text:
            raise FormulaError(
                f"parse_formula: '|' outside a parenthesised random-effects term in "
                f"{text!r} of {formula!r}; write random terms as '+ (expr | group)'"
            )
        fixed_pieces.append(text)


def parse_formula(formula: str) -> FormulaSpec:
    """Parse a mixed-model formula written in lme4 syntax.

    Parameters
    ----------
    formula : str
        ``"response ~ fixed + (expr | group) + ..."``. Random-effects terms must be
        parenthesised and joined to the rest by ``+``.

    Returns
    -------
    FormulaSpec
        Response, fixed-part text and the random terms (``g1/g2`` expanded to ``g1`` and
        ``g1:g2``; ``||`` recorded as ``correlated=False``).

    Raises
    ------
    InvalidParameterError
        When ``formula`` is not a string.
    FormulaError
        When the formula has no ``~``, unbalanced parentheses, a ``|`` outside a parenthesised
        random term, an empty part, or a part formulaic cannot parse.

    Notes
    -----
    A formula is data, never code. Before anything is evaluated the text is tokenised and
    checked against an allow-list: data columns (names in backticks for odd column names),
    numbers, ``+ - * / : ** ^ | ~ ( ) ,``, and calls of :data:`TRANSFORMS` (``I``, ``C``,
    ``log``, ``exp``, ``sqrt``, ``center``, ``scale``, ``poly``, ``bs``, with ``name=value``
    arguments inside them). Attribute access, subscripts, braces, strings, Python keywords,
    names starting with an underscore and any other call raise :class:`FormulaError` naming
    the offending part; names that are not columns of the data are refused when the design is
    built.

    The grammar follows ``lme4::lFormula`` (Bates et al. 2015): ``(1 | g1/g2)`` becomes
    ``(1 | g1) + (1 | g1:g2)``. A ``||`` term is split into one uncorrelated block per
    formulaic term of its expression by :func:`build_design` (lme4 additionally recodes a
    factor after ``||`` with one indicator per level; here the factor keeps formulaic's coding).

    Examples
    --------
    >>> from models.formula import parse_formula
    >>> spec = parse_formula("Reaction ~ Days + (Days | Subject)")
    >>> spec.response, spec.fixed
    ('Reaction', 'Days')
    >>> spec.random[0]
    RandomTerm(group='Subject', factors=('Subject',), expr='Days', correlated=True)
    >>> [t.group for t in parse_formula("y ~ 1 + (1 | school/class)").random]
    ['school', 'school:class']
    """
    if not isinstance(formula, str):
        raise InvalidParameterError(
            f"the `formula` parameter of parse_formula must be a str; got {type(formula).__name__}"
        )
    return _parse(formula)


@functools.lru_cache(maxsize=256)
def _parse(formula: str) -> FormulaSpec:
    """Parse a checked formula string (cached: a FormulaSpec is immutable; errors are not)."""
    _check_safe(formula)
    depth = _scan_depth(formula)
    tildes = [i for i, ch in enumerate(formula) if ch == "~" and depth[i] == 0]
    if len(tildes) != 1:
        raise FormulaError(
            f"parse_formula: a formula needs exactly one '~' separating response and "
            f"predictors, e.g. 'y ~ x + (1 | g)'; got {formula!r}"
        )
    lhs, rhs = formula[: tildes[0]].strip(), formula[tildes[0] + 1 :].strip()
    if not lhs:
        raise FormulaError(f"parse_formula: the formula {formula!r} has no response left of '~'")
    if not rhs:
        raise FormulaError(f"parse_formula: the formula {formula!r} has nothing right of '~'")
    fixed_pieces: list[str] = []
    random_terms: list[RandomTerm] = []
    _collect_terms(rhs, formula, fixed_pieces, random_terms)
    fixed = " + ".join(fixed_pieces) if fixed_pieces else "1"
    _check_formulaic(fixed, formula, "fixed part")
    return FormulaSpec(formula=formula, response=lhs, fixed=fixed, random=tuple(random_terms))


def build_design(spec: FormulaSpec, data: pd.DataFrame) -> Design:
    """Evaluate a parsed formula on a DataFrame.

    Parameters
    ----------
    spec : FormulaSpec
        Output of :func:`parse_formula`.
    data : pandas.DataFrame
        One row per observation; must contain every column the formula uses.

    Returns
    -------
    Design
        ``y``, ``X`` (formulaic column names), one :class:`RandomBlock` per random-effects block
        (``Z`` is the ``n x p`` raw matrix, ``codes`` the group of each row), ``rows`` (index
        labels used) and ``n_dropped``.

    Raises
    ------
    InvalidParameterError
        When ``spec`` is not a FormulaSpec or ``data`` not a DataFrame.
    FormulaError
        When columns are missing (all are listed), the response is not numeric, no complete
        row remains, or formulaic cannot evaluate a part.

    Notes
    -----
    A row is used when the response, every fixed and random predictor and every grouping
    column are present (as ``model.frame(na.action = na.omit)`` in R); unused categories of
    categorical columns are dropped first, as lme4 does. The input is not modified.

    Examples
    --------
    >>> import pandas as pd
    >>> from models.formula import build_design, parse_formula
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.5, 4.0, None], "x": [0, 1, 0, 1, 0],
    ...                    "g": ["a", "a", "b", "b", "b"]})
    >>> d = build_design(parse_formula("y ~ x + (1 | g)"), df)
    >>> list(d.X.columns), d.n_dropped, d.random[0].codes.tolist()
    (['Intercept', 'x'], 1, [0, 0, 1, 1])
    """
    from models._design import _build_design  # the evaluation lives there

    return _build_design(spec, data)
