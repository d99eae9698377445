"""Tests of longitudinal/predict/effects.py, reading.py and plots.py: both engines recover the
simulator's truth; the effects are read in words no further than the fits allow."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings, study_of, true_effects
from numpy.testing import assert_allclose

from longitudinal._errors import InvalidParameterError
from longitudinal.predict import (
    EFFECT_COLUMNS,
    VARIANCE_COLUMNS,
    EmpathyData,
    describe_effects,
    empathy_data,
    fit_empathy_models,
    plot_effects,
)
from longitudinal.simulate import simulate_frames
from models._errors import DataQualityWarning, SamplingWarning, SingularFitWarning


def _effects_row(**kw):
    row = dict.fromkeys(EFFECT_COLUMNS, np.nan)
    row.update(kw)
    return row


def test_describe_effects_direction_and_uncertainty():
    table = pd.DataFrame(
        [
            _effects_row(
                engine="lmm",
                scale="rating",
                quantity="coefficient",
                term="a_z",
                label="absorption",
                kind="trait",
                part="person",
                estimate=0.3,
                ci_low=0.1,
                ci_high=0.5,
            ),
            _effects_row(
                engine="lmm",
                scale="rating",
                quantity="coefficient",
                term="w_within_z",
                label="well-being",
                kind="state",
                part="within",
                estimate=-0.1,
                ci_low=-0.3,
                ci_high=0.1,
            ),
            _effects_row(
                engine="bayes_ordinal",
                scale="rating",
                quantity="average marginal effect",
                term="a_z",
                label="absorption",
                kind="trait",
                part="person",
                estimate=0.28,
                ci_low=0.09,
                ci_high=0.49,
                prob_positive=0.995,
            ),
        ]
    )
    table["df"] = 30.0
    out = describe_effects(table)
    assert out.loc[0, "direction"] == "higher" and pd.isna(out.loc[1, "direction"])
    assert out["clear"].tolist() == [True, False]
    assert out.loc[0, "agree"] is True and pd.isna(out.loc[1, "agree"])
    assert "people with a higher absorption score gave higher" in out.loc[0, "text"]
    assert "excludes zero" in out.loc[0, "text"]
    assert "+0.28 points" in out.loc[0, "text"]
    assert "probability of a positive effect above 99%" in out.loc[0, "text"]
    # an interval that includes zero is never read as a direction
    assert "includes zero, so these data do not show a direction" in out.loc[1, "text"]
    assert "lower" not in out.loc[1, "text"] and "tended" not in out.loc[1, "text"]
    assert "Bayesian" not in out.loc[1, "text"]
    with pytest.raises(InvalidParameterError, match="effects"):
        describe_effects(table.drop(columns="ci_low"))


def test_describe_effects_says_no_more_than_the_models_support():
    table = pd.DataFrame(
        [
            _effects_row(engine="lmm", scale="rating", quantity="coefficient", term="a_z",
                         label="absorption", kind="trait", part="person", estimate=0.3,
                         ci_low=0.1, ci_high=0.5, df=12.0),
            _effects_row(engine="lmm", scale="rating", quantity="coefficient", term="b_z",
                         label="openness", kind="trait", part="person", estimate=2.2,
                         ci_low=-6.3e149, ci_high=6.3e149, df=6e-9),
            _effects_row(engine="bayes_ordinal", scale="rating",
                         quantity="average marginal effect", term="a_z", label="absorption",
                         kind="trait", part="person", estimate=0.28, ci_low=0.09, ci_high=0.49,
                         prob_positive=0.995),
        ]
    )  # fmt: skip
    small = describe_effects(table, n_participants=6)
    assert "With 6 participants this estimate is imprecise" in small.loc[0, "text"]
    assert "cannot estimate this effect reliably" in small.loc[1, "text"]
    assert pd.isna(small.loc[1, "direction"]) and not small.loc[1, "clear"]
    failed = describe_effects(table, bayes_problem="R-hat 1.029 above 1.01")
    assert "Bayesian" not in failed.loc[0, "text"] and pd.isna(failed.loc[0, "agree"])
    singular = describe_effects(table, lmm_problem="its fit is singular")
    assert all(t.endswith("not interpreted, because its fit is singular.") or "Bayesian" in t
               for t in singular["text"])  # fmt: skip
    assert singular["direction"].isna().all()


def test_plot_effects_panels():
    rows = [
        _effects_row(
            engine="lmm",
            scale="rating",
            term="a",
            label="a",
            kind="trait",
            part="person",
            estimate=0.2,
            ci_low=0.0,
            ci_high=0.4,
        ),
        _effects_row(
            engine="bayes_ordinal",
            scale="rating",
            term="a",
            label="a",
            kind="trait",
            part="person",
            estimate=0.19,
            ci_low=0.0,
            ci_high=0.38,
        ),
        _effects_row(
            engine="bayes_ordinal",
            scale="logit",
            term="a",
            label="a",
            kind="trait",
            part="person",
            estimate=0.4,
            ci_low=0.0,
            ci_high=0.8,
        ),
    ]
    fig = plot_effects(pd.DataFrame(rows))
    assert len(fig.axes) == 2
    assert "not the rating scale" in fig.axes[1].get_xlabel()
    assert fig.axes[0].get_title() == "Effects on the rating"
    seven = plot_effects(pd.DataFrame(rows), scale_min=1, scale_max=7)
    assert seven.axes[0].get_title() == "Effects on the 1–7 rating"
    assert len(plot_effects(pd.DataFrame(rows[:1])).axes) == 1
    with pytest.raises(InvalidParameterError, match="ci_level"):
        plot_effects(pd.DataFrame(rows), ci_level=95)


def test_fit_empathy_models_lmm_only(demo_data):
    with package_warnings() as caught:
        fitted = fit_empathy_models(demo_data, bayes=False, include_clmm=False)
    # the unconditional model has a session variance at 0 in this simulation (none simulated)
    assert {w.category for w in caught} <= {SingularFitWarning}
    eff = fitted.effects
    assert list(eff.columns) == EFFECT_COLUMNS
    assert eff["term"].tolist() == demo_data.terms()
    assert (eff["engine"] == "lmm").all() and fitted.bayes is None
    assert repr(fitted).startswith(f"EmpathyEffects: {fitted.formula} on 804 ratings")
    assert "Variance decomposition" in fitted.summary() and "<table" in fitted._repr_html_()
    assert_allclose(
        eff.set_index("term")["estimate"],
        fitted.lmm.fixed_.set_index("term").loc[demo_data.terms(), "estimate"],
        rtol=0,
        atol=0,
    )
    var = fitted.variance
    assert list(var.columns) == VARIANCE_COLUMNS
    for model, block in var.groupby("model"):
        assert_allclose(block["icc"].sum(), 1.0, atol=1e-12, err_msg=model)
    unc = var[var["model"] == "unconditional"].set_index("component")
    assert set(unc.index) == {"participant", "session", "story", "residual"}
    with pytest.raises(InvalidParameterError, match="EmpathyData"):
        fit_empathy_models(demo_data.data)
    with pytest.raises(InvalidParameterError, match="draws"):
        fit_empathy_models(demo_data, draws=0)


def test_ordinal_mixed_model_beside_the_lmm(demo_data):
    """The cumulative link model answers on both scales and agrees with the LMM in rating points."""
    with package_warnings() as caught:
        fitted = fit_empathy_models(demo_data, bayes=False)
    assert {w.category for w in caught} <= {SingularFitWarning}
    eff = fitted.effects
    assert set(eff["engine"]) == {"lmm", "clmm"}
    clmm = eff[eff["engine"] == "clmm"]
    logit = clmm[clmm["scale"] == "logit"].set_index("term")
    rating = clmm[clmm["scale"] == "rating"].set_index("term")
    assert list(logit.index) == demo_data.terms()
    fixed = fitted.clmm.fixed_.set_index("term").loc[demo_data.terms()]
    assert_allclose(logit["estimate"], fixed["estimate"], rtol=0, atol=0)
    slope = fitted.meta["clmm"]["marginal_slope"]
    assert 0 < slope < 1
    assert_allclose(rating["estimate"], fixed["estimate"] * slope, rtol=1e-12)
    assert_allclose(
        rating["ci_high"] - rating["ci_low"], (fixed["ci_high"] - fixed["ci_low"]) * slope
    )
    # two likelihood models of the same ratings: the average marginal effects are close to the
    # LMM coefficients (demo study: at most 0.3 SE apart)
    lmm = eff[eff["engine"] == "lmm"].set_index("term")
    gap = (rating["estimate"] - lmm["estimate"]).abs() / lmm["se"]
    assert (gap < 0.75).all(), gap.sort_values().tail(3)
    var = fitted.variance[fitted.variance["engine"] == "clmm"]
    assert_allclose(var["icc"].sum(), 1.0, atol=1e-12)
    assert var.set_index("component").at["residual", "variance"] == pytest.approx(np.pi**2 / 3)


def test_bayes_needs_whole_ratings(demo_data):
    frame = demo_data.data.assign(empathy=demo_data.data["empathy"] + 0.5)
    fractional = EmpathyData(frame, demo_data.predictors, "participant_id", "empathy", 1, 5.5, 0)
    with pytest.raises(InvalidParameterError, match="whole-number"):
        fit_empathy_models(fractional, bayes=True)
    with pytest.raises(InvalidParameterError, match="whole-number"):
        fit_empathy_models(fractional, bayes=False)


# ---------------------------------------------------------------------------------------------
# slow: recovery of the simulated truth by both engines, Bayesian benchmark


def _fit_recorded(data, **kw):
    with package_warnings() as caught:
        fitted = fit_empathy_models(data, **kw)
    # diagnostics of modest chains, a session variance at 0 and a week slope the data cannot
    # estimate (dropped by the stated rule) are expected; nothing else
    assert {w.category for w in caught} <= {SamplingWarning, SingularFitWarning, DataQualityWarning}
    for w in caught:
        if issubclass(w.category, DataQualityWarning):
            assert "random week slope" in str(w.message) or "story random" in str(w.message)
    return fitted


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2024, 7, 31])
def test_both_engines_recover_truth_and_agree(tmp_path_factory, seed):
    """LMM, cumulative link and Bayesian models recover the simulated study's truth."""
    logit, slope, _ = true_effects(seed)
    study = study_of(tmp_path_factory, seed, f"recover{seed}")
    data = empathy_data(study)
    fitted = _fit_recorded(data, draws=500, tune=500, seed=seed)
    eff = fitted.effects.set_index(["engine", "scale", "term"])
    terms = data.terms()
    misses = {"lmm": [], "clmm_logit": [], "bayes_logit": [], "bayes_rating": []}
    for term in terms:
        truth_rating = logit.get(term, 0.0) * slope
        for key, (engine, scale, truth) in {
            "lmm": ("lmm", "rating", truth_rating),
            "clmm_logit": ("clmm", "logit", logit.get(term, 0.0)),
            "bayes_logit": ("bayes_ordinal", "logit", logit.get(term, 0.0)),
            "bayes_rating": ("bayes_ordinal", "rating", truth_rating),
        }.items():
            rec = eff.loc[(engine, scale, term)]
            if not rec["ci_low"] <= truth <= rec["ci_high"]:
                misses[key].append(term)
        # the two engines agree on the rating scale: far closer than either's uncertainty
        # (seeds 2024, 7, 11, 31: at most 0.53 SE apart; SEs within 10% of each other)
        lmm = eff.loc[("lmm", "rating", term)]
        bayes = eff.loc[("bayes_ordinal", "rating", term)]
        assert abs(lmm["estimate"] - bayes["estimate"]) < 0.75 * max(lmm["se"], bayes["se"]), term
        assert bayes["se"] == pytest.approx(lmm["se"], rel=0.25), term
    # 16 terms at 95%: allow at most 2 misses per engine and seed (P(>2 | 95%) ~ 4%)
    for key, missed in misses.items():
        assert len(missed) <= 2, (key, missed)
    # the cumulative link model recovers the true slope of E[rating] as well
    assert fitted.meta["clmm"]["marginal_slope"] == pytest.approx(slope, rel=0.2)
    # the fitted average slope of E[rating] is close to the true one
    # (seeds 2024, 7, 11, 31, 5: within 2%, 1%, 1%, 1%, 13%)
    assert fitted.meta["bayes"]["marginal_slope"] == pytest.approx(slope, rel=0.2)
    # the Bayesian participant sd covers the simulated one (latent scale)
    var = fitted.variance
    sim_sd = simulate_frames(seed=seed).truth["empathy"]["sd_person_intercept"]
    is_person = (var["engine"] == "bayes_ordinal") & (var["component"] == "participant")
    person = var[is_person].iloc[0]
    assert person["variance_ci_low"] <= sim_sd**2 <= person["variance_ci_high"]


def test_sampling_settings_default_to_the_model_defaults():
    from longitudinal.predict.common import sampling_settings
    from models.bayes import DEFAULT_SAMPLING

    expected = tuple(DEFAULT_SAMPLING[k] for k in ("draws", "tune", "chains"))
    assert sampling_settings(None, None, None, where="f") == expected
    assert sampling_settings(300, 0, 4, where="f") == (300, 0, 4)
    assert sampling_settings("auto", 0, 4, where="f") == ("auto", 0, 4)
    with pytest.raises(InvalidParameterError, match="`draws`"):
        sampling_settings("many", None, None, where="f")
    with pytest.raises(InvalidParameterError, match="`draws`"):
        sampling_settings(0, None, None, where="f")
