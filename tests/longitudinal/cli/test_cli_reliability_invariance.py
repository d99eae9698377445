"""``longitudinal reliability --invariance``: the ladder of each scale, or one line why not.

The ladder's numbers are checked against lavaan in ``tests/models/sem/test_invariance.py``; here the
command is checked to write exactly what :func:`models.measurement_invariance` gives on the
scale's keyed answers; to fit and flag a sample below the rule of thumb (5 participants per
free parameter), which the report skips; and to write a row per model with the reason, never
numbers nor a header-only file, where the model cannot be estimated.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

from longitudinal.cli import main
from longitudinal.psychometrics.reliability import INVARIANCE_COLUMNS, INVARIANCE_PARAMS_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data" / "raw"
KEY = DATA / "mood3.toml"


def _export(path: Path, n: int = 400, seed: int = 11) -> pd.DataFrame:
    """Seeded answers on 1-5 to the mood key's calm scale (c3 reverse keyed), three waves."""
    rng = np.random.default_rng(seed)
    loadings, intercepts = np.array([0.9, 0.8, -0.7]), np.array([3.0, 3.1, 3.0])
    rows = []
    for wave, mean in [("pre", 0.0), ("mid", 0.2), ("post", 0.4)]:
        eta = rng.normal(mean, 1.0, n)
        raw = intercepts + eta[:, None] * loadings + rng.normal(0.0, 0.6, (n, 3))
        answers = np.clip(np.rint(raw), 1, 5).astype(int)
        for i in range(n):
            rows.append(
                {
                    "pid": f"P{i:03d}",
                    "wave": wave,
                    "c1": answers[i, 0],
                    "c2": answers[i, 1],
                    "c3": answers[i, 2],
                    "t1": 3,
                    "t2": 3,
                    "t3": 3,
                    "e1": 3,
                    "e2": 3,
                }
            )
    frame = pd.DataFrame(rows)
    frame.loc[5, "c2"] = np.nan  # one missing answer: full-information ML keeps the person
    frame.to_csv(path, index=False)
    return frame


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_ladder_is_what_measurement_invariance_gives(tmp_path, capsys):
    from models import measurement_invariance
    from surveys import keyed_item_answers, load_instrument

    frame = _export(tmp_path / "calm.csv")
    out = tmp_path / "rel"
    code, _, err = _run(
        capsys,
        "reliability",
        tmp_path / "calm.csv",
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--invariance",
        "--out",
        out,
    )
    assert code == 0, err
    table = pd.read_csv(out / "invariance.csv")
    params = pd.read_csv(out / "invariance_params.csv")
    assert list(table.columns) == INVARIANCE_COLUMNS
    assert list(params.columns) == INVARIANCE_PARAMS_COLUMNS
    calm = table[table["scale"] == "calm"]
    assert calm["model"].tolist()[:4] == ["configural", "metric", "scalar", "strict"]
    assert (calm["estimator"] == "MLR").all() and calm["converged"].all()
    assert calm["note"].isna().all() and calm["sample_flag"].isna().all()  # 400 >= 195
    # no variance at all, two items: a row per model with the reason, no numbers
    for scale, reason in [
        ("tension", "answers without variance (t1 at pre, t2 at pre, t3 at pre)"),
        ("energy", "fewer than three items"),
    ]:
        rows = table[table["scale"] == scale]
        assert rows["model"].tolist() == ["configural", "metric", "scalar", "strict"]
        assert (rows["note"] == reason).all() and (rows["decision"] == "not fitted").all()
        assert rows[["n", "chisq", "df", "cfi", "rmsea", "srmr"]].isna().all().all()
        assert f"{scale}: {reason}; no invariance ladder" in err
    assert set(params["scale"]) == {"calm"}
    # lavaan's operators as lavaan writes them: no spreadsheet apostrophe before =~
    assert set(params["op"]) == {"=~", "~~", "~1"}

    key = next(k for k in load_instrument(KEY).scales if k.name == "calm")
    long = keyed_item_answers(frame, key, id_col="pid", wave_col="wave")
    wide = long.pivot_table(
        index=["pid", "wave"], columns="item", values="value", dropna=False, sort=False
    ).reset_index()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = measurement_invariance(
            wide,
            items=["c1", "c2", "c3"],
            id_col="pid",
            wave_col="wave",
            waves=["pre", "mid", "post"],
            estimator="MLR",
            nan_policy="fiml",
        )
    fits = direct.fits.set_index("model").loc[calm["model"]]
    for column in ("chisq", "df", "cfi", "rmsea", "srmr"):
        assert_allclose(calm[column].to_numpy(), fits[column].to_numpy(dtype=float), rtol=1e-9)


def test_an_export_too_small_to_estimate_gets_its_reason_in_every_models_row(tmp_path, capsys):
    out = tmp_path / "rel"
    code, _, err = _run(
        capsys,
        "reliability",
        DATA / "mood3_long.csv",
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--invariance",
        "--out",
        out,
    )
    assert code == 0, err
    table = pd.read_csv(out / "invariance.csv")
    answers = pd.read_csv(DATA / "mood3_long.csv")
    n_people = answers["pid"].nunique()
    n_waves = answers["wave"].nunique()
    assert n_people <= 3 * n_waves  # fewer people than observed variables: not estimable
    reason = (
        f"{n_people} participants for {3 * n_waves} observed variables (3 items x {n_waves} "
        "waves): the sample covariance matrix is singular, so the model cannot be estimated"
    )
    calm = table[table["scale"] == "calm"]
    assert calm["model"].tolist() == ["configural", "metric", "scalar", "strict"]
    assert (calm["note"] == reason).all()
    assert calm[["n", "chisq", "df", "cfi", "rmsea"]].isna().all().all()
    assert set(table["scale"]) == {"calm", "tension", "energy"}  # never a header-only file
    assert f"calm: {reason}; no invariance ladder" in err
    assert pd.read_csv(out / "invariance_params.csv").empty  # no model, no estimate


SIX = """[instrument]
name = "six"
title = "Six made-up items"
response_min = 1
response_max = 5
scoring = "mean"

[scales.total]
items = ["s1", "s2", "s3", "s4", "s5", "-s6"]
"""


def _six_items(path: Path, n: int = 166, seed: int = 5) -> pd.DataFrame:
    """Seeded answers on 1-5 to six items (s6 reverse keyed) at three waves."""
    rng = np.random.default_rng(seed)
    loadings = np.array([0.8, 0.7, 0.9, 0.6, 0.75, -0.85])
    rows = []
    for wave, mean in [("pre", 0.0), ("mid", 0.2), ("post", 0.3)]:
        eta = rng.normal(mean, 1.0, n)
        raw = 3.0 + eta[:, None] * loadings + rng.normal(0.0, 0.6, (n, 6))
        answers = np.clip(np.rint(raw), 1, 5).astype(int)
        for i in range(n):
            rows.append(
                {"pid": f"P{i:03d}", "wave": wave} | {f"s{j + 1}": answers[i, j] for j in range(6)}
            )
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return frame


def test_a_sample_below_the_rule_of_thumb_is_fitted_and_flagged(tmp_path, capsys):
    """6 items x 3 waves of 166 people: lavaan fits it; the rule of thumb asks for 375."""
    from models import measurement_invariance
    from surveys import keyed_item_answers, load_instrument

    (tmp_path / "six.toml").write_text(SIX, encoding="utf-8")
    frame = _six_items(tmp_path / "six.csv")
    out = tmp_path / "rel"
    code, _, err = _run(
        capsys,
        "reliability",
        tmp_path / "six.csv",
        "--instrument",
        tmp_path / "six.toml",
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--invariance",
        "--out",
        out,
    )
    assert code == 0, err
    # the configural model: loadings, intercepts and residual variances of 6 items at 3 waves,
    # the residual covariances of each item across the 3 pairs of waves, 3 factor covariances
    q = 3 * 6 * 3 + 6 * 3 + 3
    needed = 5 * q
    assert (q, needed) == (75, 375)
    line = (
        f"166 participants with complete answers; the configural model of 6 items x 3 waves "
        f"has {q} free parameters and needs at least {needed} (5 per parameter; Bentler & "
        "Chou, 1987)"
    )
    table = pd.read_csv(out / "invariance.csv")
    assert table["model"].tolist()[:4] == ["configural", "metric", "scalar", "strict"]
    assert (table["sample_flag"] == f"below the rule of thumb: {line}").all()
    assert table["note"].isna().all() and table["converged"].all()
    assert f"six.total: fitted below the rule of thumb ({line})" in err
    params = pd.read_csv(out / "invariance_params.csv")
    assert len(params) > 0 and set(params["model"]) >= {"configural", "strict"}

    key = load_instrument(tmp_path / "six.toml").scales[0]
    long = keyed_item_answers(frame, key, id_col="pid", wave_col="wave")
    wide = long.pivot_table(
        index=["pid", "wave"], columns="item", values="value", dropna=False, sort=False
    ).reset_index()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = measurement_invariance(
            wide,
            items=list(key.items),
            id_col="pid",
            wave_col="wave",
            waves=["pre", "mid", "post"],
            estimator="MLR",
            nan_policy="fiml",
        )
    fits = direct.fits.set_index("model").loc[table["model"]]
    for column in ("chisq", "df", "cfi", "rmsea", "srmr"):
        assert_allclose(table[column].to_numpy(), fits[column].to_numpy(dtype=float), rtol=1e-9)


def test_the_report_skips_a_sample_below_the_rule_that_the_command_fits(tmp_path):
    """``small_sample="skip"`` (the report's narrative) gives the rule's line and no numbers."""
    from longitudinal.psychometrics.reliability import invariance_ladders
    from surveys import load_instrument

    (tmp_path / "six.toml").write_text(SIX, encoding="utf-8")
    frame = _six_items(tmp_path / "six.csv")
    instrument = load_instrument(tmp_path / "six.toml")
    options = {"id_col": "pid", "wave_col": "wave", "waves": ["pre", "mid", "post"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = invariance_ladders(frame, [instrument], **options)
        skipped = invariance_ladders(frame, [instrument], small_sample="skip", **options)
    assert fitted.invariance["chisq"].notna().all()
    assert skipped.invariance["chisq"].isna().all() and skipped.params.empty
    assert skipped.invariance["note"].str.contains("needs at least 375").all()
    assert any(
        n.endswith(
            "needs at least 375 (5 per parameter; Bentler & Chou, 1987); no invariance ladder"
        )
        for n in skipped.notes
    )
