"""The invariance driver's estimator and missing-data rule (psychometrics/invariance.py).

The numbers are lavaan's, checked in tests/models/sem/test_invariance_wlsmv.py and through the
command in tests/longitudinal/cli/test_cli_reliability_wlsmv.py; here: each estimator's
missing-data rules, its default, and the ordinal ladder's rows for a scale it cannot fit.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from longitudinal import InvalidParameterError
from longitudinal.psychometrics.invariance import ORDINAL_INVARIANCE_MODELS, invariance_ladders
from models import InvalidParameterError as ModelsInvalidParameterError
from models.sem import invariance_sample_note
from surveys import load_instrument

DATA = Path(__file__).resolve().parents[2] / "data"
OPTIONS = {"id_col": "id", "wave_col": "time", "waves": [1, 2, 3]}


@pytest.fixture(scope="module")
def sai4():
    return load_instrument(DATA / "raw" / "sai4.toml")


@pytest.mark.parametrize(
    ("estimator", "nan_policy", "phrase"),
    [
        ("WLSMV", "fiml", "full-information ML does not exist for WLSMV"),
        ("MLR", "pairwise", "['fiml', 'omit'] with estimator='MLR'"),
        ("WLS", None, "'ML', 'MLR' or 'WLSMV'"),
    ],
)
def test_each_estimator_has_its_missing_data_rules(sai4, estimator, nan_policy, phrase):
    data = pd.read_csv(DATA / "psychTools_sai_flat_all.csv")
    with pytest.raises(InvalidParameterError) as err:
        invariance_ladders(data, [sai4], estimator=estimator, nan_policy=nan_policy, **OPTIONS)
    assert phrase in str(err.value)


def test_wlsmv_leaves_incomplete_participants_out_unless_pairwise(sai4):
    data = pd.read_csv(DATA / "psychTools_sai_flat_all.csv")  # 170, three incomplete
    listwise = invariance_ladders(data, [sai4], estimator="WLSMV", **OPTIONS)
    pairwise = invariance_ladders(data, [sai4], estimator="WLSMV", nan_policy="pairwise", **OPTIONS)
    assert listwise.invariance["model"].tolist() == list(ORDINAL_INVARIANCE_MODELS)
    assert (listwise.invariance["n"] == 167).all() and (pairwise.invariance["n"] == 170).all()
    assert any("3 incomplete participant(s) left out (listwise" in n for n in listwise.notes)
    assert not any("left out" in n for n in pairwise.notes)


def test_the_rule_of_thumb_counts_the_ordinal_model():
    # 4 items x 3 waves of 4 categories: 36 thresholds, 12 loadings, 12 + 3 covariances
    assert "has 63 free parameters" in invariance_sample_note(
        167, n_items=4, n_waves=3, n_categories=4
    )
    # one binary item: two thresholds fewer at each of the three waves
    assert "has 57 free parameters" in invariance_sample_note(
        167, n_items=4, n_waves=3, n_categories=[4, 4, 2, 4]
    )
    with pytest.raises(ModelsInvalidParameterError, match="n_categories"):
        invariance_sample_note(167, n_items=4, n_waves=3, n_categories=1)


def test_the_estimator_follows_the_number_of_answer_categories(sai4):
    from types import SimpleNamespace

    from longitudinal.psychometrics.invariance import ORDINAL_RULE_CATEGORIES, estimator_for

    assert ORDINAL_RULE_CATEGORIES == 5
    assert estimator_for(sai4) == "WLSMV"  # 1-4
    for low, high, expected in (
        (1, 5, "WLSMV"),  # five categories: no worse than MLR (Rhemtulla et al. 2012)
        (0, 5, "MLR"),  # WHO-5's six
        (1, 7, "MLR"),
        (0, 100, "MLR"),  # a slider
        (0.5, 4.5, "MLR"),  # not whole numbers: not categories
    ):
        scale = SimpleNamespace(response_min=low, response_max=high)
        assert estimator_for(scale) == expected, (low, high)


@pytest.fixture(scope="module")
def slider7():
    """The slider7 study, and its ladders all fitted by MLR, with the item sets fitted."""
    import warnings

    import models
    from longitudinal import load_study
    from longitudinal.psychometrics.invariance import study_invariance

    fitted = []
    real = models.measurement_invariance

    def counted(wide, **options):
        fitted.append(tuple(options["items"]))
        return real(wide, **options)

    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        patch.setattr(models, "measurement_invariance", counted)
        study = load_study(DATA / "studies" / "declared" / "slider7")
        forced = study_invariance(study, estimator="MLR", small_sample="fit")
    return study, forced, fitted


def test_a_study_s_ladders_take_each_instrument_s_estimator(slider7):
    import warnings

    from longitudinal.psychometrics.invariance import study_invariance

    study, forced, _ = slider7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = study_invariance(study, small_sample="fit").invariance
    forced = forced.invariance
    chosen = table.groupby("instrument")["estimator"].unique().map(list).to_dict()
    assert chosen == {"closeness": ["WLSMV"], "who5": ["MLR"]}
    assert set(table.loc[table["instrument"] == "closeness", "model"]) == set(
        ORDINAL_INVARIANCE_MODELS
    )
    assert set(forced["estimator"]) == {"MLR"}
    with pytest.raises(InvalidParameterError, match="'auto', 'ML', 'MLR' or 'WLSMV'"):
        study_invariance(study, estimator="WLS")


def test_two_scores_of_the_same_items_share_one_ladder(slider7):
    _, result, fitted = slider7
    assert len(fitted) == len(set(fitted))  # who5's raw sum and percentage: one ladder
    who5 = result.invariance.loc[result.invariance["instrument"] == "who5"]
    raw, percentage = (
        who5.loc[who5["scale"] == s].drop(columns="scale").reset_index(drop=True)
        for s in ("raw", "percentage")
    )
    assert len(raw) > 0
    pd.testing.assert_frame_equal(raw, percentage)
    lines = [n.split(": ", 1)[1] for n in result.notes if n.startswith("who5.")]
    assert lines[: len(lines) // 2] == lines[len(lines) // 2 :]
