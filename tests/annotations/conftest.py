"""Fixtures the review and answer tests share."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def browser():
    """The headless Chromium the browser tests drive (Debian's, through Playwright, as the
    map stack finds it); they skip where Playwright or Chromium is not installed."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from cartoqa.errors import RenderStackError
    from maps.browser import chromium_path

    try:
        path = chromium_path()
    except RenderStackError as exc:
        pytest.skip(str(exc))
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()
