"""The Bayesian mixed model: options, sampling, the posterior on the data's scale and its tables.

Its predictions, PSIS-LOO and predictive plot are in ``_predict``, its summaries and JSON in
``_summary``; priors, diagnostics and model comparison have their own modules.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

import models._columns as col
from _empathic_base.words import caller, parameter
from models._backends import pymc_model as pmod
from models._backends.samplers import (
    MODEL_CACHE,
    check_sampler,
    default_sampler,
    import_pymc,
    require_sampler,
    run_nuts,
)
from models._checks import check_choice, check_seed, check_unit
from models._errors import (
    FormulaError,
    InvalidParameterError,
    NotFittedError,
    SamplingWarning,
)
from models._refgrid import predictor_frame
from models._version import __version__
from models.bayes._predict import _Predictions
from models.bayes._sampling import check_min_levels, sufficiency, with_min_levels
from models.bayes._summary import _Summaries
from models.bayes.diagnostics import AUTO_EVERY, _as_dataset, sampling_diagnostics
from models.bayes.estimate import (
    PROBE_SIZE,
    announce,
    check_counts,
    check_storage,
    estimate_sampling,
    refuse_too_long,
)
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


def _gaussian_loglik(y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    z = (y[None, :] - mu) / sigma[:, None]
    return -0.5 * z**2 - np.log(sigma)[:, None] - 0.5 * math.log(2.0 * math.pi)


class BayesianMixedModel(_Predictions, _Summaries):
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
    draws : int or "auto", default 10000
        Draws kept per chain, at most 1,000,000 (:data:`~models.limits.BAYES_MAX_DRAWS`);
        draws whose storage is estimated over 8 GB are refused before sampling, and a run
        that the probe of a large fit estimates at more than a day is refused with the draws
        that fit. The group-level sds are the slowest-mixing parameters (the
        story sd of the study-sized model, 600 stories rated about twice each, gains about
        0.07 effective draws per draw): 2 x 5,000 draws only just reach the diagnostics
        gate's tail ESS of 400, 2 x 10,000 clear it about threefold. ``"auto"`` (nutpie
        only) samples up to 10,000 per chain but stops at the first multiple of 1,000 at
        which R-hat and every bulk and tail ESS of the reported parameters pass the gate
        with a margin (ESS 500; :func:`~models.bayes.diagnostics.draws_suffice`), and
        keeps those draws; the same seed gives the same draws. A crossed model with a
        thousand levels (lme4's InstEval, 400 students) stops at 1,000 or 2,000.
    tune : int, default 500
        Tuning (warm-up) steps per chain; nutpie's adaptation settles within a few
        hundred. At most 1,000,000 (:data:`~models.limits.BAYES_MAX_TUNE`).
    chains : int, default 2
        Number of chains (run in parallel, up to the number of cores), at most 64
        (:data:`~models.limits.BAYES_MAX_CHAINS`).
    sampler : {"auto", "pymc", "nutpie", "numpyro"}, default "auto"
        NUTS implementation; ``auto`` is nutpie when it is installed (the ``fast`` extra),
        else PyMC's own; ``numpyro`` needs the ``jax`` extra. The model is built (and,
        for nutpie, compiled) once per structure -- formula terms, family, link, number of
        categories, number of levels of each grouping factor rounded up to a bucket (above
        16 levels, one of four sizes per doubling; the unused levels are dropped from the
        draws), priors -- and a refit of the same structure on other data reuses it with
        the new data swapped in.
    target_accept : float, default 0.9
        Step-size adaptation target; raise it when divergences are reported.
    ci_level : float, default 0.95
        Probability of the highest-density intervals ``ci_low, ci_high``.
    seed : int, optional
        Random seed; the same seed gives the same draws for a given sampler.
    min_levels : mapping of str to int, optional
        Build the named grouping factors' random-effects blocks with at least this many
        levels (before the padding to a bucket size): fits on subsets of one data set
        (cross-validation folds, whose training sets hold different numbers of participants)
        then share one model and one nutpie compilation. The extra levels belong to no
        observation and leave the posterior of everything else unchanged (only the same
        seed's draws differ); they are dropped from the draws.
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
        The two pointwise groups hold ``draws x chains x rows`` numbers each (1.6 GB of
        log-likelihood at 10,000 rows and 20,000 draws), so they are computed the first time
        ``idata_`` is read, not by :meth:`fit`; :meth:`loo` and :func:`compare` compute
        PSIS-LOO in blocks of rows without them (the same numbers as ``arviz.loo`` on
        ``idata_``).
    posterior_ : xarray.Dataset
        ``idata_.posterior``, read without computing the pointwise groups.
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
    fixed_ : pandas.DataFrame
        As :meth:`fixed_effects`: ``term, estimate`` (posterior mean), ``se`` (posterior sd),
        ``ci_low, ci_high`` (HDI), ``r_hat, ess_bulk, ess_tail``; the names the linear and
        ordinal mixed models use.
    thresholds_ : pandas.DataFrame
        As :meth:`cutpoints` (empty for the gaussian family).
    random_ : pandas.DataFrame
        As :meth:`random_effects`: the variance components (group-level sds and correlations,
        the gaussian residual sd).
    ranef_ : pandas.DataFrame
        As :meth:`group_effects`: each group's effects, ``group, term, level, estimate, ...``.
    converged_ : bool
        Whether the draws passed the diagnostics gate (``diagnostics_["passed"]``).
    meta_ : dict
        Provenance: package version, ``engine`` (``"bayes"``), ``backend`` (the sampler that
        ran), ``params`` (the formula and every option), ``formula``, ``n_used``,
        ``n_excluded``, ``groups``, ``sampling`` (sampler, draws, tune, chains,
        target_accept, seed), ``seed`` and ``diagnostics`` (the gate's measures, ``failures``
        and ``passed``).

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
        draws: int | Literal["auto"] = 10_000,
        tune: int = 500,
        chains: int = 2,
        sampler: Literal["auto", "pymc", "nutpie", "numpyro"] = "auto",
        target_accept: float = 0.9,
        ci_level: float = 0.95,
        seed: int | None = None,
        progressbar: bool | None = None,
        min_levels: Mapping[str, int] | None = None,
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
        self.min_levels = min_levels

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
        "min_levels",
    )

    def __repr__(self) -> str:
        return (
            f"BayesianMixedModel({self.formula!r}, family={self.family!r}, link={self.link!r}, "
            f"sampler={self.sampler!r}, draws={self.draws}, chains={self.chains})"
        )

    def _params(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._PARAMS}

    def _clone(self, **overrides: Any) -> BayesianMixedModel:
        params = self._params()
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
        auto = isinstance(self.draws, str) and self.draws == "auto"
        if auto and sampler != "nutpie":
            raise InvalidParameterError(
                f"{caller(where)}: {parameter('draws', where)} 'auto' (sample until the draws "
                f"suffice) needs the nutpie sampler ({parameter('sampler', where)}, the `fast` "
                f"extra); got {sampler!r}"
            )
        most = DEFAULT_SAMPLING["draws"] if auto else self.draws
        draws, tune, chains = check_counts(most, self.tune, self.chains, where=where)
        return {
            "auto": auto,
            "family": family,
            "link": link,
            "sampler": sampler,
            "priors": _resolve_priors(self.priors, family=family, link=link, where=where),
            "draws": draws,
            "tune": tune,
            "chains": chains,
            "target_accept": check_unit(self.target_accept, name="target_accept", where=where),
            "ci_level": check_unit(self.ci_level, name="ci_level", where=where),
            "seed": check_seed(self.seed, where=where),
            "min_levels": check_min_levels(self.min_levels, where=where),
        }

    def _check_fitted(self, where: str) -> None:
        if "_idata" not in vars(self):
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
        _warn_failures("fit", diagnostics)
        return self

    def refit(self, data: pd.DataFrame) -> BayesianMixedModel:
        """Fit the same model, with the same options, to other data.

        The formula, family, link, priors, sampler, draws, tune, chains, target acceptance,
        interval level and seed are this model's; ``self`` is unchanged.

        Parameters
        ----------
        data : pandas.DataFrame
            As :meth:`fit`.

        Returns
        -------
        BayesianMixedModel
            A new fitted model.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InvalidParameterError, FormulaError, ImportError
            As :meth:`fit`.

        Warns
        -----
        SamplingWarning
            When the draws fail the diagnostics gate; every failed check is named.
        """
        self._check_fitted("refit")
        out = self._clone()
        diagnostics = out._fit(data)
        _warn_failures("refit", diagnostics)
        return out

    def _fit(self, data: pd.DataFrame) -> dict[str, Any]:
        where = "BayesianMixedModel.fit"
        opts = self._validate()
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                f"the `data` parameter of {where} must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        require_sampler(opts["sampler"])
        from models.formula import build_design, parse_formula

        spec = parse_formula(self.formula)
        design = build_design(spec, data)
        if len(design.y) == 0:
            raise FormulaError(f"{where}: no complete rows for formula {self.formula!r}")
        inputs = pmod.prepare_inputs(design, family=opts["family"], link=opts["link"], where=where)
        inputs = with_min_levels(inputs, opts["min_levels"], where=where)
        check_storage(inputs, draws=opts["draws"], chains=opts["chains"], where=where)
        import_pymc()  # after the checks: a refused fit does not wait for PyMC
        # one model (and one compilation) per structure: a refit on other data swaps the data
        entry = MODEL_CACHE.get(
            pmod.model_structure(inputs, opts["priors"]),
            lambda: pmod.build_pymc_model(inputs, opts["priors"]),
        )
        entry.set_data(pmod.model_data(inputs))
        progress = self.progressbar
        size = opts["chains"] * (opts["draws"] + opts["tune"]) * inputs.n_obs
        if progress is None:
            progress = bool(sys.stderr.isatty()) and size >= 1_000_000
        sampling = {
            "sampler": opts["sampler"],
            "chains": opts["chains"],
            "target_accept": opts["target_accept"],
            "seed": opts["seed"],
        }
        if size >= PROBE_SIZE and opts["sampler"] == "nutpie":
            found = estimate_sampling(
                lambda draws, tune: run_nuts(
                    entry, draws=draws, tune=tune, progressbar=False, save_warmup=True, **sampling
                ),
                draws=opts["draws"],
                tune=opts["tune"],
                chains=opts["chains"],
            )
            refuse_too_long(found, draws=opts["draws"], tune=opts["tune"], where=where)
            announce(
                found,
                draws=opts["draws"],
                tune=opts["tune"],
                chains=opts["chains"],
                auto=opts["auto"],
            )
        run = run_nuts(
            entry,
            draws=opts["draws"],
            tune=opts["tune"],
            progressbar=progress,
            enough=sufficiency(inputs) if opts["auto"] else None,
            every=AUTO_EVERY,
            **sampling,
        )
        opts = {**opts, "draws": int(run.idata.posterior.sizes["draw"])}
        self._spec = spec
        self._design = design
        self._predictors = predictor_frame(design, data)  # the grid of emmeans()
        self._inputs = inputs
        self._opts = opts
        self.n_obs_ = inputs.n_obs
        self.categories_ = inputs.categories
        groups: dict[str, int] = {}
        for block in inputs.random:
            groups[block.group] = len(block.levels)
        self.groups_ = groups
        # the padding levels leave before anything reads the draws
        self._idata = self._assemble(pmod.drop_padding(run.idata, inputs), opts)
        vars(self).pop("_idata_full", None)  # a refit: the pointwise groups are recomputed
        table = self._tables(opts["ci_level"])
        summary = table[table["component"] != "effect"].drop(columns="level")
        self.summary_ = summary.reset_index(drop=True)
        effects = table[table["component"] == "effect"]
        self._effects = effects.drop(columns="component").reset_index(drop=True)
        diag = sampling_diagnostics(self._idata, var_names=self._reported_vars())
        diag.update(
            sampler=run.sampler,
            seconds=run.seconds,
            compile_seconds=run.compile_seconds,
            draws=opts["draws"],
            draws_rule="auto" if opts["auto"] else "fixed",
            tune=opts["tune"],
            chains=opts["chains"],
        )
        self.diagnostics_ = diag
        self.meta_ = {
            "package_version": __version__,
            "engine": "bayes",
            "backend": run.sampler,
            "params": {
                "formula": self.formula,
                **{name: getattr(self, name) for name in self._PARAMS},
            },
            "formula": self.formula,
            "n_used": self.n_obs_,
            "n_excluded": int(design.n_dropped),
            "groups": dict(groups),
            "sampling": {
                "sampler": run.sampler,
                "draws": opts["draws"],
                "draws_rule": "auto" if opts["auto"] else "fixed",
                "tune": opts["tune"],
                "chains": opts["chains"],
                "target_accept": opts["target_accept"],
                "seed": opts["seed"],
            },
            "seed": opts["seed"],
            "diagnostics": {
                key: (list(value) if key == "failures" else value)
                for key, value in diag.items()
                if key in _META_DIAGNOSTICS
            },
        }
        return diag

    def _reported_vars(self) -> list[str]:
        names = ["fixed"] if self._inputs.fixed_terms or self._inputs.intercept else []
        names += ["cutpoints"] if self._inputs.family == "ordinal" else ["sigma"]
        for r, block in enumerate(self._inputs.random):
            names += [f"sd_{r}"] + ([f"cor_{r}"] if block.correlated else [])
        return names

    def _assemble(self, idata: Any, opts: dict[str, Any]) -> Any:
        """Add the data-scale draws and the observed data (the pointwise groups: ``idata_``)."""
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
        self._draws = {k: pmod.flatten_draws(v) for k, v in draws.items()}
        obs_coords = {"obs": np.arange(inputs.n_obs)}
        groups = {
            "posterior": new_posterior,
            "sample_stats": idata.sample_stats,
            "observed_data": xr.Dataset(
                {"y": xr.DataArray(self._observed_values(), dims=("obs",))}, coords=obs_coords
            ),
        }
        return az.InferenceData(**groups)

    @property
    def idata_(self) -> Any:
        """The draws as ``arviz.InferenceData``, with the pointwise groups (see the class)."""
        if "_idata" not in vars(self):
            raise AttributeError("idata_: the model is not fitted; call fit(data) first")
        if "_idata_full" not in vars(self):
            self._idata_full = self._with_pointwise_groups(self._idata)
        return self._idata_full

    @property
    def posterior_(self) -> Any:
        """The posterior draws (``idata_.posterior``), without the pointwise groups."""
        self._check_fitted("posterior_")
        return self._idata.posterior

    def _with_pointwise_groups(self, lean: Any) -> Any:
        """``lean`` plus ``log_likelihood`` and ``posterior_predictive`` (``S x n`` each)."""
        import arviz as az
        import xarray as xr

        post = lean.posterior
        n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
        loglik, ppc = self._pointwise_draws(loglik=True)
        n = self._inputs.n_obs
        chain_draw = ("chain", "draw")
        coords = {"chain": post["chain"].values, "draw": post["draw"].values}
        obs_coords = {"obs": np.arange(n)}
        shape = (n_chain, n_draw, n)
        return az.InferenceData(
            posterior=post,
            sample_stats=lean.sample_stats,
            log_likelihood=xr.Dataset(
                {"y": xr.DataArray(loglik.reshape(shape), dims=(*chain_draw, "obs"))},
                coords={**coords, **obs_coords},
            ),
            posterior_predictive=xr.Dataset(
                {"y": xr.DataArray(ppc.reshape(shape), dims=(*chain_draw, "obs"))},
                coords={**coords, **obs_coords},
            ),
            observed_data=lean.observed_data,
        )

    def _pointwise_draws(self, *, loglik: bool) -> tuple[np.ndarray | None, np.ndarray]:
        """Return the ``S x n`` log-likelihood (when asked) and predictive draws of the rows.

        The predictive draws (on the data's scale) use the fit's seed, block by block of
        draws, so they are the same whenever they are computed.
        """
        inputs = self._inputs
        y = inputs.y_data if inputs.family == "gaussian" else inputs.y
        rng = np.random.default_rng(self._opts["seed"])
        # draws in blocks of about _BLOCK cells: the S x n temporaries stay small at any size
        S, n = len(next(iter(self._draws.values()))), inputs.n_obs
        values = np.empty((S, n)) if loglik else None
        codes = np.min_scalar_type(len(inputs.categories)) if inputs.family == "ordinal" else float
        ppc = np.empty((S, n), dtype=codes)
        step = max(1, _BLOCK // max(n, 1))
        Z = [block.Z * block.scale + block.center for block in inputs.random]
        levels = [block.codes for block in inputs.random]
        for start in range(0, S, step):
            part = slice(start, min(start + step, S))
            eta = self._eta(inputs.X_data, Z, levels, part=part)
            if values is not None:
                values[part] = self._loglik(eta, y, part=part)
            ppc[part] = self._simulate(eta, rng, part=part)
            del eta
        return values, self._to_values(ppc)

    def _loglik_rows(self, rows: slice) -> np.ndarray:
        """Pointwise log-likelihood of the fitted rows ``rows``, ``S x len(rows)``."""
        inputs = self._inputs
        y = inputs.y_data if inputs.family == "gaussian" else inputs.y
        Z = [block.Z[rows] * block.scale + block.center for block in inputs.random]
        levels = [block.codes[rows] for block in inputs.random]
        return self._loglik(self._eta(inputs.X_data[rows], Z, levels), y[rows])

    def _observed_values(self) -> np.ndarray:
        inputs = self._inputs
        if inputs.family == "gaussian":
            return inputs.y_data
        return self._to_values(inputs.y)

    def _to_values(self, codes: np.ndarray) -> np.ndarray:
        """Category codes -> category values when the categories are numbers.

        Whole-number categories (ratings 1-5) come back in the smallest integer type that holds
        them: the predictive draws are ``S x n`` values, 1.6 GB as floats at 10,000 rows and
        20,000 draws, 0.2 GB as int8.
        """
        inputs = self._inputs
        if inputs.family == "gaussian":
            return codes
        if all(isinstance(c, numbers.Real) for c in inputs.categories):
            values = np.asarray(inputs.categories, dtype=float)
            if np.all(values == np.round(values)):
                fits = [t for t in (np.int8, np.int16, np.int32, np.int64) if _holds(t, values)]
                values = values.astype(fits[0]) if fits else values
            return values[codes]
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
        post = self._idata.posterior
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
    # The fitted attributes of the linear and ordinal mixed models (``fixed_``,
    # ``thresholds_``, ``random_``, ``ranef_``, ``converged_``); the methods are their aliases.

    @property
    def fixed_(self) -> pd.DataFrame:
        """Posterior summary of the fixed effects (:meth:`fixed_effects`)."""
        return self.fixed_effects()

    @property
    def thresholds_(self) -> pd.DataFrame:
        """Posterior summary of the ordinal cutpoints (:meth:`cutpoints`)."""
        return self.cutpoints()

    @property
    def random_(self) -> pd.DataFrame:
        """Posterior summary of the variance components (:meth:`random_effects`)."""
        return self.random_effects()

    @property
    def ranef_(self) -> pd.DataFrame:
        """Posterior summary of each group's effects (:meth:`group_effects`)."""
        return self.group_effects()

    @property
    def converged_(self) -> bool:
        """Whether the draws passed the diagnostics gate (``diagnostics_["passed"]``)."""
        self._check_fitted("converged_")
        return bool(self.diagnostics_["passed"])

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

    # ---------------------------------------------------------------------------- new data

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


_META_DIAGNOSTICS = (
    "r_hat_max",
    "ess_bulk_min",
    "ess_tail_min",
    "divergences",
    "bfmi_min",
    "failures",
    "passed",
    "seconds",
)
"""The entries of ``diagnostics_`` that ``meta_["diagnostics"]`` repeats."""


def _warn_failures(method: str, diagnostics: dict[str, Any]) -> None:
    """Warn, at the caller of ``method``, when the draws failed the diagnostics gate."""
    if diagnostics["failures"]:
        warnings.warn(
            f"BayesianMixedModel.{method}: the draws failed the diagnostics gate: "
            + "; ".join(diagnostics["messages"]),
            SamplingWarning,
            stacklevel=3,
        )


def _holds(dtype: type, values: np.ndarray) -> bool:
    """Whether an integer type holds every value."""
    info = np.iinfo(dtype)
    return bool(values.min() >= info.min and values.max() <= info.max)
