"""Where and in which order the benchmark's fits run, and the record of each.

A :class:`_Runner` fits (or looks up) every model on every split of the plan
(:func:`longitudinal.predict.splits.draw_splits`) and turns the predictions into metric rows; with a
``scheduler`` the fits first go out as a :class:`_FitJob` to the back ends of
:func:`models.power.simulate_power` (processes or Dask), and the tables are those of the
serial run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from longitudinal.predict.benchmark_models import _fit_predict
from longitudinal.predict.benchmark_scoring import _metric_row, mse_factor
from longitudinal.predict.predictors import EmpathyData, _Raw
from models.evaluation import overlapping_groups

SAMPLED_MODELS = ("bayes_ordinal",)
"""Models fitted by sampling (seconds per fit; the others take milliseconds)."""


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
            self.notes.extend(n for n in notes if n not in self.notes)  # as recording keeps
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

        The fits go out in batches (``models.parallel``, the back ends of
        :func:`models.power.simulate_power`); a fit depends only on its split, model and seed,
        so :meth:`score` then gives the tables of the serial run, notes in the same order.
        """
        import models.parallel as runners

        every = self.fits(models, seeds, bayes_kfold=bayes_kfold)
        # the sampled fits take seconds each, the others milliseconds: the sampled ones go
        # first, one per task, so that no worker is left with a run of them at the end
        slow = [fit for fit in every if fit.model in SAMPLED_MODELS]
        quick = [fit for fit in every if fit.model not in SAMPLED_MODELS]
        groups = [part for part in (slow, quick) if part]
        jobs = [
            _FitJob(self.raw, self.groups, self.bayes, self.random_slope, tuple(part))
            for part in groups
        ]
        workers = max(int(scheduler.workers or 2), 1)
        sizes = [
            1 if part is slow else max(1, len(part) // (4 * workers))  # a few per worker
            for part in groups
        ]
        bar = runners.Progress(len(every), enabled=progress, label="evaluate")
        try:
            outcomes, info = runners.run(jobs, scheduler=scheduler, batch_size=sizes, progress=bar)
        finally:
            bar.close()
        for part, done in zip(groups, outcomes, strict=True):
            for fit, outcome in zip(part, done, strict=True):
                self.done[(fit.model, fit.split, fit.seed, fit.fold)] = outcome
        fits = every
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


def _check_scheduler(scheduler: Any, *, func: str) -> Any:
    """Parse ``scheduler``, checking for Dask that ``distributed`` is installed."""
    import models.parallel as runners

    where = runners.parse_scheduler(scheduler, where=func)  # the shared InvalidParameterError
    if where.kind in ("dask-local", "dask"):
        from _empathic_base.optional import require

        feature = f"{func}(scheduler={where.describe()!r})"
        require("dask", feature=feature, extra="dask")
        require("distributed", feature=feature, extra="dask")
    return where
