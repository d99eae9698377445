"""Smooth terms ``s(...)`` of a linear mixed model formula: parsing and the checks on data.

A formula's right-hand side may hold any number of smooth terms, each a term of its own joined
to the others by ``+``::

    y ~ s(x1) + s(x2, bs="cr", k=6) + s(x3, by=cond) + cond + (1 | g)

``s(x, bs=..., k=..., by=...)`` takes one numeric column; ``bs`` is mgcv's thin plate
regression spline ``"tp"`` (the default) or the cubic regression spline ``"cr"``; ``k`` the
basis dimension (default 10, from 4 to 20); ``by`` a factor column (one smooth per level, each
with its own smoothing parameter, as mgcv builds them; the factor's main effect must be in the
formula as mgcv requires). ``s(x, f, bs="fs", xt="cr", k=...)`` is a factor-smooth interaction:
a cubic regression spline of ``x`` per level of the factor ``f``, shrunk to zero
(:mod:`models.lmm._smooth_fs`); ``xt=list(bs="cr")`` says the same. Its default base, the thin
plate spline, is refused: gamm4 fits it along null-space directions that rounding picks (see
:data:`FS_TP_REFUSAL`). :func:`split_smooth` takes the smooth terms out of a formula and leaves
the rest for :func:`models.formula.parse_formula`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models._errors import FormulaError, InvalidParameterError
from models._spec import _QUOTED, _mask, _scan_depth, _split_top, _unquote

DEFAULT_K = 10
"""mgcv's default basis dimension for one covariate."""

MIN_K, MAX_K = 4, 20
"""Basis dimensions accepted (at 3, mgcv's minimum, one penalised coefficient is left: lme4 refuses
a random-effect block of one level, and gamm4 with it)."""

BASES = ("tp", "cr")
"""The bases offered: mgcv's thin plate regression spline (default) and cubic regression spline."""

FS_TP_REFUSAL = (
    "gamm4 penalises each direction of a factor smooth's null space apart, and with the thin "
    "plate base those directions are picked by rounding (reordering sleepstudy's rows moves the "
    "REML criterion from 1762.37 to 1754.63), so the fit is not reproducible; the cubic "
    'regression spline base is: write s(x, f, bs="fs", xt="cr")'
)
"""Why ``bs="fs"`` with the thin plate base (mgcv's default) is refused, and what to write."""

_SMOOTH_CALL = re.compile(r"s\s*\(")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_USAGE = 's(x), s(x, k=6), s(x, bs="cr"), s(x, by=group) or s(x, group, bs="fs", xt="cr")'
_XT_CR = re.compile(r"""(["'])cr\1|list\(\s*bs\s*=\s*(["'])cr\2\s*\)""")


@dataclass(frozen=True)
class SmoothTerm:
    """One ``s(...)`` term as written: the column, basis, dimension, ``by`` factor and text.

    ``factor`` is the factor of a factor-smooth interaction (``bs="fs"``), whose base basis is
    ``bs``; None for any other smooth.
    """

    column: str
    k: int
    text: str
    bs: str = "tp"
    by: str | None = None
    factor: str | None = None

    @property
    def label(self) -> str:
        """Label of the smooth as mgcv writes it: ``s(x)`` (by levels add more), ``s(x,f)``."""
        if self.factor is not None:
            return f"s({self.column},{self.factor})"
        return f"s({self.column})"


def _column_name(arg: str, text: str, formula: str, what: str) -> str:
    quoted = _QUOTED.fullmatch(arg)
    if quoted and quoted.group(1):
        return _unquote(quoted.group(1))
    if _NAME.fullmatch(arg):
        return arg
    raise FormulaError(f"{text!r} in {formula!r}: {arg!r} is not a column name ({what})")


def _smooth_arguments(text: str, formula: str) -> SmoothTerm:
    inner = text[text.index("(") + 1 : -1]
    args = [a.strip() for a in _split_top(inner, ",")]
    if not args or not args[0] or "=" in _mask(args[0]):
        raise FormulaError(f"{text!r} in {formula!r} names no column: write {_USAGE}")
    column = _column_name(args[0], text, formula, "the smooth's covariate")
    factor = None
    if len(args) > 1 and args[1] and "=" not in _mask(args[1]):
        factor = _column_name(args[1], text, formula, "the factor of a factor smooth")
        args = [args[0], *args[2:]]
    k, bs, by, xt = DEFAULT_K, "tp", None, None
    for arg in args[1:]:
        name, _, value = (p.strip() for p in arg.partition("="))
        if name == "k" and re.fullmatch(r"[0-9]+", value) and MIN_K <= int(value) <= MAX_K:
            k = int(value)
        elif name == "k":
            raise FormulaError(
                f"{text!r} in {formula!r}: k must be a whole number from {MIN_K} to {MAX_K}; "
                f"got {value!r}"
            )
        elif name == "bs":
            bs = value.strip("\"'")
            quoted = value[:1] in "\"'" and value[:1] == value[-1:]
            if bs not in (*BASES, "fs") or not quoted:
                raise FormulaError(
                    f'{text!r} in {formula!r}: the basis must be bs="tp" (thin plate '
                    f'regression spline, the default), bs="cr" (cubic regression spline) or '
                    f'bs="fs" (a factor smooth, with xt="cr"); got bs={value}'
                )
        elif name == "xt":
            xt = value
        elif name == "by" and value:
            by = _column_name(value, text, formula, "the by= factor")
        else:
            raise FormulaError(
                f"{text!r} in {formula!r}: unknown argument {arg!r}; s() takes the column, "
                'bs="tp", "cr" or "fs", k and by (a factor smooth also its factor and xt)'
            )
    if bs != "fs":
        if factor is not None or xt is not None:
            raise FormulaError(
                f"{text!r} in {formula!r}: a second column and xt= belong to a factor smooth, "
                f's(x, f, bs="fs", xt="cr"); for one smooth per level write s(x, by=f) + f'
            )
        return SmoothTerm(column=column, k=k, text=text, bs=bs, by=by)
    return _factor_smooth(text, formula, column, factor, k, by, xt)


def _factor_smooth(
    text: str, formula: str, column: str, factor: str | None, k: int, by, xt: str | None
) -> SmoothTerm:
    """Check a ``bs="fs"`` term: one factor, the cubic regression spline base, no ``by``."""
    if factor is None:
        raise FormulaError(
            f"{text!r} in {formula!r}: a factor smooth names its covariate, then its factor: "
            f's({column}, f, bs="fs", xt="cr")'
        )
    if by is not None:
        raise FormulaError(
            f'{text!r} in {formula!r}: a factor smooth (bs="fs") takes no by=; its factor '
            f"{factor!r} already gives one curve per level"
        )
    if xt is None or not _XT_CR.fullmatch(xt):
        got = "no xt (the thin plate base)" if xt is None else f"xt={xt}"
        raise FormulaError(f"{text!r} in {formula!r}: {FS_TP_REFUSAL}; got {got}")
    return SmoothTerm(column=column, k=k, text=text, bs="cr", factor=factor)


def split_smooth(formula: str) -> tuple[str, tuple[SmoothTerm, ...]]:
    """Take the ``s(...)`` terms out of a formula; return the rest and the terms (maybe none).

    Raises
    ------
    FormulaError
        For a malformed ``s(...)``, a basis other than ``"tp"``, ``"cr"`` or ``"fs"`` (the
        latter with ``xt="cr"``), a ``k`` outside 4 to 20, a smooth that is not a term of its
        own, or the same smooth twice.
    """
    if not _SMOOTH_CALL.search(_mask(formula)):
        return formula, ()
    depth = _scan_depth(formula)
    tildes = [i for i, ch in enumerate(_mask(formula)) if ch == "~" and depth[i] == 0]
    if len(tildes) != 1:
        return formula, ()  # parse_formula reports it
    lhs, rhs = formula[: tildes[0]], formula[tildes[0] + 1 :]
    kept, smooths = [], []
    for piece in _split_top(rhs, "+"):
        text = piece.strip()
        if re.fullmatch(r"s\s*\(.*\)", text, flags=re.DOTALL) and _closes_at_end(text):
            smooths.append(_smooth_arguments(text, formula))
        elif _SMOOTH_CALL.search(_mask(text)) and re.search(r"(?<![A-Za-z0-9_.])s\s*\(", text):
            raise FormulaError(
                f"{text!r} in {formula!r}: a smooth must be a term of its own, "
                "joined to the others by '+'"
            )
        else:
            kept.append(text)
    if not smooths:
        return formula, ()
    seen: dict[tuple[str, str | None, str | None], str] = {}
    for term in smooths:
        key = (term.column, term.by, term.factor)
        if key in seen:
            raise FormulaError(
                f"{formula!r} has two smooths of {term.column!r}"
                + (f" by {term.by!r}" if term.by else "")
                + (f" and {term.factor!r}" if term.factor else "")
                + f" ({seen[key]} and {term.text}); write each smooth once"
            )
        seen[key] = term.text
    if not any(not (t.startswith("(") and "|" in t) for t in kept):
        kept.insert(0, "1")
    return f"{lhs.strip()} ~ {' + '.join(kept)}", tuple(smooths)


def _closes_at_end(text: str) -> bool:
    depth = _scan_depth(text)
    start = text.index("(")
    return all(d > 0 for d in depth[start + 1 : -1])


def check_by_main_effect(term: SmoothTerm, fixed: str, formula: str) -> None:
    """Refuse a ``by`` smooth whose factor's main effect is not a term of the fixed part."""
    terms = {t.strip() for t in _split_top(fixed, "+")}
    names = {term.by, f"`{term.by}`", f"C({term.by})"}
    if not terms & names:
        raise FormulaError(
            f"the smooth {term.text!r} in {formula!r} is by the factor {term.by!r}, whose main "
            f"effect must be in the formula as mgcv requires (each level's smooth is centred): "
            f"add + {term.by}"
        )


def smooth_column(data: pd.DataFrame, term: SmoothTerm) -> None:
    """Refuse a smooth's column that is missing, not numeric, or has fewer than k unique values."""
    if term.column not in data.columns:
        raise FormulaError(
            f"the smooth {term.text!r} names a column {term.column!r} not in the data"
        )
    col = data[term.column]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise InvalidParameterError(
            f"the smooth {term.text!r} needs a numeric column; {term.column!r} is {col.dtype}"
        )
    values = col.to_numpy(dtype=float)
    if not np.all(np.isfinite(values[~np.isnan(values)])):
        raise InvalidParameterError(
            f"the smooth {term.text!r}: column {term.column!r} holds infinite values"
        )
    unique = np.unique(values[~np.isnan(values)]).size
    if unique < term.k:
        raise InvalidParameterError(
            f"the smooth {term.text!r}: column {term.column!r} has {unique} unique values, fewer "
            f"than k = {term.k}; reduce k"
        )


def by_column(data: pd.DataFrame, term: SmoothTerm, column: str | None = None) -> None:
    """Refuse a ``by`` column (or a factor smooth's factor) that is missing or numeric."""
    column = term.by if column is None else column
    what = "by= column" if column == term.by else "factor"
    if column not in data.columns:
        raise FormulaError(f"the smooth {term.text!r} names a {what} {column!r} not in the data")
    col = data[column]
    if pd.api.types.is_numeric_dtype(col) and not isinstance(col.dtype, pd.CategoricalDtype):
        raise InvalidParameterError(
            f"the smooth {term.text!r}: "
            + ("by= must name" if what == "by= column" else "the second column must be")
            + f" a factor (a text or categorical column); {column!r} is {col.dtype}"
            + (" (numeric by= variables are not supported)" if what == "by= column" else "")
        )


def by_levels(values: pd.Series) -> list:
    """Return the levels of a by factor in R's order: a categorical's categories, else sorted."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return [c for c in values.cat.categories if (values == c).any()]
    return sorted(pd.unique(values.dropna()), key=str)
