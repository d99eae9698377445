"""The benchmark's models: which ones it fits, and how each predicts an unseen participant.

:data:`MODEL_DESCRIPTIONS` lists them in table order; the two constant baselines
(:data:`CONSTANT_MODELS`) predict one value for everyone (:func:`majority_vote`, the training
mean), the mixed models predict with population-level effects only. :func:`_fit_predict`
fits one model on the training participants of a split and predicts its test sets; the runs
of :mod:`longitudinal.predict.benchmark_runs` call it for every split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal.predict.common import recording
from longitudinal.predict.effects import _check_whole
from longitudinal.predict.predictors import _KINDS, _Raw, _standardize, empathy_formula
from longitudinal.study.rating_scale import MAX_ORDINAL_POINTS, scale_kind

MODEL_DESCRIPTIONS = {
    "majority_vote": (
        "the most frequent rating of the training participants (ties: the one nearest their "
        "mean, then the lower), the same for everyone"
    ),
    "grand_mean": "mean rating of the training participants",
    "lmm_traits": "linear mixed model: traits; random intercept per participant",
    "lmm_traits_session": (
        "linear mixed model: traits + session features (between/within) + week; random "
        "intercept and week slope per participant"
    ),
    "lmm_full": (
        "linear mixed model: traits + states (between/within) + session features "
        "(between/within) + week; random intercept and week slope per participant"
    ),
    "clmm_full": (
        "cumulative link (ordinal) mixed model with the predictors of lmm_full, by maximum "
        "likelihood; random intercept and week slope per participant; prediction = expected "
        "rating averaged over the participant effects"
    ),
    "bayes_ordinal": (
        "Bayesian cumulative-logit model with the predictors of lmm_full; random intercept "
        "and week slope per participant; prediction = posterior expected rating"
    ),
}
"""The benchmark's models, in table order."""

CONTINUOUS_MAJORITY_VOTE = (
    "the median rating of the training participants, the same for everyone (the categorical "
    "baseline of a continuous scale of more than 11 points, where the most frequent single "
    "value stands for a handful of ratings)"
)
"""What ``majority_vote`` predicts on a continuous scale
(:mod:`longitudinal.study.rating_scale`)."""


BASELINES_TO_BEAT = ("majority_vote", "grand_mean", "lmm_traits")
"""The package's models every other model is compared with in ``table.md``."""


CONSTANT_MODELS = ("majority_vote", "grand_mean")
"""The package's models that predict one value for everyone (r and rho undefined)."""


def majority_rating(ratings: np.ndarray) -> float:
    """Return the most frequent rating; ties broken by the distance to the mean, then lower.

    >>> majority_rating(np.array([1.0, 4.0, 4.0, 5.0, 5.0, 2.0]))
    4.0
    """
    values, counts = np.unique(ratings, return_counts=True)
    tied = values[counts == counts.max()]
    distance = np.abs(tied - ratings.mean())
    return float(tied[np.flatnonzero(distance == distance.min())[0]])


def majority_vote(ratings: np.ndarray, scale_min: float, scale_max: float) -> float:
    """Return the benchmark's categorical baseline: the majority vote, or the median.

    On an ordinal scale (at most 11 points) the most frequent rating (:func:`majority_rating`);
    on a continuous one (a 0-100 slider, :func:`longitudinal.study.rating_scale.scale_kind`) the
    median rating, since a most frequent single value there stands for a handful of ratings.

    >>> majority_vote(np.array([1.0, 4.0, 4.0, 5.0]), 1, 5)
    4.0
    >>> majority_vote(np.array([10.0, 40.0, 40.0, 70.0, 90.0, 95.0]), 0, 100)
    55.0
    """
    if scale_kind(scale_min, scale_max) == "continuous":
        return float(np.median(ratings))
    return majority_rating(ratings)


def _chosen_models(models: str | Sequence[str] | None, bayes: bool, *, func: str) -> list:
    """Return the package's models to run, in table order."""
    known = list(MODEL_DESCRIPTIONS)
    if models is None:
        return [m for m in known if bayes or m != "bayes_ordinal"]
    chosen = [models] if isinstance(models, str) else list(models)
    unknown = [m for m in chosen if m not in known]
    if unknown or not chosen:
        raise InvalidParameterError(
            f"the `models` parameter of {func} must name models from {known}; got {models!r}"
        )
    if not bayes:
        chosen = [m for m in chosen if m != "bayes_ordinal"]
    return [m for m in known if m in chosen]


def _whole_ratings_for_ordinal(
    chosen: list[str], full: Any, *, asked: Sequence[str] | None, func: str
) -> tuple[list[str], str | None]:
    """Leave the ordinal models out, with a note, on a continuous scale or fractional ratings.

    A continuous scale (more than 11 points, :func:`longitudinal.study.rating_scale.scale_kind`) is
    not predicted with ordinal models; nor are ratings that are not whole numbers. Models
    the caller named explicitly (``asked``) are not left out: the ratings are refused.
    """
    ordinal = [m for m in chosen if m in ("clmm_full", "bayes_ordinal")]
    if not ordinal:
        return chosen, None
    lo, hi = float(full.scale_min), float(full.scale_max)
    if scale_kind(lo, hi) == "continuous":
        why = (
            f"the {lo:g}–{hi:g} scale has {hi - lo + 1:g} points, more than "
            f"{MAX_ORDINAL_POINTS}, so it is predicted as a continuous rating (an ordinal "
            "model would need a threshold between every two points)"
        )
        if asked is None:
            return [m for m in chosen if m not in ordinal], f"{', '.join(ordinal)} not run: {why}"
        raise InvalidParameterError(
            f"the `models` parameter of {func} names {', '.join(ordinal)}, but {why}; leave "
            "them out"
        )
    values = full.data[full.response_col].to_numpy(dtype=float)
    if asked is None and not np.all(np.equal(np.round(values), values)):
        note = (
            f"{', '.join(ordinal)} not run: the ratings are not whole numbers (an ordinal "
            "model needs ordered categories)"
        )
        return [m for m in chosen if m not in ordinal], note
    _check_whole(full.data[full.response_col], func=func)
    return chosen, None


def _fit_predict(
    model: str,
    raw: _Raw,
    train_ids: Sequence[str],
    tests: Mapping[str, Sequence[str]],
    *,
    seed: int,
    bayes: Mapping[str, Any],
    notes: list[str],
    random_slope: bool = True,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Fit ``model`` on the training participants; predict each test set (y, yhat)."""
    data = _standardize(raw, train_ids, func="evaluate_predictions")
    frame = data.data
    id_col = data.id_col
    response = data.response_col
    train = frame[frame[id_col].isin(list(train_ids))]
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    prefix = f"{model} (seed {seed})"
    if model in CONSTANT_MODELS:
        value = (
            majority_vote(train[response].to_numpy(dtype=float), data.scale_min, data.scale_max)
            if model == "majority_vote"
            else float(train[response].mean())
        )

        def predict(test: pd.DataFrame) -> np.ndarray:
            return np.full(len(test), value)

    elif model.startswith("lmm_"):
        from models.lmm import LinearMixedModel

        kinds = {
            "lmm_traits": ("trait",),
            "lmm_traits_session": ("trait", "session", "time"),
            "lmm_full": _KINDS,
        }[model]
        formula = empathy_formula(data, kinds=kinds, random_slope=random_slope, story_effects=False)
        with recording(notes, prefix=prefix):
            fitted = LinearMixedModel(formula, reml=True).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            return fitted.predict(test, re_form="~0").to_numpy(dtype=float)

    elif model == "clmm_full":
        from models.ordinal import OrdinalMixedModel

        formula = empathy_formula(data, random_slope=random_slope, story_effects=False)
        with recording(notes, prefix=prefix):
            fitted_o = OrdinalMixedModel(formula).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            return fitted_o.predict_expected(test, re_form="marginal").to_numpy(dtype=float)

    elif model == "bayes_ordinal":
        from models.bayes import BayesianMixedModel

        formula = empathy_formula(data, random_slope=random_slope, story_effects=False)
        with recording(notes, prefix=prefix):
            # every split's participants are built as the whole study's: one compiled model
            floor = {id_col: int(frame[id_col].nunique())}
            fitted_b = BayesianMixedModel(
                formula, family="ordinal", seed=seed, min_levels=floor, **bayes
            ).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            proba = fitted_b.predict_proba(test, new_groups="population")
            values = np.asarray(proba.columns, dtype=float)
            return proba.to_numpy(dtype=float) @ values

    else:  # pragma: no cover - names are checked by the caller
        raise AssertionError(model)
    for name, ids in tests.items():
        test = frame[frame[id_col].isin(list(ids))]
        out[name] = (test[response].to_numpy(dtype=float), predict(test))
    return out
