"""The evaluate command, and report --no-bayes: each command reaches its engine."""

import pandas as pd
import pytest

from longitudinal.cli import main
from longitudinal.simulate import simulate_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return simulate_study(tmp_path_factory.mktemp("cli") / "study", seed=5, n_participants=20)


def test_evaluate_writes_metrics_without_participant_leakage(study, capsys):
    out = study / "evaluate"
    assert main(["evaluate", str(study), "--out", str(out), "--seeds", "2", "--no-bayes"]) == 0
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics.columns[:8]) == ["model", "split", "seed", "r", "rho", "acc", "f1", "mse"]
    assert set(metrics["seed"]) == {0, 1}
    assert "bayes_ordinal" not in set(metrics["model"])
    assert {"lmm_full", "clmm_full"} <= set(metrics["model"])
    assert (out / "summary.csv").is_file()
    assert "metrics.csv" in capsys.readouterr().out


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
    assert not out.exists()
    assert main([*args, "--kfold", "0"]) == 0
    assert "kfold" not in set(pd.read_csv(out / "metrics.csv")["split"])


def test_report_without_bayes_has_the_likelihood_models(study, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(study), "--out", str(out), "--no-bayes"]) == 0
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    assert set(effects["engine"]) == {"lmm", "clmm"}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "What predicts empathy" in page and "Ordinal AME" in page and "Bayes AME" not in page
