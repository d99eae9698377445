"""The report of a hand-written 1-7 study (tests/data/studies/declared/slider7).

Its rating scale, scoring rules, small weeks and warnings differ from the simulator's
defaults, so every text, table and figure of the report is checked against them.
"""

import html
import re
from pathlib import Path

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
