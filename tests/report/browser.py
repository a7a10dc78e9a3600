"""Open a page in headless Debian Chromium (no downloaded browser) and collect console messages and errors."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium package)")


def open_page(path: Path, screenshot: Path, selectors: tuple[str, ...] = ()) -> dict:
    """Load a local HTML file in headless Chromium, save a full-page screenshot, and return the body text, the
    console messages, the page errors, and how many elements match each selector."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install .[test])")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            console, errors = [], []
            page.on("console", lambda m: console.append((m.type, m.text)))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(path.resolve().as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(screenshot), full_page=True)
            return {"text": page.inner_text("body"), "console": console, "errors": errors,
                    "counts": {s: page.locator(s).count() for s in selectors}}
        finally:
            browser.close()
