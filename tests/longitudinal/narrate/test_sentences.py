"""The results sentences keep the report's honesty gates (longitudinal/narrate/sentences.py).

A singular or unconverged model is reported as such, an interval including zero gets no
direction, the small-sample caveat stays; the tables below are small hand-made results whose
printed numbers are checked too.
"""

import pandas as pd

from longitudinal.narrate.gates import SMALL_SAMPLE
from longitudinal.narrate.sentences import (
    anova_apa,
    choose_correction,
    effects_apa,
    growth_apa,
    pairwise_apa,
)

FIXED = pd.DataFrame(
    {
        "term": ["Intercept", "time"],
        "estimate": [4.87, 0.1257],
        "se": [0.2, 0.0576],
        "df": [15.1, 14.9987],
        "statistic": [23.8, 2.18],
        "p_value": [1e-13, 0.0456],
        "ci_low": [4.34, 0.0028],
        "ci_high": [5.19, 0.2486],
    }
)
RANDOM = pd.DataFrame(
    {"group": ["id", "Residual"], "term": ["Intercept", None], "variance": [0.37, 0.33],
     "sd": [0.61, 0.58], "correlation": [None, None]}
)  # fmt: skip


def _effects(low, high, df=80.0):
    return pd.DataFrame(
        [
            dict(engine="lmm", scale="rating", quantity="coefficient", term="words_within_z",
                 label="words", kind="session", part="within", estimate=(low + high) / 2,
                 se=(high - low) / 4, df=df, p_value=0.02, ci_low=low, ci_high=high)
        ]
    )  # fmt: skip


def test_growth_slope_with_an_interval_above_zero_gets_a_direction():
    text = growth_apa(FIXED, RANDOM, label="Social connection", model={"n_obs": 47,
                      "n_subjects": 16}, time_unit="weeks")  # fmt: skip
    assert (
        "*b* = 0.126 points per week, 95% CI [0.003, 0.249], *t*(15.0) = 2.18, *p* = .046" in text
    )
    assert "the scale rose over the study" in text


def test_growth_slope_with_an_interval_through_zero_gets_no_direction():
    fixed = FIXED.assign(ci_low=[4.34, -0.01])
    text = growth_apa(fixed, RANDOM, label="Social connection", model={}, time_unit="weeks")
    assert "do not show a direction" in text
    assert "rose" not in text and "fell" not in text


def test_a_singular_growth_model_is_reported_as_such_and_not_read():
    model = {"problems": ["singular fit (a variance at zero)"], "n_obs": 47, "n_subjects": 16}
    text = growth_apa(FIXED, RANDOM, label="Well-being", model=model)
    assert "not interpreted: singular fit (a variance at zero)" in text
    assert "rose" not in text and "excludes zero" not in text


def test_a_dropped_random_slope_is_named():
    text = growth_apa(FIXED, RANDOM, label="Well-being",
                      model={"fallback_reason": "singular fit"})  # fmt: skip
    assert "random intercept only (the random slope was dropped: singular fit)" in text


def test_pairwise_direction_follows_the_interval():
    tests = pd.DataFrame(
        {"term": ["post - pre", "mid - pre"], "wave_from": ["pre", "pre"],
         "wave_to": ["post", "mid"], "estimate": [-0.5625, 0.17], "se": [0.25, 0.25],
         "df": [15.0, 14.0], "statistic": [-2.205, 0.68], "p_value": [0.0435, 0.51],
         "p_holm": [0.0435, 0.51], "ci_low": [-1.106, -0.37], "ci_high": [-0.019, 0.72],
         "n": [16, 15]}
    )  # fmt: skip
    effect_sizes = pd.DataFrame(columns=["term", "measure", "estimate", "ci_low", "ci_high"])
    clear, through = pairwise_apa(tests, effect_sizes, label="Well-being")
    assert clear.startswith("From pre to post, well-being fell by 0.56 points, 95% CI")
    assert "[−1.11, −0.02], *t*(15) = −2.21, *p* = .043" in clear
    assert "changed by 0.17 points" in through and "do not show a direction" in through


def test_the_correction_follows_epsilon():
    table = pd.DataFrame(
        {"correction": ["none", "greenhouse-geisser", "huynh-feldt"],
         "epsilon": [1.0, 0.70, 0.74], "df1": [2.0, 1.4, 1.48], "df2": [28.0, 19.6, 20.72],
         "statistic": [4.2] * 3, "p_value": [0.025, 0.042, 0.040],
         "eta_sq_generalized": [0.031] * 3, "n": [15] * 3}
    )  # fmt: skip
    assert choose_correction(table)["correction"] == "greenhouse-geisser"
    high = table.assign(epsilon=[1.0, 0.9, 0.97])
    assert choose_correction(high)["correction"] == "huynh-feldt"
    text = anova_apa(table, label="Well-being", n_waves=3)
    assert "*F*(1.40, 19.6) = 4.20, *p* = .042, η²_{G} = .031" in text


def test_effects_through_zero_get_no_direction_and_small_samples_keep_the_caveat():
    through = effects_apa(_effects(-0.22, 0.44), n_participants=SMALL_SAMPLE - 4, n_obs=312)
    assert any("do not show a direction" in s for s in through)
    assert not any("higher values went with" in s for s in through)
    assert through[-1] == (
        f"With {SMALL_SAMPLE - 4} participants these estimates are imprecise and may not replicate."
    )
    clear = effects_apa(_effects(0.03, 0.38), n_participants=SMALL_SAMPLE + 1, n_obs=312)
    assert any("higher values went with higher ratings" in s for s in clear)
    assert not any("imprecise" in s for s in clear)


def test_a_singular_or_unconverged_effects_model_is_not_read():
    problem = "its fit is singular (a variance estimated at zero or a correlation at ±1)"
    text = " ".join(effects_apa(_effects(0.03, 0.38), n_participants=30, lmm_problem=problem))
    assert f"failed its checks ({problem}), so none of its estimates is reported" in text
    assert "*b* =" not in text and "higher values" not in text


def test_an_unusable_interval_is_not_interpreted():
    text = " ".join(effects_apa(_effects(0.1, 0.5, df=0.4), n_participants=30))
    assert "cannot estimate this effect reliably" in text and "*b* =" not in text


def test_change_result_to_apa_reads_its_own_tables():
    import numpy as np

    from longitudinal.change import change_analysis

    rng = np.random.default_rng(1)
    data = pd.DataFrame(
        {
            "id": np.repeat(np.arange(12), 3).astype(str),
            "wave": np.tile(["pre", "mid", "post"], 12),
            "y": rng.normal(4, 1, 36) + np.tile([0, 0.3, 0.6], 12),
        }
    )
    result = change_analysis(
        data, id_col="id", wave_col="wave", outcome_col="y", waves=["pre", "mid", "post"],
        reliability=0.8,
    )  # fmt: skip
    text = result.to_apa(label="Well-being")
    row = choose_correction(result.rm_anova)
    assert row["correction"] == "greenhouse-geisser"  # ε = .66 here
    assert f"*F*({row['df1']:.2f}, {row['df2']:.1f}) = {row['statistic']:.2f}" in text
    slope = result.growth_fixed.set_index("term").loc["time"]
    assert f"*b* = {slope['estimate']:.3f} points per wave" in text  # time = wave position
    assert text.count("From ") == len(result.pairwise) == 3
    assert "improved reliably" in text
    assert text.endswith(
        "With 12 participants these estimates are imprecise and may not replicate."
    )
    assert result.to_apa(label="Well-being") == text  # nothing random
