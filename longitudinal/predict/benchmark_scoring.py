"""How the benchmark scores a prediction: the binarisation cut, the units, the verdicts.

:func:`benchmark_threshold` gives the cut for accuracy and F1 and :func:`threshold_rule`
words it; :func:`mse_factor` puts the MSE of a continuous scale in squared rating points;
:func:`spread_bounds` keeps a displayed spread inside a metric's range. The K-fold bootstrap
of :func:`models.evaluation.kfold_bootstrap` is read here too: r and rho of the constant
baselines stay undefined, and no verdict is given against a baseline whose pooled
correlation is an artifact of refitting per fold (:func:`artifact_correlations`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal.predict.benchmark_models import CONSTANT_MODELS
from longitudinal.predict.common import recording
from longitudinal.study.rating_scale import scale_kind
from models import DataQualityWarning
from models import InvalidParameterError as ModelsInvalidParameterError
from models.evaluation import (
    METRIC_NAMES,
    KFoldBootstrap,
    binarize,
    kfold_bootstrap,
    prediction_metrics,
)

THRESHOLD_SOURCES = {
    "midpoint": "the scale's midpoint",
    "study": "study.toml [ratings] threshold",
    "argument": "the threshold argument",
}
"""Where the benchmark's binarisation cut comes from, as the outputs name it. By default a
rating or prediction above the midpoint of the study's declared scale (3 on 1-5, 4 on 1-7) is
"empathic", unless study.toml declares ``[ratings] threshold``; the paper does not state its
threshold."""


CONTINUOUS_MSE_FACTOR = 0.01
"""The MSE of a continuous scale is reported in squared rating points: the x 100 of the other
metrics is undone for it (x 100 on a 0-100 slider gives tens of thousands)."""


METRIC_BOUNDS = {
    "r": (-100.0, 100.0),
    "rho": (-100.0, 100.0),
    "acc": (0.0, 100.0),
    "f1": (0.0, 100.0),
    "mse": (0.0, float("inf")),
}
"""The range of each metric (x 100): a displayed spread or error bar stops at its bounds."""


def spread_bounds(metric: str, mean: Any, sd: Any) -> tuple[Any, Any]:
    """Return the spread below and above ``mean`` (``sd`` each), cut at the metric's range.

    >>> spread_bounds("mse", 5.0, 7.0)
    (5.0, 7.0)
    >>> spread_bounds("acc", 96.0, 7.0)
    (7.0, 4.0)
    """
    low, high = METRIC_BOUNDS.get(metric, (-np.inf, np.inf))
    mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    below = np.minimum(sd, np.clip(mean - low, 0.0, None))
    above = np.minimum(sd, np.clip(high - mean, 0.0, None))
    if below.ndim == 0:
        return float(below), float(above)
    return below, above


def mse_factor(scale_min: float, scale_max: float) -> float:
    """Return what the x 100 MSE is multiplied by: 1 (ordinal scale), 0.01 (continuous).

    The MSE of a continuous scale is reported in squared rating points, not x 100.

    >>> mse_factor(1, 5), mse_factor(0, 100)
    (1.0, 0.01)
    """
    if scale_kind(scale_min, scale_max) == "continuous":
        return CONTINUOUS_MSE_FACTOR
    return 1.0


def benchmark_threshold(
    ratings: Any,
    threshold: float | None = None,
    *,
    source: str | None = None,
    func: str = "evaluate_predictions",
) -> tuple[float, str]:
    """Return the benchmark's binarisation cut and where it came from.

    Parameters
    ----------
    ratings : longitudinal.study.config.RatingsSpec
        The study's ``[ratings]`` table (``study.config.ratings``): its declared scale and
        optional ``threshold``.
    threshold : float, optional
        An explicit cut; it wins over study.toml. By default ``[ratings] threshold`` of
        study.toml, else the midpoint of the declared scale.
    source : str, optional
        How an explicit ``threshold`` is named in the outputs and in the error message
        (``"--threshold"`` on the command line); default ``"the threshold argument"``.
    func : str
        The calling function, named in the error message.

    Returns
    -------
    tuple of (float, str)
        The cut and its origin: ``"the scale's midpoint"``, ``"study.toml [ratings]
        threshold"`` or ``source``.

    Raises
    ------
    longitudinal.InvalidParameterError
        When an explicit ``threshold`` is not a number within ``[scale_min, scale_max)``:
        a cut at or above the top of the scale would call no rating "empathic".

    Examples
    --------
    >>> from longitudinal.study.config import RatingsSpec
    >>> benchmark_threshold(RatingsSpec("ratings.csv", 1, 7))
    (4.0, "the scale's midpoint")
    >>> benchmark_threshold(RatingsSpec("ratings.csv", 1, 5))
    (3.0, "the scale's midpoint")
    >>> declared = RatingsSpec("ratings.csv", 1, 7, threshold=5)
    >>> benchmark_threshold(declared)
    (5.0, 'study.toml [ratings] threshold')
    >>> benchmark_threshold(declared, 3.5, source="--threshold")
    (3.5, '--threshold')
    """
    lo, hi = float(ratings.scale_min), float(ratings.scale_max)
    if threshold is None:
        if ratings.threshold is None:
            return float(ratings.midpoint), THRESHOLD_SOURCES["midpoint"]
        return float(ratings.threshold), THRESHOLD_SOURCES["study"]
    name = source or f"the `threshold` parameter of {func}"
    value = None
    if isinstance(threshold, int | float | np.integer | np.floating) and not isinstance(
        threshold, bool | np.bool_
    ):
        value = float(threshold)
    if value is None or not np.isfinite(value) or not lo <= value < hi:
        raise InvalidParameterError(
            f"{name} must be a number within the rating scale {ratings.label} of study.toml: "
            f"at least {lo:g} and below {hi:g} (a rating above the cut counts as 'empathic'); "
            f"got {threshold!r}"
        )
    return value, source or THRESHOLD_SOURCES["argument"]


def _checked_threshold(
    ratings: Any, threshold: float | None, *, source: str | None, func: str
) -> tuple[float, str]:
    """:func:`benchmark_threshold`, then the metrics' own check of the cut, before any fit."""
    value, origin = benchmark_threshold(ratings, threshold, source=source, func=func)
    try:
        binarize([0.0], threshold=value)
    except ModelsInvalidParameterError as err:
        raise InvalidParameterError(f"{func}: {err}") from err
    return value, origin


def threshold_rule(threshold: float, source: str, scale_label: str) -> str:
    """Describe the binarisation for the outputs (``evaluation.json``, ``table.md``, report).

    >>> rule = threshold_rule(4.0, "the scale's midpoint", "1–7")
    >>> rule.split(" (the")[0]
    "positive ('empathic') when the rating or the prediction is > 4"
    >>> rule.split(" (the")[1].split(";")[0]
    " scale's midpoint, 1–7 scale"
    """
    return (
        f"positive ('empathic') when the rating or the prediction is > {threshold:g} "
        f"({source}, {scale_label} scale; the paper does not state its threshold)"
    )


def _metric_row(
    model: str,
    split: str,
    seed: int,
    y: np.ndarray,
    yhat: np.ndarray,
    *,
    threshold: float,
    notes: list[str],
    mse_factor: float = 1.0,
) -> dict[str, Any]:
    def expected(w: Any) -> bool:
        # a constant predictor: r and rho are undefined by design
        return (
            model in CONSTANT_MODELS
            and issubclass(w.category, DataQualityWarning)
            and "constant" in str(w.message)
        )

    with recording(notes, prefix=f"{model} {split} (seed {seed})", expected=expected):
        m = prediction_metrics(y, yhat, threshold=threshold)
    row = {"model": model, "split": split, "seed": seed, **{k: getattr(m, k) for k in METRIC_NAMES}}
    row["mse"] *= mse_factor
    if model in CONSTANT_MODELS:
        # pooled over K-fold folds, a constant predictor varies with the fold's training
        # participants; its correlation says nothing about prediction, so it stays undefined
        row["r"] = row["rho"] = float("nan")
    return row


def _sorted_metrics(rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
    """Sort the metric rows by split (val, test, kfold), then model in table order, then seed."""
    metrics = pd.DataFrame(rows, columns=["model", "split", "seed", *METRIC_NAMES])
    split_order = {"val": 0, "test": 1, "kfold": 2}
    model_order = {m: i for i, m in enumerate(models)}

    def key(column: pd.Series) -> pd.Series:
        if column.name == "split":
            return column.map(split_order)
        return column.map(model_order) if column.name == "model" else column

    metrics = metrics.sort_values(["split", "model", "seed"], key=key, kind="mergesort")
    return metrics.reset_index(drop=True)


def _rescaled_mse(boot: KFoldBootstrap, factor: float) -> KFoldBootstrap:
    """Put the bootstrap's MSE rows (intervals, differences) on the reported unit."""
    if factor == 1.0:
        return boot
    columns = ["estimate", "ci_low", "ci_high"]
    ci, comp = boot.intervals.copy(), boot.comparisons.copy()
    ci.loc[ci["metric"] == "mse", columns] *= factor
    comp.loc[comp["metric"] == "mse", columns] *= factor
    return KFoldBootstrap(intervals=ci, comparisons=comp, meta=boot.meta)


NOT_COMPARED = "not compared (baseline is an artifact)"
"""The verdict of a difference from a baseline whose pooled correlation is an artifact."""


def artifact_correlations(intervals: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Find the models whose pooled K-fold r or rho is an artifact of refitting per fold.

    A model refitted on every fold and without signal scores a negative pooled correlation:
    each fold's model is centred on its own training participants, so its predictions run
    against the held-out fold's mean. A pooled r (or rho) whose interval reaches 0 or below
    is read as no signal, and its value as that artifact.

    Parameters
    ----------
    intervals : pandas.DataFrame
        :attr:`EvaluationResult.intervals` (``model, metric, estimate, ci_low, ...``).

    Returns
    -------
    dict
        ``{model: {metric: estimate}}`` for ``r`` and ``rho`` whose ``ci_low <= 0``.

    Examples
    --------
    >>> ci = pd.DataFrame({"model": ["a", "a", "b"], "metric": ["r", "rho", "r"],
    ...                    "estimate": [-8.0, 12.0, 30.0], "ci_low": [-20.0, 1.0, 10.0]})
    >>> artifact_correlations(ci)
    {'a': {'r': -8.0}}
    """
    out: dict[str, dict[str, float]] = {}
    rows = intervals[intervals["metric"].isin(["r", "rho"])]
    for rec in rows.itertuples(index=False):
        low = float(rec.ci_low)
        if np.isfinite(low) and low <= 0:
            out.setdefault(str(rec.model), {})[str(rec.metric)] = float(rec.estimate)
    return out


def withhold_verdicts(
    comparisons: pd.DataFrame, artifacts: Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """Give no better/worse verdict against a baseline whose correlation is an artifact.

    The difference and its interval stay; the verdict of a row whose ``versus`` model has
    an artifact pooled ``r`` or ``rho`` (:func:`artifact_correlations`) in that metric
    becomes :data:`NOT_COMPARED`.

    >>> comp = pd.DataFrame({"model": ["m", "m"], "versus": ["a", "a"],
    ...                      "metric": ["r", "mse"], "verdict": ["better", "better"]})
    >>> withhold_verdicts(comp, {"a": {"r": -8.0}})["verdict"].tolist()
    ['not compared (baseline is an artifact)', 'better']
    """
    out = comparisons.copy()
    pairs = {(m, k) for m, metrics in artifacts.items() for k in metrics}
    mask = [(str(v), str(k)) in pairs for v, k in zip(out["versus"], out["metric"], strict=True)]
    out.loc[mask, "verdict"] = NOT_COMPARED
    return out


def _undefined_for_constants(boot: KFoldBootstrap) -> KFoldBootstrap:
    """Blank r and rho of the constant predictors (and differences from them)."""
    ci = boot.intervals.copy()
    mask = ci["model"].isin(CONSTANT_MODELS) & ci["metric"].isin(["r", "rho"])
    ci.loc[mask, ["estimate", "ci_low", "ci_high"]] = float("nan")
    ci.loc[mask, "interval"] = "undefined"
    ci.loc[mask, "n_boot"] = 0
    comp = boot.comparisons.copy()
    mask = (comp["model"].isin(CONSTANT_MODELS) | comp["versus"].isin(CONSTANT_MODELS)) & comp[
        "metric"
    ].isin(["r", "rho"])
    comp.loc[mask, ["estimate", "ci_low", "ci_high"]] = float("nan")
    comp.loc[mask, "n_boot"] = 0
    comp.loc[mask, "verdict"] = "undefined"
    return KFoldBootstrap(intervals=ci, comparisons=comp, meta=boot.meta)


def _kfold_intervals(
    y: np.ndarray,
    out_of_fold: Mapping[str, np.ndarray],
    *,
    groups: np.ndarray,
    n_boot: int,
    ci_level: float,
    threshold: float,
    seed: int,
    mse_factor: float,
) -> tuple[KFoldBootstrap | None, dict[str, Any] | None]:
    """Bootstrap the K-fold metrics of the models with every out-of-fold prediction.

    Returns the bootstrap (``None`` without a K-fold or with ``n_boot`` 0), its MSE on the
    reported unit, r and rho of the constant baselines undefined and no verdict against an
    artifact correlation, and what ``parameters["bootstrap"]`` records of it.
    """
    complete = {m: v for m, v in out_of_fold.items() if np.isfinite(v).all()}
    if not complete or n_boot <= 0:
        return None, None
    boot = kfold_bootstrap(
        y,
        complete,
        groups=groups,
        n_boot=n_boot,
        ci_level=ci_level,
        threshold=threshold,
        seed=seed,
    )
    boot = _undefined_for_constants(_rescaled_mse(boot, mse_factor))
    artifacts = artifact_correlations(boot.intervals)
    boot = KFoldBootstrap(
        intervals=boot.intervals,
        comparisons=withhold_verdicts(boot.comparisons, artifacts),
        meta=boot.meta,
    )
    return boot, {**boot.meta, "models": list(complete), "artifacts": artifacts}
