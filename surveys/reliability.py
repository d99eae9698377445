"""Internal-consistency reliability of one scale: Cronbach's alpha, omega and item statistics.

The single entry point, :func:`scale_reliability`, takes the item responses of one scale that
are already reverse keyed and returns the scale summary (alpha with a Feldt confidence interval,
standardized alpha, one-factor omega) and a table of item statistics. It is vectorised: the
covariance matrix comes from a few matrix products over blocks of rows (no loop over
respondents or item pairs), so a scale of ten items answered by a million respondents takes a
fraction of a second.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.checks import check_unit
from surveys import _columns as col
from surveys._errors import DataQualityWarning, InvalidParameterError, UndefinedStatisticWarning
from surveys._one_factor import MAX_COMMUNALITY, one_factor_uls

__all__ = ["scale_reliability"]

# Rows per block when accumulating cross products: bounds the temporary memory to a few
# block-sized copies of the data whatever the number of respondents.
_BLOCK_ROWS = 65_536

ITEM_STATS_COLUMNS = [col.ITEM, col.N, "mean", "sd", "r_item_rest", "alpha_if_deleted"]
SUMMARY_KEYS = (
    "n",
    "n_items",
    "alpha",
    "alpha_ci_low",
    "alpha_ci_high",
    "alpha_standardized",
    "omega_total",
)


@dataclass(frozen=True)
class _Moments:
    """Sample moments of the item matrix (internal)."""

    n: int  # respondents who contribute (complete rows, or rows with any answer)
    n_item: np.ndarray  # (k,) answers per item
    mean: np.ndarray  # (k,) item means over the answers given
    cov: np.ndarray  # (k, k) covariances, pairwise complete, divisor n_ij - 1
    cor: np.ndarray  # (k, k) Pearson correlations on the pairwise-complete rows
    n_pair: np.ndarray  # (k, k) respondents who answered both items


def scale_reliability(
    x: np.ndarray,
    *,
    item_names: Sequence[str],
    ci_level: float = 0.95,
    missing: Literal["pairwise", "complete"] = "pairwise",
) -> tuple[dict[str, float], pd.DataFrame]:
    r"""Cronbach's alpha, its Feldt interval, omega and item statistics of one scale.

    Parameters
    ----------
    x : numpy.ndarray
        Responses, shape ``(n, k)``: one row per respondent, one column per item, already
        reverse keyed. ``NaN`` marks a missing answer. Not modified.
    item_names : sequence of str
        Names of the ``k`` columns of `x` (unique), used in the item table.
    ci_level : float, default 0.95
        Coverage of the confidence interval for alpha, in (0, 1).
    missing : {"pairwise", "complete"}, default "pairwise"
        ``"pairwise"`` computes each covariance from the respondents who answered both items
        (R's ``cov(use = "pairwise")``, as ``psych::alpha`` and ``psych::scoreItems`` do);
        ``"complete"`` first drops every respondent with a missing item.

    Returns
    -------
    summary : dict of str to float
        ``n`` (respondents used: with ``missing="complete"`` the complete rows, otherwise the
        rows with at least one answer), ``n_items``, ``alpha`` (raw Cronbach's alpha),
        ``alpha_ci_low`` and ``alpha_ci_high`` (Feldt interval), ``alpha_standardized``
        (alpha of the item correlation matrix) and ``omega_total`` (one-factor omega).
    item_stats : pandas.DataFrame
        One row per item, in the order of `item_names`, with the columns

        - ``item``: the item name;
        - ``n``: respondents who answered the item (all used rows under ``"complete"``);
        - ``mean``, ``sd``: mean and standard deviation (divisor ``n - 1``) of its answers;
        - ``r_item_rest``: correlation of the item with the sum of the other items
          (psych's ``r.drop``);
        - ``alpha_if_deleted``: raw alpha of the scale without the item
          (psych's ``alpha.drop$raw_alpha``).

    Raises
    ------
    InvalidParameterError
        If `x` is not a two-dimensional numeric array with at least one column, contains an
        infinite value, `item_names` does not name its columns uniquely, `ci_level` is not in
        (0, 1) or `missing` is not one of the allowed values.

    Warns
    -----
    UndefinedStatisticWarning
        When a statistic is undefined for these data and is returned as ``NaN``: fewer than two
        respondents, a one-item scale (no alpha, omega or item-rest statistics), a two-item
        scale (no alpha if an item is deleted, omega not identified), an item without variance
        (no standardized alpha, omega or item-rest correlation for it), a pair of items never
        answered together, or a zero total-score variance. One warning lists every reason.
    DataQualityWarning
        When the one-factor solution is a Heywood case (an item's communality above 1).

    See Also
    --------
    surveys.scoring.score : Scores instruments and reports this function's results per scale.

    Notes
    -----
    With :math:`C` the :math:`k \times k` item covariance matrix and :math:`R` the
    correlation matrix :math:`D^{-1/2} C D^{-1/2}` (:math:`D = \operatorname{diag} C`):

    - raw alpha
      :math:`\alpha = \frac{k}{k-1}\bigl(1 - \operatorname{tr} C / 1^\top C 1\bigr)`;
    - standardized alpha :math:`\frac{k}{k-1}\bigl(1 - k / 1^\top R 1\bigr)`;
    - item-rest correlation of item :math:`i`:
      :math:`(\sum_j C_{ij} - C_{ii}) / \sqrt{C_{ii}\, 1^\top C_{-i,-i} 1}`;
    - alpha if deleted: raw alpha of :math:`C_{-i,-i}`.

    Under ``missing="pairwise"`` the covariance of items :math:`i, j` uses the
    :math:`n_{ij}` respondents who answered both, with means taken over those respondents and
    divisor :math:`n_{ij} - 1`; the variances on the diagonal use every answer to the item.
    This is R's ``cov(x, use = "pairwise")``, the matrix ``psych::alpha`` and
    ``psych::scoreItems`` use, so the alphas and item statistics equal psych's.

    The confidence interval is Feldt's (1965) F-based interval,
    :math:`1 - (1 - \hat\alpha) F_{1-\gamma/2}` to :math:`1 - (1 - \hat\alpha) F_{\gamma/2}`
    with :math:`F` the quantiles of the F distribution on :math:`n - 1` and
    :math:`(n - 1)(k - 1)` degrees of freedom and :math:`\gamma = 1 -` `ci_level`
    (``psych::alpha.ci``). It assumes complete data; with pairwise covariances it is
    approximate.

    ``omega_total`` is McDonald's omega of a one-factor model fitted by unweighted least
    squares (minres) to the item correlation matrix :math:`P` (Pearson correlations on
    pairwise-complete rows, as ``psych::fa`` and ``psych::omega`` compute them):
    :math:`\omega = (\sum_i \lambda_i)^2 / 1^\top P 1`, the loadings :math:`\lambda`
    minimising :math:`\sum_{i<j} (P_{ij} - \lambda_i \lambda_j)^2` without bounds. It needs
    three items or more. For one factor this is ``psych::omega(nfactors = 1)$omega_h``
    (psych's ``omega.tot``, :math:`1 - \sum_i (1 - \lambda_i^2) / 1^\top P 1`, also credits
    the residual correlations the factor leaves unexplained, so it differs slightly).

    Validated against R 4.2.2 with psych 2.2.9 on psych's ``bfi`` (2,800 respondents, five
    scales with missing answers; ``tests/surveys/reference/psych_bfi.R``): raw and
    standardized alpha, ``r.drop``, ``alpha.drop``, item means and sds of ``psych::alpha`` and
    the Feldt bounds of ``psych::alpha.ci`` agree to 1e-12; omega agrees to 1e-9 with a
    one-factor solution iterated to convergence in R and to 2e-6 with
    ``psych::omega(nfactors = 1)``, whose optimiser stops earlier.

    References
    ----------
    Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests.
    *Psychometrika*, 16, 297-334.

    Feldt, L. S. (1965). The approximate sampling distribution of Kuder-Richardson reliability
    coefficient twenty. *Psychometrika*, 30, 357-370.

    McDonald, R. P. (1999). *Test theory: A unified treatment*. Erlbaum.

    Examples
    --------
    >>> import numpy as np
    >>> from surveys.reliability import scale_reliability
    >>> x = np.array([[1, 2, 1], [2, 2, 3], [3, 4, 3], [4, 3, 4],
    ...               [5, 5, 4], [2, 1, 2], [4, 4, 5], [3, 2, 2]], dtype=float)
    >>> summary, items = scale_reliability(x, item_names=["q1", "q2", "q3"])
    >>> summary["n"], summary["n_items"]
    (8, 3)
    >>> print(f"alpha {summary['alpha']:.3f} [{summary['alpha_ci_low']:.3f}, "
    ...       f"{summary['alpha_ci_high']:.3f}], omega {summary['omega_total']:.3f}")
    alpha 0.917 [0.719, 0.982], omega 0.919
    >>> items.columns.tolist()
    ['item', 'n', 'mean', 'sd', 'r_item_rest', 'alpha_if_deleted']
    """
    arr, names = _check_arguments(x, item_names=item_names, ci_level=ci_level, missing=missing)
    k = arr.shape[1]
    reasons: list[str] = []

    observed = ~np.isnan(arr)
    if missing == "complete":
        keep = observed.all(axis=1)
        if not keep.all():
            arr = arr[keep]
        moments = _complete_moments(arr)
    elif observed.all():
        moments = _complete_moments(arr)
    else:
        moments = _pairwise_moments(arr, observed)

    summary: dict[str, float] = {
        "n": moments.n,
        "n_items": k,
        "alpha": np.nan,
        "alpha_ci_low": np.nan,
        "alpha_ci_high": np.nan,
        "alpha_standardized": np.nan,
        "omega_total": np.nan,
    }
    nan_k = np.full(k, np.nan)
    item_stats = pd.DataFrame(
        {
            col.ITEM: names,
            col.N: moments.n_item.astype(np.int64),
            "mean": moments.mean,
            "sd": nan_k.copy(),
            "r_item_rest": nan_k.copy(),
            "alpha_if_deleted": nan_k.copy(),
        },
        columns=ITEM_STATS_COLUMNS,
    )

    if moments.n < 2:
        reasons.append(
            f"fewer than 2 respondents ({moments.n}) leave every variance-based statistic undefined"
        )
        _warn_undefined(reasons)
        return _as_builtin(summary), item_stats

    cov = moments.cov
    var = np.diag(cov).copy()
    few = moments.n_item < 2
    if few.any():
        reasons.append(f"items with fewer than 2 answers have no variance: {_list(names, few)}")
    sd = np.sqrt(var)
    item_stats["sd"] = sd

    if k == 1:
        reasons.append(
            "a one-item scale has no alpha, standardized alpha, omega, item-rest correlation "
            "or alpha if deleted"
        )
        _warn_undefined(reasons)
        return _as_builtin(summary), item_stats

    unpaired = (moments.n_pair < 2) & ~np.eye(k, dtype=bool) & ~few[:, None] & ~few[None, :]
    if unpaired.any():
        i, j = np.nonzero(np.triu(unpaired))
        pairs = ", ".join(f"{names[a]}-{names[b]}" for a, b in zip(i, j, strict=True))
        reasons.append(f"item pairs answered together by fewer than 2 respondents: {pairs}")

    cov_ok = bool(np.isfinite(cov).all())
    constant = (var == 0) & ~few
    if constant.any():
        reasons.append(
            "items without variance leave standardized alpha, omega and their item-rest "
            f"correlation undefined: {_list(names, constant)}"
        )
    var_ok = cov_ok and bool((var > 0).all())

    if cov_ok:
        _raw_alpha(cov, var, moments.n, names, ci_level, summary, item_stats, reasons)
    if var_ok:
        _standardized_alpha(cov, sd, summary, reasons)
    _omega(moments.cor, k, var_ok, names, summary, reasons)

    if reasons:
        _warn_undefined(reasons)
    return _as_builtin(summary), item_stats


def _raw_alpha(cov, var, n, names, ci_level, summary, item_stats, reasons) -> None:
    """Raw alpha with Feldt's interval, item-rest correlations and alpha if deleted (psych)."""
    k = len(var)
    total = cov.sum()
    trace = var.sum()
    colsum = cov.sum(axis=0)
    if total > 0:
        alpha = k / (k - 1) * (1.0 - trace / total)
        low, high = _feldt_interval(alpha, n=n, k=k, ci_level=ci_level)
        summary.update(alpha=alpha, alpha_ci_low=low, alpha_ci_high=high)
    else:
        reasons.append("the total score has no variance, so alpha is undefined")
    rest_var = total - 2.0 * colsum + var
    rest_cov = colsum - var
    with np.errstate(divide="ignore", invalid="ignore"):
        r_rest = rest_cov / np.sqrt(var * rest_var)
    r_rest[~((var > 0) & (rest_var > 0))] = np.nan
    item_stats["r_item_rest"] = r_rest
    if k >= 3:
        with np.errstate(divide="ignore", invalid="ignore"):
            a_drop = (k - 1) / (k - 2) * (1.0 - (trace - var) / rest_var)
        a_drop[~(rest_var > 0)] = np.nan
        item_stats["alpha_if_deleted"] = a_drop
        no_rest = ~(rest_var > 0)
        if no_rest.any():
            reasons.append(
                "alpha if deleted and the item-rest correlation are undefined where the "
                f"other items' total has no variance: {_list(names, no_rest)}"
            )
    else:
        reasons.append("alpha if deleted is undefined for a two-item scale (one item left)")


def _standardized_alpha(cov, sd, summary, reasons) -> None:
    """Standardized alpha from the correlations implied by the covariances (as psych)."""
    k = len(sd)
    r_total = (cov / np.outer(sd, sd)).sum()
    if r_total > 0:
        summary["alpha_standardized"] = k / (k - 1) * (1.0 - k / r_total)
    else:
        reasons.append(
            "the sum of the item correlations is not positive, so standardized alpha is undefined"
        )


def _omega(cor, k, var_ok, names, summary, reasons) -> None:
    """One-factor omega total on the pairwise Pearson correlations."""
    if k == 2:
        reasons.append("omega is not identified for a two-item scale")
    elif var_ok and not np.isfinite(cor).all():
        reasons.append(
            "omega is undefined: an item pair has no variance among the respondents who "
            "answered both"
        )
    elif var_ok:
        fitted = one_factor_uls(cor)
        if fitted is None:
            reasons.append("the one-factor model behind omega did not converge")
        elif not cor.sum() > 0:
            # Pairwise correlations need not form a proper correlation matrix; their sum
            # (the variance of the standardized total) can then be zero or negative.
            reasons.append(
                "omega is undefined: the pairwise item correlations sum to a non-positive "
                "total variance"
            )
        else:
            loadings, at_bound = fitted
            summary["omega_total"] = loadings.sum() ** 2 / cor.sum()
            if at_bound.any():
                warnings.warn(
                    DataQualityWarning(
                        "scale_reliability: the one-factor solution behind omega_total is a "
                        f"Heywood case: the communality of {_list(names, at_bound)} reached "
                        f"the bound {MAX_COMMUNALITY} (as in psych::fa); omega_total rests on "
                        "a boundary solution"
                    ),
                    stacklevel=3,
                )


def _as_builtin(summary: dict[str, float]) -> dict[str, float]:
    return {
        key: (value if key in ("n", "n_items") else float(value)) for key, value in summary.items()
    }


def _warn_undefined(reasons: list[str]) -> None:
    # stacklevel=3: this helper -> scale_reliability -> the caller of scale_reliability.
    warnings.warn(
        UndefinedStatisticWarning(
            "scale_reliability: returned NaN where a statistic is undefined: " + "; ".join(reasons)
        ),
        stacklevel=3,
    )


def _list(names: Sequence[str], mask: np.ndarray) -> str:
    return ", ".join(str(name) for name, flag in zip(names, mask, strict=True) if flag)


def _check_arguments(
    x: object, *, item_names: object, ci_level: object, missing: object
) -> tuple[np.ndarray, list[str]]:
    where = "scale_reliability"
    if isinstance(x, pd.DataFrame | pd.Series):
        raise InvalidParameterError(
            f"the `x` parameter of {where} must be a numpy array of shape (n, k); got a "
            f"{type(x).__name__} (pass df.to_numpy(dtype=float))"
        )
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"the `x` parameter of {where} must be a numeric array of shape (n, k); "
            f"got {type(x).__name__} that does not convert to float"
        ) from err
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise InvalidParameterError(
            f"the `x` parameter of {where} must be two-dimensional with at least one column "
            f"(respondents x items); got shape {arr.shape}"
        )
    if isinstance(item_names, str | bytes) or not isinstance(item_names, Sequence):
        raise InvalidParameterError(
            f"the `item_names` parameter of {where} must be a sequence of str; "
            f"got {type(item_names).__name__}"
        )
    names = list(item_names)
    if len(names) != arr.shape[1] or not all(isinstance(name, str) for name in names):
        raise InvalidParameterError(
            f"the `item_names` parameter of {where} must hold one str per column of `x` "
            f"({arr.shape[1]}); got {names!r}"
        )
    if len(set(names)) != len(names):
        dupes = sorted({name for name in names if names.count(name) > 1})
        raise InvalidParameterError(
            f"the `item_names` parameter of {where} must be unique; repeated: {dupes}"
        )
    check_unit(ci_level, name="ci_level", where=where)
    if missing not in ("pairwise", "complete"):
        raise InvalidParameterError(
            f"the `missing` parameter of {where} must be 'pairwise' or 'complete'; got {missing!r}"
        )
    infinite = np.isinf(arr).any(axis=0)
    if infinite.any():
        raise InvalidParameterError(
            f"the `x` parameter of {where} must hold finite values or NaN; infinite values "
            f"in columns {_list(names, infinite)}"
        )
    return arr, names


def _complete_moments(x: np.ndarray) -> _Moments:
    """Moments of a matrix without missing values (two-pass, blockwise cross products)."""
    n, k = x.shape
    n_item = np.full(k, n, dtype=np.int64)
    n_pair = np.full((k, k), n, dtype=np.int64)
    if n == 0:
        nan_kk = np.full((k, k), np.nan)
        return _Moments(0, n_item, np.full(k, np.nan), nan_kk, nan_kk, n_pair)
    mean = x.mean(axis=0)
    cross = np.zeros((k, k))
    for start in range(0, n, _BLOCK_ROWS):
        z = x[start : start + _BLOCK_ROWS] - mean
        cross += z.T @ z
    if n < 2:
        cov = np.full((k, k), np.nan)
    else:
        cov = cross / (n - 1)
    sd = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        cor = cov / np.outer(sd, sd)
    np.fill_diagonal(cor, np.where(sd > 0, 1.0, np.nan))
    return _Moments(n, n_item, mean, cov, cor, n_pair)


def _pairwise_moments(x: np.ndarray, observed: np.ndarray) -> _Moments:
    r"""Pairwise-complete moments from products of the data and its non-missing mask.

    With :math:`M` the 0/1 mask and :math:`Z` the data centred by the item means (0 where
    missing), :math:`N = M^\top M` counts the respondents per pair, :math:`S = Z^\top M`
    holds :math:`S_{ij} = \sum z_i` over those who answered both :math:`i` and :math:`j`,
    :math:`P = Z^\top Z` and :math:`Q = (Z \circ Z)^\top M`. Then
    :math:`C_{ij} = (P_{ij} - S_{ij} S_{ji} / N_{ij}) / (N_{ij} - 1)` is the covariance with
    means over the pair's respondents (R's ``cov(use = "pairwise")``) and
    :math:`(Q_{ij} - S_{ij}^2 / N_{ij}) / (N_{ij} - 1)` the variance of item :math:`i` over
    the same respondents, which gives R's ``cor(use = "pairwise")``. Centring first keeps
    the subtraction accurate.
    """
    n, k = x.shape
    n_item = observed.sum(axis=0)
    total = np.zeros(k)
    for start in range(0, n, _BLOCK_ROWS):
        block = x[start : start + _BLOCK_ROWS]
        total += np.where(observed[start : start + _BLOCK_ROWS], block, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / n_item
    centre = np.where(n_item > 0, mean, 0.0)

    n_pair = np.zeros((k, k))
    s = np.zeros((k, k))
    p = np.zeros((k, k))
    q = np.zeros((k, k))
    for start in range(0, n, _BLOCK_ROWS):
        m = observed[start : start + _BLOCK_ROWS].astype(np.float64)
        z = np.where(m > 0, x[start : start + _BLOCK_ROWS] - centre, 0.0)
        n_pair += m.T @ m
        s += z.T @ m
        p += z.T @ z
        q += (z * z).T @ m
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = (p - s * s.T / n_pair) / (n_pair - 1)
        var_within = (q - s * s / n_pair) / (n_pair - 1)
        cor = cov / np.sqrt(var_within * var_within.T)
    undefined = n_pair < 2
    cov[undefined] = np.nan
    cor[undefined] = np.nan
    np.fill_diagonal(cor, np.where(np.diag(cov) > 0, 1.0, np.nan))
    respondents = int(observed.any(axis=1).sum())
    return _Moments(respondents, n_item, mean, cov, cor, n_pair.astype(np.int64))


def _feldt_interval(alpha: float, *, n: int, k: int, ci_level: float) -> tuple[float, float]:
    """Feldt (1965) interval: (1 - alpha) / (1 - alpha_hat) ~ F(n - 1, (n - 1)(k - 1))."""
    tail = (1.0 - ci_level) / 2.0
    df1 = n - 1
    df2 = (n - 1) * (k - 1)
    # special.fdtri is the F quantile that scipy.stats.f.ppf evaluates, without loading
    # scipy.stats (a second of start-up for every command that scores a questionnaire)
    low = 1.0 - (1.0 - alpha) * special.fdtri(df1, df2, 1.0 - tail)
    high = 1.0 - (1.0 - alpha) * special.fdtri(df1, df2, tail)
    return float(low), float(high)
