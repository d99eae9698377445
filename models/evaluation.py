"""Out-of-person evaluation: participant-grouped splits and the prediction metrics.

Predicting a participant's rating for people a model has never seen needs two ingredients
that do not depend on any model, and this module holds them:

- splitters that take the participant id of every row and a seed and return row positions,
  :func:`grouped_split` (train/validation/test) and :func:`grouped_kfold` (K folds), plus
  :func:`overlapping_groups`, the leakage check (which groups fall in more than one part);
- the metrics, computed with NumPy/SciPy only: :func:`pearson_r`, :func:`spearman_rho`,
  :func:`binary_accuracy` and :func:`binary_f1` after :func:`binarize`,
  :func:`mean_squared_error`, the one-call :func:`prediction_metrics` (x 100 by default),
  :func:`summarize_metrics` (mean and SD over seeds) and :func:`kfold_bootstrap`
  (participant-cluster intervals of pooled out-of-fold metrics).

Conventions
-----------
- A value is *positive* when it is strictly greater than ``threshold``, which every
  binarising function requires (no default: it belongs to the study; the EmpathicStories++
  benchmark's choice, 3 on the 1-5 scale, lives in :mod:`longitudinal.predict.benchmark`);
- the split shares are required too (the paper's 70/20/10 is
  :data:`longitudinal.splits.SPLIT_SIZES`);
- F1 is the binary F1 of the positive class, ``2 TP / (2 TP + FP + FN)``;
- MSE is computed on the rating scale, before the x 100;
- the mean and SD over seeds use the sample SD (``ddof=1``).

Examples
--------
>>> import numpy as np
>>> from models.evaluation import grouped_split, overlapping_groups, prediction_metrics
>>> groups = np.repeat([f"P{i:02d}" for i in range(10)], 3)
>>> split = grouped_split(groups, sizes=(0.7, 0.2, 0.1), seed=1)
>>> [len(set(groups[p])) for p in (split.train, split.val, split.test)]
[7, 2, 1]
>>> overlapping_groups(groups, [split.train, split.val, split.test])
[]
>>> m = prediction_metrics([1, 2, 4, 5, 3], [1.5, 2.5, 3.5, 4.5, 3.2], threshold=3.0)
>>> round(m.r, 1), m.acc, m.threshold
(98.7, 80.0, 3.0)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from scipy.stats import t as student_t

from models._checks import check_int, check_seed, check_unit
from models._errors import DataQualityWarning, InvalidParameterError

__all__ = [
    "BOOTSTRAP_COLUMNS",
    "COMPARISON_COLUMNS",
    "LOWER_IS_BETTER",
    "METRIC_NAMES",
    "GroupedFold",
    "GroupedSplit",
    "KFoldBootstrap",
    "PredictionMetrics",
    "binarize",
    "binary_accuracy",
    "binary_f1",
    "grouped_kfold",
    "grouped_split",
    "kfold_bootstrap",
    "mean_squared_error",
    "overlapping_groups",
    "pearson_r",
    "prediction_metrics",
    "spearman_rho",
    "summarize_metrics",
    "weighted_metrics",
]

METRIC_NAMES = ("r", "rho", "acc", "f1", "mse")
"""Metric columns of :func:`prediction_metrics` and of the evaluation tables, in order."""

NanPolicy = Literal["raise", "omit"]


# ---------------------------------------------------------------------------------------------
# validation helpers


def _as_groups(groups: Any, *, func: str) -> np.ndarray:
    if isinstance(groups, str | bytes) or not hasattr(groups, "__len__"):
        raise InvalidParameterError(
            f"the `groups` parameter of {func} must be a 1-d array of group labels (one per "
            f"row); got {type(groups).__name__}"
        )
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"the `groups` parameter of {func} must be 1-d; got an array of shape {arr.shape}"
        )
    if arr.size == 0:
        raise InvalidParameterError(f"the `groups` parameter of {func} is empty")
    missing = pd.isna(arr)
    if missing.any():
        raise InvalidParameterError(
            f"the `groups` parameter of {func} has {int(missing.sum())} missing label(s) "
            f"(first at row position {int(np.flatnonzero(missing)[0])}); every row needs a group"
        )
    return arr


def _unique_groups(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique labels (by their string form, so mixed types sort) and row codes."""
    labels = pd.unique(arr)
    order = sorted(range(len(labels)), key=lambda i: (str(labels[i]), type(labels[i]).__name__))
    labels = labels[order]
    codes = pd.Index(labels).get_indexer(arr)
    return np.asarray(labels, dtype=object), codes


def _rows_of(codes: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.isin(codes, chosen))


# ---------------------------------------------------------------------------------------------
# splits


@dataclass(frozen=True)
class GroupedSplit:
    """Row positions of a train/validation/test split that keeps each group in one part.

    Attributes
    ----------
    train, val, test : numpy.ndarray
        Sorted integer row positions (into the ``groups`` array that was split).
    train_groups, val_groups, test_groups : tuple
        The group labels of each part, sorted.
    sizes : tuple of float
        The requested shares.
    seed : int
        The seed that drew the split.
    """

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    train_groups: tuple[Any, ...]
    val_groups: tuple[Any, ...]
    test_groups: tuple[Any, ...]
    sizes: tuple[float, float, float]
    seed: int


@dataclass(frozen=True)
class GroupedFold:
    """One fold of :func:`grouped_kfold`.

    Attributes
    ----------
    fold : int
        Fold number, 0 to ``k - 1``.
    train, test : numpy.ndarray
        Sorted integer row positions.
    train_groups, test_groups : tuple
        Group labels of each part, sorted.
    seed : int
        The seed that drew the folds.
    """

    fold: int
    train: np.ndarray
    test: np.ndarray
    train_groups: tuple[Any, ...]
    test_groups: tuple[Any, ...]
    seed: int


def _allocate(n: int, sizes: Sequence[float]) -> list[int]:
    """Largest-remainder allocation of ``n`` groups to ``sizes`` (ties go to the earlier part)."""
    exact = [s * n for s in sizes]
    counts = [math.floor(e + 1e-9) for e in exact]
    remainders = [e - c for e, c in zip(exact, counts, strict=True)]
    for i in sorted(range(len(sizes)), key=lambda j: (-remainders[j], j))[: n - sum(counts)]:
        counts[i] += 1
    return counts


def grouped_split(
    groups: Sequence[Any] | np.ndarray | pd.Series,
    *,
    sizes: tuple[float, float, float],
    seed: int,
) -> GroupedSplit:
    """Split rows into train, validation and test sets by group (participant).

    Parameters
    ----------
    groups : array-like
        The group label (participant id) of every row.
    sizes : tuple of 3 floats
        Shares of the *groups* going to train, validation and test; non-negative, summing
        to 1, with train and test positive (validation may be 0).
    seed : int
        Seed of the permutation of the groups; the same seed and the same set of labels give
        the same split, whatever the row order.

    Returns
    -------
    GroupedSplit
        Row positions and group labels of the three parts.

    Raises
    ------
    models.InvalidParameterError
        For a bad ``groups``, ``sizes`` or ``seed``, or when there are too few groups to give
        every part with a positive share at least one group.

    Notes
    -----
    The distinct labels are sorted, permuted with ``numpy.random.default_rng(seed)``, and the
    first ``n_train`` go to train, the next ``n_val`` to validation and the rest to test. The
    counts are the largest-remainder rounding of ``sizes x n_groups`` (ties to the earlier
    part): 41 participants give 29/8/4. Every row of a group lands in the part of its group,
    so no participant is in two parts (check with :func:`overlapping_groups`).

    Examples
    --------
    >>> from models.evaluation import grouped_split
    >>> split = grouped_split(["a", "a", "b", "c", "c", "d"], sizes=(0.5, 0.25, 0.25), seed=0)
    >>> len(split.train_groups), len(split.val_groups), len(split.test_groups)
    (2, 1, 1)
    """
    func = "grouped_split"
    arr = _as_groups(groups, func=func)
    seed = check_seed(seed, where=func, optional=False)
    try:
        shares = tuple(float(s) for s in sizes)
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"the `sizes` parameter of {func} must be 3 numbers (train, val, test); got {sizes!r}"
        ) from err
    if (
        len(shares) != 3
        or any(not math.isfinite(s) or s < 0 for s in shares)
        or abs(sum(shares) - 1.0) > 1e-9
        or shares[0] <= 0
        or shares[2] <= 0
    ):
        raise InvalidParameterError(
            f"the `sizes` parameter of {func} must be 3 non-negative shares (train, val, test) "
            f"summing to 1, with train and test > 0; got {sizes!r}"
        )
    labels, codes = _unique_groups(arr)
    n = len(labels)
    counts = _allocate(n, shares)
    empty = [
        name
        for name, s, c in zip(("train", "val", "test"), shares, counts, strict=True)
        if s > 0 and c == 0
    ]
    if empty:
        raise InvalidParameterError(
            f"{func}: {n} group(s) are too few for sizes {shares}; the part(s) {empty} would "
            "get no group. Use more groups or other sizes."
        )
    perm = np.random.default_rng(seed).permutation(n)
    bounds = np.cumsum([0, *counts])
    parts = [np.sort(perm[bounds[i] : bounds[i + 1]]) for i in range(3)]
    rows = [_rows_of(codes, p) for p in parts]
    names = [tuple(labels[p].tolist()) for p in parts]
    return GroupedSplit(
        train=rows[0],
        val=rows[1],
        test=rows[2],
        train_groups=names[0],
        val_groups=names[1],
        test_groups=names[2],
        sizes=shares,  # type: ignore[arg-type]
        seed=seed,
    )


def grouped_kfold(
    groups: Sequence[Any] | np.ndarray | pd.Series,
    *,
    k: int,
    seed: int,
) -> tuple[GroupedFold, ...]:
    """K folds of the groups: each group is in the test part of exactly one fold.

    Parameters
    ----------
    groups : array-like
        The group label (participant id) of every row.
    k : int
        Number of folds, from 2 to the number of groups.
    seed : int
        Seed of the permutation of the groups.

    Returns
    -------
    tuple of GroupedFold
        ``k`` folds; fold ``f`` tests on the ``f``-th block of the permuted groups and trains
        on all other groups.

    Raises
    ------
    models.InvalidParameterError
        For a bad ``groups``, ``seed`` or ``k``.

    Notes
    -----
    The sorted distinct labels are permuted with ``numpy.random.default_rng(seed)`` and cut
    into ``k`` consecutive blocks whose sizes differ by at most one (``numpy.array_split``).

    Examples
    --------
    >>> from models.evaluation import grouped_kfold
    >>> folds = grouped_kfold(["a", "a", "b", "c", "d", "e"], k=2, seed=0)
    >>> [len(f.test_groups) for f in folds]
    [3, 2]
    """
    func = "grouped_kfold"
    arr = _as_groups(groups, func=func)
    seed = check_seed(seed, where=func, optional=False)
    labels, codes = _unique_groups(arr)
    n = len(labels)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 2 <= k <= n:
        raise InvalidParameterError(
            f"the `k` parameter of {func} must be an int from 2 to the number of groups ({n}); "
            f"got {k!r}"
        )
    perm = np.random.default_rng(seed).permutation(n)
    folds = []
    for f, block in enumerate(np.array_split(perm, int(k))):
        test = np.sort(block)
        train = np.sort(np.setdiff1d(perm, block))
        folds.append(
            GroupedFold(
                fold=f,
                train=_rows_of(codes, train),
                test=_rows_of(codes, test),
                train_groups=tuple(labels[train].tolist()),
                test_groups=tuple(labels[test].tolist()),
                seed=seed,
            )
        )
    return tuple(folds)


def overlapping_groups(
    groups: Sequence[Any] | np.ndarray | pd.Series,
    parts: Sequence[Sequence[int] | np.ndarray],
) -> list[Any]:
    """List the groups whose rows fall in more than one part: the leakage check of a split.

    Parameters
    ----------
    groups : array-like
        The group label of every row.
    parts : sequence of arrays of int
        Row positions of each part (e.g. ``[split.train, split.val, split.test]``).

    Returns
    -------
    list
        The labels found in two or more parts, sorted; empty for a leak-free split.

    Raises
    ------
    models.InvalidParameterError
        For a bad ``groups``, or a part that is not integer positions into it.

    Examples
    --------
    >>> from models.evaluation import overlapping_groups
    >>> overlapping_groups(["a", "a", "b", "b"], [[0, 1], [2, 3]])
    []
    >>> overlapping_groups(["a", "a", "b", "b"], [[0, 2], [1, 3]])
    ['a', 'b']
    """
    func = "overlapping_groups"
    arr = _as_groups(groups, func=func)
    seen: dict[Any, int] = {}
    for i, part in enumerate(parts):
        pos = np.asarray(part)
        if pos.size and (
            not np.issubdtype(pos.dtype, np.integer) or pos.min() < 0 or pos.max() >= arr.size
        ):
            raise InvalidParameterError(
                f"the `parts` parameter of {func} must hold integer row positions from 0 to "
                f"{arr.size - 1}; part {i} does not"
            )
        for label in set(arr[pos].tolist()):
            seen[label] = seen.get(label, 0) + 1
    return sorted((g for g, c in seen.items() if c > 1), key=lambda g: (str(g), type(g).__name__))


# ---------------------------------------------------------------------------------------------
# metrics


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
    a, b = _pair(y_true, y_pred, func="spearman_rho", nan_policy=nan_policy)
    return _correlation(rankdata(a), rankdata(b), func="spearman_rho")


def binarize(values: Any, *, threshold: float) -> np.ndarray:
    """Positive ("empathic") when a value is strictly greater than ``threshold``.

    Parameters
    ----------
    values : array-like of float
        Ratings or predictions.
    threshold : float
        The cut (a value is positive when strictly greater). The empathy benchmark uses 3.0,
        the midpoint of the 1-5 scale, so whole-number ratings 4 and 5 are positive.

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


@dataclass(frozen=True)
class PredictionMetrics:
    """The five benchmark metrics of one set of predictions.

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

    def as_dict(self) -> dict[str, float | int]:
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


# ---------------------------------------------------------------------------------------------
# uncertainty of the K-fold metrics: the participant-cluster bootstrap

BOOTSTRAP_COLUMNS = [
    "model",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "ci_level",
    "interval",
    "n_boot",
    "n_groups",
]
"""Columns of :attr:`KFoldBootstrap.intervals`."""

COMPARISON_COLUMNS = [
    "model",
    "versus",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "ci_level",
    "n_boot",
    "verdict",
]
"""Columns of :attr:`KFoldBootstrap.comparisons`."""

LOWER_IS_BETTER = ("mse",)
"""Metrics for which a smaller value is better (the others: larger is better)."""

INTERVAL_SCALES = {"r": "fisher_z", "rho": "fisher_z", "acc": "logit", "f1": "logit", "mse": "log"}
"""The scale on which each metric's bootstrap interval is built (see :func:`kfold_bootstrap`)."""


@dataclass(frozen=True)
class KFoldBootstrap:
    """Participant-cluster bootstrap intervals of the grouped K-fold metrics.

    Attributes
    ----------
    intervals : pandas.DataFrame
        One row per model x metric: ``model, metric, estimate, ci_low, ci_high, ci_level,
        interval, n_boot, n_groups``. ``estimate`` is the K-fold metric (per seed the metric
        of all out-of-fold predictions pooled, then the mean over seeds); ``interval`` names
        how the interval was built (``fisher_z``, ``logit`` or ``log``: bootstrap standard
        error on that scale with a t quantile; ``percentile``: at the edge of the metric's
        range, where that scale is infinite; ``undefined``); ``n_boot`` counts the
        replicates where the metric is defined.
    comparisons : pandas.DataFrame
        One row per pair of models x metric: ``model, versus, metric, estimate`` (``model``
        minus ``versus``), ``ci_low, ci_high`` (bootstrap standard error of the paired
        difference with a t quantile), ``ci_level, n_boot`` and ``verdict``: ``better`` or
        ``worse`` when the interval excludes 0 (for MSE, lower is better), otherwise
        ``interval includes 0`` (``undefined`` when the metric is undefined, e.g. r of a
        constant prediction).
    meta : dict
        ``method``, ``n_boot``, ``seed``, ``ci_level``, ``t_df``, ``threshold``, ``scale``,
        ``n_groups``, ``n_seeds``.
    """

    intervals: pd.DataFrame
    comparisons: pd.DataFrame
    meta: dict[str, Any]


def _weighted_correlation(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson r of ``a[k], b[k]`` with frequency weights ``w[k]`` for each row k (B x n).

    NaN where nothing is drawn or where either vector is constant among the pairs drawn (as
    :func:`pearson_r`, which compares the values exactly).
    """
    drawn = w > 0
    total = w.sum(axis=1)
    safe = np.where(total > 0, total, 1.0)
    out = np.full(w.shape[0], np.nan)
    varies = np.ones(w.shape[0], dtype=bool)
    for v in (a, b):
        low = np.where(drawn, v, np.inf).min(axis=1)
        high = np.where(drawn, v, -np.inf).max(axis=1)
        varies &= high > low
    ma = (w * a).sum(axis=1) / safe
    mb = (w * b).sum(axis=1) / safe
    da = a - ma[:, None]
    db = b - mb[:, None]
    saa = (w * da * da).sum(axis=1)
    sbb = (w * db * db).sum(axis=1)
    sab = (w * da * db).sum(axis=1)
    ok = (total > 0) & varies & (saa > 0) & (sbb > 0)
    out[ok] = sab[ok] / np.sqrt(saa[ok] * sbb[ok])
    return np.clip(out, -1.0, 1.0)


def _weighted_ranks(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank) of ``values`` in each weighted replicate.

    A row of ``w`` holds how often each value is drawn; the rank of a value is its rank in
    the sample of drawn values, as :func:`scipy.stats.rankdata` would give it there.
    """
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    tie_weight = np.add.reduceat(w[:, order], starts, axis=1)
    before = np.cumsum(tie_weight, axis=1) - tie_weight
    group_rank = before + (tie_weight + 1.0) / 2.0
    group_of = np.empty(values.size, dtype=np.int64)
    group_of[order] = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, values.size]))
    return group_rank[:, group_of]


def weighted_metrics(
    y_true: Any,
    y_pred: Any,
    weights: Any,
    *,
    threshold: float,
    scale: float = 100.0,
) -> dict[str, np.ndarray]:
    """Compute the five benchmark metrics for each row of frequency weights (replicates).

    Parameters
    ----------
    y_true, y_pred : array-like of float, shape (n,)
        Observed ratings and predictions (finite).
    weights : array-like, shape (B, n) or (n,)
        How often each pair is drawn in each replicate (non-negative whole numbers).
    threshold : float
        Binarisation cut (see :func:`binarize`).
    scale : float, default 100.0
        Multiplier of every metric.

    Returns
    -------
    dict of str to numpy.ndarray
        ``r, rho, acc, f1, mse``, each of shape (B,): the metric of the sample in which pair
        ``i`` appears ``weights[b, i]`` times; NaN where it is undefined (a constant vector,
        no positive for F1, nothing drawn).

    Raises
    ------
    models.InvalidParameterError
        For vectors of different length, non-finite values or negative weights.

    Notes
    -----
    The same definitions as :func:`prediction_metrics` (Pearson r, Spearman rho with average
    ranks of ties, accuracy and F1 of ``value > threshold``, MSE), computed for all
    replicates at once; with whole-number weights equal to :func:`prediction_metrics` of the
    sample with each pair repeated (tests, to 1e-10).

    Examples
    --------
    >>> import numpy as np
    >>> from models.evaluation import weighted_metrics
    >>> weights = [[1, 1, 1, 1], [2, 0, 1, 1]]
    >>> m = weighted_metrics([1, 2, 4, 5], [1.5, 2.0, 3.5, 4.0], weights, threshold=3.0)
    >>> m["mse"].tolist()
    [37.5, 43.75]
    """
    func = "weighted_metrics"
    a, b = _pair(y_true, y_pred, func=func, nan_policy="raise")
    thr = _check_threshold(threshold, func=func)
    try:
        w = np.atleast_2d(np.asarray(weights, dtype=float))
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(f"the `weights` parameter of {func} must be numeric") from err
    if w.ndim != 2 or w.shape[1] != a.size or not np.all(np.isfinite(w)) or (w < 0).any():
        raise InvalidParameterError(
            f"the `weights` parameter of {func} must be non-negative, of shape (B, {a.size}); "
            f"got shape {w.shape}"
        )
    total = w.sum(axis=1)
    drawn = total > 0
    safe = np.where(drawn, total, 1.0)
    t, p = a > thr, b > thr
    tp = w @ (t & p).astype(float)
    fp = w @ (~t & p).astype(float)
    fn = w @ (t & ~p).astype(float)
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1.0), np.nan)
    out = {
        "r": _weighted_correlation(np.broadcast_to(a, w.shape), np.broadcast_to(b, w.shape), w),
        "rho": _weighted_correlation_ranks(a, b, w),
        "acc": (w @ (t == p).astype(float)) / safe,
        "f1": f1,
        "mse": (w @ ((a - b) ** 2)) / safe,
    }
    k = float(scale)
    return {m: np.where(drawn, k * out[m], np.nan) for m in METRIC_NAMES}


def _weighted_correlation_ranks(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman rho in each weighted replicate: Pearson r of the replicate's average ranks."""
    return _weighted_correlation(_weighted_ranks(a, w), _weighted_ranks(b, w), w)


def _mean_defined(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean over ``axis`` of the finite values; NaN where none is (no warning)."""
    finite = np.isfinite(values)
    count = finite.sum(axis=axis)
    total = np.where(finite, values, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def _to_interval_scale(values: np.ndarray, metric: str, scale: float) -> np.ndarray:
    """Map a metric to the scale its interval is built on (infinite at the range's edges)."""
    kind = INTERVAL_SCALES[metric]
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "fisher_z":
            return np.arctanh(values / scale)
        if kind == "logit":
            share = values / scale
            return np.log(share) - np.log1p(-share)
        return np.log(values)


def _from_interval_scale(values: np.ndarray, metric: str, scale: float) -> np.ndarray:
    kind = INTERVAL_SCALES[metric]
    if kind == "fisher_z":
        return scale * np.tanh(values)
    if kind == "logit":
        return scale / (1.0 + np.exp(-values))
    return np.exp(values)


def _percentile_interval(draws: np.ndarray, ci_level: float) -> tuple[float, float]:
    tail = (1.0 - ci_level) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return float(low), float(high)


def _metric_interval(
    estimate: float,
    draws: np.ndarray,
    metric: str,
    *,
    quantile: float,
    ci_level: float,
    scale: float,
) -> tuple[float, float, str, int]:
    """Interval of one metric: bootstrap SE on the metric's interval scale, t quantile.

    At the edge of the metric's range (r = 100, MSE = 0, ...) that scale is infinite and the
    percentile interval of the replicates is used instead.
    """
    finite = draws[np.isfinite(draws)]
    if finite.size < 2 or not np.isfinite(estimate):
        return float("nan"), float("nan"), "undefined", int(finite.size)
    centre = _to_interval_scale(np.asarray([estimate]), metric, scale)[0]
    spread = _to_interval_scale(finite, metric, scale)
    if not np.isfinite(centre) or not np.all(np.isfinite(spread)):
        low, high = _percentile_interval(finite, ci_level)
        return low, high, "percentile", int(finite.size)
    se = float(np.std(spread, ddof=1))
    bounds = _from_interval_scale(
        np.array([centre - quantile * se, centre + quantile * se]), metric, scale
    )
    return float(bounds[0]), float(bounds[1]), INTERVAL_SCALES[metric], int(finite.size)


def _verdict(low: float, high: float, n_ok: int, *, lower_is_better: bool) -> str:
    """Call a difference better or worse only when its interval excludes 0."""
    if n_ok == 0 or not (np.isfinite(low) and np.isfinite(high)):
        return "undefined"
    if low > 0:
        return "worse" if lower_is_better else "better"
    if high < 0:
        return "better" if lower_is_better else "worse"
    return "interval includes 0"


def kfold_bootstrap(
    y_true: Any,
    predictions: Mapping[str, Any],
    *,
    groups: Any,
    n_boot: int = 2000,
    ci_level: float = 0.95,
    threshold: float,
    scale: float = 100.0,
    seed: int,
) -> KFoldBootstrap:
    """Participant-cluster bootstrap intervals of grouped K-fold metrics and their differences.

    Parameters
    ----------
    y_true : array-like of float, shape (n,)
        The ratings.
    predictions : mapping of str to array-like, each of shape (n_seeds, n) or (n,)
        Model -> its out-of-fold prediction of every rating, for each split seed (every
        participant predicted by a model that did not see them).
    groups : array-like, shape (n,)
        The participant of every rating (the cluster that is resampled).
    n_boot : int, default 2000
        Bootstrap replicates B.
    ci_level : float, default 0.95
        Level of the intervals.
    threshold : float
        Binarisation cut for accuracy and F1.
    scale : float, default 100.0
        Multiplier of every metric (the paper's x 100).
    seed : int
        Seed of the resampling (``numpy.random.default_rng(seed)``).

    Returns
    -------
    KFoldBootstrap
        Intervals per model x metric and paired differences per pair of models x metric.

    Raises
    ------
    models.InvalidParameterError
        For arrays of mismatched shapes, non-finite values or bad options.

    Notes
    -----
    The estimate is the K-fold metric of all out-of-fold predictions pooled: per seed, the
    metric over every rating (each predicted by the fold model that did not see its
    participant), then the mean over the seeds. It estimates the metric in the population
    of participants the study sampled. (A mean of per-fold metrics does not: a correlation
    within a fold of a few people is centred on that fold's mean, which removes part of the
    between-person variation, so it lies below the population value when folds are small.)

    A replicate draws as many participants as there are, with replacement (every rating of
    a participant drawn ``c`` times counts ``c`` times), and recomputes the estimate with
    the predictions held fixed; the same draw serves every seed and every model, so
    differences between models are paired. The interval is ``estimate ± t SE`` on a scale
    where the metric is close to normal: Fisher's z for r and rho, the logit of the share
    for accuracy and F1, the log for MSE; SE is the standard deviation of the replicates on
    that scale and t the quantile of Student's t with G - 1 degrees of freedom (G
    participants); the bounds are mapped back. At the edge of a metric's range (r = 100, MSE
    = 0), where that scale is infinite, the percentile interval of the replicates is given.
    Differences between models are on the metric's own scale, ``estimate ± t SE`` with the
    SE of the paired replicate differences.

    Why not the percentile interval: with 41 participants (20-36 ratings each, predictions
    = latent empathy + noise, 1,500 simulated studies, B = 1000) percentile intervals of r
    covered the population value in 91-93% of studies, BCa in 92.5-93%, and the interval
    above in 93.8-94.3% (94-95.4% for the other metrics, 93.7-95.1% for differences
    between two models). The interval describes which participants happened to be studied,
    given the fitted models: it does not refit a model on each replicate.

    Examples
    --------
    >>> import numpy as np
    >>> from models.evaluation import kfold_bootstrap
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(np.arange(20), 5)
    >>> y = rng.integers(1, 6, groups.size).astype(float)
    >>> preds = {"copy": y, "noise": y + rng.normal(0, 1, y.size)}
    >>> boot = kfold_bootstrap(y, preds, groups=groups, n_boot=200, seed=1, threshold=3.0)
    >>> row = boot.intervals.query("model == 'copy' and metric == 'r'").iloc[0]
    >>> float(row["estimate"]), float(row["ci_low"]), row["interval"]
    (100.0, 100.0, 'percentile')
    """
    func = "kfold_bootstrap"
    y = np.asarray(y_true, dtype=float)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise InvalidParameterError(f"the `y_true` parameter of {func} must be 1-d and finite")
    labels = _as_groups(groups, func=func)
    if labels.size != y.size:
        raise InvalidParameterError(
            f"the `groups` parameter of {func} must have one label per rating ({y.size}); "
            f"got {labels.size}"
        )
    preds: dict[str, np.ndarray] = {}
    if not isinstance(predictions, Mapping) or not predictions:
        raise InvalidParameterError(
            f"the `predictions` parameter of {func} must map model names to arrays"
        )
    n_seeds = None
    for name, values in predictions.items():
        arr = np.asarray(values, dtype=float)
        arr = arr[None, :] if arr.ndim == 1 else arr
        if (
            arr.ndim != 2
            or arr.shape[1] != y.size
            or (n_seeds is not None and arr.shape[0] != n_seeds)
            or not np.all(np.isfinite(arr))
        ):
            raise InvalidParameterError(
                f"the `predictions` of {name!r} in {func} must be finite, of shape "
                f"({n_seeds or 'n_seeds'}, {y.size}); got shape {arr.shape}"
            )
        n_seeds = arr.shape[0]
        preds[str(name)] = arr
    n_boot = check_int(n_boot, name="n_boot", where=func, minimum=2)
    ci_level = check_unit(ci_level, name="ci_level", where=func)
    thr = _check_threshold(threshold, func=func)
    seed = check_seed(seed, where=func, optional=False)
    _, codes = _unique_groups(labels)
    n_groups = int(codes.max()) + 1
    if n_groups < 2:
        raise InvalidParameterError(f"{func} needs at least 2 participants; got {n_groups}")
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=int(n_boot))
    # row 0: every participant once (the estimate); rows 1..B: the replicates
    weights = np.vstack([np.ones((1, n_groups)), counts]).astype(float)[:, codes]

    stats: dict[str, dict[str, np.ndarray]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        for name, p in preds.items():
            per_seed = [
                weighted_metrics(y, p[s], weights, threshold=thr, scale=scale)
                for s in range(p.shape[0])
            ]
            stats[name] = {
                k: _mean_defined(np.vstack([d[k] for d in per_seed]), axis=0) for k in METRIC_NAMES
            }

    level = float(ci_level)
    quantile = float(student_t.ppf(0.5 + level / 2.0, n_groups - 1))
    rows_out = []
    for name, by_metric in stats.items():
        for k in METRIC_NAMES:
            estimate = float(by_metric[k][0])
            low, high, how, n_ok = _metric_interval(
                estimate, by_metric[k][1:], k, quantile=quantile, ci_level=level, scale=scale
            )
            rows_out.append(
                {
                    "model": name,
                    "metric": k,
                    "estimate": estimate,
                    "ci_low": low,
                    "ci_high": high,
                    "ci_level": level,
                    "interval": how,
                    "n_boot": n_ok,
                    "n_groups": n_groups,
                }
            )
    names = list(stats)
    pairs = []
    for j, name in enumerate(names):
        for other in names[:j]:
            for k in METRIC_NAMES:
                diff = stats[name][k] - stats[other][k]
                draws = diff[1:][np.isfinite(diff[1:])]
                low = high = float("nan")
                if np.isfinite(diff[0]) and draws.size >= 2:
                    se = float(np.std(draws, ddof=1))
                    low, high = float(diff[0] - quantile * se), float(diff[0] + quantile * se)
                verdict = _verdict(low, high, draws.size, lower_is_better=k in LOWER_IS_BETTER)
                pairs.append(
                    {
                        "model": name,
                        "versus": other,
                        "metric": k,
                        "estimate": float(diff[0]),
                        "ci_low": low,
                        "ci_high": high,
                        "ci_level": level,
                        "n_boot": int(draws.size),
                        "verdict": verdict,
                    }
                )
    meta = {
        "method": (
            "participant-cluster bootstrap: each replicate draws the participants with "
            "replacement (as many as there are), every rating of a participant counted as "
            "often as the participant is drawn, and recomputes the pooled out-of-fold metric "
            "(mean over seeds) with the predictions held fixed; interval = estimate ± t SE "
            "on Fisher's z (r, rho), the logit (accuracy, F1) or the log (MSE), SE the "
            "standard deviation of the replicates there, t with G - 1 degrees of freedom "
            "(G participants); percentile interval at the edge of a metric's range; paired "
            "differences on the metric's scale with the same draws"
        ),
        "n_boot": int(n_boot),
        "seed": seed,
        "ci_level": level,
        "t_df": n_groups - 1,
        "threshold": thr,
        "scale": float(scale),
        "n_groups": n_groups,
        "n_seeds": int(n_seeds),
    }
    return KFoldBootstrap(
        intervals=pd.DataFrame(rows_out, columns=BOOTSTRAP_COLUMNS),
        comparisons=pd.DataFrame(pairs, columns=COMPARISON_COLUMNS),
        meta=meta,
    )
