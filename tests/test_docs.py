"""The documentation site builds cleanly and every link inside it leads somewhere.

The site (docs/, ``make docs``) is built once per run with Sphinx, warnings as errors, on one
process, offline (no intersphinx, the notebooks rendered as stored, never executed: that is
tests/test_notebooks.py's work). Then, on the built HTML:

* every internal link and image (``href``/``src`` that is not a URL) names a file of the site,
  and its ``#fragment`` an id in that file; no page loads a script, a stylesheet, an image or a
  frame from the network (the formulas are MathML written into the page);
* the gallery shows every figure of the demo report (the file itself, with the report's
  caption) and every table of its manuscript (the titles of the LaTeX files, in order);
* every public name of ``surveys``, ``models`` and ``longitudinal`` (their ``__all__``) has its
  entry on its API page and a row in that page's summary table;
* the relative links of README.md lead to files that exist.

The gallery's report is the demo (``longitudinal demo``), built here with draft figures: its
SVG files, which the gallery shows, are those of a full report; only the PNG (not shown) is
drafted. With ``EMPATHIC_DOCS_SITE`` set to a built site (``make docs`` builds
``docs/_build/html`` and sets it), the checks read that site instead of building one, and the
report it was built from (``EMPATHIC_DOCS_REPORT``, else ``demo-report/`` beside the site, where
the build puts it). Skipped, with the reason, where
the ``docs`` extra is not installed (``make test`` installs it from the lock). A real browser
then opens the site, follows its navigation with no error and nothing left to load, sees the
formulas of an API page typeset and every figure of the gallery drawn, and uses the search;
skipped where no Chromium is installed.
"""

from __future__ import annotations

import html
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from _chromium import NO_CHROMIUM, Browser, Page, chromium
from conftest import draft_figures

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGES = ("surveys", "models", "longitudinal")
LINK = re.compile(r"""\b(?:href|src)=["']([^"']*)["']""")
ANCHOR = re.compile(r"""\bid=["']([^"']*)["']""")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")

for _needed in ("sphinx", "myst_nb", "sphinx_rtd_theme"):
    pytest.importorskip(_needed, reason=f"{_needed} is not installed (the `docs` extra)")


# what a page loads from elsewhere: a script, a stylesheet (or another <link>), an image, a frame
REMOTE = re.compile(
    r"""<(?:script|link|img|iframe|source|embed)\b[^>]*\b(?:src|href)=["']"""
    r"""((?:https?:)?//[^"']*)["']""",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """The built site and the demo report its gallery shows.

    EMPATHIC_DOCS_SITE (and EMPATHIC_DOCS_REPORT, or ``demo-report`` beside the site), or a
    site built here with warnings as errors from a demo report built here.
    """
    given = os.environ.get("EMPATHIC_DOCS_SITE")
    if given:
        site = Path(given).resolve()
        report = os.environ.get("EMPATHIC_DOCS_REPORT") or site.parent / "demo-report"
        return site, Path(report).resolve()
    from longitudinal.report import run_demo

    out = tmp_path_factory.mktemp("site")
    with draft_figures():  # the gallery shows the SVG files, written in full
        report = run_demo(out / "demo-report")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-j", "1"]
        + ["-b", "html", "-d", str(out / ".doctrees"), str(DOCS), str(out / "html")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "EMPATHIC_DOCS_REPORT": str(report)},
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr[-5000:]
    return out / "html", report


@pytest.fixture(scope="module")
def site(built) -> Path:
    return built[0]


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


def test_every_internal_link_resolves(site):
    ids: dict[Path, set[str]] = {}
    broken, remote = [], []
    pages = _pages(site)
    assert len(pages) > 20
    for page in pages:
        text = page.read_text(encoding="utf-8")
        remote += [f"{page.relative_to(site)}: {url}" for url in REMOTE.findall(text)]
        for target in LINK.findall(text):
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or target.startswith(("mailto:", "javascript:")):
                continue
            path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not path.is_file():
                broken.append(f"{page.relative_to(site)}: {target}")
                continue
            if parts.fragment and path.suffix == ".html":
                if path not in ids:
                    ids[path] = set(ANCHOR.findall(path.read_text(encoding="utf-8")))
                if unquote(parts.fragment) not in ids[path]:
                    broken.append(f"{page.relative_to(site)}: {target} (no such anchor)")
    assert broken == []
    assert remote == [], "pages that load from the network"


def test_the_remote_check_sees_a_script_a_stylesheet_and_an_image():
    page = (
        '<script async="async" src="https://cdn.example.org/tex.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/a.css" />'
        '<img alt="" src="http://example.org/x.png"><a href="https://example.org/">a link</a>'
        '<script src="_static/local.js"></script>'
    )
    assert REMOTE.findall(page) == [
        "https://cdn.example.org/tex.js",
        "//fonts.example.org/a.css",
        "http://example.org/x.png",
    ]


FIGURE_IN_REPORT = re.compile(
    r'<figure><img alt="([^"]*)" src="[^"]*"><figcaption>.*?<a href="figures/([^"/]+)\.png"',
    re.S,
)
FIGURE_IN_GALLERY = re.compile(
    r'<img alt="([^"]*)" src="([^"]*)" />\s*<figcaption>\s*<p>(.*?)</p>', re.S
)


def _text(markup: str) -> str:
    """The text a reader sees, without the tags and Sphinx's permalink."""
    markup = re.sub(r'<a class="headerlink".*?</a>', "", markup, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", markup)).split())


def test_the_gallery_shows_every_figure_of_the_demo_report(built):
    site, report = built
    page = (site / "gallery.html").read_text(encoding="utf-8")
    captions = {
        stem: html.unescape(alt)
        for alt, stem in FIGURE_IN_REPORT.findall(
            (report / "report.html").read_text(encoding="utf-8")
        )
    }
    shown = {}
    for alt, src, caption in FIGURE_IN_GALLERY.findall(page):
        image = site / unquote(src)
        assert image.is_file(), src
        shown[image.stem] = (image.read_bytes(), html.unescape(alt), _text(caption))
    figures = sorted((report / "figures").glob("*.svg"))
    assert len(figures) >= 8
    assert sorted(shown) == [f.stem for f in figures]
    for figure in figures:
        data, alt, caption = shown[figure.stem]
        assert data == figure.read_bytes(), figure.name  # the report's file itself
        assert alt == caption == captions[figure.stem], figure.name


def test_the_gallery_shows_every_table_of_the_manuscript(built):
    site, report = built
    page = (site / "gallery.html").read_text(encoding="utf-8")
    tables = re.findall(r"<table[^>]*>\s*<caption>(.*?)</caption>(.*?)</table>", page, re.S)
    files = sorted(
        (p for p in (report / "manuscript").glob("table*.tex") if p.stem[5:].isdigit()),
        key=lambda p: int(p.stem[5:]),
    )
    assert len(files) >= 8
    titles = [
        re.search(r"\\caption\{(.*?)\}\n", f.read_text(encoding="utf-8")).group(1) for f in files
    ]
    assert [_text(caption) for caption, _ in tables] == [
        f"Table {k}: {title}" for k, title in enumerate(titles, start=1)
    ]
    assert all(body.count("<tr") >= 3 for _, body in tables)  # a head and rows


def test_every_markdown_page_and_notebook_is_a_page_of_the_site(site):
    sources = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts]
    sources = [p.relative_to(DOCS) for p in sources if p.name != "README.md"]
    sources += [Path("notebooks") / p.name for p in (ROOT / "notebooks").glob("*.ipynb")]
    missing = [str(s) for s in sources if not (site / s.with_suffix(".html")).is_file()]
    assert missing == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_its_api_entry(site, package):
    names = importlib.import_module(package).__all__
    page = (site / "api" / f"{package}.html").read_text(encoding="utf-8")
    anchors = set(ANCHOR.findall(page))
    assert [n for n in names if f"{package}.{n}" not in anchors] == []
    # the summary table at the top of the page lists each name once
    source = (DOCS / "api" / f"{package}.md").read_text(encoding="utf-8")
    table = source.split(".. autosummary::", 1)[1].split(".. automodule::", 1)[0].split()
    assert sorted(table) == sorted(names)


def test_readme_links_lead_to_files():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in MD_LINK.findall(text) if not urlsplit(t).scheme]
    assert targets, "README.md links no page of docs/"
    assert [t for t in targets if not (ROOT / t.split("#")[0]).exists()] == []


CHROMIUM = chromium()


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_a_browser_navigates_the_site_and_searches_it(site, tmp_path):
    browser = Browser(CHROMIUM, tmp_path / "profile")
    try:
        tab = Page(browser, 1280)
        tab.open(site / "index.html")
        for caption in ("Getting started", "Reliability, agreement, invariance", "surveys"):
            # follow the sidebar's link, as a reader clicks it
            href = tab.evaluate(
                "[...document.querySelectorAll('.wy-menu-vertical a')]"
                f".find(a => a.textContent.trim().startsWith({caption!r}))?.href ?? null"
            )
            assert href, f"no navigation link to {caption!r}"
            tab.open(Path(unquote(urlsplit(href).path)))
            assert caption.split(",")[0] in tab.evaluate("document.querySelector('h1').textContent")
            assert tab.errors() == []
        # the API page's formulas are typeset MathML, with nothing loaded
        assert (
            tab.evaluate(
                "[...document.querySelectorAll('math')].filter(m =>"
                " m.getBoundingClientRect().width > 0).length"
            )
            > 10
        )
        tab.open(site / "gallery.html")
        assert tab.errors() == []
        # every figure of the gallery is drawn: [images, images loaded with a size]
        drawn = tab.evaluate(
            "[document.images.length,"
            " [...document.images].filter(i => i.complete && i.naturalWidth > 0).length]"
        )
        assert drawn[0] >= 8 and drawn[1] == drawn[0], drawn
        tab.open(site / "search.html")
        tab.send("Page.navigate", url=(site / "search.html").as_uri() + "?q=Krippendorff")
        browser.wait_for("Page.loadEventFired")
        # the results are listed one by one: wait for the search's closing summary
        found = tab.evaluate(
            "new Promise(done => { const t0 = Date.now(); const poll = () => {"
            " const summary = document.querySelector('#search-results .search-summary');"
            " const over = summary && /found|did not match/i.test(summary.textContent);"
            " const hits = [...document.querySelectorAll('#search-results li a')];"
            " if (over || Date.now() - t0 > 20000) done(hits.map(a => a.href));"
            " else setTimeout(poll, 100); }; poll(); })"
        )
        assert any("guide/reliability.html" in hit for hit in found), found
    finally:
        browser.close()
