"""Tests of longitudinal/predict/benchmark.py and results.py: the out-of-person benchmark."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from longitudinal._errors import InvalidParameterError
from longitudinal.predict import (
    MODEL_DESCRIPTIONS,
    empathy_data,
    evaluate_predictions,
    plot_metrics,
    run_evaluation,
)
from longitudinal.predict.benchmark_models import _fit_predict
from longitudinal.predict.predictors import _raw_predictors
from models.evaluation import GroupedSplit, prediction_metrics


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
    result = evaluate_predictions(demo_study, seeds=2, k=3, bayes=False)
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
    s = result.summary_table
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
    split = grouped_split(groups, seed=3, sizes=(0.7, 0.2, 0.1))
    y = data.data["empathy"].to_numpy()
    mean = y[split.train].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = prediction_metrics(y[split.test], np.full(split.test.size, mean), threshold=3.0)
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

    split = grouped_split(groups, seed=2, sizes=(0.7, 0.2, 0.1))
    oof = np.empty_like(y)
    for f in grouped_kfold(groups, k=3, seed=2):
        oof[f.test] = mode(y[f.train])
    result = evaluate_predictions(demo_study, seeds=[2], k=3, models=["majority_vote"])
    m = result.metrics.set_index("split")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        holdout = prediction_metrics(
            y[split.test], np.full(split.test.size, mode(y[split.train])), threshold=3.0
        )
        kfold = prediction_metrics(y, oof, threshold=3.0)
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

    monkeypatch.setattr("longitudinal.predict.splits.grouped_split", row_level_split)
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
        ({"bayes": "yes"}, "bayes"),
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
    out = run_evaluation(demo_study.root, tmp_path / "evaluate", seeds=2, k=2, bayes=False)
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        ".empathic-longitudinal",  # marks the folder as this command's output
        "comparisons.csv",
        "evaluation.json",
        "metrics.csv",
        "metrics.pdf",  # the figure for a journal, fonts embedded
        "metrics.png",
        "metrics.svg",  # the figure as a vector file, linked by the report
        "metrics_ci.csv",
        "runs.csv",
        "summary.csv",
        "table.md",
    ]
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics.columns) == ["model", "split", "seed", "r", "rho", "acc", "f1", "mse"]
    params = json.loads((out / "evaluation.json").read_text())
    # the demo study's 1-5 scale: its midpoint, 3, as before
    assert params["threshold"] == 3.0 and params["seeds"] == [0, 1]
    assert params["threshold_source"] == "the scale's midpoint"
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
        run_evaluation(demo_study.root, out, seeds=1, bayes=False)
    again = run_evaluation(demo_study.root, out, seeds=1, k=0, bayes=False, overwrite=True)
    assert pd.read_csv(again / "metrics.csv")["seed"].unique().tolist() == [0]


def test_plot_metrics(demo_study):
    result = evaluate_predictions(demo_study, seeds=2, k=0, models=["grand_mean", "lmm_traits"])
    fig = plot_metrics(result.summary_table)
    assert len(fig.axes) == 5
    with pytest.raises(InvalidParameterError, match="split"):
        plot_metrics(result.summary_table, split="kfold")


@pytest.mark.slow
def test_benchmark_with_bayes(demo_study):
    result = evaluate_predictions(
        demo_study, seeds=1, k=0, models=["lmm_full", "bayes_ordinal"], draws=500, tune=500
    )
    m = result.metrics.set_index(["model", "split"])
    assert m[["r", "rho", "acc", "f1", "mse"]].notna().all().all()
    # same predictors, two engines: similar out-of-person accuracy
    for split in ("val", "test"):
        assert abs(m.loc[("bayes_ordinal", split), "r"] - m.loc[("lmm_full", split), "r"]) < 15
        assert m.loc[("bayes_ordinal", split), "mse"] == pytest.approx(
            m.loc[("lmm_full", split), "mse"], rel=0.25
        )
    assert result.parameters["bayes"]["draws"] == 500
