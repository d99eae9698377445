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

The modules: :mod:`~models.evaluation.splits`, :mod:`~models.evaluation.metrics` and
:mod:`~models.evaluation.bootstrap`; every public name is importable from here.

Conventions
-----------
- A value is *positive* when it is strictly greater than ``threshold``, which every
  binarising function requires (no default: it belongs to the study; the EmpathicStories++
  benchmark's choice, the midpoint of the study's declared scale unless study.toml says
  otherwise, lives in :func:`longitudinal.predict.benchmark.benchmark_threshold`);
- the split shares are required too (the paper's 70/20/10 is
  :data:`longitudinal.predict.splits.SPLIT_SIZES`);
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

from models.evaluation.bootstrap import (
    BOOTSTRAP_COLUMNS,
    COMPARISON_COLUMNS,
    LOWER_IS_BETTER,
    KFoldBootstrap,
    kfold_bootstrap,
    weighted_metrics,
)
from models.evaluation.metrics import (
    METRIC_NAMES,
    PredictionMetrics,
    binarize,
    binary_accuracy,
    binary_f1,
    mean_squared_error,
    pearson_r,
    prediction_metrics,
    spearman_rho,
    summarize_metrics,
)
from models.evaluation.splits import (
    GroupedFold,
    GroupedSplit,
    grouped_kfold,
    grouped_split,
    overlapping_groups,
)

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
