"""What the benchmark returns: :class:`EvaluationResult` and the parameters that read it.

:func:`_parameters` collects everything needed to reproduce and read the numbers (the
threshold rule, the units, the sizes, the seeds, the model descriptions), written as
``evaluation.json`` by :func:`longitudinal.predict.run_evaluation`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._display import Result
from longitudinal.predict.benchmark_models import CONTINUOUS_MAJORITY_VOTE, MODEL_DESCRIPTIONS
from longitudinal.predict.benchmark_scoring import threshold_rule
from longitudinal.predict.common import _empty
from longitudinal.predict.predictors import EmpathyData
from longitudinal.study.rating_scale import scale_kind
from models.evaluation import BOOTSTRAP_COLUMNS, COMPARISON_COLUMNS, METRIC_NAMES
from surveys import __version__

_PAPER_BESTS = (
    ("story share, best model (GPT-4)", 23.2, 17.6),
    ("reflection, best model (LF-LSTM, video + text)", 56.0, None),
)
"""The paper's best test-set r and ρ (x 100), shown for orientation in ``table.md``."""


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
        every result).
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
        (:func:`longitudinal.predict.splits.splits_table`; what ``longitudinal splits``
        exports). Not
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


def _parameters(
    *,
    seeds: list[int],
    sizes: Sequence[float],
    k: int,
    plan: Sequence[Any],
    groups: np.ndarray,
    chosen: list[str],
    user: Any,
    bayes: dict[str, Any] | None,
    threshold: float,
    threshold_from: str,
    scale: Any,
    random_slope: bool,
    full: EmpathyData,
    bootstrap: dict[str, Any] | None,
    clipped: Mapping[str, Sequence[int]],
    left_out: dict[str, Any],
    seconds: float,
    predictors_source: str,
) -> dict[str, Any]:
    """Collect what is needed to reproduce and read the numbers (``evaluation.json``)."""
    # participants in each seed's holdout test set (the same count for every seed)
    n_test = sorted({len(set(groups[s.parts["test"]])) for s in plan if s.fold is None})
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
