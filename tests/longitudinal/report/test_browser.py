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
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from longitudinal.cli import main

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
WIDTHS = (1280, 390)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium or Chrome browser found (chromium, chromium-browser, google-chrome)",
)


class Browser:
    """Headless Chromium driven over ``--remote-debugging-pipe`` (CDP as NUL-ended JSON)."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies and events on fd 4
        self._process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events read meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        """Wait for an event (or take it from those already read)."""
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            event = self._read()
            if event.get("method") == method:
                return event
            if "method" in event:
                self.events.append(event)
        raise TimeoutError(method)


class Page:
    """One tab of the browser at a given viewport width."""

    def __init__(self, browser: Browser, width: int) -> None:
        self.browser = browser
        self.target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = browser.send("Target.attachToTarget", targetId=self.target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=900,
            deviceScaleFactor=1,
            mobile=width < 600,
        )

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, self.session, **params)

    def open(self, path: Path) -> None:
        self.browser.events.clear()
        self.send("Page.navigate", url=path.resolve().as_uri())
        self.browser.wait_for("Page.loadEventFired")
        # images embedded as data URIs decode asynchronously: wait for all of them
        self.evaluate(
            "Promise.all([...document.images].map(i => i.decode().catch(() => null)))"
            ".then(() => true)"
        )

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def press_tab(self) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key="Tab",
                code="Tab",
                windowsVirtualKeyCode=9,
                nativeVirtualKeyCode=9,
            )

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors since the page opened."""
        found = []
        for event in self.browser.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled" and params["type"] in (
                "error",
                "assert",
            ):
                found.append(" ".join(str(a.get("value", a)) for a in params["args"]))
            elif event["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"]["text"])
        return found


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
