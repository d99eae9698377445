"""The evaluate command, and report --no-bayes: each command reaches its engine.

Also the round trip of a researcher's own model (splits -> predictions -> evaluate) and the
refusal of predictions that cannot be scored.
"""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from numpy.testing import assert_allclose

from longitudinal.cli import main
from longitudinal.simulate import simulate_study
from longitudinal.study.loaded import load_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return simulate_study(tmp_path_factory.mktemp("cli") / "study", seed=5, n_participants=20)


def test_evaluate_writes_metrics_without_participant_leakage(study, tmp_path, capsys):
    out = tmp_path / "evaluate"  # never into the shared study: the report of a later test reads it
    assert main(["evaluate", str(study), "--out", str(out), "--seeds", "2", "--no-bayes"]) == 0
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics.columns[:8]) == ["model", "split", "seed", "r", "rho", "acc", "f1", "mse"]
    assert set(metrics["seed"]) == {0, 1}
    assert "bayes_ordinal" not in set(metrics["model"])
    assert {"lmm_full", "clmm_full"} <= set(metrics["model"])
    assert (out / "summary.csv").is_file()
    assert "metrics.csv" in capsys.readouterr().out
    assert json.loads((out / "evaluation.json").read_text())["raw_csv"] is False


def test_evaluate_rejects_zero_seeds(study, tmp_path, capsys):
    out = tmp_path / "evaluate"
    assert main(["evaluate", str(study), "--out", str(out), "--seeds", "0"]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert not out.exists()


def test_evaluate_kfold_option(study, tmp_path, capsys):
    out = tmp_path / "evaluate"
    args = ["evaluate", str(study), "--seeds", "1", "--no-bayes", "--out", str(out)]
    assert main([*args, "--kfold", "1"]) == 2
    assert "--kfold" in capsys.readouterr().err
    assert main([*args, "--n-boot", "-1"]) == 2
    assert "--n-boot" in capsys.readouterr().err
    assert not out.exists()
    assert main([*args, "--kfold", "0", "--raw-csv"]) == 0
    assert "kfold" not in set(pd.read_csv(out / "metrics.csv")["split"])
    assert json.loads((out / "evaluation.json").read_text())["raw_csv"] is True


def test_report_without_bayes_has_the_likelihood_models(study, tmp_path, sections_only):
    sections_only("predictors")  # the section --no-bayes reaches, built alone
    out = tmp_path / "report"
    assert main(["report", str(study), "--out", str(out), "--no-bayes"]) == 0
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    assert set(effects["engine"]) == {"lmm", "clmm"}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "What predicts empathy" in page and "Ordinal AME" in page and "Bayes AME" not in page


# ----------------------------------------------------------------- a researcher's own model
#
# Round trip: `longitudinal splits` -> predictions of the test participants' ratings ->
# `longitudinal evaluate --predictions`. The study names its columns its own way (person,
# visit, slot), and predictions use those names.


def _rename_columns(root):
    """Give the study's participant, session and position columns other names."""

    def rename(name, mapping):
        path = root / name
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[0] = ",".join(mapping.get(c, c) for c in lines[0].rstrip("\n").split(",")) + "\n"
        path.write_text("".join(lines), encoding="utf-8")

    rename("participants.csv", {"participant_id": "person"})
    rename("sessions.csv", {"participant_id": "person", "session_id": "visit"})
    rename("ratings.csv", {"participant_id": "person", "session_id": "visit", "position": "slot"})
    toml = (root / "study.toml").read_text(encoding="utf-8")
    columns = '[columns]\nperson = "person"\nsession = "visit"\nposition = "slot"\n\n'
    assert "\n[ratings]" in toml
    toml = toml.replace("\n[ratings]", "\n" + columns + "[ratings]", 1)
    (root / "study.toml").write_text(toml, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def own_names(tmp_path_factory):
    path = tmp_path_factory.mktemp("own") / "study"
    return _rename_columns(simulate_study(path, seed=5, n_participants=20))


def _test_ratings(splits, ratings, id_col):
    """The ratings each scheme x seed scores: of test participants (every one in a K-fold)."""
    splits = splits.assign(split=splits["split"].astype(str))
    scored = splits[(splits["split"] == "test") | splits["scheme"].str.startswith("kfold")]
    return scored.merge(ratings, on=id_col, validate="many_to_many")


def _independent_metrics(y, p, threshold=3.0):
    """The paper's five metrics (x 100) with NumPy/SciPy only, not the package's code."""
    from scipy.stats import spearmanr

    t, q = y > threshold, p > threshold
    precision = np.sum(t & q) / np.sum(q)
    recall = np.sum(t & q) / np.sum(t)
    return {
        "r": 100 * np.corrcoef(y, p)[0, 1],
        "rho": 100 * spearmanr(y, p).statistic,
        "acc": 100 * np.mean(t == q),
        "f1": 100 * 2 * precision * recall / (precision + recall),
        "mse": 100 * np.mean((y - p) ** 2),
    }


def test_round_trip_scores_a_users_model_beside_the_baselines(own_names, tmp_path, capsys):
    splits_csv = tmp_path / "splits.csv"
    assert (
        main(["splits", str(own_names), "--seeds", "1", "--kfold", "3", "--out", str(splits_csv)])
        == 0
    )
    splits = pd.read_csv(splits_csv, dtype={"person": str})
    assert list(splits.columns) == ["scheme", "seed", "person", "split"]
    ratings = pd.read_csv(own_names / "ratings.csv", dtype={"person": str, "visit": str})
    scored = _test_ratings(splits, ratings, "person")
    rng = np.random.default_rng(3)
    noisy = np.clip(scored["empathy"] + rng.normal(0, 0.9, len(scored)), 1, 5)
    keys = ["scheme", "seed", "person", "visit", "slot"]
    pred = pd.concat(
        [
            scored[keys].assign(model="ratings_themselves", prediction=scored["empathy"]),
            scored[keys].assign(model="noisy", prediction=noisy),
        ]
    )[["model", *keys, "prediction"]]
    pred_csv = tmp_path / "pred.csv"
    pred.iloc[: len(scored)].to_csv(pred_csv, index=False)
    more_csv = tmp_path / "more.csv"
    pred.iloc[len(scored) :].to_csv(more_csv, index=False, float_format="%.17g")
    out = tmp_path / "evaluate"
    args = ["evaluate", str(own_names), "--seeds", "1", "--kfold", "3", "--no-bayes"]
    args += ["--n-boot", "300", "--bootstrap-seed", "4"]
    args += ["--predictions", str(pred_csv), "--predictions", str(more_csv), "--out", str(out)]
    assert main(args) == 0, capsys.readouterr().err

    metrics = pd.read_csv(out / "metrics.csv")
    params = json.loads((out / "evaluation.json").read_text())
    assert params["n_dropped"] == 0  # every rating of ratings.csv is a benchmark rating
    assert params["user_models"] == ["ratings_themselves", "noisy"]
    # beside the baselines, after them
    models = metrics.loc[metrics["split"] == "test", "model"].tolist()
    assert models[-2:] == ["ratings_themselves", "noisy"] and "lmm_full" in models
    perfect = metrics[metrics["model"] == "ratings_themselves"].set_index("split")
    assert sorted(perfect.index) == ["kfold", "test"]  # no validation predictions given
    for split in ("test", "kfold"):
        values = perfect.loc[split, ["r", "rho", "acc", "f1"]].to_numpy(dtype=float)
        assert_allclose(values, 100, rtol=0, atol=1e-10)
        assert perfect.loc[split, "mse"] == 0

    # the metrics of the user's predictions, computed independently on the same rows
    got = metrics[metrics["model"] == "noisy"].set_index("split")
    mine = scored.assign(p=noisy)
    test = mine[mine["scheme"] == "holdout_70_20_10"]
    expected = _independent_metrics(test["empathy"].to_numpy(float), test["p"].to_numpy(float))
    for name, value in expected.items():
        assert_allclose(got.loc["test", name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    folds = mine[mine["scheme"] == "kfold_3"]
    assert folds["split"].nunique() == 3
    # the K-fold metric: every participant's out-of-fold prediction, pooled
    pooled = _independent_metrics(folds["empathy"].to_numpy(float), folds["p"].to_numpy(float))
    for name, value in pooled.items():
        assert_allclose(got.loc["kfold", name], value, rtol=1e-12, atol=1e-12, err_msg=name)

    summary = pd.read_csv(out / "summary.csv")
    assert {"ratings_themselves", "noisy"} <= set(summary["model"])
    table = (out / "table.md").read_text()
    assert "| noisy |" in table and "| ratings_themselves | 100.0 |" in table
    assert (out / "metrics.png").is_file()
    # 20 people: 2 in the test set of a seed, which supports no inference
    assert "test set holds 2 participant(s); a test set of fewer than 10 people" in table
    # the K-fold intervals: the ratings themselves sit at 100 with no width; every model
    # is compared on the same bootstrap draws
    ci = pd.read_csv(out / "metrics_ci.csv").set_index(["model", "metric"])
    assert params["bootstrap"]["n_boot"] == 300 and params["bootstrap"]["seed"] == 4
    exact = ci.loc[("ratings_themselves", "r"), ["estimate", "ci_low", "ci_high"]]
    assert_allclose(exact.to_numpy(dtype=float), 100, atol=1e-10)
    assert ci.loc[("ratings_themselves", "mse"), "ci_high"] == 0
    assert_allclose(ci.loc[("noisy", "r"), "estimate"], got.loc["kfold", "r"], atol=1e-10)
    comparisons = pd.read_csv(out / "comparisons.csv").set_index(["model", "versus", "metric"])
    worse = comparisons.loc[("noisy", "ratings_themselves", "mse")]
    assert worse["verdict"] == "worse" and worse["ci_low"] > 0
    assert "| noisy | lmm_traits |" in table


@pytest.fixture(scope="module")
def good_predictions(study):
    """Predictions of every scored rating for --seeds 1 --kfold 2 (the ratings + 0.1)."""
    from longitudinal.predict.selection import participant_splits

    with package_warnings():
        loaded = load_study(study)
    splits = participant_splits(loaded, seeds=1, k=2)
    ratings = pd.read_csv(study / "ratings.csv", dtype={"participant_id": str})
    scored = _test_ratings(splits, ratings, "participant_id")
    keys = ["scheme", "seed", "participant_id", "session_id", "position"]
    pred = scored[keys].assign(model="mine", prediction=np.clip(scored["empathy"] + 0.1, 1, 5))
    train = splits[(splits["scheme"] == "holdout_70_20_10") & (splits["split"] == "train")]
    trained = train.merge(ratings, on="participant_id")[keys].assign(model="mine", prediction=3.0)
    return pred[["model", *keys, "prediction"]].reset_index(drop=True), trained


def _drop(rows):
    return lambda p, t: (p.drop(index=rows), None)


def _set(row, column, value):
    def change(p, t):
        p = p.copy()
        p[column] = p[column].astype(object)
        p.loc[row, column] = value
        return p, row + 2  # the header is row 1

    return change


def _duplicate(p, t):
    return pd.concat([p, p.iloc[[4]]], ignore_index=True), 4 + 2


def _training_row(p, t):
    return pd.concat([p, t.iloc[[0]][p.columns]], ignore_index=True), len(p) + 2


def _baseline_name(p, t):
    p = p.copy()
    p.loc[p.index[-3:], "model"] = "lmm_full"
    return p, p.index[-3] + 2


def _missing_column(p, t):
    return p.drop(columns=["prediction"]), 1


BAD = {
    "missing test rating": (_drop([7]), "missing prediction of a test rating"),
    "duplicated rating": (_duplicate, "predicted more than once"),
    "unknown rating": (_set(9, "session_id", "P99-S01"), "no such rating in ratings.csv"),
    "unknown position": (_set(9, "position", "7"), "no such rating in ratings.csv"),
    "training participant": (_training_row, "a rating of a training participant"),
    "empty prediction": (_set(3, "prediction", np.nan), "the prediction is empty"),
    "infinite prediction": (_set(3, "prediction", "inf"), "not a finite number"),
    "text prediction": (_set(3, "prediction", "high"), "not a finite number"),
    "off the scale": (_set(5, "prediction", 5.5), "off the rating scale 1-5"),
    "below the scale": (_set(5, "prediction", 0), "off the rating scale 1-5"),
    "unknown scheme": (_set(2, "scheme", "holdout_80_10_10"), "unknown scheme"),
    "unknown seed": (_set(2, "seed", 4), "unknown seed"),
    "missing column": (_missing_column, "missing required column"),
    "baseline name": (_baseline_name, "the name of one of the package's baselines"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_predictions_are_refused_naming_the_row(
    study, good_predictions, tmp_path, capsys, case
):
    make, reason = BAD[case]
    pred, train = good_predictions
    bad, row = make(pred, train)
    path = tmp_path / "pred.csv"
    bad.to_csv(path, index=False)
    out = tmp_path / "evaluate"
    args = ["evaluate", str(study), "--seeds", "1", "--kfold", "2", "--no-bayes"]
    assert main([*args, "--predictions", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot score the predictions" in err and "the header is row 1" in err
    assert reason in err
    problem = next(line for line in err.splitlines() if reason in line)
    assert str(path) in problem
    if row is not None:
        assert f"row {row}" in problem
    else:  # a missing rating has no row: the rating is named
        assert "participant_id=" in problem and "session_id=" in problem
    assert not out.exists()
    assert not list(tmp_path.glob(".evaluate*"))


def test_every_problem_of_every_file_in_one_report(study, good_predictions, tmp_path, capsys):
    pred, _ = good_predictions
    first = tmp_path / "a.csv"
    second = tmp_path / "b.csv"
    bad = pred.copy()
    bad.loc[3, "prediction"] = 9
    bad.loc[6, "seed"] = 3
    bad.iloc[:10].to_csv(first, index=False)
    bad.iloc[10:].drop(index=[20]).to_csv(second, index=False)
    out = tmp_path / "evaluate"
    args = ["evaluate", str(study), "--seeds", "1", "--kfold", "2", "--no-bayes"]
    args += ["--predictions", str(first), "--predictions", str(second)]
    args += ["--predictions", str(tmp_path / "none.csv"), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{first}, row 5, column 'prediction'" in err
    assert f"{first}, row 8, column 'seed'" in err
    assert "missing prediction of a test rating" in err
    assert f"{tmp_path / 'none.csv'}: file not found" in err
    assert not out.exists()


def test_predictions_must_not_be_the_output(study, good_predictions, tmp_path, capsys):
    pred, _ = good_predictions
    out = tmp_path / "evaluate"
    out.mkdir()
    path = out / "pred.csv"
    pred.to_csv(path, index=False)
    args = ["evaluate", str(study), "--seeds", "1", "--kfold", "2", "--no-bayes"]
    assert main([*args, "--predictions", str(path), "--out", str(out)]) == 2
    assert "never writes over its inputs" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["pred.csv"]
