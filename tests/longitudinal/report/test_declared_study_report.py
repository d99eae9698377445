"""The report of a hand-written 1-7 study (tests/data/studies/declared/slider7).

Its rating scale, scoring rules, small weeks and warnings differ from the simulator's
defaults, so every text, table and figure of the report is checked against them.
"""

import html
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal.cli import main

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    import contextlib
    import io

    out = tmp_path_factory.mktemp("slider7") / "report"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(SLIDER7), "--out", str(out), "--no-bayes"]) == 0
    return out, err.getvalue()


def _text(out: Path) -> str:
    """The page's text: tags, styles and embedded images removed, entities decoded."""
    page = (out / "report.html").read_text(encoding="utf-8")
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    page = re.sub(r"<[^>]+>", " ", page)
    return " ".join(html.unescape(page).split())


def test_p_values_read_p_below_not_p_equals_below(report):
    text = _text(report[0])
    assert "p = <" not in text
    # closeness changes clearly: its Friedman test is below .001
    assert re.search(r"Friedman test: χ²\(2\) = 22\.95, p < \.001, Kendall's W", text)
    assert "Mauchly's W = 0.924, χ²(2) = 1.27, p = .530." in text


def test_the_declared_scale_is_named_everywhere(report):
    out, _ = report
    text = _text(out)
    assert "1–5" not in text and "1-5" not in text
    assert "The linear mixed model is fitted to the 1–7 rating" in text
    assert "score ratings (1–7)" in text
    assert "kept within the 1–7 scale" in text
    svg = (out / "figures" / "empathy_effects.svg").read_text(encoding="utf-8")
    assert "Effects on the 1–7 rating" in svg
    course = (out / "figures" / "empathy_course.svg").read_text(encoding="utf-8")
    assert "mean score (1–7)" in course
    ratings = (out / "figures" / "empathy_ratings.svg").read_text(encoding="utf-8")
    assert "score (1–7)" in ratings


def test_the_empathy_course_stays_on_the_scale_and_marks_small_weeks(report):
    out, _ = report
    course = pd.read_csv(out / "tables" / "empathy_course.csv")
    assert course["n"].tolist() == [18, 17, 16, 12]
    assert (course["ci_low"] >= 1).all() and (course["ci_high"] <= 7).all()
    assert not course["too_few"].any() and not course["clipped"].any()
    text = _text(out)
    assert (
        "Weeks rated by fewer than 5 participants are drawn as open circles without an "
        "interval (none here)." in text
    )


def test_every_figure_is_written_as_png_svg_and_pdf_and_linked(report):
    out, _ = report
    page = (out / "report.html").read_text(encoding="utf-8")
    pngs = sorted(p.stem for p in (out / "figures").glob("*.png"))
    assert "empathy_effects" in pngs
    assert pngs == sorted(p.stem for p in (out / "figures").glob("*.svg"))
    assert pngs == sorted(p.stem for p in (out / "figures").glob("*.pdf"))
    for name in pngs:
        assert (
            f'(vector: <a href="figures/{name}.svg">SVG</a>, <a href="figures/{name}.pdf">PDF</a>)'
        ) in page


def test_every_report_figure_is_a_journal_pdf_and_a_600_dpi_png(report):
    import re

    from PIL import Image

    from longitudinal.plotting import JOURNAL_DPI, ONE_COLUMN_WIDTH, TWO_COLUMN_WIDTH

    out, _ = report
    for png in sorted((out / "figures").glob("*.png")):
        pdf = png.with_suffix(".pdf").read_bytes()
        assert pdf.startswith(b"%PDF"), png.name
        assert b"/FontFile2" in pdf, png.name  # TrueType fonts embedded
        box = re.search(rb"/MediaBox \[\s*([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)\s*\]", pdf)
        width = float(box[3]) - float(box[1])
        assert min(abs(width - 72 * w) for w in (ONE_COLUMN_WIDTH, TWO_COLUMN_WIDTH)) <= 1, (
            png.name,
            width,
        )
        with Image.open(png) as image:
            assert round(image.info["dpi"][0]) == JOURNAL_DPI
    # the page embeds smaller copies: it stays far smaller than the figures themselves
    page = (out / "report.html").stat().st_size
    assert page < sum(p.stat().st_size for p in (out / "figures").glob("*.png"))


def test_methods_state_the_missing_item_rule_of_each_kind_of_scale(report):
    text = _text(report[0])
    assert (
        "Mean scales (tipi and closeness) required at least 80% of their items to be answered, "
        "rounded up (tipi: 2 of 2; closeness: 4 of 4 items); sum scales (who5) required every "
        "item to be answered (no prorating); no answers were imputed."
    ) in text
    assert "A score required at least 80% of a scale's items" not in text


def test_methods_with_prorated_sum_scales(tmp_path):
    import shutil
    import warnings

    from longitudinal.report.sections.methods import _missing_items_sentence
    from longitudinal.study.loaded import load_study

    root = tmp_path / "slider7"
    shutil.copytree(SLIDER7, root)
    toml = root / "study.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8") + "\n[scoring]\nmin_valid = 0.6\nprorate = true\n",
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the two-item TIPI scales' undefined statistics
        study = load_study(root)
    assert study.config.prorate and study.config.min_valid == 0.6
    text = _missing_items_sentence(study, study.config.min_valid, study.config.prorate)
    assert text == (
        "Mean scales (tipi and closeness) required at least 60% of their items to be answered, "
        "rounded up (tipi: 2 of 2; closeness: 3 of 4 items); sum scales (who5) required at "
        "least 60% of their items to be answered, rounded up (who5: 3 of 5 items), the sum of "
        "the answered items scaled up to all items (their mean times the number of items); no "
        "answers were imputed."
    )


def _row(page: str, caption: str, first_cell: str) -> list[str]:
    """The cells of one row of a table, found by its caption and first cell."""
    block = page[page.index(f"<caption>{caption}</caption>") :]
    block = block[: block.index("</table>")]
    row = re.search(rf'<tr><td class="text">{re.escape(first_cell)}</td>(.*?)</tr>', block)
    return [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]


def test_counts_are_whole_numbers_and_statistics_keep_their_decimals(report):
    out, _ = report
    page = (out / "report.html").read_text(encoding="utf-8")
    # n, mean, SD, min, median, max: a median of 9.5 sessions stays real, the counts are whole
    assert _row(page, "Session behaviour", "sessions per participant") == [
        "18", "8.44", "1.76", "6", "9.50", "10",
    ]  # fmt: skip
    assert _row(page, "Session behaviour", "ratings per session") == [
        "152", "3.00", "0.00", "3", "3", "3",
    ]  # fmt: skip
    assert _row(page, "Session behaviour", "turns") == ["152", "14.81", "4.28", "5", "15", "29"]
    assert _row(page, "Session behaviour", "minutes") == [
        "152", "10.94", "2.86", "4.00", "11.15", "19.40",
    ]  # fmt: skip
    # a count column is numeric (right aligned) although it mixes ints and floats
    assert '<td class="num">6</td>' in page
    summary = pd.read_csv(out / "tables" / "sessions_summary.csv").set_index("feature")
    assert summary.loc["sessions per participant", "median"] == 9.5


def test_the_header_says_a_new_key_gives_new_pseudonyms(report):
    text = _text(report[0])
    assert (
        "Participant ids are replaced by pseudonyms (S01, S02, … in an order set by a secret "
        "key kept outside this folder). Reruns with the same key give the same pseudonyms; a "
        "new key gives new ones, so two reports of this study made with different keys give "
        "the same participant different pseudonyms."
    ) in text


def test_the_state_scales_get_their_multilevel_reliability(report):
    """WHO-5 and the study's own closeness key, each at three waves: psych's mlr coefficients."""
    from longitudinal import load_study, study_multilevel_reliability

    out, _ = report
    table = pd.read_csv(out / "tables" / "multilevel_reliability.csv")
    assert sorted(table["instrument"]) == ["closeness", "who5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = study_multilevel_reliability(load_study(SLIDER7)).multilevel
    expected = expected.set_index(["instrument", "scale"]).loc[
        list(zip(table["instrument"], table["scale"], strict=True))
    ]
    for column in ("RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn"):
        np.testing.assert_allclose(table[column], expected[column], rtol=1e-12)
    assert (table["n_occasions"] == 3).all() and (table["n_persons"] == 18).all()
    low = table["Rc"] < 0.70
    assert table.loc[low, "flag"].str.contains("Rc").all()  # flagged, never hidden
    assert "Reliability within and across people" in _text(out)


def test_too_few_people_for_the_invariance_ladder_get_one_line_and_no_numbers(report):
    out, _ = report
    assert pd.read_csv(out / "tables" / "invariance.csv").empty
    text = _text(out)
    assert "Are the waves comparable? (measurement invariance)" in text
    # closeness is answered on 1-5, so its ladder is the ordinal one: 4 thresholds per item
    # and wave in place of an intercept and a variance (75 free parameters, not 51)
    assert (
        "closeness.bond: 18 participants with complete answers; the configural model of 4 items "
        "x 3 waves has 75 free parameters and needs at least 375" in text
    )
