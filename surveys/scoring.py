"""Score questionnaire scales from item responses, with reliability per scale and wave.

:func:`score` takes one row per respondent (x wave) with one column per item, reverse keys the
items from the instrument's declared response range, combines them by the scale's rule (mean,
sum or count) under an explicit missing-item policy, and reports Cronbach's alpha, omega and
item statistics per scale and wave (via :func:`surveys.reliability.scale_reliability`). All
arithmetic is vectorised over respondents.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from surveys import _columns as col
from surveys._columns import participant_column
from surveys._errors import InvalidParameterError
from surveys._invisible import refuse_invisible
from surveys._score_inputs import (
    _check_parameters,
    _line_numbers,
    _validated_items,
)
from surveys._version import __version__
from surveys.instruments import Instrument, ScaleKey, load_instrument
from surveys.reliability import scale_reliability

__all__ = ["SCORE_COLUMNS", "ScaleScores", "reverse_score", "score"]

SCORE_COLUMNS = [
    col.ID,
    col.WAVE,
    col.INSTRUMENT,
    col.SCALE,
    col.SCORE,
    col.N_ITEMS,
    col.N_ANSWERED,
]
"""Columns of ``ScaleScores.scores`` (``wave`` only when the data have a wave column)."""

RELIABILITY_COLUMNS = [
    col.INSTRUMENT,
    col.SCALE,
    col.WAVE,
    col.N,
    col.N_ITEMS,
    "alpha",
    "alpha_ci_low",
    "alpha_ci_high",
    "alpha_standardized",
    "omega_total",
]


ITEM_STATS_COLUMNS = [
    col.INSTRUMENT,
    col.SCALE,
    col.WAVE,
    col.ITEM,
    "reversed",
    col.N,
    "mean",
    "sd",
    "r_item_rest",
    "alpha_if_deleted",
]


MISSING_COLUMNS = [
    col.INSTRUMENT,
    col.SCALE,
    col.WAVE,
    col.N,
    "n_scored",
    "n_unscored",
    "min_answered",
    "n_items_missing",
    "n_imputed",
]


@dataclass(frozen=True, repr=False)
class ScaleScores(Result):
    """Result of :func:`score`.

    Attributes
    ----------
    scores : pandas.DataFrame
        Tidy scores, one row per respondent (x wave) and scale, respondents in input order and
        scales in key order: ``id``, ``wave`` (only when a wave column was given),
        ``instrument``, ``scale``, ``score`` (NaN when the respondent was not scored),
        ``n_items`` (items in the scale), ``n_answered`` (items answered, before imputation).
    reliability : pandas.DataFrame
        One row per scale (x wave): ``instrument``, ``scale``, [``wave``], ``n``
        (respondents with at least one answer), ``n_items``, ``alpha``, ``alpha_ci_low``,
        ``alpha_ci_high`` (Feldt interval at ``ci_level``), ``alpha_standardized``,
        ``omega_total``.
    item_stats : pandas.DataFrame
        One row per scale (x wave) and item: ``instrument``, ``scale``, [``wave``], ``item``,
        ``reversed`` (bool), ``n`` (answers), ``mean`` and ``sd`` (of the reverse-keyed
        answers), ``r_item_rest`` (correlation with the sum of the other items),
        ``alpha_if_deleted``.
    missing : pandas.DataFrame
        One row per scale (x wave): ``instrument``, ``scale``, [``wave``], ``n`` (rows),
        ``n_scored``, ``n_unscored`` (respondents left without a score), ``min_answered``
        (items a respondent had to answer), ``n_items_missing`` (unanswered cells),
        ``n_imputed`` (cells filled by `impute`).
    meta : dict
        Provenance: package name and version, the function, the instrument (name, path,
        grade), the parameters of the call, ``n_rows``, ``n_scored`` (rows with at least one
        scale scored), ``n_excluded`` (rows with no scale scored), the waves, and notes on
        the scoring rules applied.
    """

    scores: pd.DataFrame
    reliability: pd.DataFrame
    item_stats: pd.DataFrame
    missing: pd.DataFrame
    meta: dict[str, Any]

    def _title(self) -> str:
        meta = self.meta
        scales = self.scores["scale"].nunique() if "scale" in self.scores else 0
        text = (
            f"ScaleScores({meta.get('instrument', '?')}: {scales} scale(s), "
            f"{meta.get('n_rows', '?')} row(s), {meta.get('n_scored', '?')} scored"
        )
        if meta.get("waves"):
            text += f", waves {', '.join(map(str, meta['waves']))}"
        alpha = self.reliability["alpha"].dropna() if "alpha" in self.reliability else []
        if len(alpha):
            text += f"; alpha {alpha.min():.2f} to {alpha.max():.2f}"
        return text + ")"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        shown = self.reliability.drop(columns=["instrument"], errors="ignore")
        return [("Scores", self.scores), ("Reliability", shown)]

    def wide(self) -> pd.DataFrame:
        """Return the scores with one row per respondent (x wave), one column per scale.

        Returns
        -------
        pandas.DataFrame
            Columns ``id``, [``wave``], then one column per scale named
            ``"{instrument}.{scale}"`` in key order. Rows keep the order of first appearance.

        Examples
        --------
        >>> import pandas as pd
        >>> from surveys.scoring import score
        >>> data = pd.DataFrame({"id": ["a", "b"], "sites_1": [4, 2]})
        >>> import warnings
        >>> with warnings.catch_warnings():  # alpha is undefined for one item
        ...     warnings.simplefilter("ignore")
        ...     result = score(data, "sites")
        >>> result.wide()
          id  sites.empathy
        0  a            4.0
        1  b            2.0
        """
        frame = self.scores
        keys = [col.ID] + ([col.WAVE] if col.WAVE in frame.columns else [])
        names = frame[col.INSTRUMENT].astype(str) + "." + frame[col.SCALE].astype(str)
        order = list(pd.unique(names))
        rows = frame[keys].drop_duplicates()
        table = (
            frame.assign(_column=names.to_numpy())
            .set_index([*keys, "_column"])[col.SCORE]
            .unstack("_column")
        )
        table = table.reindex(pd.MultiIndex.from_frame(rows) if len(keys) > 1 else rows[col.ID])
        table = table.reindex(columns=order)
        table.columns.name = None
        out = table.reset_index()
        return out.reset_index(drop=True)


def reverse_score(
    values: np.ndarray | pd.Series | pd.DataFrame | float,
    *,
    response_min: float,
    response_max: float,
) -> Any:
    """Reverse key responses on the declared response range.

    Parameters
    ----------
    values : array-like, Series, DataFrame or number
        Responses (NaN stays NaN). Not modified.
    response_min, response_max : float
        The declared response range of the items (not the observed range).

    Returns
    -------
    Same type as `values`
        ``response_min + response_max - values``.

    Raises
    ------
    InvalidParameterError
        If the range is not two finite numbers with ``response_min < response_max``.

    Examples
    --------
    >>> from surveys.scoring import reverse_score
    >>> reverse_score(2, response_min=1, response_max=5)
    4
    >>> reverse_score(1, response_min=0, response_max=1)
    0
    """
    for label, bound in (("response_min", response_min), ("response_max", response_max)):
        if isinstance(bound, bool) or not isinstance(bound, Real) or not math.isfinite(bound):
            raise InvalidParameterError(
                f"the `{label}` parameter of reverse_score must be a finite number; got {bound!r}"
            )
    if not response_min < response_max:
        raise InvalidParameterError(
            "the `response_min` parameter of reverse_score must be smaller than `response_max`; "
            f"got {response_min!r} and {response_max!r}"
        )
    return response_min + response_max - values


def score(
    data: pd.DataFrame,
    instrument: str | os.PathLike[str] | Instrument | Mapping[str, Any],
    *,
    id_col: str | None = None,
    wave_col: str | None = None,
    min_valid: float | int = 0.8,
    prorate: bool = False,
    impute: Literal["item_mean", "item_median"] | None = None,
    ci_level: float = 0.95,
    row_numbers: pd.Series | None = None,
    source_file: str | None = None,
    whole_numbers: bool = True,
) -> ScaleScores:
    r"""Score every scale of an instrument, with reliability per scale and wave.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per respondent (x wave): the id column, the optional wave column and one
        numeric column per item, named by item id (``bfi44_1``, ...). Other columns are
        ignored. Not modified.
    instrument : str, path-like, Instrument or mapping
        A library name (``"bfi44"``), a custom TOML key file, a mapping or an
        :class:`~surveys.instruments.Instrument` (see
        :func:`~surveys.instruments.load_instrument`).
    id_col : str, optional
        Respondent id column. Its values are kept as given in the output column ``id``.
        ``None`` (default): ``participant_id``, or ``id`` when the data have no
        ``participant_id`` column.
    wave_col : str or None, default None
        Wave column (e.g. ``pre``, ``mid``, ``post``), kept as given in the output column
        ``wave``. With it, ids may repeat across waves and reliability is computed per wave.
    min_valid : float or int, default 0.8
        Items a respondent must answer for a scale to be scored: a float in (0, 1] is a
        fraction of the scale's items (rounded up: 0.8 of 8 items = 7 items), an int >= 1 a
        count (capped at the scale's length). Note that ``1`` (int) means one item and
        ``1.0`` (float) means all items.
    prorate : bool, default False
        For sum and count scales only: score respondents who answered at least `min_valid`
        items as ``mean(answered items) x n_items``. Without it a sum or count scale is
        scored only when every item is answered (or imputed).
    impute : {"item_mean", "item_median"} or None, default None
        Fill a missing answer with the item's sample mean or median within the same wave.
        Only respondents who meet `min_valid` on their own answers are filled and scored.
        Off by default.
    ci_level : float, default 0.95
        Coverage of the confidence interval for alpha, in (0, 1).
    row_numbers : pandas.Series or None, default None
        File line number of each row (header = line 1), aligned to ``data.index``, used in
        error reports (e.g. :attr:`surveys.readers.Responses.row_numbers`). Default:
        position + 2, the lines of a plain CSV.
    source_file : str or None, default None
        File name written in the ``file`` column of error reports.
    whole_numbers : bool, default True
        Refuse fractional responses (``2.5`` on a 1-5 item), as
        :func:`surveys.validation.validate_responses` does; ``False`` for a custom instrument
        with continuous responses.

    Returns
    -------
    ScaleScores
        ``scores``, ``reliability``, ``item_stats``, ``missing`` and ``meta``; see
        :class:`ScaleScores` for every column.

    Raises
    ------
    InputValidationError
        One report listing every data problem (``failure_cases`` columns ``file, row,
        column, value, reason``; ``row`` = file line): missing id, wave or item columns (one
        line per column), non-numeric cells in item columns, values outside the declared
        response range, missing ids or waves, and duplicated ids (x wave).
    InvalidParameterError
        If a parameter has the wrong type or value.
    UnknownInstrumentError
        If `instrument` is an unknown library name.

    Warns
    -----
    UndefinedStatisticWarning
        One warning listing the scales (and waves) where a reliability statistic is
        undefined and returned as NaN, e.g. alpha of a one-item scale (SITES) or of a wave
        with fewer than two respondents.
    DataQualityWarning
        Passed on from :func:`~surveys.reliability.scale_reliability` (Heywood case in the
        one-factor model behind omega).

    See Also
    --------
    surveys.instruments.load_instrument : Library and custom keys.
    surveys.instruments.derive_items : Score a short form from a long form's columns.
    surveys.reliability.scale_reliability : Alpha, omega and item statistics.

    Notes
    -----
    Reverse-keyed items are recoded from the declared range,
    :math:`x' = \text{min} + \text{max} - x`, never from the observed range. With
    :math:`A` the set of answered items of a respondent, :math:`k` the scale length and
    :math:`m` its multiplier, a respondent with :math:`|A| \ge` the required count gets

    - mean scales: :math:`m \cdot \frac{1}{|A|}\sum_{i \in A} x'_i`;
    - sum and count scales: :math:`m \sum_{i} x'_i` when :math:`|A| = k`; with
      ``prorate=True``, :math:`m \cdot k \cdot \frac{1}{|A|}\sum_{i \in A} x'_i`.

    Everyone else gets NaN and is counted in ``missing``. With `impute`, missing answers of
    respondents who pass `min_valid` are replaced by the item's mean (median) over that
    wave's answers before the rule is applied. Count scales are sums of 0/1 (false/true)
    items.

    Reliability uses the observed, reverse-keyed answers of the respondents of each wave who
    answered at least one item of the scale (imputed values are never used), with
    pairwise-complete covariances; see :func:`~surveys.reliability.scale_reliability`,
    validated against ``psych::alpha`` (psych 2.2.9). With ``min_valid=1`` (any answered
    item) mean scores equal ``psych::scoreItems(impute = "none")`` (checked on psych's
    ``bfi`` data in ``tests/surveys/test_scoring.py``).

    Examples
    --------
    >>> import pandas as pd
    >>> from surveys.scoring import score
    >>> data = pd.DataFrame({
    ...     "id": ["p1", "p2", "p3", "p4", "p5"],
    ...     "ubc_sscs10_1": [1, 2, 6, 3, 5], "ubc_sscs10_2": [2, 1, 6, 3, 4],
    ...     "ubc_sscs10_3": [1, 3, 7, 2, 5], "ubc_sscs10_4": [7, 6, 2, 5, 3],
    ...     "ubc_sscs10_5": [2, 2, 6, 3, 4], "ubc_sscs10_6": [6, 7, 2, 5, 4],
    ...     "ubc_sscs10_7": [7, 6, 1, 4, 3], "ubc_sscs10_8": [6, 6, 2, 5, 3],
    ...     "ubc_sscs10_9": [7, 5, 1, 5, 4], "ubc_sscs10_10": [6, 7, 2, 4, 3],
    ... })
    >>> result = score(data, "ubc_sscs10")
    >>> result.scores[["id", "scale", "score", "n_answered"]]
       id              scale  score  n_answered
    0  p1  social_connection    6.5          10
    1  p2  social_connection    6.1          10
    2  p3  social_connection    1.7          10
    3  p4  social_connection    4.9          10
    4  p5  social_connection    3.4          10
    >>> print(f"alpha = {result.reliability.loc[0, 'alpha']:.3f}")
    alpha = 0.991
    """
    ins = load_instrument(instrument)
    if isinstance(data, pd.DataFrame):
        id_col = participant_column(data.columns, id_col)
    _check_parameters(
        data,
        id_col=id_col,
        wave_col=wave_col,
        min_valid=min_valid,
        prorate=prorate,
        impute=impute,
        ci_level=ci_level,
        row_numbers=row_numbers,
        source_file=source_file,
    )
    lines = _line_numbers(data, row_numbers)
    refuse_invisible(data, id_cols=(id_col, wave_col), where="score", file=source_file, rows=lines)
    columns = _validated_items(
        data,
        ins,
        id_col=id_col,
        wave_col=wave_col,
        lines=lines,
        file=source_file,
        whole_numbers=whole_numbers,
    )
    n = len(data)

    codes, labels, wave_rows = _waves(data, wave_col)

    fills = _imputation_values(columns, ins, impute, wave_rows)

    score_matrix = np.full((n, len(ins.scales)), np.nan)
    answered_matrix = np.zeros((n, len(ins.scales)), dtype=np.int64)
    rel_rows: list[dict[str, Any]] = []
    item_frames: list[pd.DataFrame] = []
    missing_rows: list[dict[str, Any]] = []
    min_answered: dict[str, int] = {}
    caught: list[tuple[str, warnings.WarningMessage]] = []

    # one (k, n) work array for all scales: fresh memory for every scale costs page faults
    buffer = np.empty((max(key.n_items for key in ins.scales), n))
    for j, key in enumerate(ins.scales):
        required = required_answers(min_valid, key.n_items)
        min_answered[key.name] = required
        x, rev = _keyed_items(columns, key, buffer)
        result, n_answered, n_imputed = _scale_scores(
            x, key, required=required, prorate=prorate, fills=fills, codes=codes
        )
        score_matrix[:, j] = result
        answered_matrix[:, j] = n_answered

        scored = ~np.isnan(result)
        for label, rows in zip(labels, wave_rows, strict=True):
            missing_row, rel_row, items, records = _wave_tables(
                ins, key, label, rows, x, rev, scored, n_answered, n_imputed, required, ci_level
            )
            missing_rows.append(missing_row)
            rel_rows.append(rel_row)
            item_frames.append(items)
            where = f"{ins.name}.{key.name}" + ("" if label is None else f" (wave {label!r})")
            caught.extend((where, rec) for rec in records)

    with_wave = wave_col is not None
    scores = _tidy_scores(
        data[id_col].to_numpy(),
        data[wave_col].to_numpy() if with_wave else None,
        ins,
        score_matrix,
        answered_matrix,
    )
    drop = [] if with_wave else [col.WAVE]
    reliability = pd.DataFrame(rel_rows, columns=RELIABILITY_COLUMNS).drop(columns=drop)
    item_stats = (
        pd.concat(item_frames, ignore_index=True)
        .reindex(columns=ITEM_STATS_COLUMNS)
        .drop(columns=drop)
    )
    item_stats["reversed"] = item_stats["reversed"].astype(bool)
    missing = pd.DataFrame(missing_rows, columns=MISSING_COLUMNS).drop(columns=drop)

    any_scored = int(np.count_nonzero((~np.isnan(score_matrix)).any(axis=1))) if n else 0
    meta = _score_meta(
        ins,
        data_n=n,
        any_scored=any_scored,
        labels=labels,
        with_wave=with_wave,
        params={
            "id_col": id_col,
            "wave_col": wave_col,
            "min_valid": min_valid,
            "prorate": prorate,
            "impute": impute,
            "ci_level": ci_level,
        },
        min_answered=min_answered,
    )

    # Pass on what scale_reliability warned about, once per category, at the caller.
    by_category: dict[type[Warning], list[str]] = {}
    for where, rec in caught:
        by_category.setdefault(rec.category, []).append(f"{where}: {rec.message}")
    for category, messages in by_category.items():
        warnings.warn(category("score: " + " | ".join(messages)), stacklevel=2)

    return ScaleScores(
        scores=scores, reliability=reliability, item_stats=item_stats, missing=missing, meta=meta
    )


def _waves(data: pd.DataFrame, wave_col: str | None) -> tuple[np.ndarray, list, list]:
    """Wave code per row, the labels in order and each wave's rows (None for a single wave).

    Labels are a categorical column's categories, else the order of first appearance.
    """
    if wave_col is not None:
        codes, labels = _wave_codes(data[wave_col])
    else:
        codes, labels = np.zeros(len(data), dtype=np.intp), [None]
    n_waves = len(labels)
    wave_rows = [codes == w for w in range(n_waves)] if n_waves > 1 else [None]
    return codes, list(labels), wave_rows


def _score_meta(
    ins: Instrument,
    *,
    data_n: int,
    any_scored: int,
    labels: list[Any],
    with_wave: bool,
    params: dict[str, Any],
    min_answered: dict[str, int],
) -> dict[str, Any]:
    """Return what :attr:`ScaleScores.meta` records: version, instrument, parameters, counts."""
    return {
        "package": "empathic-longitudinal",
        "version": __version__,
        "function": "surveys.scoring.score",
        "instrument": ins.name,
        "instrument_path": ins.path,
        "instrument_grade": ins.grade,
        "parameters": params,
        "min_answered": min_answered,
        "n_rows": data_n,
        "n_scored": any_scored,
        "n_excluded": data_n - any_scored,
        "waves": [] if not with_wave else [_builtin(label) for label in labels],
        "reverse_keying": "declared range: response_min + response_max - x",
        "imputation": (
            "none"
            if params["impute"] is None
            else f"{params['impute']} within wave, only for respondents meeting min_valid"
        ),
        "reliability_data": (
            "observed reverse-keyed answers (no imputed values), pairwise-complete covariances"
        ),
    }


def _imputation_values(
    columns: dict[str, np.ndarray], ins: Instrument, impute: str | None, wave_rows: list
) -> dict[str, np.ndarray]:
    """Imputation value of each item per wave (raw answers, before reverse keying)."""
    fills: dict[str, np.ndarray] = {}
    if impute is None:
        return fills
    stat = np.nanmean if impute == "item_mean" else np.nanmedian
    for item in ins.items:
        values = columns[item]
        per_wave = np.full(len(wave_rows), np.nan)
        for w, rows in enumerate(wave_rows):
            part = values if rows is None else values[rows]
            if part.size and not np.isnan(part).all():
                per_wave[w] = stat(part)
        fills[item] = per_wave
    return fills


def _wave_tables(
    ins: Instrument,
    key: ScaleKey,
    label: Any,
    rows: np.ndarray | None,
    x: np.ndarray,
    rev: Any,
    scored: np.ndarray,
    n_answered: np.ndarray,
    n_imputed: np.ndarray,
    required: int,
    ci_level: float,
) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame, list[warnings.WarningMessage]]:
    """One scale in one wave: its missing-data row, reliability row, item statistics, warnings."""
    n = len(scored)
    sel = slice(None) if rows is None else rows
    n_rows_w = n if rows is None else int(np.count_nonzero(rows))
    n_scored = int(np.count_nonzero(scored[sel]))
    missing_row = {
        col.INSTRUMENT: ins.name,
        col.SCALE: key.name,
        col.WAVE: label,
        col.N: n_rows_w,
        "n_scored": n_scored,
        "n_unscored": n_rows_w - n_scored,
        "min_answered": required,
        "n_items_missing": int(key.n_items * n_rows_w - n_answered[sel].sum()),
        "n_imputed": int(n_imputed[sel].sum()),
    }
    # Reliability: observed answers of the wave's respondents with at least one answer.
    use = n_answered > 0
    if rows is not None:
        use &= rows
    xw = x.T if bool(use.all()) else x.T[use]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        summary, stats = scale_reliability(xw, item_names=list(key.items), ci_level=ci_level)
    rel_row = {
        col.INSTRUMENT: ins.name,
        col.SCALE: key.name,
        col.WAVE: label,
        col.N: int(summary["n"]),
        col.N_ITEMS: int(summary["n_items"]),
        "alpha": summary["alpha"],
        "alpha_ci_low": summary["alpha_ci_low"],
        "alpha_ci_high": summary["alpha_ci_high"],
        "alpha_standardized": summary["alpha_standardized"],
        "omega_total": summary["omega_total"],
    }
    items = stats.assign(
        **{col.INSTRUMENT: ins.name, col.SCALE: key.name, col.WAVE: label, "reversed": rev}
    )
    return missing_row, rel_row, items, list(records)


def _keyed_items(
    columns: dict[str, np.ndarray], key: ScaleKey, buffer: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return the scale's answers as a (k, n) array, reverse keyed, and the reverse flags.

    The array is the first k rows of `buffer`, reused from scale to scale.
    """
    k = key.n_items
    x = buffer[:k]
    rev = np.array([item in key.reverse for item in key.items], dtype=bool)
    pivot = key.response_min + key.response_max
    for i, item in enumerate(key.items):
        if rev[i]:
            np.subtract(pivot, columns[item], out=x[i])
        else:
            x[i] = columns[item]
    return x, rev


def _scale_scores(
    x: np.ndarray,
    key: ScaleKey,
    *,
    required: int,
    prorate: bool,
    fills: dict[str, np.ndarray],
    codes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score one scale from its (k, n) keyed answers; return (score, n_answered, n_imputed)."""
    k, n = x.shape
    missing = np.isnan(x)
    complete = not missing.any()
    n_answered = np.full(n, k, dtype=np.int64) if complete else k - missing.sum(axis=0)
    passes = n_answered >= required
    n_imputed = np.zeros(n, dtype=np.int64)
    if complete:
        total = x.sum(axis=0)
        n_present = n_answered
    else:
        filled = x
        if fills:
            filled = x.copy()
            pivot = key.response_min + key.response_max
            for i, item in enumerate(key.items):
                gap = missing[i] & passes
                if gap.any():
                    value = fills[item][codes[gap]]
                    filled[i, gap] = pivot - value if item in key.reverse else value
            missing = np.isnan(filled)
            n_imputed = (k - missing.sum(axis=0)) - n_answered
        total = np.where(missing, 0.0, filled).sum(axis=0)
        n_present = k - missing.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if key.scoring == "mean":
            result = np.where(passes & (n_present > 0), total / n_present, np.nan)
        elif prorate:
            result = np.where(passes & (n_present > 0), total / n_present * k, np.nan)
        else:
            result = np.where(passes & (n_present == k), total, np.nan)
    if key.multiplier != 1.0:
        result *= key.multiplier
    return result, n_answered, n_imputed


def _builtin(value: Any) -> Any:
    """Return a numpy scalar as the matching Python scalar (JSON-friendly metadata)."""
    return value.item() if isinstance(value, np.generic) else value


def required_answers(min_valid: float | int, k: int) -> int:
    """Return how many of a scale's ``k`` items must be answered for it to be scored.

    ``min_valid`` is a count (an int, at most ``k``) or a share of the items (a float,
    rounded up, at least one).

    Examples
    --------
    >>> required_answers(0.5, 5), required_answers(3, 2)
    (3, 2)
    """
    if isinstance(min_valid, Integral):
        return min(int(min_valid), k)
    return max(1, math.ceil(round(float(min_valid) * k, 9)))


def _wave_codes(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        present = series.cat.remove_unused_categories()
        labels = list(present.cat.categories)
        codes = present.cat.codes.to_numpy().astype(np.intp)
        return codes, labels
    codes, uniques = pd.factorize(series, sort=False)
    return codes.astype(np.intp), list(uniques)


def _tidy_scores(
    ids: np.ndarray,
    waves: np.ndarray | None,
    ins: Instrument,
    score_matrix: np.ndarray,
    answered_matrix: np.ndarray,
) -> pd.DataFrame:
    n, m = score_matrix.shape
    names = np.empty((n, m), dtype=object)
    names[:] = np.array([key.name for key in ins.scales], dtype=object)
    sizes = np.empty((n, m), dtype=np.int64)
    sizes[:] = [key.n_items for key in ins.scales]
    instrument = np.empty(n * m, dtype=object)
    instrument.fill(ins.name)
    frame: dict[str, Any] = {col.ID: np.repeat(ids, m)}
    if waves is not None:
        frame[col.WAVE] = np.repeat(waves, m)
    frame[col.INSTRUMENT] = instrument
    frame[col.SCALE] = names.ravel()
    frame[col.SCORE] = score_matrix.ravel()
    frame[col.N_ITEMS] = sizes.ravel()
    frame[col.N_ANSWERED] = answered_matrix.ravel()
    # the arrays are new, so no copy (copying object columns dominates the run time)
    return pd.DataFrame(frame, copy=False)
