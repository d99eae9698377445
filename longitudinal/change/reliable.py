"""Jacobson-Truax reliable change per person.

Written here because pingouin has no reliable change index.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._checks import check_bool, check_unit
from longitudinal._errors import DataQualityWarning, InvalidParameterError
from longitudinal.change._panel import _meta_head, _panel
from longitudinal.change.results import (
    RCI_CATEGORIES,
    RCI_COLUMNS,
    RCI_COUNT_COLUMNS,
    ReliableChangeResult,
)
from surveys import SurveysWarning, scale_reliability


def reliable_change(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    reliability: float | None = None,
    reliability_kind: Literal["test-retest", "alpha"] = "test-retest",
    reliability_note: str = "given",
    baseline_items: pd.DataFrame | None = None,
    from_wave: Hashable | None = None,
    to_wave: Hashable | None = None,
    sd_baseline: float | None = None,
    higher_is_better: bool = True,
    ci_level: float = 0.95,
) -> ReliableChangeResult:
    """Jacobson-Truax reliable change index per person.

    Give the reliability either as a number (``reliability`` with ``reliability_kind``) or as
    the item responses at the baseline wave (``baseline_items``), from which Cronbach's alpha is
    computed. The source is written to ``meta["reliability_source"]``.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    id_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column (the scale score).
    waves : sequence of hashable
        The wave labels in time order.
    reliability : float, optional
        A reliability coefficient in [0, 1), e.g. a published test-retest r.
    reliability_kind : {"test-retest", "alpha"}, default "test-retest"
        What ``reliability`` is; only used to describe the source.
    reliability_note : str, default "given"
        Where ``reliability`` came from, written in parentheses after it in the source
        description (e.g. ``"computed from the pre items, n = 41"``).
    baseline_items : pandas.DataFrame, optional
        Item responses at the baseline wave: one row per subject, the ``id_col`` column
        and one column per item (at least two). Alpha uses the rows with every item answered.
    from_wave, to_wave : hashable, optional
        The waves compared; default the first and the last of ``waves``.
    sd_baseline : float, optional
        Standard deviation of the scale at baseline, e.g. from norms. Default: the sample SD
        (n - 1) of ``outcome_col`` at ``from_wave`` over every subject observed there.
    higher_is_better : bool, default True
        Direction of improvement: if True a reliable increase is ``improved``, else a reliable
        decrease is.
    ci_level : float, default 0.95
        The criterion is the normal quantile ``z(1 - (1 - ci_level) / 2)`` (1.96 at 0.95).

    Returns
    -------
    ReliableChangeResult
        ``people``: ``subject, baseline, followup, change, rci, category`` for each subject
        observed at both waves; ``counts``: ``category, n, proportion`` for ``improved``,
        ``unchanged`` and ``deteriorated``; ``meta`` with ``reliability``,
        ``reliability_source``, ``sd_baseline``, ``s_diff``, ``criterion`` and counts.

    Raises
    ------
    InvalidParameterError
        Neither or both of ``reliability`` and ``baseline_items`` are given, a value is out of
        range, a wave is unknown, or the baseline SD or alpha cannot be computed.
    surveys.InputValidationError
        Invalid long-format data.

    Warns
    -----
    DataQualityWarning
        Cronbach's alpha computed from ``baseline_items`` is not positive.

    See Also
    --------
    pairwise_changes : group-level change between waves.

    Notes
    -----
    ``SE = SD_pre sqrt(1 - r)``, ``S_diff = sqrt(2 SE^2) = SD_pre sqrt(2) sqrt(1 - r)`` and
    ``RCI = (x_post - x_pre) / S_diff`` (Jacobson & Truax 1991). A person changed reliably when
    ``|RCI| > z``; the direction decides ``improved`` or ``deteriorated``. Cronbach's alpha is
    ``k / (k - 1) (1 - sum s_j^2 / s_total^2)`` over the rows with every item answered
    (:func:`surveys.reliability.scale_reliability` with ``missing="complete"``).

    Validated against the same formulas in R with ``psych::alpha`` (psych 2.2.9) for alpha, on
    carData::OBrienKaiser (five hourly pre scores as items) and MASS::anorexia (given r), to
    1e-10.

    References
    ----------
    Jacobson, N. S., & Truax, P. (1991). Clinical significance: a statistical approach to
    defining meaningful change in psychotherapy research. *Journal of Consulting and Clinical
    Psychology*, 59, 12-19.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import reliable_change
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 3, 3, 4, 4], "wave": ["pre", "post"] * 4,
    ...                    "score": [10.0, 16.0, 12.0, 12.5, 14.0, 8.0, 16.0, 17.0]})
    >>> res = reliable_change(df, id_col="id", wave_col="wave", outcome_col="score",
    ...                       waves=["pre", "post"], reliability=0.8)
    >>> res.meta["reliability_source"]
    'test-retest r = 0.80 (given)'
    >>> res.people["category"].tolist()
    ['improved', 'unchanged', 'deteriorated', 'unchanged']
    """
    func = "reliable_change"
    level = check_unit(ci_level, name="ci_level", where=func)
    better_up = check_bool(higher_is_better, name="higher_is_better", where=func)
    panel = _panel(
        data,
        id_col=id_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    w0 = panel.waves[0] if from_wave is None else from_wave
    w1 = panel.waves[-1] if to_wave is None else to_wave
    for name, w in (("from_wave", w0), ("to_wave", w1)):
        if w not in panel.waves:
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be one of {list(panel.waves)!r}; got {w!r}"
            )
    if w0 == w1:
        raise InvalidParameterError(
            f"the `from_wave` and `to_wave` parameters of {func} must differ; got {w0!r} twice"
        )
    r, source = _reliability(
        reliability,
        reliability_kind,
        reliability_note,
        baseline_items,
        id_col=id_col,
        wave=w0,
        func=func,
    )

    base_all = panel.wide[w0].dropna()
    if sd_baseline is None:
        sd0 = float(base_all.std(ddof=1)) if len(base_all) > 1 else math.nan
        sd_source = f"sample SD at {w0} (n = {len(base_all)})"
    else:
        sd0 = float(sd_baseline) if isinstance(sd_baseline, int | float | np.number) else math.nan
        sd_source = "given"
    if not (sd0 > 0 and math.isfinite(sd0)):
        raise InvalidParameterError(
            f"{func}: the baseline SD must be a positive number; got {sd0!r} ({sd_source})"
        )
    s_diff = sd0 * math.sqrt(2) * math.sqrt(1 - r)
    crit = float(stats.norm.ppf(0.5 + level / 2))

    both = panel.wide[[w0, w1]].dropna()
    change = both[w1] - both[w0]
    rci = change / s_diff
    sign = 1.0 if better_up else -1.0
    category = np.where(
        sign * rci > crit, "improved", np.where(sign * rci < -crit, "deteriorated", "unchanged")
    )
    people = pd.DataFrame(
        {
            "id": both.index.to_numpy(),
            "baseline": both[w0].to_numpy(),
            "followup": both[w1].to_numpy(),
            "change": change.to_numpy(),
            "rci": rci.to_numpy(),
            "category": category,
        },
        columns=RCI_COLUMNS,
    )
    n = len(people)
    counts = pd.DataFrame(
        [
            {
                "category": c,
                "n": int(np.sum(category == c)),
                "proportion": float(np.sum(category == c)) / n if n else math.nan,
            }
            for c in RCI_CATEGORIES
        ],
        columns=RCI_COUNT_COLUMNS,
    )
    meta = {
        **_meta_head(
            func,
            id_col=id_col,
            wave_col=wave_col,
            outcome_col=outcome_col,
            waves=list(panel.waves),
            from_wave=w0,
            to_wave=w1,
            reliability_kind=reliability_kind if baseline_items is None else "alpha",
            higher_is_better=better_up,
            ci_level=level,
        ),
        "reliability": r,
        "reliability_source": source,
        "sd_baseline": sd0,
        "sd_baseline_source": sd_source,
        "s_diff": s_diff,
        "criterion": crit,
        "higher_is_better": better_up,
        "n": n,
        "n_excluded": int(len(panel.wide) - n),
        "excluded_ids": panel.wide.index[~panel.wide.index.isin(both.index)].tolist(),
    }
    return ReliableChangeResult(people=people, counts=counts, meta=meta)


def _reliability(
    reliability: Any,
    reliability_kind: str,
    reliability_note: str,
    baseline_items: Any,
    *,
    id_col: str,
    wave: Any,
    func: str,
) -> tuple[float, str]:
    """Return the reliability of the index and where it came from (given, or alpha of items).

    Exactly one of ``reliability`` and ``baseline_items`` is given; Cronbach's alpha of the
    baseline items is computed by :func:`surveys.reliability.scale_reliability`.
    """
    w0 = wave
    if (reliability is None) == (baseline_items is None):
        raise InvalidParameterError(
            f"{func} needs exactly one of `reliability` (a coefficient in [0, 1)) and "
            "`baseline_items` (item responses at the baseline wave); got "
            f"{'both' if reliability is not None else 'neither'}"
        )
    if reliability_kind not in ("test-retest", "alpha"):
        raise InvalidParameterError(
            f"the `reliability_kind` parameter of {func} must be 'test-retest' or 'alpha'; "
            f"got {reliability_kind!r}"
        )
    if reliability is not None:
        if (
            isinstance(reliability, bool)
            or not isinstance(reliability, int | float | np.number)
            or not 0 <= float(reliability) < 1
        ):
            raise InvalidParameterError(
                f"the `reliability` parameter of {func} must be a number in [0, 1); "
                f"got {reliability!r}"
            )
        r = float(reliability)
        if reliability_kind == "alpha":
            source = f"Cronbach's alpha at {w0} = {r:.2f} ({reliability_note})"
        else:
            source = f"test-retest r = {r:.2f} ({reliability_note})"
    else:
        if not isinstance(baseline_items, pd.DataFrame) or id_col not in baseline_items:
            raise InvalidParameterError(
                f"the `baseline_items` parameter of {func} must be a DataFrame with the column "
                f"{id_col!r} and one column per item; got {type(baseline_items).__name__}"
            )
        item_cols = [c for c in baseline_items.columns if c != id_col]
        items = baseline_items[item_cols]
        item_names = [str(c) for c in item_cols]
        if (
            len(item_cols) < 2
            or len(set(item_names)) < len(item_names)
            or not all(pd.api.types.is_numeric_dtype(items[c]) for c in item_cols)
        ):
            raise InvalidParameterError(
                f"the `baseline_items` parameter of {func} needs at least two distinct numeric "
                f"item columns besides {id_col!r}; got {item_cols!r}"
            )
        x = items.to_numpy(dtype=float)
        if np.isinf(x).any():
            raise InvalidParameterError(
                f"the `baseline_items` parameter of {func} must hold finite values or NaN; "
                "got infinite values"
            )
        # Only raw alpha is used: the warnings about statistics it does not use (omega,
        # alpha if deleted, ...) do not concern the reliable change index, and an undefined
        # alpha is raised below.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SurveysWarning)
            summary, _ = scale_reliability(x, item_names=item_names, missing="complete")
        r, n_alpha, k_items = summary["alpha"], summary["n"], summary["n_items"]
        if math.isnan(r):
            raise InvalidParameterError(
                f"{func}: Cronbach's alpha cannot be computed from `baseline_items` "
                f"({n_alpha} complete row(s), {k_items} items, or no variance in the total)"
            )
        if r >= 1:
            raise InvalidParameterError(
                f"{func}: Cronbach's alpha from `baseline_items` is {r!r}; the reliable change "
                "index needs a reliability below 1"
            )
        if r <= 0:
            warnings.warn(
                f"{func}: Cronbach's alpha at {w0} is {r:.3f}; the reliable change index rests "
                "on a scale without internal consistency",
                DataQualityWarning,
                stacklevel=3,
            )
        source = f"Cronbach's alpha at {w0} = {r:.2f} ({k_items} items, n = {n_alpha})"
    return r, source
