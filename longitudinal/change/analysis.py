"""All change analyses of one scale at once."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import pandas as pd

from longitudinal._checks import check_unit
from longitudinal.change._panel import _meta_head
from longitudinal.change.anova import friedman_test, rm_anova
from longitudinal.change.describe import describe_waves
from longitudinal.change.growth import growth_model
from longitudinal.change.pairwise import pairwise_changes
from longitudinal.change.reliable import reliable_change
from longitudinal.change.results import RCI_COLUMNS, RCI_COUNT_COLUMNS, ChangeResult


def change_analysis(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    time: Mapping[Hashable, float] | None = None,
    random_slope: bool = True,
    reliability: float | None = None,
    reliability_kind: Literal["test-retest", "alpha"] = "test-retest",
    reliability_note: str = "given",
    baseline_items: pd.DataFrame | None = None,
    higher_is_better: bool = True,
    ci_level: float = 0.95,
) -> ChangeResult:
    """Run the whole change analysis for one repeated scale.

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
        The wave labels in time order, e.g. ``["pre", "mid", "post"]``.
    time : mapping, optional
        Time value of each wave for the growth model (default 0, 1, 2, ...).
    random_slope : bool, default True
        Whether the growth model starts with a random slope (see :func:`growth_model`).
    reliability : float, optional
        Reliability for the reliable change index (see :func:`reliable_change`).
    reliability_kind : {"test-retest", "alpha"}, default "test-retest"
        What ``reliability`` is.
    baseline_items : pandas.DataFrame, optional
        Item responses at the first wave, to compute Cronbach's alpha instead. Without
        ``reliability`` and ``baseline_items`` the reliable-change tables are empty.
    higher_is_better : bool, default True
        Direction of improvement for the reliable change index.
    ci_level : float, default 0.95
        Level of every interval and of the reliable-change criterion.

    Returns
    -------
    ChangeResult
        Every table of :func:`describe_waves`, :func:`rm_anova`, :func:`pairwise_changes`,
        :func:`friedman_test`, :func:`growth_model` and :func:`reliable_change`; see
        :class:`ChangeResult`.

    Raises
    ------
    InvalidParameterError
        A parameter is invalid.
    surveys.InputValidationError
        Invalid long-format data (duplicated subject x wave rows, unknown waves, ...).

    Warns
    -----
    DataQualityWarning
        From the parts (too few complete subjects, a singular growth model, ...).

    See Also
    --------
    rm_anova, pairwise_changes, friedman_test, growth_model, reliable_change

    Notes
    -----
    The RM-ANOVA and the Friedman test use complete cases (``meta["n_excluded"]`` people
    left out, listed in ``excluded``); the pairwise tests use every pair of observed waves; the
    growth model uses every observation. The reliable change index compares the first with the
    last wave. Each part's Notes say what it was validated against.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from longitudinal.change import change_analysis
    >>> rng = np.random.default_rng(7)
    >>> n = 40
    >>> person = rng.normal(0, 0.6, n)
    >>> rows = [{"id": i, "wave": w, "score": 3 + 0.3 * t + person[i] + rng.normal(0, 0.4)}
    ...         for i in range(n) for t, w in enumerate(["pre", "mid", "post"])]
    >>> df = pd.DataFrame(rows)
    >>> res = change_analysis(df, id_col="id", wave_col="wave", outcome_col="score",
    ...                       waves=["pre", "mid", "post"], reliability=0.8,
    ...                       random_slope=False)
    >>> res.rm_anova["correction"].tolist()
    ['none', 'greenhouse-geisser', 'huynh-feldt']
    >>> int(res.reliable_change_counts["n"].sum())
    40
    """
    func = "change_analysis"
    level = check_unit(ci_level, name="ci_level", where=func)
    common = {
        "id_col": id_col,
        "wave_col": wave_col,
        "outcome_col": outcome_col,
        "waves": waves,
    }
    descriptives = describe_waves(data, **common, ci_level=level)
    anova = rm_anova(data, **common)
    pairs = pairwise_changes(data, **common, ci_level=level)
    friedman = friedman_test(data, **common)
    growth = growth_model(data, **common, time=time, random_slope=random_slope, ci_level=level)
    if reliability is None and baseline_items is None:
        rc_people = pd.DataFrame(columns=RCI_COLUMNS)
        rc_counts = pd.DataFrame(columns=RCI_COUNT_COLUMNS)
        rc_meta: dict[str, Any] = {
            "reliability_source": "not computed: no reliability or baseline items given"
        }
    else:
        rc = reliable_change(
            data,
            **common,
            reliability=reliability,
            reliability_kind=reliability_kind,
            reliability_note=reliability_note,
            baseline_items=baseline_items,
            higher_is_better=higher_is_better,
            ci_level=level,
        )
        rc_people, rc_counts, rc_meta = rc.people, rc.counts, rc.meta
    meta = {
        **_meta_head(
            func,
            id_col=id_col,
            wave_col=wave_col,
            outcome_col=outcome_col,
            waves=list(waves),
            time=None if time is None else dict(time),
            random_slope=random_slope,
            reliability=reliability,
            reliability_kind=reliability_kind,
            baseline_items=baseline_items is not None,
            higher_is_better=higher_is_better,
            ci_level=level,
        ),
        "n_subjects": anova.meta["n_subjects"],
        "n_complete": anova.meta["n_used"],
        "n_excluded": anova.meta["n_excluded"],
        "excluded_ids": anova.meta["excluded_ids"],
        "reliability_source": rc_meta["reliability_source"],
        "rm_anova": anova.meta,
        "pairwise": pairs.meta,
        "growth": growth.meta,
        "reliable_change": rc_meta,
    }
    return ChangeResult(
        descriptives=descriptives,
        rm_anova=anova.table,
        sphericity=anova.sphericity,
        excluded=anova.excluded,
        pairwise=pairs.tests,
        effect_sizes=pairs.effect_sizes,
        friedman=friedman,
        growth_fixed=growth.fixed,
        growth_random=growth.random,
        reliable_change=rc_people,
        reliable_change_counts=rc_counts,
        meta=meta,
    )
