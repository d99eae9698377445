r"""Text from the study is read as itself by every manuscript writer (narrate/markup.py).

One escaping rule per format: :func:`escape_markdown` for ``results.md``, the markup's own
:func:`escape_markup` for the cells Word and LaTeX read, LaTeX's :func:`escape` for the
``.tex`` files. Study names, wave labels, instrument titles and feature names holding HTML,
Markdown links, emphasis, code spans or ``\input{...}`` come out escaped; where pandoc is
installed, the Markdown it turns into HTML or LaTeX holds no live tag, link or command.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from longitudinal.manuscript.latex import escape, latex_engine, latex_wrapper
from longitudinal.narrate.markup import (
    escape_markdown,
    escape_markup,
    literal,
    markdown_literals,
    plain,
    runs,
    to_markdown,
)
from longitudinal.narrate.sentences import pairwise_apa, reliable_change_apa

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")

CORPUS = Path(__file__).parents[2] / "data" / "corpus"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[x](javascript:alert(1))"
TEX = "\\input{/etc/passwd}"
BOLD = "**bold**"
TICKS = "`tick`"
PAYLOADS = (IMG, LINK, TEX, BOLD, TICKS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (IMG, "\\<img src=x onerror=alert\\(1\\)\\>"),
        (LINK, "\\[x\\]\\(javascript\\:alert\\(1\\)\\)"),
        (TEX, "\\\\input\\{/etc/passwd\\}"),
        (BOLD, "\\*\\*bold\\*\\*"),
        (TICKS, "\\`tick\\`"),
        ("a & b | c ~ d ! e # f + g _ h", "a \\& b \\| c \\~ d \\! e \\# f \\+ g \\_ h"),
        ("$x^2$ @cite", "\\$x\\^2\\$ \\@cite"),
        ("&amp; &#60;", "\\&amp; \\&\\#60;"),
    ],
)
def test_escape_markdown_escapes_each_metacharacter(text, expected):
    assert escape_markdown(text) == expected


def test_numbers_and_words_keep_their_points_and_hyphens():
    for text in ("WHO-5 at 0.95", "−0.23 and 95%", "Well-being", "12.5 min"):
        assert escape_markdown(text) == text
    # a point or hyphen that could start a list, or end a sentence, is escaped
    assert escape_markdown("1. first") == "1\\. first"
    assert escape_markdown("- item") == "\\- item"
    assert escape_markdown("end.") == "end\\."


def test_line_breaks_and_control_characters_become_one_space():
    assert escape_markdown("a\n\n# b\r\nc\u2028d\te\x07f") == "a \\# b c d e f"


def test_runs_read_escapes_as_the_characters_they_stand_for():
    assert runs("*a\\*b* and \\*c\\*") == [("a*b", "i"), (" and *c*", "")]
    assert runs("x\\_{1} y_{2}") == [("x_{1} y", ""), ("2", "sub")]
    assert runs("C:\\data") == [("C:\\data", "")]  # a backslash before a letter stays
    assert plain("*M*_{diff} = 1") == "Mdiff = 1"


def test_to_markdown_keeps_italics_and_escapes_and_writes_subscripts():
    assert to_markdown("*d*_{z} = \\<b\\>") == "*d*<sub>z</sub> = \\<b\\>"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))))
def test_literal_text_reads_back_as_itself_in_both_modes(text):
    marked = f"*F* of {literal(text)} and _{{G}}"
    assert plain(marked) == f"F of {text} and G"
    with markdown_literals():
        marked = f"*F* of {literal(text)} and _{{G}}"
    assert plain(marked) == f"F of {text} and G"


def test_literal_escapes_only_the_markup_outside_markdown():
    assert literal("Well-being (WHO-5)") == "Well-being (WHO-5)"
    assert literal(BOLD) == escape_markup(BOLD) == "\\*\\*bold\\*\\*"
    with markdown_literals():
        assert literal(IMG) == escape_markdown(IMG)
    assert literal(IMG) == IMG  # the mode ends with the block


def _pairwise():
    pairs = pd.DataFrame(
        {"term": ["a"], "wave_from": [IMG], "wave_to": [LINK], "estimate": [0.5],
         "ci_low": [0.1], "ci_high": [0.9], "df": [20.0], "statistic": [2.5], "p_value": [0.02],
         "p_holm": [0.02], "n": [21]}
    )  # fmt: skip
    return pairs, pd.DataFrame(columns=["term", "measure", "estimate", "ci_low", "ci_high"])


def _markdown_paragraph() -> tuple[str, str]:
    """One results paragraph about a scale named by a payload, in both modes."""
    pairs, sizes = _pairwise()
    counts = pd.DataFrame({"category": ["improved"], "n": [3], "proportion": [1.0]})
    label = f"{TEX} {BOLD} {TICKS}"

    def paragraph() -> str:
        return " ".join(
            [
                *pairwise_apa(pairs, sizes, label=label),
                reliable_change_apa(
                    counts, label=label, source=f"alpha at {IMG} = 0.81", wave_from=IMG,
                    wave_to=LINK,
                ),
            ]
        )  # fmt: skip

    with markdown_literals():
        markdown = paragraph()
    return paragraph(), markdown


def test_sentences_escape_the_study_text_for_markdown_only():
    marked, markdown = _markdown_paragraph()
    assert plain(marked) == plain(markdown)  # Word and LaTeX read the same text
    for payload in PAYLOADS:
        assert payload in plain(marked)
        assert payload not in to_markdown(markdown)
        assert escape_markdown(payload) in to_markdown(markdown)
    assert "rose by 0.50 points, 95% CI [0.10, 0.90], *t*(20) = 2.50" in markdown
    assert "alpha at \\<img src=x onerror=alert\\(1\\)\\> = 0.81" in markdown


def _pandoc(markdown: str, to: str, source: str = "markdown") -> str:
    run = subprocess.run(
        ["pandoc", "-f", source, "-t", to],
        input=markdown, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return run.stdout


class _Tags(HTMLParser):
    """Every element and attribute of an HTML fragment, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def _assert_inert(html: str, latex: str) -> None:
    """No element but headings, paragraphs, italics and subscripts; no link or TeX input."""
    parsed = _Tags()
    parsed.feed(html)
    assert {tag for tag, _ in parsed.tags} <= {"h1", "h2", "p", "em", "sub"}, parsed.tags
    assert all(name == "id" for _, attrs in parsed.tags for name, _ in attrs), parsed.tags
    text = " ".join("".join(parsed.text).split())
    for payload in (IMG, LINK, TEX, BOLD, TICKS):
        assert payload in text
    assert "\\input{" not in latex and "\\href" not in latex
    assert re.search(r"\\textbackslash(\{\}| )input\\\{/etc/passwd\\\}", latex), latex


@pytest.mark.skipif(shutil.which("pandoc") is None, reason="pandoc is not installed")
@pytest.mark.parametrize("source", ["markdown", "commonmark", "gfm"])
def test_pandoc_turns_the_escaped_text_into_no_live_markup(source):
    _, markdown = _markdown_paragraph()
    with markdown_literals():
        document = f"# Results: {literal(IMG + ' ' + LINK)}\n\n{to_markdown(markdown)}\n"
    _assert_inert(_pandoc(document, "html", source), _pandoc(document, "latex", source))


@pytest.fixture(scope="module")
def payload_report(tmp_path_factory):
    """The manuscript of the corpus study whose every kind of user text is a payload."""
    from longitudinal.cli import main

    study = CORPUS / "escaping_markdown_payloads" / "study"
    out = tmp_path_factory.mktemp("payloads") / "report"
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        args = ["report", str(study), "--out", str(out), "--no-bayes", "--no-pseudonymize"]
        assert main(args) == 0
    return out / "manuscript"


@pytest.mark.skipif(shutil.which("pandoc") is None, reason="pandoc is not installed")
def test_pandoc_turns_a_reports_results_md_into_no_live_markup(payload_report):
    markdown = (payload_report / "results.md").read_text(encoding="utf-8")
    _assert_inert(_pandoc(markdown, "html"), _pandoc(markdown, "latex"))


@pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="pdflatex is not installed (TeX Live gives it)"
)
def test_pdflatex_compiles_the_tables_of_a_study_named_by_payloads(payload_report, tmp_path):
    folder = tmp_path / "tex"
    shutil.copytree(payload_report, folder)
    assert (
        (folder / "tables.tex").read_text(encoding="utf-8").startswith("% Compile with pdflatex.")
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
         "tables.tex"],
        cwd=folder, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    log = (folder / "tables.log").read_text(encoding="utf-8", errors="replace")
    assert "/etc/passwd" not in log.replace("input\\{/etc/passwd\\}", "")  # never opened


def test_a_first_cell_that_begins_with_a_bracket_or_a_star_is_guarded():
    from longitudinal.manuscript.latex import latex_table
    from longitudinal.manuscript.table import ApaTable

    table = ApaTable(
        number=1, name="t", title="T", columns=("Scale", "*M*"),
        rows=((literal(LINK), "1.00"), (literal(BOLD), "[0.10, 0.90]")), note="n",
    )  # fmt: skip
    tex = latex_table(table)
    assert "\n{}[x](javascript:alert(1)) & 1 & .00 \\\\\n" in tex
    assert "\n{}**bold** & \\multicolumn{2}{c}{[0.10, 0.90]} \\\\\n" in tex


@pytest.mark.parametrize(
    ("title", "engine", "first"),
    [
        ("Café study, η² = .01 ± 0.2 → −1", "pdflatex", None),
        ("Исследование", "xelatex", "И"),
        ("共感の研究", "xelatex", "共"),
        ("study \U0001f642", "xelatex", "\U0001f642"),
    ],
)
def test_latex_engine_follows_the_text(title, engine, first):
    assert latex_engine(escape(title)) == (engine, first)
    lines = latex_wrapper(["table1.tex"], title=title).splitlines()
    assert lines[0].startswith(f"% Compile with {engine}")
    if engine == "xelatex":
        assert "\\usepackage{fontspec}" in lines and "\\usepackage[T1]{fontenc}" not in lines
    else:
        assert "\\usepackage[utf8]{inputenc}" in lines and "\\usepackage{fontspec}" not in lines


def test_the_wrapper_reads_the_tables_for_the_engine():
    table = "\\begin{table}\\caption{Шкала}\\end{table}\n"
    assert latex_wrapper(["t.tex"], title="x", tables=[table]).startswith("% Compile with xelatex")


def test_latex_sets_line_separators_and_control_characters_as_spaces():
    assert escape("a\u2028b\nc\x07d") == "a b c d"
    assert latex_engine(escape("a\u2028b")) == ("pdflatex", None)


@pytest.mark.skipif(
    shutil.which("xelatex") is None, reason="xelatex is not installed (TeX Live gives it)"
)
def test_a_report_of_a_cyrillic_study_compiles_with_the_engine_its_wrapper_names(tmp_path):
    from longitudinal.cli import main

    study = CORPUS / "escaping_latex_cyrillic_name" / "study"
    out = tmp_path / "report"
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        args = ["report", str(study), "--out", str(out), "--no-bayes", "--formats", "latex"]
        assert main(args) == 0
    folder = out / "manuscript"
    assert (folder / "tables.tex").read_text(encoding="utf-8").startswith("% Compile with xelatex")
    run = subprocess.run(
        ["xelatex", "-interaction=nonstopmode", "-halt-on-error", "tables.tex"],
        cwd=folder, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]


def test_word_reads_the_study_text_back_as_written(tmp_path):
    import docx

    from longitudinal.manuscript.word import write_results_docx

    with markdown_literals():
        heading = f"Change in {literal(LINK)}"
        text = f"*F* for {literal(IMG)} and {literal(TEX)}"
    path = tmp_path / "results.docx"
    write_results_docx([(heading, text)], path, title=f"Results: {IMG}")
    paragraphs = [p.text for p in docx.Document(str(path)).paragraphs]
    assert paragraphs == [f"Results: {IMG}", f"Change in {LINK}", f"F for {IMG} and {TEX}"]


def test_word_sets_control_characters_as_spaces_and_keeps_a_long_title(tmp_path):
    import docx

    from longitudinal.manuscript.word import write_results_docx

    path = tmp_path / "results.docx"
    title = "Results: " + "x" * 300 + "\x07"
    write_results_docx([("Change in a\x0bb", "*F* for c\x00d\ud800e")], path, title=title)
    document = docx.Document(str(path))
    assert document.core_properties.title == title[:255]
    assert [p.text for p in document.paragraphs] == [
        title[:-1] + " ",
        "Change in a b",
        "F for c d e",
    ]
