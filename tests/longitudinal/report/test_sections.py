"""Tests of longitudinal/report/sections and longitudinal/report/html.py: sections as units."""

import re

import numpy as np
import pandas as pd
import pytest

from longitudinal.report import build_report
from longitudinal.report.html import apa_p, num, table
from longitudinal.report.sections import SectionUnavailable, report_sections
from longitudinal.report.sections.reliability import ReliabilitySection

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    from longitudinal.simulate import simulate_study

    return simulate_study(tmp_path_factory.mktemp("sim") / "study", seed=7, n_participants=16)


def _section(page: str, anchor: str) -> str:
    found = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert found, anchor
    return found.group(1)


def test_report_is_the_list_of_sections():
    anchors = [s.anchor for s in report_sections()]
    assert anchors == [
        "sample",
        "methods",
        "reliability",
        "change",
        "ratings",
        "sessions",
        "traits",
        "predictors",
        "evaluation",
        "notes",
        "files",
    ]
    assert len(set(anchors)) == len(anchors)


def test_an_unavailable_section_becomes_a_note_and_the_rest_is_written(
    study_dir, tmp_path, monkeypatch
):
    def refuse(self, ctx):
        raise SectionUnavailable("every scale has a single item <b>here</b>")

    monkeypatch.setattr(ReliabilitySection, "_compute", refuse)
    out = build_report(study_dir, tmp_path / "report", seed=7, bayes=False)
    page = (out / "report.html").read_text(encoding="utf-8")
    body = _section(page, "reliability")
    assert "Not computed: every scale has a single item &lt;b&gt;here&lt;/b&gt;" in body
    for anchor in ("sample", "methods", "change", "ratings", "sessions", "traits", "notes"):
        assert _section(page, anchor)
    assert "How reliable are the measures?: every scale has a single item" in _section(
        page, "notes"
    )
    assert not (out / "tables" / "reliability.csv").exists()
    assert not (out / "tables" / "ratings_g_components.csv").exists()
    assert (out / "tables" / "rm_anova.csv").is_file()


def test_table_escapes_text_and_formats_numbers():
    frame = pd.DataFrame(
        {
            "term": ["<script>x</script>", "b"],
            "estimate": [-1.234, np.nan],
            "p_value": [0.0004, 0.5],
        }
    )
    html = str(table(frame, caption='a "caption"'))
    assert "<script>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "−1.23" in html and "–" in html
    assert "&lt; .001" in html and ".500" in html
    assert html.startswith('<div class="table-wrap"><table><caption>a &#34;caption&#34;</caption>')
    assert html.endswith("</table></div>")


@pytest.mark.parametrize(
    ("value", "digits", "shown"),
    [
        (1.5, 2, "1.50"),
        (-0.25, 1, "−0.2"),
        (3, 2, "3"),
        (np.inf, 2, "∞"),
        (None, 2, "–"),
        (True, 2, "yes"),
    ],
)
def test_num(value, digits, shown):
    assert num(value, digits) == shown


def test_p_value():
    assert [apa_p(v) for v in (0.0001, 0.0449, 0.5, np.nan)] == ["< .001", ".045", ".500", "–"]


def test_p_text_puts_the_sign_once():
    from longitudinal.narrate.numbers import p_text

    assert [p_text(v) for v in (0.0001, 0.0449, np.nan)] == ["p < .001", "p = .045", "p = –"]
