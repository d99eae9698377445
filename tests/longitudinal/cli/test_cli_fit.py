"""`longitudinal fit`: the JSON contract, values against lme4, and bad input."""

import json
from pathlib import Path

import pytest

from longitudinal.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"
COMMON = [
    "engine", "family", "formula", "n_obs", "groups", "converged", "fixed", "random",
    "thresholds", "loglik", "divergences", "r_hat_max", "ess_bulk_min", "seconds",
]  # fmt: skip
KEYS = {*COMMON, "reml", "residual_sd", "reml_criterion", "aic", "bic", "singular"}
FIXED_COLUMNS = {"term", "estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high"}


def test_fit_sleepstudy_matches_lme4(tmp_path, capsys):
    out = tmp_path / "fit.json"
    code = main(
        [
            "fit",
            str(DATA / "lme4_sleepstudy.csv"),
            "--formula",
            "Reaction ~ Days + (Days | Subject)",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    fit = json.loads(out.read_text())
    assert set(fit) == KEYS and list(fit)[: len(COMMON)] == COMMON
    assert fit["engine"] == "lmm" and fit["reml"] is True and fit["n_obs"] == 180
    assert fit["family"] == "gaussian" and fit["thresholds"] is None and fit["divergences"] is None
    assert fit["groups"] == {"Subject": 18}
    assert all(set(row) == FIXED_COLUMNS for row in fit["fixed"])
    rows = {row["term"]: row for row in fit["fixed"]}
    # lme4 1.1-31 / lmerTest 3.1-3 (shared/reference/reference_values_R.txt, printed to
    # 8-9 significant digits): estimate 10.467286, SE 1.5457896, Satterthwaite df 17.
    assert rows["Days"]["estimate"] == pytest.approx(10.467286, rel=1e-7)
    assert rows["Days"]["se"] == pytest.approx(1.5457896, rel=1e-6)
    assert rows["Days"]["df"] == pytest.approx(17.0, rel=1e-3)
    assert fit["reml_criterion"] == pytest.approx(1743.6283, rel=1e-7)
    assert fit["residual_sd"] == pytest.approx(25.591796, rel=1e-6)
    corr = [row for row in fit["random"] if "corr" in row]
    assert corr[0]["corr"] == pytest.approx(0.0656, abs=5e-5)


def test_fit_ml_changes_the_criterion(tmp_path):
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "lme4_sleepstudy.csv"), "--formula"]
    args += ["Reaction ~ Days + (Days | Subject)", "--ml", "--out", str(out)]
    assert main(args) == 0
    fit = json.loads(out.read_text())
    # lme4 ML fit: logLik -875.96967 (reference_values_R.txt).
    assert fit["reml"] is False and fit["reml_criterion"] is None
    assert fit["loglik"] == pytest.approx(-875.96967, rel=1e-8)


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("Reaction ~ Dayz + (Days | Subject)", "Dayz"),
        ("Reaction ~ Days + (Days | Subjekt)", "Subjekt"),
        ("Reaction ~ Days + (Days Subject)", "formula"),
    ],
)
def test_fit_bad_formula_exits_2_without_output(tmp_path, capsys, formula, message):
    out = tmp_path / "fit.json"
    code = main(["fit", str(DATA / "lme4_sleepstudy.csv"), "--formula", formula, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_fit_empty_data_exits_2(tmp_path, capsys):
    data = tmp_path / "empty.csv"
    data.write_text("y,x,g\n")
    out = tmp_path / "fit.json"
    assert main(["fit", str(data), "--formula", "y ~ x + (1 | g)", "--out", str(out)]) == 2
    assert "no data rows" in capsys.readouterr().err
    assert not out.exists()


def test_fit_clmm_matches_ordinal_clmm(tmp_path, capsys):
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "ordinal_wine.csv"), "--engine", "clmm", "--formula"]
    args += ["rating ~ temp + contact + (1 | judge)", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "Cumulative link mixed model" in printed and "Thresholds:" in printed
    fit = json.loads(out.read_text())
    assert list(fit)[: len(COMMON)] == COMMON
    assert fit["engine"] == "clmm" and fit["family"] == "ordinal" and fit["converged"]
    assert all(set(row) == FIXED_COLUMNS and row["df"] is None for row in fit["fixed"])
    # ordinal::clmm 2022.11 (tests/models/reference/clmm.json): tempwarm 3.062994,
    # threshold 1|2 -1.623664, judge SD 1.131131, logLik -81.56541
    rows = {row["term"]: row for row in fit["fixed"]}
    assert rows["temp[T.warm]"]["estimate"] == pytest.approx(3.062994, rel=1e-4)
    assert fit["thresholds"][0]["term"] == "1|2"
    assert fit["thresholds"][0]["estimate"] == pytest.approx(-1.623664, rel=1e-4)
    assert fit["random"][0]["sd"] == pytest.approx(1.131131, rel=1e-3)
    assert fit["loglik"] == pytest.approx(-81.56541, rel=1e-6)
    assert fit["divergences"] is None and fit["r_hat_max"] is None


def test_fit_bayes_writes_the_common_keys(tmp_path, capsys):
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "ordinal_wine.csv"), "--engine", "bayes", "--formula"]
    args += ["rating ~ temp + (1 | judge)", "--draws", "100", "--tune", "100", "--chains", "2"]
    args += ["--seed", "3", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "Bayesian ordinal mixed model" in printed
    fit = json.loads(out.read_text())
    assert list(fit)[: len(COMMON)] == COMMON
    assert fit["engine"] == "bayes" and fit["family"] == "ordinal" and fit["loglik"] is None
    assert all(set(row) == FIXED_COLUMNS | {"r_hat", "ess_bulk"} for row in fit["fixed"])
    assert fit["fixed"][0]["p_value"] is None
    assert [t["term"] for t in fit["thresholds"]] == ["1|2", "2|3", "3|4", "4|5"]
    assert isinstance(fit["divergences"], int) and fit["ess_bulk_min"] > 0
    # 100 draws cannot pass the diagnostics gate: the record says it did not converge
    assert fit["converged"] is False and fit["failures"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--engine", "clmm", "--ml"], "--ml"),
        (["--engine", "lmm", "--draws", "10"], "--draws"),
        (["--engine", "lmm", "--family", "ordinal"], "--engine clmm"),
        (["--engine", "clmm", "--family", "gaussian"], "--engine lmm"),
        (["--engine", "clmm", "--n-agq", "5"], "quadrature"),
        (["--engine", "bayes", "--family", "gaussian", "--link", "probit"], "--link"),
    ],
)
def test_fit_options_that_do_not_fit_the_engine(tmp_path, capsys, extra, message):
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "ordinal_wine.csv"), "--formula"]
    args += ["rating ~ temp + (1 | judge) + (1 | bottle)", *extra, "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("command", ["fit", "report"])
def test_help_states_the_bayesian_model_defaults(command, capsys):
    """The defaults the help names are the ones the command uses (the class's)."""
    import inspect
    import re

    from models.bayes import BayesianMixedModel

    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    defaults = inspect.signature(BayesianMixedModel).parameters
    for option, name in (
        ("--draws DRAWS", "draws"),
        ("--tune TUNE", "tune"),
        ("--chains CHAINS", "chains"),
    ):
        shown = re.search(re.escape(option) + r" (?:bayes|Bayesian model): [^()]*\((\d+)\)", text)
        assert shown and int(shown.group(1)) == defaults[name].default, option


@pytest.mark.parametrize(
    ("formula", "part"),
    [
        ("empathy ~ I(10**10**10) + (1 | participant_id)", "'10**10**10'"),
        ("empathy ~ poly(week, 100) + (1 | participant_id)", "'poly(week, 100)'"),
    ],
)
def test_fit_refuses_unbounded_arithmetic_with_exit_2(tmp_path, capsys, formula, part):
    data = tmp_path / "data.csv"
    data.write_text("empathy,week,participant_id\n1,0,a\n2,1,a\n3,0,b\n4,1,b\n")
    out = tmp_path / "fit.json"
    assert main(["fit", str(data), "--formula", formula, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert part in err and "refused before anything is evaluated" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def _slider_csv(path, n_values):
    """Ratings of 12 people on a scale whose ratings take ``n_values`` distinct values."""
    rows = ["person,rating"]
    rows += [f"p{i % 12:02d},{(i * 7) % n_values}" for i in range(120)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "engine",
    [["--engine", "clmm"], ["--engine", "bayes"], ["--engine", "bayes", "--family", "ordinal"]],
)
def test_an_ordinal_model_of_a_slider_is_refused_with_the_models_that_fit_it(
    engine, tmp_path, capsys
):
    data = _slider_csv(tmp_path / "slider.csv", 101)
    out = tmp_path / "fit.json"
    args = ["fit", str(data), "--formula", "rating ~ 1 + (1 | person)", *engine, "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "rating has 101 distinct values (from 0 to 100)" in err
    assert "100 thresholds" in err and "--engine lmm" in err and "--family gaussian" in err
    assert not out.exists()


def test_an_eleven_point_outcome_is_still_ordinal():
    import pandas as pd

    from longitudinal.cli.fit import _refuse_continuous_outcome

    eleven = pd.DataFrame({"rating": list(range(11)) * 3})
    _refuse_continuous_outcome("rating ~ 1 + (1 | person)", eleven, engine="clmm")  # no error
    twelve = pd.DataFrame({"rating": list(range(12)) * 3})
    with pytest.raises(ValueError, match="12 distinct values"):
        _refuse_continuous_outcome("rating ~ 1 + (1 | person)", twelve, engine="clmm")
