"""The "What predicts empathy" section: the empathy models fitted, read and shown.

The models and their tables come from :mod:`longitudinal.predict`; this module turns them into
the section's HTML (``templates/effects.html.j2``), its tables and its figure.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal._wording import own_names
from longitudinal.narrate.gates import (
    FAILED,
    bayes_name,
    fit_problem,
    gate_sentences,
    is_failed,
    model_failures,
    sampling_problem,
    with_status,
)
from longitudinal.predict.common import check_study, recording
from longitudinal.predict.effects import EmpathyEffects, fit_empathy_models
from longitudinal.predict.plots import plot_effects
from longitudinal.predict.predictors import EmpathyData, empathy_data
from longitudinal.predict.reading import describe_effects, term_label
from longitudinal.predict.variance_explained import describe_r2, empathy_r2
from longitudinal.report.html import figure, render, table
from longitudinal.study.rating_scale import check_ordinal_bins, scale_kind

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.study.loaded import Study

__all__ = ["EffectsSection", "empathy_effects_section"]


@dataclass(frozen=True)
class EffectsSection:
    """The parts of the "What predicts empathy" section, built from the fitted models.

    The report's section (:class:`~longitudinal.report.sections.predictors.PredictorsSection`)
    places them on the page under its own anchor and heading.

    Attributes
    ----------
    anchor : str
        ``"predictors"``, the HTML id of the report's section (kept for callers).
    heading : str
        ``"What predicts empathy"``, the report section's heading (kept for callers).
    html : str
        Section body: the reading of each effect, the effects table, the forest plot (PNG
        embedded as a data URI, with links to the PNG and SVG files), one sentence on the
        variance the linear mixed model explains, the variance table and
        a note on the scales. Every text is escaped.
    tables : dict of str to pandas.DataFrame
        ``empathy_effects``, ``empathy_variance``, ``empathy_predictors``,
        ``empathy_reading``, ``empathy_r2`` (the LMM's R-squared,
        :func:`longitudinal.predict.variance_explained.empathy_r2`) at full precision, for
        ``tables/*.csv``; with ``ordinal_bins``
        also ``empathy_ordinal_bins`` (the bins the ordinal models fitted, with their counts).
        ``empathy_effects`` and ``empathy_variance`` have a ``status`` column: ``ok``, or
        ``failed: <why>`` for the rows of a model that failed its checks (singular or
        unconverged fit, failed sampling diagnostics), whose numbers are kept here but shown
        nowhere else (the section's tables read "failed" in their place, the figure leaves
        them out).
    figures : dict of str to tuple of (str, str)
        ``{"empathy_effects": (PNG file relative to the report folder, caption)}``; the SVG
        is beside it.
    notes : tuple of str
        Warnings raised while fitting (recorded, not re-issued), and what to do about a
        Bayesian model that failed its sampling diagnostics (a note that starts with
        :data:`ADVICE`; the command line prints it).
    fitted : EmpathyEffects or None
        The fitted models (the manuscript's tables and sentences read their gates).
    """

    anchor: str
    heading: str
    html: str
    tables: dict[str, pd.DataFrame]
    figures: dict[str, tuple[str, str]]
    notes: tuple[str, ...]
    fitted: EmpathyEffects | None = None


def _lmm_problem(lmm: Any) -> str | None:
    """Why the mixed model's effects must not be read, or None."""
    return fit_problem(lmm)


def _bayes_problem(bayes: Any) -> str | None:
    """Why the Bayesian model's effects must not be read (failed diagnostics), or None."""
    return sampling_problem(bayes)


ADVICE = "Advice: "
"""The start of a note that tells the researcher what to do (the command line prints it)."""


def _bayes_remedy(problem: str, draws: int, name: str = "Bayesian ordinal model") -> str:
    return (
        f"{ADVICE}the {name} did not pass its sampling diagnostics ({problem}), so "
        "none of its estimates is read or shown. Longer sampling usually fixes it: "
        f"longitudinal report STUDY --out DIR --bayes --draws {2 * draws} --tune 1000 "
        "--chains 4 --target-accept 0.95 (and --sampler nutpie when it is installed)."
    )


def empathy_effects_section(
    study: Study,
    out_dir: str | os.PathLike[str],
    *,
    bayes: bool = True,
    traits: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
    session_features: Sequence[str] | None = None,
    session_between: Sequence[str] | None = None,
    story_effects: bool = True,
    draws: int | None = None,
    tune: int | None = None,
    chains: int | None = None,
    sampler: str | None = None,
    seed: int | None = None,
    ci_level: float = 0.95,
    figure_dir: str = "figures",
    target_accept: float = 0.9,
    max_participants: int | None = None,
    ordinal_bins: int | None = None,
) -> EffectsSection:
    """Fit the empathy models and build the parts of the "What predicts empathy" section.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study.
    out_dir : str or path-like
        The report folder; the forest plot is written to ``out_dir / figure_dir /
        "empathy_effects.png"`` and, as vector figures, ``"empathy_effects.svg"`` and
        ``"empathy_effects.pdf"`` (in the style of every report figure,
        :func:`longitudinal.plotting.save_figure`).
    bayes : bool, default True
        Fit a Bayesian model too: the ordinal one for an ordinal scale (skipped, with a note,
        when the ratings are not whole numbers) or for binned ratings (``ordinal_bins``), the
        Bayesian linear mixed model (gaussian) for a continuous scale of more than 11 points
        (:mod:`longitudinal.study.rating_scale`).
    traits, states, session_features : sequence of str, optional
        Predictors (score columns, session feature names); by default the study's (see
        :func:`empathy_data`).
    session_between : sequence of str, optional
        Session features whose between-person part enters (default all; see
        :func:`longitudinal.predict.selection.plan_predictors`).
    story_effects : bool, default True
        Random intercept per story (left out, with a note, when no story was rated twice).
    draws, tune, chains : int, optional
        Sampler settings; by default those of :class:`models.bayes.BayesianMixedModel`
        (:data:`models.bayes.DEFAULT_SAMPLING`).
    sampler : str, optional
        Default nutpie when installed, else PyMC.
    seed : int, optional
        Seed of the sampler and of the subsample (by default a fresh one; the report passes
        its own).
    ci_level : float, default 0.95
        Level of the intervals.
    figure_dir : str, default "figures"
        Folder of the figure, relative to ``out_dir``.
    target_accept : float, default 0.9
        NUTS target acceptance of the Bayesian model (raise it after divergent transitions).
    max_participants : int, optional
        Fit the models on a random subsample of this many participants (all their ratings),
        drawn with ``seed``, when more have ratings (``longitudinal report --lean``); the
        predictors are standardized over every participant first. A note says how many of
        how many. Default: every participant.
    ordinal_bins : int, optional
        A continuous scale only (``longitudinal report --ordinal-bins K``): fit the ordinal
        models to the ratings binned into K (2 to 11) ordered categories of equal width over
        the declared scale (:func:`longitudinal.study.rating_scale.bin_ratings`); the section says
        so and lists the bins. By default a continuous scale has no ordinal model.

    Returns
    -------
    EffectsSection
        HTML body, full-precision tables, the figure and the notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        As :func:`empathy_data` and :func:`fit_empathy_models` (``ordinal_bins`` outside 2 to
        11, or on an ordinal scale).

    Notes
    -----
    Which models are fitted follows the kind of the declared scale
    (:func:`longitudinal.study.rating_scale.scale_kind`), and the section's first paragraph says
    which and why in one sentence.

    Warnings of the fits are caught and returned in ``notes`` (a report records them rather
    than re-issuing them). No participant id appears in the tables, text or figure.

    Examples
    --------
    >>> from longitudinal.report.sections.effects import empathy_effects_section
    >>> section = empathy_effects_section(study, "report")  # doctest: +SKIP
    >>> sorted(section.tables)  # doctest: +SKIP
    ['empathy_effects', 'empathy_predictors', 'empathy_r2', 'empathy_reading', 'empathy_variance']
    """
    func = "empathy_effects_section"
    check_study(study, func=func)
    spec = study.config.ratings
    ordinal_bins = check_ordinal_bins(
        ordinal_bins,
        spec.scale_min,
        spec.scale_max,
        where=func,
        name="the `ordinal_bins` parameter",
    )
    notes: list[str] = []
    data = empathy_data(
        study,
        traits=traits,
        states=states,
        session_features=session_features,
        session_between=session_between,
    )
    if max_participants is not None:
        data = _subsample(data, max_participants, seed=seed, notes=notes)
    bayes_ok = bayes
    v = data.data[data.response_col].to_numpy(dtype=float)
    clmm_ok = bool(np.all(np.equal(np.round(v), v)))
    if scale_kind(data.scale_min, data.scale_max) == "continuous":
        # the linear models; the ordinal ones only on binned ratings (--ordinal-bins)
        clmm_ok = ordinal_bins is not None
    elif not clmm_ok:
        bayes_ok = False
        notes.append("the ordinal models were not fitted: the ratings are not whole numbers")
    if story_effects and data.data["story_id"].nunique() >= len(data.data):
        # One rating per story: a story intercept cannot be told apart from the residual.
        story_effects = False
        notes.append("no story was rated more than once, so the models have no story random effect")
    with recording(notes, prefix="empathy models"):
        fitted = fit_empathy_models(
            data,
            bayes=bayes_ok,
            include_clmm=clmm_ok,
            story_effects=story_effects,
            draws=draws,
            tune=tune,
            chains=chains,
            sampler=sampler,
            seed=seed,
            ci_level=ci_level,
            target_accept=target_accept,
            ordinal_bins=ordinal_bins,
        )
    fitted = _study_labels(fitted, study)
    failures = model_failures(fitted)
    names = study.config.column_names
    bayes = _bayes_problem(fitted.bayes)
    if fitted.bayes is not None and fitted.bayes.draws == "auto":
        kept = int(fitted.bayes.diagnostics_["draws"])
        notes.append(
            f"the {bayes_name(fitted.effects)} kept {fitted.bayes.chains} chains x {kept:,} "
            "draws (--draws auto: sampling stopped at the first multiple of 1,000 draws per "
            "chain that passed the diagnostics gate's R-hat and ESS checks; at most 10,000)"
        )
    if bayes:  # what to do goes to the notes (and the terminal), not into the tables or text
        kept = int(fitted.bayes.diagnostics_["draws"])  # with draws="auto", those it kept
        notes.append(_bayes_remedy(bayes, kept, bayes_name(fitted.effects)))
    notes = [own_names(text, names) for text in notes]
    reading = describe_effects(
        fitted.effects,
        ci_level=ci_level,
        n_participants=int(fitted.meta["n_participants"]),
        lmm_problem=_lmm_problem(fitted.lmm),
        bayes_problem=_bayes_problem(fitted.bayes),
    )
    folder = Path(out_dir) / figure_dir
    folder.mkdir(parents=True, exist_ok=True)
    from longitudinal.plotting import JOURNAL_DPI, save_figure

    shown = fitted.effects[~fitted.effects["engine"].isin(list(failures))]
    forest = plot_effects(
        shown, ci_level=ci_level, scale_min=data.scale_min, scale_max=data.scale_max
    )
    save_figure(forest, folder / "empathy_effects.png", dpi=JOURNAL_DPI, vector=True)
    figures = {
        "empathy_effects": (
            f"{figure_dir}/empathy_effects.png",
            _caption(fitted) + _left_out_of_figure(fitted, failures),
        )
    }
    r2_table = empathy_r2(dataclasses.replace(data, predictors=fitted.predictors), lmm=fitted.lmm)
    effects_table = with_status(fitted.effects, failures)
    variance_table = with_status(fitted.variance, failures)
    body = render(
        "effects.html.j2",
        lead=own_names(_lead(fitted, data), names),
        gates=gate_sentences(fitted, medium="page"),
        reading=list(reading["text"]),
        effects=_effects_table(effects_table, ci_level),
        figure=figure(figures, Path(out_dir), "empathy_effects"),
        r2=own_names(describe_r2(r2_table), names),
        variance=_variance_table(variance_table),
        bins=None if fitted.ordinal_bins is None else _bins_table(fitted),
        notes=notes,
    )
    return EffectsSection(
        anchor="predictors",
        heading="What predicts empathy",
        html=str(body),
        tables={
            "empathy_effects": effects_table,
            "empathy_variance": variance_table,
            "empathy_predictors": fitted.predictors,
            "empathy_reading": reading,
            "empathy_r2": r2_table,
            **(
                {} if fitted.ordinal_bins is None else {"empathy_ordinal_bins": fitted.ordinal_bins}
            ),
        },
        figures=figures,
        notes=tuple(notes),
        fitted=fitted,
    )


def _effects_table(effects: pd.DataFrame, ci_level: float) -> Markup:
    """Tabulate the effects: one row per predictor, the engines side by side.

    An engine whose ``status`` says it failed its checks (:func:`with_status`) shows no
    number: one column under its name reads "failed".
    """
    failed = _failed_engines(effects)
    lmm = effects[(effects["scale"] == "rating") & (effects["engine"] == "lmm")]
    wide = lmm[["term", "label", "part", "estimate", "ci_low", "ci_high", "p_value"]].copy()
    wide["label"] = [term_label(r) for r in lmm.itertuples()]
    columns = {
        "label": "predictor",
        "estimate": "LMM b",
        "ci_low": "low",
        "ci_high": "high",
        "p_value": "p",
    }
    if "lmm" in failed:
        wide = wide[["term", "label"]].assign(LMM_failed=FAILED)
        columns = {"label": "predictor", "LMM_failed": "LMM"}
    engines = (
        ("clmm", "Ordinal", "Ordinal AME", "Ordinal logit"),
        ("bayes_ordinal", "Bayes", "Bayes AME", "Bayes logit"),
        ("bayes_gaussian", "BayesLMM", "Bayes LMM b", "Bayes logit"),
    )
    for engine, tag, ame, logit in engines:
        rows = effects[effects["engine"] == engine]
        if rows.empty:
            continue
        if engine in failed:
            wide[f"{tag}_failed"] = FAILED
            columns[f"{tag}_failed"] = tag
            continue
        for scale, name in (("rating", ame), ("logit", logit)):
            part = rows[rows["scale"] == scale].set_index("term")
            if part.empty:  # the gaussian model has no logit scale
                continue
            for column, header in (("estimate", name), ("ci_low", "low"), ("ci_high", "high")):
                wide[f"{tag}_{scale}_{column}"] = wide["term"].map(part[column])
                columns[f"{tag}_{scale}_{column}"] = header
        if engine == "clmm":
            logits = rows[rows["scale"] == "logit"].set_index("term")
            wide["p_clmm"] = wide["term"].map(logits["p_value"])
            columns["p_clmm"] = "p (z)"
    with_clmm = (effects["engine"] == "clmm").any() and "clmm" not in failed
    with_bayes = (effects["engine"] == "bayes_ordinal").any() and "bayes_ordinal" not in failed
    with_gaussian = (effects["engine"] == "bayes_gaussian").any() and "bayes_gaussian" not in failed
    caption = (
        "Effects on the empathy rating per SD of each predictor (week: per week), "
        f"{100 * ci_level:g}% intervals"
        + (". LMM b: rating points (Satterthwaite t tests)" if "lmm" not in failed else "")
        + (
            "; Ordinal AME: the cumulative link mixed model's average marginal effect on "
            "the expected rating (Wald intervals, z tests); Ordinal logit: its coefficient "
            "in latent logit units (a different scale)"
            if with_clmm
            else ""
        )
        + (
            "; Bayes AME and Bayes logit: the same two quantities from the Bayesian "
            "ordinal model (highest-density intervals)"
            if with_bayes
            else ""
        )
        + (
            "; Bayes LMM b: the Bayesian linear mixed model's coefficient in rating points "
            "(gaussian family, highest-density intervals)"
            if with_gaussian
            else ""
        )
        + "."
        + (
            " failed: the model failed its checks (see above), so none of its estimates is shown."
            if failed
            else ""
        )
    )
    return table(wide, columns=columns, caption=caption)


def _failed_engines(frame: pd.DataFrame) -> set[str]:
    """Engines whose rows carry a failed ``status`` (:func:`with_status`)."""
    if "status" not in frame.columns:
        return set()
    return set(frame.loc[frame["status"].map(is_failed), "engine"])


def _left_out_of_figure(fitted: EmpathyEffects, failures: dict[str, str]) -> str:
    """Say which models the forest plot leaves out because they failed their checks."""
    names = {"lmm": "linear mixed model", "clmm": "ordinal mixed model"}
    gone = list(dict.fromkeys(names.get(e, bayes_name(fitted.effects)) for e in failures))
    if not gone:
        return ""
    return (
        f" Not drawn: the {' and the '.join(gone)}, which failed "
        f"{'its' if len(gone) == 1 else 'their'} checks."
    )


def _study_labels(fitted: EmpathyEffects, study: Study) -> EmpathyEffects:
    """Name each trait and state predictor as the rest of the report does.

    The label is the instrument's title, with the scale when the instrument has several
    (``Mini-IPIP (agreeableness)``), never the instrument's key; session features and time
    keep theirs.
    """
    from longitudinal.report.context import label
    from longitudinal.study.frames import scale_column

    own = {
        scale_column(name, key.name): label(instrument, key.name)
        for name, instrument in study.instruments.items()
        for key in instrument.scales
    }
    predictors = fitted.predictors.copy()
    scored = predictors["kind"].isin(["trait", "state"]) & predictors["source"].isin(list(own))
    predictors.loc[scored, "label"] = predictors.loc[scored, "source"].map(own)
    by_term = predictors.set_index("predictor")["label"]
    effects = fitted.effects.copy()
    effects["label"] = effects["term"].map(by_term).fillna(effects["label"])
    return dataclasses.replace(fitted, effects=effects, predictors=predictors)


def _variance_table(variance: pd.DataFrame) -> Markup:
    failed = variance["status"].map(is_failed) if "status" in variance.columns else None
    if failed is not None and failed.any():
        numbers = ["variance", "icc", "icc_ci_low", "icc_ci_high"]
        variance = variance.astype({c: float for c in numbers})
        variance.loc[failed, numbers] = np.nan
        variance["shown"] = np.where(failed, FAILED, "")
        variance["at_boundary"] = variance["at_boundary"].astype(object)
        variance.loc[failed, "at_boundary"] = ""
    icc_ci = {"icc_ci_low": "low", "icc_ci_high": "high"}
    if variance[list(icc_ci)].isna().all().all():  # no interval was computed: no empty columns
        icc_ci = {}
    columns = {
        "engine": "engine",
        "model": "model",
        "scale": "scale",
        "component": "component",
        "variance": "variance",
        "icc": "share (ICC)",
        **icc_ci,
        "at_boundary": "at 0",
        **({"shown": "status"} if "shown" in variance.columns else {}),
    }
    decimals = {"icc": 3, "icc_ci_low": 3, "icc_ci_high": 3}
    caption = "Variance decomposition and intraclass correlations"
    return table(variance, columns=columns, decimals=decimals, caption=caption)


def _lead(fitted: EmpathyEffects, data: EmpathyData) -> str:
    """Say what was fitted, to how many ratings, and how to read the scales."""
    if fitted.meta.get("scale_kind") == "continuous":
        return _continuous_lead(fitted, data)
    with_bayes = bool((fitted.effects["engine"] == "bayes_ordinal").any())
    return (
        f"Model: {fitted.formula} on {fitted.meta['n_obs']} ratings of "
        f"{fitted.meta['n_participants']} participants ({data.n_dropped} left out for a "
        "missing rating or predictor). Traits are standardized across participants; states "
        "(nearest preceding survey) and session features are split into a between-person part "
        "(the person's average) and a within-person part (the deviation from it). "
        + (f"{fitted.meta['scale_rule']} " if fitted.meta.get("scale_rule") else "")
        + f"The linear mixed model is fitted to the {data.scale_min:g}–{data.scale_max:g} rating"
        + (
            "; the cumulative link (ordinal) mixed model treats the ratings as ordered "
            "categories (maximum likelihood, Laplace approximation, as R's ordinal::clmm): its "
            "coefficients are on the latent logit scale and are shown converted to average "
            "marginal effects on the expected rating"
            if fitted.clmm is not None
            else ""
        )
        + (
            "; the Bayesian model is a cumulative-logit (ordinal) model whose coefficients are "
            "on the latent logit scale, shown converted to average marginal effects on the "
            "expected rating next to the LMM."
            if with_bayes
            else ". The Bayesian ordinal model was not fitted for this report (`--bayes` adds "
            "it, about a minute more)."
        )
    )


def _continuous_lead(fitted: EmpathyEffects, data: EmpathyData) -> str:
    """Say what was fitted to a continuous scale: the linear models, and why (its rule)."""
    with_gaussian = bool((fitted.effects["engine"] == "bayes_gaussian").any())
    with_bayes = bool((fitted.effects["engine"] == "bayes_ordinal").any())
    binned = fitted.meta.get("ordinal_bins")
    text = (
        f"Model: {fitted.formula} on {fitted.meta['n_obs']} ratings of "
        f"{fitted.meta['n_participants']} participants ({data.n_dropped} left out for a "
        "missing rating or predictor). Traits are standardized across participants; states "
        "(nearest preceding survey) and session features are split into a between-person part "
        "(the person's average) and a within-person part (the deviation from it). "
        f"{fitted.meta['scale_rule']} The model is the linear mixed model of the "
        f"{data.scale_min:g}–{data.scale_max:g} rating"
        + (
            "; the Bayesian linear mixed model (gaussian family) is the same model with "
            "its coefficients in rating points"
            if with_gaussian
            else ""
        )
        + "."
    )
    if binned is None:
        return text + (
            " No ordinal model was fitted: `--ordinal-bins K` fits the cumulative link "
            "mixed model to the ratings binned into K ordered categories."
            + (
                ""
                if with_gaussian
                else " `--bayes` adds the Bayesian linear mixed model (about a minute more)."
            )
        )
    return (
        text
        + f" As asked (--ordinal-bins {binned['k']}), the ordinal models are also fitted, to "
        + binned["rule"]
        + (
            ": the cumulative link mixed model"
            + (" and the Bayesian cumulative-logit model" if with_bayes else "")
            if fitted.clmm is not None or with_bayes
            else ", but the cumulative link mixed model could not be fitted"
        )
        + "; their coefficients are on the latent logit scale and their average marginal "
        "effects on the expected bin midpoint, in rating points."
    )


def _bins_table(fitted: EmpathyEffects) -> Markup:
    """Tabulate the bins of --ordinal-bins with the ratings in each."""
    binned = fitted.meta["ordinal_bins"]
    return table(
        fitted.ordinal_bins,
        columns={
            "bin": "category",
            "label": "ratings",
            "midpoint": "midpoint",
            "n": "n",
            "proportion": "share",
        },  # fmt: skip
        decimals={"bin": 0, "midpoint": 3, "n": 0, "proportion": 3},
        caption=f"The {binned['k']} ordered categories the ordinal models fitted",
    )


def _subsample(data: EmpathyData, limit: int, *, seed: int | None, notes: list[str]) -> EmpathyData:
    """Keep the ratings of a random ``limit`` of the participants (drawn with ``seed``)."""
    ids = data.data[data.id_col].astype(str)
    people = np.sort(ids.unique())
    if len(people) <= limit:
        return data
    chosen = np.random.default_rng(seed).choice(people, size=limit, replace=False)
    kept = data.data.loc[ids.isin(chosen).to_numpy()]
    notes.append(
        f"the models are fitted on a random subsample of {limit:,} of the {len(people):,} "
        f"participants with ratings ({len(kept):,} of {len(data.data):,} ratings; seed "
        f"{seed}; --lean); the predictors were standardized over every participant"
    )
    return dataclasses.replace(data, data=kept)


def _caption(fitted: EmpathyEffects) -> str:
    with_bayes = bool((fitted.effects["engine"] == "bayes_ordinal").any())
    if (fitted.effects["engine"] == "bayes_gaussian").any() and fitted.clmm is None:
        return (
            "Standardized effects on empathy ratings: coefficients of the linear mixed model "
            "and of the Bayesian linear mixed model (gaussian family), in rating points."
        )
    ordinal = " and ".join(
        name
        for name, present in (
            ("ordinal mixed model", fitted.clmm is not None),
            ("Bayesian", with_bayes),
        )
        if present
    )
    if not ordinal:
        return "Standardized effects on empathy ratings: LMM coefficients in rating points."
    return (
        f"Standardized effects on empathy ratings: LMM coefficients and {ordinal} average "
        f"marginal effects in rating points (left); {ordinal} coefficients in latent logit "
        "units (right)."
    )
