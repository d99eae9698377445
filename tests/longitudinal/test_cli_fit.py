"""`longitudinal fit`: the JSON contract, values against lme4, and bad input."""

import json
from pathlib import Path

import pytest

from longitudinal.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
KEYS = {
    "engine", "formula", "reml", "n_obs", "groups", "fixed", "random", "residual_sd",
    "loglik", "reml_criterion", "aic", "bic", "converged", "singular", "seconds",
}  # fmt: skip
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
    assert set(fit) == KEYS
    assert fit["engine"] == "lmm" and fit["reml"] is True and fit["n_obs"] == 180
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
