"""The documentation site builds cleanly and every link inside it leads somewhere.

The site (docs/, ``make docs``) is built once per run with Sphinx, warnings as errors, on one
process, offline (no intersphinx, the notebooks rendered as stored, never executed: that is
tests/test_notebooks.py's work). Then, on the built HTML:

* every internal link and image (``href``/``src`` that is not a URL) names a file of the site,
  and its ``#fragment`` an id in that file;
* every public name of ``surveys``, ``models`` and ``longitudinal`` (their ``__all__``) has its
  entry on its API page and a row in that page's summary table;
* the relative links of README.md lead to files that exist.

With ``EMPATHIC_DOCS_SITE`` set to a built site (``make docs`` builds ``docs/_build/html`` and
sets it), the checks read that site instead of building one. Skipped, with the reason, where
the ``docs`` extra is not installed (``make test`` installs it from the lock). A real browser
then opens the site, follows its navigation and uses its search; skipped where no Chromium is
installed.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from _chromium import NO_CHROMIUM, Browser, Page, chromium

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGES = ("surveys", "models", "longitudinal")
LINK = re.compile(r"""\b(?:href|src)=["']([^"']*)["']""")
ANCHOR = re.compile(r"""\bid=["']([^"']*)["']""")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")

for _needed in ("sphinx", "myst_nb", "sphinx_rtd_theme"):
    pytest.importorskip(_needed, reason=f"{_needed} is not installed (the `docs` extra)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site: EMPATHIC_DOCS_SITE, or one built here with warnings as errors."""
    given = os.environ.get("EMPATHIC_DOCS_SITE")
    if given:
        return Path(given).resolve()
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-j", "1"]
        + ["-b", "html", "-d", str(out / ".doctrees"), str(DOCS), str(out / "html")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr[-5000:]
    return out / "html"


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


def test_every_internal_link_resolves(site):
    ids: dict[Path, set[str]] = {}
    broken = []
    pages = _pages(site)
    assert len(pages) > 20
    for page in pages:
        text = page.read_text(encoding="utf-8")
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
            # the one resource from the network is MathJax (API pages with formulas), which an
            # offline machine cannot resolve
            offline = "Failed to load resource: net::ERR_NAME_NOT_RESOLVED"
            assert [e for e in tab.errors() if e != offline] == []
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
