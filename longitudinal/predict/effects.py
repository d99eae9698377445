"""Which person and session characteristics go with higher empathy: both engines, one table.

:func:`fit_empathy_models` fits the empathy model of :func:`longitudinal.predict.empathy_formula`
with a linear mixed model on the rating (in points of the study's declared scale,
``[ratings] scale_min``-``scale_max`` of study.toml) and, as the kind of the scale decides
(:mod:`longitudinal.study.rating_scale`), the cumulative link mixed model and (optionally) the
Bayesian ordinal model of an ordinal scale, or the Bayesian linear mixed model of a continuous
one, and returns their effects on one scale with a variance decomposition.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._checks import check_bool, check_int, check_unit
from longitudinal._display import Result
from longitudinal._errors import InvalidParameterError
from longitudinal.narrate.gates import fit_problem, sampling_failure
from longitudinal.narrate.sentences import effects_apa
from longitudinal.predict.common import _short, sampling_settings
from longitudinal.predict.predictors import EmpathyData, empathy_formula
from longitudinal.study.rating_scale import (
    bin_midpoints,
    bin_ratings,
    binned_counts,
    bins_rule,
    check_ordinal_bins,
    scale_kind,
    scale_rule,
)
from models import DataQualityWarning, ModelsError
from models.bayes import default_sampler
from models.formula import formula_name
from surveys import __version__

EFFECT_COLUMNS = [
    "engine",
    "scale",
    "quantity",
    "term",
    "label",
    "kind",
    "part",
    "estimate",
    "se",
    "df",
    "p_value",
    "ci_low",
    "ci_high",
    "prob_positive",
    "r_hat",
    "ess_bulk",
]
"""Columns of :attr:`EmpathyEffects.effects`."""

VARIANCE_COLUMNS = [
    "engine",
    "model",
    "scale",
    "component",
    "variance",
    "variance_ci_low",
    "variance_ci_high",
    "icc",
    "icc_ci_low",
    "icc_ci_high",
    "at_boundary",
]
"""Columns of :attr:`EmpathyEffects.variance`."""


@dataclass(frozen=True, repr=False)
class EmpathyEffects(Result):
    """Empathy effects estimated by the linear mixed model, the ordinal and Bayesian models.

    Attributes
    ----------
    effects : pandas.DataFrame
        One row per engine x scale x predictor (columns :data:`EFFECT_COLUMNS`):
        ``engine`` (``lmm``, ``clmm``, ``bayes_ordinal`` or ``bayes_gaussian``), ``scale``
        (``rating``: rating points per unit of the predictor; ``logit``: latent logit units
        per unit), ``quantity`` (``coefficient``, or ``average marginal effect`` for the
        ordinal models on the rating scale), ``term``, ``label``, ``kind``, ``part``,
        ``estimate``, ``se``
        (standard error or posterior SD), ``df`` and ``p_value`` (LMM: Satterthwaite; clmm: z,
        df NaN), ``ci_low, ci_high`` (LMM: t interval; clmm: Wald; Bayesian: highest-density
        interval), ``prob_positive`` (posterior
        probability that the effect is above 0), ``r_hat``, ``ess_bulk`` (Bayesian).
    variance : pandas.DataFrame
        Variance decomposition (columns :data:`VARIANCE_COLUMNS`): ``engine``, ``model``
        (``unconditional``: intercept-only LMM with participant, session and story
        intercepts; ``conditional``: the effects model), ``scale``, ``component``
        (``participant``, ``session``, ``story``, ``residual``), ``variance`` with its
        interval (Bayesian only), ``icc`` (share of the total variance) with its interval,
        and ``at_boundary`` (LMM variance estimated at 0).
    ordinal_bins : pandas.DataFrame or None
        With ``ordinal_bins=K`` (a continuous scale): the K bins the ordinal models fitted,
        :func:`longitudinal.study.rating_scale.binned_counts` of the fitted ratings (``bin, low,
        high, label, midpoint, n, proportion``); None otherwise.
    predictors : pandas.DataFrame
        :attr:`EmpathyData.predictors`.
    formula : str
        The effects model.
    lmm : models.lmm.LinearMixedModel
        The fitted LMM.
    clmm : models.ordinal.OrdinalMixedModel or None
        The fitted cumulative link mixed model (None when not fitted).
    bayes : models.bayes.BayesianMixedModel or None
        The fitted Bayesian model (None when not requested).
    notes : tuple of str
        Warnings raised by the fits (convergence, boundary, sampling diagnostics).
    meta : dict
        Options, sizes (``n_obs``, ``n_participants``), the declared rating scale
        (``scale_min``, ``scale_max``), ``scale_kind`` (``ordinal`` or ``continuous``) and
        ``scale_rule`` (the sentence that says why), ``ordinal_bins`` (K and the binning
        rule, or None), timings and package version.
    """

    effects: pd.DataFrame
    variance: pd.DataFrame
    predictors: pd.DataFrame
    formula: str
    lmm: Any
    bayes: Any
    notes: tuple[str, ...]
    meta: dict[str, Any]
    clmm: Any = None
    ordinal_bins: pd.DataFrame | None = None

    def _title(self) -> str:
        m = self.meta
        return (
            f"EmpathyEffects: {self.formula} on {m.get('n_obs', '?')} ratings of "
            f"{m.get('n_participants', '?')} participants"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        keep = ["engine", "scale", "term", "estimate", "ci_low", "ci_high", "p_value"]
        return [
            ("Effects per SD of each predictor (week: per week)", self.effects[keep]),
            ("Variance decomposition", self.variance[["engine", "model", "component", "icc"]]),
        ]

    def to_apa(self) -> str:
        """Return what predicts the ratings in APA style, with the report's gates.

        One sentence per predictor (linear mixed model: *b*, interval, *t*, *p*; the ordinal
        models beside it). An interval that includes zero is given no direction; a singular or
        unconverged model, or a Bayesian fit that failed its sampling diagnostics, is said to
        have failed its checks and none of its numbers is given (nor advice on refitting it);
        below 20 participants the text ends with the small-sample caveat.
        See :func:`longitudinal.narrate.sentences.effects_apa`.

        Returns
        -------
        str
            The paragraph; statistics are marked ``*b*`` (italic).
        """
        return " ".join(
            effects_apa(
                self.effects,
                ci_level=float(self.meta.get("ci_level", 0.95)),
                n_participants=self.meta.get("n_participants"),
                n_obs=self.meta.get("n_obs"),
                lmm_problem=fit_problem(self.lmm),
                clmm_problem=fit_problem(self.clmm) if self.clmm is not None else None,
                bayes_problem=sampling_failure(self.bayes),
            )
        )


def _hdi(draws: np.ndarray, ci_level: float) -> tuple[float, float]:
    """Highest-density interval of one quantity's draws (:func:`arviz.hdi`)."""
    import arviz as az

    low, high = az.hdi(np.asarray(draws, dtype=float), hdi_prob=ci_level)
    return float(low), float(high)


def _flat(values: np.ndarray) -> np.ndarray:
    return values.reshape(-1, *values.shape[2:])


def _random_blocks(data: pd.DataFrame, formula: str) -> list[Any]:
    """Return the random-effect blocks of ``formula`` on ``data`` (group and terms of each)."""
    from models.formula import build_design, parse_formula

    return list(build_design(parse_formula(formula), data).random)


def _density(x: np.ndarray, link: str) -> np.ndarray:
    from scipy import special, stats

    if link == "probit":
        return stats.norm.pdf(x)
    p = special.expit(x)
    return p * (1.0 - p)


def _lmm_effects(model: Any, predictors: pd.DataFrame) -> pd.DataFrame:
    fixed = model.fixed_.set_index("term")
    info = predictors.set_index("predictor")
    rows = []
    for term in predictors["predictor"]:
        rec = fixed.loc[term]
        rows.append(
            {
                "engine": "lmm",
                "scale": "rating",
                "quantity": "coefficient",
                "term": term,
                "label": info.at[term, "label"],
                "kind": info.at[term, "kind"],
                "part": info.at[term, "part"],
                "estimate": rec["estimate"],
                "se": rec["se"],
                "df": rec["df"],
                "p_value": rec["p_value"],
                "ci_low": rec["ci_low"],
                "ci_high": rec["ci_high"],
            }
        )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def _category_values(model: Any, midpoints: np.ndarray | None) -> np.ndarray:
    """Return the rating each fitted category stands for: itself, or its bin's midpoint."""
    cats = np.asarray(model.categories_, dtype=float)
    if midpoints is None:
        return cats
    return np.asarray(midpoints, dtype=float)[cats.astype(int) - 1]


def _clmm_effects(
    model: Any, predictors: pd.DataFrame, midpoints: np.ndarray | None = None
) -> tuple[pd.DataFrame, float]:
    """Coefficients (logit) and average marginal effects on the expected rating (Wald).

    With binned ratings (``midpoints`` of the bins), the expected rating is that of the bin
    midpoints, so the average marginal effect is in rating points too.
    """
    info = predictors.set_index("predictor")
    eta = model.linear_predictor().to_numpy()
    gaps = np.diff(_category_values(model, midpoints))
    slope = float(
        (_density(model.cutpoints_[None, :] - eta[:, None], model.link) * gaps).sum(axis=1).mean()
    )
    fixed = model.fixed_.set_index("term")
    rows = []
    for term in predictors["predictor"]:
        if term not in fixed.index:
            continue
        rec = fixed.loc[term]
        base = {
            "engine": "clmm",
            "term": term,
            "label": info.at[term, "label"],
            "kind": info.at[term, "kind"],
            "part": info.at[term, "part"],
            "df": np.nan,
            "p_value": rec["p_value"],
        }
        for scale, quantity, factor in (
            ("logit", "coefficient", 1.0),
            ("rating", "average marginal effect", slope),
        ):
            rows.append(
                {
                    **base,
                    "scale": scale,
                    "quantity": quantity,
                    "estimate": rec["estimate"] * factor,
                    "se": rec["se"] * factor,
                    "ci_low": rec["ci_low"] * factor,
                    "ci_high": rec["ci_high"] * factor,
                }
            )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS), slope


def _point_shares(
    engine: str, label: str, scale: str, comps: list[tuple[str, float]]
) -> pd.DataFrame:
    """Variance shares of point estimates (no intervals); a component at 0 is flagged."""
    total = sum(v for _, v in comps)
    rows = [
        {
            "engine": engine,
            "model": label,
            "scale": scale,
            "component": component,
            "variance": var,
            "variance_ci_low": np.nan,
            "variance_ci_high": np.nan,
            "icc": var / total,
            "icc_ci_low": np.nan,
            "icc_ci_high": np.nan,
            "at_boundary": bool(component != "residual" and var <= 1e-8 * total),
        }
        for component, var in comps
    ]
    return pd.DataFrame(rows, columns=VARIANCE_COLUMNS)


def _clmm_variance(model: Any, *, id_col: str) -> pd.DataFrame:
    names = {id_col: "participant", "session_id": "session", "story_id": "story"}
    rand = model.random_[model.random_["term"] == "Intercept"]
    comps = [(names.get(r.group, r.group), float(r.variance)) for r in rand.itertuples()]
    comps.append(("residual", math.pi**2 / 3.0 if model.link == "logit" else 1.0))
    return _point_shares("clmm", "conditional", model.link, comps)


def _bayes_effects(
    model: Any, predictors: pd.DataFrame, ci_level: float, midpoints: np.ndarray | None = None
) -> tuple[pd.DataFrame, np.ndarray]:
    info = predictors.set_index("predictor")
    post = model.posterior_
    terms = [str(t) for t in post["fixed"].coords["term"].values]
    beta = _flat(post["fixed"].values)
    cut = _flat(post["cutpoints"].values)
    link = model.link
    eta = model.linear_predictor()
    # d E[y] / d eta = sum_k f(c_k - eta) for y = 1 + #{k: latent > c_k}, categories 1 apart;
    # with other category values (or bin midpoints) use the spacing between consecutive ones.
    gaps = np.diff(_category_values(model, midpoints))
    slope = (_density(cut[:, None, :] - eta[:, :, None], link) * gaps).sum(axis=-1).mean(axis=1)
    table = model.fixed_effects().set_index("term")
    rows = []
    for j, term in enumerate(terms):
        if term not in info.index:
            continue
        base = {
            "engine": "bayes_ordinal",
            "term": term,
            "label": info.at[term, "label"],
            "kind": info.at[term, "kind"],
            "part": info.at[term, "part"],
            "df": np.nan,
            "p_value": np.nan,
            "r_hat": table.at[term, "r_hat"],
            "ess_bulk": table.at[term, "ess_bulk"],
        }
        for scale, quantity, draws in (
            ("logit", "coefficient", beta[:, j]),
            ("rating", "average marginal effect", beta[:, j] * slope),
        ):
            lo, hi = _hdi(draws, ci_level)
            rows.append(
                {
                    **base,
                    "scale": scale,
                    "quantity": quantity,
                    "estimate": float(draws.mean()),
                    "se": float(draws.std(ddof=1)),
                    "ci_low": lo,
                    "ci_high": hi,
                    "prob_positive": float(np.mean(draws > 0)),
                }
            )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS), slope


def _bayes_gaussian_effects(model: Any, predictors: pd.DataFrame, ci_level: float) -> pd.DataFrame:
    """Coefficients of the Bayesian linear mixed model, in rating points (HDI intervals)."""
    info = predictors.set_index("predictor")
    post = model.posterior_
    terms = [str(t) for t in post["fixed"].coords["term"].values]
    beta = _flat(post["fixed"].values)
    table = model.fixed_effects().set_index("term")
    rows = []
    for j, term in enumerate(terms):
        if term not in info.index:
            continue
        draws = beta[:, j]
        lo, hi = _hdi(draws, ci_level)
        rows.append(
            {
                "engine": "bayes_gaussian",
                "scale": "rating",
                "quantity": "coefficient",
                "term": term,
                "label": info.at[term, "label"],
                "kind": info.at[term, "kind"],
                "part": info.at[term, "part"],
                "estimate": float(draws.mean()),
                "se": float(draws.std(ddof=1)),
                "df": np.nan,
                "p_value": np.nan,
                "ci_low": lo,
                "ci_high": hi,
                "prob_positive": float(np.mean(draws > 0)),
                "r_hat": table.at[term, "r_hat"],
                "ess_bulk": table.at[term, "ess_bulk"],
            }
        )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def _intercept_variances(
    post: Any, blocks: list[Any], *, id_col: str
) -> list[tuple[str, np.ndarray]]:
    """Posterior draws of each random-intercept variance, named by its grouping."""
    names = {id_col: "participant", "session_id": "session", "story_id": "story"}
    comps: list[tuple[str, np.ndarray]] = []
    for r, block in enumerate(blocks):
        terms = [str(t) for t in block.terms]
        if "Intercept" in terms:
            sd = _flat(post[f"sd_{r}"].values)[:, terms.index("Intercept")]
            comps.append((names.get(block.group, block.group), sd**2))
    return comps


def _bayes_gaussian_variance(
    model: Any, blocks: list[Any], *, id_col: str, ci_level: float
) -> pd.DataFrame:
    """Variance shares of the Bayesian linear mixed model on the rating scale (HDIs)."""
    post = model.posterior_
    comps = _intercept_variances(post, blocks, id_col=id_col)
    comps.append(("residual", _flat(post["sigma"].values) ** 2))
    total = sum(v for _, v in comps)
    rows = []
    for component, var in comps:
        share = var / total
        vlo, vhi = _hdi(var, ci_level)
        ilo, ihi = _hdi(share, ci_level)
        rows.append(
            {
                "engine": "bayes_gaussian",
                "model": "conditional",
                "scale": "rating",
                "component": component,
                "variance": float(var.mean()),
                "variance_ci_low": vlo,
                "variance_ci_high": vhi,
                "icc": float(share.mean()),
                "icc_ci_low": ilo,
                "icc_ci_high": ihi,
                "at_boundary": False,
            }
        )
    return pd.DataFrame(rows, columns=VARIANCE_COLUMNS)


def _lmm_variance(model: Any, *, id_col: str, label: str) -> pd.DataFrame:
    rand = model.random_
    names = {id_col: "participant", "session_id": "session", "story_id": "story"}
    intercepts = rand[(rand["term"] == "Intercept") | (rand["group"] == "Residual")]
    comps = [
        ("residual" if r.group == "Residual" else names.get(r.group, r.group), float(r.variance))
        for r in intercepts.itertuples(index=False)
    ]
    return _point_shares("lmm", label, "rating", comps)


def _bayes_variance(model: Any, blocks: list[Any], *, id_col: str, ci_level: float) -> pd.DataFrame:
    post = model.posterior_
    comps = _intercept_variances(post, blocks, id_col=id_col)
    resid = math.pi**2 / 3.0 if model.link == "logit" else 1.0
    comps.append(("residual", np.full_like(comps[0][1] if comps else np.zeros(1), resid)))
    total = sum(v for _, v in comps)
    rows = []
    for component, var in comps:
        share = var / total
        vlo, vhi = _hdi(var, ci_level)
        ilo, ihi = _hdi(share, ci_level)
        fixed_resid = component == "residual"
        rows.append(
            {
                "engine": "bayes_ordinal",
                "model": "conditional",
                "scale": model.link,
                "component": component,
                "variance": float(var.mean()),
                "variance_ci_low": np.nan if fixed_resid else vlo,
                "variance_ci_high": np.nan if fixed_resid else vhi,
                "icc": float(share.mean()),
                "icc_ci_low": ilo,
                "icc_ci_high": ihi,
                "at_boundary": False,
            }
        )
    return pd.DataFrame(rows, columns=VARIANCE_COLUMNS)


def fit_empathy_models(
    data: EmpathyData,
    *,
    bayes: bool = True,
    include_clmm: bool = True,
    story_effects: bool = True,
    draws: int | None = None,
    tune: int | None = None,
    chains: int | None = None,
    sampler: str | None = None,
    seed: int | None = None,
    ci_level: float = 0.95,
    target_accept: float = 0.9,
    ordinal_bins: int | None = None,
) -> EmpathyEffects:
    """Fit the empathy model with both engines and tabulate effects and variance shares.

    Parameters
    ----------
    data : EmpathyData
        From :func:`empathy_data`.
    bayes : bool, default True
        Also fit the Bayesian model: the cumulative-logit model of an ordinal scale (needs
        whole-number ratings) or of the binned ratings (``ordinal_bins``); the gaussian
        (linear mixed) model of a continuous scale.
    include_clmm : bool, default True
        Also fit the cumulative link (ordinal) mixed model by maximum likelihood: on an
        ordinal scale (needs whole-number ratings), or on a continuous one to the ratings
        binned by ``ordinal_bins``; on a continuous scale without ``ordinal_bins`` it is not
        fitted.
    story_effects : bool, default True
        Random intercept per story in the effects models.
    draws, tune, chains : int, optional
        Sampler settings of the Bayesian model; by default its own
        (:data:`models.bayes.DEFAULT_SAMPLING`: 2 chains x 10,000 draws, 500 tuning steps).
    sampler : {"nutpie", "pymc", "numpyro"}, optional
        NUTS implementation; default nutpie when installed, else PyMC.
    seed : int, optional
        Seed of the sampler (by default a fresh one).
    ci_level : float, default 0.95
        Level of every interval.
    target_accept : float, default 0.9
        NUTS target acceptance of the Bayesian model.
    ordinal_bins : int, optional
        A continuous scale only (more than 11 points, :mod:`longitudinal.study.rating_scale`): fit
        the ordinal models to the ratings binned into this many (2 to 11) ordered categories
        of equal width over ``[scale_min, scale_max]``
        (:func:`longitudinal.study.rating_scale.bin_ratings`). Default: no binning, so no ordinal
        model on a continuous scale.

    Returns
    -------
    EmpathyEffects
        Effects of both engines, the variance decomposition, the fitted models and notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        For invalid options, ``ordinal_bins`` on an ordinal scale or outside 2 to 11, or an
        ordinal model of an ordinal scale whose ratings are not whole numbers.

    Warns
    -----
    models.ConvergenceWarning, models.SingularFitWarning, models.SamplingWarning
        Re-issued from the engines (and also listed in ``notes``).

    Notes
    -----
    **Model.** ``rating ~ predictors + week + (1 + week | participant) + (1 | story)``,
    the LMM by REML on the rating (Satterthwaite df), the Bayesian model as
    ``P(rating <= k) = F(c_k - eta)`` with the same linear predictor ``eta`` (no intercept;
    the cutpoints carry the location) and the default priors of
    :class:`models.bayes.BayesianMixedModel`.

    **The kind of scale decides the models** (:func:`longitudinal.study.rating_scale.scale_kind`).
    An ordinal scale (at most 11 points: 1-5, 1-7, 0-10) gets the LMM, the cumulative link
    mixed model and the Bayesian cumulative-logit model. A continuous scale (a 0-100 slider)
    gets the LMM and, as its Bayesian model, the gaussian one (``engine`` ``bayes_gaussian``:
    coefficients in rating points, the residual variance its own); the ordinal models are
    fitted only with ``ordinal_bins=K``, to the ratings binned into K equal-width categories,
    and their average marginal effects are then those on the expected bin midpoint, in rating
    points. ``meta["scale_rule"]`` says which and why in one sentence.

    **Scales.** LMM coefficients are rating points per unit of the predictor (one SD for the
    standardized ones). Bayesian coefficients are latent logit units and are *not* on that
    scale. To put them side by side, each Bayesian draw is also converted to an average
    marginal effect on the expected rating, ``beta_k * mean_i sum_j f(c_j - eta_i)`` (``f``
    the logistic density; ``eta_i`` includes the participant and story effects of row
    ``i``), the average slope of ``E[rating]`` in the predictor. Both versions are in the
    table, labelled by ``scale`` and ``quantity``.

    **Variance decomposition.** The LMM shares come from an intercept-only model with
    participant, session and story intercepts (the classic unconditional decomposition),
    and from the effects model (participant intercept variance at week 0, story, residual).
    The Bayesian shares are on the latent scale, conditional on the predictors, with the
    residual variance of the logistic distribution, ``pi^2 / 3``.

    Validated by simulation (:mod:`longitudinal.simulate`): the logit coefficients of the
    Bayesian model cover ``truth.json``'s ``empathy.fixed``, the LMM coefficients cover
    ``fixed`` times the true average slope of ``E[rating]`` and the two engines agree
    (``tests/longitudinal/test_predict.py``).

    Examples
    --------
    >>> from longitudinal.predict import empathy_data, fit_empathy_models
    >>> effects = fit_empathy_models(empathy_data(study), seed=1)  # doctest: +SKIP
    >>> effects.effects.query("scale == 'rating'")  # doctest: +SKIP
    """
    func = "fit_empathy_models"
    if not isinstance(data, EmpathyData):
        raise InvalidParameterError(
            f"the `data` parameter of {func} must be an EmpathyData (from empathy_data); "
            f"got {type(data).__name__}"
        )
    flags = (
        ("bayes", bayes),
        ("include_clmm", include_clmm),
        ("story_effects", story_effects),
    )
    for name, value in flags:
        check_bool(value, name=name, where=func)
    draws, tune, chains = sampling_settings(draws, tune, chains, where=func)
    if seed is not None:
        seed = check_int(seed, name="seed", where=func, minimum=0)
    ci_level = check_unit(ci_level, name="ci_level", where=func)
    frame = data.data
    response = data.response_col
    lo, hi = float(data.scale_min), float(data.scale_max)
    kind = scale_kind(lo, hi)
    bins = check_ordinal_bins(ordinal_bins, lo, hi, where=func, name="the `ordinal_bins` parameter")
    ordinal_frame, midpoints, bayes_family = frame, None, "ordinal"
    if kind == "continuous" and bins is None:
        include_clmm, bayes_family = False, "gaussian"
    elif bins is not None:
        codes = bin_ratings(frame[response], lo, hi, bins)
        ordinal_frame = frame.assign(**{response: codes})
        midpoints = bin_midpoints(lo, hi, bins)
    elif bayes or include_clmm:
        _check_whole(frame[response], func=func)
    sampler = sampler or default_sampler()

    from models.lmm import LinearMixedModel

    caught: list[warnings.WarningMessage] = []
    timings: dict[str, float] = {}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        start = time.perf_counter()
        lmm, formula = _stepped_lmm(data, story_effects=story_effects, ci_level=ci_level)
        timings["lmm"] = time.perf_counter() - start
        random = f"(1 | {formula_name(data.id_col)}) + (1 | session_id)"
        if story_effects:
            random += " + (1 | story_id)"
        null = LinearMixedModel(f"{formula_name(response)} ~ 1 + {random}", reml=True).fit(frame)
        _ = lmm.fixed_  # the df are computed on first access: their warnings belong here
        clmm = bayes_model = None
        if include_clmm:
            start = time.perf_counter()
            clmm = _fitted_clmm(formula, ordinal_frame, ci_level)
            timings["clmm"] = time.perf_counter() - start
        if bayes:
            from models.bayes import BayesianMixedModel

            start = time.perf_counter()
            settings = {"draws": draws, "tune": tune, "chains": chains, "seed": seed}
            bayes_model = BayesianMixedModel(
                formula,
                family=bayes_family,  # type: ignore[arg-type]
                sampler=sampler,  # type: ignore[arg-type]
                target_accept=target_accept,
                ci_level=ci_level,
                **settings,
            ).fit(frame if bayes_family == "gaussian" else ordinal_frame)
            timings["bayes"] = time.perf_counter() - start
    caught.extend(rec)
    notes = _reissued(caught)

    parts = [_lmm_effects(lmm, data.predictors)]
    variance = [
        _lmm_variance(null, id_col=data.id_col, label="unconditional"),
        _lmm_variance(lmm, id_col=data.id_col, label="conditional"),
    ]
    meta: dict[str, Any] = {
        "package_version": __version__,
        "formula": formula,
        "n_obs": int(len(frame)),
        "n_participants": int(frame[data.id_col].nunique()),
        "n_dropped": data.n_dropped,
        "scale_min": lo,
        "scale_max": hi,
        "scale_kind": kind,
        "scale_rule": scale_rule(lo, hi),
        "ordinal_bins": None
        if bins is None
        else {"k": bins, "rule": bins_rule(lo, hi, bins), "midpoints": midpoints.tolist()},
        "ci_level": ci_level,
        "seconds": timings,
    }
    if clmm is not None:
        table, clmm_slope = _clmm_effects(clmm, data.predictors, midpoints)
        parts.append(table)
        variance.append(_clmm_variance(clmm, id_col=data.id_col))
        meta["clmm"] = {
            "converged": clmm.converged_,
            "singular": clmm.singular_,
            "loglik": clmm.loglik_,
            "marginal_slope": clmm_slope,
        }
    if bayes_model is not None and bayes_family == "gaussian":
        parts.append(_bayes_gaussian_effects(bayes_model, data.predictors, ci_level))
        blocks = _random_blocks(frame, formula)
        variance.append(
            _bayes_gaussian_variance(bayes_model, blocks, id_col=data.id_col, ci_level=ci_level)
        )
        meta["bayes"] = {
            "family": "gaussian",
            "sampler": sampler,
            **settings,
            "failures": list(bayes_model.diagnostics_["failures"]),
        }
    elif bayes_model is not None:
        table, slope = _bayes_effects(bayes_model, data.predictors, ci_level, midpoints)
        parts.append(table)
        blocks = _random_blocks(ordinal_frame, formula)
        variance.append(_bayes_variance(bayes_model, blocks, id_col=data.id_col, ci_level=ci_level))
        meta["bayes"] = {
            "family": "ordinal",
            "sampler": sampler,
            **settings,
            "failures": list(bayes_model.diagnostics_["failures"]),
            "marginal_slope": float(slope.mean()),
        }
    effects = pd.concat(parts, ignore_index=True)
    return EmpathyEffects(
        effects=effects,
        variance=pd.concat(variance, ignore_index=True),
        predictors=data.predictors.copy(),
        formula=formula,
        lmm=lmm,
        bayes=bayes_model,
        notes=tuple(notes),
        meta=meta,
        clmm=clmm,
        ordinal_bins=None if bins is None else binned_counts(frame[response], lo, hi, bins),
    )


def _fitted_clmm(formula: str, frame: pd.DataFrame, ci_level: float) -> Any:
    """Fit the ordinal mixed model; None, with a warning, when it cannot be fitted."""
    from models.ordinal import OrdinalMixedModel

    try:
        return OrdinalMixedModel(formula, ci_level=ci_level).fit(frame)
    except ModelsError as err:
        warnings.warn(
            f"the cumulative link (ordinal) mixed model could not be fitted: {err}",
            DataQualityWarning,
            stacklevel=3,
        )
        return None


def check_effects_table(effects: Any, *, func: str) -> None:
    """Refuse anything but an effects table of :func:`fit_empathy_models`."""
    if not isinstance(effects, pd.DataFrame) or any(
        c not in effects.columns for c in EFFECT_COLUMNS
    ):
        raise InvalidParameterError(
            f"the `effects` parameter of {func} must be the effects table of "
            f"fit_empathy_models (columns {EFFECT_COLUMNS})"
        )


def _reissued(caught: list[warnings.WarningMessage]) -> list[str]:
    """Issue the recorded warnings again; return each distinct one as a short note."""
    notes: list[str] = []
    for w in caught:
        text = f"{w.category.__name__}: {_short(str(w.message))}"
        if text not in notes:
            notes.append(text)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return notes


def _stepped_lmm(data: EmpathyData, *, story_effects: bool, ci_level: float) -> tuple[Any, str]:
    """Fit the empathy LMM by the stated rule; return it and its formula.

    The random effects are stepped down while the fit is singular or does not converge: first
    the week slope per participant, then the story intercept. Each step is announced with a
    DataQualityWarning.
    """
    from models.lmm import LinearMixedModel

    frame = data.data
    formula = empathy_formula(data, story_effects=story_effects)
    lmm = LinearMixedModel(formula, reml=True, ci_level=ci_level).fit(frame)
    slope = True
    simpler = empathy_formula(data, story_effects=story_effects, random_slope=False)
    if (lmm.singular_ or not lmm.converged_) and simpler != formula:
        why = "a singular fit" if lmm.singular_ else "no convergence"
        formula, slope = simpler, False
        lmm = LinearMixedModel(formula, reml=True, ci_level=ci_level).fit(frame)
        warnings.warn(
            f"the random week slope per participant gave {why}; the empathy models have "
            "a random intercept per participant instead",
            DataQualityWarning,
            stacklevel=3,
        )
    if lmm.singular_ and story_effects:
        formula = empathy_formula(data, story_effects=False, random_slope=slope)
        lmm = LinearMixedModel(formula, reml=True, ci_level=ci_level).fit(frame)
        warnings.warn(
            "the story random intercept was estimated at (or near) zero, a singular fit; "
            "the empathy models leave it out",
            DataQualityWarning,
            stacklevel=3,
        )
    return lmm, formula


def _check_whole(values: pd.Series, *, func: str) -> None:
    v = values.to_numpy(dtype=float)
    if not np.all(np.equal(np.round(v), v)):
        raise InvalidParameterError(
            f"{func}: the ordinal models need whole-number ratings; this study has "
            "fractional ones (a continuous slider?). Pass bayes=False and "
            "include_clmm=False."
        )
