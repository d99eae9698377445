"""Tests of longitudinal/report/sections/reliability.py: "How reliable are the measures?".

The section is run on its own against a loaded study (no whole report: fast), with the
change section's ``change_models`` table and the multilevel table put in the context the way
the steps that compute them do.
"""

import dataclasses
import html
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal import load_study
from longitudinal.psychometrics.generalizability import ratings_g_study
from longitudinal.report.context import ReportContext, choose_states
from longitudinal.report.options import ReportOptions
from longitudinal.report.sections import methods
from longitudinal.report.sections.reliability import (
    MULTILEVEL_TABLE,
    ReliabilitySection,
    low_flags,
)
from models import InvalidParameterError

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"


@pytest.fixture(scope="module")
def study():
    with warnings.catch_warnings():  # the study's scoring warnings are tested elsewhere
        warnings.simplefilter("ignore")
        return load_study(SLIDER7)


def _context(study, tmp_path) -> ReportContext:
    options = ReportOptions(
        seed=1,
        pseudonymize=False,
        retest={},
        random_slope=True,
        ci_level=0.95,
        bayes=False,
        overwrite=False,
    )
    ids = {str(i): str(i) for i in study.participants[study.config.id_col]}
    ctx = ReportContext(study=study, options=options, id_map=ids, out=tmp_path)
    choose_states(ctx)
    ctx.tables["exclusion_counts"] = pd.DataFrame(columns=["scope", "file", "reason", "n"])
    return ctx


def _text(markup) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", str(markup))))


def test_heading_and_anchor():
    assert ReliabilitySection.heading == "How reliable are the measures?"
    assert ReliabilitySection.anchor == "reliability"  # the module is named by its anchor


def test_g_study_tables_flags_and_the_imprecision_line(study, tmp_path):
    ctx = _context(study, tmp_path)
    section = ReliabilitySection()
    section.run(ctx)
    assert section.unavailable is None
    expected = ratings_g_study(study)
    pd.testing.assert_frame_equal(ctx.tables["ratings_g_components"], expected.components)
    pd.testing.assert_frame_equal(ctx.tables["ratings_g_coefficient"], expected.observed)
    pd.testing.assert_frame_equal(ctx.tables["ratings_d_study"], expected.d_study)
    # every α or ω below .70 is flagged, and only those
    rel = ctx.tables["reliability"]
    for rec in rel.itertuples(index=False):
        assert ("α" in rec.flag and "below .70" in rec.flag) == (rec.alpha < 0.70)
        if np.isfinite(rec.omega_total):
            assert ("ω" in rec.flag) == (rec.omega_total < 0.70)
    assert (rel["flag"] != "").sum() == 3  # TIPI extraversion, agreeableness, openness
    body = _text(section.render(ctx))
    assert f"gives G = {expected.g:.2f}" in body
    # 18 participants and a story variance at zero: said in one line where G is shown
    assert (
        "The G study is imprecise: only 18 participants and a singular fit (the story "
        "variance estimated at zero)" in body
    )
    # the D study grid: 10 rows of stories x the session counts 5, 6, 10, 20
    assert "stories per session 5 sessions 6 sessions 10 sessions 20 sessions" in body
    low = expected.d_study.loc[expected.d_study["g"] < 0.70]
    assert body.count("†") == len(low) + (1 if len(low) else 0)  # each cell and the caption
    # methods: the G sentence and the α flags
    text = methods.methods_text(ctx)
    assert f"G = {expected.g:.2f}".replace("0.", ".") in text
    assert (
        "Internal consistency was below .70 for Ten-Item Personality Inventory (TIPI) "
        "(extraversion) at baseline (α = .66)" in text
    )


def test_the_multilevel_hook_renders_and_flags_when_present(study, tmp_path):
    ctx = _context(study, tmp_path)
    ctx.tables[MULTILEVEL_TABLE] = pd.DataFrame(
        {
            "instrument": ["who5", "closeness"],
            "scale": ["percentage", "bond"],
            "n_persons": [18, 18],
            "n_occasions": [3, 3],
            "n_items": [5, 4],
            "method": ["anova", "anova"],
            "RkF": [0.95, 0.91],
            "R1R": [0.81, 0.62],
            "RkR": [0.93, 0.88],
            "Rc": [0.55, 0.74],
            "RkRn": [0.92, 0.85],
            "Rcn": [0.50, 0.71],
        }
    )
    section = ReliabilitySection()
    section.run(ctx)
    table = ctx.tables[MULTILEVEL_TABLE]
    assert list(table["flag"]) == ["Rc and Rcn below .70", "R1R below .70"]
    body = _text(section.render(ctx))
    assert "Reliability within and across people" in body
    assert "Rc and Rcn below .70" in body
    text = methods.methods_text(ctx)
    assert (
        "Coefficients below .70: WHO-5 Well-Being Index (percentage) (Rc and Rcn below .70) "
        "and Closeness to the robot (R1R below .70)." in text
    )
    # no table given: the section computes it for the state scales at two or more waves
    ctx2 = _context(study, tmp_path)
    section2 = ReliabilitySection()
    section2.run(ctx2)
    assert set(ctx2.tables[MULTILEVEL_TABLE]["instrument"]) == {"who5", "closeness"}
    assert "Reliability within and across people" in _text(section2.render(ctx2))


def test_a_multilevel_table_that_cannot_be_computed_is_a_note_not_a_block(
    study, tmp_path, monkeypatch
):
    from models import ModelsError

    def refuse(_study):
        raise ModelsError("no state scale could be fitted")

    monkeypatch.setattr(
        "longitudinal.psychometrics.reliability.study_multilevel_reliability", refuse
    )
    ctx = _context(study, tmp_path)
    section = ReliabilitySection()
    section.run(ctx)
    assert MULTILEVEL_TABLE not in ctx.tables
    assert "Reliability within and across people" not in _text(section.render(ctx))
    assert any("no state scale could be fitted" in n for n in ctx.notes)


def test_the_rci_reliability_is_stated_and_flagged(study, tmp_path):
    ctx = _context(study, tmp_path)
    section = ReliabilitySection()
    section.run(ctx)
    ctx.tables["change_models"] = pd.DataFrame(
        {
            "scale": ["who5_percentage", "closeness"],
            "rci_reliability": [0.879, 0.65],
            "rci_reliability_source": [
                "Cronbach's alpha at baseline = 0.88",
                "test-retest r = 0.65 (given)",
            ],
        }
    )
    body = _text(section.render(ctx))
    assert "Reliability used by the reliable change index" in body
    assert "Cronbach's alpha at baseline = 0.88" in body
    assert "test-retest r = 0.65 (given) below .70" in body


def test_a_study_whose_ratings_cannot_identify_g_gets_one_line(study, tmp_path, monkeypatch):
    import longitudinal.psychometrics.generalizability as glue

    def refuse(study):
        raise InvalidParameterError(
            "g_study: the variance components are not estimable from these data: "
            "2 participant(s) rated (3 or more needed)"
        )

    monkeypatch.setattr(glue, "ratings_g_study", refuse)
    ctx = _context(study, tmp_path)
    section = ReliabilitySection()
    section.run(ctx)
    assert section.unavailable is None  # α/ω are still shown
    assert not any(k.startswith("ratings_") for k in ctx.tables)
    body = _text(section.render(ctx))
    assert (
        "The G study of the ratings is not estimable: 2 participant(s) rated (3 or more "
        "needed)." in body
    )
    assert "Internal consistency per scale and wave" in body
    assert "not estimable" in methods.methods_text(ctx)


def test_low_flags():
    frame = pd.DataFrame({"a": [0.5, 0.9, np.nan], "b": [0.69, 0.70, 0.1]})
    assert low_flags(frame, {"a": "A", "b": "B"}) == ["A and B below .70", "", "B below .70"]


def test_the_ladder_s_estimator_follows_the_answer_categories_and_says_a_sparse_item(
    study, tmp_path, monkeypatch
):
    """closeness (1-5) gets the ordinal ladder, WHO-5 (0-5, six categories) MLR; a category
    nobody chose at a wave is one line naming item, wave and the remedy, and no numbers."""
    import models.sem

    # 18 participants are far below the rule of thumb, which the report otherwise applies first
    monkeypatch.setattr(models.sem, "invariance_sample_note", lambda *a, **k: "")
    ctx = _context(study, tmp_path)
    section = ReliabilitySection()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        section.run(ctx)
    lines = ctx.results["invariance_lines"]
    (sparse,) = [line for line in lines if line.startswith("closeness.bond")]
    assert "estimator='WLSMV' needs every answer category of an item at every wave" in sparse
    assert "item 'close_1' at wave baseline: nobody chose 5" in sparse
    assert "Collapse the categories" in sparse and sparse.endswith("no invariance ladder")
    assert ctx.tables["invariance"].empty  # no numbers from a model that was not fitted
    assert "invariance_rule" not in ctx.results
    assert sparse in _text(section.render(ctx))
    assert "measurement invariance" not in methods.methods_text(ctx).lower()


def test_the_methods_name_the_invariance_estimator_and_its_rule(study, tmp_path, monkeypatch):
    from longitudinal.psychometrics import invariance
    from longitudinal.psychometrics.invariance import INVARIANCE_COLUMNS, InvarianceTables

    asked = []

    def fitted(loaded, *, estimator):
        asked.append(estimator)
        row = {c: np.nan for c in INVARIANCE_COLUMNS}
        row.update(instrument="closeness", scale="bond", model="configural", estimator="WLSMV")
        table = pd.DataFrame([row], columns=INVARIANCE_COLUMNS)
        return InvarianceTables(table, pd.DataFrame(), ())

    monkeypatch.setattr(invariance, "study_invariance", fitted)
    for chosen, words in (
        (
            "auto",
            "was estimated with WLSMV for scales answered on at most 5 categories and MLR for "
            "more (Rhemtulla, Brosseau-Liard & Savalei 2012).",
        ),
        ("MLR", "was estimated with MLR for every scale, as asked (--estimator)."),
    ):
        ctx = _context(study, tmp_path)
        ctx.options = dataclasses.replace(ctx.options, invariance_estimator=chosen)
        section = ReliabilitySection()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            section.run(ctx)
        assert asked[-1] == chosen
        text = methods.methods_text(ctx)
        assert "Longitudinal measurement invariance of the state scales" in text
        assert words in text
