"""Participant-grouped splits: train/validation/test, K folds, and the leakage check."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from models._checks import check_seed
from models._errors import InvalidParameterError
from models.evaluation._groups import _as_groups, _rows_of, _unique_groups


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
