"""``build_report(lean=True)`` (``report --lean``): what it leaves out, and that it says so."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from longitudinal.report import build_report
from longitudinal.simulate import simulate_study

PER_PERSON = ("trajectories", "state_course", "reliable_change", "empathy_course")


@pytest.fixture(scope="module")
def lean_report(tmp_path_factory):
    """A lean report of 30 simulated participants whose models may see 12 of them."""
    root = tmp_path_factory.mktemp("lean")
    study = simulate_study(root / "study", seed=4, n_participants=30)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("longitudinal.report.sections.predictors.LEAN_MODEL_PARTICIPANTS", 12)
        out = build_report(study, root / "lean", bayes=False, pseudonymize=False, lean=True, seed=9)
    return study, out


def test_lean_leaves_out_the_figures_of_one_mark_per_participant(lean_report):
    _, out = lean_report
    drawn = {p.stem for p in (out / "figures").glob("*.png")}
    assert drawn.isdisjoint(PER_PERSON)
    assert {"wave_distributions", "empathy_ratings", "empathy_effects"} <= drawn
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Reduced report (--lean)" in html and "are left out" in html
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["options"]["lean"] is True
    assert not any(f"figures/{name}.png" in provenance["files"] for name in PER_PERSON)


def test_lean_fits_the_models_on_the_stated_subsample_and_the_rest_on_everyone(lean_report):
    study, out = lean_report
    ratings = pd.read_csv(study / "ratings.csv")
    notes = pd.read_csv(out / "notes.csv")["note"].tolist()
    stated = [n for n in notes if "random subsample of 12 of the 30 participants" in n]
    assert len(stated) == 1 and "seed 9" in stated[0], notes
    kept = int(stated[0].split("(")[1].split(" of ")[0].replace(",", ""))
    assert 12 * 6 * 3 <= kept < len(ratings)  # 6 to 12 sessions of 3 ratings per person
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"on {kept} ratings of 12 participants" in html
    summary = pd.read_csv(out / "tables" / "ratings_summary.csv").set_index("group")
    assert summary.loc["all", "n"] == len(ratings)  # the ratings section: every rating


def test_the_subsample_follows_the_seed():
    from longitudinal.predict.predictors import EmpathyData
    from longitudinal.report.sections.effects import _subsample

    frame = pd.DataFrame({"pid": np.repeat([f"P{k:02d}" for k in range(20)], 3), "y": 1.0})
    data = EmpathyData(frame, pd.DataFrame(), "pid", "y", 1.0, 5.0, 0)

    def people(seed):
        notes: list[str] = []
        kept = _subsample(data, 5, seed=seed, notes=notes)
        assert len(notes) == 1
        assert "5 of the 20 participants with ratings (15 of 60 ratings" in notes[0]
        return sorted(kept.data["pid"].unique())

    assert people(1) == people(1) and len(people(1)) == 5
    assert people(1) != people(2)
    assert _subsample(data, 20, seed=1, notes=[]) is data  # no more people than the limit
