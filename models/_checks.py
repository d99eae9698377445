"""Parameter checks of the models package: one wording for every function.

``check_bool`` and ``check_unit`` are the distribution's shared checks (``_empathic_base``),
re-exported here so that the package's modules import every check from this one place. On
the command line a check names the option that sets the parameter (:mod:`_empathic_base.words`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from _empathic_base.checks import check_bool, check_unit
from _empathic_base.words import parameter
from models._errors import FormulaError, InvalidParameterError

if TYPE_CHECKING:
    from models.formula import Design

__all__ = [
    "check_bool",
    "check_choice",
    "check_design",
    "check_int",
    "check_seed",
    "check_unit",
]


def check_choice(value: Any, allowed: Sequence[str], *, name: str, where: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidParameterError(
            f"{parameter(name, where)} must be one of {list(allowed)}; got {value!r}"
        )
    return value


def check_int(value: Any, *, name: str, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidParameterError(
            f"{parameter(name, where)} must be an integer >= {minimum}; got {value!r}"
        )
    return int(value)


def check_seed(value: Any, *, where: str, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        wanted = "a non-negative integer or None" if optional else "a non-negative integer"
        raise InvalidParameterError(f"{parameter('seed', where)} must be {wanted}; got {value!r}")
    return int(value)


def check_design(
    design: Design, *, where: str, fixed_only: str = "use ordinary least squares"
) -> None:
    """Refuse a design whose fixed effects are aliased or whose groups cannot carry effects."""
    X = design.X.to_numpy()
    n, p = X.shape
    formula = design.spec.formula
    if not design.random:
        raise FormulaError(
            f"{where}: the formula {formula!r} has no random-effects term; "
            f"add one such as '(1 | group)' (for a fixed-effects model {fixed_only})"
        )
    if p >= n:
        raise FormulaError(f"{where}: {p} fixed-effect columns for {n} observations in {formula!r}")
    if p and np.linalg.matrix_rank(X) < p:
        kept: list[int] = []
        aliased = []
        for j in range(p):
            if np.linalg.matrix_rank(X[:, kept + [j]]) == len(kept) + 1:
                kept.append(j)
            else:
                aliased.append(str(design.X.columns[j]))
        if aliased:
            raise FormulaError(
                f"{where}: the fixed-effects matrix of {formula!r} is rank deficient; "
                f"the column(s) {aliased} are linear combinations of the others. Remove them "
                "from the formula or check the data (e.g. a factor level that never occurs)."
            )
    for block in design.random:
        if block.n_levels < 2:
            raise FormulaError(
                f"{where}: the grouping factor {block.group!r} of {formula!r} has "
                f"{block.n_levels} level in the rows used; random effects need at least 2 "
                "levels (remove the term or check the data)"
            )
        q = block.n_levels * len(block.terms)
        if block.n_levels >= n or q > n:
            raise FormulaError(
                f"{where}: the grouping factor {block.group!r} has "
                f"{block.n_levels} levels for {len(block.terms)} random-effect column(s) and "
                f"{n} observations; the random effects and the residual variance are not "
                "identifiable (lme4 refuses the same fit)"
            )
