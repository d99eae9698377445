"""``longitudinal reliability --invariance --estimator WLSMV``: the ordinal ladder of each scale.

The export is psychTools' ``sai`` (study FLAT: 167 complete participants at three waves,
``tests/data/psychTools_sai_flat.csv``; with the three incomplete ones,
``psychTools_sai_flat_all.csv``) under the hand-written key ``tests/data/raw/sai4.toml``
(tense, anxious, nervous, jittery on 1-4). ``invariance.csv`` is checked against lavaan's
ladder of the same answers (``tests/models/reference/wlsmv_ladder.json``, written by
``wlsmv_ladder.R``): the scaled chi-square and difference tests to 1e-3, df exactly, the
scaled CFI, TLI and RMSEA, the robust indices and the strict model's thresholds, loadings and
latent means and variances to 1e-4. Also: listwise deletion by default and ``--missing
pairwise``; ``--missing`` refused without WLSMV; a wrong ``--estimator`` refused; a category
nobody chose at one wave gives the scale a row per model with the reason, no numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal.cli import main
from longitudinal.psychometrics.invariance import (
    INVARIANCE_COLUMNS,
    INVARIANCE_PARAMS_COLUMNS,
    ORDINAL_INVARIANCE_MODELS,
)

DATA = Path(__file__).resolve().parents[2] / "data"
KEY = DATA / "raw" / "sai4.toml"
REF = Path(__file__).resolve().parents[2] / "models" / "reference" / "wlsmv_ladder.json"
OPTIONS = ["--instrument", KEY, "--id-col", "id", "--wave-col", "time", "--invariance"]


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def flat() -> dict:
    return json.loads(REF.read_text(encoding="utf-8"))["datasets"]["flat"]


def test_the_ordinal_ladder_is_lavaans(tmp_path, capsys, flat):
    out = tmp_path / "rel"
    raw = DATA / "psychTools_sai_flat.csv"
    code, _, err = _run(capsys, "reliability", raw, *OPTIONS, "--estimator", "WLSMV", "--out", out)
    assert code == 0, err
    table = pd.read_csv(out / "invariance.csv")
    assert list(table.columns) == INVARIANCE_COLUMNS
    for column in (
        "chisq_scaled",
        "df_scaled",
        "cfi_scaled",
        "tli_scaled",
        "rmsea_scaled",
        "delta_chisq",
        "delta_df",
        "delta_p",
        "cfi_robust",
        "tli_robust",
        "rmsea_robust",
    ):
        assert column in table.columns
    assert table["model"].tolist() == list(ORDINAL_INVARIANCE_MODELS)
    assert (table["estimator"] == "WLSMV").all() and table["converged"].all()
    assert (table["n"] == 167).all()
    for row in table.itertuples(index=False):
        expected = flat["models"][row.model]["fit"]
        assert row.df == expected["df"]
        assert row.chisq_scaled == pytest.approx(expected["chisq.scaled"], abs=1e-3)
        assert row.chisq == pytest.approx(expected["chisq.scaled"], abs=1e-3)
        for ours, theirs in [
            ("cfi_scaled", "cfi.scaled"),
            ("tli_scaled", "tli.scaled"),
            ("rmsea_scaled", "rmsea.scaled"),
            ("srmr", "srmr"),
        ]:
            assert getattr(row, ours) == pytest.approx(expected[theirs], abs=1e-4), ours
        if row.model == "configural":
            assert row.cfi_robust == pytest.approx(expected["cfi.robust"], abs=1e-4)
            assert row.rmsea_robust == pytest.approx(expected["rmsea.robust"], abs=1e-4)
        else:
            lrt = flat["lrt"][row.model]
            assert row.delta_df == lrt["df_diff"]
            assert row.delta_chisq == pytest.approx(lrt["chisq_diff"], abs=1e-3)
            assert row.delta_p == pytest.approx(lrt["p"], abs=1e-3)
            assert row.decision == "holds"
    # the rule of thumb counts the ordinal configural model: 36 thresholds, 12 loadings,
    # 12 residual and 3 factor covariances
    assert table["sample_flag"].str.contains("has 63 free parameters").all()
    assert "sai4.tension: invariance holds up to the strict level" in err

    params = pd.read_csv(out / "invariance_params.csv")
    params["rhs"] = params["rhs"].fillna("")  # an intercept's or mean's empty rhs
    assert list(params.columns) == INVARIANCE_PARAMS_COLUMNS
    strict = params[params["model"] == "strict"].set_index(["lhs", "op", "rhs"])
    expected = flat["models"]["strict"]["params"]
    keys = list(zip(expected["lhs"], expected["op"], expected["rhs"], strict=True))
    wanted = [i for i, key in enumerate(keys) if key[1] in ("|", "=~") or key[0].startswith("F")]
    assert {"|", "=~", "~1", "~~"} == set(params["op"])
    for i in wanted:
        assert strict.loc[keys[i], "estimate"] == pytest.approx(expected["est"][i], abs=1e-4)


def test_listwise_by_default_pairwise_on_request(tmp_path, capsys):
    raw = DATA / "psychTools_sai_flat_all.csv"  # three participants miss one answer each
    code, _, err = _run(
        capsys, "reliability", raw, *OPTIONS, "--estimator", "WLSMV", "--out", tmp_path / "a"
    )
    assert code == 0, err
    listwise = pd.read_csv(tmp_path / "a" / "invariance.csv")
    assert (listwise["n"] == 167).all()
    assert "sai4.tension: 3 incomplete participant(s) left out (listwise" in err
    code, _, err = _run(
        capsys,
        "reliability",
        raw,
        *OPTIONS,
        "--estimator",
        "WLSMV",
        "--missing",
        "pairwise",
        "--out",
        tmp_path / "b",
    )
    assert code == 0, err
    pairwise = pd.read_csv(tmp_path / "b" / "invariance.csv")
    assert (pairwise["n"] == 170).all() and pairwise["converged"].all()
    assert not np.allclose(pairwise["chisq_scaled"], listwise["chisq_scaled"])


@pytest.mark.parametrize(
    ("extra", "phrase"),
    [
        (["--estimator", "WLS"], "invalid choice: 'WLS' (choose from 'ML', 'MLR', 'WLSMV')"),
        (["--missing", "pairwise"], "--missing pairwise applies to --estimator WLSMV only"),
        (["--estimator", "ML", "--missing", "listwise"], "with --estimator ML incomplete"),
        (["--estimator", "WLSMV", "--missing", "fiml"], "invalid choice: 'fiml'"),
    ],
)
def test_a_wrong_estimator_or_missing_rule_is_one_clear_error(tmp_path, capsys, extra, phrase):
    out = tmp_path / "rel"
    raw = DATA / "psychTools_sai_flat.csv"
    code, _, err = _run(capsys, "reliability", raw, *OPTIONS, *extra, "--out", out)
    assert code == 2
    assert phrase in err and "Traceback" not in err
    assert not out.exists()


def test_a_category_nobody_chose_at_one_wave_gives_the_reason_not_numbers(tmp_path, capsys):
    data = pd.read_csv(DATA / "psychTools_sai_flat.csv")
    data.loc[(data["time"] == 2) & (data["tense"] == 4), "tense"] = 3
    data.to_csv(tmp_path / "sparse.csv", index=False)
    out = tmp_path / "rel"
    code, _, err = _run(
        capsys, "reliability", tmp_path / "sparse.csv", *OPTIONS, "--estimator", "WLSMV",
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    table = pd.read_csv(out / "invariance.csv")
    assert table["model"].tolist() == list(ORDINAL_INVARIANCE_MODELS)
    assert (table["decision"] == "not fitted").all()
    assert table[["n", "chisq", "chisq_scaled", "cfi_scaled", "delta_chisq"]].isna().all().all()
    assert table["note"].str.contains("item 'tense' at wave 2: nobody chose 4").all()
    assert table["note"].str.contains("Collapse the categories").all()
    assert "sai4.tension: could not be estimated" in err
