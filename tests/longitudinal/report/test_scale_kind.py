"""The kind of the rating scale decides the models (longitudinal/study/rating_scale.py).

A scale of more than 11 points is continuous: the two-wave 0-100 study of
``tests/data/studies/newcomer.py`` (written with pandas, not the simulator) gets the linear
mixed model only, a rating distribution in 10 bins, ordinal models only on request
(``--ordinal-bins K``), and a benchmark whose majority vote is the median training rating and
whose MSE is in squared rating points. The three-wave 1-7 study keeps the ordinal models.
Every expected count and metric is computed here with pandas from the study's files.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import load_newcomer, package_warnings, restrict_sections
from numpy.testing import assert_allclose
from scipy import special

from longitudinal._errors import InvalidParameterError
from longitudinal.cli import main
from longitudinal.predict import empathy_data, evaluate_predictions, fit_empathy_models
from longitudinal.study.config import RatingsSpec
from longitudinal.study.loaded import load_study
from longitudinal.study.rating_scale import bin_ratings, check_ordinal_bins, scale_kind
from surveys import UndefinedStatisticWarning

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")

newcomer = load_newcomer()


@pytest.fixture(scope="module")
def slider_dir(tmp_path_factory):
    return newcomer.two_wave_slider(tmp_path_factory.mktemp("scale") / "two_wave_slider")


@pytest.fixture(scope="module")
def slider(slider_dir):
    return load_study(slider_dir)


@pytest.fixture(scope="module")
def likert(tmp_path_factory):
    root = newcomer.three_wave_likert(tmp_path_factory.mktemp("scale") / "three_wave_likert")
    with warnings.catch_warnings():  # the TIPI's two-item scales have no omega: expected
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        return load_study(root)


@pytest.fixture(scope="module")
def ratings(slider_dir):
    return pd.read_csv(slider_dir / "ratings.csv", dtype={"pid": str})


def _report(study_dir: Path, out: Path, *extra: str) -> Path:
    code = main(["report", str(study_dir), "--out", str(out), "--no-bayes", "--formats",
                 "html", *extra])  # fmt: skip
    assert code == 0
    return out


@pytest.fixture(scope="module")
def report(slider_dir, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        restrict_sections(patch, ["ratings", "predictors"])  # the two sections read below
        return _report(slider_dir, tmp_path_factory.mktemp("scale") / "report")


@pytest.fixture(scope="module")
def binned_report(slider_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("scale") / "binned"
    with pytest.MonkeyPatch.context() as patch:
        restrict_sections(patch, ["predictors"])  # the section that reads --ordinal-bins
        return _report(slider_dir, out, "--ordinal-bins", "5")


# -- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "kind"),
    [
        (1, 5, "ordinal"),
        (1, 7, "ordinal"),
        (0, 10, "ordinal"),
        (1, 12, "continuous"),
        (0, 100, "continuous"),
    ],  # fmt: skip
)
def test_more_than_eleven_points_is_continuous(lo, hi, kind):
    assert scale_kind(lo, hi) == kind
    assert RatingsSpec("r.csv", lo, hi).kind == kind


def test_bins_of_equal_width_with_the_top_in_the_last():
    values = np.arange(0, 101, dtype=float)
    by_hand = np.minimum(values // 20, 4) + 1  # 0-19 -> 1, ..., 80-100 -> 5
    assert_allclose(bin_ratings(values, 0, 100, 5), by_hand)
    assert np.isnan(bin_ratings([np.nan], 0, 100, 5)).all()


@pytest.mark.parametrize("bad", [1, 12, 0, 2.5, True, "5"])
def test_a_bad_number_of_bins_is_refused(bad):
    with pytest.raises(InvalidParameterError, match="whole number from 2 to 11"):
        check_ordinal_bins(bad, 0, 100, where="test")


# -- the report on a 0-100 slider ---------------------------------------------------------------


def test_a_continuous_scale_gets_no_ordinal_model(report):
    effects = pd.read_csv(report / "tables" / "empathy_effects.csv")
    assert set(effects["engine"]) == {"lmm"}
    assert not (report / "tables" / "empathy_ordinal_bins.csv").exists()
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "The 0–100 scale has 101 points, more than 11, so it is analysed as a continuous" in page
    assert "No ordinal model was fitted: `--ordinal-bins K`" in page.replace("&#96;", "`")


def test_the_rating_distribution_is_binned(report, ratings):
    table = pd.read_csv(report / "tables" / "ratings_distribution.csv")
    decile = np.minimum(ratings["empathy"] // 10, 9).astype(int)  # [0, 10), ..., [90, 100]
    counts = decile.value_counts().reindex(range(10), fill_value=0)
    assert len(table) == 10
    assert table["n"].tolist() == counts.tolist()
    assert_allclose(table["proportion"], counts / len(ratings))
    assert table["label"].iloc[0] == "[0, 10)" and table["label"].iloc[-1] == "[90, 100]"
    page = (report / "report.html").read_text(encoding="utf-8")
    start = page.index("<h2>Empathy ratings</h2>")
    section = page[start : page.index("<h2>", start + 10)]
    assert "in 10 bins of equal width 10 over the 0–100 scale" in section
    assert section.count("<tr>") < 30  # the summary and 10 bins, not one row per value


def test_ordinal_bins_fit_the_ordinal_model_on_binned_ratings(binned_report, ratings):
    effects = pd.read_csv(binned_report / "tables" / "empathy_effects.csv")
    assert set(effects["engine"]) == {"lmm", "clmm"}
    bins = pd.read_csv(binned_report / "tables" / "empathy_ordinal_bins.csv")
    # the models use the people whose agreeableness is scored (p41-p60 skipped an item)
    used = ratings[~ratings["pid"].isin([f"p{k}" for k in range(41, 61)])]
    by_hand = (np.minimum(used["empathy"] // 20, 4) + 1).astype(int).value_counts()
    assert bins["n"].tolist() == by_hand.reindex(range(1, 6), fill_value=0).tolist()
    assert_allclose(bins["midpoint"], [10, 30, 50, 70, 90])
    page = (binned_report / "report.html").read_text(encoding="utf-8")
    assert "As asked (--ordinal-bins 5), the ordinal models are also fitted" in page
    assert f"on {len(used)} ratings" in page


def test_the_binned_model_reads_in_rating_points(slider):
    data = empathy_data(slider)
    with package_warnings():  # singular fits, stepped down by the stated rule
        fitted = fit_empathy_models(data, bayes=False, ordinal_bins=5)
    clmm = fitted.clmm
    assert len(clmm.thresholds_) == 4  # five categories, four thresholds
    codes = np.minimum(data.data["empathy"] // 20, 4) + 1
    assert fitted.ordinal_bins["n"].tolist() == codes.value_counts().sort_index().tolist()
    # average marginal effect on the expected bin midpoint: 20 rating points per category
    eta = clmm.linear_predictor().to_numpy()
    p = special.expit(np.asarray(clmm.cutpoints_)[None, :] - eta[:, None])
    slope = float((p * (1 - p) * 20.0).sum(axis=1).mean())
    eff = fitted.effects[fitted.effects["engine"] == "clmm"]
    logit = eff[eff["scale"] == "logit"].set_index("term")["estimate"]
    rating = eff[eff["scale"] == "rating"].set_index("term")["estimate"]
    assert_allclose(rating, logit * slope, rtol=1e-10)
    assert fitted.meta["scale_kind"] == "continuous"
    assert fitted.meta["ordinal_bins"]["k"] == 5


def test_without_bins_the_api_fits_the_linear_model_only(slider):
    with package_warnings():  # singular fits, stepped down by the stated rule
        fitted = fit_empathy_models(empathy_data(slider), bayes=False)
    assert fitted.clmm is None and set(fitted.effects["engine"]) == {"lmm"}
    assert "more than 11" in fitted.meta["scale_rule"]


@pytest.mark.parametrize(
    ("bins", "needle"),
    [("1", "whole number from 2 to 11"), ("12", "whole number from 2 to 11")],
)
def test_bad_ordinal_bins_exit_2(slider_dir, tmp_path, capsys, bins, needle):
    code = main(["report", str(slider_dir), "--out", str(tmp_path / "r"), "--ordinal-bins", bins])
    err = capsys.readouterr().err
    assert code == 2
    assert "--ordinal-bins" in err and needle in err and f"got {bins}" in err
    assert not (tmp_path / "r").exists()


def test_ordinal_bins_on_an_ordinal_scale_exit_2(tmp_path, capsys):
    root = newcomer.three_wave_likert(tmp_path / "likert")
    code = main(["report", str(root), "--out", str(tmp_path / "r"), "--ordinal-bins", "3"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--ordinal-bins" in err and "1–7 scale has 7 points" in err
    assert not (tmp_path / "r").exists()


# -- a 1-7 scale keeps the ordinal models ----------------------------------------------------------


def test_a_seven_point_scale_keeps_the_ordinal_models(likert):
    with package_warnings():  # singular fits, stepped down by the stated rule
        fitted = fit_empathy_models(empathy_data(likert), bayes=False)
    assert set(fitted.effects["engine"]) == {"lmm", "clmm"}
    assert len(fitted.clmm.thresholds_) == len(fitted.clmm.categories_) - 1
    assert fitted.meta["scale_kind"] == "ordinal" and fitted.ordinal_bins is None
    with pytest.raises(InvalidParameterError, match="1–7 scale has 7 points"):
        fit_empathy_models(empathy_data(likert), bayes=False, ordinal_bins=3)


# -- the benchmark on a 0-100 slider --------------------------------------------------------------


def test_the_categorical_baseline_of_a_continuous_scale_is_the_median(slider, ratings):
    result = evaluate_predictions(
        slider, seeds=[0], k=0, models=["majority_vote"], bayes=False, n_boot=0
    )
    splits = result.splits
    part = splits.set_index("pid")["split"]
    frame = ratings[ratings["pid"].isin(part.index)].assign(split=lambda t: t["pid"].map(part))
    median = float(frame.loc[frame["split"] == "train", "empathy"].median())
    p = result.parameters
    assert p["scale"]["kind"] == "continuous" and p["threshold"] == 50.0
    assert "median" in p["models"]["majority_vote"]
    assert "squared rating points" in p["metric_units"]
    metrics = result.metrics.set_index("split")
    for name, label in (("val", "valid"), ("test", "test")):
        y = frame.loc[frame["split"] == label, "empathy"].to_numpy(dtype=float)
        assert len(y) > 0
        row = metrics.loc[name]
        # MSE in squared rating points (not x 100); accuracy and F1 binarised at 50, x 100
        assert row["mse"] == pytest.approx(np.mean((y - median) ** 2), rel=1e-12)
        positive = y > 50
        assert row["acc"] == pytest.approx(100 * np.mean(positive == (median > 50)), rel=1e-12)
        tp = int((positive & (median > 50)).sum())
        fp = int((~positive & (median > 50)).sum())
        fn = int((positive & ~(median > 50)).sum())
        assert row["f1"] == pytest.approx(100 * 2 * tp / (2 * tp + fp + fn), rel=1e-12)


def test_the_benchmark_leaves_the_ordinal_models_out(slider):
    result = evaluate_predictions(slider, seeds=[0], k=0, models=None, bayes=True, n_boot=0)
    assert not {"clmm_full", "bayes_ordinal"} & set(result.metrics["model"])
    assert any(n.startswith("clmm_full, bayes_ordinal not run: the 0–100 scale") for n in
               result.notes)  # fmt: skip
    with pytest.raises(InvalidParameterError, match="names clmm_full, but the 0–100 scale"):
        evaluate_predictions(slider, seeds=[0], k=0, models=["clmm_full"], n_boot=0)


def test_evaluate_writes_the_units_of_a_continuous_scale(slider_dir, tmp_path, capsys):
    out = tmp_path / "evaluate"
    code = main(["evaluate", str(slider_dir), "--out", str(out), "--seeds", "1", "--kfold",
                 "3", "--n-boot", "50"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "MSE in squared rating points, not x 100" in printed
    table = (out / "table.md").read_text(encoding="utf-8")
    assert "MSE in squared rating points, not x 100" in table
    params = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    summary = pd.read_csv(out / "summary.csv").set_index(["model", "split"])
    intervals = pd.read_csv(out / "metrics_ci.csv").set_index(["model", "metric"])
    # the grand mean's pooled K-fold MSE is a few hundred squared points, not x 100
    mse = summary.loc[("grand_mean", "kfold"), "mse_mean"]
    assert 100 < mse < 1000
    assert intervals.loc[("grand_mean", "mse"), "estimate"] == pytest.approx(mse, rel=1e-9)
    assert "squared rating points" in params["metrics"]["mse"]


# -- slow: the Bayesian model of a continuous scale ------------------------------------------


@pytest.mark.slow
def test_the_bayesian_model_of_a_continuous_scale_is_gaussian(slider):
    with warnings.catch_warnings():  # 100 draws of one chain fail the diagnostics gate
        warnings.simplefilter("ignore")
        fitted = fit_empathy_models(
            empathy_data(slider), draws=100, tune=100, chains=1, seed=1, story_effects=False
        )
    engines = set(fitted.effects["engine"])
    assert engines == {"lmm", "bayes_gaussian"}
    bayes = fitted.effects[fitted.effects["engine"] == "bayes_gaussian"]
    assert set(bayes["scale"]) == {"rating"} and set(bayes["quantity"]) == {"coefficient"}
    assert fitted.bayes.family == "gaussian" and fitted.meta["bayes"]["family"] == "gaussian"
    lmm = fitted.effects[fitted.effects["engine"] == "lmm"].set_index("term")
    # the same linear model twice: the posterior means lie near the REML estimates
    gap = (bayes.set_index("term")["estimate"] - lmm["estimate"]).abs() / lmm["se"]
    assert (gap < 1.0).all(), gap
    var = fitted.variance[fitted.variance["engine"] == "bayes_gaussian"]
    assert set(var["component"]) == {"participant", "residual"}
    assert_allclose(var["icc"].sum(), 1.0, atol=1e-9)
