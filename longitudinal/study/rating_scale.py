"""The kind of the rating scale decides the models: ordered categories or a continuous rating.

**The rule.** A declared rating scale (``[ratings] scale_min``-``scale_max`` of study.toml)
with more than :data:`MAX_ORDINAL_POINTS` (11) points, ``scale_max - scale_min + 1 > 11``, is
*continuous*; a narrower one (1-5, 1-7, 0-10) is *ordinal*. The 0-10 numeric rating scale is
the widest scale commonly analysed as ordered categories. A cumulative (ordinal) model
estimates one threshold between every two neighbouring points, so a 0-100 slider would need
100 thresholds, each resting on the few ratings at that point; and with five or more ordered
categories a rating already behaves close to a continuous variable (Rhemtulla, Brosseau-Liard &
Savalei, 2012), while the case for ordinal models is made for Likert items with a handful of
points (Liddell & Kruschke, 2018).

What follows from it:

* an *ordinal* scale keeps the package's models as they are: the linear mixed model beside the
  cumulative link mixed model and (``--bayes``) the Bayesian cumulative-logit model; the
  rating distribution counts every scale point; the benchmark's majority vote is the most
  frequent training rating and its MSE is reported x 100, as in the paper;
* a *continuous* scale is analysed with the linear mixed model (and, with ``--bayes``, the
  Bayesian linear mixed model, gaussian family); the ordinal models are fitted only on
  request, to the ratings binned into K ordered categories (``longitudinal report
  --ordinal-bins K``, :func:`bin_ratings`); the rating distribution is a histogram of
  :data:`DISTRIBUTION_BINS` equal-width bins; the benchmark's majority vote becomes the median
  training rating and its MSE is in squared rating points (not x 100).

Ratings that are not whole numbers are never fitted as ordered categories, whatever the
scale (an ordinal model on them is refused or left out with a note, as before).

References
----------
Rhemtulla, M., Brosseau-Liard, P. E., & Savalei, V. (2012). When can categorical variables be
treated as continuous? A comparison of robust continuous and categorical SEM estimation methods
under suboptimal conditions. *Psychological Methods, 17*(3), 354-373.

Liddell, T. M., & Kruschke, J. K. (2018). Analyzing ordinal data with metric models: What could
possibly go wrong? *Journal of Experimental Social Psychology, 79*, 328-348.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError

__all__ = [
    "DISTRIBUTION_BINS",
    "MAX_ORDINAL_BINS",
    "MAX_ORDINAL_POINTS",
    "MIN_ORDINAL_BINS",
    "bin_edges",
    "bin_midpoints",
    "bin_ratings",
    "binned_counts",
    "bins_rule",
    "check_ordinal_bins",
    "scale_kind",
    "scale_points",
    "scale_rule",
]

MAX_ORDINAL_POINTS = 11
"""The widest scale fitted as ordered categories: 11 points (a 0-10 numeric rating scale)."""

MIN_ORDINAL_BINS, MAX_ORDINAL_BINS = 2, MAX_ORDINAL_POINTS
"""The numbers of bins ``--ordinal-bins`` accepts: 2 to 11 ordered categories."""

DISTRIBUTION_BINS = 10
"""Bins of the rating distribution of a continuous scale: 10 of equal width (10 points on
0-100), the last one closed at the top of the scale."""

CITATION = "Rhemtulla, Brosseau-Liard & Savalei, 2012; Liddell & Kruschke, 2018"
"""The sources of the rule, as the report cites them."""


def scale_points(scale_min: float, scale_max: float) -> float:
    """Return the number of points of the declared scale, ``scale_max - scale_min + 1``.

    >>> scale_points(1, 5), scale_points(0, 100)
    (5.0, 101.0)
    """
    return float(scale_max) - float(scale_min) + 1.0


def scale_kind(scale_min: float, scale_max: float) -> Literal["ordinal", "continuous"]:
    """Return ``"continuous"`` for a scale of more than 11 points, else ``"ordinal"``.

    Parameters
    ----------
    scale_min, scale_max : float
        The declared scale (``[ratings]`` of study.toml).

    Returns
    -------
    {"ordinal", "continuous"}
        The kind that decides the models (see the module's rule and its sources).

    Examples
    --------
    >>> scale_kind(1, 5), scale_kind(1, 7), scale_kind(0, 10), scale_kind(0, 100)
    ('ordinal', 'ordinal', 'ordinal', 'continuous')
    """
    return "continuous" if scale_points(scale_min, scale_max) > MAX_ORDINAL_POINTS else "ordinal"


def scale_rule(scale_min: float, scale_max: float) -> str:
    """Say which kind the scale is and why, in one sentence for the report.

    >>> print(scale_rule(0, 100))
    The 0–100 scale has 101 points, more than 11, so it is analysed as a continuous rating \
(a cumulative model would need a threshold between every two points, each resting on few \
ratings; Rhemtulla, Brosseau-Liard & Savalei, 2012; Liddell & Kruschke, 2018).
    >>> scale_rule(1, 5).split(",")[0]
    'The 1–5 scale has 5 points'
    """
    points = scale_points(scale_min, scale_max)
    label = f"The {float(scale_min):g}–{float(scale_max):g} scale has {points:g} points"
    if scale_kind(scale_min, scale_max) == "continuous":
        return (
            f"{label}, more than {MAX_ORDINAL_POINTS}, so it is analysed as a continuous rating "
            "(a cumulative model would need a threshold between every two points, each "
            f"resting on few ratings; {CITATION})."
        )
    return (
        f"{label}, at most {MAX_ORDINAL_POINTS}, so whole-number ratings on it are also "
        f"analysed as ordered categories ({CITATION})."
    )


def check_ordinal_bins(
    k: Any,
    scale_min: float | None = None,
    scale_max: float | None = None,
    *,
    where: str,
    name: str = "ordinal_bins",
) -> int | None:
    """Check a number of bins for the ordinal models of a continuous scale.

    Parameters
    ----------
    k : int or None
        The number of ordered categories; ``None``: no binning.
    scale_min, scale_max : float, optional
        The declared scale; binning applies to a continuous scale only. Without them only
        the number is checked.
    where : str
        The function or command named in the message.
    name : str, default "ordinal_bins"
        How the option is named in the message (``--ordinal-bins`` on the command line).

    Returns
    -------
    int or None
        ``k`` as an int.

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``k`` is not a whole number from 2 to 11, or the scale is ordinal (its ratings
        are ordered categories already).

    Examples
    --------
    >>> check_ordinal_bins(5, 0, 100, where="report")
    5
    >>> check_ordinal_bins(None, 1, 5, where="report") is None
    True
    >>> check_ordinal_bins(5, 1, 5, where="report")
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: ordinal_bins of report bins a continuous ...
    """
    if k is None:
        return None
    whole = isinstance(k, int | np.integer) and not isinstance(k, bool | np.bool_)
    if not whole or not MIN_ORDINAL_BINS <= int(k) <= MAX_ORDINAL_BINS:
        raise InvalidParameterError(
            f"{name} of {where} must be a whole number from {MIN_ORDINAL_BINS} to "
            f"{MAX_ORDINAL_BINS} (the ordered categories the ordinal models fit); got {k!r}"
        )
    if scale_min is None or scale_max is None:
        return int(k)
    label = f"{float(scale_min):g}–{float(scale_max):g}"
    if scale_kind(scale_min, scale_max) == "ordinal":
        raise InvalidParameterError(
            f"{name} of {where} bins a continuous scale (more than {MAX_ORDINAL_POINTS} "
            f"points); this study's {label} scale has {scale_points(scale_min, scale_max):g} "
            "points and is fitted as ordered categories already: leave the option out"
        )
    return int(k)


def bin_edges(scale_min: float, scale_max: float, k: int) -> np.ndarray:
    """Return the ``k + 1`` edges of ``k`` equal-width bins over ``[scale_min, scale_max]``.

    >>> bin_edges(0, 100, 5).tolist()
    [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    """
    lo, hi = float(scale_min), float(scale_max)
    return np.array([lo + (hi - lo) * j / k for j in range(k + 1)])


def bin_midpoints(scale_min: float, scale_max: float, k: int) -> np.ndarray:
    """Return the middle of each of the ``k`` equal-width bins (the value a bin stands for).

    >>> bin_midpoints(0, 100, 5).tolist()
    [10.0, 30.0, 50.0, 70.0, 90.0]
    """
    edges = bin_edges(scale_min, scale_max, k)
    return (edges[:-1] + edges[1:]) / 2


def bin_ratings(values: Any, scale_min: float, scale_max: float, k: int) -> np.ndarray:
    """Bin ratings into ``k`` ordered categories ``1, ..., k`` of equal width.

    Bin ``j`` holds the ratings ``r`` with ``e[j-1] <= r < e[j]`` for the edges ``e`` of
    :func:`bin_edges`; the last bin also holds the top of the scale. A rating on an edge
    goes to the bin above it (on 0-100 with 5 bins: 0-19, 20-39, 40-59, 60-79, 80-100 for
    whole-number ratings).

    Parameters
    ----------
    values : array-like of float
        Ratings on the declared scale (missing values stay missing).
    scale_min, scale_max : float
        The declared scale.
    k : int
        Number of bins.

    Returns
    -------
    numpy.ndarray of float
        The bin of each rating, ``1.0`` to ``float(k)``; NaN where the rating is missing.

    Examples
    --------
    >>> bin_ratings([0, 19, 20, 99.5, 100], 0, 100, 5).tolist()
    [1.0, 1.0, 2.0, 5.0, 5.0]
    """
    v = np.asarray(values, dtype=float)
    inner = bin_edges(scale_min, scale_max, k)[1:-1]
    codes = (np.searchsorted(inner, v, side="right") + 1).astype(float)
    codes[np.isnan(v)] = np.nan
    return codes


def binned_counts(values: Any, scale_min: float, scale_max: float, k: int) -> pd.DataFrame:
    """Count the ratings in each of ``k`` equal-width bins (:func:`bin_ratings`).

    Parameters
    ----------
    values : array-like of float
        Ratings on the declared scale; missing values are not counted.
    scale_min, scale_max : float
        The declared scale.
    k : int
        Number of bins.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin`` (1 to k), ``low``, ``high`` (its edges), ``label``
        (``"[0, 20)"``, the last one ``"[80, 100]"``), ``midpoint``, ``n`` and
        ``proportion`` (of the counted ratings).

    Examples
    --------
    >>> binned_counts([0, 5, 20, 100], 0, 100, 5)[["label", "n"]].to_dict("list")
    {'label': ['[0, 20)', '[20, 40)', '[40, 60)', '[60, 80)', '[80, 100]'], 'n': [2, 1, 0, 0, 1]}
    """
    codes = bin_ratings(values, scale_min, scale_max, k)
    codes = codes[~np.isnan(codes)].astype(int)
    counts = np.bincount(codes, minlength=k + 1)[1:]
    edges = bin_edges(scale_min, scale_max, k)
    labels = [
        f"[{_num(edges[j])}, {_num(edges[j + 1])}" + ("]" if j == k - 1 else ")") for j in range(k)
    ]
    return pd.DataFrame(
        {
            "bin": np.arange(1, k + 1),
            "low": edges[:-1],
            "high": edges[1:],
            "label": labels,
            "midpoint": bin_midpoints(scale_min, scale_max, k),
            "n": counts.astype("int64"),
            "proportion": counts / max(int(counts.sum()), 1),
        }
    )


def _num(x: float) -> str:
    """Write an edge: a whole number without decimals, another to 3 significant digits."""
    return f"{x:g}" if float(x).is_integer() else f"{x:.3g}"


def bins_rule(scale_min: float, scale_max: float, k: int) -> str:
    """Describe the binning of ``k`` ordinal categories in words, for the report.

    >>> print(bins_rule(0, 100, 5))
    the ratings binned into 5 ordered categories of equal width 20 over the 0–100 scale \
([0, 20), [20, 40), [40, 60), [60, 80), [80, 100]; a rating on an edge goes to the bin above)
    """
    width = (float(scale_max) - float(scale_min)) / k
    labels = binned_counts([], scale_min, scale_max, k)["label"]
    return (
        f"the ratings binned into {k} ordered categories of equal width {_num(width)} over the "
        f"{float(scale_min):g}–{float(scale_max):g} scale ({', '.join(labels)}; a rating on "
        "an edge goes to the bin above)"
    )
