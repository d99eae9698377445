"""The participant-grouped splits of the prediction benchmark, for use inside and outside it.

``longitudinal evaluate`` scores models on participants they never saw. The splits it uses
are drawn here, by one function, :func:`draw_splits`, so that the splits exported for a
researcher's own training (:func:`longitudinal.predict.selection.participant_splits`, the
``longitudinal splits`` command) are the splits their predictions are scored on.

Two schemes, each repeated for every seed:

``holdout_70_20_10``
    the participants split 70/20/10 into train, validation and test
    (:func:`models.evaluation.grouped_split`; the name follows the shares);
``kfold_K``
    grouped K-fold (:func:`models.evaluation.grouped_kfold`): every participant is in the test
    part of exactly one fold, numbered 0 to K - 1.

The participants split are those with at least one rating that the benchmark uses (a rating
with every predictor of the models; :func:`longitudinal.predict.empathy_data`). A split
depends only on the seed and the set of participant ids, never on the row order.

Examples
--------
>>> import numpy as np
>>> from longitudinal.predict.splits import draw_splits
>>> groups = np.repeat([f"P{i:02d}" for i in range(10)], 2)
>>> plan = draw_splits(groups, seeds=[0], k=2)
>>> [(s.scheme, s.fold, sorted(s.parts)) for s in plan]
[('holdout_70_20_10', None, ['test', 'val']), ('kfold_2', 0, ['test']), ('kfold_2', 1, ['test'])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from models import InvalidParameterError as ModelsInvalidParameterError
from models.evaluation import grouped_kfold, grouped_split

__all__ = [
    "SPLIT_SIZES",
    "SPLIT_LABELS",
    "BenchmarkSplit",
    "draw_splits",
    "holdout_scheme",
    "kfold_scheme",
    "seed_list",
    "splits_table",
]

SPLIT_LABELS = {"train": "train", "val": "valid", "test": "test"}
"""Part of a holdout split -> its label in the ``split`` column of :func:`splits_table`."""


@dataclass(frozen=True)
class BenchmarkSplit:
    """One train/test division of the benchmark: a holdout split, or one fold of a K-fold.

    Attributes
    ----------
    scheme : str
        ``holdout_70_20_10`` (named after the shares) or ``kfold_K``.
    seed : int
        The seed that drew it.
    fold : int or None
        Fold number (0 to K - 1) of a K-fold; None for the holdout.
    train : numpy.ndarray
        Sorted row positions (into the ``groups`` that were split) of the training rows.
    parts : dict of str to numpy.ndarray
        Row positions of the evaluated parts: ``val`` (when the validation share is positive)
        and ``test`` for the holdout, ``test`` for a fold.
    """

    scheme: str
    seed: int
    fold: int | None
    train: np.ndarray
    parts: dict[str, np.ndarray]


SPLIT_SIZES = (0.7, 0.2, 0.1)
"""Train, validation and test shares of the participants: the paper's 70/20/10."""


def holdout_scheme(sizes: Sequence[float] = SPLIT_SIZES) -> str:
    """Name of the holdout scheme with these shares, e.g. ``holdout_70_20_10``.

    Parameters
    ----------
    sizes : sequence of 3 floats, default (0.7, 0.2, 0.1)
        Train, validation and test shares.

    Returns
    -------
    str
        ``holdout_`` followed by the shares in percent, joined by ``_``.

    Examples
    --------
    >>> from longitudinal.predict.splits import holdout_scheme
    >>> holdout_scheme((0.7, 0.2, 0.1)), holdout_scheme((0.8, 0.0, 0.2))
    ('holdout_70_20_10', 'holdout_80_0_20')
    """
    return "holdout_" + "_".join(f"{100 * float(s):.10g}".replace(".", "p") for s in sizes)


def kfold_scheme(k: int) -> str:
    """Name of the grouped K-fold scheme: ``kfold_K``.

    Parameters
    ----------
    k : int
        Number of folds.

    Returns
    -------
    str
        ``kfold_`` followed by ``k``.

    Examples
    --------
    >>> from longitudinal.predict.splits import kfold_scheme
    >>> kfold_scheme(5)
    'kfold_5'
    """
    return f"kfold_{int(k)}"


def seed_list(seeds: Any, *, func: str) -> list[int]:
    """Check the ``seeds`` option: an int ``n`` means ``0, ..., n - 1``.

    Parameters
    ----------
    seeds : int or sequence of int
        A positive count, or distinct non-negative seeds.
    func : str
        The calling function, named in the error message.

    Returns
    -------
    list of int
        The seeds, in the given order.

    Raises
    ------
    longitudinal.InvalidParameterError
        For a bool, a count below 1, a negative or repeated seed, no seed, or more seeds
        than :data:`models.limits.EVALUATE_MAX_SEEDS` (each seed refits every model of the
        benchmark).

    Examples
    --------
    >>> from longitudinal.predict.splits import seed_list
    >>> seed_list(3, func="f"), seed_list([4, 1], func="f")
    ([0, 1, 2], [4, 1])
    """
    message = (
        f"the `seeds` parameter of {func} must be a positive int (the seeds 0 to n - 1) or "
        f"a sequence of distinct non-negative ints; got {seeds!r}"
    )
    if isinstance(seeds, bool):
        raise InvalidParameterError(message)
    if isinstance(seeds, int | np.integer):
        if seeds < 1:
            raise InvalidParameterError(message)
        _at_most_max_seeds(int(seeds), func=func)
        return list(range(int(seeds)))
    if isinstance(seeds, str) or not isinstance(seeds, Sequence | np.ndarray):
        raise InvalidParameterError(message)
    out = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0:
            raise InvalidParameterError(message)
        out.append(int(s))
    if not out or len(set(out)) != len(out):
        raise InvalidParameterError(message)
    _at_most_max_seeds(len(out), func=func)
    return out


def _at_most_max_seeds(n_seeds: int, *, func: str) -> None:
    from _empathic_base.words import parameter
    from models.limits import EVALUATE_MAX_SEEDS

    if n_seeds > EVALUATE_MAX_SEEDS:
        raise InvalidParameterError(
            f"{parameter('seeds', func)} must give from 1 to {EVALUATE_MAX_SEEDS:,} seeds; got "
            f"{n_seeds} (each seed refits every model for its holdout and its K folds)"
        )


def draw_splits(
    groups: Sequence[Any] | np.ndarray | pd.Series,
    *,
    seeds: int | Sequence[int],
    k: int = 5,
    sizes: tuple[float, float, float] = SPLIT_SIZES,
) -> tuple[BenchmarkSplit, ...]:
    """Draw every split of the benchmark: per seed, the holdout split and the K folds.

    This is the one place where the benchmark's splits are drawn; ``longitudinal evaluate``
    (:func:`longitudinal.predict.evaluate_predictions`) and ``longitudinal splits``
    (:func:`longitudinal.predict.selection.participant_splits`) both call it.

    Parameters
    ----------
    groups : array-like
        The participant id of every row (rating) of the benchmark.
    seeds : int or sequence of int
        Split seeds; an int ``n`` means ``0, ..., n - 1``.
    k : int, default 5
        Folds of the grouped K-fold; 0 draws no K-fold.
    sizes : tuple of 3 floats, default (0.7, 0.2, 0.1)
        Train, validation and test shares of the participants in the holdout split.

    Returns
    -------
    tuple of BenchmarkSplit
        For each seed in order: the holdout split, then folds 0 to ``k - 1``.

    Raises
    ------
    longitudinal.InvalidParameterError
        For bad seeds, ``k`` (1, negative, or more than the participants), sizes or groups,
        or too few participants for the shares.

    Notes
    -----
    The holdout split is :func:`models.evaluation.grouped_split` and the folds are
    :func:`models.evaluation.grouped_kfold`, both with ``seed``: the sorted participant ids
    are permuted with ``numpy.random.default_rng(seed)``. The same seed and the same set of
    participants give the same splits, whatever the order of the rows.

    Examples
    --------
    >>> from longitudinal.predict.splits import draw_splits
    >>> plan = draw_splits(["a", "a", "b", "c", "d", "e"], seeds=1, k=0, sizes=(0.6, 0.2, 0.2))
    >>> plan[0].scheme, plan[0].train.size + plan[0].parts["val"].size + plan[0].parts["test"].size
    ('holdout_60_20_20', 6)
    """
    func = "draw_splits"
    seeds_ = seed_list(seeds, func=func)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0 or k == 1:
        raise InvalidParameterError(
            f"the `k` parameter of {func} must be 0 (no K-fold) or an int >= 2; got {k!r}"
        )
    holdout = holdout_scheme(sizes)
    kfold = kfold_scheme(k)
    out: list[BenchmarkSplit] = []
    try:
        for seed in seeds_:
            split = grouped_split(groups, sizes=sizes, seed=seed)
            parts = {"test": split.test}
            if split.val.size:
                parts = {"val": split.val, "test": split.test}
            out.append(BenchmarkSplit(holdout, seed, None, split.train, parts))
            if k >= 2:
                for f in grouped_kfold(groups, k=int(k), seed=seed):
                    out.append(BenchmarkSplit(kfold, seed, f.fold, f.train, {"test": f.test}))
    except ModelsInvalidParameterError as err:
        raise InvalidParameterError(f"{func}: {err}") from err
    return tuple(out)


def splits_table(
    groups: Sequence[Any] | np.ndarray | pd.Series,
    splits: Sequence[BenchmarkSplit],
    *,
    id_col: str,
) -> pd.DataFrame:
    """One row per scheme x seed x participant: which part of the split the participant is in.

    Parameters
    ----------
    groups : array-like
        The participant id of every row, as given to :func:`draw_splits`.
    splits : sequence of BenchmarkSplit
        What :func:`draw_splits` returned for ``groups``.
    id_col : str
        Name of the participant column of the table (the study's own name).

    Returns
    -------
    pandas.DataFrame
        ``scheme, seed, {id_col}, split``: ``split`` is ``train``, ``valid`` or ``test`` for
        the holdout and the participant's test fold (int, 0 to K - 1) for the K-fold. Rows in
        the order of ``splits``, participants sorted within a scheme x seed.

    Examples
    --------
    >>> from longitudinal.predict.splits import draw_splits, splits_table
    >>> groups = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    >>> table = splits_table(groups, draw_splits(groups, seeds=1, k=2), id_col="pid")
    >>> table.groupby(["scheme", "split"]).size().tolist()
    [1, 7, 2, 5, 5]
    """
    labels = np.asarray(groups, dtype=object)
    blocks: dict[tuple[str, int], dict[Any, Any]] = {}
    for s in splits:
        block = blocks.setdefault((s.scheme, s.seed), {})
        if s.fold is None:
            parts = {"train": s.train, **s.parts}
            for name, rows in parts.items():
                for pid in pd.unique(labels[rows]):
                    block[pid] = SPLIT_LABELS[name]
        else:
            for pid in pd.unique(labels[s.parts["test"]]):
                block[pid] = s.fold
    rows = [
        {"scheme": scheme, "seed": seed, id_col: pid, "split": block[pid]}
        for (scheme, seed), block in blocks.items()
        for pid in sorted(block, key=lambda g: (str(g), type(g).__name__))
    ]
    table = pd.DataFrame(rows, columns=["scheme", "seed", id_col, "split"])
    table["split"] = table["split"].astype(object)
    return table
