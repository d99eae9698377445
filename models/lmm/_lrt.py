"""Likelihood-ratio tests between nested linear mixed models (refitting REML fits by ML).

:func:`models.lmm.model.lrt` checks its arguments and calls :func:`likelihood_ratio`; this module
does not import the model class, so the dependency goes one way (``model`` imports ``_lrt``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

import models.lmm.engine as engine
from _empathic_base.results import Result
from models._errors import (
    ConvergenceError,
    InvalidParameterError,
)


@dataclass(frozen=True, repr=False)
class LikelihoodRatioTest(Result):
    """Likelihood-ratio test between two nested mixed models.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model, smaller first: ``model, formula, npar, loglik, aic, bic, deviance,
        statistic, df, p_value`` (test columns NaN on the first row). ``deviance`` is
        ``-2 loglik`` of the likelihood compared (REML criterion when REML fits are compared).
    statistic : float
        ``2 (loglik_1 - loglik_0)``.
    df : int
        Difference in the number of parameters.
    p_value : float
        Upper tail of the chi-square distribution with ``df`` degrees of freedom.
    refit_ml : bool
        ``True`` when REML fits were refitted by ML because their fixed effects differ.
    criterion : str
        ``"ML"`` or ``"REML"``: the likelihood compared.
    """

    table: pd.DataFrame
    statistic: float
    df: int
    p_value: float
    refit_ml: bool
    criterion: str

    def _title(self) -> str:
        return (
            f"LikelihoodRatioTest(chi2({self.df}) = {self.statistic:.3g}, "
            f"p = {self.p_value:.3g}, {self.criterion})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Models compared", self.table)]


def _same_fixed(a: Any, b: Any) -> bool:
    Xa, Xb = a.design_.X, b.design_.X
    if list(Xa.columns) != list(Xb.columns) or Xa.shape != Xb.shape:
        return False
    return bool(np.allclose(Xa.to_numpy(), Xb.to_numpy()))


def _refit_ml(m: Any) -> Any:
    """Return the ML refit of a fitted LinearMixedModel, a new model of the same class."""
    start = time.perf_counter()
    params = m.get_params()
    params["reml"] = False
    if params["ddf"] == "kenward-roger":
        params["ddf"] = "satterthwaite"  # Kenward-Roger is defined for REML fits only
    formula = params.pop("formula")
    try:
        result, messages, evals = engine.refit_ml(m._input, m._result, max_evals=int(m.max_evals))
    except engine.EngineFailure as err:
        raise ConvergenceError(f"lrt: the ML refit of {m.formula!r} failed: {err}") from err
    out = type(m)(formula, **params)
    out._set_fit(m.design_, m._input, result, messages, evals, start)
    return out


def likelihood_ratio(m0: Any, m1: Any) -> LikelihoodRatioTest:
    """Likelihood-ratio test between two fitted LinearMixedModels (see :func:`models.lmm.lrt`).

    The arguments have been checked to be fitted models; the rows and sizes are checked here.
    """
    if m0.n_obs_ != m1.n_obs_ or not m0.design_.rows.equals(m1.design_.rows):
        raise InvalidParameterError(
            "lrt: the two models must be fitted to the same rows; got "
            f"{m0.n_obs_} and {m1.n_obs_} observations (missing values can differ between "
            "formulas: drop incomplete rows first)"
        )
    if m0.npar_ == m1.npar_:
        raise InvalidParameterError(
            f"lrt: both models have {m0.npar_} parameters; nested models must differ in size"
        )
    small, big = (m0, m1) if m0.npar_ < m1.npar_ else (m1, m0)
    refit = False
    if _same_fixed(small, big) and small.reml and big.reml:
        criterion = "REML"
    else:
        criterion = "ML"
        if small.reml or big.reml:
            refit = True
            small = _refit_ml(small) if small.reml else small
            big = _refit_ml(big) if big.reml else big
    stat = max(0.0, 2.0 * (big.loglik_ - small.loglik_))
    df = int(big.npar_ - small.npar_)
    p_value = float(special.chdtrc(df, stat))  # the chi-square upper tail
    table = pd.DataFrame(
        {
            "model": ["m0", "m1"],
            "formula": [small.formula, big.formula],
            "npar": [small.npar_, big.npar_],
            "loglik": [small.loglik_, big.loglik_],
            "aic": [small.aic_, big.aic_],
            "bic": [small.bic_, big.bic_],
            "deviance": [-2.0 * small.loglik_, -2.0 * big.loglik_],
            "statistic": [np.nan, stat],
            "df": [np.nan, float(df)],
            "p_value": [np.nan, p_value],
        }
    )
    return LikelihoodRatioTest(
        table=table, statistic=stat, df=df, p_value=p_value, refit_ml=refit, criterion=criterion
    )
