"""A real browser reads the HTML report: headless Chromium over the DevTools Protocol.

The reports of a small simulated study and of the hand-written study
tests/data/studies/declared/slider7 are loaded in the system's Chromium (no driver, no
download: the protocol runs over the ``--remote-debugging-pipe`` file descriptors, so no
websocket package is needed). Checked at a desktop (1280 px) and a phone (390 px) width:
no console error or uncaught exception, every image decodes, nothing is wider than the
page (a wide table scrolls inside its own wrapper), every section heading is reached from
the table of contents, and the page can be used from the keyboard (every link is reached
with Tab and shows a visible focus ring, the page declares its language, images have alt
text).

Skipped, with the reason, where no Chromium is installed.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from _chromium import NO_CHROMIUM, Browser, Page, chromium

from longitudinal.cli import main

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
WIDTHS = (1280, 390)


CHROMIUM = chromium()
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
    # the page is checked, not the 600-dpi files behind its images
    pytest.mark.usefixtures("figures_as_drafts"),
]


def _build(args: list[str]) -> None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(args) == 0


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    from longitudinal.simulate import simulate_study

    root = tmp_path_factory.mktemp("browser")
    study = simulate_study(root / "study", seed=11, n_participants=12)
    _build(["report", str(study), "--out", str(root / "simulated"), "--no-bayes"])
    _build(["report", str(SLIDER7), "--out", str(root / "slider7"), "--no-bayes"])
    return {
        "simulated": root / "simulated" / "report.html",
        "slider7": root / "slider7" / "report.html",
    }


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert CHROMIUM is not None
    chromium = Browser(CHROMIUM, tmp_path_factory.mktemp("chromium-profile"))
    yield chromium
    chromium.close()


@pytest.fixture(scope="module", params=[(r, w) for r in ("simulated", "slider7") for w in WIDTHS])
def page(request, reports, browser):
    name, width = request.param
    tab = Page(browser, width)
    tab.open(reports[name])
    tab.errors_on_load = tab.errors()
    tab.width = width
    yield tab
    browser.send("Target.closeTarget", targetId=tab.target)


def test_no_console_errors_or_exceptions(page):
    assert page.errors_on_load == []


def test_every_image_loads_and_has_alt_text(page):
    images = page.evaluate(
        "[...document.images].map(i => ({src: i.src.slice(0, 40), width: i.naturalWidth, "
        "complete: i.complete, alt: i.getAttribute('alt')}))"
    )
    assert images, "the report shows no figure"
    for image in images:
        assert image["complete"] and image["width"] > 0, image
        assert image["alt"] and image["alt"].strip(), image


def test_nothing_is_wider_than_the_page(page):
    # every table and figure lies within the viewport; a table wider than the page scrolls
    # inside a wrapper that does not
    outside = page.evaluate(
        """[...document.querySelectorAll('table, figure, img, pre, nav, p, h1, h2, h3')]
             .flatMap(e => {
               const box = (e.closest('.table-wrap') || e).getBoundingClientRect();
               const w = document.documentElement.clientWidth;
               return box.left < -0.5 || box.right > w + 0.5
                 ? [`${e.tagName}.${e.className} ${box.left}..${box.right} > ${w}: `
                    + e.textContent.slice(0, 60)] : [];
             })"""
    )
    assert outside == []
    widths = page.evaluate(
        "({scroll: document.documentElement.scrollWidth,"
        "  client: document.documentElement.clientWidth})"
    )
    assert widths["client"] == page.width
    assert widths["scroll"] <= widths["client"], widths


def test_every_wide_table_scrolls_inside_a_wrapper(page):
    unwrapped = page.evaluate(
        """[...document.querySelectorAll('table')].filter(t => {
             const wrap = t.closest('.table-wrap');
             return !wrap || getComputedStyle(wrap).overflowX !== 'auto';
           }).length"""
    )
    assert unwrapped == 0


def test_every_section_heading_is_in_the_table_of_contents(page):
    nav = page.evaluate("[...document.querySelectorAll('nav a')].map(a => a.getAttribute('href'))")
    assert nav and all(href.startswith("#") for href in nav), nav
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert [href for href in nav if href[1:] not in ids] == []
    # each h2 is reached from the contents: it has an id, or is the heading of a section that has
    headings = page.evaluate(
        """[...document.querySelectorAll('h2')].map(h =>
             h.id || (h.parentElement.tagName === 'SECTION' ? h.parentElement.id : ''))"""
    )
    assert headings and "" not in headings
    assert sorted(headings) == sorted(href[1:] for href in nav)


def test_the_page_declares_its_language(page):
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.evaluate("document.title").strip()


def test_every_link_is_reached_with_tab_and_shows_focus(page):
    links = page.evaluate(
        """(() => { document.querySelectorAll('a[href]').forEach((a, i) => a.dataset.n = i);
                    return document.querySelectorAll('a[href]').length; })()"""
    )
    assert links > 0
    assert page.evaluate(
        "document.querySelectorAll('[tabindex]:not([tabindex=\"-1\"])')"
        ".length === 0 || [...document.querySelectorAll('[tabindex]')]"
        ".every(e => e.tabIndex <= 0)"
    )
    assert page.evaluate("[...document.querySelectorAll('a[href]')].every(a => a.tabIndex >= 0)")
    page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    # Tab walks the links in order; a table that scrolls sideways may be a tab stop as well
    reached = set()
    unringed = []
    for _ in range(3 * links):
        page.press_tab()
        focused = page.evaluate(
            """(() => { const a = document.activeElement; const s = getComputedStyle(a);
                        const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
                                     || s.boxShadow !== 'none';
                        return {tag: a.tagName, n: a.dataset.n, ring,
                                visible: a.matches(':focus-visible')}; })()"""
        )
        if focused["tag"] == "BODY":
            break
        if focused.get("n") is not None:
            reached.add(int(focused["n"]))
        if not (focused["ring"] and focused["visible"]):
            unringed.append(focused)
        if len(reached) == links:
            break
    assert sorted(reached) == list(range(links))
    assert unringed == []
