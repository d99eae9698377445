"""Headless Chromium over the DevTools Protocol, for the tests that open pages in a browser.

No driver and no download: the protocol runs over the ``--remote-debugging-pipe`` file
descriptors, so no websocket package is needed. Used by
tests/longitudinal/report/test_browser.py (the report) and tests/test_docs.py (the site).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

#: why a browser test is skipped where :func:`chromium` finds nothing
NO_CHROMIUM = "no Chromium or Chrome browser found (chromium, chromium-browser, google-chrome)"


def chromium() -> str | None:
    """Return the path of the system's Chromium or Chrome, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


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
