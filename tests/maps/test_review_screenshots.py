"""The review tool on real maps (Monaco, rendered as ``cartoqa build`` renders them), seen
in the tests' headless Chromium: the drawing of each sample loads, the list and a route
page are shot.  CARTOQA_SCREENSHOTS=FOLDER keeps the two shots there (docs/review.md's
docs/review-list.png and docs/review-sample.png are made this way)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from cartoqa.stores import load_dataset
from cartoqa.tasks import build_dataset
from tests.annotations.review_server import review_server

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def real(engine_for, tmp_path_factory):
    folder = tmp_path_factory.mktemp("review-real")
    build_dataset(
        folder / "ds",
        engine=engine_for("monaco.osm.pbf"),
        tasks=["srn", "mml", "stmf_count"],
        per_task=2,
        seed=11,
        progress=False,
    )
    return folder / "ds"


def test_the_review_tool_on_real_maps(real, tmp_path):
    from maps.browser import chromium_path

    shots = tmp_path / "shots"
    shots.mkdir()
    with review_server(real, "--reviewer", "ana") as srv, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(srv.url)
        page.keyboard.press("j")
        page.wait_for_selector("#accept")
        page.keyboard.press("a")  # one accepted, for the list to show a status
        page.wait_for_selector("#accept")
        page.goto(srv.base + "/")
        page.screenshot(path=shots / "review-list.png")
        samples = load_dataset(real).samples
        assert {s.task for s in samples} == {"srn", "mml", "stmf_count"}
        for s in samples:  # every drawing loads: the map and its panel
            page.goto(srv.base + f"/sample/{s.id}")
            page.wait_for_function("document.getElementById('drawing').complete")
            assert page.evaluate("document.getElementById('drawing').naturalWidth") > 1000, s.id
        srn = next(s.id for s in samples if s.task == "srn")
        page.goto(srv.base + f"/sample/{srn}")
        page.wait_for_function("document.getElementById('drawing').complete")
        page.screenshot(path=shots / "review-sample.png")
        browser.close()
    for name in ("review-list.png", "review-sample.png"):
        im = Image.open(shots / name).convert("L")
        lo, hi = im.getextrema()
        assert hi - lo > 100  # not blank
    keep = os.environ.get("CARTOQA_SCREENSHOTS")
    if keep:
        for name in ("review-list.png", "review-sample.png"):
            shutil.copy(shots / name, Path(keep) / name)
