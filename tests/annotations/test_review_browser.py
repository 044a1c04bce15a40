"""The review tool in headless Chromium (the project's own, ``maps.browser.chromium_path``),
driven by Playwright against a real server: a review by keyboard, corrections of a route
and a count, a rejection, the state after a reload, hostile names shown as text, two
reviewers on one sample, and a server killed and started again."""

from __future__ import annotations

import signal

import pytest

from annotations.decisions import DecisionStore
from cartoqa.stores import load_dataset
from tests.annotations.review_data import ATTR, SCRIPT, XSS, hostile_dataset
from tests.annotations.review_server import review_server
from tests.cartoqa.model_data import kinds_dataset

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def kinds(tmp_path):
    kinds_dataset(tmp_path / "ds")
    return tmp_path / "ds"


def store_of(folder):
    return DecisionStore.open(folder / "review.sqlite", load_dataset(folder))


def new_page(browser, **options):
    context = browser.new_context(viewport={"width": 1400, "height": 950}, **options)
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    return page


def sample_id(page) -> str:
    return page.get_by_test_id("sample-id").inner_text()


def test_a_review_by_keyboard_end_to_end(browser, kinds):
    with review_server(kinds, "--reviewer", "ana") as srv:
        page = new_page(browser)
        page.goto(srv.url)
        assert "done 0 / 14" in page.get_by_test_id("progress").inner_text()
        page.keyboard.press("j")  # the first sample to review
        page.wait_for_url("**/sample/distance-000")
        page.keyboard.press("a")
        page.wait_for_url("**/sample/stmf_count-000*")
        assert (
            "distance-000: accept by ana stored (version 1)"
            in page.get_by_role("status").inner_text()
        )

        # correct the count: e goes to the first answer field, Escape leaves it
        page.keyboard.press("e")
        page.keyboard.press("Control+A")
        page.keyboard.type("5")
        page.keyboard.press("Escape")
        page.keyboard.press("2")  # reason 2: wrong road or feature name
        page.keyboard.press("c")
        page.wait_for_url("**/sample/rle-000*")

        # reject with reason 8 (image broken or blank)
        page.keyboard.press("8")
        page.keyboard.press("r")
        page.wait_for_url("**/sample/stmf_presence-000*")

        # back, twice: the count is corrected and shows 5
        page.keyboard.press("k")
        page.wait_for_url("**/sample/rle-000*")
        assert page.get_by_test_id("status").inner_text() == "rejected"
        page.keyboard.press("ArrowLeft")
        page.wait_for_url("**/sample/stmf_count-000*")
        assert page.get_by_test_id("status").inner_text() == "corrected"
        assert page.locator("#f-value").input_value() == "5"
        assert "correct by ana" in page.get_by_test_id("history").inner_text()

        # correct a route: steps are lines of "action | road"
        page.goto(srv.base + "/sample/srn-000")
        page.keyboard.press("e")
        page.keyboard.press("Control+A")
        page.keyboard.type("turn right | Quai Antoine 1er\ncontinue straight | Rue Grimaldi")
        page.keyboard.press("Escape")
        page.keyboard.press("c")
        page.wait_for_url("**/sample/route_geometry_indices-000*")

        # a reload shows the same state, page by page and in the list
        page.goto(srv.base + "/sample/srn-000")
        page.reload()
        assert page.get_by_test_id("status").inner_text() == "corrected"
        assert page.locator("#f-steps").input_value() == (
            "turn right | Quai Antoine 1er\ncontinue straight | Rue Grimaldi"
        )
        page.goto(srv.base + "/")
        assert "done 4 / 14" in page.get_by_test_id("progress").inner_text()
        table = page.get_by_test_id("samples").inner_text()
        for sid, status in [("distance-000", "accepted"), ("rle-000", "rejected")]:
            assert any(sid in row and status in row for row in table.splitlines())
        assert page.dialogs == []  # type: ignore[attr-defined]

    with store_of(kinds) as store:
        got = [(d.sample_id, d.verdict, d.reviewer, d.reason) for d in store.all()]
        assert got == [
            ("distance-000", "accept", "ana", ""),
            ("stmf_count-000", "correct", "ana", "wrong road or feature name"),
            ("rle-000", "reject", "ana", "image broken or blank"),
            ("srn-000", "correct", "ana", ""),
        ]
        ds = load_dataset(kinds)
        by = ds.by_id()
        assert store.effective(by["stmf_count-000"]).ground_truth.value == 5
        assert store.effective(by["srn-000"]).ground_truth.steps == [
            "blue",
            "turn right",
            "Quai Antoine 1er",
            "continue straight",
            "Rue Grimaldi",
            "red",
        ]
        assert store.effective(by["rle-000"]) is None


def test_filters_narrow_the_list_and_the_next_sample(browser, kinds):
    with review_server(kinds, "--reviewer", "ana") as srv:
        page = new_page(browser)
        page.goto(srv.url)
        page.select_option("select[name=task]", "mml")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**/?task=mml*")
        assert "1 samples match" in page.content()
        page.keyboard.press("j")
        page.wait_for_url("**/sample/mml-000?task=mml")
        page.keyboard.press("a")  # no next mml: back to the filtered list
        page.wait_for_url("**/?task=mml&done=*")
        page.select_option("select[name=task]", "")
        page.select_option("select[name=status]", "accepted")
        page.get_by_role("button", name="Filter").click()
        assert "1 samples match" in page.content()
        page.select_option("select[name=status]", "")
        page.select_option("select[name=not_reviewer]", "ana")
        page.get_by_role("button", name="Filter").click()
        assert "13 samples match" in page.content()
        assert "mml-000" not in page.get_by_test_id("samples").inner_text()


def test_hostile_names_questions_and_reviewers_show_as_text(browser, tmp_path):
    hostile_dataset(tmp_path / "ds")
    with review_server(tmp_path / "ds", "--reviewer", XSS) as srv:
        # bypass_csp: the escaping itself is tested, not the Content-Security-Policy behind it
        page = new_page(browser, bypass_csp=True)
        page.goto(srv.url)
        page.goto(srv.base + "/sample/mml-000")
        assert page.locator("#f-road_1").input_value() == XSS
        assert page.locator("#f-road_2").input_value() == f"Rue {ATTR}"
        assert SCRIPT in page.get_by_test_id("question").inner_text()
        page.fill("#reason_text", SCRIPT)
        page.keyboard.press("Escape")
        page.keyboard.press("r")
        page.wait_for_url("**/sample/srn-000*")
        assert XSS in page.locator("#f-steps").input_value()
        for path in ("/", "/sample/mml-000", "/sample/stmf_names-000"):
            page.goto(srv.base + path)
            assert page.locator("img[src=x], svg, script:not([src])").count() == 0, path
            assert page.evaluate("window.__pwned") is None
        page.goto(srv.base + "/sample/mml-000")
        history = page.get_by_test_id("history").inner_text()
        assert f"by {XSS}" in history and SCRIPT in history
        page.goto(srv.base + "/")
        assert f"Nice {ATTR}" in page.get_by_test_id("samples").inner_text()
        assert page.dialogs == []  # type: ignore[attr-defined]


def test_a_traversal_through_the_browser_gets_nothing(browser, kinds, tmp_path):
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    with review_server(kinds) as srv:
        page = new_page(browser)
        page.goto(srv.url)
        for path in ("/images/%2e%2e/%2e%2e/secret.txt", "/images/..%2f..%2fsecret.txt"):
            r = page.goto(srv.base + path)
            assert r.status in (403, 404) and "TOP SECRET" not in page.content()
        other = new_page(browser)  # no token: nothing at all
        r = other.goto(srv.origin + "/sample/mml-000")
        assert r.status == 403 and "Rue Grimaldi" not in other.content()


def test_two_reviewers_on_one_sample_the_second_is_told_and_nothing_is_lost(browser, kinds):
    with review_server(kinds) as srv:
        ana, bo = new_page(browser), new_page(browser)
        for page, name in ((ana, "ana"), (bo, "bo")):
            page.goto(srv.url)
            page.goto(srv.base + "/sample/mml-000")
            page.fill("#reviewer", name)
        ana.fill("#f-road_2", "Avenue de la Costa")
        ana.click("#correct")
        ana.wait_for_url("**/sample/srn-000*")

        bo.fill("#f-road_1", "Rue Grimaldi Nord")  # bo still looks at version 0
        bo.click("#correct")
        conflict = bo.get_by_test_id("conflict").inner_text()
        assert "Changed by ana while you looked" in conflict and "Avenue de la Costa" in conflict
        assert "not stored" in bo.get_by_test_id("error").inner_text()
        # bo's edit is still in the form, now on version 1
        assert bo.locator("#f-road_1").input_value() == "Rue Grimaldi Nord"
        assert bo.locator("input[name=seen]").input_value() == "1"
        bo.fill("#f-road_2", "Avenue de la Costa")
        bo.click("#correct")
        bo.wait_for_url("**/sample/srn-000*")
    with store_of(kinds) as store:
        got = [
            (d.reviewer, d.version, d.truth_after["road_1"], d.truth_after["road_2"])
            for d in store.all()
        ]
        assert got == [
            ("ana", 1, "Rue Grimaldi", "Avenue de la Costa"),
            ("bo", 2, "Rue Grimaldi Nord", "Avenue de la Costa"),
        ]


def test_a_killed_server_started_again_has_every_decision(browser, kinds):
    with review_server(kinds, "--reviewer", "ana") as srv:
        page = new_page(browser)
        page.goto(srv.url)
        page.keyboard.press("j")
        for _ in range(3):
            page.wait_for_selector("#accept")
            url = page.url
            page.keyboard.press("a")
            page.wait_for_url(lambda u, url=url: u != url)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
    with review_server(kinds) as again:
        page = new_page(browser)
        page.goto(again.url)
        assert "done 3 / 14" in page.get_by_test_id("progress").inner_text()
        page.goto(again.base + "/sample/rle-000")
        assert page.get_by_test_id("status").inner_text() == "accepted"
    with store_of(kinds) as store:
        assert [d.sample_id for d in store.all()] == ["distance-000", "stmf_count-000", "rle-000"]


def test_a_feature_table_has_room_to_read_and_edit(browser, tmp_path):
    """Finding 18: feature tables were cramped (names boxes a few words wide)."""
    from tests.annotations.review_data import table_dataset

    table_dataset(tmp_path / "ds")
    with review_server(tmp_path / "ds", "--reviewer", "ana") as srv:
        page = new_page(browser)
        page.goto(srv.base + "/sample/mtmf-0000")
        names = page.locator("textarea[name='table.restaurant.names']").bounding_box()
        count = page.locator("input[name='table.restaurant.count']").bounding_box()
        table = page.locator("table.grouped").bounding_box()
        assert names["width"] >= 240, names  # "The Long Named Restaurant Number 0" fits a line
        assert count["width"] >= 40, count
        width = page.evaluate("document.documentElement.clientWidth")
        assert table["x"] + table["width"] <= width  # nothing past the window's edge
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        line = page.evaluate(
            "(() => { const t = document.querySelector("
            "\"textarea[name='table.restaurant.names']\");"
            " return t.scrollWidth <= t.clientWidth; })()"
        )
        assert line, "a name is wider than its box"


def test_a_name_another_local_page_writes_is_not_the_reviewer(browser, kinds):
    """Finding 16: a page from another port of 127.0.0.1 set the reviewer's name (browsers
    let it write a cookie that every port receives)."""
    import http.server
    import threading

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = (
                b"<!doctype html><script>document.cookie = "
                b"'cartoqa_reviewer=mallory; path=/; SameSite=Lax';</script>evil"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        with review_server(kinds, "--reviewer", "ana") as srv:
            page = new_page(browser)
            page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
            cookies = {c["name"]: c["value"] for c in page.context.cookies()}
            assert cookies.get("cartoqa_reviewer") == "mallory"  # the browser took it
            page.goto(srv.base + "/sample/mml-000")
            assert page.locator("#reviewer").input_value() == "ana"
            page.fill("#reviewer", "bo")
            page.keyboard.press("Escape")
            page.keyboard.press("a")
            page.wait_for_url("**/sample/srn-000*")
            assert page.locator("#reviewer").input_value() == "bo"  # the tool's own cookie
            page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")  # written again
            page.goto(srv.base + "/sample/srn-000")
            assert page.locator("#reviewer").input_value() == "bo"
    finally:
        evil.shutdown()
        evil.server_close()
    with store_of(kinds) as store:
        assert [d.reviewer for d in store.all()] == ["bo"]
