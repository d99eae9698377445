"""The smooth course of the "Empathy ratings" section (report/sections/_smooth_course.py).

Studies with a known truth: the simulated demo study, whose ratings move linearly with the week
(longitudinal/simulate), and hand-made studies (tests/data/studies/handmade/_write.py) whose
ratings are rewritten here: one that dips by about two scale points mid-study and recovers,
and one whose sessions fall on three distinct days only. The sentence must say "curve" for the
dip, must not claim one for the straight course, and the smooth is not fitted on three days.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import build_sections

pytestmark = [
    pytest.mark.usefixtures("figures_as_drafts"),
    # the hand-made surveys are noise: their reliability warnings are not this test's subject
    pytest.mark.filterwarnings("ignore::_empathic_base.errors.DataQualityWarning"),
]

HANDMADE = Path(__file__).resolve().parents[2] / "data" / "studies" / "handmade"
CURVED = "follows a curve"


def _handmade(root: Path, *, seed: int) -> Path:
    spec = importlib.util.spec_from_file_location("handmade_write", HANDMADE / "_write.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.study("smooth", people=24, waves=["pre", "mid", "post"], seed=seed, root=root)


def _days(root: Path) -> pd.Series:
    """Days since each participant's first session, per session id."""
    sessions = pd.read_csv(root / "sessions.csv", parse_dates=["started_at"])
    dates = sessions["started_at"].dt.normalize()
    first = dates.groupby(sessions["participant_id"]).transform("min")
    return pd.Series((dates - first).dt.days.to_numpy(), index=sessions["session_id"])


def _page_sentence(out: Path) -> str:
    html = (out / "report.html").read_text(encoding="utf-8")
    start = html.index('id="ratings"')
    text = html[start:]
    for marker in ("No smooth course", "The data show", "The mean empathy rating"):
        if marker in text:
            at = text.index(marker)
            return text[at : text.index("</p>", at)]
    raise AssertionError("no sentence on the smooth course")


@pytest.fixture(scope="module")
def dip_report(tmp_path_factory):
    """Ratings 4.5 at the start and end of the four weeks, about 2.5 in the middle."""
    root = _handmade(tmp_path_factory.mktemp("dip") / "study", seed=21)
    days = _days(root)
    ratings = pd.read_csv(root / "ratings.csv")
    rng = np.random.default_rng(5)
    day = days.loc[ratings["session_id"]].to_numpy(dtype=float)
    truth = 4.5 - 2.0 * np.sin(np.pi * np.clip(day / days.max(), 0, 1))
    ratings["empathy"] = np.clip(np.round(truth + rng.normal(0, 0.5, len(day))), 1, 5).astype(int)
    ratings.to_csv(root / "ratings.csv", index=False)
    return build_sections(root, tmp_path_factory.mktemp("dip_out") / "report", ["ratings"])


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    from longitudinal.simulate import simulate_study

    root = simulate_study(tmp_path_factory.mktemp("straight") / "study", seed=2024)
    return build_sections(root, tmp_path_factory.mktemp("straight_out") / "report", ["ratings"])


def test_dip_and_recovery_is_called_a_curve(dip_report):
    table = pd.read_csv(dip_report / "tables" / "empathy_smooth.csv")
    row = table.iloc[0]
    assert row["status"] == "ok"
    assert row["edf"] > 2.0
    assert row["linearity_p_value"] < 0.05 and row["linearity_statistic"] > 0
    sentence = _page_sentence(dip_report)
    assert CURVED in sentence and "edf" in sentence
    curve = pd.read_csv(dip_report / "tables" / "empathy_smooth_curve.csv")
    assert list(curve.columns) == ["week", "fit", "se", "lower", "upper"]
    middle = curve.iloc[len(curve) // 2]
    assert middle["upper"] < curve["fit"].iloc[0] and middle["upper"] < curve["fit"].iloc[-1]
    assert (dip_report / "figures" / "empathy_smooth.png").is_file()


def test_straight_course_claims_no_curve(demo_report):
    row = pd.read_csv(demo_report / "tables" / "empathy_smooth.csv").iloc[0]
    assert row["status"] == "ok" and row["k"] == 10
    sentence = _page_sentence(demo_report)
    assert CURVED not in sentence and "no clear curve" in sentence
    assert row["linearity_p_value"] >= 0.05
    assert row["slope_ci_low"] < row["slope"] < row["slope_ci_high"]


def test_three_days_fit_no_smooth_and_say_why(tmp_path):
    root = _handmade(tmp_path / "study", seed=22)
    sessions = pd.read_csv(root / "sessions.csv", parse_dates=["started_at"])
    first = sessions.groupby("participant_id")["started_at"].transform("min").dt.normalize()
    order = sessions.groupby("participant_id").cumcount()
    # every session on day 0, 7 or 14 of its participant, at distinct hours of those days
    sessions["started_at"] = (
        first + pd.to_timedelta(7 * (order % 3), unit="D") + pd.to_timedelta(8 + order, unit="h")
    ).dt.strftime("%Y-%m-%dT%H:%M:%S")
    sessions.to_csv(root / "sessions.csv", index=False)
    out = build_sections(root, tmp_path / "report", ["ratings"])
    row = pd.read_csv(out / "tables" / "empathy_smooth.csv").iloc[0]
    assert row["status"].startswith("not fitted") and pd.isna(row["edf"])
    sentence = _page_sentence(out)
    assert "No smooth course is fitted" in sentence and "3 distinct days" in sentence
    assert CURVED not in sentence
    assert not (out / "tables" / "empathy_smooth_curve.csv").exists()


def test_lean_fits_a_stated_subsample_of_participants():
    """--lean: above the cap the course is fitted to that many people, drawn with the seed."""
    from longitudinal.report.sections._smooth_course import smooth_course

    rng = np.random.default_rng(4)
    people, per = 30, 8
    week = rng.integers(0, 28, people * per) / 7
    story = pd.DataFrame(
        {
            "empathy": np.sin(week)
            + rng.normal(0, 1, people)[np.repeat(np.arange(people), per)]
            + rng.normal(0, 0.5, people * per),
            "pid": np.repeat([f"p{i:02d}" for i in range(people)], per),
            "story_id": [f"s{i}" for i in range(people * per)],
            "week": week,
        }
    )
    kw = dict(rating_col="empathy", id_col="pid", ci_level=0.95, rating_name="empathy")
    lean = smooth_course(story, max_participants=12, seed=3, **kw)
    assert lean.table["n_participants"].iloc[0] == 12
    assert lean.table["n_obs"].iloc[0] == 12 * per
    assert lean.notes[0] == (
        "The smooth course is fitted on a random subsample of 12 of the 30 participants with "
        f"ratings ({12 * per} of {people * per} ratings; seed 3; --lean)."
    )
    again = smooth_course(story, max_participants=12, seed=3, **kw)
    pd.testing.assert_frame_equal(lean.table, again.table)
    whole = smooth_course(story, **kw)
    assert whole.table["n_participants"].iloc[0] == people and not whole.notes
