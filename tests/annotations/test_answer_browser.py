"""``cartoqa answer`` in headless Chromium against a real server (issue 33): a scripted
person answers 20 questions of every task the dataset has through the pages, by form and
by key, and the stored run scores exactly as the same answers stored by hand."""

from __future__ import annotations

import pytest

from annotations.answer import sitting_samples
from annotations.answer_forms import read_answer
from cartoqa.records import RunRecord
from cartoqa.scoring import score_samples
from cartoqa.stores import RunStore
from tests.annotations.answer_data import answer_server, human_store, typed
from tests.cartoqa.model_data import kinds_dataset

sync_api = pytest.importorskip("playwright.sync_api")


def _answer_page(page, sample) -> None:
    """Type ``sample``'s truth into its page and store it."""
    kind = page.locator("form#answer").get_attribute("data-form")
    fields = typed(sample)
    if kind == "choice":
        page.keyboard.press(fields["choice"].lower())  # answer.js: the letter's key
        return
    if kind == "yesno":
        page.keyboard.press(fields["yesno"][0])  # y or n
        return
    if kind == "route":
        legs = len([k for k in fields if k.startswith("action_")])
        for n in range(1, legs):  # the form without script: each "Add a leg" reloads it
            page.get_by_role("button", name="Add a leg").click()
            sync_api.expect(page.locator("li.leg")).to_have_count(n + 1)
        for k, v in fields.items():
            if k.startswith("action_"):
                page.locator(f"select[name={k}]").select_option(v)
            else:
                page.locator(f"[name={k}]").fill(v)
    else:
        for k, v in fields.items():
            page.locator(f"[name={k}]").fill(v)
    page.get_by_role("button", name="Store the answer").click()


def test_a_person_answers_20_questions_and_the_run_scores_as_stored_by_hand(browser, tmp_path):
    ds = kinds_dataset(tmp_path / "ds", copies=2)
    runs = tmp_path / "runs"
    chosen = sitting_samples(ds, n=20, seed=7)
    assert {s.task for s in chosen} == {s.task for s in ds}  # every task of the dataset
    by_id = {s.id: s for s in chosen}
    with answer_server(ds.path, runs, "ana", "--n", "20", "--seed", "7") as server:
        page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
        page.goto(server.url)
        assert "answered 0 / 20" in page.get_by_test_id("progress").inner_text()
        page.locator("#start").click()
        for n in range(20):
            page.wait_for_selector("form#answer")
            sid = page.url.split("/q/")[1].split("?")[0]
            assert page.get_by_test_id("timer").is_visible()
            _answer_page(page, by_id[sid])
            if n < 19:
                page.wait_for_url(lambda url, sid=sid: url.endswith(f"?done={sid}"))
                assert f"answered {n + 1} / 20" in page.get_by_test_id("progress").inner_text()
        page.wait_for_selector("#finished")
    stored = human_store(runs)
    assert sorted(r.sample_id for r in stored.records) == sorted(by_id)
    assert {r.model for r in stored.records} == {"human:ana"}

    with RunStore(tmp_path / "hand.jsonl") as hand:
        for s in chosen:
            text = read_answer(s, typed(s)).text
            hand.append(RunRecord(sample_id=s.id, model="human:ana", response=text))
        by_hand = {sid: r.response for sid, r in hand.latest().items()}
    in_browser = {sid: r.response for sid, r in stored.latest().items()}
    assert in_browser == by_hand
    got = score_samples(chosen, in_browser)
    want = score_samples(chosen, by_hand)
    assert got == want
    assert all(score.correct for rows in got.values() for _, score in rows)
