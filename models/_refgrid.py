"""The reference grid of estimated marginal means, shared by the linear and ordinal models.

emmeans' grid (Lenth; Searle, Speed & Milliken 1980): every level of each factor of the fixed
part and each covariate at its mean over the rows used; ``at`` replaces either. The combinations
are laid out as ``expand.grid`` does (the first predictor varying fastest). Beside it, the
coefficients of emmeans' contrast families (``pairwise.emmc``, ``trt.vs.ctrl.emmc``,
``consec.emmc``, ``poly.emmc``) with their labels.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pandas as pd

from models._design import _required_variables, _sorted_levels
from models._errors import InvalidParameterError

__all__ = [
    "check_request",
    "contrast_matrix",
    "level_labels",
    "fixed_variables",
    "grid_frame",
    "grid_values",
    "names_of",
    "predictor_frame",
    "product",
]


def predictor_frame(design: Any, data: pd.DataFrame) -> pd.DataFrame | None:
    """Return the fixed part's predictor columns on the rows used (None for a repeated index)."""
    names = [c for c in fixed_variables(design) if c in data.columns]
    if not data.index.is_unique:
        return None
    return data.loc[design.rows, names].copy()


def fixed_variables(design: Any) -> list[str]:
    """Return the data columns of the fixed part, in the order the formula names them."""
    text = design.spec.fixed
    names = _required_variables(text)
    return sorted(names, key=lambda n: (text.find(n) if n in text else len(text), n))


def factor_levels(design: Any, name: str, values: pd.Series) -> list[Any] | None:
    """Levels of a factor of the fixed part in its coding order; None for a covariate."""
    state = getattr(design._fixed_spec, "encoder_state", None) or {}
    pattern = re.compile(rf"C\(\s*{re.escape(name)}\s*(,.*)?\)")
    for key, (kind, detail) in state.items():
        if getattr(kind, "value", kind) == "categorical" and (
            key == name or pattern.fullmatch(key)
        ):
            return list(detail.get("categories", _sorted_levels(values)))
    if values.dtype.kind in "iuf":
        return None
    return list(_sorted_levels(values))


def names_of(value: Any, what: str, allowed: list[str], *, where: str) -> tuple[str, ...]:
    """Check ``specs`` or ``by``: a predictor name or a list of them, all in ``allowed``."""
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else list(value)
    if not names or not all(isinstance(n, str) for n in names):
        raise InvalidParameterError(
            f"the `{what}` parameter of {where} must be a predictor name or a list of them; "
            f"got {value!r}"
        )
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise InvalidParameterError(
            f"the `{what}` parameter of {where} names {unknown}, which are not predictors of "
            f"the fixed part; choose from {allowed}"
        )
    return tuple(names)


def grid_values(
    design: Any, frame: pd.DataFrame, names: list[str], at: dict[str, Any], *, where: str
) -> dict[str, list[Any]]:
    """Return the reference grid's values of each predictor (factor levels, covariate means)."""
    values: dict[str, list[Any]] = {}
    for name in names:
        levels = factor_levels(design, name, frame[name])
        if name in at:
            given = list(np.atleast_1d(np.asarray(at[name], dtype=object)))
            if levels is not None and any(v not in levels for v in given):
                raise InvalidParameterError(
                    f"the `at` parameter of {where}: {name!r} has the levels {levels}; got {given}"
                )
            values[name] = given if levels is not None else [float(v) for v in given]
        elif levels is None:
            values[name] = [float(frame[name].to_numpy(dtype=float).mean())]
        else:
            values[name] = levels
        if not values[name]:
            raise InvalidParameterError(
                f"the `at` parameter of {where} gives no value for {name!r}"
            )
    return values


def product(values: dict[str, list[Any]], names: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """Return the combinations of ``names``' values, the first varying fastest (expand.grid)."""
    combos = itertools.product(*[values[n] for n in reversed(names)])
    return [tuple(reversed(c)) for c in combos]


def grid_frame(frame: pd.DataFrame, values: dict[str, list[Any]]) -> pd.DataFrame:
    """Return the grid as a data frame with the original columns' types."""
    names = list(values)
    rows = product(values, tuple(names))
    columns = {}
    for j, name in enumerate(names):
        col = [r[j] for r in rows]
        original = frame[name]
        if isinstance(original.dtype, pd.CategoricalDtype):
            columns[name] = pd.Categorical(col, categories=original.cat.categories)
        elif original.dtype.kind in "iuf":
            columns[name] = np.asarray(col, dtype=float)
        else:
            columns[name] = pd.Series(col, dtype=original.dtype)
    return pd.DataFrame(columns)


def check_request(
    frame: pd.DataFrame | None, specs: Any, by: Any, at: Any, *, where: str
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, Any]]:
    """Check ``specs``, ``by`` and ``at`` against the predictors kept at fit."""
    if frame is None:
        raise InvalidParameterError(
            f"{where} needs the model fitted by .fit(data) on a data frame with a unique index "
            "(the reference grid is built from its predictors)"
        )
    names = list(frame.columns)
    spec_names = names_of(specs, "specs", names, where=where)
    by_names = names_of(by, "by", names, where=where)
    if not spec_names or set(spec_names) & set(by_names):
        raise InvalidParameterError(
            f"the `specs` and `by` parameters of {where} must name at least one predictor and "
            f"none twice; got specs={specs!r}, by={by!r}"
        )
    at = {} if at is None else at
    if not isinstance(at, dict) or any(k not in names for k in at):
        raise InvalidParameterError(
            f"the `at` parameter of {where} must be a dict of predictor names ({names}) to "
            f"values; got {at!r}"
        )
    return spec_names, by_names, at


def _label(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return format(float(value), ".15g")
    return str(value)


def _reads_as_number(labels: list[str]) -> bool:
    try:
        [float(v) for v in labels]
    except ValueError:
        return False
    return True


def level_labels(table: pd.DataFrame, specs: tuple[str, ...], rows: list[int]) -> list[str]:
    """Labels of the means ``rows`` for contrasts: numbers get the predictor's name first."""
    parts = []
    for name in specs:
        labels = [_label(v) for v in table[name].iloc[rows]]
        if _reads_as_number(labels):
            labels = [f"{name}{v}" for v in labels]
        parts.append(labels)
    return [" ".join(p) for p in zip(*parts, strict=True)]


_POLY_NAMES = ("linear", "quadratic", "cubic", "quartic")


def _poly_coefficients(k: int) -> tuple[np.ndarray, list[str]]:
    """Return the coefficients of ``poly.emmc``: orthogonal polynomials as small integers."""
    degree = min(6, k - 1)
    x = np.arange(1.0, k + 1.0)
    Q, R = np.linalg.qr(np.vander(x - x.mean(), degree + 1, increasing=True))
    Q = Q * np.sign(np.diag(R))
    rows = []
    for j in range(1, degree + 1):
        con = Q[:, j]
        con = con / np.min(con[con > 0.01])
        z = np.max(np.abs(con - np.round(con)))
        while z > 0.05:
            con = con / z
            z = np.max(np.abs(con - np.round(con)))
        rows.append(np.round(con))
    names = [_POLY_NAMES[j] if j < 4 else f"degree {j + 1}" for j in range(degree)]
    return np.vstack(rows), names


def contrast_matrix(method: str, labels: list[str]) -> tuple[np.ndarray, list[str]]:
    """Coefficients (one row per contrast) and names of emmeans' contrast families."""
    k = len(labels)
    eye = np.eye(k)
    if method == "pairwise":
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        return (
            np.array([eye[i] - eye[j] for i, j in pairs]).reshape(-1, k),
            [f"{labels[i]} - {labels[j]}" for i, j in pairs],
        )
    if method == "trt.vs.ctrl":
        rows = range(1, k)
        return (
            np.array([eye[i] - eye[0] for i in rows]).reshape(-1, k),
            [f"{labels[i]} - {labels[0]}" for i in rows],
        )
    if method == "consec":
        rows = range(1, k)
        return (
            np.array([eye[i] - eye[i - 1] for i in rows]).reshape(-1, k),
            [f"{labels[i]} - {labels[i - 1]}" for i in rows],
        )
    if k < 2:
        return np.zeros((0, k)), []
    return _poly_coefficients(k)
