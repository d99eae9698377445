"""psych's bfi scored end to end: custom TOML keys -> load_instrument -> score.

Reference: tests/surveys/reference/psych_bfi.R (R 4.2.2, psych 2.2.9), which runs
psych::scoreItems(keys, items, impute = "none", min = 1, max = 6) and psych::alpha per scale and
writes 15 significant digits; exact quantities are compared at 1e-12.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from surveys.instruments import load_instrument
from surveys.scoring import score

TESTS = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parent / "reference"
KEYS_TOML = TESTS / "data" / "bfi_keys.toml"
SCALES = ["agree", "conscientious", "extraversion", "neuroticism", "openness"]
EXACT = 1e-12


@pytest.fixture(scope="module")
def bfi() -> pd.DataFrame:
    # the CSV's first column holds bfi's row names (respondent ids)
    return pd.read_csv(TESTS / "data" / "psych_bfi.csv").rename(columns={"rownames": "id"})


@pytest.fixture(scope="module")
def instrument():
    return load_instrument(KEYS_TOML)


@pytest.fixture(scope="module")
def psych_like(bfi, instrument):
    # psych::scoreItems(impute = "none") averages whatever items a person answered, with no
    # minimum; min_valid=1 (an int: at least one answered item) is the equivalent rule. The
    # package default, min_valid=0.8, is stricter (4 of 5 items) and is checked below.
    return score(bfi, instrument, id_col="id", min_valid=1)


@pytest.fixture(scope="module")
def ref_scores() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "psych_bfi_scores.csv", comment="#")


@pytest.fixture(scope="module")
def ref_scales() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "psych_bfi_scales.csv", comment="#").set_index("scale")


@pytest.fixture(scope="module")
def ref_items() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "psych_bfi_items.csv", comment="#")


def test_toml_keys_match_psych_keys(instrument):
    table = pd.read_csv(TESTS / "data" / "psych_bfi_keys.csv", index_col=0)
    assert [s.name for s in instrument.scales] == SCALES == table.columns.tolist()
    for scale in instrument.scales:
        key = table[scale.name].tolist()
        assert list(scale.items) == [k.removeprefix("-") for k in key]
        assert list(scale.reverse) == [k[1:] for k in key if k.startswith("-")]
        assert (scale.response_min, scale.response_max) == (1.0, 6.0)
        assert scale.scoring == "mean"


def test_person_scores_match_score_items(psych_like, ref_scores, bfi):
    wide = psych_like.wide()
    assert wide["id"].tolist() == bfi["id"].tolist() == ref_scores["id"].tolist()
    assert len(wide) == 2800
    for scale in SCALES:
        assert_allclose(
            wide[f"psych_bfi.{scale}"].to_numpy(),
            ref_scores[scale].to_numpy(),
            rtol=0,
            atol=EXACT,
            err_msg=scale,
        )


def test_default_min_valid_scores_only_respondents_with_four_of_five(bfi, instrument, ref_scores):
    strict = score(bfi, instrument, id_col="id").wide()
    for scale in SCALES:
        key = next(s for s in instrument.scales if s.name == scale)
        answered = bfi[list(key.items)].notna().sum(axis=1).to_numpy()
        got = strict[f"psych_bfi.{scale}"].to_numpy()
        keep = answered >= 4  # 0.8 x 5 items
        assert_array_equal(np.isnan(got), ~keep)
        assert_allclose(got[keep], ref_scores[scale].to_numpy()[keep], rtol=0, atol=EXACT)
    # 3 to 10 respondents per scale answered only 2 or 3 items: the option changes scores
    n_unscored = strict.drop(columns="id").isna().sum().to_numpy()
    assert_array_equal(n_unscored, [10, 10, 4, 9, 6])


def test_reliability_matches_psych(psych_like, ref_scales):
    rel = psych_like.reliability.set_index("scale").loc[SCALES]
    ref = ref_scales.loc[SCALES]
    assert_array_equal(rel["n"], ref["n"])
    assert_array_equal(rel["n_items"], ref["n_items"])
    assert_allclose(rel["alpha"], ref["scoreitems_alpha"], rtol=0, atol=EXACT)
    assert_allclose(rel["alpha"], ref["raw_alpha"], rtol=0, atol=EXACT)
    assert_allclose(rel["alpha_standardized"], ref["std_alpha"], rtol=0, atol=EXACT)
    assert_allclose(rel["alpha_ci_low"], ref["feldt_low_95"], rtol=0, atol=EXACT)
    assert_allclose(rel["alpha_ci_high"], ref["feldt_high_95"], rtol=0, atol=EXACT)
    # exact one-factor minres solution iterated to convergence in R (see psych_bfi.R)
    assert_allclose(rel["omega_total"], ref["omega_uls"], rtol=0, atol=EXACT)


def test_item_stats_match_psych(psych_like, ref_items):
    got = psych_like.item_stats
    assert got[["scale", "item"]].to_numpy().tolist() == (
        ref_items[["scale", "item"]].to_numpy().tolist()
    )
    assert_array_equal(got["reversed"], ref_items["reversed"])
    assert_array_equal(got["n"], ref_items["n"])
    for ours, theirs in [
        ("mean", "mean"),
        ("sd", "sd"),
        ("r_item_rest", "r_drop"),
        ("alpha_if_deleted", "alpha_drop"),
    ]:
        assert_allclose(got[ours], ref_items[theirs], rtol=0, atol=EXACT, err_msg=ours)


def test_ci_level_reaches_the_reliability_table(bfi, instrument, ref_scales):
    rel = score(bfi, instrument, id_col="id", min_valid=1, ci_level=0.90).reliability
    rel = rel.set_index("scale").loc[SCALES]
    ref = ref_scales.loc[SCALES]
    assert_allclose(rel["alpha_ci_low"], ref["feldt_low_90"], rtol=0, atol=EXACT)
    assert_allclose(rel["alpha_ci_high"], ref["feldt_high_90"], rtol=0, atol=EXACT)
