"""Tests of models/generalizability.py: G and D studies against simulations with known truth."""

import numpy as np
import pandas as pd
import pytest

from models import InvalidParameterError
from models.generalizability import GStudy, d_study, g_coefficient, g_study

TRUTH = {"participant": 0.5, "session:participant": 0.2, "story": 0.15, "residual": 0.9}


def simulate(rng, *, n_persons=30, n_sessions=6, n_stories=3, pool=40, truth=TRUTH, crossed=True):
    """One rating table with the components ``truth`` (stories drawn from a shared pool)."""
    sd = {k: np.sqrt(v) for k, v in truth.items()}
    story_effect = rng.normal(0, sd["story"], pool)
    rows = []
    for p in range(n_persons):
        u_p = rng.normal(0, sd["participant"])
        for s in range(n_sessions):
            u_s = rng.normal(0, sd["session:participant"])
            if crossed:
                stories = rng.choice(pool, n_stories, replace=False)
                labels = [f"st{k}" for k in stories]
                effects = story_effect[stories]
            else:  # every story told once: its effect is part of the error
                labels = [f"p{p}s{s}k{k}" for k in range(n_stories)]
                effects = rng.normal(0, sd["story"], n_stories)
            y = 3.0 + u_p + u_s + effects + rng.normal(0, sd["residual"], n_stories)
            rows += [(f"P{p}", f"S{s}", lab, v) for lab, v in zip(labels, y, strict=True)]
    return pd.DataFrame(rows, columns=["pid", "session", "story", "y"])


def _fit(data, **kw):
    return g_study(
        data, id_col="pid", session_col="session", story_col="story", rating_col="y", **kw
    )


def test_g_coefficient_by_hand():
    # error = .2/8 + (.1 + .8)/24 = .0625; G = .5 / .5625
    error, g = g_coefficient(
        {"participant": 0.5, "session:participant": 0.2, "story": 0.1, "residual": 0.8},
        n_sessions=8,
        n_stories=3,
    )
    assert error == pytest.approx(0.0625, rel=1e-12)
    assert g == pytest.approx(0.5 / 0.5625, rel=1e-12)
    # more stories per session and more sessions each raise G
    table = d_study(TRUTH, n_sessions=[2, 10], n_stories=[1, 5])
    assert list(table["n_sessions"]) == [2, 2, 10, 10]
    assert table["g"].is_monotonic_increasing
    assert list(table["flag"]) == ["below .70", "", "", ""]


@pytest.mark.parametrize("crossed", [True, False])
def test_g_recovers_the_simulated_coefficient_within_monte_carlo_error(crossed):
    """20 seeded replicates: the mean estimated G and components lie within 3 Monte Carlo
    standard errors of the truth (REML components are unbiased up to the boundary at 0)."""
    rng = np.random.default_rng(20261126)
    _, true_g = g_coefficient(TRUTH, n_sessions=6, n_stories=3)
    gs, comps = [], []
    for _ in range(20):
        res = _fit(simulate(rng, crossed=crossed))
        assert res.design == ("crossed" if crossed else "nested")
        assert res.observed["n_sessions"].iloc[0] == pytest.approx(6, rel=1e-12)
        assert res.observed["n_stories"].iloc[0] == pytest.approx(3, rel=1e-12)
        gs.append(res.g)
        comps.append(
            dict(zip(res.components["component"], res.components["variance"], strict=True))
        )
    gs = np.asarray(gs)
    mc_se = gs.std(ddof=1) / np.sqrt(len(gs))
    assert abs(gs.mean() - true_g) < 3 * mc_se, (gs.mean(), true_g, mc_se)
    assert mc_se < 0.02  # the check has teeth: G = .87, error about .01
    comps = pd.DataFrame(comps)
    truth = dict(TRUTH)
    if not crossed:  # the story effect is inside the residual
        item = truth.pop("story")
        truth["residual"] += item
    for name, value in truth.items():
        se = comps[name].std(ddof=1) / np.sqrt(len(comps))
        assert abs(comps[name].mean() - value) < 3 * se, (name, comps[name].mean(), value, se)


def test_result_protocol_and_tables():
    res = _fit(simulate(np.random.default_rng(3), n_persons=12))
    assert isinstance(res, GStudy)
    assert repr(res).startswith("GStudy(crossed stories: G = ")
    assert list(res.components["component"]) == [
        "participant",
        "session:participant",
        "story",
        "residual",
    ]
    data = simulate(np.random.default_rng(3), n_persons=12)
    assert list(res.components["n_levels"]) == [12, 72, data["story"].nunique(), 216]
    assert res.components["share"].sum() == pytest.approx(1.0)
    assert list(res.observed.columns) == [
        "n_participants",
        "n_sessions",
        "n_stories",
        "n_ratings",
        "error_variance",
        "g",
        "flag",
    ]
    # default D study: the observed session count (6) and 5, 10, 20; 1 to 10 stories
    assert sorted(res.d_study["n_sessions"].unique()) == [5, 6, 10, 20]
    assert sorted(res.d_study["n_stories"].unique()) == list(range(1, 11))
    at_observed = res.d_study.query("n_sessions == 6 and n_stories == 3")["g"].iloc[0]
    assert at_observed == pytest.approx(res.g, rel=1e-12)
    text = str(res.summary(3))
    assert "Only 12 participants" in text and "imprecise" in text
    assert not res.precise
    assert res.to_frame().equals(res.components)
    assert set(res.to_dict()["tables"]) == {
        "Variance components (REML)",
        "G coefficient as observed",
        "D study",
    }


def test_nested_design_says_the_story_is_in_the_residual():
    res = _fit(simulate(np.random.default_rng(4), n_persons=8, crossed=False))
    assert res.design == "nested"
    assert list(res.components["component"]) == ["participant", "session:participant", "residual"]
    assert any("residual variance includes it" in n for n in res.notes)


def test_one_story_for_everybody_is_fitted_without_a_story_term():
    data = simulate(np.random.default_rng(8), n_persons=6).assign(story="st1")
    res = _fit(data)
    assert res.design == "nested"
    assert "story" not in set(res.components["component"])
    assert "Every rating is of the same story: there is no story variance." in res.notes


def test_missing_ratings_are_counted_and_noted():
    data = simulate(np.random.default_rng(5), n_persons=8)
    data.loc[[0, 7], "y"] = np.nan
    res = _fit(data)
    assert res.meta["n_dropped"] == 2
    assert int(res.observed["n_ratings"].iloc[0]) == len(data) - 2
    assert "2 rating(s) without a value were left out." in res.notes


def test_unidentifiable_data_are_refused_with_the_reason():
    data = simulate(np.random.default_rng(6), n_persons=2, n_sessions=1)
    with pytest.raises(InvalidParameterError) as err:
        _fit(data)
    msg = str(err.value)
    assert "2 participant(s) rated (3 or more needed)" in msg
    assert "no participant has ratings in two or more sessions" in msg
    flat = simulate(np.random.default_rng(6), n_persons=4).assign(y=3.0)
    with pytest.raises(InvalidParameterError, match="every rating is 3 "):
        _fit(flat)
    nested = simulate(np.random.default_rng(6), n_persons=5, crossed=False)
    with pytest.raises(
        InvalidParameterError, match="no story is rated by two or more participants"
    ):
        _fit(nested, design="crossed")


def test_bad_parameters():
    data = simulate(np.random.default_rng(7), n_persons=4)
    with pytest.raises(InvalidParameterError, match="lack the column"):
        g_study(data, id_col="id", session_col="session", story_col="story", rating_col="y")
    with pytest.raises(InvalidParameterError, match="must be numeric"):
        _fit(data.assign(y=data["y"].astype(str)))
    with pytest.raises(InvalidParameterError, match="`design` parameter"):
        _fit(data, design="both")
    with pytest.raises(InvalidParameterError, match="`n_stories` parameter"):
        g_coefficient(TRUTH, n_sessions=2, n_stories=0)
    with pytest.raises(InvalidParameterError, match="missing \\['residual'\\]"):
        g_coefficient({"participant": 1, "session:participant": 1}, n_sessions=2, n_stories=1)
    with pytest.raises(InvalidParameterError, match="missing value"):
        _fit(data.assign(story=data["story"].where(data.index != 3)))
