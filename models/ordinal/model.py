"""Cumulative link mixed models (ordinal regression with random effects) in lme4 syntax.

:class:`OrdinalMixedModel` fits ``P(Y <= j) = F(theta_j - X beta - Z b)`` with ``F`` the
logistic or normal distribution function, ``b ~ N(0, Sigma)`` per grouping factor, by maximum
likelihood with the Laplace approximation (any random-effects structure: correlated slopes,
crossed and nested factors) or adaptive Gauss-Hermite quadrature (one scalar grouping factor),
as ``ordinal::clmm`` does (Christensen 2019). The formula layer is the one
:class:`models.lmm.LinearMixedModel` uses; the likelihood engine is
:mod:`models.ordinal._laplace`.

The class holds the options, the checks, refits, the random-effect tables and predictions; the
estimation itself (optimiser, start values, storage) is in ``_fit`` and the summaries
and JSON in ``_summary``.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import numpy as np
import pandas as pd

import models.ordinal._laplace as engine
from models._checks import check_choice, check_design, check_int, check_unit
from models._errors import (
    FormulaError,
    InvalidParameterError,
    NotFittedError,
)
from models._refgrid import predictor_frame
from models._varcorr import random_tables, singular_description
from models.formula import RE_FORM_NONE, Design, build_design, parse_formula
from models.limits import ORDINAL_MAX_N_AGQ, check_count
from models.lmm import split_smooth
from models.lmm.engine import one_blas_thread
from models.ordinal._fit import (
    _WHERE,
    GRAD_TOL,
    SINGULAR_TOL,
    START_FLOOR,
    STEP_TOL,
    THRESHOLD_COLUMNS,
    _Estimation,
)
from models.ordinal._smooth import check_terms, smooth_design, smooth_results, smooth_rows
from models.ordinal._summary import DICT_KEYS, OrdinalModelSummary, _Summaries

__all__ = [
    "DICT_KEYS",
    "GRAD_TOL",
    "SINGULAR_TOL",
    "START_FLOOR",
    "STEP_TOL",
    "THRESHOLD_COLUMNS",
    "OrdinalMixedModel",
    "OrdinalModelSummary",
]


class OrdinalMixedModel(_Summaries, _Estimation):
    """Cumulative link mixed model (``ordinal::clmm``) with lme4 formulas.

    Parameters
    ----------
    formula : str
        lme4 syntax, e.g. ``"rating ~ temp + contact + (1 | judge)"``; the response holds the
        ordered categories (numbers, ordered by value, or a pandas ordered categorical). The
        fixed part has no intercept of its own: the thresholds take its place. Smooth
        terms ``s(x)`` or ``s(x, bs="cr", k=K)``, any number, each possibly ``by=`` a text
        factor whose main effect is in the formula (built as gamm4 builds them,
        :mod:`models.ordinal._smooth`), may join the formula, e.g.
        ``"rating ~ arm + s(week, by=arm) + s(age) + (1 | id)"``: each smooth (each level of
        a ``by`` factor) adds its null-space column as the fixed effect ``Xs(week):armAFx1``
        and its penalised part as one random-effect block with covariance ``sigma_s^2 I``,
        its own variance estimated by the Laplace likelihood with the other parameters.
        ``predict`` takes such a model; quadrature, ``refit``, ``emmeans`` and ``r2`` do not.
    link : {"logit", "probit"}, default "logit"
        ``F``: logistic (coefficients are log odds ratios) or standard normal.
    threshold : {"flexible", "equidistant"}, default "flexible"
        One free threshold per adjacent pair of categories, or ``theta_j = threshold.1 +
        (j - 1) spacing`` (as clm's ``"equidistant"``).
    n_agq : int, default 1
        1 for the Laplace approximation; more for adaptive Gauss-Hermite quadrature with that
        many nodes (clmm's ``nAGQ``), which needs a single scalar random-effects term such as
        ``(1 | g)``. At most :data:`~models.limits.ORDINAL_MAX_N_AGQ` (100): each
        likelihood evaluates every group at every node.
    start : {"lmm", "default"}, default "lmm"
        Starting values of the random-effect SDs: from a linear mixed model of the category
        numbers (the ratio of each SD to the residual SD, on the latent scale), or 1.
    max_iter : int, default 1000
        Iteration budget of the optimizer (L-BFGS-B on the exact gradient of the Laplace
        log-likelihood).
    ci_level : float, default 0.95
        Level of the Wald intervals.

    Attributes
    ----------
    design_ : Design
        Design matrices (:func:`models.formula.build_design`).
    categories_ : list
        The ordered categories of the response.
    n_obs_, n_dropped_ : int
        Observations used, rows left out for missing values.
    groups_ : dict
        ``{grouping factor: number of levels}``.
    thresholds_ : pandas.DataFrame
        ``term, estimate, se, statistic, ci_low, ci_high``; terms ``"1|2"``, ... as clmm names
        them (``threshold.1`` and ``spacing`` for equidistant thresholds).
    fixed_ : pandas.DataFrame
        ``term, estimate, se, df, statistic, p_value, ci_low, ci_high``: Wald ``z`` tests
        (``df`` is NaN), two-sided p-values, intervals ``estimate +- z * se``.
    beta_ : pandas.Series
        Fixed effects by term.
    vcov_ : pandas.DataFrame
        Covariance of thresholds and fixed effects (inverse observed information).
    random_ : pandas.DataFrame
        ``group, term, variance, sd`` on the latent scale (no residual row: the latent
        residual variance is fixed by the link, ``pi^2/3`` or 1).
    random_corr_ : pandas.DataFrame
        ``group, term1, term2, covariance, corr``.
    theta_ : numpy.ndarray
        Column-wise lower triangles of each block's Cholesky factor ``T`` (``T T'`` is the
        block's covariance).
    loglik_, aic_, bic_ : float
        Log-likelihood (Laplace or quadrature) and information criteria with ``npar_``.
    npar_ : int
        Thresholds + fixed effects + covariance parameters.
    converged_ : bool
        The optimizer met its criteria (or stopped because no step lowered the objective any
        more), the information matrix is positive definite and the
        largest absolute gradient is below ``GRAD_TOL`` (or the Newton step it implies below
        ``STEP_TOL``, which scales with the data: a log-likelihood of -110,000 has gradients
        of 1e-4 at its optimum).
    convergence_message_ : str
        When ``converged_`` is false, the criteria that failed with their values and bounds
        (``"max|grad| 3e-3 > 1e-4 and Newton step 2e-4 > 1e-5 (L-BFGS-B: ...)"``, see
        :func:`models.ordinal._fit.convergence_failure`); otherwise the optimizer's report.
    max_grad_ : float
        Largest absolute gradient of the log-likelihood at the estimate.
    cond_hessian_ : float
        Condition number of the observed information (clmm's ``cond.H``).
    singular_ : bool
        A variance at 0 or a correlation at +-1.
    nfev_ : int
        Likelihood evaluations of the optimizer.
    ranef_ : pandas.DataFrame
        Conditional modes ``group, term, level, estimate, cond_var``.
    smooth_ : models.ordinal._smooth.OrdinalSmoothFit or None
        For a formula with smooths: ``smooths`` (one per smooth and ``by`` level: label,
        variance and SD ``sigma_s``, edf, coefficients and their Bayesian covariance),
        ``component(term)`` and ``curve(x, term=None, level=0.95)`` on the latent scale with
        pointwise intervals; ``random_`` then has a ``smooth`` row per smooth. None otherwise.
    seconds_ : float
        Wall-clock time of ``fit``.
    meta_ : dict
        Provenance: package version, options, rows used and dropped.

    Notes
    -----
    The Laplace log-likelihood is maximized with its exact gradient (see
    :mod:`models.ordinal._laplace`); quadrature fits start from the Laplace estimate.
    Standard errors come from the observed information, the finite-difference Jacobian of the
    gradient at the estimate. Validated against ``ordinal::clmm`` 2022.11 (R 4.2.2) on
    ``wine`` (Laplace, 5 and 10 quadrature nodes, probit, equidistant thresholds), ``soup``
    (nested factors) and simulated crossed and random-slope designs
    (``tests/models/ordinal/test_ordinal_reference.py``, R script
    ``tests/models/reference/clmm.R``).

    References
    ----------
    Christensen RHB (2019). Cumulative link models for ordinal regression with the R package
    ordinal. https://cran.r-project.org/package=ordinal
    Agresti A (2010). Analysis of Ordinal Categorical Data, 2nd ed. Wiley.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from models.ordinal import OrdinalMixedModel
    >>> rng = np.random.default_rng(3)
    >>> g = np.repeat(np.arange(30), 10)
    >>> x = rng.normal(size=300)
    >>> latent = 0.8 * x + rng.normal(0, 1, 30)[g] + rng.logistic(size=300)
    >>> y = np.digitize(latent, [-1.5, 0, 1.5]) + 1
    >>> m = OrdinalMixedModel("y ~ x + (1 | g)").fit(pd.DataFrame({"y": y, "x": x, "g": g}))
    >>> m.fixed_[["term", "estimate", "se"]].round(2)
      term  estimate    se
    0    x      0.71  0.12
    """

    def __init__(
        self,
        formula: str,
        *,
        link: Literal["logit", "probit"] = "logit",
        threshold: Literal["flexible", "equidistant"] = "flexible",
        n_agq: int = 1,
        start: Literal["lmm", "default"] = "lmm",
        max_iter: int = 1000,
        ci_level: float = 0.95,
    ) -> None:
        self.formula = formula
        self.link = link
        self.threshold = threshold
        self.n_agq = n_agq
        self.start = start
        self.max_iter = max_iter
        self.ci_level = ci_level

    def __repr__(self) -> str:
        return f"OrdinalMixedModel({self.formula!r}, link={self.link!r})"

    # -----------------------------------------------------------------------------------------
    def fit(self, data: pd.DataFrame) -> OrdinalMixedModel:
        """Fit the model to ``data``.

        Parameters
        ----------
        data : pandas.DataFrame
            One row per observation; rows with a missing value in a used column are left out
            (counted in ``n_dropped_``). Not modified.

        Returns
        -------
        OrdinalMixedModel
            ``self``, fitted.

        Raises
        ------
        InvalidParameterError
            For invalid options or a ``data`` that is not a DataFrame.
        FormulaError
            When the formula cannot be evaluated, has no random term, aliased fixed effects,
            a grouping factor with fewer than 2 levels, a response with fewer than 2
            categories, or quadrature is asked for a structure other than one ``(1 | g)``.
        ConvergenceError
            When the likelihood cannot be evaluated at any usable point.

        Warns
        -----
        ConvergenceWarning
            When the optimizer stops without meeting its criteria, or the information matrix
            is not positive definite.
        SingularFitWarning
            When a variance is estimated at 0 or a correlation at +-1.
        """
        t0 = time.perf_counter()
        self._check_params()
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                f"the `data` parameter of {_WHERE}.fit must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        rest, terms = split_smooth(self.formula)
        used, self._smooth_columns = data, []
        if terms:
            if self.n_agq > 1:
                raise FormulaError(
                    f"{_WHERE}.fit: adaptive Gauss-Hermite quadrature (n_agq={self.n_agq}) is "
                    f"not offered with a smooth term ({terms[0].text}); use n_agq=1 (Laplace)"
                )
            self._smooth_columns = check_terms(terms, self.formula, data)
            used = smooth_rows(data, self._smooth_columns)
        spec = parse_formula(rest)
        frame, labels = _response_codes(used, spec.response)
        design = build_design(spec, frame)
        check_design(
            design,
            where=f"{_WHERE}.fit",
            fixed_only="use statsmodels' OrderedModel",
        )
        smooth, self._base_design = None, design
        if terms:
            parts, design, blocks = smooth_design(design, frame, terms, self.formula)
            smooth = (parts, blocks)
        self._fit_design(design, labels, t0, smooth=smooth)
        self._smooth_data = used.loc[design.rows, self._smooth_columns]
        self.n_dropped_ += len(data) - len(used)
        self._predictors = predictor_frame(design, data)  # the reference grid of emmeans()
        return self

    def _fit_design(
        self,
        design: Design,
        labels: list | None,
        t0: float,
        *,
        start: OrdinalMixedModel | None = None,
        stacklevel: int = 4,
        smooth: tuple | None = None,
    ) -> None:
        """Fit to an evaluated design; ``start``: a fit of the same design to start from.

        ``smooth``: the smooths' parts and their random blocks
        (:func:`models.ordinal._smooth.smooth_design`), blocks of their own after the design's.
        """
        y_values = design.y
        cats = np.unique(y_values)
        if cats.size < 2:
            raise FormulaError(
                f"{_WHERE}.fit: the response of {self.formula!r} has {cats.size} category in the "
                "rows used; an ordinal model needs at least 2"
            )
        X, names = _fixed_matrix(design)
        y = np.searchsorted(cats, y_values)
        blocks = [(b.group, b.codes, b.n_levels, b.Z) for b in design.random]
        extra = [] if smooth is None else smooth[1]
        scaled = range(len(blocks), len(blocks) + len(extra))
        st = engine.Structure(blocks + extra, scaled=scaled)
        if self.n_agq > 1 and not (len(design.random) == 1 and design.random[0].Z.shape[1] == 1):
            raise FormulaError(
                f"{_WHERE}.fit: adaptive Gauss-Hermite quadrature (n_agq={self.n_agq}) needs a "
                "single scalar random-effects term such as '(1 | g)'; "
                f"{self.formula!r} has {len(design.random)} block(s). Use n_agq=1 (Laplace)."
            )
        lk = engine.link(self.link)
        problem = engine.Problem(
            X, y, cats.size, st, lk, equidistant=self.threshold == "equidistant"
        )
        self.categories_ = (
            [labels[int(c) - 1] for c in cats] if labels is not None else [_plain(c) for c in cats]
        )
        self._labels = labels
        psi0 = theta0 = None
        if start is not None:
            # A standard deviation at 0 is a stationary point of the likelihood (it is even in
            # each SD), so a start on that boundary would never leave it: start such a
            # diagonal entry where a fresh fit's LMM start is floored.
            theta0 = np.asarray(start.theta_, dtype=float).copy()
            diag = np.array([r_ == c_ for _, r_, c_ in st.theta_index()], dtype=bool)
            theta0[diag] = np.maximum(theta0[diag], START_FLOOR * lk.latent_sd)
            if list(start.categories_) == self.categories_:
                psi0 = np.concatenate([start.alpha_, start.beta_.to_numpy(), theta0])
        else:
            theta0 = self._theta_start(design, problem)
        self._smooth_labels = [] if smooth is None else [part.label for part in smooth[0]]
        with one_blas_thread():
            self._fit(problem, design, names, t0, theta0=theta0, psi0=psi0, stacklevel=stacklevel)
        self.smooth_ = None
        if smooth is not None:
            fit = smooth_results(
                problem, self._md, self._psi, smooth[0], self._Ts, len(design.random)
            )
            self.smooth_ = fit
            rows = pd.DataFrame(
                {
                    "group": "smooth",
                    "term": fit.labels,
                    "variance": [s.variance for s in fit.smooths],
                    "sd": [s.sd for s in fit.smooths],
                }
            )
            self.random_ = pd.concat([self.random_, rows], ignore_index=True)
            self.meta_["smooths"] = fit.labels
            self._null_columns = {f"X{label}Fx1" for label in fit.labels}

    def refit(self, response: np.ndarray | pd.Series) -> OrdinalMixedModel:
        """Fit the same model to a new response, reusing the design matrices.

        What simulation-based power analysis and parametric bootstraps do many times: the
        formula is not parsed and the design not rebuilt, and the optimizer starts from this
        fit's thresholds, fixed effects and covariance parameters (from its covariance
        parameters only when the new response lacks a category).

        Parameters
        ----------
        response : array-like or pandas.Series
            One value per row used in the fit (``n_obs_`` values, in the order of
            ``design_.rows``; a Series is aligned on that index), each one of ``categories_``.

        Returns
        -------
        OrdinalMixedModel
            A new fitted model with the same options; ``self`` is unchanged. Its
            ``categories_`` are those the new response uses.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            When the response has the wrong length, is not aligned with the rows used, or
            holds a value that is not one of ``categories_``.
        ConvergenceError, FormulaError
            As :meth:`fit`.

        Warns
        -----
        ConvergenceWarning, SingularFitWarning
            As :meth:`fit`.
        """
        t0 = time.perf_counter()
        self._check_no_smooth("refit")
        if isinstance(response, pd.Series):
            if not response.index.equals(self.design_.rows):
                raise InvalidParameterError(
                    f"the `response` parameter of {_WHERE}.refit must be indexed like the rows "
                    "used in the fit (design_.rows)"
                )
            response = response.to_numpy()
        values = np.asarray(response, dtype=object)
        labels = self._labels
        allowed = list(labels) if labels is not None else list(self.categories_)
        lookup = {c: (k + 1 if labels is not None else c) for k, c in enumerate(allowed)}
        try:
            y = np.array([lookup[v] for v in values.tolist()], dtype=float)
            bad = False
        except (KeyError, TypeError):
            bad = True
        if values.shape != (self.n_obs_,) or bad:
            raise InvalidParameterError(
                f"the `response` parameter of {_WHERE}.refit must hold {self.n_obs_} values "
                f"(one per row used), each one of the categories {allowed}; got shape "
                f"{values.shape}" + (" with other values" if bad else "")
            )
        return self._refit_response(y, t0, stacklevel=5)

    def _refit_response(
        self, y: np.ndarray, t0: float | None = None, *, stacklevel: int = 4
    ) -> OrdinalMixedModel:
        """Refit to response values on the scale of ``design_.y`` (checked by the caller)."""
        from dataclasses import replace

        t0 = time.perf_counter() if t0 is None else t0
        new = type(self)(**self.get_params())
        new._fit_design(
            replace(self.design_, y=y), self._labels, t0, start=self, stacklevel=stacklevel
        )
        new._predictors = getattr(self, "_predictors", None)
        return new

    def _check_params(self) -> None:
        if not isinstance(self.formula, str):
            raise InvalidParameterError(
                f"the `formula` parameter of {_WHERE} must be a str in lme4 syntax, e.g. "
                f"'y ~ x + (1 | g)'; got {type(self.formula).__name__}"
            )
        check_choice(self.link, ("logit", "probit"), name="link", where=_WHERE)
        check_choice(self.threshold, ("flexible", "equidistant"), name="threshold", where=_WHERE)
        check_choice(self.start, ("lmm", "default"), name="start", where=_WHERE)
        check_count(self.n_agq, name="n_agq", where=_WHERE, minimum=1, maximum=ORDINAL_MAX_N_AGQ)
        check_int(self.max_iter, name="max_iter", where=_WHERE, minimum=1)
        check_unit(self.ci_level, name="ci_level", where=_WHERE)

    def _alpha_names(self) -> list[str]:
        if self.threshold == "equidistant":
            return ["threshold.1", "spacing"]
        cats = self.categories_
        return [f"{cats[j]}|{cats[j + 1]}" for j in range(len(cats) - 1)]

    def _random_tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return random_tables(self.design_.random, self._Ts[: len(self.design_.random)])

    def _singular_description(self) -> str:
        k = len(self.design_.random)
        text = singular_description(self.design_.random, self._Ts[:k], SINGULAR_TOL)
        flat = [
            label
            for label, T in zip(getattr(self, "_smooth_labels", []), self._Ts[k:], strict=False)
            if T[0, 0] < SINGULAR_TOL
        ]
        if flat:
            smooth = f"variance of {', '.join(flat)} estimated at 0 (a straight line)"
            text = f"{text}; {smooth}" if text else smooth
        return text

    def _check_no_smooth(self, name: str) -> None:
        """Refuse what a fit with a smooth term does not offer."""
        self._check_fitted(name)
        if getattr(self, "smooth_", None) is not None:
            raise InvalidParameterError(
                f"{_WHERE}.{name} is not available for a model with smooth terms "
                f"({', '.join(self.smooth_.labels)}); such a model offers fixed_, thresholds_, "
                "random_, ranef_, summary(), smooth_.curve(), predict(), predict_expected() "
                "and linear_predictor()"
            )

    # -----------------------------------------------------------------------------------------
    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "theta_"):
            raise NotFittedError(f"{_WHERE}.{method} needs a fitted model; call .fit(data) first")

    @property
    def ranef_(self) -> pd.DataFrame:
        """Conditional modes of the random effects and their conditional variances."""
        self._check_fitted("ranef_")
        if self._ranef_cache is None:
            self._ranef_cache = self._ranef()
        return self._ranef_cache

    def _ranef(self) -> pd.DataFrame:
        st = self._problem.st
        md = self._md
        blocks_F, blocks_R = md.factor.local_blocks()
        per_unit = [(md.uF.reshape(st.F.n_levels, st.pF), blocks_F)]
        for o, u, cv in zip(st.R_offsets, st.R, blocks_R, strict=True):
            per_unit.append((md.uR[o : o + u.n_levels * u.p].reshape(u.n_levels, u.p), cv))
        frames = []
        for unit, (uvals, cvs) in zip(st.units, per_unit, strict=True):
            start = 0
            for k, size in zip(unit.blocks, unit.sizes, strict=True):
                if k >= len(self.design_.random):  # the smooth's block: in smooth_
                    start += size
                    continue
                T = self._Ts[k]
                sl = slice(start, start + size)
                b = uvals[:, sl] @ T.T
                cv = np.einsum("ij,ljk,ik->li", T, cvs[:, sl, sl], T)
                block = self.design_.random[k]
                for i, term in enumerate(block.terms):
                    frames.append(
                        pd.DataFrame(
                            {
                                "group": block.group,
                                "term": term,
                                "level": block.levels.to_numpy(dtype=object),
                                "estimate": b[:, i],
                                "cond_var": cv[:, i],
                            }
                        )
                    )
                start += size
        order = {b.group: i for i, b in enumerate(self.design_.random)}
        frames.sort(key=lambda fr: order[fr["group"].iloc[0]])
        return pd.concat(frames, ignore_index=True)

    def _linear_predictor(
        self, data: pd.DataFrame | None, re_form: str | None, allow_new_levels: bool
    ) -> tuple[np.ndarray, Design, pd.Index]:
        if re_form is not None and re_form not in RE_FORM_NONE and re_form != "marginal":
            raise InvalidParameterError(
                f"the `re_form` parameter of {_WHERE}.predict must be None (all random effects), "
                f"'marginal' (averaged over them) or one of {list(RE_FORM_NONE)} (none); "
                f"got {re_form!r}"
            )
        with_random = re_form is None
        smooth = getattr(self, "smooth_", None)
        if data is None:
            design = self.design_
            index = design.rows
        else:
            frame, _ = _response_codes(data, self.design_.spec.response)
            if smooth is not None:  # rows without a smooth's column (or by factor) get NaN
                missing = [c for c in self._smooth_columns if c not in frame.columns]
                if missing:
                    raise InvalidParameterError(
                        f"{_WHERE}.predict: the data lack the smooths' column(s) {missing}"
                    )
                frame = smooth_rows(frame, self._smooth_columns)
            design = getattr(self, "_base_design", self.design_).transform(
                frame, random=with_random
            )
            index = data.index
        X, names = _fixed_matrix(design)
        if smooth is not None:  # the null-space columns are in the smooths' coefficients
            keep = [i for i, n in enumerate(names) if n not in self._null_columns]
            X, names = X[:, keep], [names[i] for i in keep]
        eta = X @ self.beta_[names].to_numpy()
        if smooth is not None:
            source = self._smooth_data if data is None else frame
            eta = eta + smooth.linear_predictor(source.loc[design.rows])
        if with_random:
            ranef = self.ranef_
            for block in design.random:
                r = ranef[ranef["group"] == block.group]
                b = np.column_stack(
                    [r.loc[r["term"] == t, "estimate"].to_numpy() for t in block.terms]
                )
                unseen = block.codes < 0
                if unseen.any() and not allow_new_levels:
                    raise InvalidParameterError(
                        f"{_WHERE}.predict: levels not seen in the fit for {block.group!r}; pass "
                        "allow_new_levels=True to predict them with a random effect of 0"
                    )
                contrib = np.einsum("ij,ij->i", block.Z, b[np.where(unseen, 0, block.codes)])
                eta = eta + np.where(unseen, 0.0, contrib)
        return eta, design, index

    def _random_design(self, data: pd.DataFrame, rows: pd.Index) -> Design:
        """Return the design of ``data``'s ``rows`` with its random blocks."""
        frame, _ = _response_codes(data.loc[rows], self.design_.spec.response)
        return getattr(self, "_base_design", self.design_).transform(frame)

    def linear_predictor(
        self, data: pd.DataFrame | None = None, *, re_form: str | None = None
    ) -> pd.Series:
        """Linear predictor ``eta = X beta (+ Z b)`` (thresholds not included).

        Parameters are those of :meth:`predict`; new levels get a random effect of 0.
        """
        self._check_fitted("linear_predictor")
        eta, design, index = self._linear_predictor(data, re_form, True)
        out = pd.Series(np.nan, index=index, name="eta")
        out.loc[design.rows] = eta
        return out

    def predict(
        self,
        data: pd.DataFrame | None = None,
        *,
        re_form: str | None = None,
        allow_new_levels: bool = True,
    ) -> pd.DataFrame:
        """Probabilities of each category.

        Parameters
        ----------
        data : pandas.DataFrame, optional
            New rows; default the rows used in the fit.
        re_form : {None, "~0", "NA", "marginal"}, default None
            ``None`` uses the conditional modes of the groups seen in the fit; ``"~0"`` sets
            every random effect to 0 (the typical group, not the population average);
            ``"marginal"`` averages the probabilities over the random-effects distribution
            (what a new member of the population is expected to answer; 40-node
            Gauss-Hermite quadrature over the normal sum ``z' b`` of each row).
        allow_new_levels : bool, default True
            A level not seen in the fit gets a random effect of 0; ``False`` raises.

        Returns
        -------
        pandas.DataFrame
            One column per category (in order), rows indexed like ``data`` (NaN where a
            predictor is missing); each row sums to 1.
        """
        self._check_fitted("predict")
        marginal = re_form == "marginal"
        eta, design, index = self._linear_predictor(
            data, "~0" if marginal else re_form, allow_new_levels
        )
        lk = self._problem.lk
        cut = np.concatenate([[-np.inf], self.cutpoints_, [np.inf]])
        if marginal:
            frame = design if data is None else self._random_design(data, design.rows)
            var = np.zeros(len(eta))
            for block, T in zip(frame.random, self._Ts[: len(frame.random)], strict=True):
                var += np.einsum("ij,jk,ik->i", block.Z, T @ T.T, block.Z)
            nodes, weights = np.polynomial.hermite.hermgauss(40)
            shifts = np.sqrt(2.0 * var)[:, None] * nodes[None, :]
            cdf = lk.cdf(cut[None, None, :] - (eta[:, None] + shifts)[:, :, None])
            probs = np.einsum("k,ikj->ij", weights / np.sqrt(np.pi), np.diff(cdf, axis=2))
        else:
            cdf = lk.cdf(cut[None, :] - eta[:, None])
            probs = np.diff(cdf, axis=1)
        out = pd.DataFrame(np.nan, index=index, columns=list(self.categories_))
        out.loc[design.rows] = probs
        return out

    def predict_expected(
        self,
        data: pd.DataFrame | None = None,
        *,
        re_form: str | None = None,
        allow_new_levels: bool = True,
    ) -> pd.Series:
        """Predict the expected category value ``sum_j j P(Y = j)`` (numeric categories only).

        Parameters are those of :meth:`predict`.
        """
        probs = self.predict(data, re_form=re_form, allow_new_levels=allow_new_levels)
        try:
            values = np.asarray(self.categories_, dtype=float)
        except (TypeError, ValueError) as err:
            raise InvalidParameterError(
                f"{_WHERE}.predict_expected needs numeric categories; the response has "
                f"{self.categories_!r}. Use predict() for the probabilities."
            ) from err
        return pd.Series(probs.to_numpy() @ values, index=probs.index, name="expected")


# ---------------------------------------------------------------------------------------------
# helpers


def _response_codes(data: pd.DataFrame, response: str) -> tuple[pd.DataFrame, list | None]:
    """Replace an ordered categorical response by its 1-based codes (labels kept aside)."""
    if response not in data.columns:  # new data without a response; build_design names it
        return data, None
    col = data[response]
    if isinstance(col.dtype, pd.CategoricalDtype):
        if not col.cat.ordered:
            raise FormulaError(
                f"{_WHERE}.fit: the response {response!r} is an unordered categorical; make it "
                "ordered (pandas.Categorical(..., ordered=True)) or give numbers"
            )
        codes = col.cat.codes.astype(float).where(col.notna()) + 1.0
        frame = data.copy()
        frame[response] = codes
        return frame, [_plain(c) for c in col.cat.categories]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise FormulaError(
            f"{_WHERE}.fit: the response {response!r} must hold ordered categories as numbers "
            f"(recode text labels such as 'low', 'mid', 'high' to 1, 2, 3 in their order) or, "
            f"in Python, an ordered pandas categorical; got dtype {col.dtype}"
        )
    return data, None


def _fixed_matrix(design: Design) -> tuple[np.ndarray, list[str]]:
    X = design.X
    if "Intercept" in X.columns:
        X = X.drop(columns=["Intercept"])
    return X.to_numpy(dtype=float), [str(c) for c in X.columns]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
