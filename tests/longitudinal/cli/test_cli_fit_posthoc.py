"""`longitudinal fit --engine lmm --r2 --emmeans SPEC`: the record's r2 and emmeans, the CSVs.

Reference values: tests/models/reference/lmm_r2_emmeans.R (r2mlm, performance::r2_nakagawa,
emmeans with lmerTest) on nlme::Orthodont, ``distance ~ age * Sex + (age | Subject)``.
"""

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from longitudinal.cli import main
from models import CentringWarning

TESTS = Path(__file__).resolve().parents[2]
DATA = TESTS / "data"
REF = json.loads((TESTS / "models" / "reference" / "lmm_r2_emmeans.json").read_text())
FORMULA = "distance ~ age * Sex + (age | Subject)"


def _run(tmp_path, *extra):
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "nlme_Orthodont.csv"), "--formula", FORMULA, "--out", str(out)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CentringWarning)
        code = main([*args, *extra])
    return code, out


def test_r2_and_emmeans_in_the_record_and_beside_it(tmp_path, capsys):
    code, out = _run(tmp_path, "--r2", "--emmeans", "Sex")
    assert code == 0, capsys.readouterr().err
    fit = json.loads(out.read_text())
    r2 = REF["r2"]["orthodont_raw"]
    assert fit["r2"]["rights_sterba"]["total"] == pytest.approx(
        r2["rights_sterba"]["total"], abs=1e-4
    )
    assert fit["r2"]["nakagawa"] == pytest.approx(r2["nakagawa"], abs=1e-4)
    assert fit["r2"]["predictors"]["both"] == ["age", "age:Sex[T.Male]"]
    ref = REF["emmeans"]["orthodont_sex/satterthwaite"]
    em = fit["emmeans"]
    assert em["specs"] == ["Sex"] and em["by"] == [] and em["ddf"] == "satterthwaite"
    assert [row["Sex"] for row in em["means"]] == ref["emmeans"]["Sex"]
    assert [row["emmean"] for row in em["means"]] == pytest.approx(
        ref["emmeans"]["emmean"], rel=1e-5
    )
    pairs = ref["contrasts"]["pairwise/tukey"]
    assert em["contrasts"]["method"] == "pairwise" and em["contrasts"]["adjust"] == "tukey"
    assert [row["contrast"] for row in em["contrasts"]["rows"]] == pairs["contrast"]
    assert [row["p_value"] for row in em["contrasts"]["rows"]] == pytest.approx(
        pairs["p_value"], abs=1e-4
    )
    means = pd.read_csv(tmp_path / "emmeans.csv")
    assert list(means.columns) == ["Sex", "emmean", "se", "df", "ci_low", "ci_high"]
    assert list(means["se"]) == pytest.approx(ref["emmeans"]["se"], rel=1e-5)
    contrasts = pd.read_csv(tmp_path / "contrasts.csv")
    assert list(contrasts["contrast"]) == pairs["contrast"]
    assert list(contrasts["df"]) == pytest.approx(pairs["df"], rel=1e-3)


def test_without_the_flags_the_record_has_neither(tmp_path):
    code, out = _run(tmp_path)
    assert code == 0
    fit = json.loads(out.read_text())
    assert "r2" not in fit and "emmeans" not in fit
    assert not (tmp_path / "emmeans.csv").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--emmeans", "Sex | | age"], "--emmeans takes"),
        (["--contrasts", "poly"], "--emmeans SPEC only"),
        (["--emmeans", "Subject"], "Subject"),
    ],
)
def test_bad_post_hoc_options_are_named(tmp_path, capsys, extra, message):
    code, _ = _run(tmp_path, *extra)
    assert code != 0
    assert message in capsys.readouterr().err


def test_clmm_r2_and_latent_means(tmp_path, capsys):
    """--engine clmm: Nakagawa's latent R-squared and emmeans' latent means (ordinal's wine).

    Reference: tests/models/reference/ordinal_r2_emmeans.R (performance 0.10.2, emmeans
    1.8.4-1 on ordinal::clmm); the fits agree to about 1e-5, the values to 1e-4.
    """
    ordinal = json.loads((TESTS / "models" / "reference" / "ordinal_r2_emmeans.json").read_text())
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "ordinal_wine.csv"), "--engine", "clmm", "--out", str(out)]
    args += ["--formula", "rating ~ temp + contact + (1 | judge)", "--r2", "--emmeans", "temp"]
    assert main(args) == 0, capsys.readouterr().err
    fit = json.loads(out.read_text())
    r2 = ordinal["r2"]["wine_logit"]
    assert fit["r2"]["nakagawa"]["marginal"] == pytest.approx(r2["marginal"], abs=1e-4)
    assert fit["r2"]["nakagawa"]["conditional"] == pytest.approx(r2["conditional"], abs=1e-4)
    ref = ordinal["emmeans"]["wine_latent_temp"]
    em = fit["emmeans"]
    assert em["ddf"] == "asymptotic"
    assert [row["emmean"] for row in em["means"]] == pytest.approx(ref["means"]["emmean"], rel=1e-4)
    assert [row["estimate"] for row in em["contrasts"]["rows"]] == pytest.approx(
        [ref["contrasts"]["estimate"]], rel=1e-4
    )
    means = pd.read_csv(tmp_path / "emmeans.csv")
    assert list(means["se"]) == pytest.approx(ref["means"]["se"], rel=1e-4)
    assert means["df"].isna().all() or (means["df"] == float("inf")).all()


def test_bayes_posterior_means_and_contrasts(tmp_path, capsys):
    """--engine bayes --emmeans: the posterior marginal means and their contrasts, drawn by
    draw, in the record and in emmeans.csv and contrasts.csv.

    ``distance ~ agef * Sex + (1 | Subject)`` on Orthodont (every subject at every age), a
    balanced design whose cell means do not depend on the variance components, so the
    posterior means of the age means sit on emmeans' REML means (lmm_r2_emmeans.R,
    ``orthodont_agef``) up to Monte Carlo error and the posterior SDs near the SEs. Two chains
    of 300 draws give a bulk ESS of about 100 to 300 per mean: the Monte Carlo error of a
    posterior mean is then at most about a tenth of its SD, well inside the 0.5 SE allowed
    here, and that of a posterior SD under 10%, inside the 25% allowed; the sampling is a
    fraction of the command's time, most of it the model's compilation. The model fails the
    diagnostics gate at this length (the record says so); the numbers are still written.
    """
    d = pd.read_csv(DATA / "nlme_Orthodont.csv")
    d["agef"] = "a" + d["age"].map("{:02d}".format)  # text levels in the order of the ages
    data = tmp_path / "orthodont.csv"
    d.to_csv(data, index=False)
    out = tmp_path / "fit.json"
    args = ["fit", str(data), "--engine", "bayes", "--family", "gaussian", "--out", str(out)]
    args += ["--formula", "distance ~ agef * Sex + (1 | Subject)", "--emmeans", "agef"]
    args += ["--draws", "300", "--tune", "300", "--chains", "2", "--seed", "11", "--r2"]
    assert main(args) == 0, capsys.readouterr().err
    fit = json.loads(out.read_text())
    # --r2: the Bayesian R-squared of the same fit (its coverage is checked by simulation in
    # tests/models/bayes/test_bayes_r2_emmeans.py), with its interval, on the data's scale
    r2 = fit["r2"]
    assert r2["scale"] == "data" and r2["n_draws"] == 600
    assert 0 < r2["ci_low"] < r2["estimate"] < r2["ci_high"] < 1 and r2["se"] > 0
    em = fit["emmeans"]
    assert em["specs"] == ["agef"] and em["by"] == [] and em["ddf"] is None
    assert (em["mode"], em["interval"]) == ("mean", "hdi")
    assert em["contrasts"]["method"] == "pairwise" and em["contrasts"]["adjust"] is None
    ref = REF["emmeans"]["orthodont_agef/satterthwaite"]
    means = pd.read_csv(tmp_path / "emmeans.csv")
    cols = ["agef", "estimate", "se", "ci_low", "ci_high", "prob_positive"]
    assert list(means.columns) == cols
    assert list(means["agef"]) == ["a" + f"{int(a):02d}" for a in ref["emmeans"]["agef"]]
    pd.testing.assert_frame_equal(means, pd.DataFrame(em["means"]), rtol=1e-12)
    se = pd.Series(ref["emmeans"]["se"])
    assert ((means["estimate"] - ref["emmeans"]["emmean"]).abs() < 0.5 * se).all()
    assert ((means["se"] / se - 1).abs() < 0.25).all()
    assert ((means["ci_low"] < means["estimate"]) & (means["estimate"] < means["ci_high"])).all()
    contrasts = pd.read_csv(tmp_path / "contrasts.csv")
    pd.testing.assert_frame_equal(contrasts, pd.DataFrame(em["contrasts"]["rows"]), rtol=1e-12)
    pairs = ref["contrasts"]["pairwise/tukey"]
    assert list(contrasts["contrast"]) == [
        c.replace("agef", "a").replace("a8", "a08") for c in pairs["contrast"]
    ]
    assert ((contrasts["estimate"] - pairs["estimate"]).abs() < 0.5 * pd.Series(pairs["se"])).all()
    # each contrast is computed draw by draw: its posterior mean is the difference of the means
    at = means.set_index("agef")["estimate"]
    for rec in contrasts.itertuples(index=False):
        first, second = rec.contrast.split(" - ")
        assert rec.estimate == pytest.approx(at[first] - at[second], abs=1e-10)


def test_bayes_takes_no_multiplicity_adjustment(tmp_path, capsys):
    out = tmp_path / "fit.json"
    args = ["fit", str(DATA / "nlme_Orthodont.csv"), "--engine", "bayes", "--out", str(out)]
    args += ["--family", "gaussian", "--formula", "distance ~ Sex + (1 | Subject)"]
    args += ["--emmeans", "Sex", "--adjust", "holm"]
    assert main(args) != 0
    assert "--adjust do(es) not apply to --engine bayes" in capsys.readouterr().err
    assert not out.exists()
