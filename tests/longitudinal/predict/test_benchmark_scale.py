"""The benchmark on a study's own scale: the hand-written 1-7 study ``slider7``.

Its 18 participants rate on a 1-7 slider; sub-001 to sub-003 answered one of the two TIPI
agreeableness items, so their trait is not scored and the benchmark cannot use their ratings.
Every number checked here is computed from the study's files by hand (pandas on
ratings.csv), not by the code under test.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal._errors import InvalidParameterError
from longitudinal.cli import main
from longitudinal.predict import benchmark_threshold, evaluate_predictions
from longitudinal.study.config import RatingsSpec
from longitudinal.study.loaded import load_study

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
UNSCORED = ["sub-001", "sub-002", "sub-003"]  # one of two TIPI agreeableness items answered


def _copy(tmp_path: Path, edit=None) -> Path:
    root = Path(shutil.copytree(SLIDER7, tmp_path / "slider7"))
    if edit is not None:
        toml = root / "study.toml"
        toml.write_text(edit(toml.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def _load(root: Path):
    with warnings.catch_warnings():  # the two-item TIPI scales have no alpha if item deleted
        warnings.simplefilter("ignore")
        return load_study(root)


@pytest.fixture(scope="module")
def slider7():
    return _load(SLIDER7)


@pytest.fixture(scope="module")
def ratings():
    return pd.read_csv(SLIDER7 / "ratings.csv", dtype={"pid": str})


# -- the binarisation threshold ------------------------------------------------------------


def test_the_default_cut_is_the_midpoint_of_the_declared_scale():
    assert benchmark_threshold(RatingsSpec("r.csv", 1, 7)) == (4.0, "the scale's midpoint")
    assert benchmark_threshold(RatingsSpec("r.csv", 1, 5)) == (3.0, "the scale's midpoint")
    assert benchmark_threshold(RatingsSpec("r.csv", 0, 100)) == (50.0, "the scale's midpoint")
    declared = RatingsSpec("r.csv", 1, 7, threshold=5.5)
    assert benchmark_threshold(declared) == (5.5, "study.toml [ratings] threshold")
    # an explicit value wins over study.toml
    assert benchmark_threshold(declared, 2, source="--threshold") == (2.0, "--threshold")
    assert benchmark_threshold(declared, 1) == (1.0, "the threshold argument")


@pytest.mark.parametrize("bad", [7, 7.5, 0.99, float("nan"), float("inf"), True, "4"])
def test_a_cut_outside_the_scale_is_refused(bad):
    with pytest.raises(InvalidParameterError, match="within the rating scale 1–7"):
        benchmark_threshold(RatingsSpec("r.csv", 1, 7), bad, source="--threshold")


def test_accuracy_of_the_grand_mean_at_the_midpoint(slider7, ratings):
    """Binarised at 4 on the 1-7 scale: accuracy of the training mean, by hand."""
    result = evaluate_predictions(
        slider7, seeds=[0], k=0, models=["grand_mean"], bayes=False, n_boot=0
    )
    p = result.parameters
    assert p["threshold"] == 4.0 and p["threshold_source"] == "the scale's midpoint"
    assert "> 4 (the scale's midpoint, 1–7 scale" in p["threshold_rule"]
    splits = result.splits.set_index("pid")["split"]
    usable = ratings[~ratings["pid"].isin(UNSCORED)]
    train = usable[usable["pid"].map(splits) == "train"]["score"]
    test = usable[usable["pid"].map(splits) == "test"]["score"].to_numpy(dtype=float)
    mean = train.mean()
    expected = 100 * np.mean((test > 4) == (mean > 4))
    row = result.metrics.query("model == 'grand_mean' and split == 'test'").iloc[0]
    assert row["acc"] == pytest.approx(expected, abs=1e-9)
    # the 1-5 cut would have given another answer on this study
    assert (train > 3).mean() != (train > 4).mean()


def test_a_threshold_declared_in_study_toml_is_used(tmp_path):
    root = _copy(tmp_path, lambda t: t.replace("scale_max = 7\n", "scale_max = 7\nthreshold = 5\n"))
    result = evaluate_predictions(_load(root), seeds=[0], k=0, models=["grand_mean"], bayes=False)
    assert result.parameters["threshold"] == 5.0
    assert result.parameters["threshold_source"] == "study.toml [ratings] threshold"


def test_cli_threshold_wins_and_is_checked(tmp_path, capsys):
    root = _copy(tmp_path, lambda t: t.replace("scale_max = 7\n", "scale_max = 7\nthreshold = 5\n"))
    out = tmp_path / "ev"
    args = ["evaluate", str(root), "--out", str(out), "--seeds", "1", "--kfold", "0"]
    assert main([*args, "--threshold", "7"]) == 2
    err = capsys.readouterr().err
    assert "--threshold" in err and "1–7" in err and "below 7" in err
    assert len([line for line in err.splitlines() if "--threshold" in line]) == 1
    assert not out.exists()
    assert main([*args, "--threshold", "2.5"]) == 0
    printed = capsys.readouterr().out
    assert "> 2.5 (--threshold, 1–7 scale" in printed
    params = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert params["threshold"] == 2.5 and params["threshold_source"] == "--threshold"
    assert "> 2.5 (--threshold, 1–7 scale" in (out / "table.md").read_text(encoding="utf-8")


def test_user_predictions_are_checked_against_the_declared_scale(slider7, ratings):
    """6.5 is on the 1-7 slider (it would be off a 1-5 scale); 7.5 is refused."""
    from longitudinal.predict.selection import participant_splits
    from surveys._errors import InputValidationError

    splits = participant_splits(slider7, seeds=[0], k=0)
    test_ids = splits.loc[splits["split"] == "test", "pid"]
    rows = ratings[ratings["pid"].isin(test_ids)][["pid", "visit", "slot", "score"]]
    table = rows.assign(model="mine", scheme="holdout_70_20_10", seed=0, prediction=6.5)
    options = {"seeds": [0], "k": 0, "models": ["grand_mean"], "bayes": False}
    result = evaluate_predictions(slider7, predictions=table.drop(columns="score"), **options)
    row = result.metrics.query("model == 'mine' and split == 'test'").iloc[0]
    y = rows["score"].to_numpy(dtype=float)
    assert row["acc"] == pytest.approx(100 * np.mean(y > 4), abs=1e-9)
    assert row["mse"] == pytest.approx(100 * np.mean((y - 6.5) ** 2), abs=1e-9)
    with pytest.raises(InputValidationError, match="off the rating scale 1-7"):
        evaluate_predictions(
            slider7, predictions=table.drop(columns="score").assign(prediction=7.5), **options
        )


# -- what is left out, named and counted ---------------------------------------------------


def _counts(ratings: pd.DataFrame) -> dict[str, int]:
    return ratings["pid"].value_counts().to_dict()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """``longitudinal evaluate`` on a copy of slider7 whose sub-010 lacks one session's minutes."""
    root = _copy(tmp_path_factory.mktemp("ev"))
    sessions = pd.read_csv(root / "sessions.csv", dtype=str, keep_default_na=False)
    sessions.loc[sessions["visit"] == "sub-010-s01", "minutes"] = ""
    sessions.to_csv(root / "sessions.csv", index=False)
    out = root / "evaluate"
    args = ["evaluate", str(root), "--out", str(out), "--seeds", "1", "--kfold", "3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*args, "--n-boot", "50"]) == 0
    return root, out


def test_every_participant_and_rating_left_out_is_named(evaluated, ratings, capsys):
    root, out = evaluated
    n = _counts(ratings)
    partial = int((ratings["visit"] == "sub-010-s01").sum())  # 3 ratings of that session
    gone = sum(n[p] for p in UNSCORED)
    expected = [
        f"{p}: tipi_agreeableness not scored (1 of 2 items answered); {n[p]} ratings left out"
        for p in UNSCORED
    ]
    expected.append(
        f"sub-010: minutes missing in the session; {partial} of {n['sub-010']} ratings left out"
    )
    params = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    left = params["left_out"]
    assert left["ratings"] == gone + partial and left["of"] == len(ratings)
    assert [p["text"] for p in left["participants"]] == expected
    assert [p["excluded"] for p in left["participants"]] == [True, True, True, False]
    # TIPI is a mean scale: prorate cannot score 1 of 2 items; min_valid 0.8 needs
    # ceil(0.8 x 2) = 2 items, and 1 of 2 answered meets a min_valid of 1 / 2 or lower
    assert left["advice"] == (
        "tipi_agreeableness is not scored for 3 participants, who answered 1 of 2 items, "
        "fewer than `min_valid` 0.8 needs (2): a `min_valid` of 0.5 or lower in study.toml's "
        "[scoring] would score them (prorate does nothing for a mean scale). Or leave that "
        "predictor out (`[roles] predictors` in study.toml, or `--predictors`)."
    )
    table = (out / "table.md").read_text(encoding="utf-8")
    assert f"Left out: {gone + partial} of {len(ratings)} ratings; 3 participants" in table
    for line in expected:
        assert f"- {line}" in table
    # splits names the same people
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["splits", str(root), "--seeds", "1", "--out", str(root / "s.csv")]) == 0
    printed = capsys.readouterr().out
    for line in expected:
        assert f"- {line}" in printed
    assert "1–7 scale" in printed and "> 4 (the scale's midpoint" in printed


def test_terminal_prints_the_metrics_with_the_cut_and_what_was_left_out(evaluated, ratings, capsys):
    from longitudinal.predict.results import terminal_summary

    lines = terminal_summary(evaluated[1])
    assert lines[0].startswith("Metrics x 100, grouped 3-fold")
    assert any("> 4 (the scale's midpoint, 1–7 scale" in line for line in lines)
    assert any(line.startswith("- sub-001: tipi_agreeableness not scored") for line in lines)


def test_the_report_shows_who_was_left_out_under_pseudonyms(evaluated, tmp_path):
    from longitudinal.report import build_report

    root, _ = evaluated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = build_report(root, tmp_path / "report", bayes=False)
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="evaluation"') :]
    section = section[: section.index("</section>")]
    assert "tipi_agreeableness not scored (1 of 2 items answered)" in section
    assert "a `min_valid` of 0.5 or lower" in section and "prorate = true" not in section
    assert "&gt; 4 (the scale&#39;s midpoint, 1–7 scale" in section
    assert 'href="evaluate/metrics.svg"' in section  # the figure's vector file, linked
    for pid in [*UNSCORED, "sub-010"]:
        assert pid not in page
        for name in ("table.md", "evaluation.json"):
            assert pid not in (out / "evaluate" / name).read_text(encoding="utf-8")
    assert (out / "evaluate" / "metrics.svg").is_file()


# -- predictions kept on the scale; spreads inside the metrics' range ------------------------


def test_predictions_of_the_package_are_clipped_to_the_scale(slider7, ratings, monkeypatch):
    """A model predicting 9 everywhere is scored as predicting 7, the top of the slider."""
    from longitudinal.predict import benchmark_runs

    def nine(model, raw, train_ids, tests, **kw):
        rows = raw.rows
        return {
            name: (
                rows.loc[rows["pid"].isin(ids), "score"].to_numpy(dtype=float),
                np.full(int(rows["pid"].isin(ids).sum()), 9.0),
            )
            for name, ids in tests.items()
        }

    monkeypatch.setattr(benchmark_runs, "_fit_predict", nine)
    result = evaluate_predictions(
        slider7, seeds=[0], k=0, models=["lmm_full"], bayes=False, n_boot=0
    )
    splits = result.splits.set_index("pid")["split"]
    usable = ratings[~ratings["pid"].isin(UNSCORED)]
    scored = usable[usable["pid"].map(splits).isin(["valid", "test"])]
    test = usable[usable["pid"].map(splits) == "test"]["score"].to_numpy(dtype=float)
    row = result.metrics.query("model == 'lmm_full' and split == 'test'").iloc[0]
    assert row["mse"] == pytest.approx(100 * np.mean((test - 7.0) ** 2), abs=1e-9)
    clip = result.parameters["clipping"]
    assert clip["outside"] == {"lmm_full": {"n": len(scored), "of": len(scored)}}
    assert "clipped to the 1–7 scale" in clip["rule"]
    from longitudinal.predict.results import clipping_line

    assert f"{len(scored)} of {len(scored)} were outside" in clipping_line(result.parameters)


def _summary(mean: float, sd: float) -> pd.DataFrame:
    from models.evaluation import METRIC_NAMES

    return pd.DataFrame(
        {
            "model": ["m"],
            "split": ["test"],
            **{f"{m}_mean": [mean] for m in METRIC_NAMES},
            **{f"{m}_sd": [sd] for m in METRIC_NAMES},
        }
    )


def test_mean_sd_cells_stop_at_the_bounds_of_the_metric():
    from longitudinal.predict import spread_table

    table = spread_table(_summary(5.0, 7.0), "test")
    assert table.loc[0, "mse"] == "5.0 +7.0/−5.0"  # 5 - 7 < 0: the spread stops at 0
    assert table.loc[0, "acc"] == "5.0 +7.0/−5.0"
    assert table.loc[0, "r"] == "5.0 ± 7.0"  # r may be negative
    assert table.attrs["floored"]
    table = spread_table(_summary(96.0, 7.0), "test")
    assert table.loc[0, "f1"] == "96.0 +4.0/−7.0"  # F1 stops at 100
    assert table.loc[0, "mse"] == "96.0 ± 7.0"
    table = spread_table(_summary(50.0, 7.0), "test")
    assert not table.attrs["floored"] and table.loc[0, "mse"] == "50.0 ± 7.0"


def _error_bar(ax) -> list[float]:
    from matplotlib.container import ErrorbarContainer

    bars = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    (segment,) = bars.lines[2][0].get_segments()
    return segment[:, 1].tolist()


def test_metric_figure_error_bars_stop_at_zero():
    from longitudinal.predict import plot_metrics

    fig = plot_metrics(_summary(5.0, 7.0), split="test")
    assert _error_bar(fig.axes[4]) == [0.0, 12.0]  # MSE 5 ± 7 stops at 0
    assert _error_bar(fig.axes[0]) == [-2.0, 12.0]  # r may be negative
    assert "error bars stop at the metric's range" in " ".join(fig._suptitle.get_text().split())


# -- comparisons against an artifact; the coverage sentence; counts --------------------------


def test_no_verdict_against_a_baseline_whose_pooled_r_is_an_artifact():
    from longitudinal.predict import difference_table
    from longitudinal.predict.benchmark import artifact_correlations, withhold_verdicts
    from models.evaluation import METRIC_NAMES

    intervals = pd.DataFrame(
        {
            "model": ["lmm_traits"] * 5,
            "metric": list(METRIC_NAMES),
            "estimate": [-12.0, 3.0, 60.0, 70.0, 150.0],
            "ci_low": [-30.0, -10.0, 50.0, 60.0, 120.0],
            "ci_high": [8.0, 20.0, 70.0, 80.0, 180.0],
        }
    )
    artifacts = artifact_correlations(intervals)
    assert artifacts == {"lmm_traits": {"r": -12.0, "rho": 3.0}}
    comparisons = pd.DataFrame(
        {
            "model": ["lmm_full"] * 5,
            "versus": ["lmm_traits"] * 5,
            "metric": list(METRIC_NAMES),
            "estimate": [40.0, 30.0, 1.0, 1.0, -20.0],
            "ci_low": [20.0, 10.0, -2.0, -2.0, -30.0],
            "ci_high": [60.0, 50.0, 4.0, 4.0, -10.0],
            "verdict": ["better", "better", "interval includes 0", "interval includes 0", "better"],
        }
    )
    table = difference_table(withhold_verdicts(comparisons, artifacts))
    row = table.iloc[0]
    assert row["r"] == "+40.0 [+20.0, +60.0] (not compared (baseline is an artifact))"
    assert row["rho"].endswith("(not compared (baseline is an artifact))")
    assert row["mse"] == "-20.0 [-30.0, -10.0] (better)"  # MSE is no correlation
    assert "(better)" not in row["r"] + row["rho"]


def _params(n_groups: int, artifacts=None) -> dict:
    boot = {"ci_level": 0.95, "n_boot": 2000, "seed": 0, "n_groups": n_groups}
    return {"bootstrap": {**boot, "artifacts": artifacts or {}}}


@pytest.mark.parametrize("n", [15, 18, 40])
def test_the_coverage_sentence_is_left_out_below_41_people(n):
    from longitudinal.predict import interval_note

    note = interval_note(_params(n))
    assert "94-95%" not in note and "covered" not in note
    assert f"draws the {n} participants" in note and f"t with {n - 1} degrees" in note


def test_the_coverage_sentence_names_the_size_it_was_established_at():
    from longitudinal.predict import interval_note

    note = interval_note(_params(41))
    assert "In simulated studies of 41 people these intervals covered" in note
    note = interval_note(_params(60, {"lmm_traits": {"r": -12.0}}))
    assert "of 41 people" in note and "lmm_traits: r -12.0" in note and "not compared" in note


def test_counts_print_as_integers():
    from longitudinal.predict import interval_note
    from longitudinal.report.sections.evaluation import _is_count

    # evaluation.json read back may hold counts as floats
    note = interval_note(
        {"bootstrap": {"ci_level": 0.95, "n_boot": 200.0, "seed": 0.0, "n_groups": 15.0}}
    )
    assert "B = 200 replicates, seed 0" in note and "draws the 15 participants" in note
    assert "14 degrees" in note and ".0" not in note.split("Estimate")[1].split("Fisher")[0]
    assert _is_count(pd.Series([8.0, 12.0], name="n_test"))
    assert _is_count(pd.Series([0.0, 1.0], name="seed"))
    assert not _is_count(pd.Series([8.0, 12.0], name="mse"))
    assert not _is_count(pd.Series([8.5, 12.0], name="n_test"))
