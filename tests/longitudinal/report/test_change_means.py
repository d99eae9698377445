"""The change section's model-based wave means and contrasts (``tables/change_wave_*.csv``).

On the simulated study of 16 people (one ``mid`` survey missing) and the hand-made
``two_waves`` (every participant at both waves): the tables hold one row per scale and wave
(pair of waves), their numbers are those of ``LinearMixedModel(...).emmeans(...)`` fitted
directly on the study's scores, and with no wave missing the model's means are the observed
means (a balanced design with a random intercept).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import build_sections

from longitudinal import DataQualityWarning, load_study
from longitudinal.study.frames import scale_column
from models.lmm import LinearMixedModel

TWO_WAVES = Path(__file__).resolve().parents[2] / "data" / "studies" / "handmade" / "two_waves"

pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module", params=["simulated", "two_waves"])
def report(request, small_study_dir, tmp_path_factory):
    study = small_study_dir if request.param == "simulated" else TWO_WAVES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        out = build_sections(study, tmp_path_factory.mktemp("wm") / "out", ["change"])
    return request.param, study, out


def _scores(study) -> tuple[pd.DataFrame, list[str], str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # reliability notes of 14 people
        loaded = load_study(study)
    scores = loaded.scores.copy()
    pairs = zip(scores["instrument"], scores["scale"], strict=True)
    scores["column"] = [scale_column(i, s) for i, s in pairs]
    return scores, [str(w) for w in loaded.config.waves], loaded.config.id_col


def _direct(scores: pd.DataFrame, column: str, waves: list[str], id_col: str):
    data = scores.loc[(scores["column"] == column) & scores["score"].notna(),
                      [id_col, "wave", "score"]].reset_index(drop=True)  # fmt: skip
    data["wave"] = pd.Categorical(data["wave"].astype(str), categories=waves)
    data[id_col] = data[id_col].astype(str)
    model = LinearMixedModel(f"score ~ C(wave) + (1 | {id_col})").fit(data)
    return data, model.emmeans("wave", ddf="kenward-roger")


def test_the_tables_have_a_row_per_scale_and_wave_and_pair(report):
    _, study, out = report
    means = pd.read_csv(out / "tables" / "change_wave_means.csv")
    contrasts = pd.read_csv(out / "tables" / "change_wave_contrasts.csv")
    assert list(means.columns) == ["scale", "wave", "emmean", "se", "df", "ci_low", "ci_high",
                                   "observed_mean", "n", "status"]  # fmt: skip
    assert list(contrasts.columns)[:2] == ["scale", "contrast"]
    pairs = pd.read_csv(out / "tables" / "pairwise.csv")
    _, waves, _ = _scores(study)
    for column in dict.fromkeys(pairs["scale"]):
        assert means.loc[means["scale"] == column, "wave"].tolist() == waves
        # the contrasts sit beside the paired t tests: the same pairs, the same direction
        assert (contrasts.loc[contrasts["scale"] == column, "contrast"].tolist()
                == pairs.loc[pairs["scale"] == column, "term"].tolist())  # fmt: skip
    assert (means["status"] == "ok").all() and (contrasts["p_adjust"] == "holm").all()


def test_the_numbers_are_those_of_the_mixed_model_fitted_directly(report):
    _, study, out = report
    scores, waves, id_col = _scores(study)
    means = pd.read_csv(out / "tables" / "change_wave_means.csv")
    contrasts = pd.read_csv(out / "tables" / "change_wave_contrasts.csv")
    for column in dict.fromkeys(means["scale"]):
        data, emm = _direct(scores, column, waves, id_col)
        shown = means[means["scale"] == column].reset_index(drop=True)
        direct = emm.to_frame()
        for name in ("emmean", "se", "df", "ci_low", "ci_high"):
            np.testing.assert_allclose(shown[name], direct[name], rtol=1e-10, atol=1e-10)
        observed = data.groupby("wave", observed=True)["score"]
        np.testing.assert_allclose(shown["observed_mean"], observed.mean().to_numpy(), rtol=1e-12)
        assert shown["n"].tolist() == observed.size().tolist()
        pairs = emm.pairs(adjust="holm").to_frame()  # earlier minus later, pre-mid, pre-post, ...
        names = [f"{b} - {a}" for i, a in enumerate(waves) for b in waves[i + 1 :]]
        mine = contrasts[contrasts["scale"] == column].set_index("contrast").loc[names]
        np.testing.assert_allclose(mine["estimate"], -pairs["estimate"], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(mine["statistic"], -pairs["statistic"], rtol=1e-10)
        np.testing.assert_allclose(mine["p_value"], pairs["p_value"], rtol=1e-10)
        np.testing.assert_allclose(mine["ci_low"], -pairs["ci_high"], rtol=1e-10, atol=1e-10)


def test_without_a_missing_wave_the_model_means_are_the_observed_means(report):
    name, _, out = report
    means = pd.read_csv(out / "tables" / "change_wave_means.csv")
    if name == "two_waves":
        assert (means["n"] == 14).all()
        np.testing.assert_allclose(means["emmean"], means["observed_mean"], rtol=0, atol=1e-8)
    else:  # one participant lacks the mid survey: the model's mid mean is not the observed one
        mid = means[means["wave"] == "mid"]
        assert (mid["n"] == 15).all()
        assert (np.abs(mid["emmean"] - mid["observed_mean"]) > 1e-3).all()


def test_one_sentence_per_scale_says_the_participants_in_the_model(report):
    name, _, out = report
    html = (out / "report.html").read_text(encoding="utf-8")
    if name == "two_waves":
        assert html.count("With no wave missing, the model-based contrasts of") == 1
        assert "use the same 14 participants as the complete-case analyses" in html
    else:
        assert html.count("The model-based contrasts of") == 3
        assert (
            html.count(
                "use all 16 participants with a score at any wave (47 scores), "
                "where the repeated-measures ANOVA uses the 15 complete cases"
            )
            == 3
        )
