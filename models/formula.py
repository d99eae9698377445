r"""Mixed-model formulas in lme4 syntax: parsing and design matrices.

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

**Names.** A column name that is not a plain name (letters, digits, ``_``) goes in backticks:
```two words``` or ```story_id) + (1 | x``` is one column wherever a name may stand (the
response, a fixed effect, inside a function, a grouping factor); inside the backticks ``\```
stands for a backtick and ``\\`` for a backslash. :func:`quote_name` writes any name so, and
:func:`formula_name` only when needed; build formulas from column names held as data with
them. Model-matrix columns show the name without backticks (``two words``,
``two words[T.b]``), and with them inside a function (``C(`two words`)[T.b]``).

**Functions** (:data:`TRANSFORMS`; nothing else is called):

=============================  =============================================================
``I(expr)``                    arithmetic as written (``I(x**2)``)
``C(x)``                       ``x`` as a categorical
``log``, ``exp``, ``sqrt``     elementwise; ``log`` and ``sqrt`` refuse values outside their
                               domain
``center(x)``                  ``x`` minus its mean (R's ``scale(x, scale = FALSE)``)
``scale(x)``                   ``(x - mean) / sd`` with ``n - 1`` (R's ``scale``);
                               ``center=``, ``scale=`` as ``True``/``False``
``poly(x, degree)``            orthogonal polynomials of R's ``poly``; ``raw=True`` for
                               ``x, x**2, ...``; degree 1 to :data:`MAX_POLY_DEGREE` (10)
``bs(x, df=, degree=3)``       B-spline basis of R's ``splines::bs``; df 1 to
                               :data:`MAX_SPLINE_DF` (50), degree 1 to
                               :data:`MAX_SPLINE_DEGREE` (10)
=============================  =============================================================

``center``, ``scale``, ``poly`` and ``bs`` remember the data they were built on: the same
mean, sd, orthogonalisation and knots apply to new data (:meth:`Design.transform`), as R's
``predict`` does.

**Bounds.** Python computes numbers in a formula exactly, so before anything is evaluated a
formula is refused, naming the part, when it writes an integer of more than
:data:`MAX_INTEGER_DIGITS` (15) digits, an exponent (after ``**`` or ``^``) that is not a number
of at most :data:`MAX_EXPONENT` (10), a power of a power of numbers (``10**10**10``,
``(2**10)**10``), a formula power ``(a + b + ...)**p`` of ``m`` terms with ``m**p`` above
:data:`MAX_FORMULA_POWER` (10,000), or a ``poly`` degree or ``bs`` df or degree that is not a
whole number within its bound. A formula with more than :data:`MAX_RANDOM_TERMS` (100)
random-effects terms (after ``g1/g2`` is expanded), or one that repeats a random-effects term
(the same grouping factor with the same terms, however written: ``(1 | id) + (1 | id)``,
``(x | g) + (1 + x || g)``), is refused by :func:`parse_formula`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pandas as pd

from models._design import Design, RandomBlock, _build_design
from models._errors import FormulaError, InvalidParameterError
from models._spec import (
    _QUOTED,
    FormulaSpec,
    RandomTerm,
    _encode,
    _mask,
    _scan_depth,
    _split_top,
    _unquote,
    decode_message,
    quote_name,
)
from models.limits import FORMULA_MAX_RANDOM_TERMS

__all__ = [
    "Design",
    "FormulaSpec",
    "RandomBlock",
    "RandomTerm",
    "build_design",
    "formula_name",
    "parse_formula",
    "quote_name",
]


# ---------------------------------------------------------------------------------------------
# names in backticks (the codec itself is in models._spec)

_BARE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def formula_name(name: str) -> str:
    """Write a column name for a formula: bare when it is a plain name, else :func:`quote_name`.

    A plain name is a letter followed by letters, digits and underscores, not a Python keyword
    and not one of :data:`TRANSFORMS`; every other name is quoted. Use it to build a formula
    from column names held as data.

    Examples
    --------
    >>> from models.formula import formula_name
    >>> formula_name("participant_id"), formula_name("my group")
    ('participant_id', '`my group`')
    """
    import keyword

    if not isinstance(name, str):
        raise InvalidParameterError(
            f"the `name` parameter of formula_name must be a str; got {type(name).__name__}"
        )
    if _BARE_NAME.match(name) and not keyword.iskeyword(name) and name not in TRANSFORMS:
        return name
    return quote_name(name)


# ---------------------------------------------------------------------------------------------
# parsing


def _strip_name(name: str, formula: str) -> str:
    name = name.strip()
    quoted = _QUOTED.fullmatch(name)
    if quoted and quoted.group(1):
        return _unquote(quoted.group(1))
    if quoted or not name or any(ch in name for ch in "()|~+*^`"):
        raise FormulaError(
            f"parse_formula: grouping factor {name!r} in {formula!r} is not a column name; "
            "write groups as `g`, `g1/g2` (nesting) or `g1:g2` (combination)"
        )
    return name


RE_FORM_NONE = ("~0", "NA", "none", "0")
"""``re_form`` values of ``predict`` that leave the random effects out (lme4's NA and ~0)."""

TRANSFORMS = ("I", "C", "log", "exp", "sqrt", "center", "scale", "poly", "bs")
"""The functions a formula may call; everything else that looks like code is refused."""

MAX_EXPONENT = 10
"""Largest exponent (in absolute value) after ``**`` or ``^``; it must be a number."""

MAX_INTEGER_DIGITS = 15
"""Most digits of an integer written in a formula."""

MAX_POLY_DEGREE = 10
"""Largest ``degree`` of ``poly``."""

MAX_SPLINE_DF = 50
"""Largest ``df`` of ``bs``."""

MAX_SPLINE_DEGREE = 10
"""Largest ``degree`` of ``bs``."""

MAX_FORMULA_POWER = 10_000
"""Largest ``m ** p`` of a formula power ``(t1 + ... + tm)**p`` (formulaic forms the products)."""

MAX_RANDOM_TERMS = FORMULA_MAX_RANDOM_TERMS
"""Most random-effects terms of a formula, counted after nesting (``g1/g2``) is expanded."""

_OPERATORS = {"~", "+", "-", "*", "/", ":", "**", "^", "|", "(", ")", ","}

_BOUNDED_ARGUMENTS = {
    # function: {argument: (position after x, bound, what)}
    "poly": {"degree": (1, MAX_POLY_DEGREE, "MAX_POLY_DEGREE")},
    "bs": {
        "df": (1, MAX_SPLINE_DF, "MAX_SPLINE_DF"),
        "degree": (3, MAX_SPLINE_DEGREE, "MAX_SPLINE_DEGREE"),
    },
}


def _check_safe(formula: str) -> None:
    """Refuse a formula that is not data: the allow-list of :func:`parse_formula`.

    The text is tokenised, never evaluated. Allowed: names (data columns, checked against the
    data when the design is built), numbers, ``+ - * / : ** ^ | ~ ( ) ,``, calls of
    :data:`TRANSFORMS`, ``name=`` keyword arguments inside those calls, and column names in
    backticks. Refused, with the offending part named: attribute access (``.``), subscripts,
    braces, strings, keywords, names starting with an underscore, any other call, and
    arithmetic beyond the bounds (:func:`_check_bounds`).
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

    quoted: list[str] = []

    def placeholder(match: Any) -> str:
        quoted.append(match.group(0))
        return f"QUOTED{len(quoted) - 1}Q"

    text = _QUOTED.sub(placeholder, formula)
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
    _check_bounds(formula, [(t.type, t.string) for t in tokens], quoted)


def _check_bounds(formula: str, tokens: list[tuple[int, str]], quoted: list[str]) -> None:
    """Refuse arithmetic whose size is not bounded, before anything is evaluated.

    Python evaluates numbers in a formula exactly, so ``I(10**10**10)`` would compute a number
    with ten billion digits. Refused, naming the part: an integer of more than
    :data:`MAX_INTEGER_DIGITS` digits; an exponent (after ``**`` or ``^``) that is not a number
    of at most :data:`MAX_EXPONENT`; a power of a power (``2**3**4``, ``(2**10)**10`` when the
    parenthesised base holds no data column); a formula power ``(a + b + c)**p`` (outside a
    function) of ``m`` terms with ``m**p`` above :data:`MAX_FORMULA_POWER`, as formulaic forms
    every product (a term ``a*b`` counts as 3); ``poly`` degree above :data:`MAX_POLY_DEGREE`,
    ``bs`` df above :data:`MAX_SPLINE_DF` or degree above :data:`MAX_SPLINE_DEGREE`, or any of
    them not a whole number written as digits. Data columns are arrays of fixed-size numbers
    and cannot grow so.
    """
    import tokenize

    def show(part: list[tuple[int, str]]) -> str:
        out = "".join(s for _, s in part).replace(",", ", ")
        return re.sub(r"QUOTED([0-9]+)Q", lambda m: quoted[int(m.group(1))], out)

    def refuse(part: str, why: str) -> None:
        raise FormulaError(
            f"parse_formula: {part!r} in {formula!r} is refused before anything is evaluated: {why}"
        )

    def is_data_name(k: int) -> bool:
        kind, string = tokens[k]
        nxt = tokens[k + 1][1] if k + 1 < len(tokens) else ""
        return kind == tokenize.NAME and nxt not in ("(", "=") and string not in ("True", "False")

    def closing(k: int) -> int:  # index of the ")" matching the "(" at k
        depth = 0
        for j in range(k, len(tokens)):
            depth += {"(": 1, ")": -1}.get(tokens[j][1], 0)
            if depth == 0:
                return j
        return len(tokens) - 1

    def opening(k: int) -> int:  # index of the "(" matching the ")" at k
        depth = 0
        for j in range(k, -1, -1):
            depth += {")": 1, "(": -1}.get(tokens[j][1], 0)
            if depth == 0:
                return j
        return 0

    in_call, stack = [], [False]  # per token: inside the arguments of a function
    for k, (_, string) in enumerate(tokens):
        in_call.append(stack[-1])
        if string == "(":
            stack.append(stack[-1] or (k > 0 and tokens[k - 1][1] in TRANSFORMS))
        elif string == ")" and len(stack) > 1:
            stack.pop()

    def _pieces(indices: range) -> list[list[int]]:  # split at "+" and "-" outside parentheses
        out: list[list[int]] = [[]]
        depth = 0
        for i in indices:
            depth += {"(": 1, ")": -1}.get(tokens[i][1], 0)
            if tokens[i][1] in ("+", "-") and depth == 0:
                out.append([])
            else:
                out[-1].append(i)
        return [p for p in out if p]

    for k, (kind, string) in enumerate(tokens):
        if kind == tokenize.NUMBER and re.fullmatch(r"[0-9]+", string):
            if len(string.lstrip("0")) > MAX_INTEGER_DIGITS:
                refuse(string, f"an integer of more than {MAX_INTEGER_DIGITS} digits")
        if string in ("**", "^"):
            j = k + 1
            if j < len(tokens) and tokens[j][1] in ("+", "-"):
                j += 1
            end = min(j + 1, len(tokens))
            if j >= len(tokens) or tokens[j][0] != tokenize.NUMBER:
                refuse(
                    show(tokens[max(k - 1, 0) : end]),
                    f"an exponent must be a number of at most {MAX_EXPONENT}",
                )
            if float(tokens[j][1]) > MAX_EXPONENT:
                refuse(show(tokens[max(k - 1, 0) : end]), f"an exponent above {MAX_EXPONENT}")
            if j + 1 < len(tokens) and tokens[j + 1][1] in ("**", "^"):
                refuse(show(tokens[max(k - 1, 0) : j + 3]), "a power of a power")
            if k and tokens[k - 1][1] == ")":
                start = opening(k - 1)
                inside = range(start + 1, k - 1)
                if any(tokens[i][1] in ("**", "^") for i in inside) and not any(
                    is_data_name(i) for i in inside
                ):
                    refuse(show(tokens[start:end]), "a power of a power of numbers")
                if not in_call[k]:  # a formula power: formulaic multiplies the terms out
                    terms = 0
                    for piece in _pieces(inside):
                        names = sum(1 for i in piece if is_data_name(i))
                        terms += 2 ** min(names, 20) - 1 if names else 1
                    if terms ** float(tokens[j][1]) > MAX_FORMULA_POWER:
                        refuse(
                            show(tokens[start:end]),
                            f"a formula power of {terms} terms to the power {tokens[j][1]} "
                            f"(at most {MAX_FORMULA_POWER:,} products of terms)",
                        )
        if kind == tokenize.NAME and string in _BOUNDED_ARGUMENTS and k + 1 < len(tokens):
            if tokens[k + 1][1] != "(":
                continue
            end = closing(k + 1)
            args: list[list[tuple[int, str]]] = [[]]
            depth = 0
            for tok in tokens[k + 2 : end]:
                depth += {"(": 1, ")": -1}.get(tok[1], 0)
                if tok[1] == "," and depth == 0:
                    args.append([])
                else:
                    args[-1].append(tok)
            for argument, (position, bound, _) in _BOUNDED_ARGUMENTS[string].items():
                for index, arg in enumerate(args):
                    named = len(arg) >= 2 and arg[1][1] == "="
                    if (arg[0][1] == argument if named else index == position) if arg else False:
                        value = arg[2:] if named else arg
                        if not (
                            len(value) == 1
                            and re.fullmatch(r"[0-9]+", value[0][1])
                            and 1 <= int(value[0][1]) <= bound
                        ):
                            refuse(
                                show(tokens[k : end + 1]),
                                f"the {argument} of {string} must be a whole number from 1 to "
                                f"{bound}",
                            )


def _check_formulaic(text: str, formula: str, what: str) -> None:
    from formulaic import Formula

    try:
        Formula(_encode(text))
    except Exception as err:  # formulaic raises several parser error types
        raise FormulaError(
            f"parse_formula: the {what} {text!r} of {formula!r} is not a valid formulaic "
            f"expression: {decode_message(err)}"
        ) from err


def _parse_random(inner: str, formula: str) -> list[RandomTerm]:
    depth = _scan_depth(inner)
    masked = _mask(inner)
    bars = [i for i, ch in enumerate(masked) if ch == "|" and depth[i] == 0]
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
    nests = _split_top(group_text, "/")
    terms: list[RandomTerm] = []
    factors: tuple[str, ...] = ()
    for nest in nests:
        parts = tuple(_strip_name(p, formula) for p in _split_top(nest, ":"))
        factors = factors + parts
        terms.append(
            RandomTerm(group=":".join(factors), factors=factors, expr=expr, correlated=not double)
        )
    return terms


def _random_key(term: RandomTerm) -> tuple[frozenset[str], frozenset[frozenset[str]]]:
    """Return what a random-effects term models: its grouping factors and set of terms.

    Two terms with the same key are one term written twice: ``(1 | id)`` and ``(1 | id)``,
    ``(x | g)`` and ``(1 + x || g)``, ``(x:z | a:b)`` and ``(z:x | b:a)``.
    """
    from formulaic import Formula

    parsed = Formula(_encode(term.expr))
    effects = frozenset(frozenset(str(f) for f in t.factors) for t in parsed)
    return frozenset(term.factors), effects


def _check_random_terms(terms: list[RandomTerm], formula: str) -> None:
    """Refuse too many random-effects terms, and a term written twice."""

    def shown(term: RandomTerm) -> str:
        return f"({term.expr} {'|' if term.correlated else '||'} {term.group})"

    cut = f"{formula[:200]!r}{'...' if len(formula) > 200 else ''}"

    def refuse(term: RandomTerm, first: RandomTerm) -> None:
        again = "again" if shown(first) == shown(term) else f"as {shown(first)}"
        raise FormulaError(
            f"parse_formula: the random-effects term {shown(term)} repeats a term of {cut} "
            f"({again}): the same grouping factor {term.group!r} with the same terms is one "
            "term; write it once"
        )

    # a term written twice as the same text, found without parsing each (cheap at any count)
    written: dict[Any, RandomTerm] = {}
    for term in terms:
        key = (frozenset(term.factors), "".join(term.expr.split()))
        if key in written:
            refuse(term, written[key])
        written[key] = term
    if len(terms) > MAX_RANDOM_TERMS:
        raise FormulaError(
            f"parse_formula: {cut} has {len(terms):,} random-effects terms (after nesting is "
            f"expanded), more than {MAX_RANDOM_TERMS}"
        )
    seen: dict[Any, RandomTerm] = {}
    for term in terms:
        key = _random_key(term)
        if key in seen:
            refuse(term, seen[key])
        seen[key] = term


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
            if closes_at_end and "|" in _mask(inner):
                depth = _scan_depth(inner)
                if any(ch == "|" and depth[i] == 0 for i, ch in enumerate(_mask(inner))):
                    random_terms.extend(_parse_random(inner, formula))
                else:  # a parenthesised sum of terms, as R deparses `||` terms
                    _collect_terms(inner, formula, fixed_pieces, random_terms)
                continue
        if "|" in _mask(text):
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
        random term, an empty part, a part formulaic cannot parse, a random-effects term
        written twice (the same grouping factor with the same terms) or more than
        :data:`MAX_RANDOM_TERMS` (100) random-effects terms.

    Notes
    -----
    A formula is data, never code. Before anything is evaluated the text is tokenised and
    checked against an allow-list: data columns (names in backticks for odd column names),
    numbers, ``+ - * / : ** ^ | ~ ( ) ,``, and calls of :data:`TRANSFORMS` (``I``, ``C``,
    ``log``, ``exp``, ``sqrt``, ``center``, ``scale``, ``poly``, ``bs``, with ``name=value``
    arguments inside them). Attribute access, subscripts, braces, strings, Python keywords,
    names starting with an underscore and any other call raise :class:`FormulaError` naming
    the offending part; so do arithmetic beyond the bounds (integers of more than 15 digits,
    exponents that are not numbers of at most 10, powers of powers of numbers, ``poly`` degree
    above 10, ``bs`` df above 50 or degree above 10; see the module documentation). Names that
    are not columns of the data are refused when the design is built. A name in backticks is
    one column whatever it holds (:func:`quote_name`); a response written as one name is
    returned without backticks.

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
    tildes = [i for i, ch in enumerate(_mask(formula)) if ch == "~" and depth[i] == 0]
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
    _check_random_terms(random_terms, formula)
    fixed = " + ".join(fixed_pieces) if fixed_pieces else "1"
    _check_formulaic(fixed, formula, "fixed part")
    quoted = _QUOTED.fullmatch(lhs)
    if quoted:
        if not quoted.group(1):
            raise FormulaError(f"parse_formula: the response `` of {formula!r} names no column")
        lhs = _unquote(quoted.group(1))
    return FormulaSpec(
        formula=formula,
        response=lhs,
        fixed=fixed,
        random=tuple(random_terms),
        response_is_column=bool(quoted) or bool(_BARE_NAME.match(lhs)),
    )


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
    return _build_design(spec, data)  # the evaluation lives in models._design
