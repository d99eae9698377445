"""model_wave_means: the counts it reports, the balanced-design identity and its errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from longitudinal import InvalidParameterError
from longitudinal.change.wave_means import model_wave_means

WAVES = ["pre", "mid", "post"]


@pytest.fixture(scope="module")
def panel():
    """Simulated: 20 people, a random intercept (SD 1), wave effects 0, 0.4, 0.7."""
    rng = np.random.default_rng(11)
    people = np.repeat(np.arange(20), 3)
    wave = np.tile(np.arange(3), 20)
    y = 3 + np.array([0.0, 0.4, 0.7])[wave] + rng.normal(0, 1, 20)[people] + rng.normal(0, 0.5, 60)
    return pd.DataFrame({"id": people, "wave": np.array(WAVES)[wave], "score": y})


def test_balanced_means_are_the_observed_means(panel):
    res = model_wave_means(panel, id_col="id", wave_col="wave", outcome_col="score", waves=WAVES)
    observed = panel.groupby("wave")["score"].mean().loc[WAVES].to_numpy()
    np.testing.assert_allclose(res.means["emmean"], observed, rtol=0, atol=1e-8)
    assert res.meta["n_subjects"] == res.meta["n_complete"] == 20 and res.meta["n_obs"] == 60
    assert res.contrasts["contrast"].tolist() == ["mid - pre", "post - mid", "post - pre"]
    # later minus earlier: the post - pre contrast is the difference of the two means
    means = res.means.set_index("wave")["emmean"]
    np.testing.assert_allclose(res.contrasts["estimate"].iloc[2], means["post"] - means["pre"],
                               rtol=1e-10)  # fmt: skip


def test_people_with_a_missing_wave_stay_in_the_model(panel):
    gone = panel.drop(index=panel.index[(panel["wave"] == "post") & (panel["id"] < 3)])
    res = model_wave_means(gone, id_col="id", wave_col="wave", outcome_col="score", waves=WAVES)
    assert res.meta["n_subjects"] == 20 and res.meta["n_complete"] == 17
    assert res.means["n"].tolist() == [20, 20, 17] and res.meta["n_obs"] == 57
    post = res.means.set_index("wave").loc["post"]
    assert abs(post["emmean"] - post["observed_mean"]) > 1e-6


def test_waves_must_be_a_sequence_of_labels(panel):
    with pytest.raises(InvalidParameterError, match="waves"):
        model_wave_means(panel, id_col="id", wave_col="wave", outcome_col="score", waves="pre")
