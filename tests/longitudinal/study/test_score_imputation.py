"""Imputation of a study's wide score table (longitudinal/study/score_imputation.py).

A simulated study of 24 people (seed 11) whose post survey is removed for three of them:
their post cells are the missing ones, each imputed from an observed post score (predictive
mean matching), the observed cells stay, and the long tables give one row per person x wave.

The ratings as auxiliary columns (``rating_means``, ``rating_auxiliaries``): checked by hand
on the study's story frame, and by simulation with known truth: a trait that predicts the
ratings (0.3 per unit) is missing for about 35% of the people, more often for those who rate
low; imputed without the ratings its pooled effect shrinks towards zero, with them it does
not (four studies here; benchmarks/sim_imputation_effects.py runs the same design at 500).
"""

from __future__ import annotations

import csv
import math
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from longitudinal import DataQualityWarning, load_study
from longitudinal.simulate import simulate_study
from longitudinal.study.score_imputation import (
    COLUMN_TABLE_COLUMNS,
    impute_scores,
    rating_auxiliaries,
    rating_means,
)
from models import InvalidParameterError, impute_chained, pool_imputations
from models.lmm import LinearMixedModel

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


def test_rating_auxiliaries_by_hand(imputed):
    study, _ = imputed
    story = study.story_frame()
    by_wave = rating_auxiliaries(study, by_wave=True)
    overall = rating_auxiliaries(study, by_wave=False)
    assert len(by_wave) == 24 and by_wave.index.name == "participant_id"
    assert list(overall.columns) == ["mean rating", "ratings"]
    person = story.groupby("participant_id")["empathy"]
    np.testing.assert_allclose(overall["mean rating"], person.mean().reindex(overall.index))
    np.testing.assert_array_equal(overall["ratings"], person.count().reindex(overall.index))
    waves = sorted(c.split("@")[1] for c in by_wave.columns if c.startswith("ratings@"))
    assert waves == sorted(set(story["state_wave"].dropna().astype(str)))
    for wave in waves:
        mine = story[story["state_wave"].astype(str) == wave].groupby("participant_id")
        expected = mine["empathy"].mean().reindex(by_wave.index)
        np.testing.assert_allclose(by_wave[f"mean rating@{wave}"], expected)
        counts = mine["empathy"].count().reindex(by_wave.index).fillna(0)
        np.testing.assert_array_equal(by_wave[f"ratings@{wave}"], counts)


def test_auxiliaries_help_impute_and_are_not_given_back(imputed):
    study, _ = imputed
    ratings = rating_auxiliaries(study, by_wave=False)
    result = impute_scores(study, traits=False, m=2, seed=3, burn_in=2, auxiliary=ratings)
    assert result.auxiliary == ("mean rating", "ratings")
    assert result.to_dict()["auxiliary"] == ["mean rating", "ratings"]
    assert set(result.imputations.missing["column"]) == set(result.wide.columns)
    # the same chains as imputing the scores and the ratings side by side, less the ratings
    alone = impute_chained(
        pd.concat([result.wide, ratings], axis=1), m=2, seed=3, burn_in=2, method="norm"
    )
    for ours, theirs in zip(result.datasets, alone.datasets, strict=True):
        pd.testing.assert_frame_equal(ours, theirs[list(result.wide.columns)])
    plain = impute_scores(study, traits=False, m=2, seed=3, burn_in=2)
    assert plain.auxiliary == () and not plain.datasets[0].equals(result.datasets[0])
    with pytest.raises(InvalidParameterError, match="named as score columns"):
        impute_scores(study, m=2, auxiliary=result.wide.iloc[:, :1])
    with pytest.raises(InvalidParameterError, match="`auxiliary`.*got list"):
        impute_scores(study, m=2, auxiliary=[1, 2])


TRAIT_EFFECT = 0.3


def _rated_people(rng, people=60):
    """A trait (missing for about 35%, more for low raters), a second trait and the ratings."""
    trait = rng.normal(size=people)
    other = 0.5 * trait + math.sqrt(0.75) * rng.normal(size=people)
    who = np.repeat(np.arange(people), 3 * rng.integers(6, 13, people))
    ids = np.array([f"P{p:03d}" for p in range(people)])
    level = rng.normal(0, 0.5, people)
    rating = 3 + TRAIT_EFFECT * trait[who] + 0.1 * other[who] + level[who]
    ratings = pd.DataFrame(
        {"participant_id": ids[who], "empathy": rating + rng.normal(0, 1, len(who))}
    )
    mean = ratings.groupby("participant_id")["empathy"].mean().to_numpy()
    gone = rng.random(people) < expit(-0.8 - 1.2 * (mean - mean.mean()) / mean.std())
    scores = pd.DataFrame(
        {"trait": np.where(gone, np.nan, trait), "other": other},
        index=pd.Index(ids, name="participant_id"),
    )
    return scores, ratings


def _trait_effect(tables, ratings):
    """The trait's effect in ``empathy ~ trait + other + (1 | participant_id)``, pooled."""
    formula = "empathy ~ trait + other + (1 | participant_id)"
    fits = [
        LinearMixedModel(formula, reml=True).fit(
            ratings.join(t.dropna(), on="participant_id", how="inner")
        )
        for t in tables
    ]
    if len(fits) == 1:
        return fits[0].fixed_.set_index("term").loc["trait"]
    dfcom = float(np.mean([f.fixed_.set_index("term").loc["trait", "df"] for f in fits]))
    return pool_imputations(fits, dfcom=dfcom).table.set_index("term").loc["trait"]


def _imputed_effects(scores, ratings, *, m, seed):
    """The trait's pooled effect imputed with the ratings (per person) and without."""
    means = rating_means(ratings, id_col="participant_id", rating_col="empathy")
    both = impute_chained(pd.concat([scores, means], axis=1), m=m, seed=seed, method="norm")
    alone = impute_chained(scores, m=m, seed=seed, method="norm")
    with_ratings = _trait_effect([t[scores.columns] for t in both.datasets], ratings)
    return with_ratings, _trait_effect(alone.datasets, ratings)


def test_the_ratings_in_the_imputation_model_keep_the_trait_effect():
    # benchmarks/sim_imputation_effects.py, 500 studies: with the ratings the pooled effect
    # is 0.282 (truth 0.3), without them 0.167; the paired difference has mean 0.115 and SD
    # 0.056, so a mean of four falls below 0.02 with a chance of about 1 in 3,000 (3.4 SDs)
    rng = np.random.default_rng(20261204)
    gaps = []
    for i in range(4):
        scores, ratings = _rated_people(rng)
        with_ratings, without = _imputed_effects(scores, ratings, m=10, seed=i)
        gaps.append(with_ratings["estimate"] - without["estimate"])
    assert np.mean(gaps) > 0.02
