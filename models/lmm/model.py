"""Linear mixed models in lme4 syntax, fitted by mixedlm, with Satterthwaite or Kenward-Roger df.

:class:`LinearMixedModel` follows the estimator contract: ``LinearMixedModel(formula, ...)`` stores
options, ``.fit(data)`` returns the fitted model with attributes ending in ``_``. The formula is
parsed and checked by :func:`models.formula.parse_formula` and evaluated by
:func:`models.formula.build_design`; the fit itself is mixedlm's (profiled REML or ML on lme4's
penalized least-squares formulation, Bates, Maechler, Bolker & Walker 2015), which receives only
the numeric design columns under generated names (:mod:`models.lmm.engine`).
Fixed-effect degrees of freedom are Satterthwaite's, as in lmerTest (Kuznetsova, Brockhoff &
Christensen 2017), or Kenward & Roger's (1997), as in pbkrtest.

The class is fitting and its result tables; its predictions and ICC (``_predict``), its
summaries and JSON (``_summary``), the likelihood-ratio test (``_lrt``), R-squared (``_r2``:
Rights & Sterba, Nakagawa) and estimated marginal means with contrasts (``_emmeans``, on
emmeans' reference grid from the predictor columns kept at ``fit``) live beside it.
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from scipy import special

import models.lmm.engine as engine
from models._checks import check_design, check_unit
from models._errors import (
    ConvergenceError,
    ConvergenceWarning,
    InvalidParameterError,
    NotFittedError,
    SingularFitWarning,
)
from models._varcorr import random_tables, singular_description
from models._version import __version__
from models.formula import Design, build_design, parse_formula
from models.lmm._analytic import SINGULAR_TOL, lower_entries
from models.lmm._emmeans import MarginalMeans, marginal_means, predictor_frame
from models.lmm._kenward_roger import MAX_KR_OBS, kenward_roger
from models.lmm._lrt import LikelihoodRatioTest, likelihood_ratio
from models.lmm._predict import _Predictions
from models.lmm._satterthwaite import satterthwaite_df, varpar_covariance
from models.lmm._smooth_fit import fit_smooth_model
from models.lmm._smooth_spec import split_smooth
from models.lmm._smooth_summary import unavailable
from models.lmm._summary import DICT_KEYS, MixedModelSummary, _Summaries

if TYPE_CHECKING:
    from models.lmm._r2 import MixedR2
    from models.lmm._smooth_linearity import SmoothLinearityTest

__all__ = ["DICT_KEYS", "LikelihoodRatioTest", "LinearMixedModel", "MixedModelSummary", "lrt"]

DDF_METHODS = ("satterthwaite", "kenward-roger")
"""Denominator degrees of freedom of the fixed-effect t tests."""


def _check_params(model: LinearMixedModel) -> None:
    if not isinstance(model.formula, str):
        raise InvalidParameterError(
            "the `formula` parameter of LinearMixedModel must be a str in lme4 syntax, e.g. "
            f"'y ~ x + (1 | g)'; got {type(model.formula).__name__}"
        )
    if not isinstance(model.reml, bool | np.bool_):
        raise InvalidParameterError(
            f"the `reml` parameter of LinearMixedModel must be a bool; got {model.reml!r}"
        )
    if model.optimizer not in engine.OPTIMIZERS:
        raise InvalidParameterError(
            "the `optimizer` parameter of LinearMixedModel must be one of "
            f"{list(engine.OPTIMIZERS)}; got {model.optimizer!r}"
        )
    if model.ddf not in DDF_METHODS:
        raise InvalidParameterError(
            f"the `ddf` parameter of LinearMixedModel must be one of {list(DDF_METHODS)}; "
            f"got {model.ddf!r}"
        )
    if model.ddf == "kenward-roger" and not model.reml:
        raise InvalidParameterError(
            "the `ddf` parameter of LinearMixedModel: Kenward-Roger df are defined for REML "
            "fits only; got ddf='kenward-roger' with reml=False (use ddf='satterthwaite' or "
            "reml=True)"
        )
    if (
        isinstance(model.max_evals, bool)
        or not isinstance(model.max_evals, int | np.integer)
        or model.max_evals < 1
    ):
        raise InvalidParameterError(
            "the `max_evals` parameter of LinearMixedModel must be a positive int; "
            f"got {model.max_evals!r}"
        )
    check_unit(model.tol, name="tol", where="LinearMixedModel")
    check_unit(model.ci_level, name="ci_level", where="LinearMixedModel")


class LinearMixedModel(_Predictions, _Summaries):
    """Linear mixed model with lme4 formulas, fitted by REML or ML.

    Parameters
    ----------
    formula : str
        lme4 syntax, e.g. ``"Reaction ~ Days + (Days | Subject)"``; see
        :func:`models.formula.parse_formula` for ``(0 + x | g)``, ``||``, ``g1/g2`` and crossed
        terms. The fixed part goes through formulaic, whose term names appear in the results.
    reml : bool, default True
        Restricted maximum likelihood (``False``: maximum likelihood).
    ddf : {"satterthwaite", "kenward-roger"}, default "satterthwaite"
        Denominator degrees of freedom of the fixed-effect t tests. ``"kenward-roger"`` also
        replaces the covariance of the fixed effects by the Kenward-Roger adjusted one (the
        standard errors grow); REML fits only, at most 5,000 observations (dense ``n x n``).
    optimizer : {"auto", "cobyqa", "powell", "nelder-mead"}, default "auto"
        mixedlm's optimizer for the covariance parameters: ``"auto"`` is L-BFGS-B with exact
        gradients, stopped once the gradient is within its rounding noise (``1e-7 n`` per
        component); a fit it leaves unconverged or with a correlated block at the boundary is
        redone from the start by NLopt's BOBYQA (lme4's optimizer), and the lower deviance is
        kept. The others are derivative-free.
    max_evals : int, default 10000
        Iteration budget of the optimizer; exhausting it flags the fit as not converged.
    tol : float, default 1e-8
        Parameter tolerance of the derivative-free optimizers (``"auto"`` uses its own tight
        tolerances).
    ci_level : float, default 0.95
        Level of the fixed-effect confidence intervals.

    Attributes
    ----------
    design_ : Design
        Design matrices (:func:`models.formula.build_design`).
    n_obs_ : int
        Observations used.
    n_dropped_ : int
        Rows left out for missing values.
    groups_ : dict
        ``{grouping factor: number of levels}``.
    fixed_ : pandas.DataFrame
        ``term, estimate, se, df, statistic, p_value, ci_low, ci_high``; df are Satterthwaite's
        (or Kenward-Roger's, with the adjusted ``se``), ``statistic`` is ``t``, p-values
        two-sided, intervals ``estimate +- t(df) * se``. Satterthwaite's df are computed on
        first access (the Hessian of the deviance they need costs about as much as the fit on
        large data); a negative eigenvalue of that Hessian is warned about then.
    beta_ : pandas.Series
        Fixed effects by term.
    vcov_ : pandas.DataFrame
        Covariance matrix of the fixed effects.
    random_ : pandas.DataFrame
        ``group, term, variance, sd``, ending with the residual row (``group="Residual"``).
    random_corr_ : pandas.DataFrame
        ``group, term1, term2, covariance, corr``.
    theta_ : numpy.ndarray
        Relative covariance factors (lme4's ``theta``), blocks in formula order.
    sigma_ : float
        Residual standard deviation.
    loglik_ : float
        Log-likelihood (the REML log-likelihood for REML fits, as lme4's ``logLik``).
    reml_criterion_ : float
        ``-2`` REML log-likelihood (NaN for ML fits).
    deviance_ : float
        ``-2 loglik_``.
    aic_, bic_ : float
        From ``loglik_`` with ``npar_`` parameters.
    npar_ : int
        Fixed effects + covariance parameters + residual variance.
    converged_ : bool
        Whether the optimizer met its criteria (see ``convergence_message_``).
    convergence_message_ : str
        The optimizer's report.
    singular_ : bool
        A variance at 0 or a correlation at +-1 (lme4's ``isSingular``).
    nfev_ : int
        Deviance evaluations used by the optimizer (both stages when ``"auto"`` redoes a fit
        with BOBYQA).
    engine_result_ : mixedlm.LmerResult
        The fit as mixedlm returned it, for what this class does not wrap (profile intervals,
        parametric bootstrap). Its names are the generated ones (``x0``, ``z0``, ``g0``, ...)
        in the order of ``design_``.
    fitted_, residuals_ : pandas.Series
        Conditional fitted values ``X beta + Z b`` and ``y - fitted``, indexed like the rows used.
    ranef_ : pandas.DataFrame
        Conditional modes: ``group, term, level, estimate, cond_var`` (``cond_var`` as lme4's
        ``condVar``: the conditional variance given the estimated parameters).
    seconds_ : float
        Wall-clock time of ``fit`` (the fixed-effect table is built later, on first access).
    meta_ : dict
        Provenance: package version, options, rows used and dropped.
    smooth_ : models.lmm._smooth.SmoothFit or None
        For a formula with smooth terms, fitted as gamm4 fits them: ``s(x)`` (mgcv's thin
        plate regression spline, the default), ``s(x, bs="cr")`` (cubic regression spline),
        ``k`` from 4 to 20 (default 10), any number of them, and ``s(x, by=f)`` for a text or
        categorical ``f`` whose main effect is in the formula (one smooth per level). Each
        smooth (each level) is its own random-effect block with its own variance and a fixed
        null-space column. ``s(x, f, bs="fs", xt="cr")`` is a factor smooth, a cubic
        regression spline per level of ``f`` shrunk to zero, as gamm4 fits it: three
        variances shared by all levels (the wiggly part and each of two null-space
        directions; :mod:`models.lmm._smooth_fs`), no fixed column, and no other random
        effect needed; mgcv's default thin plate base for it is refused (its null-space
        directions are rounding noise in gamm4). ``smooth_.smooths`` holds one
        :class:`~models.lmm._smooth.FittedSmooth` per smooth (label as mgcv writes it, e.g.
        ``s(x)`` or ``s(x):fa``; variance, smoothing parameter, edf), ``coef``, ``Vp`` and
        ``edf_coef`` are ``fit$gam``'s, and ``curve(x, term=...)`` is one smooth's curve with
        pointwise intervals. None for a model without smooths. For such a fit ``fixed_`` is
        ``summary(fit$gam)$p.table`` (the parametric coefficients, the smooths' linear parts
        not among them; ``t`` tests on ``n - sum(edf)`` df), ``vcov_`` their block of ``Vp``,
        ``random_`` has one ``smooth`` row per smooth (a factor smooth ``s(x,f)`` three,
        ``s(x,f)1`` to ``s(x,f)3`` as mgcv names their smoothing parameters),
        ``fitted_``/``residuals_`` are conditional on all random effects (the smooths'
        included), ``npar_``/``aic_``/``bic_`` are ``fit$mer``'s and ``predict`` is
        ``predict(fit$gam, newdata)``: population-level but for the factor smooths' curves.
        ``ranef_``, ``icc``, ``refit``, ``simulate`` and ``lrt`` raise InvalidParameterError
        naming what the model offers. :meth:`smooth_linearity_test` tests a smooth against
        its straight line (its variance against zero: restricted likelihood ratio, exact
        null distribution simulated as RLRsim's ``exactRLRT``; REML fits).
    smooth_table_ : pandas.DataFrame
        Only for a model with smooth terms: ``term, edf, ref_df, F, p_value``, one row per
        smooth, as ``summary(fit$gam)$s.table`` (Wood's 2013 test;
        :mod:`models.lmm._smooth_summary`; a factor smooth's row is mgcv's test of it as a
        random effect).

    Notes
    -----
    The formula is parsed and checked here (:func:`models.formula.parse_formula`) and evaluated
    by :func:`models.formula.build_design`; mixedlm receives only the numeric design columns
    under generated names and a formula rebuilt from them (``y ~ 0 + x0 + x1 + (0 + z0 + z1 |
    g0)``), never the user's text. mixedlm minimizes lme4's profiled deviance: with
    ``b = Lambda_theta u``, for ML ``log|L|^2 + n (1 + log(2 pi r^2 / n))`` and for REML
    ``log|L|^2 + log|R_X|^2 + (n - p)(1 + log(2 pi r^2 / (n - p)))``, where
    ``L L' = Lambda' Z' Z Lambda + I`` and ``r^2`` is the penalized residual sum of squares
    (Bates et al. 2015, eqs. 34 and 41).

    The Satterthwaite df of a contrast ``l`` is ``2 (l' C l)^2 / (g' A g)`` with ``A`` twice the
    inverse Hessian of the deviance in ``(theta, sigma)`` and ``g`` the gradient of ``l' C l``,
    as lmerTest computes it (:mod:`models.lmm._satterthwaite`, on mixedlm's deviance components;
    mixedlm's own df profile ``sigma`` out and differ from lmerTest's for ML fits). The
    Kenward-Roger covariance and df follow pbkrtest's ``vcovAdj`` and ``Lb_ddf``
    (:mod:`models.lmm._kenward_roger`; mixedlm 1.3's ``kenward_roger_df`` returns Satterthwaite's).

    Validated against ``lme4::lmer`` 1.1-31, ``lmerTest`` 3.1-3 and ``pbkrtest`` 0.5.2
    (R 4.2.2) on sleepstudy (correlated, ``||`` and intercept-only), Orthodont (``age * Sex``),
    Riesby by ML with missing weeks, and simulated crossed and nested designs: fixed effects to
    1e-6 relative, standard errors to 1e-5, variance components to 1e-4, log-likelihood to 1e-6
    and df to 1e-3 (``tests/models/lmm/test_lmm_reference.py``, R script
    ``tests/models/reference/lmm.R``); Kenward-Roger standard errors and df to 1e-6
    (``tests/models/lmm/test_lmm_kr.py``, ``tests/models/reference/lmm_kr.R``).

    References
    ----------
    Bates D, Maechler M, Bolker B, Walker S (2015). Fitting linear mixed-effects models using
    lme4. Journal of Statistical Software 67(1), 1-48.
    Kuznetsova A, Brockhoff PB, Christensen RHB (2017). lmerTest package: tests in linear mixed
    effects models. Journal of Statistical Software 82(13), 1-26.
    Kenward MG, Roger JH (1997). Small sample inference for fixed effects from restricted
    maximum likelihood. Biometrics 53(3), 983-997.
    Halekoh U, Hojsgaard S (2014). A Kenward-Roger approximation and parametric bootstrap
    methods for tests in linear mixed models - the R package pbkrtest. Journal of Statistical
    Software 59(9), 1-32.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from models.lmm import LinearMixedModel
    >>> rng = np.random.default_rng(1)
    >>> g = np.repeat(np.arange(20), 5)
    >>> x = np.tile(np.arange(5.0), 20)
    >>> y = 1 + 0.5 * x + rng.normal(0, 1, 20)[g] + rng.normal(0, 0.5, 100)
    >>> m = LinearMixedModel("y ~ x + (1 | g)").fit(pd.DataFrame({"y": y, "x": x, "g": g}))
    >>> m.fixed_[["term", "estimate", "df"]]
            term  estimate         df
    0  Intercept  0.94...  30.08...
    1          x  0.52...  79.00...
    >>> m.icc()
      group  variance       icc
    0     g  0.27...  0.56...
    """

    def __init__(
        self,
        formula: str,
        *,
        reml: bool = True,
        ddf: Literal["satterthwaite", "kenward-roger"] = "satterthwaite",
        optimizer: Literal["auto", "cobyqa", "powell", "nelder-mead"] = "auto",
        max_evals: int = 10_000,
        tol: float = 1e-8,
        ci_level: float = 0.95,
    ) -> None:
        self.formula = formula
        self.reml = reml
        self.ddf = ddf
        self.optimizer = optimizer
        self.max_evals = max_evals
        self.tol = tol
        self.ci_level = ci_level

    def __repr__(self) -> str:
        return f"LinearMixedModel({self.formula!r}, reml={self.reml})"

    # -----------------------------------------------------------------------------------------

    def fit(self, data: pd.DataFrame, *, start: Any = None) -> LinearMixedModel:
        """Fit the model to ``data``.

        Parameters
        ----------
        data : pandas.DataFrame
            One row per observation with every column the formula uses. Rows with a missing
            value in a used column are left out (counted in ``n_dropped_``). Not modified.
        start : array-like, optional
            The optimizer's first relative covariance factors (lme4's ``start``: ``theta`` as
            in :attr:`theta_`, blocks in formula order, each block's lower triangle column by
            column). A start near the optimum saves evaluations; the optimum sought is the
            same. None (default): lme4's start (identity factors). Not for smooth terms.

        Returns
        -------
        LinearMixedModel
            ``self``, with the fitted attributes set.

        Raises
        ------
        InvalidParameterError
            For invalid constructor options, a ``data`` that is not a DataFrame, or a
            ``start`` of the wrong length, with a missing, infinite or negative diagonal
            entry, or given with a smooth term.
        FormulaError
            When the formula cannot be parsed or evaluated, has no random term, the fixed
            effects are rank deficient, or a grouping factor has fewer than 2 levels or as many
            levels as rows.
        ConvergenceError
            When mixedlm cannot fit the model (for example a response that does not vary);
            its message, in the formula's names, is chained.

        Warns
        -----
        ConvergenceWarning
            When the optimizer stops without meeting its criteria.
        SingularFitWarning
            When a variance is estimated at 0 or a correlation at +-1.
        """
        theta_start, start = start, time.perf_counter()
        _check_params(self)
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                "the `data` parameter of LinearMixedModel.fit must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        rest, smooths = split_smooth(self.formula)
        if smooths and theta_start is not None:
            raise InvalidParameterError(
                "the `start` parameter of LinearMixedModel.fit is not taken with smooth terms"
            )
        if smooths:
            return fit_smooth_model(self, data, rest, smooths, start)
        spec = parse_formula(self.formula)
        design = build_design(spec, data)
        self._fit_design(design, start=start, stacklevel=4, theta_start=theta_start)
        self._predictors = predictor_frame(design, data)  # the reference grid of emmeans()
        return self

    def _fit_design(
        self,
        design: Design,
        *,
        start: float | None = None,
        stacklevel: int = 3,
        theta_start: Any = None,
    ) -> LinearMixedModel:
        """Fit to an evaluated design (what ``fit`` does after the formula layer).

        Used by simulation-based power analysis for designs built from resampled or generated
        rows, whose group codes are set directly rather than read from a data frame.
        """
        start = time.perf_counter() if start is None else start
        _check_params(self)
        check_design(design, where="LinearMixedModel.fit")
        n = design.n_obs
        if self.ddf == "kenward-roger" and n > MAX_KR_OBS:
            raise InvalidParameterError(
                f"LinearMixedModel.fit: Kenward-Roger df need dense {n} x {n} matrices; they "
                f"are computed for at most {MAX_KR_OBS} observations. Use "
                "ddf='satterthwaite' (the default) for this data set."
            )
        inp = engine.engine_input(design)
        first = None if theta_start is None else _theta_start(theta_start, inp.block_sizes)
        ctrl = engine.control(
            optimizer=self.optimizer, max_evals=int(self.max_evals), tol=float(self.tol)
        )
        try:
            result, messages, evals = engine.fit(inp, reml=bool(self.reml), ctrl=ctrl, start=first)
        except engine.EngineFailure as err:
            raise ConvergenceError(
                f"LinearMixedModel.fit: mixedlm could not fit {self.formula!r}: {err}. Check "
                "that the response varies within groups and simplify the random effects."
            ) from err
        self._set_fit(design, inp, result, messages, evals, start, stacklevel=stacklevel)
        return self

    def refit(self, response: np.ndarray | pd.Series) -> LinearMixedModel:
        """Fit the same model to a new response, reusing the design matrices.

        This is what simulation-based power analysis and parametric bootstraps do many times:
        the formula is not parsed and the design not rebuilt, and the optimizer starts from
        this fit's covariance parameters.

        Parameters
        ----------
        response : array-like or pandas.Series
            One value per row used in the fit (``n_obs_`` values, in the order of
            ``design_.rows``; a Series is aligned on that index).

        Returns
        -------
        LinearMixedModel
            A new fitted model with the same options; ``self`` is unchanged.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            When the response has the wrong length, is not aligned with the rows used, or
            holds missing or infinite values.
        ConvergenceError
            When mixedlm cannot fit the model to the new response.

        Warns
        -----
        ConvergenceWarning, SingularFitWarning
            As :meth:`fit`.
        """
        start = time.perf_counter()
        self._check_no_smooth("refit")
        if isinstance(response, pd.Series):
            if not response.index.equals(self.design_.rows):
                raise InvalidParameterError(
                    "the `response` parameter of LinearMixedModel.refit must be indexed like "
                    "the rows used in the fit (design_.rows)"
                )
            response = response.to_numpy()
        y = np.asarray(response, dtype=float)
        if y.shape != (self.n_obs_,) or not np.all(np.isfinite(y)):
            raise InvalidParameterError(
                "the `response` parameter of LinearMixedModel.refit must hold "
                f"{self.n_obs_} finite values (one per row used); got shape {y.shape}"
                + ("" if y.shape != (self.n_obs_,) else " with missing or infinite values")
            )
        try:
            result, messages, evals = engine.refit(
                self._input, self._result, y, max_evals=int(self.max_evals)
            )
        except engine.EngineFailure as err:
            raise ConvergenceError(
                f"LinearMixedModel.refit: mixedlm could not fit {self.formula!r} to the new "
                f"response: {err}"
            ) from err
        design = Design(
            spec=self.design_.spec,
            y=y,
            X=self.design_.X,
            random=self.design_.random,
            rows=self.design_.rows,
            n_dropped=self.design_.n_dropped,
            _fixed_spec=self.design_._fixed_spec,
        )
        new = LinearMixedModel(
            self.formula, **{k: v for k, v in self.get_params().items() if k != "formula"}
        )
        new._set_fit(design, self._input, result, messages, evals, start)
        new._predictors = getattr(self, "_predictors", None)
        return new

    def simulate(
        self, n_sim: int = 1, *, seed: int | np.random.Generator | None = None
    ) -> pd.DataFrame:
        """Draw new responses from the fitted model (new random effects and residuals).

        With :meth:`refit` this is a parametric bootstrap or one step of a simulation-based
        power analysis.

        Parameters
        ----------
        n_sim : int, default 1
            Number of simulated response vectors.
        seed : int or numpy.random.Generator, optional
            Source of randomness; the same int gives the same draws.

        Returns
        -------
        pandas.DataFrame
            One column per simulation (``sim_1``, ``sim_2``, ...), indexed like the rows used
            (``design_.rows``), so each column can be passed to :meth:`refit`.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            For an ``n_sim`` that is not a positive int or a ``seed`` that is neither an int nor
            a Generator.

        Notes
        -----
        ``y* = X beta + Z b* + e*`` with ``b* ~ N(0, G)`` and ``e* ~ N(0, sigma^2)`` at the
        estimates, as ``simulate.merMod`` of lme4 (mixedlm's ``simulate``).
        """
        self._check_no_smooth("simulate")
        if isinstance(n_sim, bool) or not isinstance(n_sim, int | np.integer) or n_sim < 1:
            raise InvalidParameterError(
                "the `n_sim` parameter of LinearMixedModel.simulate must be a positive int; "
                f"got {n_sim!r}"
            )
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int | np.integer | np.random.Generator)
        ):
            raise InvalidParameterError(
                "the `seed` parameter of LinearMixedModel.simulate must be an int or a "
                f"numpy.random.Generator; got {type(seed).__name__}"
            )
        with engine.one_blas_thread():
            draws = np.asarray(self._result.simulate(nsim=int(n_sim), seed=seed), dtype=float)
        draws = draws.reshape(self.n_obs_, int(n_sim))
        return pd.DataFrame(
            draws, index=self.design_.rows, columns=[f"sim_{i + 1}" for i in range(int(n_sim))]
        )

    def _set_fit(
        self,
        design: Design,
        inp: engine.EngineInput,
        result: Any,
        messages: list[str],
        evals: int,
        start: float,
        stacklevel: int = 3,
    ) -> None:
        X = design.X.to_numpy()
        reml = bool(self.reml)
        n, p = X.shape
        self._result = result
        self.engine_result_ = result
        self.smooth_ = None
        self.__dict__.pop("smooth_table_", None)
        self._input = inp
        self._ranef_cache: pd.DataFrame | None = None
        orders = [engine.level_order(result, i, b.n_levels) for i, b in enumerate(design.random)]
        self._orders = orders
        self._b_terms = engine.block_effects(result, inp.block_sizes, orders)
        theta = np.asarray(result.theta, dtype=float)
        sigma = float(result.sigma)
        self._Ts = _theta_blocks(theta, inp.block_sizes)
        self.design_ = design
        self.n_obs_ = int(n)
        self.n_dropped_ = int(design.n_dropped)
        self.groups_ = {b.group: int(b.n_levels) for b in design.random}
        self.theta_ = theta
        self.sigma_ = sigma
        self.nfev_ = int(evals)
        self.converged_ = bool(result.converged)
        self.convergence_message_ = str(result.message)
        if messages:
            self.convergence_message_ += " | " + "; ".join(messages)
        self.singular_ = bool(any(np.any(np.diag(T) < SINGULAR_TOL) for T in self._Ts))
        self.npar_ = int(p + len(theta) + 1)
        self.loglik_ = float(result.logLik().value)
        crit = -2.0 * self.loglik_
        self.deviance_ = crit
        self.reml_criterion_ = crit if reml else float("nan")
        self.aic_ = float(crit + 2 * self.npar_)
        self.bic_ = float(crit + self.npar_ * np.log(n))
        names = list(design.X.columns)
        beta = np.asarray(result.beta, dtype=float)
        self.beta_ = pd.Series(beta, index=names, name="estimate")
        self._lazy: dict[str, Any] = {}  # tables built on first access (random_, vcov_, ...)
        if self.ddf == "kenward-roger":
            kr = self._kenward_roger()
            self._lazy["cov_beta"] = kr.vcov
            self._lazy["fixed_"] = self._fixed_table(beta, kr.vcov, kr.df, names)
        self._fitted_values = np.asarray(result.fitted(), dtype=float)
        self.seconds_ = float(time.perf_counter() - start)
        self.meta_ = {
            "package_version": __version__,
            "engine": "lmm",
            "backend": f"mixedlm {_mixedlm_version()}",
            "params": self.get_params(),
            "n_used": self.n_obs_,
            "n_excluded": self.n_dropped_,
            "nfev": self.nfev_,
            "optimizer": str(result.optimizer),
        }
        if not self.converged_:
            warnings.warn(
                f"LinearMixedModel.fit did not converge for {self.formula!r}: "
                f"{self.convergence_message_}. Results are at the best point found; try another "
                "optimizer, a larger max_evals, or a simpler random-effects structure.",
                ConvergenceWarning,
                stacklevel=stacklevel,
            )
        if self.singular_:
            warnings.warn(
                f"boundary (singular) fit for {self.formula!r}: "
                f"{self._singular_description()}. The random-effects structure is likely "
                "too complex for the data.",
                SingularFitWarning,
                stacklevel=stacklevel,
            )

    # -----------------------------------------------------------------------------------------
    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "theta_"):
            raise NotFittedError(
                f"LinearMixedModel.{method} needs a fitted model; call .fit(data) first"
            )

    def _check_no_smooth(self, name: str) -> None:
        """Refuse what a fit with a smooth term does not offer yet, naming what it does."""
        self._check_fitted(name)
        fit = getattr(self, "smooth_", None)
        if fit is not None:
            raise unavailable(name, fit.labels)

    def _fixed_table(
        self, beta: np.ndarray, cov_beta: np.ndarray, df: np.ndarray, names: list[str]
    ) -> pd.DataFrame:
        se = np.sqrt(np.diag(cov_beta))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = beta / se
        # the t distribution's ufuncs (scipy.stats.t gives the same numbers, 50x slower)
        p = 2.0 * special.stdtr(df, -np.abs(t))
        q = special.stdtrit(df, 0.5 + float(self.ci_level) / 2.0)
        columns = {
            "term": np.array(names, dtype=object),
            "estimate": beta,
            "se": se,
            "df": np.asarray(df, dtype=float),
            "statistic": t,
            "p_value": p,
            "ci_low": beta - q * se,
            "ci_high": beta + q * se,
        }
        # the dict is in FIXED_COLUMNS order; passing `columns=` would cost 4x the time
        return pd.DataFrame(columns, copy=False)

    def _random_tables(self, Ts: list[np.ndarray], sigma: float):
        return random_tables(self.design_.random, Ts, sigma, residual=True)

    def _singular_description(self) -> str:
        return singular_description(self.design_.random, self._Ts, SINGULAR_TOL)

    # -----------------------------------------------------------------------------------------
    # -----------------------------------------------------------------------------------------
    # tables built on first access: most refits (power, bootstraps) never read them

    def _cached(self, name: str, build: Any) -> Any:
        self._check_fitted(name)
        if name not in self._lazy:
            self._lazy[name] = build()
        return self._lazy[name]

    @property
    def fixed_(self) -> pd.DataFrame:
        """Fixed effects with standard errors, df, t tests and intervals (see the class)."""
        return self._cached("fixed_", self._satterthwaite_table)

    def _satterthwaite_table(self) -> pd.DataFrame:
        """Build the fixed-effect table with Satterthwaite df (on first access).

        The df need the Hessian of the deviance in the variance parameters (41 deviance
        evaluations for four of them), as much as the fit itself on large data; a fit whose
        table is never read (an ML refit for a likelihood-ratio test, a simulation refit) does
        not pay for it.
        """
        p = self.design_.X.shape[1]
        info = self._varpar()
        self._lazy.setdefault("cov_beta", info.cov_beta)
        df = satterthwaite_df(info, np.eye(p)) if p else np.zeros(0)
        negative = info.negative_eigenvalues
        if self.converged_ and not self.singular_ and negative.size:
            warnings.warn(
                f"the Hessian of the deviance of {self.formula!r} has negative eigenvalue(s) "
                f"{negative.tolist()}: the fit may not be at a minimum; "
                "Satterthwaite df use the positive part only",
                ConvergenceWarning,
                stacklevel=4,
            )
        names = list(self.design_.X.columns)
        return self._fixed_table(self.beta_.to_numpy(), self._lazy["cov_beta"], df, names)

    def _varpar(self) -> Any:
        """Return lmerTest's derivatives in the variance parameters (computed once)."""
        if "varpar" not in self._lazy:
            n, p = self.design_.X.shape
            with engine.one_blas_thread():
                self._lazy["varpar"] = varpar_covariance(
                    engine.deviance_components(self._result),
                    self.theta_,
                    self.sigma_,
                    n=n,
                    p=p,
                    reml=bool(self.reml),
                )
        return self._lazy["varpar"]

    def _kenward_roger(self) -> Any:
        """Return pbkrtest's adjusted covariance and its pieces for df (computed once)."""
        if "kr" not in self._lazy:
            s2 = self.sigma_**2
            blocks = [
                (b.codes, b.Z, b.n_levels, s2 * (T @ T.T))
                for b, T in zip(self.design_.random, self._Ts, strict=True)
            ]
            self._lazy["kr"] = kenward_roger(self.design_.X.to_numpy(), blocks, s2)
        return self._lazy["kr"]

    def _cov_beta(self) -> np.ndarray:
        """``Cov(beta_hat)``: from the fixed-effect table when built, else one evaluation."""
        if "cov_beta" not in self._lazy:
            p = self.design_.X.shape[1]
            with engine.one_blas_thread():
                comps = engine.deviance_components(self._result)(self.theta_)
            self._lazy["cov_beta"] = self.sigma_**2 * comps[3:].reshape(p, p)
        return self._lazy["cov_beta"]

    @property
    def random_(self) -> pd.DataFrame:
        """Variance components: ``group, term, variance, sd`` (the residual last)."""
        return self._cached("random_", lambda: self._random_tables(self._Ts, self.sigma_))[0]

    @property
    def random_corr_(self) -> pd.DataFrame:
        """Covariances and correlations of the random effects within each block."""
        return self._cached("random_", lambda: self._random_tables(self._Ts, self.sigma_))[1]

    @property
    def vcov_(self) -> pd.DataFrame:
        """Covariance matrix of the fixed effects, labelled by term."""
        names = list(self.design_.X.columns)
        return self._cached(
            "vcov_", lambda: pd.DataFrame(self._cov_beta(), index=names, columns=names)
        )

    @property
    def fitted_(self) -> pd.Series:
        """Fitted values (fixed plus conditional modes), indexed like the rows used."""
        return self._cached(
            "fitted_",
            lambda: pd.Series(self._fitted_values, index=self.design_.rows, name="fitted"),
        )

    @property
    def residuals_(self) -> pd.Series:
        """Response minus fitted value, indexed like the rows used."""
        return self._cached(
            "residuals_",
            lambda: pd.Series(
                self.design_.y - self._fitted_values, index=self.design_.rows, name="residual"
            ),
        )

    @property
    def ranef_(self) -> pd.DataFrame:
        """Conditional modes and conditional variances (computed on first access)."""
        self._check_no_smooth("ranef_")
        if self._ranef_cache is None:
            covs = engine.conditional_variances(self._result, self._input.block_sizes, self._orders)
            frames = []
            for block, b, c in zip(self.design_.random, self._b_terms, covs, strict=True):
                for i, term in enumerate(block.terms):
                    frames.append(
                        pd.DataFrame(
                            {
                                "group": block.group,
                                "term": term,
                                "level": block.levels.to_numpy(dtype=object),
                                "estimate": b[:, i],
                                "cond_var": c[:, i],
                            }
                        )
                    )
            self._ranef_cache = pd.concat(frames, ignore_index=True)
        return self._ranef_cache

    def r2(self) -> MixedR2:
        """R-squared: Rights & Sterba's (2019) decomposition and Nakagawa's marginal/conditional.

        Returns
        -------
        MixedR2
            ``to_dict()["rights_sterba"]`` (``total``, ``within``, ``between``, keyed by
            r2mlm's names ``f1, f2, v, m, f, fv, fvm``), ``to_dict()["nakagawa"]``
            (``marginal``, ``conditional``); ``to_frame()`` is ``decomposition, measure,
            value``. Formulas and conventions in :mod:`models.lmm._r2`.

        Warns
        -----
        CentringWarning
            When a predictor varies both within and between clusters: the within/between
            split is then left out and the result's ``note`` says how to centre.
        """
        from models.lmm._r2 import mixed_r2

        self._check_no_smooth("r2")
        return mixed_r2(self)

    def emmeans(
        self,
        specs: str | list[str],
        *,
        by: str | list[str] | None = None,
        ddf: Literal["satterthwaite", "kenward-roger"] | None = None,
        at: dict[str, Any] | None = None,
        ci_level: float = 0.95,
    ) -> MarginalMeans:
        """Estimated marginal means on emmeans' reference grid, with df and intervals.

        Parameters
        ----------
        specs : str or list of str
            Predictors whose means are estimated (factors, or covariates given in ``at``).
        by : str or list of str, optional
            Predictors whose levels (or ``at`` values) split the means into groups.
        ddf : {"satterthwaite", "kenward-roger"}, optional
            Degrees of freedom (and, for Kenward-Roger, the adjusted covariance); default the
            model's ``ddf``.
        at : dict, optional
            ``{predictor: values}`` replacing a covariate's mean or a factor's levels.
        ci_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        MarginalMeans
            ``to_frame()``: one column per predictor of ``specs`` and ``by``, then ``emmean,
            se, df, ci_low, ci_high``; ``.pairs()`` and ``.contrasts()`` compare the means.
            Conventions in :mod:`models.lmm._emmeans`.
        """
        self._check_no_smooth("emmeans")
        return marginal_means(
            self, specs, by=by, ddf=self.ddf if ddf is None else ddf, at=at, ci_level=ci_level
        )

    def lrt(self, other: LinearMixedModel) -> LikelihoodRatioTest:
        """Likelihood-ratio test against another fit of nested form; see :func:`lrt`."""
        return lrt(self, other)

    def smooth_linearity_test(
        self,
        term: str | int | None = None,
        *,
        n_sim: int = 10_000,
        seed: int | np.random.Generator | None = None,
    ) -> SmoothLinearityTest:
        """Test whether a smooth is curved: its random-effect variance against zero.

        The straight-line model is this model with the smooth's random effect removed (its
        linear part, a fixed effect, stays). The restricted likelihood-ratio statistic's p-value
        comes from its exact finite-sample null distribution (Crainiceanu & Ruppert 2004),
        simulated as ``RLRsim::exactRLRT`` does (:mod:`models.lmm._smooth_linearity`).

        Parameters
        ----------
        term : str or int, optional
            The smooth, by label (``"s(x)"``, ``"s(x):fa"``) or position; may be left out when
            the model has one.
        n_sim : int, default 10000
            Simulated values of the null distribution (at least 100).
        seed : int or numpy.random.Generator, optional
            Source of randomness of that simulation; the same int gives the same p-value.

        Returns
        -------
        SmoothLinearityTest
            ``term, statistic, p_value, method``, the two REML log-likelihoods and the share
            of the null distribution at zero.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            For a model without smooth terms or fitted by ML, an unknown ``term``, or a bad
            ``n_sim`` or ``seed``.
        ConvergenceError
            When the model without the smooth's random effect cannot be fitted.
        """
        from models.lmm._smooth_linearity import linearity_test

        self._check_fitted("smooth_linearity_test")
        if getattr(self, "smooth_", None) is None:
            raise InvalidParameterError(
                "LinearMixedModel.smooth_linearity_test needs a model with a smooth term, "
                f"e.g. 'y ~ s(x) + (1 | g)'; {self.formula!r} has none"
            )
        return linearity_test(self, term, n_sim=n_sim, seed=seed)


def lrt(m0: LinearMixedModel, m1: LinearMixedModel) -> LikelihoodRatioTest:
    """Likelihood-ratio test between two nested linear mixed models.

    Parameters
    ----------
    m0, m1 : LinearMixedModel
        Fitted models on the same rows; the one with fewer parameters is taken as the null.

    Returns
    -------
    LikelihoodRatioTest
        ``table`` (``model, formula, npar, loglik, aic, bic, deviance, statistic, df,
        p_value``), ``statistic``, ``df``, ``p_value``, ``refit_ml``, ``criterion``.

    Raises
    ------
    InvalidParameterError
        When an argument is not a fitted LinearMixedModel, the fits use different rows, or
        both have the same number of parameters.

    Notes
    -----
    When the fixed effects differ, REML likelihoods are not comparable, so REML fits are refitted
    by ML first (``anova.merMod`` with ``refit = TRUE``). With identical fixed effects two REML
    fits are compared by their REML likelihoods (``refit = FALSE``); a REML and an ML fit are
    both compared by ML. The chi-square reference is conservative for a variance tested on its
    boundary (Self & Liang 1987). Validated against ``anova()`` of lme4 1.1-31.
    """
    for name, m in (("m0", m0), ("m1", m1)):
        if not isinstance(m, LinearMixedModel) or not hasattr(m, "theta_"):
            raise InvalidParameterError(
                f"the `{name}` parameter of lrt must be a fitted LinearMixedModel; "
                f"got {type(m).__name__}"
            )
        m._check_no_smooth("lrt")
    return likelihood_ratio(m0, m1)


@functools.cache
def _mixedlm_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mixedlm")
    except PackageNotFoundError:
        return "unknown"


def _theta_start(start: Any, sizes: tuple[int, ...]) -> np.ndarray:
    """Check a user's starting ``theta`` against the blocks; return it as floats."""
    try:
        theta = np.asarray(start, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"the `start` parameter of LinearMixedModel.fit must be numbers; got {start!r}"
        ) from err
    n = sum(k * (k + 1) // 2 for k in sizes)
    if theta.shape != (n,):
        raise InvalidParameterError(
            f"the `start` parameter of LinearMixedModel.fit must hold {n} values (theta of "
            f"blocks of sizes {list(sizes)}); got shape {theta.shape}"
        )
    diagonal = theta[engine.diagonal_positions(sizes)]
    if not np.all(np.isfinite(theta)) or np.any(diagonal < 0):
        raise InvalidParameterError(
            "the `start` parameter of LinearMixedModel.fit must be finite with non-negative "
            f"diagonal entries; got {theta.tolist()}"
        )
    return theta


def _theta_blocks(theta: np.ndarray, sizes: tuple[int, ...]) -> list[np.ndarray]:
    """Lower-triangular relative covariance factors from lme4's column-major ``theta``."""
    out, offset = [], 0
    for k in sizes:
        rows, cols = lower_entries(k)
        T = np.zeros((k, k))
        m = len(rows)
        T[rows, cols] = theta[offset : offset + m]
        out.append(T)
        offset += m
    return out
