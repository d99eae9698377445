"""Model-based wave means: a random-intercept mixed model with the wave as a factor.

``outcome ~ C(wave) + (1 | subject)``, fitted by REML on every observed score, so a subject
with a missing wave keeps the waves it has (the RM-ANOVA and Friedman test keep complete cases
only). Its estimated marginal means per wave and the pairwise contrasts between waves
(Kenward-Roger df, Holm-adjusted) come from :meth:`models.lmm.LinearMixedModel.emmeans`.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from longitudinal._checks import check_unit
from longitudinal._display import Result as _Shown
from longitudinal._errors import InvalidParameterError
from longitudinal.change._panel import _meta_head, _panel
from longitudinal.change.pairwise import _pairs

__all__ = ["WAVE_CONTRAST_COLUMNS", "WAVE_MEANS_COLUMNS", "ModelWaveMeans", "model_wave_means"]

WAVE_MEANS_COLUMNS = ["wave", "emmean", "se", "df", "ci_low", "ci_high", "observed_mean", "n"]
"""Columns of :attr:`ModelWaveMeans.means`."""

WAVE_CONTRAST_COLUMNS = ["contrast", "wave_from", "wave_to", "estimate", "se", "df",
                         "statistic", "p_value", "ci_low", "ci_high", "p_adjust"]  # fmt: skip
"""Columns of :attr:`ModelWaveMeans.contrasts`."""

_SUBJECT, _WAVE, _Y = "subject", "wave", "y"
_FORMULA = f"{_Y} ~ C({_WAVE}) + (1 | {_SUBJECT})"


@dataclass(frozen=True, eq=False, repr=False)
class ModelWaveMeans(_Shown):
    """Result of :func:`model_wave_means`.

    Attributes
    ----------
    means : pandas.DataFrame
        One row per wave in study order: ``wave, emmean, se, df, ci_low, ci_high`` (the
        model's marginal mean, Kenward-Roger df), ``observed_mean`` (mean of the scores
        observed at that wave) and ``n`` (subjects observed there).
    contrasts : pandas.DataFrame
        One row per pair of waves, in the order of :func:`pairwise_changes` (adjacent pairs
        first): ``contrast`` (``"later - earlier"``), ``wave_from``, ``wave_to``,
        ``estimate`` (later minus earlier), ``se``, ``df``, ``statistic`` (t), ``p_value``
        (Holm-adjusted over the pairs), ``ci_low``, ``ci_high`` (Bonferroni-adjusted, as
        emmeans pairs Holm's p-values with) and ``p_adjust`` (``"holm"``).
    model : models.lmm.LinearMixedModel
        The fitted model (its ``singular_`` and ``converged_`` say whether it may be read).
    meta : dict
        ``formula``, ``n_obs``, ``n_subjects`` (with at least one score), ``n_complete``
        (with every wave), ``ddf``, ``p_adjust`` and the call's parameters.
    """

    means: pd.DataFrame
    contrasts: pd.DataFrame
    model: Any
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        return (
            f"ModelWaveMeans({self.meta.get('n_subjects', '?')} subjects, "
            f"{self.meta.get('n_complete', '?')} complete; {self.meta.get('formula', '')})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Model-based wave means (Kenward-Roger df)", self.means),
            ("Contrasts between waves (Holm)", self.contrasts),
        ]


def model_wave_means(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    ci_level: float = 0.95,
) -> ModelWaveMeans:
    """Wave means and their pairwise contrasts from ``outcome ~ C(wave) + (1 | subject)``.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    id_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column.
    waves : sequence of hashable
        The wave labels in time order (the factor's levels, the first the reference).
    ci_level : float, default 0.95
        Level of the intervals of the means and of the contrasts.

    Returns
    -------
    ModelWaveMeans
        The means per wave, the contrasts between waves and the fitted model.

    Raises
    ------
    InvalidParameterError
        A parameter is invalid, or no wave has an observed score.
    surveys.InputValidationError
        Invalid long-format data (duplicated subject x wave rows, unknown waves, ...).
    models.ModelsError
        The mixed model cannot be fitted (too few subjects or observations).

    Notes
    -----
    The model is fitted by REML on every observed score (:class:`models.lmm.LinearMixedModel`);
    the means are its estimated marginal means per wave with Kenward-Roger standard errors and
    df (``emmeans(fit, ~ wave, lmer.df = "kenward-roger")``), the contrasts every pair of
    means, later minus earlier, Holm-adjusted (``pairs(emm, reverse = TRUE, adjust =
    "holm")``). With every subject observed at every wave the design is balanced and each
    marginal mean equals the observed mean of its wave; with missing waves the model's means
    also draw on the subject's other scores through the random intercept.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change.wave_means import model_wave_means
    >>> df = pd.DataFrame({
    ...     "id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...     "wave": ["pre", "mid", "post"] * 4,
    ...     "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, 4.5, 5.0]})
    >>> res = model_wave_means(df, id_col="id", wave_col="wave", outcome_col="score",
    ...                        waves=["pre", "mid", "post"])
    >>> res.means[["wave", "emmean", "observed_mean"]].round(3)
       wave  emmean  observed_mean
    0   pre   2.875          2.875
    1   mid   3.375          3.375
    2  post   4.000          4.000
    """
    from models.lmm import LinearMixedModel

    func = "model_wave_means"
    level = check_unit(ci_level, name="ci_level", where=func)
    panel = _panel(
        data, id_col=id_col, wave_col=wave_col, outcome_col=outcome_col, waves=waves, func=func
    )
    labels = [str(w) for w in panel.waves]
    if len(set(labels)) != len(labels):
        raise InvalidParameterError(
            f"the `waves` parameter of {func} must name each wave differently as text; "
            f"got {list(panel.waves)!r}"
        )
    wide = panel.wide.copy()
    wide.columns = labels
    long = wide.rename_axis(index=_SUBJECT, columns=_WAVE).stack().rename(_Y).reset_index()
    long = long.dropna(subset=[_Y]).reset_index(drop=True)
    long[_SUBJECT] = long[_SUBJECT].astype(str)
    long[_WAVE] = pd.Categorical(long[_WAVE].astype(str), categories=labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fit's problems are read from the model
        model = LinearMixedModel(_FORMULA, reml=True, ci_level=level).fit(long)
        emm = model.emmeans(_WAVE, ddf="kenward-roger", ci_level=level)
        pairs = emm.pairs(adjust="holm").to_frame()
    means = emm.to_frame().rename(columns={_WAVE: "wave"})
    means["wave"] = means["wave"].astype(str)
    observed = wide.notna()
    means["observed_mean"] = wide.mean(axis=0).reindex(means["wave"]).to_numpy()
    means["n"] = observed.sum(axis=0).reindex(means["wave"]).to_numpy().astype(int)
    contrasts = _later_minus_earlier(pairs, labels)
    meta = {
        **_meta_head(
            func,
            id_col=id_col,
            wave_col=wave_col,
            outcome_col=outcome_col,
            waves=list(panel.waves),
            ci_level=level,
        ),  # fmt: skip
        "formula": f"{outcome_col} ~ C({wave_col}) + (1 | {id_col})",
        "n_obs": int(model.n_obs_),
        "n_subjects": int(observed.any(axis=1).sum()),
        "n_complete": int(observed.all(axis=1).sum()),
        "ddf": "kenward-roger",
        "p_adjust": "holm",
    }
    return ModelWaveMeans(
        means=means[WAVE_MEANS_COLUMNS].reset_index(drop=True),
        contrasts=contrasts,
        model=model,
        meta=meta,
    )


def _later_minus_earlier(pairs: pd.DataFrame, labels: list[str]) -> pd.DataFrame:
    """Turn emmeans' ``earlier - later`` pairs into ``later - earlier`` in the pairwise order."""
    k = len(labels)
    emmeans_order = [(labels[i], labels[j]) for i in range(k) for j in range(i + 1, k)]
    at = {pair: row for row, pair in enumerate(emmeans_order)}
    rows = []
    for earlier, later in _pairs(tuple(labels)):
        rec = pairs.iloc[at[(earlier, later)]]
        rows.append(
            {
                "contrast": f"{later} - {earlier}",
                "wave_from": earlier,
                "wave_to": later,
                "estimate": -float(rec["estimate"]),
                "se": float(rec["se"]),
                "df": float(rec["df"]),
                "statistic": -float(rec["statistic"]),
                "p_value": float(rec["p_value"]),
                "ci_low": -float(rec["ci_high"]),
                "ci_high": -float(rec["ci_low"]),
                "p_adjust": "holm",
            }
        )
    return pd.DataFrame(rows, columns=WAVE_CONTRAST_COLUMNS).astype(
        {c: float for c in ("estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high")}
    )
