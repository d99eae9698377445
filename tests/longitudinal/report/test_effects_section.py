"""Tests of longitudinal/report/sections/effects.py: the "What predicts empathy" section."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import build_sections, draft_figures
from numpy.testing import assert_allclose

from longitudinal.narrate.numbers import apa_p, num
from longitudinal.report.sections.effects import empathy_effects_section


def test_effects_section_without_bayes(demo_study, tmp_path):
    section = empathy_effects_section(demo_study, tmp_path, bayes=False)
    assert section.heading == "What predicts empathy" and section.anchor == "predictors"
    assert set(section.tables) == {
        "empathy_effects",
        "empathy_variance",
        "empathy_predictors",
        "empathy_reading",
        "empathy_r2",
    }
    file, caption = section.figures["empathy_effects"]
    assert (tmp_path / file).is_file() and caption
    svg = file.removesuffix(".png") + ".svg"
    assert (tmp_path / svg).read_text(encoding="utf-8").startswith("<?xml")
    pdf = file.removesuffix(".png") + ".pdf"
    assert (tmp_path / pdf).read_bytes().startswith(b"%PDF")
    assert f'(vector: <a href="{svg}">SVG</a>, <a href="{pdf}">PDF</a>)' in section.html
    assert "data:image/png;base64," in section.html
    assert "rating points" in section.html
    # every effect gets a sentence, and no participant id leaks into the section
    assert section.html.count("<li>") >= len(section.tables["empathy_reading"])
    ids = demo_study.participants["participant_id"].astype(str)
    assert not any(f">{i}<" in section.html or f" {i} " in section.html for i in ids)
    assert any("SingularFitWarning" in n for n in section.notes)
    # the tables show the fitted numbers: LMM and ordinal columns, APA p values, ICC to 3 places
    effects = section.tables["empathy_effects"]
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    for rec in lmm.itertuples():
        assert (
            f">{num(rec.estimate)}<" in section.html and f">{apa_p(rec.p_value)}<" in section.html
        )
    assert ">Ordinal AME<" in section.html and ">p (z)<" in section.html
    for icc in section.tables["empathy_variance"]["icc"].dropna():
        assert f">{num(icc, 3)}<" in section.html


@pytest.mark.slow
def test_effects_section_with_bayes(demo_study, tmp_path):
    section = empathy_effects_section(
        demo_study, tmp_path, draws=100, tune=100, story_effects=False, seed=3
    )
    effects = section.tables["empathy_effects"]
    assert set(effects["engine"]) == {"lmm", "clmm", "bayes_ordinal"}
    assert set(effects.loc[effects["engine"] == "bayes_ordinal", "scale"]) == {"rating", "logit"}
    reading = section.tables["empathy_reading"]
    # 100 draws fail the diagnostics gate: the Bayesian model shows no number and is never
    # narrated; its rows in the CSV say so, and the notes say how to sample longer
    status = effects.loc[effects["engine"] == "bayes_ordinal", "status"]
    assert status.str.startswith("failed: its sampling diagnostics failed").all()
    assert ">Bayes<" in section.html and ">failed<" in section.html
    assert "Bayes AME" not in section.html and "Bayes logit" not in section.html
    assert reading["agree"].isna().all()
    assert not reading["text"].str.contains("Bayesian").any()
    advice = [n for n in section.notes if n.startswith("Advice: ")]
    assert len(advice) == 1 and "did not pass its sampling diagnostics" in advice[0]
    assert "--draws 200 --tune 1000 --chains 4" in advice[0]
    variance = section.tables["empathy_variance"]
    bayes = variance[variance["engine"] == "bayes_ordinal"]
    assert_allclose(bayes["icc"].sum(), 1.0, atol=1e-12)
    # 100 draws cannot pass the diagnostics gate: recorded, not raised
    assert any("SamplingWarning" in n for n in section.notes)


def test_section_names_live_in_the_report_only():
    import longitudinal.predict as predict
    from longitudinal.report.sections.predictors import PredictorsSection

    for name in ("EffectsSection", "empathy_effects_section"):
        assert name not in predict.__all__
        with pytest.raises(AttributeError):
            getattr(predict, name)
    section = PredictorsSection()
    assert (section.anchor, section.heading) == ("predictors", "What predicts empathy")


def test_r2_table_and_sentence(demo_study, tmp_path):
    """tables/empathy_r2.csv holds the LMM's R-squared and its split within and between persons
    (from the two-level model, labelled so), and the page says it in one paragraph."""
    from longitudinal.predict.variance_explained import R2_TABLE_COLUMNS

    with draft_figures():
        out = build_sections(demo_study.root, tmp_path / "out", ["predictors"])
    table = pd.read_csv(out / "tables" / "empathy_r2.csv", keep_default_na=False)
    assert list(table.columns) == R2_TABLE_COLUMNS
    assert (table["status"] == "ok").all() and (table["note"] == "").all()
    value = table.set_index(["model", "decomposition", "measure"])["value"]
    # the demo model has a story intercept beside the person's: Nakagawa's pair and the story's
    # share from it, the split from the two-level model of the same predictors
    reported = table[table["model"] == "reported"]
    assert list(reported["measure"]) == ["marginal", "conditional", "story_id"]
    marginal, conditional = (
        value["reported", "nakagawa", "marginal"],
        value["reported", "nakagawa", "conditional"],
    )
    assert 0 < marginal < conditional < 1
    two = table[table["model"] == "two-level"]
    assert set(two["decomposition"]) == {"total", "within", "between"}
    assert "story_id" not in two["formula"].iloc[0] and "story_id" in reported["formula"].iloc[0]
    assert "weeks since the first session" in two["split"].iloc[0]
    assert table["n_ratings"].nunique() == 1 and table["n_participants"].nunique() == 1
    page = (out / "report.html").read_text(encoding="utf-8")

    def pct(v):
        return f"{100 * v:.1f}%" if 100 * v < 9.95 else f"{100 * v:.0f}%"

    assert (
        f"its fixed effects account for {pct(marginal)} of the variance of the ratings, "
        f"fixed and random effects together for {pct(conditional)}"
    ) in page
    assert f"the story intercept holds {pct(value['reported', 'share', 'story_id'])}" in page
    assert (
        "Rights &amp; Sterba&#39;s R² comes from the two-level model of the same predictors on "
        f"the same {table['n_ratings'].iloc[0]} ratings of {table['n_participants'].iloc[0]} "
        "participants, with the participant&#39;s random effects only (the story intercept "
        "left out)"
    ) in page
    assert f"account for {pct(value['two-level', 'within', 'f1'])} of the variance within" in page
    assert f"for {pct(value['two-level', 'between', 'f2'])} of the variance between" in page
