"""Tests of longitudinal/psychometrics/generalizability.py against lme4 (reference/).

``generalizability.R`` fits ``lmer(y ~ 1 + (1 | person) + (1 | person:session) + (1 | story))``
by REML on the hand-written study slider7 and on a simulated ratings table it writes beside
itself, and prints the components at 15 significant digits. The two optimizers (lme4's
BOBYQA, mixedlm's L-BFGS-B) stop at slightly different points of a flat optimum, so the
components are compared at rtol 1e-4 (lme4's own summary prints 4 significant digits).
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal import InvalidParameterError, load_study
from longitudinal.psychometrics.generalizability import ratings_g_study
from models.generalizability import g_study

HERE = Path(__file__).parents[1]
REFERENCE = HERE / "reference" / "generalizability_reference.csv"
RATINGS = HERE / "reference" / "generalizability_ratings.csv"
SLIDER7 = HERE.parents[0] / "data" / "studies" / "declared" / "slider7"
COMPONENTS = {  # package name -> name in the reference file
    "participant": "person",
    "session:participant": "occasion:person",
    "story": "item",
    "residual": "residual",
}


def _reference(dataset: str) -> dict[str, float]:
    ref = pd.read_csv(REFERENCE, comment="#")
    ref = ref.loc[ref["dataset"] == dataset]
    return dict(zip(ref["quantity"], ref["value"].astype(float), strict=True))


@pytest.fixture(scope="module")
def slider7():
    with warnings.catch_warnings():  # the study's own scoring warnings are tested elsewhere
        warnings.simplefilter("ignore")
        return load_study(SLIDER7)


def _check_against(res, ref):
    for name, generic in COMPONENTS.items():
        value = res.components.set_index("component").loc[name, "variance"]
        # a component lme4 puts at 0 is compared absolutely (both optimizers stop near 0)
        np.testing.assert_allclose(
            value, ref[f"variance_{generic}"], rtol=1e-4, atol=1e-6, err_msg=name
        )
    row = res.observed.iloc[0]
    np.testing.assert_allclose(row["n_sessions"], ref["n_occasions"], rtol=1e-12)
    np.testing.assert_allclose(row["n_stories"], ref["n_items"], rtol=1e-12)
    np.testing.assert_allclose(row["error_variance"], ref["error_variance"], rtol=1e-4)
    np.testing.assert_allclose(row["g"], ref["g"], rtol=1e-5)
    assert res.singular == bool(ref["singular"])


def test_slider7_components_match_lme4(slider7):
    res = ratings_g_study(slider7)
    assert res.design == "crossed"  # stories repeat across participants
    _check_against(res, _reference("slider7"))
    # lme4 puts the story variance at 0: said, with the small sample, where G is shown
    assert any("Singular fit: story variance estimated at zero" in n for n in res.notes)
    assert any("Only 18 participants" in n for n in res.notes)
    assert not res.precise
    # the D study: the study's session counts (6, median 9.5 -> 10, 10) and 5, 10, 20
    assert sorted(res.d_study["n_sessions"].unique()) == [5, 6, 10, 20]
    assert len(res.d_study) == 4 * 10


def test_simulated_components_match_lme4():
    data = pd.read_csv(RATINGS, dtype={"participant_id": str, "session_id": str, "story_id": str})
    res = g_study(
        data,
        id_col="participant_id",
        session_col="session_id",
        story_col="story_id",
        rating_col="empathy",
    )
    _check_against(res, _reference("simulated"))
    assert res.precise  # 40 participants, a regular fit
    assert res.notes == ()


def test_d_sessions_and_stories_are_the_callers(slider7):
    res = ratings_g_study(slider7, d_sessions=[8], d_stories=[3, 6])
    assert list(res.d_study["n_sessions"]) == [8, 8]
    assert list(res.d_study["n_stories"]) == [3, 6]
    assert res.d_study["g"].iloc[1] > res.d_study["g"].iloc[0]


def test_not_a_study_is_refused():
    with pytest.raises(InvalidParameterError, match="must be a loaded study"):
        ratings_g_study(pd.DataFrame())
