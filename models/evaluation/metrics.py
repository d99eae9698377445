"""The prediction metrics: Pearson r, Spearman rho, accuracy and F1 after binarising, MSE."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from models._errors import DataQualityWarning, InvalidParameterError

METRIC_NAMES = ("r", "rho", "acc", "f1", "mse")
"""Metric columns of :func:`prediction_metrics` and of the evaluation tables, in order."""

NanPolicy = Literal["raise", "omit"]


def _pair(y_true: Any, y_pred: Any, *, func: str, nan_policy: str) -> tuple[np.ndarray, np.ndarray]:
    if nan_policy not in ("raise", "omit"):
        raise InvalidParameterError(
            f"the `nan_policy` parameter of {func} must be 'raise' or 'omit'; got {nan_policy!r}"
        )
    out = []
    for name, values in (("y_true", y_true), ("y_pred", y_pred)):
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as err:
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be numeric; got non-numeric values"
            ) from err
        if arr.ndim != 1:
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be 1-d; got shape {arr.shape}"
            )
        if np.isinf(arr).any():
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be finite; it holds infinite values"
            )
        out.append(arr)
    a, b = out
    if a.size != b.size:
        raise InvalidParameterError(
            f"the `y_true` and `y_pred` parameters of {func} must have the same length; "
            f"got {a.size} and {b.size}"
        )
    missing = np.isnan(a) | np.isnan(b)
    if missing.any():
        if nan_policy == "raise":
            raise InvalidParameterError(
                f"{func}: {int(missing.sum())} pair(s) have a missing value; drop them or pass "
                "nan_policy='omit'"
            )
        a, b = a[~missing], b[~missing]
    if a.size == 0:
        raise InvalidParameterError(f"{func}: no complete (y_true, y_pred) pair to evaluate")
    return a, b


def _check_threshold(threshold: Any, *, func: str) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float | np.number):
        raise InvalidParameterError(
            f"the `threshold` parameter of {func} must be a number; got {threshold!r}"
        )
    value = float(threshold)
    if not math.isfinite(value):
        raise InvalidParameterError(
            f"the `threshold` parameter of {func} must be finite; got {threshold!r}"
        )
    return value


def _correlation(a: np.ndarray, b: np.ndarray, *, func: str) -> float:
    if a.size < 2:
        warnings.warn(
            f"{func}: a correlation needs at least 2 pairs; got {a.size}; returning NaN",
            DataQualityWarning,
            stacklevel=3,
        )
        return float("nan")
    constant = [name for name, v in (("y_true", a), ("y_pred", b)) if np.all(v == v[0])]
    if constant:
        warnings.warn(
            f"{func}: {' and '.join(constant)} is constant, so the correlation is undefined; "
            "returning NaN",
            DataQualityWarning,
            stacklevel=3,
        )
        return float("nan")
    da = a - a.mean()
    db = b - b.mean()
    r = float(np.dot(da, db) / math.sqrt(float(np.dot(da, da)) * float(np.dot(db, db))))
    return min(1.0, max(-1.0, r))


def pearson_r(y_true: Any, y_pred: Any, *, nan_policy: NanPolicy = "raise") -> float:
    """Pearson correlation between observed and predicted values.

    Parameters
    ----------
    y_true, y_pred : array-like of float
        Observed and predicted values, same length.
    nan_policy : {"raise", "omit"}, default "raise"
        What to do with pairs that have a missing value.

    Returns
    -------
    float
        ``r``; NaN (with a :class:`~models.DataQualityWarning`) when either vector is constant
        or there are fewer than 2 pairs.

    Raises
    ------
    models.InvalidParameterError
        For non-numeric, multi-dimensional, infinite or unequal-length input, missing values
        under ``nan_policy="raise"``, or no pair left.

    Notes
    -----
    ``r = sum (x - xbar)(y - ybar) / sqrt(sum (x - xbar)^2 sum (y - ybar)^2)``, clipped to
    [-1, 1]. Agrees with ``scipy.stats.pearsonr`` to 1e-12 (tests).

    Examples
    --------
    >>> from models.evaluation import pearson_r
    >>> round(pearson_r([1, 2, 3, 4], [1, 3, 2, 4]), 6)
    0.8
    """
    a, b = _pair(y_true, y_pred, func="pearson_r", nan_policy=nan_policy)
    return _correlation(a, b, func="pearson_r")


def spearman_rho(y_true: Any, y_pred: Any, *, nan_policy: NanPolicy = "raise") -> float:
    """Spearman rank correlation between observed and predicted values.

    Parameters
    ----------
    y_true, y_pred : array-like of float
        Observed and predicted values, same length.
    nan_policy : {"raise", "omit"}, default "raise"
        What to do with pairs that have a missing value.

    Returns
    -------
    float
        ``rho``; NaN (with a :class:`~models.DataQualityWarning`) when either vector is
        constant or there are fewer than 2 pairs.

    Raises
    ------
    models.InvalidParameterError
        As :func:`pearson_r`.

    Notes
    -----
    The Pearson correlation of the ranks, ties given their average rank (``rankdata``
    method ``"average"``), which is ``scipy.stats.spearmanr``'s definition; agrees with it
    to 1e-12 (tests). Ratings on a 1-5 scale have many ties, so the tie rule matters.

    Examples
    --------
    >>> from models.evaluation import spearman_rho
    >>> spearman_rho([1, 2, 3, 4], [10, 20, 30, 100])
    1.0
    """
    from scipy.stats import rankdata  # loaded by the first rank correlation, not at import

    a, b = _pair(y_true, y_pred, func="spearman_rho", nan_policy=nan_policy)
    return _correlation(rankdata(a), rankdata(b), func="spearman_rho")


def binarize(values: Any, *, threshold: float) -> np.ndarray:
    """Positive ("empathic") when a value is strictly greater than ``threshold``.

    Parameters
    ----------
    values : array-like of float
        Ratings or predictions.
    threshold : float
        The cut (a value is positive when strictly greater). The empathy benchmark uses the
        midpoint of the study's scale by default: 3.0 on a 1-5 scale, so whole-number ratings
        4 and 5 are positive; 4.0 on a 1-7 scale.

    Returns
    -------
    numpy.ndarray of bool
        ``values > threshold``.

    Raises
    ------
    models.InvalidParameterError
        For a non-finite or non-numeric threshold or non-numeric values.

    Examples
    --------
    >>> from models.evaluation import binarize
    >>> binarize([1, 3, 3.2, 4, 5], threshold=3.0).tolist()
    [False, False, True, True, True]
    """
    thr = _check_threshold(threshold, func="binarize")
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            "the `values` parameter of binarize must be numeric; got non-numeric values"
        ) from err
    return arr > thr


def binary_accuracy(
    y_true: Any,
    y_pred: Any,
    *,
    threshold: float,
    nan_policy: NanPolicy = "raise",
) -> float:
    """Share of rows on the same side of ``threshold`` in observation and prediction.

    Parameters
    ----------
    y_true, y_pred : array-like of float
        Observed and predicted values, same length.
    threshold : float
        Binarisation cut (see :func:`binarize`).
    nan_policy : {"raise", "omit"}, default "raise"
        What to do with pairs that have a missing value.

    Returns
    -------
    float
        ``(TP + TN) / n``, in [0, 1].

    Raises
    ------
    models.InvalidParameterError
        As :func:`pearson_r`, or for a bad threshold.

    Examples
    --------
    >>> from models.evaluation import binary_accuracy
    >>> binary_accuracy([1, 4, 5, 2], [3.5, 4.2, 2.0, 1.0], threshold=3.0)
    0.5
    """
    func = "binary_accuracy"
    thr = _check_threshold(threshold, func=func)
    a, b = _pair(y_true, y_pred, func=func, nan_policy=nan_policy)
    return float(np.mean((a > thr) == (b > thr)))


def binary_f1(
    y_true: Any,
    y_pred: Any,
    *,
    threshold: float,
    nan_policy: NanPolicy = "raise",
) -> float:
    """F1 score of the positive class after binarising at ``threshold``.

    Parameters
    ----------
    y_true, y_pred : array-like of float
        Observed and predicted values, same length.
    threshold : float
        Binarisation cut (see :func:`binarize`).
    nan_policy : {"raise", "omit"}, default "raise"
        What to do with pairs that have a missing value.

    Returns
    -------
    float
        ``2 TP / (2 TP + FP + FN)``; NaN (with a :class:`~models.DataQualityWarning`) when
        neither vector has a positive, where F1 is undefined.

    Raises
    ------
    models.InvalidParameterError
        As :func:`binary_accuracy`.

    Notes
    -----
    The harmonic mean of precision ``TP / (TP + FP)`` and recall ``TP / (TP + FN)``; the
    form above is the same number and stays defined when one of them is 0/0 (F1 is then 0).
    Equal to scikit-learn's ``f1_score(average="binary")`` wherever that is defined.

    Examples
    --------
    >>> from models.evaluation import binary_f1
    >>> binary_f1([1, 4, 5, 2], [3.5, 4.2, 2.0, 1.0], threshold=3.0)
    0.5
    """
    func = "binary_f1"
    thr = _check_threshold(threshold, func=func)
    a, b = _pair(y_true, y_pred, func=func, nan_policy=nan_policy)
    t, p = a > thr, b > thr
    tp = int(np.sum(t & p))
    fp = int(np.sum(~t & p))
    fn = int(np.sum(t & ~p))
    denom = 2 * tp + fp + fn
    if denom == 0:
        warnings.warn(
            f"{func}: no positive (> {thr:g}) in y_true or y_pred, so F1 is undefined; "
            "returning NaN",
            DataQualityWarning,
            stacklevel=2,
        )
        return float("nan")
    return 2.0 * tp / denom


def mean_squared_error(y_true: Any, y_pred: Any, *, nan_policy: NanPolicy = "raise") -> float:
    """Mean squared error of the predictions, on the data's scale.

    Parameters
    ----------
    y_true, y_pred : array-like of float
        Observed and predicted values, same length.
    nan_policy : {"raise", "omit"}, default "raise"
        What to do with pairs that have a missing value.

    Returns
    -------
    float
        ``mean((y_true - y_pred)^2)``.

    Raises
    ------
    models.InvalidParameterError
        As :func:`pearson_r`.

    Examples
    --------
    >>> from models.evaluation import mean_squared_error
    >>> mean_squared_error([1, 2, 3], [1, 2, 5])
    1.3333333333333333
    """
    a, b = _pair(y_true, y_pred, func="mean_squared_error", nan_policy=nan_policy)
    d = a - b
    return float(np.dot(d, d) / d.size)


@dataclass(frozen=True, repr=False)
class PredictionMetrics(Result):
    """The five benchmark metrics of one set of predictions.

    Follows the result protocol (:mod:`_empathic_base.results`): ``summary()``, ``to_frame()``
    (one row, the fields as columns) and ``to_dict()`` (the fields, for a row of a metrics
    table).

    Attributes
    ----------
    r, rho, acc, f1, mse : float
        Pearson r, Spearman rho, accuracy, binary F1 and MSE, each multiplied by ``scale``.
    n : int
        Pairs evaluated.
    threshold : float
        Binarisation cut used for ``acc`` and ``f1`` (positive: value > threshold).
    scale : float
        The multiplier (100 for the paper's tables).
    """

    r: float
    rho: float
    acc: float
    f1: float
    mse: float
    n: int
    threshold: float
    scale: float

    def _title(self) -> str:
        return (
            f"PredictionMetrics: {self.n} pairs, r = {self.r:.4g}, rho = {self.rho:.4g}, "
            f"acc = {self.acc:.4g}, f1 = {self.f1:.4g}, mse = {self.mse:.4g}"
        )

    def _parts(self) -> list[tuple[str, Any]]:
        return [("Metrics", pd.DataFrame([asdict(self)]))]

    def to_dict(self) -> dict[str, float | int]:  # type: ignore[override]
        """Return the fields as a plain dict (for a row of a metrics table)."""
        return asdict(self)


def prediction_metrics(
    y_true: Any,
    y_pred: Any,
    *,
    threshold: float,
    scale: float = 100.0,
    nan_policy: NanPolicy = "raise",
) -> PredictionMetrics:
    """Pearson r, Spearman rho, accuracy, F1 and MSE in one call, x 100 by default.

    Parameters
    ----------
    y_true, y_pred : array-like of float
        Observed ratings and predictions (point predictions on the rating scale).
    threshold : float
        Binarisation cut for accuracy and F1 (positive: value > threshold).
    scale : float, default 100.0
        Multiplier applied to every metric (the paper reports x 100); 1 gives raw values.
    nan_policy : {"raise", "omit"}, default "raise"
        What to do with pairs that have a missing value.

    Returns
    -------
    PredictionMetrics
        ``r, rho, acc, f1, mse`` (scaled), ``n``, ``threshold`` and ``scale``.

    Raises
    ------
    models.InvalidParameterError
        As the individual metrics, or for a non-positive or non-finite ``scale``.

    Warns
    -----
    models.DataQualityWarning
        When a metric is undefined (constant predictions for r and rho, no positive for F1);
        that metric is NaN.

    Notes
    -----
    See the module docstring for which parts of these definitions come from the paper and
    which are this package's choices (threshold, tie rule, F1 variant).

    Examples
    --------
    >>> from models.evaluation import prediction_metrics
    >>> m = prediction_metrics([1, 2, 4, 5], [1.0, 2.0, 4.0, 5.0], threshold=3.0)
    >>> m.r, m.acc, m.f1, m.mse
    (100.0, 100.0, 100.0, 0.0)
    """
    func = "prediction_metrics"
    if (
        isinstance(scale, bool)
        or not isinstance(scale, int | float | np.number)
        or not math.isfinite(float(scale))
        or scale <= 0
    ):
        raise InvalidParameterError(
            f"the `scale` parameter of {func} must be a positive number; got {scale!r}"
        )
    thr = _check_threshold(threshold, func=func)
    a, b = _pair(y_true, y_pred, func=func, nan_policy=nan_policy)
    k = float(scale)
    return PredictionMetrics(
        r=k * pearson_r(a, b),
        rho=k * spearman_rho(a, b),
        acc=k * binary_accuracy(a, b, threshold=thr),
        f1=k * binary_f1(a, b, threshold=thr),
        mse=k * mean_squared_error(a, b),
        n=int(a.size),
        threshold=thr,
        scale=k,
    )


def summarize_metrics(
    metrics: pd.DataFrame,
    *,
    by: Sequence[str] = ("model", "split"),
    metric_cols: Sequence[str] = METRIC_NAMES,
) -> pd.DataFrame:
    """Mean and standard deviation of each metric over seeds (or folds).

    Parameters
    ----------
    metrics : pandas.DataFrame
        One row per model x split x seed, e.g. the ``metrics.csv`` of an evaluation.
    by : sequence of str, default ("model", "split")
        Columns identifying a cell of the summary table; order of first appearance is kept.
    metric_cols : sequence of str, default ("r", "rho", "acc", "f1", "mse")
        Metric columns to summarise.

    Returns
    -------
    pandas.DataFrame
        One row per ``by`` combination: the ``by`` columns, ``n`` (rows summarised), then for
        every metric ``m``: ``m_mean``, ``m_sd`` (sample SD, ``ddof=1``; NaN for a single
        row) and ``m_n`` (rows where ``m`` is defined; NaN metrics are left out of the mean
        and SD, and ``m_n`` says how many remain).

    Raises
    ------
    models.InvalidParameterError
        When ``metrics`` is not a DataFrame or lacks a column.

    Examples
    --------
    >>> import pandas as pd
    >>> from models.evaluation import summarize_metrics
    >>> m = pd.DataFrame({"model": ["a", "a"], "split": ["test", "test"], "seed": [0, 1],
    ...                   "r": [20.0, 30.0], "rho": [10.0, 20.0], "acc": [60.0, 70.0],
    ...                   "f1": [50.0, 60.0], "mse": [120.0, 110.0]})
    >>> summarize_metrics(m)[["model", "n", "r_mean", "r_sd"]]
      model  n  r_mean      r_sd
    0     a  2    25.0  7.071068
    """
    func = "summarize_metrics"
    if not isinstance(metrics, pd.DataFrame):
        raise InvalidParameterError(
            f"the `metrics` parameter of {func} must be a pandas DataFrame; "
            f"got {type(metrics).__name__}"
        )
    by = [by] if isinstance(by, str) else list(by)
    cols = [metric_cols] if isinstance(metric_cols, str) else list(metric_cols)
    missing = [c for c in [*by, *cols] if c not in metrics.columns]
    if missing:
        raise InvalidParameterError(
            f"the `metrics` parameter of {func} lacks the column(s) {missing}"
        )
    rows = []
    for key, block in metrics.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key, strict=True))
        row["n"] = len(block)
        for c in cols:
            values = pd.to_numeric(block[c], errors="coerce").to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            row[f"{c}_mean"] = float(values.mean()) if values.size else float("nan")
            row[f"{c}_sd"] = float(values.std(ddof=1)) if values.size > 1 else float("nan")
            row[f"{c}_n"] = int(values.size)
        rows.append(row)
    columns = [*by, "n"] + [f"{c}_{s}" for c in cols for s in ("mean", "sd", "n")]
    return pd.DataFrame(rows, columns=columns)
