"""Tests of longitudinal/predict.py: empathy models and the out-of-person benchmark.

Every expected number comes from the simulator's known truth (longitudinal/simulate.py:
``SimulatedStudy.design`` holds the predictors and the linear predictor of every rating,
``truth["empathy"]`` the generating coefficients), from models/evaluation.py (itself tested
against scipy), or from hand-made tables.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from numpy.testing import assert_allclose
from scipy.special import expit

from longitudinal._errors import InvalidParameterError
from longitudinal.predict import (
    EFFECT_COLUMNS,
    MODEL_DESCRIPTIONS,
    VARIANCE_COLUMNS,
    EmpathyData,
    _fit_predict,
    _raw_predictors,
    describe_effects,
    empathy_data,
    empathy_effects_section,
    empathy_formula,
    evaluate_predictions,
    fit_empathy_models,
    plot_effects,
    plot_metrics,
    run_evaluation,
)
from longitudinal.simulate import simulate_frames, simulate_study
from longitudinal.study import load_study
from models._errors import DataQualityWarning, SamplingWarning, SingularFitWarning
from models.evaluation import GroupedSplit, prediction_metrics

# simulator truth key -> predictor column of empathy_data
TRUTH_TERMS = {
    "agreeableness_z": "bfi44_agreeableness_z",
    "openness_z": "bfi44_openness_z",
    "absorption_z": "tas4_absorption_z",
    "sites_z": "sites_empathy_z",
    "cls9_humanity_between_z": "cls9_humanity_compassionate_love_between_z",
    "cls9_humanity_within_z": "cls9_humanity_compassionate_love_within_z",
    "who5_between_z": "who5_percentage_between_z",
    "who5_within_z": "who5_percentage_within_z",
    "week": "week",
}


def _study(tmp_path_factory, seed, name):
    path = simulate_study(tmp_path_factory.mktemp(name) / "study", seed=seed)
    return load_study(path)


@pytest.fixture(scope="module")
def demo_study(tmp_path_factory):
    return _study(tmp_path_factory, 2024, "demo")


@pytest.fixture(scope="module")
def demo_data(demo_study):
    return empathy_data(demo_study)


def _true_effects(seed):
    """Truth of every predictor (0 where the simulator has none): logit and rating scale."""
    sim = simulate_frames(seed=seed)
    emp = sim.truth["empathy"]
    logit = {col: 0.0 for col in TRUTH_TERMS.values()}
    for key, col in TRUTH_TERMS.items():
        logit[col] = emp["fixed"][key]
    # words enter as words_z = between + within parts, so both parts carry the coefficient
    logit["words_between_z"] = logit["words_within_z"] = emp["fixed"]["words_z"]
    # average slope of E[rating] in the linear predictor, at the true parameters
    eta = sim.design["linear_predictor"].to_numpy()
    cut = np.asarray(emp["cutpoints"])
    p = expit(cut[None, :] - eta[:, None])
    slope = float((p * (1 - p)).sum(axis=1).mean())
    return logit, slope, sim


# ---------------------------------------------------------------------------------------------
# predictors


def test_predictors_equal_the_simulator_design(demo_data):
    sim = simulate_frames(seed=2024)
    merged = demo_data.data.merge(
        sim.design, on=["session_id", "position"], suffixes=("", "_truth"), validate="1:1"
    )
    assert len(merged) == len(demo_data.data) == 804
    for key, col in TRUTH_TERMS.items():
        other = f"{key}_truth" if key == "week" else key
        assert_allclose(merged[col], merged[other], rtol=0, atol=1e-12, err_msg=col)
    words = merged["words_between_z"] + merged["words_within_z"]
    assert_allclose(words, merged["words_z"], rtol=0, atol=1e-12)


def test_predictor_table(demo_data):
    p = demo_data.predictors
    assert list(p.columns) == [
        "predictor",
        "source",
        "kind",
        "part",
        "center",
        "scale",
        "label",
        "unit",
    ]
    # WHO-5 raw and percentage are the same items: only the last (percentage) is used
    assert "who5_raw_between_z" not in set(p["predictor"])
    assert "who5_percentage_within_z" in set(p["predictor"])
    assert p["kind"].tolist().count("trait") == 7
    assert p.set_index("predictor").loc["week", "scale"] == 1.0
    data = demo_data.data
    assert demo_data.n_dropped == 0
    # within parts average to ~0 within a person only across waves, not rows; but the
    # between part is constant within a person
    assert (data.groupby("participant_id")["words_between_z"].nunique() == 1).all()
    assert demo_data.terms(kinds=["time"]) == ["week"]


def test_empathy_data_bad_input(demo_study):
    with pytest.raises(InvalidParameterError, match="Study"):
        empathy_data(pd.DataFrame())
    with pytest.raises(InvalidParameterError, match="session_features.*shoe_size"):
        empathy_data(demo_study, session_features=["shoe_size"])
    with pytest.raises(InvalidParameterError, match="traits"):
        empathy_data(demo_study, traits=["not_a_column"])


def test_empathy_data_custom_columns(demo_study):
    data = empathy_data(
        demo_study,
        traits=["tas4_absorption"],
        states=["who5_raw"],
        session_features=("duration_min", "words"),
    )
    assert data.terms() == [
        "tas4_absorption_z",
        "who5_raw_between_z",
        "who5_raw_within_z",
        "duration_min_between_z",
        "duration_min_within_z",
        "words_between_z",
        "words_within_z",
        "week",
    ]
    # who5 raw x 4 = percentage: standardized parts are identical
    full = empathy_data(demo_study)
    assert_allclose(
        data.data["who5_raw_within_z"], full.data["who5_percentage_within_z"], atol=1e-12
    )


def test_empathy_formula(demo_data):
    full = empathy_formula(demo_data)
    assert full.startswith("empathy ~ bfi44_extraversion_z + ")
    assert full.endswith("+ week + (1 + week | participant_id) + (1 | story_id)")
    traits = empathy_formula(demo_data, kinds=["trait"], story_effects=False)
    assert traits.endswith("sites_empathy_z + (1 | participant_id)")
    assert "week" not in traits
    with pytest.raises(InvalidParameterError, match="kinds"):
        empathy_formula(demo_data, kinds=["behaviour"])


# ---------------------------------------------------------------------------------------------
# effects: fast parts


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
    small = describe_effects(table, n_people=6)
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
    assert len(plot_effects(pd.DataFrame(rows[:1])).axes) == 1
    with pytest.raises(InvalidParameterError, match="ci_level"):
        plot_effects(pd.DataFrame(rows), ci_level=95)


def test_fit_empathy_models_lmm_only(demo_data):
    with package_warnings() as caught:
        fitted = fit_empathy_models(demo_data, include_bayes=False, include_clmm=False)
    # the unconditional model has a session variance at 0 in this simulation (none simulated)
    assert {w.category for w in caught} <= {SingularFitWarning}
    eff = fitted.effects
    assert list(eff.columns) == EFFECT_COLUMNS
    assert eff["term"].tolist() == demo_data.terms()
    assert (eff["engine"] == "lmm").all() and fitted.bayes is None
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
        fitted = fit_empathy_models(demo_data, include_bayes=False)
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
        fit_empathy_models(fractional, include_bayes=True)
    with pytest.raises(InvalidParameterError, match="whole-number"):
        fit_empathy_models(fractional, include_bayes=False)


def test_effects_section_without_bayes(demo_study, tmp_path):
    section = empathy_effects_section(demo_study, tmp_path, include_bayes=False)
    assert section.heading == "What predicts empathy" and section.anchor == "predictors"
    assert set(section.tables) == {
        "empathy_effects",
        "empathy_variance",
        "empathy_predictors",
        "empathy_reading",
    }
    file, caption = section.figures["empathy_effects"]
    assert (tmp_path / file).is_file() and caption
    assert "data:image/png;base64," in section.html
    assert "rating points" in section.html
    # every effect gets a sentence, and no participant id leaks into the section
    assert section.html.count("<li>") >= len(section.tables["empathy_reading"])
    ids = demo_study.participants["participant_id"].astype(str)
    assert not any(f">{i}<" in section.html or f" {i} " in section.html for i in ids)
    assert any("SingularFitWarning" in n for n in section.notes)


# ---------------------------------------------------------------------------------------------
# the benchmark


def test_population_predictions_ignore_test_ratings(demo_study):
    """Unseen participants' ratings never reach the model: changing them changes nothing."""
    raw = _raw_predictors(
        demo_study, traits=None, states=None, session_features=("words",), func="test"
    )
    ids = sorted(raw.rows["participant_id"].unique())
    train, test = ids[:30], ids[30:]
    shifted_rows = raw.rows.copy()
    is_test = shifted_rows["participant_id"].isin(test)
    shifted_rows.loc[is_test, "empathy"] = 6 - shifted_rows.loc[is_test, "empathy"]
    shifted = type(raw)(**{**raw.__dict__, "rows": shifted_rows})
    for model in ("majority_vote", "grand_mean", "lmm_traits", "lmm_full"):
        a = _fit_predict(model, raw, train, {"test": test}, seed=0, bayes={}, notes=[])
        b = _fit_predict(model, shifted, train, {"test": test}, seed=0, bayes={}, notes=[])
        assert_allclose(a["test"][1], b["test"][1], rtol=0, atol=0, err_msg=model)
        assert not np.array_equal(a["test"][0], b["test"][0])


def test_evaluation_without_bayes(demo_study):
    result = evaluate_predictions(demo_study, seeds=2, k=3, include_bayes=False)
    m = result.metrics
    assert list(m.columns) == ["model", "split", "seed", "r", "rho", "acc", "f1", "mse"]
    models = [name for name in MODEL_DESCRIPTIONS if name != "bayes_ordinal"]
    assert sorted(set(m["model"])) == sorted(models)
    assert m.groupby(["model", "split"]).size().eq(2).all()
    assert set(m["split"]) == {"val", "test", "kfold"}
    constant = m[m["model"].isin(["majority_vote", "grand_mean"])]
    assert constant["r"].isna().all() and constant["rho"].isna().all()
    assert constant["mse"].notna().all()
    lmm = m[~m["model"].isin(["majority_vote", "grand_mean"])]
    assert lmm[["r", "rho", "acc", "f1", "mse"]].notna().all().all()
    # sizes of the 70/20/10 split of 41 participants
    runs = result.runs[result.runs["fold"].isna()]
    assert set(runs["participants_train"]) == {29}
    assert set(runs.loc[runs["split"] == "test", "participants_test"]) == {4}
    assert set(runs.loc[runs["split"] == "val", "participants_test"]) == {8}
    k_runs = result.runs[result.runs["split"] == "kfold"]
    per_fold = k_runs.groupby(["model", "seed"])["participants_test"].sum()
    assert (per_fold == 41).all()
    assert result.parameters["threshold"] == 3.0
    assert "> 3" in result.parameters["threshold_rule"]
    # expected NaN, not a warning
    assert not any("grand_mean" in n or "majority_vote" in n for n in result.notes)
    s = result.summary
    assert_allclose(
        s.set_index(["model", "split"]).loc[("lmm_traits", "test"), "mse_mean"],
        m[(m["model"] == "lmm_traits") & (m["split"] == "test")]["mse"].mean(),
        atol=1e-12,
    )


def test_evaluation_grand_mean_metrics_by_hand(demo_study):
    """The grand-mean row equals the metrics of the training mean, computed independently."""
    from models.evaluation import grouped_split

    data = empathy_data(demo_study)
    groups = data.data["participant_id"].to_numpy(dtype=object)
    split = grouped_split(groups, seed=3)
    y = data.data["empathy"].to_numpy()
    mean = y[split.train].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = prediction_metrics(y[split.test], np.full(split.test.size, mean))
    result = evaluate_predictions(demo_study, seeds=[3], k=0, models=["grand_mean"])
    row = result.metrics[result.metrics["split"] == "test"].iloc[0]
    assert row["seed"] == 3
    for name in ("acc", "f1", "mse"):
        assert_allclose(row[name], getattr(expected, name), rtol=0, atol=1e-12)


def test_evaluation_majority_vote_metrics_by_hand(demo_study):
    """majority_vote predicts the most frequent training rating for everyone (holdout and
    K-fold), scored like any model; its r and rho are undefined by design."""
    from collections import Counter

    from models.evaluation import grouped_kfold, grouped_split

    data = empathy_data(demo_study)
    groups = data.data["participant_id"].to_numpy(dtype=object)
    y = data.data["empathy"].to_numpy(dtype=float)

    def mode(values):
        counts = Counter(values.tolist())
        top = max(counts.values())
        tied = sorted(v for v, c in counts.items() if c == top)
        return min(tied, key=lambda v: (abs(v - values.mean()), v))

    split = grouped_split(groups, seed=2)
    oof = np.empty_like(y)
    for f in grouped_kfold(groups, k=3, seed=2):
        oof[f.test] = mode(y[f.train])
    result = evaluate_predictions(demo_study, seeds=[2], k=3, models=["majority_vote"])
    m = result.metrics.set_index("split")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        holdout = prediction_metrics(y[split.test], np.full(split.test.size, mode(y[split.train])))
        kfold = prediction_metrics(y, oof)
    for name in ("acc", "f1", "mse"):
        assert_allclose(m.loc["test", name], getattr(holdout, name), rtol=0, atol=1e-12)
        assert_allclose(m.loc["kfold", name], getattr(kfold, name), rtol=0, atol=1e-12)
    assert m[["r", "rho"]].isna().all().all()
    ci = result.intervals.set_index("metric")
    assert ci.loc[["r", "rho"], "interval"].eq("undefined").all()
    assert ci.loc["mse", "ci_low"] <= ci.loc["mse", "estimate"] <= ci.loc["mse", "ci_high"]


def test_row_level_split_is_caught_by_the_runner(demo_study, monkeypatch):
    """If the splitter were changed to split rows, the evaluation must refuse to run."""

    def row_level_split(groups, *, sizes, seed):
        n = len(groups)
        perm = np.random.default_rng(seed).permutation(n)
        a, b = int(0.7 * n), int(0.9 * n)
        parts = [np.sort(perm[:a]), np.sort(perm[a:b]), np.sort(perm[b:])]
        return GroupedSplit(*parts, (), (), (), tuple(sizes), seed)

    monkeypatch.setattr("longitudinal.splits.grouped_split", row_level_split)
    with pytest.raises(AssertionError, match="participants in train and test"):
        evaluate_predictions(demo_study, seeds=1, k=0, models=["grand_mean"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seeds": 0}, "seeds"),
        ({"seeds": True}, "seeds"),
        ({"seeds": [1, 1]}, "distinct"),
        ({"k": 1}, "`k`"),
        ({"models": ["gpt4"]}, "models"),
        ({"include_bayes": "yes"}, "include_bayes"),
        ({"threshold": "3"}, "threshold"),
        ({"sizes": (0.5, 0.5, 0.5)}, "sizes"),
        ({"n_boot": -1}, "n_boot"),
        ({"ci_level": 95}, "ci_level"),
        ({"bootstrap_seed": -2}, "bootstrap_seed"),
        ({"predictions": 42}, "predictions"),
    ],
)
def test_evaluation_bad_options(demo_study, kwargs, match):
    params = {"seeds": 1, "k": 0, "models": ["grand_mean"], **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        evaluate_predictions(demo_study, **params)


def test_run_evaluation_writes_outputs(demo_study, tmp_path):
    out = run_evaluation(demo_study.root, tmp_path / "evaluate", seeds=2, k=2, include_bayes=False)
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        ".empathic-longitudinal",  # marks the folder as this command's output
        "comparisons.csv",
        "evaluation.json",
        "metrics.csv",
        "metrics.png",
        "metrics_ci.csv",
        "runs.csv",
        "summary.csv",
        "table.md",
    ]
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics.columns) == ["model", "split", "seed", "r", "rho", "acc", "f1", "mse"]
    params = json.loads((out / "evaluation.json").read_text())
    assert params["threshold"] == 3.0 and params["seeds"] == [0, 1]
    table = (out / "table.md").read_text()
    assert "| Model | r | ρ | Acc | F1 | MSE |" in table and "lmm_full" in table
    # 41 people: 4 in each seed's test set, too few for any inference; the K-fold intervals
    assert "test set holds 4 participant(s); a test set of fewer than 10 people" in table
    assert "participant-cluster bootstrap, B = 2000 replicates, seed 0" in table
    assert "Differences from the baselines to beat (majority_vote, grand_mean, lmm_traits)" in table
    ci = pd.read_csv(out / "metrics_ci.csv")
    assert list(ci.columns) == [
        "model", "metric", "estimate", "ci_low", "ci_high", "ci_level", "interval", "n_boot",
        "n_groups",
    ]  # fmt: skip
    assert set(ci["interval"]) <= {"fisher_z", "logit", "log", "percentile", "undefined"}
    summary = pd.read_csv(out / "summary.csv")
    kfold = summary[summary["split"] == "kfold"].set_index("model")
    for rec in ci.dropna(subset=["estimate"]).itertuples():
        assert_allclose(rec.estimate, kfold.loc[rec.model, f"{rec.metric}_mean"], atol=1e-9)
        assert rec.ci_low <= rec.estimate <= rec.ci_high
    comparisons = pd.read_csv(out / "comparisons.csv")
    assert set(comparisons["verdict"]) <= {"better", "worse", "interval includes 0", "undefined"}
    assert params["bootstrap"]["n_boot"] == 2000 and params["holdout_test_participants"] == [4]
    # no file names a participant (the report copies this folder)
    ids = set(demo_study.participants["participant_id"].astype(str))
    for path in out.iterdir():
        if path.suffix in (".csv", ".json", ".md"):
            text = path.read_text()
            assert not any(i in text for i in ids), path.name
    with pytest.raises(InvalidParameterError, match="not empty"):
        run_evaluation(demo_study.root, out, seeds=1, include_bayes=False)
    again = run_evaluation(demo_study.root, out, seeds=1, k=0, include_bayes=False, overwrite=True)
    assert pd.read_csv(again / "metrics.csv")["seed"].unique().tolist() == [0]


def test_plot_metrics(demo_study):
    result = evaluate_predictions(demo_study, seeds=2, k=0, models=["grand_mean", "lmm_traits"])
    fig = plot_metrics(result.summary)
    assert len(fig.axes) == 5
    with pytest.raises(InvalidParameterError, match="split"):
        plot_metrics(result.summary, split="kfold")


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
    logit, slope, _ = _true_effects(seed)
    study = _study(tmp_path_factory, seed, f"recover{seed}")
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


@pytest.mark.slow
def test_benchmark_with_bayes(demo_study):
    result = evaluate_predictions(demo_study, seeds=1, k=0, models=["lmm_full", "bayes_ordinal"])
    m = result.metrics.set_index(["model", "split"])
    assert m[["r", "rho", "acc", "f1", "mse"]].notna().all().all()
    # same predictors, two engines: similar out-of-person accuracy
    for split in ("val", "test"):
        assert abs(m.loc[("bayes_ordinal", split), "r"] - m.loc[("lmm_full", split), "r"]) < 15
        assert m.loc[("bayes_ordinal", split), "mse"] == pytest.approx(
            m.loc[("lmm_full", split), "mse"], rel=0.25
        )
    assert result.parameters["bayes"]["draws"] == 500


@pytest.mark.slow
def test_effects_section_with_bayes(demo_study, tmp_path):
    section = empathy_effects_section(
        demo_study, tmp_path, draws=100, tune=100, story_effects=False, seed=3
    )
    assert "Bayes AME" in section.html and "Bayes logit" in section.html
    effects = section.tables["empathy_effects"]
    assert set(effects["engine"]) == {"lmm", "clmm", "bayes_ordinal"}
    assert set(effects.loc[effects["engine"] == "bayes_ordinal", "scale"]) == {"rating", "logit"}
    reading = section.tables["empathy_reading"]
    # 100 draws fail the diagnostics gate: the Bayesian model is shown, never narrated, and
    # the section says how to sample longer
    assert reading["agree"].isna().all()
    assert not reading["text"].str.contains("Bayesian").any()
    assert "did not pass its sampling diagnostics" in section.html
    assert "--draws 2000 --tune 2000 --chains 4" in section.html
    variance = section.tables["empathy_variance"]
    bayes = variance[variance["engine"] == "bayes_ordinal"]
    assert_allclose(bayes["icc"].sum(), 1.0, atol=1e-12)
    # 100 draws cannot pass the diagnostics gate: recorded, not raised
    assert any("SamplingWarning" in n for n in section.notes)
