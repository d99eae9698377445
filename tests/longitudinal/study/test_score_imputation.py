"""Imputation of a study's wide score table (longitudinal/study/score_imputation.py).

A simulated study of 24 people (seed 11) whose post survey is removed for three of them:
their post cells are the missing ones, each imputed from an observed post score (predictive
mean matching), the observed cells stay, and the long tables give one row per person x wave.
"""

from __future__ import annotations

import csv
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from longitudinal import DataQualityWarning, load_study
from longitudinal.simulate import simulate_study
from longitudinal.study.score_imputation import COLUMN_TABLE_COLUMNS, impute_scores
from models import InvalidParameterError, impute_chained, pool_imputations

GONE = {"P03", "P07", "P10"}
STATE = "ubc_sscs10_social_connection"


@pytest.fixture(scope="module")
def imputed(tmp_path_factory):
    src = simulate_study(tmp_path_factory.mktemp("imp") / "sim", seed=11, n_participants=24)
    path = src.parent / "dropouts"
    shutil.copytree(src, path)
    post = path / "surveys" / "post_qualtrics.csv"
    with post.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("participant_id")
    with post.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows[:3] + [r for r in rows[3:] if r[col] not in GONE])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # reliability notes of a small sample
        study = load_study(path)
    return study, impute_scores(study, m=3, seed=4, burn_in=3, method="pmm")


def test_the_wide_table_and_its_missing_cells(imputed):
    study, result = imputed
    wide = result.wide
    assert len(wide) == 24 and wide.index.name == "participant_id"
    assert list(result.columns.columns) == COLUMN_TABLE_COLUMNS
    assert set(result.columns["role"]) == {"trait", "state"}
    assert "who5_raw@pre" not in wide.columns and "who5_percentage@pre" in wide.columns
    missing_post = set(wide.index[wide[f"{STATE}@post"].isna()])
    assert GONE <= missing_post
    frame = study.person_wave_frame()
    pre = frame[frame["wave"] == "pre"].set_index("participant_id")[STATE]
    pd.testing.assert_series_equal(
        wide[f"{STATE}@pre"].dropna(), pre.astype(float), check_names=False
    )


def test_completed_tables_keep_the_observed_and_match_donors(imputed):
    _, result = imputed
    wide = result.wide
    assert result.imputations.m == 3 and len(result.datasets) == 3
    for table in result.datasets:
        observed = wide.notna()
        assert table[observed].equals(wide[observed]) and not table.isna().any().any()
        column = f"{STATE}@post"
        assert set(table.loc[wide[column].isna(), column]) <= set(wide[column].dropna())


def test_long_tables_and_a_pooled_change(imputed):
    study, result = imputed
    long = result.long(1)
    assert len(long) == 24 * 3 and list(long["wave"].cat.categories) == ["pre", "mid", "post"]
    assert set(long["participant_id"]) == set(result.wide.index)
    row = long[(long["participant_id"] == "P03") & (long["wave"] == "post")]
    assert row[STATE].item() == result.datasets[1].loc["P03", f"{STATE}@post"]
    fits = []
    for i in range(result.imputations.m):
        table = result.long(i)
        wide = table.pivot(index="participant_id", columns="wave", values=STATE)
        diff = wide["post"] - wide["pre"]
        fits.append((pd.Series({"change": diff.mean()}), np.array([[diff.var() / len(diff)]])))
    pooled = pool_imputations(fits, dfcom=23)
    assert pooled.df_method == "barnard-rubin" and pooled.to_frame()["df"].item() <= 23
    again = impute_scores(study, m=3, seed=4, burn_in=3, method="pmm")
    assert all(a.equals(b) for a, b in zip(again.datasets, result.datasets, strict=True))


def test_states_only_and_too_small_a_table(imputed):
    study, _ = imputed
    states = impute_scores(study, traits=False, m=2, seed=1, burn_in=2)
    assert set(states.columns["role"]) == {"state"}
    assert states.long(0).columns.tolist()[:2] == ["participant_id", "wave"]
    with pytest.raises(InvalidParameterError, match="impute fewer columns together"):
        impute_chained(states.wide.iloc[:10], m=2, seed=1)
