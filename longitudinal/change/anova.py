"""Omnibus tests over waves: repeated-measures ANOVA with sphericity, and Friedman's test.

The statistics are computed by pingouin; this module keeps the complete-case rule, the list
of people left out, and NaN with a warning where a statistic is undefined.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._errors import DataQualityWarning
from longitudinal.change._panel import _excluded_table, _meta_head, _panel
from longitudinal.change.results import (
    FRIEDMAN_COLUMNS,
    RM_ANOVA_COLUMNS,
    SPHERICITY_COLUMNS,
    RMAnovaResult,
)


def _long_codes(y: np.ndarray) -> pd.DataFrame:
    """Reshape an n x k matrix to the long table pingouin takes (integer subject and wave)."""
    n, k = y.shape
    return pd.DataFrame(
        {"subject": np.repeat(np.arange(n), k), "wave": np.tile(np.arange(k), n), "y": y.ravel()}
    )


def _sphericity(y: np.ndarray) -> dict[str, float]:
    """Mauchly's W, its chi-square test and the GG / HF epsilons for an n x k matrix.

    pingouin computes the test and the Greenhouse-Geisser epsilon; two things it does not give
    are kept here: NaN for a singular wave covariance (as car reports it, where pingouin returns
    finite numbers) and the uncapped Huynh-Feldt epsilon that car prints.
    """
    import pingouin as pg

    n, k = y.shape
    p = k - 1
    df = n - 1
    if p == 1:
        return {"W": 1.0, "chi2": math.nan, "df": 0.0, "p": math.nan, "gg": 1.0, "hf": 1.0}
    centred = y - y.mean(axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(np.cov(centred, rowvar=False, ddof=1))[1:]  # drop the null direction
    if df < p or lam.min() <= 1e-12 * max(lam.max(), 1e-300):
        nan = math.nan
        return {"W": nan, "chi2": nan, "df": p * (p + 1) / 2 - 1, "p": nan, "gg": nan, "hf": nan}
    long = _long_codes(y)
    spher = pg.sphericity(long, dv="y", within="wave", subject="subject")
    gg = float(pg.epsilon(long, dv="y", within="wave", subject="subject", correction="gg"))
    hf = ((df + 1) * p * gg - 2) / (p * (df - p * gg))
    return {
        "W": float(spher.W),
        "chi2": float(spher.chi2),
        "df": float(spher.dof),
        "p": float(spher.pval),
        "gg": gg,
        "hf": float(hf),
    }


def _pingouin_anova(y: np.ndarray) -> tuple[float, float, float]:
    """SS of waves, SS error and F of the one-way repeated-measures ANOVA (pingouin)."""
    import pingouin as pg

    long = _long_codes(y)
    with np.errstate(divide="ignore", invalid="ignore"):  # its epsilon on degenerate data
        table = pg.rm_anova(long, dv="y", within="wave", subject="subject", detailed=True)
    ss_wave, ss_err = (float(v) for v in table["SS"].iloc[:2])
    f_stat = float(table["F"].iloc[0]) if ss_err > 0 else math.nan
    return ss_wave, ss_err, f_stat


def rm_anova(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
) -> RMAnovaResult:
    """One-way repeated-measures ANOVA over waves, on complete cases.

    Subjects missing the outcome at any wave are left out and listed in ``excluded``; the
    growth model (:func:`growth_model`) keeps them.

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
        The wave labels in time order.

    Returns
    -------
    RMAnovaResult
        ``table`` (F test without correction, with the Greenhouse-Geisser and with the
        Huynh-Feldt correction), ``sphericity`` (Mauchly's test, GG and HF epsilon),
        ``excluded`` and ``meta``; see :class:`RMAnovaResult` for the columns.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Invalid long-format data (duplicated subject x wave rows, unknown waves, ...).

    Warns
    -----
    DataQualityWarning
        Fewer than two complete subjects (the test is NaN), or fewer complete subjects than
        waves (Mauchly's test and the epsilons are NaN).

    See Also
    --------
    friedman_test : the rank-based check on the same complete cases.

    Notes
    -----
    With ``Y`` the n x k matrix of complete cases, ``SS_wave = n * sum_j (mean_j - mean)^2``,
    ``SS_subjects = k * sum_i (mean_i - mean)^2`` and ``SS_error`` the residual sum of squares,
    ``F = (SS_wave / (k - 1)) / (SS_error / ((n - 1)(k - 1)))``.

    Sphericity is judged on ``M = C' S C`` where ``S`` is the covariance matrix of the waves and
    ``C`` are k - 1 orthonormal contrasts (any orthonormal set gives the same results), as
    ``car::Anova`` does: Mauchly's ``W = det(M) / (tr(M) / p)^p`` with ``p = k - 1`` and the
    chi-square approximation with Anderson's second-order correction
    (``chi2 = -(n - 1) rho log W``, ``rho = 1 - (2p^2 + p + 2) / (6p(n - 1))``,
    ``df = p(p + 1)/2 - 1``). Greenhouse-Geisser ``eps = (sum l)^2 / (p sum l^2)`` over the
    eigenvalues ``l`` of ``M``; Huynh-Feldt
    ``eps = (n p eps_GG - 2) / (p (n - 1 - p eps_GG))``, capped at 1 for the corrected
    p value (reported uncapped in ``sphericity``, as car prints it). The corrected tests
    multiply both degrees of freedom by epsilon. With two waves sphericity holds trivially:
    ``W = 1``, both epsilons are 1 and the Mauchly chi-square and p value are NaN.

    ``eta_sq_partial = SS_wave / (SS_wave + SS_error)``; ``eta_sq_generalized =
    SS_wave / (SS_wave + SS_subjects + SS_error)`` (Olejnik & Algina 2003, Bakeman 2005).

    Validated against ``car::Anova(lm(cbind(...) ~ 1), idata, idesign = ~wave)`` (car 3.1-1)
    and ``stats::mauchly.test`` (R 4.2.2) on carData::OBrienKaiser (averaged over hours: three
    phases; averaged over phases: five hours) to 1e-6; see tests/longitudinal/reference/change.R.

    References
    ----------
    Mauchly, J. W. (1940). Significance test for sphericity of a normal n-variate
    distribution. *Annals of Mathematical Statistics*, 11, 204-209.
    Greenhouse, S. W., & Geisser, S. (1959). On methods in the analysis of profile data.
    *Psychometrika*, 24, 95-112.
    Huynh, H., & Feldt, L. S. (1976). Estimation of the Box correction for degrees of freedom
    from sample data in randomized block and split-plot designs. *Journal of Educational
    Statistics*, 1, 69-82.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import rm_anova
    >>> df = pd.DataFrame({
    ...     "id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...     "wave": ["pre", "mid", "post"] * 4,
    ...     "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, None, 5.0]})
    >>> res = rm_anova(df, id_col="id", wave_col="wave", outcome_col="score",
    ...                waves=["pre", "mid", "post"])
    >>> res.meta["n_used"], res.meta["n_excluded"], res.meta["excluded_ids"]
    (3, 1, [4])
    >>> round(float(res.table.loc[0, "statistic"]), 6)
    9.25
    """
    func = "rm_anova"
    panel = _panel(
        data,
        id_col=id_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    complete = panel.wide.dropna()
    excluded = _excluded_table(panel.wide)
    y = complete.to_numpy(dtype=float)
    n, k = y.shape
    meta: dict[str, Any] = {
        **_meta_head(
            func,
            id_col=id_col,
            wave_col=wave_col,
            outcome_col=outcome_col,
            waves=list(panel.waves),
        ),
        "waves": list(panel.waves),
        "n_subjects": int(len(panel.wide)),
        "n_used": int(n),
        "n_excluded": int(len(excluded)),
        "excluded_ids": excluded["id"].tolist(),
        "exclusion_rule": "complete cases: subjects observed at every wave",
    }

    nan = math.nan
    df1 = float(k - 1)
    df2 = float((n - 1) * (k - 1)) if n >= 2 else nan
    if n < 2:
        warnings.warn(
            f"rm_anova: {n} subject(s) observed at every wave of {list(panel.waves)}; the "
            "repeated-measures ANOVA needs at least 2 and is returned as NaN",
            DataQualityWarning,
            stacklevel=2,
        )
        ss_wave = ss_err = ss_subj = f_stat = nan
        sph = {"W": nan, "chi2": nan, "df": nan, "p": nan, "gg": nan, "hf": nan}
    else:
        ss_wave, ss_err, f_stat = _pingouin_anova(y)
        # pingouin's one-way table has no subjects row; SS_subjects enters generalized eta^2
        ss_subj = float(k * np.sum((y.mean(axis=1) - y.mean()) ** 2))
        sph = _sphericity(y)
        if k > 2 and math.isnan(sph["W"]):
            warnings.warn(
                f"rm_anova: the covariance matrix of the {k} waves is singular with {n} complete "
                "subjects; Mauchly's test and the epsilon corrections are NaN",
                DataQualityWarning,
                stacklevel=2,
            )
    hf_used = min(1.0, sph["hf"]) if not math.isnan(sph["hf"]) else nan
    rows = []
    for correction, eps in (
        ("none", 1.0),
        ("greenhouse-geisser", sph["gg"]),
        ("huynh-feldt", hf_used),
    ):
        d1, d2 = eps * df1, eps * df2
        p_value = float(stats.f.sf(f_stat, d1, d2)) if not math.isnan(f_stat * d1) else nan
        rows.append(
            {
                "term": "wave",
                "correction": correction,
                "epsilon": eps,
                "df1": d1,
                "df2": d2,
                "statistic": f_stat,
                "p_value": p_value,
                "ss_effect": ss_wave,
                "ss_error": ss_err,
                "ss_subjects": ss_subj,
                "eta_sq_partial": _ratio(ss_wave, ss_wave + ss_err),
                "eta_sq_generalized": _ratio(ss_wave, ss_wave + ss_subj + ss_err),
                "n": n,
            }
        )
    table = pd.DataFrame(rows, columns=RM_ANOVA_COLUMNS)
    sphericity = pd.DataFrame(
        [
            {
                "term": "wave",
                "statistic": sph["W"],
                "chi2": sph["chi2"],
                "df": sph["df"],
                "p_value": sph["p"],
                "gg_epsilon": sph["gg"],
                "hf_epsilon": sph["hf"],
                "n": n,
            }
        ],
        columns=SPHERICITY_COLUMNS,
    )
    return RMAnovaResult(table=table, sphericity=sphericity, excluded=excluded, meta=meta)


def _ratio(num: float, den: float) -> float:
    if math.isnan(num) or math.isnan(den) or den == 0:
        return math.nan
    return num / den


def friedman_test(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
) -> pd.DataFrame:
    """Friedman's rank test over waves on complete cases, with Kendall's W.

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
        The wave labels in time order.

    Returns
    -------
    pandas.DataFrame
        One row: ``term`` (``"wave"``), ``statistic`` (Friedman chi-square), ``df`` (k - 1),
        ``p_value``, ``kendall_w``, ``n`` (complete subjects), ``n_excluded``.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Invalid long-format data.

    Warns
    -----
    DataQualityWarning
        Fewer than two complete subjects, or every subject ties across all waves (NaN result).

    See Also
    --------
    rm_anova : the parametric test on the same complete cases.

    Notes
    -----
    Values are ranked within each subject (ties get average ranks). With rank sums ``R_j``,
    ``chi2 = 12 sum_j (R_j - n(k+1)/2)^2 / (n k (k+1) - sum (t^3 - t) / (k - 1))``, the sum
    running over tie groups within subjects; this is ``stats::friedman.test``. Kendall's
    ``W = chi2 / (n (k - 1))``.

    Validated against ``stats::friedman.test`` (R 4.2.2) on carData::OBrienKaiser and
    psychTools::affect to 1e-6.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import friedman_test
    >>> df = pd.DataFrame({
    ...     "id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...     "wave": ["pre", "mid", "post"] * 4,
    ...     "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, 4.5, 5.0]})
    >>> res = friedman_test(df, id_col="id", wave_col="wave", outcome_col="score",
    ...                     waves=["pre", "mid", "post"])
    >>> float(res.loc[0, "kendall_w"])
    0.875
    """
    func = "friedman_test"
    panel = _panel(
        data,
        id_col=id_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    y = panel.wide.dropna().to_numpy(dtype=float)
    n, k = y.shape
    n_excluded = int(len(panel.wide) - n)
    stat = p = w = math.nan
    if n >= 2 and not np.all(y == y[:, :1]):  # all tied: the statistic is 0/0
        import pingouin as pg

        table = pg.friedman(_long_codes(y), dv="y", within="wave", subject="subject")
        stat = float(table["Q"].iloc[0])
        p = float(table["p_unc"].iloc[0])
        w = float(table["W"].iloc[0])
    if math.isnan(stat):
        warnings.warn(
            f"friedman_test: the test is undefined for these data ({n} complete subject(s)"
            f"{', all tied' if n >= 2 else ''}); returned as NaN",
            DataQualityWarning,
            stacklevel=2,
        )
    row = {
        "term": "wave",
        "statistic": stat,
        "df": float(k - 1),
        "p_value": p,
        "kendall_w": w,
        "n": n,
        "n_excluded": n_excluded,
    }
    return pd.DataFrame([row], columns=FRIEDMAN_COLUMNS)
