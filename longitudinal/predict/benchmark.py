"""The out-of-person prediction benchmark (EmpathicStories++; Shen et al., ACL Findings 2024).

:func:`evaluate_predictions` fits the package's models on the training participants of each
split (:func:`longitudinal.splits.draw_splits`) and scores them, and a researcher's own
predictions (:mod:`longitudinal.user_predictions`), with the metrics of
:mod:`models.evaluation` on the participants no model saw.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._checks import check_bool, check_int, check_unit
from longitudinal._display import DECIMALS, Result
from longitudinal._errors import InvalidParameterError
from longitudinal.predict._common import _check_study, _empty, _recording, sampling_settings
from longitudinal.predict.effects import _check_whole
from longitudinal.predict.left_out import left_out_summary
from longitudinal.predict.predictors import (
    _KINDS,
    EmpathyData,
    _Raw,
    _standardize,
    empathy_formula,
)
from longitudinal.predict.selection import _benchmark_data
from longitudinal.rating_scale import MAX_ORDINAL_POINTS, scale_kind
from longitudinal.splits import SPLIT_SIZES, draw_splits, seed_list, splits_table
from models import DataQualityWarning
from models import InvalidParameterError as ModelsInvalidParameterError
from models.bayes import default_sampler
from models.evaluation import (
    BOOTSTRAP_COLUMNS,
    COMPARISON_COLUMNS,
    METRIC_NAMES,
    KFoldBootstrap,
    binarize,
    kfold_bootstrap,
    overlapping_groups,
    prediction_metrics,
    summarize_metrics,
)
from surveys import __version__

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.study import Study


THRESHOLD_SOURCES = {
    "midpoint": "the scale's midpoint",
    "study": "study.toml [ratings] threshold",
    "argument": "the threshold argument",
}
"""Where the benchmark's binarisation cut comes from, as the outputs name it. By default a
rating or prediction above the midpoint of the study's declared scale (3 on 1-5, 4 on 1-7) is
"empathic", unless study.toml declares ``[ratings] threshold``; the paper does not state its
threshold."""

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
"""What ``majority_vote`` predicts on a continuous scale (:mod:`longitudinal.rating_scale`)."""

CONTINUOUS_MSE_FACTOR = 0.01
"""The MSE of a continuous scale is reported in squared rating points: the x 100 of the other
metrics is undone for it (x 100 on a 0-100 slider gives tens of thousands)."""

BASELINES_TO_BEAT = ("majority_vote", "grand_mean", "lmm_traits")
"""The package's models every other model is compared with in ``table.md``."""

_PAPER_BESTS = (
    ("story share, best model (GPT-4)", 23.2, 17.6),
    ("reflection, best model (LF-LSTM, video + text)", 56.0, None),
)
"""The paper's best test-set r and ρ (x 100), shown for orientation in ``table.md``."""


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


class _SummaryTable(pd.DataFrame):
    """``EvaluationResult.summary``: called, the text summary; used as a table, deprecated.

    Earlier releases had the table under this name; it is ``summary_table`` now, and
    ``summary()`` is the text summary every result has.
    """

    _metadata = ["_owner"]

    def __init__(self, data: Any = None, *args: Any, owner: Any = None, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        self._owner = owner

    @property
    def _constructor(self) -> type:
        return pd.DataFrame

    def __call__(self, decimals: int = DECIMALS) -> Any:
        return Result.summary(self._owner, decimals)

    def __getitem__(self, key: Any) -> Any:
        warnings.warn(
            "EvaluationResult.summary as a table is deprecated: use summary_table (summary() "
            "is the text summary)",
            FutureWarning,
            stacklevel=2,
        )
        return super().__getitem__(key)


@dataclass(frozen=True, repr=False)
class EvaluationResult(Result):
    """Metrics of the out-of-person prediction benchmark.

    Attributes
    ----------
    metrics : pandas.DataFrame
        ``model, split, seed, r, rho, acc, f1, mse`` (x 100; on a continuous scale of more than
        11 points the MSE in squared rating points instead), one row per model x split x
        seed; ``split`` is ``val`` or ``test`` (70/20/10 participant split) or ``kfold``
        (grouped K-fold: the metrics of every participant's out-of-fold prediction, pooled;
        see :func:`evaluate_predictions`). The package's
        models come first, then a researcher's (``predictions``), in order of appearance.
    summary_table : pandas.DataFrame
        :func:`models.evaluation.summarize_metrics` over seeds: ``model, split, n`` and
        ``{metric}_mean, {metric}_sd, {metric}_n`` (``summary()`` is the text summary, as on
        every result; indexing ``result.summary_table`` as a table still works in this release and
        warns).
    runs : pandas.DataFrame
        One row per fitted model and test set: ``model, split, seed, fold, n_train, n_test,
        participants_train, participants_test, seconds`` (wall time of the fit and its
        predictions; the ``val`` and ``test`` rows of one fit repeat the same time; NaN for
        a researcher's model, fitted elsewhere).
    parameters : dict
        Everything needed to reproduce and read the numbers (threshold rule, sizes, seeds,
        k, model descriptions, sampler settings, package version, total seconds).
    notes : tuple of str
        Warnings of the fits and of the metrics (e.g. r undefined for the grand mean), and
        predictions of a researcher's model that were not scored.
    splits : pandas.DataFrame
        The participant splits used, ``scheme, seed, {participant column}, split``
        (:func:`longitudinal.splits.splits_table`; what ``longitudinal splits`` exports). Not
        written by :func:`run_evaluation` (its files name no participant).
    intervals : pandas.DataFrame
        Participant-cluster bootstrap intervals of the grouped K-fold metrics, one row per
        model x metric (:attr:`models.evaluation.KFoldBootstrap.intervals`: ``model, metric,
        estimate, ci_low, ci_high, ci_level, n_boot, n_groups``); empty without a K-fold.
    comparisons : pandas.DataFrame
        Paired differences between models on the same bootstrap draws, one row per pair x
        metric (:attr:`models.evaluation.KFoldBootstrap.comparisons`).
    """

    metrics: pd.DataFrame
    summary_table: pd.DataFrame
    runs: pd.DataFrame
    parameters: dict[str, Any]
    notes: tuple[str, ...]
    splits: pd.DataFrame = field(default_factory=pd.DataFrame)
    intervals: pd.DataFrame = field(default_factory=lambda: _empty(BOOTSTRAP_COLUMNS))
    comparisons: pd.DataFrame = field(default_factory=lambda: _empty(COMPARISON_COLUMNS))

    @property
    def summary(self) -> _SummaryTable:  # type: ignore[override]
        """The text summary when called, ``summary()``; the table when indexed (deprecated)."""
        return _SummaryTable(self.summary_table, owner=self)

    def _title(self) -> str:
        p = self.parameters
        models = list(p.get("models", {}))
        kfold = f", grouped {p['k']}-fold" if p.get("k") else ""
        return (
            f"EvaluationResult: {len(models)} models, {len(p.get('seeds', []))} split seed(s)"
            f"{kfold}, {p.get('n_participants', '?')} participants"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        columns = ["model", "split", *(f"{m}_mean" for m in METRIC_NAMES)]
        table = self.summary_table
        summary = table[[c for c in columns if c in table.columns]]
        parts = [("Metrics x 100, mean over seeds", summary)]
        if not self.intervals.empty:
            keep = ["model", "metric", "estimate", "ci_low", "ci_high"]
            parts.append(("Grouped K-fold intervals", self.intervals[keep]))
        return parts


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
        with _recording(notes, prefix=prefix):
            fitted = LinearMixedModel(formula, reml=True).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            return fitted.predict(test, re_form="~0").to_numpy(dtype=float)

    elif model == "clmm_full":
        from models.ordinal import OrdinalMixedModel

        formula = empathy_formula(data, random_slope=random_slope, story_effects=False)
        with _recording(notes, prefix=prefix):
            fitted_o = OrdinalMixedModel(formula).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            return fitted_o.predict_expected(test, re_form="marginal").to_numpy(dtype=float)

    elif model == "bayes_ordinal":
        from models.bayes import BayesianMixedModel

        formula = empathy_formula(data, random_slope=random_slope, story_effects=False)
        with _recording(notes, prefix=prefix):
            fitted_b = BayesianMixedModel(formula, family="ordinal", seed=seed, **bayes).fit(train)

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


@dataclass(frozen=True)
class _Fit:
    """One fit of the benchmark: a model on one split (holdout, or one K-fold fold) of a seed."""

    model: str
    split: str  # "holdout" | "kfold"
    seed: int
    fold: int | None
    train: np.ndarray  # row indices of the training participants
    parts: Mapping[str, np.ndarray]  # test set name -> row indices


@dataclass(frozen=True)
class _FitJob:
    """The fits of one evaluation as a job of the power back ends (``n_sims``, ``run``).

    Sent to each worker once; a task names a range of fits. Each fit returns its
    predictions, the notes its warnings gave and its seconds.
    """

    raw: _Raw
    groups: np.ndarray
    bayes: Mapping[str, Any]
    random_slope: bool
    fits: tuple[_Fit, ...]

    @property
    def n_sims(self) -> int:
        """How many fits (the back ends' name for the number of tasks)."""
        return len(self.fits)

    def run(self, start: int, stop: int) -> list[tuple[dict, list[str], float]]:
        """Fit ``fits[start:stop]``: ``(predictions, notes, seconds)`` each."""
        out = []
        for fit in self.fits[start:stop]:
            notes: list[str] = []
            t0 = time.perf_counter()
            pred = _fit_predict(
                fit.model,
                self.raw,
                sorted(set(self.groups[fit.train].tolist())),
                {name: sorted(set(self.groups[idx].tolist())) for name, idx in fit.parts.items()},
                seed=fit.seed,
                bayes=self.bayes,
                notes=notes,
                random_slope=self.random_slope,
            )
            out.append((pred, notes, time.perf_counter() - t0))
        return out


class _Runner:
    """Fit (or look up) every model on every split of the plan; keep a record of each run."""

    def __init__(
        self,
        raw: _Raw,
        full: EmpathyData,
        groups: np.ndarray,
        plan: Sequence[Any],
        user: Any,
        bayes: Mapping[str, Any],
        random_slope: bool,
        notes: list[str],
    ) -> None:
        self.raw, self.groups, self.plan, self.user = raw, groups, plan, user
        self.bayes, self.random_slope, self.notes = bayes, random_slope, notes
        self.y = full.data[full.response_col].to_numpy(dtype=float)
        self.lo, self.hi = float(full.scale_min), float(full.scale_max)
        self.mse_factor = mse_factor(self.lo, self.hi)
        self.clipped: dict[str, list[int]] = {}  # model -> [outside the scale, predictions]
        self.scheme = {("holdout" if s.fold is None else "kfold", s.seed): s.scheme for s in plan}
        self.records: list[dict[str, Any]] = []
        # (model, split, seed, fold) -> (predictions, notes, seconds) of fits run elsewhere
        self.done: dict[tuple[str, str, int, int | None], tuple[dict, list[str], float]] = {}

    def _given(self, model: str) -> bool:
        return self.user is not None and model in self.user.models

    def run(self, model: str, split: str, seed: int, fold: int | None, train_idx, tests) -> dict:
        """Predict each test set of one split: ``{name: (y, prediction)}``."""
        groups = self.groups
        leaked = overlapping_groups(groups, [train_idx, *tests.values()])
        if leaked:  # pragma: no cover - guarded by the splitters' own tests
            raise AssertionError(f"participants in train and test: {leaked}")
        train_ids = sorted(set(groups[train_idx].tolist()))
        test_ids = {name: sorted(set(groups[idx].tolist())) for name, idx in tests.items()}
        t0 = time.perf_counter()
        seconds = float("nan")
        if self._given(model):
            given = self.user.values[(model, self.scheme[(split, seed)], seed)]
            pred = {
                name: (self.y[idx], given[idx])
                for name, idx in tests.items()
                if name == "test" or not np.isnan(given[idx]).all()
            }
        elif (model, split, seed, fold) in self.done:  # fitted by a worker: its notes in order
            pred, notes, seconds = self.done.pop((model, split, seed, fold))
            pred = dict(pred)
            self.notes.extend(n for n in notes if n not in self.notes)  # as _recording keeps
        else:
            pred = _fit_predict(
                model,
                self.raw,
                train_ids,
                test_ids,
                seed=seed,
                bayes=self.bayes,
                notes=self.notes,
                random_slope=self.random_slope,
            )
            seconds = time.perf_counter() - t0
        if not self._given(model):  # the package's models: kept on the declared scale
            count = self.clipped.setdefault(model, [0, 0])
            for name, (y, yhat) in list(pred.items()):
                outside = (yhat < self.lo) | (yhat > self.hi)
                count[0] += int(outside.sum())
                count[1] += int(yhat.size)
                pred[name] = (y, np.clip(yhat, self.lo, self.hi))
        for name, (y, _) in pred.items():
            self.records.append(
                {
                    "model": model,
                    "split": split if split == "kfold" else name,
                    "seed": seed,
                    "fold": fold,
                    "n_train": int(len(train_idx)),
                    "n_test": int(len(y)),
                    "participants_train": len(train_ids),
                    "participants_test": len(test_ids[name]),
                    "seconds": seconds,
                }
            )
        return pred

    def fits(self, models: list[str], seeds: list[int], *, bayes_kfold: bool) -> list[_Fit]:
        """Every fit of the package's models that :meth:`score` runs, in its order."""
        out = []
        for seed in seeds:
            holdout = next(s for s in self.plan if s.seed == seed and s.fold is None)
            folds = [s for s in self.plan if s.seed == seed and s.fold is not None]
            for model in models:
                if not self._given(model):
                    out.append(_Fit(model, "holdout", seed, None, holdout.train, holdout.parts))
            for model in models if folds else []:
                if (model == "bayes_ordinal" and not bayes_kfold) or self._given(model):
                    continue
                out.extend(_Fit(model, "kfold", seed, f.fold, f.train, f.parts) for f in folds)
        return out

    def fit_elsewhere(
        self,
        models: list[str],
        seeds: list[int],
        *,
        bayes_kfold: bool,
        scheduler: Any,
        progress: bool,
    ) -> dict[str, Any]:
        """Run every fit on ``scheduler`` (processes or Dask) before :meth:`score` reads them.

        The fits go out in batches (``models.power._runners``, the back ends of
        :func:`models.power.simulate_power`); a fit depends only on its split, model and seed,
        so :meth:`score` then gives the tables of the serial run, notes in the same order.
        """
        import models.power._runners as runners

        fits = self.fits(models, seeds, bayes_kfold=bayes_kfold)
        job = _FitJob(self.raw, self.groups, self.bayes, self.random_slope, tuple(fits))
        workers = max(int(scheduler.workers or 2), 1)
        size = max(1, len(fits) // (4 * workers))  # a few batches per worker, to balance
        bar = runners.Progress(len(fits), enabled=progress, label="evaluate")
        try:
            (outcomes,), info = runners.run(
                [job], scheduler=scheduler, batch_size=size, progress=bar
            )
        finally:
            bar.close()
        for fit, outcome in zip(fits, outcomes, strict=True):
            self.done[(fit.model, fit.split, fit.seed, fit.fold)] = outcome
        return {"scheduler": info["scheduler"], "workers": info.get("workers"), "fits": len(fits)}

    def score(
        self, models: list[str], seeds: list[int], *, threshold: float, bayes_kfold: bool
    ) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
        """Metric rows of every model, split and seed; each model's K-fold predictions."""
        rows: list[dict[str, Any]] = []
        out_of_fold: dict[str, np.ndarray] = {}  # model -> (seed, rating): K-fold prediction
        notes, user = self.notes, self.user
        for seed_index, seed in enumerate(seeds):
            holdout = next(s for s in self.plan if s.seed == seed and s.fold is None)
            folds = [s for s in self.plan if s.seed == seed and s.fold is not None]
            for model in models:
                if self._given(model) and holdout.scheme not in user.schemes[model]:
                    continue
                pred = self.run(model, "holdout", seed, None, holdout.train, holdout.parts)
                for name, (y, yhat) in pred.items():
                    rows.append(
                        _metric_row(
                            model,
                            name,
                            seed,
                            y,
                            yhat,
                            threshold=threshold,
                            notes=notes,
                            mse_factor=self.mse_factor,
                        )
                    )
            for model in models if folds else []:
                if model == "bayes_ordinal" and not bayes_kfold:
                    continue
                if self._given(model) and folds[0].scheme not in user.schemes[model]:
                    continue
                oof = out_of_fold.setdefault(model, np.full((len(seeds), len(self.y)), np.nan))
                for f in folds:
                    pred = self.run(model, "kfold", seed, f.fold, f.train, f.parts)
                    oof[seed_index, f.parts["test"]] = pred["test"][1]
                row = _metric_row(
                    model,
                    "kfold",
                    seed,
                    self.y,
                    oof[seed_index],
                    threshold=threshold,
                    notes=notes,
                    mse_factor=self.mse_factor,
                )
                rows.append(row)
        return rows, out_of_fold


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

    with _recording(notes, prefix=f"{model} {split} (seed {seed})", expected=expected):
        m = prediction_metrics(y, yhat, threshold=threshold)
    row = {"model": model, "split": split, "seed": seed, **{k: getattr(m, k) for k in METRIC_NAMES}}
    row["mse"] *= mse_factor
    if model in CONSTANT_MODELS:
        # pooled over K-fold folds, a constant predictor varies with the fold's training
        # participants; its correlation says nothing about prediction, so it stays undefined
        row["r"] = row["rho"] = float("nan")
    return row


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
    on a continuous one (a 0-100 slider, :func:`longitudinal.rating_scale.scale_kind`) the
    median rating, since a most frequent single value there stands for a handful of ratings.

    >>> majority_vote(np.array([1.0, 4.0, 4.0, 5.0]), 1, 5)
    4.0
    >>> majority_vote(np.array([10.0, 40.0, 40.0, 70.0, 90.0, 95.0]), 0, 100)
    55.0
    """
    if scale_kind(scale_min, scale_max) == "continuous":
        return float(np.median(ratings))
    return majority_rating(ratings)


def mse_factor(scale_min: float, scale_max: float) -> float:
    """Return what the x 100 MSE is multiplied by: 1 (ordinal scale), 0.01 (continuous).

    The MSE of a continuous scale is reported in squared rating points, not x 100.

    >>> mse_factor(1, 5), mse_factor(0, 100)
    (1.0, 0.01)
    """
    if scale_kind(scale_min, scale_max) == "continuous":
        return CONTINUOUS_MSE_FACTOR
    return 1.0


def _rescaled_mse(boot: KFoldBootstrap, factor: float) -> KFoldBootstrap:
    """Put the bootstrap's MSE rows (intervals, differences) on the reported unit."""
    if factor == 1.0:
        return boot
    columns = ["estimate", "ci_low", "ci_high"]
    ci, comp = boot.intervals.copy(), boot.comparisons.copy()
    ci.loc[ci["metric"] == "mse", columns] *= factor
    comp.loc[comp["metric"] == "mse", columns] *= factor
    return KFoldBootstrap(intervals=ci, comparisons=comp, meta=boot.meta)


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
    ratings : longitudinal.study_config.RatingsSpec
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
    >>> from longitudinal.study_config import RatingsSpec
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


def check_benchmark_counts(n_seeds: int, k: int, n_boot: Any, *, func: str) -> None:
    """Refuse, before any work, counts of the benchmark past their ceilings.

    Seeds at most :data:`~models._limits.EVALUATE_MAX_SEEDS`, folds ``k`` 0 or 2 to
    :data:`~models._limits.EVALUATE_MAX_KFOLD`, fitted splits per model ``n_seeds x (k + 1)``
    at most :data:`~models._limits.EVALUATE_MAX_SPLITS` and bootstrap replicates ``n_boot``
    0 to :data:`~models._limits.EVALUATE_MAX_N_BOOT`. Each refusal names the parameter (its
    option on the command line: ``--seeds``, ``--kfold``, ``--n-boot``) and says why.

    Parameters
    ----------
    n_seeds : int
        Number of split seeds.
    k : int
        Folds of the grouped K-fold (0: none).
    n_boot : int
        Bootstrap replicates of the K-fold metrics (0: none).
    func : str
        The calling function, named in the messages outside the command line.

    Raises
    ------
    longitudinal.InvalidParameterError
        For a count past its ceiling.

    Examples
    --------
    >>> from longitudinal.predict.benchmark import check_benchmark_counts
    >>> check_benchmark_counts(5, 5, 2000, func="evaluate_predictions")
    >>> check_benchmark_counts(5, 5, 10**12, func="evaluate_predictions")
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: the `n_boot` parameter of evaluate_predictions must be a whole number from 0 to 100,000; got 1000000000000 (more replicates do not change a 95% bound at the printed precision)
    """  # noqa: E501
    from _empathic_base.words import parameter
    from models._limits import (
        EVALUATE_MAX_KFOLD,
        EVALUATE_MAX_N_BOOT,
        EVALUATE_MAX_SEEDS,
        EVALUATE_MAX_SPLITS,
    )

    if not 1 <= n_seeds <= EVALUATE_MAX_SEEDS:
        raise InvalidParameterError(
            f"{parameter('seeds', func)} must give from 1 to {EVALUATE_MAX_SEEDS:,} seeds; got "
            f"{n_seeds} (each seed refits every model for its holdout and its K folds)"
        )
    if k == 1 or not 0 <= k <= EVALUATE_MAX_KFOLD:
        raise InvalidParameterError(
            f"{parameter('k', func)} must be 0 (no K-fold) or a number of folds from 2 to "
            f"{EVALUATE_MAX_KFOLD:,}; got {k} (each fold refits every model)"
        )
    if n_seeds * (k + 1) > EVALUATE_MAX_SPLITS:
        raise InvalidParameterError(
            f"{parameter('seeds', func)} x ({parameter('k', func)} + 1) = {n_seeds:,} x "
            f"{k + 1:,} = {n_seeds * (k + 1):,} fitted splits per model, more than the limit of "
            f"{EVALUATE_MAX_SPLITS:,} (hours per model even for the linear ones); use fewer "
            "seeds or folds"
        )
    if (
        isinstance(n_boot, bool)
        or not isinstance(n_boot, int | np.integer)
        or not 0 <= n_boot <= EVALUATE_MAX_N_BOOT
    ):
        raise InvalidParameterError(
            f"{parameter('n_boot', func)} must be a whole number from 0 to "
            f"{EVALUATE_MAX_N_BOOT:,}; got {n_boot!r} (more replicates do not change a 95% "
            "bound at the printed precision)"
        )


def check_bootstrap_size(n_boot: int, n_ratings: int, *, func: str) -> None:
    """Refuse a K-fold bootstrap whose replicate weights would not fit in memory.

    The weights are ``(n_boot + 1) x n_ratings`` numbers, at most
    :data:`~models._limits.EVALUATE_MAX_BOOT_CELLS`; the refusal gives the most replicates
    that fit the study. Checked once the study's ratings are counted, before any fit.

    Examples
    --------
    >>> from longitudinal.predict.benchmark import check_bootstrap_size
    >>> check_bootstrap_size(2000, 807, func="evaluate_predictions")
    >>> check_bootstrap_size(100_000, 807, func="evaluate_predictions")
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: the `n_boot` parameter of evaluate_predictions is 100,000: the bootstrap would weigh 807 ratings 100,001 times (80,700,807 weights, more than the limit of 50,000,000, about 2 GB of memory); at most 61,956 replicates fit this study
    """  # noqa: E501
    from _empathic_base.words import parameter
    from models._limits import EVALUATE_MAX_BOOT_CELLS

    cells = (int(n_boot) + 1) * int(n_ratings)
    if n_boot and cells > EVALUATE_MAX_BOOT_CELLS:
        fits = max(EVALUATE_MAX_BOOT_CELLS // max(int(n_ratings), 1) - 1, 0)
        raise InvalidParameterError(
            f"{parameter('n_boot', func)} is {int(n_boot):,}: the bootstrap would weigh "
            f"{int(n_ratings):,} ratings {int(n_boot) + 1:,} times ({cells:,} weights, more than "
            f"the limit of {EVALUATE_MAX_BOOT_CELLS:,}, about 2 GB of memory); at most "
            f"{fits:,} replicates fit this study"
        )


def evaluate_predictions(
    study: Study,
    *,
    seeds: int | Sequence[int] = 5,
    k: int = 5,
    models: Sequence[str] | None = None,
    bayes: bool = True,
    bayes_kfold: bool = False,
    threshold: float | None = None,
    threshold_source: str | None = None,
    sizes: tuple[float, float, float] = SPLIT_SIZES,
    session_features: Sequence[str] | None = None,
    predictors: Sequence[str] | None = None,
    random_slope: bool = True,
    draws: int | None = None,
    tune: int | None = None,
    chains: int | None = None,
    sampler: str | None = None,
    n_boot: int = 2000,
    ci_level: float = 0.95,
    bootstrap_seed: int = 0,
    predictions: pd.DataFrame
    | Mapping[str, pd.DataFrame]
    | str
    | os.PathLike[str]
    | Sequence[str | os.PathLike[str]]
    | None = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> EvaluationResult:
    """Run the out-of-person empathy prediction benchmark on a study.

    Parameters
    ----------
    study : longitudinal.study.Study
        A loaded study.
    seeds : int or sequence of int, default 5
        Split seeds; an int ``n`` means ``0, ..., n - 1``.
    k : int, default 5
        Folds of the grouped K-fold, repeated for every seed; 0 skips the K-fold.
    models : sequence of str, optional
        Subset of :data:`MODEL_DESCRIPTIONS` (default all, ``bayes_ordinal`` only with
        ``bayes``; on a continuous scale of more than 11 points the ordinal models
        ``clmm_full`` and ``bayes_ordinal`` are left out with a note, and refused when named).
    bayes : bool, default True
        Include the Bayesian ordinal model.
    bayes_kfold : bool, default False
        Also fit the Bayesian model in every K-fold fold (``k`` times more sampling).
    threshold : float, optional
        Binarisation cut for accuracy and F1: positive ("empathic") when rating or prediction
        > ``threshold``; it must lie within ``[scale_min, scale_max)`` of the study's scale.
        By default ``[ratings] threshold`` of study.toml, else the midpoint of the declared
        scale (3 on 1-5: whole-number ratings 4 and 5 positive; 4 on 1-7). The paper does not
        state its threshold; the value and its origin are recorded in the output
        (:func:`benchmark_threshold`).
    threshold_source : str, optional
        How an explicit ``threshold`` is named in the outputs (default "the threshold
        argument"; ``longitudinal evaluate`` passes ``"--threshold"``).
    sizes : tuple of float, default (0.7, 0.2, 0.1)
        Train, validation and test shares of the participants.
    session_features : sequence of str, optional
        Session features used by the session and full models; by default the study's (see
        :func:`empathy_data`).
    predictors : sequence of str, optional
        The traits, states and session features the models use (scale score columns,
        instruments or sessions.csv columns; :func:`longitudinal.predict.selection.
        resolve_predictors`); default study.toml's ``[roles] predictors``, else every trait,
        state and session feature of the study. Every named predictor enters (no budget).
    random_slope : bool, default True
        Random week slope per participant in the models that have the week term
        (``lmm_traits`` has a random intercept only).
    draws, tune, chains : int, optional
        Sampler settings of the Bayesian model; by default its own
        (:data:`models.bayes.DEFAULT_SAMPLING`; about 45 s per fit on 2 cores, the model
        compiled once per structure). Failed diagnostics are recorded in ``notes``.
    sampler : str, optional
        Default nutpie when installed, else PyMC.
    n_boot : int, default 2000
        Replicates B of the participant-cluster bootstrap of the K-fold metrics (0: none).
    ci_level : float, default 0.95
        Level of the bootstrap intervals.
    bootstrap_seed : int, default 0
        Seed of the bootstrap draws.
    predictions : CSV path(s), DataFrame or mapping of str to DataFrame, optional
        A researcher's own models' predictions on the splits of
        :func:`longitudinal.splits.participant_splits` (same ``seeds``, ``k`` and ``sizes``):
        files, one table, or source name -> table, with the columns ``model, scheme, seed``,
        the study's participant, session and position columns and ``prediction``
        (:mod:`longitudinal.user_predictions`). Each model is scored beside the package's
        models.
    scheduler : str, optional
        Where the fits run: ``None`` (here, one after another), ``"processes:N"`` (N local
        processes), ``"local:N"`` (a Dask LocalCluster of N workers on 127.0.0.1) or
        ``"tcp://host:port"`` (an existing Dask scheduler; the ``dask`` extra). The folds x
        seeds x models are sent out in batches, and the results are those of the serial run
        (each fit depends only on its split, model and seed). The back ends are those of
        :func:`models.power.simulate_power`.
    progress : bool, default False
        A progress line on a terminal's stderr while the fits run elsewhere.

    Returns
    -------
    EvaluationResult
        Metrics per model x split x seed, their summary over seeds, per-fit details,
        the splits, the K-fold bootstrap intervals and paired comparisons, parameters and
        notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        For invalid options, unknown models, or too few participants for the splits.
    surveys.InputValidationError
        For ``predictions`` that cannot be scored, listing every problem (file, row, rating);
        raised before any model is fitted.

    Notes
    -----
    Per seed, the participants are split 70/20/10 (:func:`models.evaluation.grouped_split`)
    and every model is fitted on the training participants only and evaluated on the
    validation and test participants; then, with ``k > 0``, on grouped K-folds
    (:func:`models.evaluation.grouped_kfold`): every participant is predicted by the model
    fitted without their fold, and a seed's K-fold metric is that of all these out-of-fold
    predictions pooled. (The mean of per-fold metrics would not estimate the population
    value: a correlation within a fold of a few people is centred on that fold's own mean.)
    Both are drawn by
    :func:`longitudinal.splits.draw_splits`, which also gives ``longitudinal splits`` its
    splits. The predictors are standardized with the training participants' means and SDs.
    No participant is in two parts of a split (checked before fitting,
    :func:`models.evaluation.overlapping_groups`). A test participant's between-person parts
    come from their own surveys and sessions (never their ratings).

    Predictions for the unseen participants use population-level effects only: ``X beta``
    for the LMMs (``re_form="~0"``); for the Bayesian model, the expected rating ``sum_k k
    P(y = k)`` with the participant effects integrated over their fitted distribution
    (``predict_proba(new_groups="population")``). The prediction models have no story
    effect (stories add nothing to a population-level prediction and cost run time). The
    package's predictions are clipped to the study's declared scale ``[scale_min,
    scale_max]`` before scoring (a linear model may predict below the bottom or above the
    top of the slider; the ordinal models' expected ratings lie on it already); how many
    were outside is recorded per model in ``parameters["clipping"]``. A researcher's
    predictions off the scale are refused, not clipped.

    Metrics (x 100, :func:`models.evaluation.prediction_metrics`): Pearson r, Spearman rho,
    accuracy and binary F1 after binarising at ``threshold``, and MSE on the rating scale.
    The baselines to beat are ``majority_vote`` (the most frequent training rating for
    everyone), ``grand_mean`` (the training mean) and ``lmm_traits``; the first two predict
    one value for everyone, so their r and rho are undefined (NaN) by design.

    The kind of the declared scale decides the categorical parts
    (:mod:`longitudinal.rating_scale`). On an ordinal scale (at most 11 points: 1-5, 1-7) all
    is as above. On a continuous scale (more than 11 points, a 0-100 slider) the most
    frequent single value stands for a handful of ratings, so ``majority_vote`` predicts the
    median training rating (:func:`majority_vote`); accuracy and F1 binarise at the same
    ``threshold`` (the midpoint, 50 on 0-100, unless declared); the MSE is reported in
    squared rating points, not x 100 (:func:`mse_factor`; x 100 would print tens of
    thousands), in the metric rows, the summary and the bootstrap intervals and differences;
    and the ordinal models are not run. ``parameters["metric_units"]`` and
    ``parameters["metrics"]`` say which units the numbers are in. A researcher's
    model is scored by the same code on the same ratings: per seed, its predictions of the
    test (and, when given, validation) ratings of the holdout split, and its out-of-fold
    predictions of the K-fold, pooled.

    Uncertainty. The holdout test set of a seed holds few people (4 of 41 participants): its
    mean ± SD over seeds is the spread of the splits, not a sampling interval, and a test
    set of fewer than 10 people supports no inference (``parameters["holdout_caveat"]``).
    For the grouped K-fold, where every participant is predicted once per seed by a model
    that did not see them, :func:`models.evaluation.kfold_bootstrap` gives each model's
    metrics a participant-cluster bootstrap interval (``intervals``; B = ``n_boot``
    replicates drawn with ``bootstrap_seed``, predictions held fixed; estimate ± t SE on
    Fisher's z, the logit or the log, which covered the population value in 94-95% of
    simulated 41-person studies) and every pair of models a paired difference with its
    interval (``comparisons``), which calls a difference better or worse only when its
    interval excludes 0, and never against a baseline whose pooled r or rho is an artifact
    of refitting per fold (its interval reaches 0: :func:`artifact_correlations`; verdict
    :data:`NOT_COMPARED`, listed in ``parameters["bootstrap"]["artifacts"]``).

    Examples
    --------
    >>> from longitudinal.predict import evaluate_predictions
    >>> result = evaluate_predictions(study, seeds=2, bayes=False)  # doctest: +SKIP
    >>> result.summary_table[["model", "split", "r_mean", "r_sd"]]  # doctest: +SKIP
    """
    func = "evaluate_predictions"
    _check_study(study, func=func)
    scale = study.config.ratings
    threshold, threshold_from = benchmark_threshold(
        scale, threshold, source=threshold_source, func=func
    )
    try:  # the metrics' own check of the threshold, before anything is fitted
        binarize([0.0], threshold=threshold)
    except ModelsInvalidParameterError as err:
        raise InvalidParameterError(f"{func}: {err}") from err
    seed_list_ = seed_list(seeds, func=func)
    k = check_int(k, name="k", where=func, minimum=0)
    if k == 1:
        raise InvalidParameterError(f"the `k` parameter of {func} must be 0 (no K-fold) or >= 2")
    check_benchmark_counts(len(seed_list_), k, n_boot, func=func)
    for name, value in (
        ("bayes", bayes),
        ("bayes_kfold", bayes_kfold),
        ("random_slope", random_slope),
    ):
        check_bool(value, name=name, where=func)
    known = list(MODEL_DESCRIPTIONS)
    chosen = _chosen_models(models, bayes, func=func)
    settings = sampling_settings(draws, tune, chains, where=func)
    bayes_opts: dict[str, Any] = dict(zip(("draws", "tune", "chains"), settings, strict=True))
    bayes_opts["sampler"] = sampler or default_sampler()
    n_boot = check_int(n_boot, name="n_boot", where=func, minimum=0)
    ci_level = check_unit(ci_level, name="ci_level", where=func)
    bootstrap_seed = check_int(bootstrap_seed, name="bootstrap_seed", where=func, minimum=0)
    check_bool(progress, name="progress", where=func)
    where = _check_scheduler(scheduler, func=func)
    start = time.perf_counter()
    raw, full = _benchmark_data(
        study, session_features=session_features, predictors=predictors, func=func
    )
    chosen, fractional_note = _whole_ratings_for_ordinal(chosen, full, asked=models, func=func)
    groups = full.data[full.id_col].to_numpy(dtype=object)
    if k:
        check_bootstrap_size(n_boot, len(groups), func=func)
    plan = draw_splits(groups, seeds=seed_list_, k=k, sizes=sizes)
    user = None
    if predictions is not None:  # every problem of the user's predictions, before any fit
        from longitudinal.user_predictions import check_predictions

        user = check_predictions(
            predictions, study=study, frame=full.data, splits=plan, reserved=known
        )
    notes: list[str] = []
    if fractional_note:
        notes.append(fractional_note)
    if user is not None:
        notes += user.notes()
    runner = _Runner(raw, full, groups, plan, user, bayes_opts, random_slope, notes)
    user_models = list(user.models) if user is not None else []
    ran = {"scheduler": "serial", "workers": 1}
    if where.kind != "serial":
        ran = runner.fit_elsewhere(
            chosen, seed_list_, bayes_kfold=bayes_kfold, scheduler=where, progress=progress
        )
    rows, out_of_fold = runner.score(
        chosen + user_models, seed_list_, threshold=threshold, bayes_kfold=bayes_kfold
    )
    y_all, runs = runner.y, runner.records
    metrics = _sorted_metrics(rows, [*known, *user_models])
    summary = summarize_metrics(metrics)
    boot = None
    complete = {m: v for m, v in out_of_fold.items() if np.isfinite(v).all()}
    if complete and n_boot > 0:
        boot = _undefined_for_constants(
            _rescaled_mse(
                kfold_bootstrap(
                    y_all,
                    complete,
                    groups=groups,
                    n_boot=n_boot,
                    ci_level=ci_level,
                    threshold=threshold,
                    seed=bootstrap_seed,
                ),
                runner.mse_factor,
            )
        )
    artifacts: dict[str, dict[str, float]] = {}
    if boot is not None:
        artifacts = artifact_correlations(boot.intervals)
        boot = KFoldBootstrap(
            intervals=boot.intervals,
            comparisons=withhold_verdicts(boot.comparisons, artifacts),
            meta=boot.meta,
        )
    # participants in each seed's holdout test set (the same count for every seed)
    n_test = sorted({len(set(groups[s.parts["test"]])) for s in plan if s.fold is None})
    parameters = _parameters(
        seeds=seed_list_,
        sizes=sizes,
        k=k,
        plan=plan,
        chosen=chosen,
        user=user,
        bayes=(
            {**bayes_opts, "in_kfold": bool(bayes_kfold)} if "bayes_ordinal" in chosen else None
        ),
        threshold=threshold,
        threshold_from=threshold_from,
        scale=scale,
        random_slope=random_slope,
        full=full,
        n_test=n_test,
        bootstrap=None
        if boot is None
        else {**boot.meta, "models": list(complete), "artifacts": artifacts},
        clipped=runner.clipped,
        left_out=left_out_summary(study, raw, full),
        seconds=time.perf_counter() - start,
        predictors_source=(
            "--predictors"
            if predictors is not None
            else "study.toml [roles] predictors"
            if study.config.predictors is not None
            else "every trait, state and session feature of the study"
        ),
    )
    parameters["scheduler"] = ran
    return EvaluationResult(
        metrics=metrics,
        summary_table=summary,
        runs=pd.DataFrame(runs),
        parameters=parameters,
        notes=tuple(notes),
        splits=splits_table(groups, plan, id_col=study.config.id_col),
        intervals=boot.intervals if boot is not None else _empty(BOOTSTRAP_COLUMNS),
        comparisons=boot.comparisons if boot is not None else _empty(COMPARISON_COLUMNS),
    )


def _check_scheduler(scheduler: Any, *, func: str) -> Any:
    """Parse ``scheduler``, checking for Dask that ``distributed`` is installed."""
    import models.power._runners as runners

    where = runners.parse_scheduler(scheduler, where=func)  # the shared InvalidParameterError
    if where.kind in ("dask-local", "dask"):
        from models._optional import require

        feature = f"{func}(scheduler={where.describe()!r})"
        require("dask", feature=feature, extra="dask")
        require("distributed", feature=feature, extra="dask")
    return where


def _whole_ratings_for_ordinal(
    chosen: list[str], full: Any, *, asked: Sequence[str] | None, func: str
) -> tuple[list[str], str | None]:
    """Leave the ordinal models out, with a note, on a continuous scale or fractional ratings.

    A continuous scale (more than 11 points, :func:`longitudinal.rating_scale.scale_kind`) is
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


def _parameters(
    *,
    seeds: list[int],
    sizes: Sequence[float],
    k: int,
    plan: Sequence[Any],
    chosen: list[str],
    user: Any,
    bayes: dict[str, Any] | None,
    threshold: float,
    threshold_from: str,
    scale: Any,
    random_slope: bool,
    full: EmpathyData,
    n_test: list[int],
    bootstrap: dict[str, Any] | None,
    clipped: Mapping[str, Sequence[int]],
    left_out: dict[str, Any],
    seconds: float,
    predictors_source: str,
) -> dict[str, Any]:
    """Collect what is needed to reproduce and read the numbers (``evaluation.json``)."""
    user_models = list(user.models) if user is not None else []
    kind = scale_kind(scale.scale_min, scale.scale_max)
    descriptions = {m: MODEL_DESCRIPTIONS[m] for m in chosen}
    if kind == "continuous" and "majority_vote" in descriptions:
        descriptions["majority_vote"] = CONTINUOUS_MAJORITY_VOTE
    for m in user_models:
        descriptions[m] = (
            f"your predictions ({', '.join(user.files[m])}; {', '.join(user.schemes[m])})"
        )
    return {
        "package_version": __version__,
        "seeds": seeds,
        "sizes": list(sizes),
        "k": k,
        "schemes": list(dict.fromkeys(s.scheme for s in plan)),
        "models": descriptions,
        "baselines": chosen,
        "user_models": user_models,
        "predictions": None
        if user is None
        else {
            "sources": sorted({f for m in user_models for f in user.files[m]}),
            "rows": user.n_rows,
            "not_scored": user.n_ignored,
            "rule": (
                "each model x scheme x seed predicts every test rating once (validation "
                "ratings optional, all or none); the same metric code, threshold and ratings "
                "as the package's models"
            ),
        },
        "bayes": bayes,
        "scale": {
            "min": float(scale.scale_min),
            "max": float(scale.scale_max),
            "label": scale.label,
            "kind": kind,
        },
        "metric_units": (
            "r, ρ, accuracy and F1 x 100; MSE in squared rating points, not x 100 (the "
            f"{scale.label} scale has {float(scale.scale_max) - float(scale.scale_min) + 1:g} "
            "points, more than 11, so it is treated as continuous: the majority vote is the "
            "median training rating and the ordinal models are not run)"
            if kind == "continuous"
            else "x 100"
        ),
        "threshold": float(threshold),
        "threshold_source": threshold_from,
        "threshold_rule": threshold_rule(float(threshold), threshold_from, scale.label),
        "metrics": {
            "r": "Pearson correlation x 100",
            "rho": "Spearman rank correlation (average ranks for ties) x 100",
            "acc": "accuracy after binarising both vectors x 100",
            "f1": "binary F1 of the positive class, 2TP / (2TP + FP + FN), x 100",
            "mse": (
                f"mean squared error in squared rating points of the {scale.label} scale (a "
                "continuous scale, more than 11 points: not x 100)"
                if kind == "continuous"
                else "mean squared error on the rating scale x 100"
            ),
        },
        "splits": {
            "val": "validation participants of the 70/20/10 split (models are not tuned on it)",
            "test": "test participants of the 70/20/10 split",
            "kfold": (
                f"grouped {k}-fold: every participant predicted by the model fitted without "
                "their fold; metrics of these out-of-fold predictions pooled, per seed"
            ),
        },
        "summary": "mean and sample SD (ddof=1) over seeds; undefined metrics left out",
        "undefined": (
            "majority_vote and grand_mean predict one value for everyone, so their r and rho "
            "are undefined (NaN) by design"
        ),
        "prediction": "population-level effects only for unseen participants",
        "clipping": {
            "rule": (
                f"predictions of the package's models clipped to the {scale.label} scale "
                f"([{float(scale.scale_min):g}, {float(scale.scale_max):g}]) before scoring; "
                "an ordinal model's expected rating lies on the scale already; a researcher's "
                "predictions off the scale are refused, not clipped"
            ),
            "scale": scale.label,
            "outside": {m: {"n": int(n), "of": int(of)} for m, (n, of) in clipped.items()},
        },
        "random_slope": random_slope,
        "session_features": list(full.meta["session_features"]),
        "traits": list(full.meta["traits"]),
        "states": list(full.meta["states"]),
        "predictors_source": predictors_source,
        "n_ratings": int(len(full.data)),
        "n_participants": int(full.data[full.id_col].nunique()),
        "n_dropped": full.n_dropped,
        "left_out": left_out,
        "holdout_test_participants": n_test,
        "holdout_caveat": (
            f"each seed's test set holds {', '.join(map(str, n_test))} participant(s); "
            + (
                "a test set of fewer than 10 people supports no inference: the ± over seeds "
                "is the spread of the splits, not sampling uncertainty"
                if min(n_test) < 10
                else "the ± over seeds is the spread of the splits, not sampling uncertainty"
            )
        ),
        "bootstrap": bootstrap,
        "seconds": seconds,
        "paper": {
            "citation": "Shen et al. (2024), EmpathicStories++, Findings of ACL 2024",
            "reported_bests": [{"context": c, "r": r, "rho": rho} for c, r, rho in _PAPER_BESTS],
        },
    }
