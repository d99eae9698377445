"""The Bayesian mixed model: formula, priors, sampling, posterior summaries and predictions.

This module is long (about 1,200 lines) because it is one class whose methods share the
posterior: fitting, data-scale draws, the tables, predictions and summaries; priors,
diagnostics and model comparison live in their own modules.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from models import _columns as col
from models._backends import pymc_model as pmod
from models._backends.samplers import (
    MODEL_CACHE,
    check_sampler,
    default_sampler,
    import_pymc,
    require_sampler,
    run_nuts,
)
from models._checks import check_choice, check_int, check_seed, check_unit
from models._errors import (
    DataQualityWarning,
    FormulaError,
    InvalidParameterError,
    NotFittedError,
    SamplingWarning,
)
from models.bayes.diagnostics import _as_dataset, sampling_diagnostics
from models.bayes.priors import FAMILIES, LINKS, _resolve_priors

_BLOCK = 1_000_000  # draws x rows computed at once after sampling (8 MB per temporary)

#: The sampler settings of :class:`BayesianMixedModel` (also the defaults of the study
#: functions that fit it): draws and tuning steps per chain, chains, NUTS target acceptance.
DEFAULT_SAMPLING: dict[str, int | float] = {
    "draws": 10_000,
    "tune": 500,
    "chains": 2,
    "target_accept": 0.9,
}


def _flat(a: np.ndarray) -> np.ndarray:
    """``(chain, draw, ...)`` -> ``(chain * draw, ...)``."""
    return a.reshape(a.shape[0] * a.shape[1], *a.shape[2:])


def _gaussian_loglik(y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    z = (y[None, :] - mu) / sigma[:, None]
    return -0.5 * z**2 - np.log(sigma)[:, None] - 0.5 * math.log(2.0 * math.pi)


def _normal_quadrature(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights for ``E[f(v)]`` with ``v ~ N(0, 1)``."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return math.sqrt(2.0) * x, w / math.sqrt(math.pi)


@dataclass(frozen=True)
class BayesianModelSummary:
    """Tables of a fitted :class:`BayesianMixedModel` and its printed form.

    Attributes
    ----------
    fixed, cutpoints, random : pandas.DataFrame
        As :meth:`BayesianMixedModel.fixed_effects`, ``cutpoints()`` and ``random_effects()``.
    diagnostics : pandas.DataFrame
        One row: ``sampler, chains, draws, divergences, r_hat_max, ess_bulk_min,
        ess_tail_min, bfmi_min, passed, seconds``.
    text : str
        The printed summary; it opens with any failed sampling check.
    """

    fixed: pd.DataFrame
    cutpoints: pd.DataFrame
    random: pd.DataFrame
    diagnostics: pd.DataFrame
    text: str

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.text)}</pre>"


@dataclass(frozen=True)
class _NewRows:
    """Design pieces of new data on the data's scale, aligned with a fitted model."""

    rows: pd.Index
    X_data: np.ndarray
    Z: list[np.ndarray]
    index: list[np.ndarray]  # per block: fitted level index of each row, -1 for unseen
    labels: list[np.ndarray]  # per block: group label of each row
    y: np.ndarray | None


class BayesianMixedModel:
    """Bayesian hierarchical model with crossed random effects for ratings.

    Parameters
    ----------
    formula : str
        lme4-style formula, e.g. ``"empathy ~ openness + week + (1 + week | participant)
        + (1 | story)"``; parsed by :func:`models.formula.parse_formula`.
    family : {"ordinal", "gaussian"}, default "ordinal"
        ``ordinal``: cumulative model with ordered cutpoints for whole-number ratings
        (or an ordered categorical); ``gaussian``: normal response.
    link : {"logit", "probit"}, default "logit"
        Link of the ordinal family. Gaussian models accept only the default.
    priors : mapping, optional
        Overrides of the default priors per parameter class (``intercept``, ``fixed``,
        ``cutpoints``, ``sd``, ``cor``, ``sigma``), as :class:`Prior` objects or
        mappings such as ``{"dist": "normal", "sigma": 1.0}``.
    draws : int, default 10000
        Draws kept per chain. The group-level sds are the slowest-mixing parameters (the
        story sd of the study-sized model, 600 stories rated about twice each, gains about
        0.07 effective draws per draw): 2 x 5,000 draws only just reach the diagnostics
        gate's tail ESS of 400, 2 x 10,000 clear it about threefold.
    tune : int, default 500
        Tuning (warm-up) steps per chain; nutpie's adaptation settles within a few
        hundred.
    chains : int, default 2
        Number of chains (run in parallel, up to the number of cores).
    sampler : {"auto", "pymc", "nutpie", "numpyro"}, default "auto"
        NUTS implementation; ``auto`` is nutpie when it is installed (the ``fast`` extra),
        else PyMC's own; ``numpyro`` needs the ``jax`` extra. The model is built (and,
        for nutpie, compiled) once per structure -- formula terms, family, link, number of
        categories, number of levels of each grouping factor, priors -- and a refit of
        the same structure on other data reuses it with the new data swapped in.
    target_accept : float, default 0.9
        Step-size adaptation target; raise it when divergences are reported.
    ci_level : float, default 0.95
        Probability of the highest-density intervals ``ci_low, ci_high``.
    seed : int, optional
        Random seed; the same seed gives the same draws for a given sampler.
    progressbar : bool, optional
        Show the sampler's progress bar. By default it is shown on a terminal for long
        runs (``chains x (draws + tune) x observations`` of at least one million).

    Attributes
    ----------
    idata_ : arviz.InferenceData
        ``posterior`` (the sampled standardised parameters, suffixed ``_z``, and their
        data-scale versions ``fixed``, ``cutpoints``, ``sigma``, ``sd_{r}``, ``cor_{r}``,
        ``re_{r}`` for random-effects block ``r``), ``sample_stats``, ``log_likelihood``
        and ``posterior_predictive`` (``y``, on the data's scale) and ``observed_data``.
    summary_ : pandas.DataFrame
        One row per reported parameter: ``component`` (``fixed``, ``cutpoint``, ``sd``,
        ``cor``), ``group`` (grouping factor; ``Residual`` for the gaussian sigma),
        ``term``, ``estimate`` (posterior mean), ``se`` (posterior sd), ``ci_low``,
        ``ci_high`` (HDI at ``ci_level``), ``r_hat``, ``ess_bulk``, ``ess_tail``.
    diagnostics_ : dict
        :func:`sampling_diagnostics` of the fit plus ``sampler``, ``seconds`` (wall time,
        compilation included), ``compile_seconds`` (0 when the compiled model of the same
        structure was reused), ``draws``, ``tune``, ``chains``.
    n_obs_ : int
        Observations used.
    groups_ : dict of str to int
        Number of levels of each grouping factor.
    categories_ : tuple
        Ordered response categories (ordinal family).

    Notes
    -----
    **Model.** With standardised predictors ``x~ = (x - mean) / sd`` and, per random
    block ``r`` of grouping factor ``g``, standardised effects ``z~``::

        eta_i = a + x~_i b + sum_r z~_ri u_r[g_r(i)],   u_r[j] = L_r e_rj,  e_rj ~ N(0, I)

    with ``L_r = diag(sd_r) chol(R_r)`` (non-centred). ``gaussian``:
    ``(y - mean(y)) / sd(y) ~ N(eta, sigma)``. ``ordinal``: ``P(y <= c_k) = F(c_k - eta)``
    with ordered cutpoints ``c`` and no intercept ``a``, ``F`` logistic or normal.
    Random-effects columns are scaled but not centred, so group-level sds and
    correlations are those of the effects as written (a random intercept is the group's
    deviation at predictor value 0, as in lme4; centre a predictor yourself when 0 is far
    from the data). Every reported number is mapped back, draw by draw, to the data's
    units (slopes per data unit, intercept and cutpoints at predictor value 0).

    **Default priors** (on the standardised scale; the probit ones are the logit ones
    divided by 1.6):

    ==========  ==================  ==================  ================
    class       gaussian            ordinal logit       ordinal probit
    ==========  ==================  ==================  ================
    intercept   Normal(0, 2.5)      --                  --
    fixed       Normal(0, 2.5)      Normal(0, 2.5)      Normal(0, 1.56)
    cutpoints   --                  Normal(0, 5)        Normal(0, 3.13)
    sd          HalfNormal(1)       HalfNormal(2)       HalfNormal(1.25)
    cor         LKJ(2)              LKJ(2)              LKJ(2)
    sigma       Exponential(1)      --                  --
    ==========  ==================  ==================  ================

    A gaussian response has standard deviation 1 after standardisation, so group sds
    above 2 are implausible; on the logit scale the latent residual sd is 1.81, so
    ``HalfNormal(2)`` allows intraclass correlations up to about 0.8 comfortably.

    **Diagnostics.** After sampling, :func:`sampling_diagnostics` checks every reported
    population-level parameter (the rows of ``summary_``: fixed effects, cutpoints,
    group-level sds and correlations, sigma) and the whole run (divergences, E-BFMI);
    each failed check is named in ``diagnostics_["failures"]`` and raised as one
    :class:`~models.SamplingWarning` with its remedy. The group-level sds are the
    slowest-mixing quantities of these models; the individual group effects (hundreds
    of them, whose largest R-hat exceeds 1.01 by chance alone at the default number of
    draws) carry their own ``r_hat`` and ESS columns in :meth:`group_effects`.

    **Validation.** Eight schools (posteriordb ``eight_schools_noncentered``) reference
    posterior means of ``mu, tau, theta`` are met within 3 MCSE; the gaussian family on
    ``lme4::sleepstudy`` agrees with ``lme4::lmer`` (1.1-31) REML fixed effects within 2
    posterior sds; simulated ordinal data recover trait effects and cutpoints.

    Examples
    --------
    >>> from models.bayes import BayesianMixedModel
    >>> model = BayesianMixedModel("rating ~ trait + (1 | participant)", seed=1)
    >>> model.family, model.link
    ('ordinal', 'logit')
    >>> model.fit(ratings).fixed_effects()  # doctest: +SKIP
    """

    def __init__(
        self,
        formula: str,
        *,
        family: Literal["ordinal", "gaussian"] = "ordinal",
        link: Literal["logit", "probit"] = "logit",
        priors: Mapping[str, Any] | None = None,
        draws: int = 10_000,
        tune: int = 500,
        chains: int = 2,
        sampler: Literal["auto", "pymc", "nutpie", "numpyro"] = "auto",
        target_accept: float = 0.9,
        ci_level: float = 0.95,
        seed: int | None = None,
        progressbar: bool | None = None,
    ) -> None:
        self.formula = formula
        self.family = family
        self.link = link
        self.priors = priors
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.sampler = sampler
        self.target_accept = target_accept
        self.ci_level = ci_level
        self.seed = seed
        self.progressbar = progressbar

    _PARAMS = (
        "family",
        "link",
        "priors",
        "draws",
        "tune",
        "chains",
        "sampler",
        "target_accept",
        "ci_level",
        "seed",
        "progressbar",
    )

    def __repr__(self) -> str:
        return (
            f"BayesianMixedModel({self.formula!r}, family={self.family!r}, link={self.link!r}, "
            f"sampler={self.sampler!r}, draws={self.draws}, chains={self.chains})"
        )

    def _clone(self, **overrides: Any) -> BayesianMixedModel:
        params = {name: getattr(self, name) for name in self._PARAMS}
        params.update(overrides)
        return BayesianMixedModel(self.formula, **params)

    # ---------------------------------------------------------------------------- validation

    def _validate(self) -> dict[str, Any]:
        where = "BayesianMixedModel"
        if not isinstance(self.formula, str) or "~" not in self.formula:
            raise InvalidParameterError(
                f"the `formula` parameter of {where} must be a string like "
                f"'rating ~ x + (1 | participant)'; got {self.formula!r}"
            )
        family = check_choice(self.family, FAMILIES, name="family", where=where)
        link = check_choice(self.link, LINKS, name="link", where=where)
        if family == "gaussian" and link != "logit":
            raise InvalidParameterError(
                f"the `link` parameter of {where} applies to family='ordinal' only; "
                f"got link={link!r} with family='gaussian'"
            )
        if self.sampler == "auto":
            sampler = default_sampler()
        else:
            sampler = check_sampler(self.sampler, where=where)
        if sampler == "numpyro" and family == "ordinal" and link == "probit":
            # the probit log-likelihood uses erfcx, which PyTensor cannot translate to JAX
            raise InvalidParameterError(
                f"{where}: sampler='numpyro' cannot run link='probit' (PyTensor has no JAX "
                "version of the scaled complementary error function it needs); use "
                "sampler='nutpie' or 'pymc', or link='logit'"
            )
        if self.progressbar is not None and not isinstance(self.progressbar, bool):
            raise InvalidParameterError(
                f"the `progressbar` parameter of {where} must be True, False or None; "
                f"got {self.progressbar!r}"
            )
        return {
            "family": family,
            "link": link,
            "sampler": sampler,
            "priors": _resolve_priors(self.priors, family=family, link=link, where=where),
            "draws": check_int(self.draws, name="draws", where=where, minimum=1),
            "tune": check_int(self.tune, name="tune", where=where, minimum=0),
            "chains": check_int(self.chains, name="chains", where=where, minimum=1),
            "target_accept": check_unit(self.target_accept, name="target_accept", where=where),
            "ci_level": check_unit(self.ci_level, name="ci_level", where=where),
            "seed": check_seed(self.seed, where=where),
        }

    def _check_fitted(self, where: str) -> None:
        if not hasattr(self, "idata_"):
            raise NotFittedError(
                f"BayesianMixedModel.{where} needs a fitted model; call fit(data) first"
            )

    # ---------------------------------------------------------------------------- fitting

    def fit(self, data: pd.DataFrame) -> BayesianMixedModel:
        """Build the model from the formula and ``data``, sample it and summarise the draws.

        Parameters
        ----------
        data : pandas.DataFrame
            One row per observation with the formula's columns; rows with missing
            values in them are dropped (see :func:`models.formula.build_design`).

        Returns
        -------
        BayesianMixedModel
            ``self``, with the fitted attributes set.

        Raises
        ------
        InvalidParameterError
            For an invalid constructor argument.
        FormulaError
            When the formula does not match the data or the response does not suit the
            family.
        ImportError
            When the chosen sampler's extra is not installed.

        Warns
        -----
        SamplingWarning
            When the draws fail the diagnostics gate; every failed check is named.
        """
        diagnostics = self._fit(data)
        if diagnostics["failures"]:
            warnings.warn(
                "BayesianMixedModel.fit: the draws failed the diagnostics gate: "
                + "; ".join(diagnostics["messages"]),
                SamplingWarning,
                stacklevel=2,
            )
        return self

    def _fit(self, data: pd.DataFrame) -> dict[str, Any]:
        where = "BayesianMixedModel.fit"
        opts = self._validate()
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                f"the `data` parameter of {where} must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        require_sampler(opts["sampler"])
        import_pymc()
        from models.formula import build_design, parse_formula

        spec = parse_formula(self.formula)
        design = build_design(spec, data)
        if len(design.y) == 0:
            raise FormulaError(f"{where}: no complete rows for formula {self.formula!r}")
        inputs = pmod.prepare_inputs(design, family=opts["family"], link=opts["link"], where=where)
        # one model (and one compilation) per structure: a refit on other data swaps the data
        entry = MODEL_CACHE.get(
            pmod.model_structure(inputs, opts["priors"]),
            lambda: pmod.build_pymc_model(inputs, opts["priors"]),
        )
        entry.set_data(pmod.model_data(inputs))
        progress = self.progressbar
        if progress is None:
            size = opts["chains"] * (opts["draws"] + opts["tune"]) * inputs.n_obs
            progress = bool(sys.stderr.isatty()) and size >= 1_000_000
        run = run_nuts(
            entry,
            sampler=opts["sampler"],
            draws=opts["draws"],
            tune=opts["tune"],
            chains=opts["chains"],
            target_accept=opts["target_accept"],
            seed=opts["seed"],
            progressbar=progress,
        )
        self._spec = spec
        self._design = design
        self._inputs = inputs
        self._opts = opts
        self.n_obs_ = inputs.n_obs
        self.categories_ = inputs.categories
        groups: dict[str, int] = {}
        for block in inputs.random:
            groups[block.group] = len(block.levels)
        self.groups_ = groups
        self.idata_ = self._assemble(run.idata, opts)
        table = self._tables(opts["ci_level"])
        summary = table[table["component"] != "effect"].drop(columns="level")
        self.summary_ = summary.reset_index(drop=True)
        effects = table[table["component"] == "effect"]
        self._effects = effects.drop(columns="component").reset_index(drop=True)
        diag = sampling_diagnostics(self.idata_, var_names=self._reported_vars())
        diag.update(
            sampler=run.sampler,
            seconds=run.seconds,
            compile_seconds=run.compile_seconds,
            draws=opts["draws"],
            tune=opts["tune"],
            chains=opts["chains"],
        )
        self.diagnostics_ = diag
        return diag

    def _reported_vars(self) -> list[str]:
        names = ["fixed"] if self._inputs.fixed_terms or self._inputs.intercept else []
        names += ["cutpoints"] if self._inputs.family == "ordinal" else ["sigma"]
        for r, block in enumerate(self._inputs.random):
            names += [f"sd_{r}"] + ([f"cor_{r}"] if block.correlated else [])
        return names

    def _assemble(self, idata: Any, opts: dict[str, Any]) -> Any:
        """Add data-scale draws, log-likelihood and posterior predictive draws."""
        import arviz as az
        import xarray as xr

        inputs = self._inputs
        posterior = pmod.relabel(idata.posterior, inputs)
        draws = pmod.data_scale_draws(inputs, posterior)
        chain_draw = ("chain", "draw")
        coords = {"chain": posterior["chain"].values, "draw": posterior["draw"].values}
        data_vars: dict[str, Any] = {}
        fixed = pmod.fixed_names(inputs)
        if fixed:
            data_vars["fixed"] = xr.DataArray(
                draws["fixed"], dims=(*chain_draw, "term"), coords={**coords, "term": fixed}
            )
        if "cutpoints" in draws:
            data_vars["cutpoints"] = xr.DataArray(
                draws["cutpoints"],
                dims=(*chain_draw, "cutpoint"),
                coords={**coords, "cutpoint": posterior["cutpoint"].values},
            )
        if "sigma" in draws:
            data_vars["sigma"] = xr.DataArray(draws["sigma"], dims=chain_draw, coords=coords)
        for r, block in enumerate(inputs.random):
            eff = f"effect_{r}"
            terms = list(block.terms)
            data_vars[f"sd_{r}"] = xr.DataArray(
                draws[f"sd_{r}"], dims=(*chain_draw, eff), coords={**coords, eff: terms}
            )
            data_vars[f"re_{r}"] = xr.DataArray(
                draws[f"re_{r}"],
                dims=(*chain_draw, f"level_{r}", eff),
                coords={**coords, f"level_{r}": posterior[f"level_{r}"].values, eff: terms},
            )
            if block.correlated:
                data_vars[f"cor_{r}"] = xr.DataArray(
                    draws[f"cor_{r}"],
                    dims=(*chain_draw, eff, f"{eff}_bis"),
                    coords={**coords, eff: terms, f"{eff}_bis": terms},
                )
        new_posterior = posterior.assign(data_vars)
        self._draws = {k: _flat(v) for k, v in draws.items()}
        y = inputs.y_data if inputs.family == "gaussian" else inputs.y
        n_chain, n_draw = posterior.sizes["chain"], posterior.sizes["draw"]
        rng = np.random.default_rng(opts["seed"])
        # draws in blocks of about _BLOCK cells: the S x n temporaries stay small at any size
        S, n = n_chain * n_draw, inputs.n_obs
        loglik = np.empty((S, n))
        codes = np.min_scalar_type(len(inputs.categories)) if inputs.family == "ordinal" else float
        ppc = np.empty((S, n), dtype=codes)
        step = max(1, _BLOCK // max(n, 1))
        Z = [block.Z * block.scale + block.center for block in inputs.random]
        levels = [block.codes for block in inputs.random]
        for start in range(0, S, step):
            part = slice(start, min(start + step, S))
            eta = self._eta(inputs.X_data, Z, levels, part=part)
            loglik[part] = self._loglik(eta, y, part=part)
            ppc[part] = self._simulate(eta, rng, part=part)
            del eta
        obs_values = self._observed_values()
        obs_coords = {"obs": np.arange(inputs.n_obs)}
        shape = (n_chain, n_draw, inputs.n_obs)
        groups = {
            "posterior": new_posterior,
            "sample_stats": idata.sample_stats,
            "log_likelihood": xr.Dataset(
                {"y": xr.DataArray(loglik.reshape(shape), dims=(*chain_draw, "obs"))},
                coords={**coords, **obs_coords},
            ),
            "posterior_predictive": xr.Dataset(
                {"y": xr.DataArray(self._to_values(ppc).reshape(shape), dims=(*chain_draw, "obs"))},
                coords={**coords, **obs_coords},
            ),
            "observed_data": xr.Dataset(
                {"y": xr.DataArray(obs_values, dims=("obs",))}, coords=obs_coords
            ),
        }
        return az.InferenceData(**groups)

    def _observed_values(self) -> np.ndarray:
        inputs = self._inputs
        if inputs.family == "gaussian":
            return inputs.y_data
        return self._to_values(inputs.y)

    def _to_values(self, codes: np.ndarray) -> np.ndarray:
        """Category codes -> category values when the categories are numbers."""
        inputs = self._inputs
        if inputs.family == "gaussian":
            return codes
        if all(isinstance(c, numbers.Real) for c in inputs.categories):
            return np.asarray(inputs.categories, dtype=float)[codes]
        return np.asarray(codes, dtype=np.int64)

    def _eta(
        self,
        X_data: np.ndarray,
        Z: Sequence[np.ndarray],
        index: Sequence[np.ndarray],
        *,
        fresh: Mapping[int, np.ndarray] | None = None,
        part: slice | None = None,
    ) -> np.ndarray:
        """Posterior linear predictor on the data's scale, ``S x n``: the one place it is built.

        ``X_data`` is the fixed design without the intercept; per random block ``r``, ``Z[r]``
        its data-scale design and ``index[r]`` the fitted level of each row (-1 for a level
        not in the fitted data, whose effect is 0 unless ``fresh[r]`` gives the effects of
        those rows, ``S x n_unseen x q``). ``part`` restricts it to a block of draws.
        """
        draws = self._draws if part is None else {k: v[part] for k, v in self._draws.items()}
        random = []
        for r, (Zr, idx) in enumerate(zip(Z, index, strict=True)):
            seen = idx >= 0
            eff = draws[f"re_{r}"][:, np.where(seen, idx, 0), :]
            if not seen.all():
                eff = eff.copy()
                eff[:, ~seen, :] = 0.0 if fresh is None or r not in fresh else fresh[r]
            random.append((Zr, eff))
        return pmod.linear_predictor(draws, X_data, random, intercept=self._inputs.intercept)

    def _eta_train(self) -> np.ndarray:
        inputs = self._inputs
        Z = [block.Z * block.scale + block.center for block in inputs.random]
        return self._eta(inputs.X_data, Z, [block.codes for block in inputs.random])

    def _loglik(self, eta: np.ndarray, y: np.ndarray, *, part: slice = slice(None)) -> np.ndarray:
        """Pointwise log-likelihood on the data's scale (``y``: values or category codes)."""
        if self._inputs.family == "gaussian":
            return _gaussian_loglik(y, eta, self._draws["sigma"][part])
        return pmod.ordinal_loglik(eta, self._draws["cutpoints"][part], y, self._inputs.link)

    def _simulate(
        self, eta: np.ndarray, rng: np.random.Generator, *, part: slice = slice(None)
    ) -> np.ndarray:
        """Posterior predictive draws (category codes for the ordinal family)."""
        if self._inputs.family == "gaussian":
            return eta + self._draws["sigma"][part][:, None] * rng.standard_normal(eta.shape)
        cuts = self._draws["cutpoints"][part]
        u = rng.random(eta.shape)
        # the category is the number of cutpoints whose CDF lies below u (one cutpoint at a time)
        count = np.zeros(eta.shape, dtype=np.int64)
        for k in range(cuts.shape[1]):
            count += pmod.ordinal_cdf(cuts[:, k, None] - eta, self._inputs.link) < u
        return count

    def _tables(self, ci_level: float) -> pd.DataFrame:
        """Summary rows (and group-effect rows) from the data-scale draws."""
        import arviz as az

        inputs = self._inputs
        post = self.idata_.posterior
        columns: list[np.ndarray] = []
        meta: list[tuple[str, str | None, str, Any]] = []

        def add(values: np.ndarray, component: str, group: str | None, term: str, level=None):
            columns.append(values)
            meta.append((component, group, term, level))

        if "fixed" in post:
            for k, term in enumerate(post["term"].values):
                add(post["fixed"].values[:, :, k], "fixed", None, str(term))
        if "cutpoints" in post:
            for k, term in enumerate(post["cutpoint"].values):
                add(post["cutpoints"].values[:, :, k], "cutpoint", None, str(term))
        for r, block in enumerate(inputs.random):
            for k, term in enumerate(block.terms):
                add(post[f"sd_{r}"].values[:, :, k], "sd", block.group, term)
            if block.correlated:
                for i in range(len(block.terms)):
                    for j in range(i):
                        name = f"{block.terms[j]},{block.terms[i]}"
                        add(post[f"cor_{r}"].values[:, :, i, j], "cor", block.group, name)
        if "sigma" in post:
            add(post["sigma"].values, "sd", "Residual", "Residual")
        for r, block in enumerate(inputs.random):
            re = post[f"re_{r}"].values
            for j, level in enumerate(block.levels):
                for k, term in enumerate(block.terms):
                    add(re[:, :, j, k], "effect", block.group, term, level)
        stacked = np.stack(columns, axis=-1)  # chain, draw, m
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            ds = _as_dataset(stacked)
            r_hat = az.rhat(ds)["v"].values
            ess_bulk = az.ess(ds, method="bulk")["v"].values
            ess_tail = az.ess(ds, method="tail")["v"].values
            hdi = az.hdi(ds, hdi_prob=ci_level)["v"].values
        table = pd.DataFrame(
            {
                "component": [m[0] for m in meta],
                col.GROUP: [m[1] for m in meta],
                col.TERM: [m[2] for m in meta],
                "level": [m[3] for m in meta],
                col.ESTIMATE: stacked.mean(axis=(0, 1)),
                col.SE: stacked.reshape(-1, stacked.shape[-1]).std(axis=0, ddof=1),
                col.CI_LOW: hdi[:, 0],
                col.CI_HIGH: hdi[:, 1],
                "r_hat": r_hat,
                "ess_bulk": ess_bulk,
                "ess_tail": ess_tail,
            }
        )
        return table

    # ---------------------------------------------------------------------------- results

    def fixed_effects(self) -> pd.DataFrame:
        """Posterior summary of the fixed effects on the data's scale.

        Returns
        -------
        pandas.DataFrame
            ``term, estimate, se, ci_low, ci_high, r_hat, ess_bulk, ess_tail``; the
            ordinal family has no intercept (the cutpoints take its place).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("fixed_effects")
        rows = self.summary_[self.summary_["component"] == "fixed"]
        return rows.drop(columns=["component", col.GROUP]).reset_index(drop=True)

    def cutpoints(self) -> pd.DataFrame:
        """Posterior summary of the ordinal cutpoints on the data's scale.

        Returns
        -------
        pandas.DataFrame
            ``term`` (``"1|2"``: between categories 1 and 2), ``estimate, se, ci_low,
            ci_high, r_hat, ess_bulk, ess_tail``; empty for the gaussian family.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("cutpoints")
        rows = self.summary_[self.summary_["component"] == "cutpoint"]
        return rows.drop(columns=["component", col.GROUP]).reset_index(drop=True)

    def random_effects(self) -> pd.DataFrame:
        """Posterior summary of the variance components on the data's scale.

        Returns
        -------
        pandas.DataFrame
            ``component`` (``sd`` or ``cor``), ``group``, ``term`` (effect name, or
            ``"a,b"`` for the correlation of effects a and b; the gaussian residual sd is
            group ``Residual``), ``estimate, se, ci_low, ci_high, r_hat, ess_bulk,
            ess_tail``.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("random_effects")
        rows = self.summary_[self.summary_["component"].isin(["sd", "cor"])]
        return rows.reset_index(drop=True)

    def group_effects(self) -> pd.DataFrame:
        """Posterior summary of each group's effects (deviations from the fixed effects).

        Returns
        -------
        pandas.DataFrame
            ``group, term, level, estimate, se, ci_low, ci_high, r_hat, ess_bulk,
            ess_tail``, on the data's scale.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("group_effects")
        return self._effects.copy()

    def summary(self) -> BayesianModelSummary:
        """Posterior tables and a compact text (see :class:`BayesianModelSummary`).

        The text states first whether the sampling checks passed (R-hat, bulk and tail ESS,
        divergences, E-BFMI; :func:`models.bayes.sampling_diagnostics`): when one failed, the
        posterior summaries below it are not to be interpreted.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("summary")
        diag = self.diagnostics_
        diagnostics = pd.DataFrame(
            [
                {
                    "sampler": diag["sampler"],
                    "chains": int(diag["chains"]),
                    "draws": int(diag["draws"]),
                    "divergences": int(diag["divergences"]),
                    "r_hat_max": diag["r_hat_max"],
                    "ess_bulk_min": diag["ess_bulk_min"],
                    "ess_tail_min": diag["ess_tail_min"],
                    "bfmi_min": diag["bfmi_min"],
                    "passed": bool(diag["passed"]),
                    "seconds": diag["seconds"],
                }
            ]
        )
        return BayesianModelSummary(
            fixed=self.fixed_effects(),
            cutpoints=self.cutpoints(),
            random=self.random_effects(),
            diagnostics=diagnostics,
            text=self._summary_text(3),
        )

    def print_summary(self, decimals: int = 3) -> None:
        """Print the summary rounded to ``decimals``."""
        self._check_fitted("print_summary")
        print(self._summary_text(decimals))

    def __str__(self) -> str:
        if not hasattr(self, "summary_"):
            return repr(self)
        return self._summary_text(3)

    def _summary_text(self, decimals: int) -> str:
        number = lambda v: f"{v:.{decimals}f}"  # noqa: E731
        diag = self.diagnostics_
        family = self._opts["family"]
        level = f"{self._opts['ci_level']:.0%}"
        what = (
            f"ordinal ({self._opts['link']} link)" if family == "ordinal" else "gaussian (identity)"
        )
        lines = [
            f"Bayesian mixed model, {what}: {self.formula}",
            f"n = {self.n_obs_}; groups: "
            + ", ".join(f"{g} {k}" for g, k in self.groups_.items())
            + f"; {diag['sampler']}, {diag['chains']} chains x {diag['draws']} draws "
            f"({diag['seconds']:.1f} s)",
        ]
        if diag["passed"]:
            lines.append(
                f"sampling checks passed: R-hat max {diag['r_hat_max']:.3f}, ESS bulk min "
                f"{diag['ess_bulk_min']:.0f}, tail min {diag['ess_tail_min']:.0f}, "
                f"{diag['divergences']} divergences"
            )
        else:
            lines.append(
                "SAMPLING CHECKS FAILED (" + ", ".join(diag["failures"]) + "): the summaries "
                "below are not reliable; " + " ".join(diag.get("messages", []))
            )
        headers = {
            col.ESTIMATE: "Mean",
            col.SE: "SD",
            col.CI_LOW: f"HDI {level} low",
            col.CI_HIGH: "high",
            "r_hat": "R-hat",
            "ess_bulk": "ESS bulk",
            "ess_tail": "ESS tail",
        }
        formats = {
            "Mean": number,
            "SD": number,
            f"HDI {level} low": number,
            "high": number,
            "R-hat": lambda v: f"{v:.3f}",
            "ESS bulk": lambda v: f"{v:.0f}",
            "ESS tail": lambda v: f"{v:.0f}",
        }

        def table(frame: pd.DataFrame) -> str:
            if frame.empty:
                return "(none)"
            shown = frame.rename(columns=headers)
            return shown.to_string(index=False, formatters=formats)

        random = self.random_effects().drop(columns="component")
        lines += ["", "Random effects (posterior SDs and correlations):", table(random)]
        lines += ["", f"Fixed effects (posterior mean, SD, {level} HDI):"]
        lines.append(table(self.fixed_effects()))
        if family == "ordinal":
            lines += ["", "Cutpoints:", table(self.cutpoints())]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary of the fit (the CLI's ``fit --engine bayes`` output).

        Returns
        -------
        dict
            ``engine`` ("bayes"), ``family``, ``link``, ``formula``, ``n_obs``, ``groups``
            (levels per grouping factor), ``fixed`` (rows with ``term, estimate, se,
            ci_low, ci_high, r_hat, ess_bulk``), ``random`` (one row per group-level sd:
            ``group, term, sd`` and the same columns, ``sd`` being the estimate; the
            gaussian residual sd has group ``Residual``), ``correlations`` (``group,
            term`` ("a,b") and the same columns), ``cutpoints`` (ordinal; else empty),
            ``divergences``, ``r_hat_max``, ``ess_bulk_min``, ``ess_tail_min``,
            ``bfmi_min``, ``failures`` (failed diagnostics), ``sampler``, ``draws``,
            ``chains``, ``ci_level`` and ``seconds``. NaN becomes None.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("to_dict")
        keep = [col.TERM, col.ESTIMATE, col.SE, col.CI_LOW, col.CI_HIGH, "r_hat", "ess_bulk"]

        def rows(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
            return [
                {c: _json_value(v) for c, v in zip(columns, rec, strict=True)}
                for rec in frame[columns].itertuples(index=False, name=None)
            ]

        summary = self.summary_
        sds = summary[summary["component"] == "sd"].assign(sd=lambda d: d[col.ESTIMATE])
        diag = self.diagnostics_
        return {
            "engine": "bayes",
            "family": self._opts["family"],
            "link": self._opts["link"] if self._opts["family"] == "ordinal" else "identity",
            "formula": self.formula,
            "n_obs": int(self.n_obs_),
            "groups": {k: int(v) for k, v in self.groups_.items()},
            "fixed": rows(summary[summary["component"] == "fixed"], keep),
            "random": rows(sds, [col.GROUP, col.TERM, "sd", *keep[1:]]),
            "correlations": rows(summary[summary["component"] == "cor"], [col.GROUP, *keep]),
            "cutpoints": rows(summary[summary["component"] == "cutpoint"], keep),
            "divergences": int(diag["divergences"]),
            "r_hat_max": _json_value(diag["r_hat_max"]),
            "ess_bulk_min": _json_value(diag["ess_bulk_min"]),
            "ess_tail_min": _json_value(diag["ess_tail_min"]),
            "bfmi_min": _json_value(diag["bfmi_min"]),
            "failures": list(diag["failures"]),
            "sampler": diag["sampler"],
            "draws": int(diag["draws"]),
            "chains": int(diag["chains"]),
            "ci_level": float(self._opts["ci_level"]),
            "seconds": float(diag["seconds"]),
        }

    # ---------------------------------------------------------------------------- new data

    def _new_rows(self, data: pd.DataFrame, *, where: str, need_y: bool) -> _NewRows:
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                f"the `data` parameter of {where} must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        inputs = self._inputs
        design = self._design.transform(data)
        keep = [c for c in design.X.columns if c != pmod.INTERCEPT]
        X_data = design.X.loc[:, keep].to_numpy(dtype=float)
        Zs, index, labels = [], [], []
        for new in design.random:
            frame = data.loc[design.rows, list(new.factors)]
            if len(new.factors) == 1:
                lab = frame.iloc[:, 0].to_numpy()
            else:
                lab = frame.astype(str).agg(":".join, axis=1).to_numpy()
            Zs.append(np.asarray(new.Z, dtype=float))
            index.append(np.asarray(new.codes, dtype=int))
            labels.append(lab)
        y = None
        if need_y:
            values = np.asarray(design.y, dtype=float)
            if np.isnan(values).any():
                raise FormulaError(
                    f"{where}: the data need the response {self._spec.response!r} in every row"
                )
            if inputs.family == "gaussian":
                y = values
            else:
                cats = np.asarray(inputs.categories, dtype=float)
                y = np.searchsorted(cats, values)
                bad = (y >= len(cats)) | (cats[np.minimum(y, len(cats) - 1)] != values)
                if bad.any():
                    raise FormulaError(
                        f"{where}: responses {sorted(set(values[bad].tolist()))} are not among "
                        f"the fitted categories {list(inputs.categories)}"
                    )
        return _NewRows(pd.Index(design.rows), X_data, Zs, index, labels, y)

    def _block_cov(self, r: int) -> np.ndarray:
        """Data-scale covariance of block ``r`` per draw, ``S x q x q``."""
        sd = self._draws[f"sd_{r}"]
        if self._inputs.random[r].correlated:
            cor = self._draws[f"cor_{r}"]
        else:
            cor = np.broadcast_to(np.eye(sd.shape[1]), (*sd.shape, sd.shape[1]))
        return sd[:, :, None] * cor * sd[:, None, :]

    def linear_predictor(self) -> np.ndarray:
        """Posterior draws of the linear predictor of every fitted row.

        Returns
        -------
        numpy.ndarray
            ``(chains x draws) x rows``, chains stacked in order as in ``idata_.posterior``;
            on the data's scale: the fixed part plus each row's group effects (for the
            ordinal family, the latent location before the cutpoints).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("linear_predictor")
        return self._eta_train()

    def predict_proba(
        self,
        data: pd.DataFrame,
        *,
        new_groups: Literal["population", "zero", "raise"] = "population",
    ) -> pd.DataFrame:
        """Posterior mean probability of each rating category for new or observed rows.

        Parameters
        ----------
        data : pandas.DataFrame
            Predictor and grouping columns of the formula (the response is not needed).
        new_groups : {"population", "zero", "raise"}, default "population"
            Rows whose group level was not in the fitted data (a new participant):
            ``population`` averages over the fitted distribution of group effects (the
            prediction for a new participant drawn from the population), ``zero`` sets
            the effects to 0 (a typical participant), ``raise`` raises. Known levels
            always use their posterior effects.

        Returns
        -------
        pandas.DataFrame
            One row per usable row of ``data`` (its index), one column per category;
            rows sum to 1.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InvalidParameterError
            For the gaussian family or an invalid ``new_groups``.
        FormulaError
            When ``data`` lack a predictor, or ``new_groups="raise"`` meets a new level.

        Notes
        -----
        For ``population``, the new levels' effects add a normal term with variance
        ``sum_r z_r' Sigma_r z_r`` to the linear predictor; it is integrated out exactly
        for the probit link and by 40-point Gauss-Hermite quadrature for the logit link,
        draw by draw, before averaging over the posterior.
        """
        where = "BayesianMixedModel.predict_proba"
        self._check_fitted("predict_proba")
        if self._inputs.family != "ordinal":
            raise InvalidParameterError(
                f"{where} needs family='ordinal'; this model is {self._inputs.family!r}"
            )
        check_choice(new_groups, ("population", "zero", "raise"), name="new_groups", where=where)
        new = self._new_rows(data, where=where, need_y=False)
        draws = self._draws
        S = draws["fixed"].shape[0]
        eta = self._eta(new.X_data, new.Z, new.index)
        tau2 = np.zeros_like(eta)
        for r, block in enumerate(self._inputs.random):
            seen = new.index[r] >= 0
            if not seen.all() and new_groups == "raise":
                unseen = sorted({str(v) for v in new.labels[r][~seen]})
                raise FormulaError(
                    f"{where}: levels {unseen} of {block.group!r} were not in the fitted data "
                    "(new_groups='raise')"
                )
            if new_groups == "population" and not seen.all():
                cov = self._block_cov(r)
                var = np.einsum("nq,sqp,np->sn", new.Z[r], cov, new.Z[r])
                tau2 = tau2 + np.where(seen[None, :], 0.0, var)
        cut = draws["cutpoints"]
        link = self._inputs.link
        if link == "probit":
            scale = np.sqrt(1.0 + tau2)
            cdf = pmod.ordinal_cdf((cut[:, None, :] - eta[:, :, None]) / scale[:, :, None], link)
        else:
            nodes, weights = _normal_quadrature()
            cdf = np.zeros((S, eta.shape[1], cut.shape[1]))
            tau = np.sqrt(tau2)
            for x, w in zip(nodes, weights, strict=True):
                shifted = eta + tau * x
                cdf += w * pmod.ordinal_cdf(cut[:, None, :] - shifted[:, :, None], link)
        ones = np.ones((*cdf.shape[:2], 1))
        probs = np.diff(np.concatenate([0.0 * ones, cdf, ones], axis=-1), axis=-1)
        mean = np.clip(probs, 0.0, 1.0).mean(axis=0)
        mean = mean / mean.sum(axis=1, keepdims=True)
        return pd.DataFrame(mean, index=new.rows, columns=list(self._inputs.categories))

    def loo(self, *, pointwise: bool = False) -> Any:
        """PSIS-LOO estimate of the expected log predictive density (``arviz.loo``).

        Parameters
        ----------
        pointwise : bool, default False
            Also return the pointwise values and Pareto k.

        Returns
        -------
        arviz.ELPDData
            ``elpd_loo``, ``se``, ``p_loo`` (and ``loo_i``, ``pareto_k``).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.

        Warns
        -----
        DataQualityWarning
            When some Pareto k exceed 0.7 (the estimate is unreliable for those
            observations; :func:`leave_one_group_out` does not need PSIS).
        """
        self._check_fitted("loo")
        return _loo(self.idata_, pointwise=pointwise, name="BayesianMixedModel.loo")

    # ---------------------------------------------------------------------------- checking

    def plot_ppc(self, *, group: str | None = None, max_groups: int = 12) -> Any:
        """Posterior predictive check: observed vs predicted rating distribution.

        Parameters
        ----------
        group : str, optional
            Grouping factor of the per-group panels; the first one of the formula by
            default.
        max_groups : int, default 12
            Number of group levels drawn (the first ones in sorted order).

        Returns
        -------
        matplotlib.figure.Figure
            First panel: all observations; then one panel per group level. Bars:
            observed proportion per category (or bin); points and lines: posterior
            predictive mean and ``ci_level`` interval of that proportion.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InvalidParameterError
            For an unknown ``group``.
        """
        where = "BayesianMixedModel.plot_ppc"
        self._check_fitted("plot_ppc")
        check_int(max_groups, name="max_groups", where=where, minimum=0)
        from matplotlib.figure import Figure

        inputs = self._inputs
        blocks = {b.group: b for b in inputs.random}
        if group is None and blocks:
            group = next(iter(blocks))
        if group is not None and group not in blocks:
            raise InvalidParameterError(
                f"the `group` parameter of {where} must be one of {sorted(blocks)}; got {group!r}"
            )
        obs = np.asarray(self.idata_.observed_data["y"].values, dtype=float)
        pred = _flat(np.asarray(self.idata_.posterior_predictive["y"].values, dtype=float))
        if inputs.family == "ordinal":
            obs = inputs.y.astype(float)
            if all(isinstance(c, numbers.Real) for c in inputs.categories):
                pred = np.searchsorted(np.asarray(inputs.categories, dtype=float), pred)
            labels = [str(c) for c in inputs.categories]
            edges = np.arange(len(labels) + 1) - 0.5
        else:
            uniq = np.unique(obs)
            if len(uniq) <= 15 and np.all(np.round(uniq) == uniq):
                centers = uniq
                mids = (centers[1:] + centers[:-1]) / 2
                edges = np.concatenate([[-np.inf], mids, [np.inf]])
                labels = [f"{c:g}" for c in centers]
            else:
                edges = np.histogram_bin_edges(obs, bins=12)
                edges[0], edges[-1] = -np.inf, np.inf
                inner = np.histogram_bin_edges(obs, bins=12)
                labels = [f"{(a + b) / 2:.3g}" for a, b in zip(inner[:-1], inner[1:], strict=True)]
        alpha = (1 - self._opts["ci_level"]) / 2
        panels: list[tuple[str, np.ndarray]] = [("all observations", np.ones(len(obs), bool))]
        if group is not None:
            block = blocks[group]
            for j, level in enumerate(block.levels[:max_groups]):
                panels.append((f"{group} {level}", block.codes == j))
        ncols = min(4, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        import matplotlib as mpl
        import seaborn as sns

        rc = {**sns.axes_style("whitegrid"), **sns.plotting_context("notebook", font_scale=0.85)}
        with mpl.rc_context(rc):
            fig = Figure(figsize=(3.2 * ncols, 2.6 * nrows + 0.5), layout="constrained")
            axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharey=True)).ravel()
            x = np.arange(len(labels))
            top = 0.0
            for ax, (title, mask) in zip(axes, panels, strict=False):
                o = np.histogram(obs[mask], bins=edges)[0] / mask.sum()
                p = np.stack([np.histogram(r, bins=edges)[0] for r in pred[:, mask]]) / mask.sum()
                lo, hi = np.quantile(p, [alpha, 1 - alpha], axis=0)
                mean = p.mean(axis=0)
                ax.bar(x, o, color="0.75", label="observed")
                ax.errorbar(
                    x,
                    mean,
                    yerr=[np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)],
                    fmt="o",
                    color=sns.color_palette("colorblind")[0],
                    label=f"predicted ({self._opts['ci_level']:.0%} interval)",
                )
                top = max(top, float(o.max()), float(hi.max()))
                ax.set_xticks(x, labels)
                ax.set_title(f"{title} (n={int(mask.sum())})", fontsize=9)
            axes[0].set_ylim(0, top * 1.08 + 1e-9)  # every interval whole, in every panel
            for ax in axes[len(panels) :]:
                ax.set_visible(False)
            axes[0].set_ylabel("proportion")
            handles, names = axes[0].get_legend_handles_labels()
            fig.legend(handles, names, loc="outside lower center", ncols=2, frameon=False)
            fig.suptitle(f"Posterior predictive check of {self._spec.response}", fontsize=10)
        return fig


def _json_value(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    return value if isinstance(value, (str, bool)) else str(value)


def _loo(idata: Any, *, pointwise: bool, name: str) -> Any:
    import arviz as az

    with warnings.catch_warnings():
        # ArviZ warns about large Pareto k; it is re-issued below in our own category
        warnings.filterwarnings("ignore", message=".*Pareto.*", category=UserWarning)
        result = az.loo(idata, pointwise=True)
    k = np.asarray(result["pareto_k"])
    good_k = float(result.get("good_k", 0.7))
    bad = int(np.sum(k > good_k))
    if bad:
        warnings.warn(
            f"{name}: {bad} of {k.size} observations have Pareto k > {good_k:.2f}, so PSIS-LOO "
            "is unreliable for them; use leave_one_group_out, or more draws",
            DataQualityWarning,
            stacklevel=3,
        )
    if not pointwise:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Pareto.*", category=UserWarning)
            result = az.loo(idata, pointwise=False)
    return result
