"""The review tool's server over real HTTP (``cartoqa review DATASET``, a uvicorn process):
the token on every request, images only from images/, forms from this site only, stale
and bad decisions refused with nothing stored, and nothing written but the store and the
export folder."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest

from annotations.decisions import DecisionStore
from cartoqa.stores import load_dataset
from tests.annotations.review_data import hostile_dataset
from tests.annotations.review_server import review_server
from tests.cartoqa.model_data import kinds_dataset


@pytest.fixture
def kinds(tmp_path):
    kinds_dataset(tmp_path / "ds")
    return tmp_path / "ds"


def form(**fields: str) -> str:
    return urlencode(fields)


def decisions(folder: Path) -> list:
    p = folder / "review.sqlite"
    if not p.exists():
        return []
    with DecisionStore.open(p, load_dataset(folder)) as s:
        return s.all()


def test_every_request_needs_the_token(kinds):
    with review_server(kinds, "--reviewer", "ana") as srv:
        t = srv.token
        paths = ["/", "/sample/mml-000", "/drawing/mml-000.png", "/images/mml-000.png"]
        wrong = [
            "",
            "/x",
            f"/{t[:-1]}",
            f"/{t}x",
            f"/{t.upper()}",
            f"/%2F{t}",
            f"/x/{t}",
        ]
        for prefix in wrong:
            for path in [*paths, "/static/review.js", "/docs", "/openapi.json"]:
                for method in ("GET", "HEAD", "POST", "OPTIONS", "DELETE"):
                    status, _, body = srv.request(method, prefix + path, token=False)
                    assert status == 403, (method, prefix + path)
                    assert b"Rue Grimaldi" not in body
        for headers in ({"X-Cartoqa-Token": t}, {"Cookie": f"token={t}"}, {"Authorization": t}):
            assert srv.request("GET", "/sample/mml-000", headers=headers, token=False)[0] == 403
        assert srv.request("GET", f"/?token={t}", token=False)[0] == 403
        for path in paths:
            assert srv.request("GET", path)[0] == 200, path
        assert (
            srv.request("GET", "/docs")[0] == 404 and srv.request("GET", "/openapi.json")[0] == 404
        )
        # a decision without the token is refused and stores nothing
        status, _, _ = srv.request(
            "POST", "/sample/mml-000", form(verdict="accept", seen="0", reviewer="x"), token=False
        )
        assert status == 403 and decisions(kinds) == []


def test_the_token_is_in_the_path_and_in_no_cookie(kinds):
    """Browsers send a cookie for 127.0.0.1 to every port of it: no cookie holds the token."""
    with review_server(kinds) as srv:
        status, headers, _ = srv.request("GET", "", token=True)
        assert status == 307 and headers["location"] == f"/{srv.token}/"
        status, headers, body = srv.request("GET", "/?task=srn")
        assert status == 200 and b"srn-000" in body and b"mml-000" not in body
        assert "set-cookie" not in headers
        assert f'href="/{srv.token}/sample/srn-000?task=srn"'.encode() in body
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "same-origin"
        status, headers, _ = srv.request(
            "POST", "/sample/mml-000", form(verdict="accept", seen="0", reviewer="李小龙 Łukasz")
        )
        name_value, *attributes = headers["set-cookie"].split(";")
        assert status == 303 and srv.token not in name_value  # only the reviewer's name
        assert f" Path=/{srv.token}" in attributes  # sent back to this tool only
        assert headers["location"].startswith(f"/{srv.token}/sample/srn-000?done=mml-000")
        _, _, body = srv.request("GET", "/sample/srn-000?done=mml-000")
        assert "mml-000: accept by 李小龙 Łukasz stored (version 1)" in body.decode()
        _, _, body = srv.request("GET", "/?done=anything+you+like")
        assert b"anything you like" not in body  # the message comes from the store


def test_only_files_inside_images_are_served(kinds, tmp_path):
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", kinds / "images" / "link.png")
    os.symlink(kinds / "manifest.json", kinds / "images" / "manifest-link.png")
    (kinds / "images" / "sub").mkdir()
    attempts = [
        "/images/../manifest.json",
        "/images/..%2fmanifest.json",
        "/images/%2e%2e/manifest.json",
        "/images/%2e%2e%2fsamples.jsonl",
        "/images/sub/../../manifest.json",
        "/images/sub/%2e%2e/%2e%2e/samples.jsonl",
        "/images/../../secret.txt",
        "/images/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/images//etc/passwd",
        "/images/%2fetc%2fpasswd",
        "/images/..%5cmanifest.json",
        "/images/mml-000.png%00.txt",
        "/images/link.png",
        "/images/manifest-link.png",
        "/images/sub",
        "/images/",
        "/images/nothing.png",
        "/static/../manifest.json",
        "/static/%2e%2e%2fapp.py",
        "/drawing/..%2f..%2fmanifest.json.png",
    ]
    manifest = (kinds / "manifest.json").read_bytes()[:40]
    with review_server(kinds) as srv:
        for path in attempts:
            status, _, body = srv.request("GET", path)
            assert status in (400, 404), (path, status)
            assert b"TOP SECRET" not in body and manifest not in body and b"root:" not in body
        status, headers, body = srv.request("GET", "/images/mml-000.png")
        assert status == 200 and headers["content-type"] == "image/png"
        assert body == (kinds / "images" / "mml-000.png").read_bytes()


def test_a_sample_whose_image_links_out_is_not_drawn(tmp_path):
    hostile_dataset(tmp_path / "ds")
    (tmp_path / "secret.png").write_bytes(b"TOP SECRET")
    img = tmp_path / "ds" / "images" / "mml-000.png"
    img.unlink()
    os.symlink(tmp_path / "secret.png", img)
    with review_server(tmp_path / "ds") as srv:
        status, _, body = srv.request("GET", "/drawing/mml-000.png")
        assert status == 404 and b"TOP SECRET" not in body
        assert srv.request("GET", "/drawing/srn-000.png")[0] == 200


def test_hostile_names_come_back_escaped(tmp_path):
    hostile_dataset(tmp_path / "ds")
    with review_server(tmp_path / "ds", "--reviewer", "<b>ana</b>") as srv:
        for path in ("/", "/sample/mml-000", "/sample/srn-000", "/sample/stmf_names-000"):
            status, _, body = srv.request("GET", path)
            html = body.decode()
            assert status == 200
            assert "<img src=x" not in html and "<script>window" not in html and "<svg" not in html
            assert "&lt;img src=x onerror=alert(1)&gt;" in html or "&lt;script&gt;" in html
        body = srv.request("GET", "/sample/mml-000")[2].decode()
        assert "&lt;b&gt;ana&lt;/b&gt;" in body and "<b>ana" not in body


def test_a_form_from_another_site_is_refused(kinds):
    with review_server(kinds) as srv:
        for origin in ("http://evil.example", "null", "http://127.0.0.1:1"):
            status, _, _ = srv.request(
                "POST",
                "/sample/mml-000",
                form(verdict="accept", seen="0", reviewer="x"),
                headers={"Origin": origin},
            )
            assert status == 403, origin
        assert decisions(kinds) == []
        host = srv.origin.split("//")[1]
        status, _, _ = srv.request(
            "POST",
            "/sample/mml-000",
            form(verdict="accept", seen="0", reviewer="x"),
            headers={"Origin": srv.origin, "Host": host},
        )
        assert status == 303 and [d.verdict for d in decisions(kinds)] == ["accept"]


def test_bad_decisions_are_refused_with_the_reason_and_store_nothing(kinds):
    count = {"verdict": "correct", "seen": "0", "reviewer": "ana", "optional": "0"}
    cases = [
        ("stmf_count-000", {**count, "value": "3"}, 422, "Nothing was changed"),
        ("stmf_count-000", {**count, "verdict": "accept", "value": "4"}, 422, "press correct"),
        ("stmf_count-000", {**count, "value": "four"}, 422, "is not a number"),
        ("stmf_count-000", {**count, "value": "4", "reviewer": "  "}, 422, "your name"),
        ("stmf_count-000", {**count, "verdict": "reject", "value": "3"}, 422, "why it is rejected"),
        ("stmf_count-000", {**count, "verdict": "maybe"}, 400, "Verdict"),
        ("stmf_count-000", {**count, "seen": "x"}, 400, "lost the version"),
        ("nothing-000", count, 404, "not a sample"),
    ]
    with review_server(kinds) as srv:
        for sid, fields, status, says in cases:
            got, _, body = srv.request("POST", f"/sample/{sid}", form(**fields))
            assert got == status and says in body.decode(), (fields, body[:2000])
        assert decisions(kinds) == []
        got, _, _ = srv.request("POST", "/sample/mml-000", "x=" + "a" * 1_100_000)
        assert got == 413
        # the form keeps what was typed, for the reviewer to fix
        _, _, body = srv.request(
            "POST", "/sample/stmf_count-000", form(**{**count, "value": "four"})
        )
        assert 'value="four"' in body.decode()
        got, headers, _ = srv.request(
            "POST", "/sample/stmf_count-000", form(**{**count, "value": "4"})
        )
        assert got == 303 and headers["location"].startswith(f"/{srv.token}/sample/rle-000?done=")
    (d,) = decisions(kinds)
    assert (d.verdict, d.truth_after["value"], d.reviewer) == ("correct", 4, "ana")


def test_a_stale_decision_is_refused_across_two_servers_on_one_store(kinds):
    with review_server(kinds) as one, review_server(kinds) as two:
        seen = form(verdict="accept", seen="0", reviewer="ana")
        assert one.request("POST", "/sample/mml-000", seen)[0] == 303
        late = form(verdict="correct", seen="0", reviewer="bo", road_1="Rue X", road_2="Rue Y")
        status, _, body = two.request("POST", "/sample/mml-000", late)
        html = body.decode()
        assert status == 409 and "ana" in html and "was not stored" in html
        assert 'value="Rue X"' in html and 'value="1"' in html  # bo's edit, on version 1
        again = form(verdict="correct", seen="1", reviewer="bo", road_1="Rue X", road_2="Rue Y")
        assert two.request("POST", "/sample/mml-000", again)[0] == 303
    assert [(d.reviewer, d.version) for d in decisions(kinds)] == [("ana", 1), ("bo", 2)]


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_the_server_writes_only_its_store_and_the_export_folder(kinds, tmp_path):
    before = tree(tmp_path)
    out = tmp_path / "reviewed"
    with review_server(kinds, "--export-to", str(out)) as srv:
        for sid in ("mml-000", "srn-000", "rle-000"):
            srv.request("GET", f"/sample/{sid}")
            srv.request("GET", f"/drawing/{sid}.png")
        assert (
            srv.request("POST", "/sample/mml-000", form(verdict="accept", seen="0", reviewer="a"))[
                0
            ]
            == 303
        )
        reject = form(verdict="reject", seen="0", reviewer="a", reason="image broken or blank")
        assert srv.request("POST", "/sample/rle-000", reject)[0] == 303
        status, headers, _ = srv.request("POST", "/export")
        assert status == 303 and headers["location"] == f"/{srv.token}/?exported=1"
        status, _, body = srv.request("GET", headers["location"], token=False)
        assert status == 200 and b"samples written to" in body
    after = tree(tmp_path)
    changed = {p for p in after if before.get(p) != after[p]}
    assert {p for p in changed if not p.startswith("reviewed/")} <= {
        "ds/review.sqlite",
        "ds/review.sqlite-wal",
        "ds/review.sqlite-shm",
        ".reviewed.lock",  # the export's own lock, beside the folder it writes
    }
    assert set(before) <= set(after)  # nothing removed
    exported = load_dataset(out)
    assert "rle-000" not in exported.by_id() and exported.manifest.review["accepted"] == 1
    assert json.loads((out / "review.jsonl").read_text().splitlines()[0])["sample_id"] == "mml-000"


def test_sharing_on_the_network_warns_and_the_address_carries_a_token(kinds):
    with review_server(kinds, "--host", "0.0.0.0") as srv:
        text = "".join(srv.lines)
        assert "warning: serving on 0.0.0.0" in text and "anyone" in text
        assert len(srv.token) >= 32
    with review_server(kinds) as srv:
        assert "warning" not in "".join(srv.lines) and srv.url.startswith("http://127.0.0.1:")
        assert srv.url.endswith(f"/{srv.token}/")


def test_a_busy_port_and_a_store_of_another_dataset_are_named(kinds, tmp_path):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    kinds_dataset(tmp_path / "other", copies=2)
    runner = CliRunner()
    r = runner.invoke(
        app, ["review", str(kinds), "--store", str(tmp_path / "s.sqlite"), "--port", "0", "--help"]
    )
    assert r.exit_code == 0 and "--export-to" in r.output
    with DecisionStore.open(tmp_path / "s.sqlite", load_dataset(tmp_path / "other")):
        pass
    r = runner.invoke(app, ["review", str(kinds), "--store", str(tmp_path / "s.sqlite")])
    assert r.exit_code == 2 and "another dataset" in r.output
    with review_server(kinds) as srv:
        port = srv.origin.rsplit(":", 1)[1]
        r = runner.invoke(app, ["review", "serve", str(kinds), "--port", port])
        assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.output


def seen_in(body: bytes) -> str:
    m = re.search(rb'name="seen" value="(-?\d+)"', body)
    assert m, body[:500]
    return m.group(1).decode()


def test_a_refused_form_keeps_its_version_so_a_later_resubmit_is_still_checked(kinds):
    with review_server(kinds) as srv:
        bad = form(verdict="correct", seen="0", reviewer="ana", road_1="  ", road_2="Rue B")
        status, _, body = srv.request("POST", "/sample/mml-000", bad)
        assert status == 422 and seen_in(body) == "0"  # made on version 0, still
        bo = form(verdict="correct", seen="0", reviewer="bo", road_1="Rue Grimaldi", road_2="Rue C")
        assert srv.request("POST", "/sample/mml-000", bo)[0] == 303
        fixed = form(verdict="correct", seen="0", reviewer="ana", road_1="Rue A", road_2="Rue B")
        status, _, body = srv.request("POST", "/sample/mml-000", fixed)
        assert status == 409 and b"Rue C" in body and seen_in(body) == "1"
        # an accept after a refused form is checked the same way
        status, _, _ = srv.request(
            "POST", "/sample/mml-000", form(verdict="accept", seen="0", reviewer="ana")
        )
        assert status == 409
    assert [(d.reviewer, d.truth_after["road_2"]) for d in decisions(kinds)] == [("bo", "Rue C")]


def test_a_conflict_keeps_only_the_fields_this_reviewer_edited(kinds):
    with review_server(kinds) as srv:
        bo = {"verdict": "correct", "seen": "0", "reviewer": "bo", "table.atm.count": "5"}
        assert srv.request("POST", "/sample/mtmf-000", form(**bo))[0] == 303
        # ana loaded version 0 and changed the bank count only: her form holds atm's old 0
        ana = {
            "verdict": "correct",
            "seen": "0",
            "reviewer": "ana",
            "table.bank.count": "3",
            "table.atm.count": "0",
            "table.bank.names": "Nordea\n(no name)",
        }
        status, _, body = srv.request("POST", "/sample/mtmf-000", form(**ana))
        html = body.decode()
        assert status == 409
        assert re.search(r'name="table\.atm\.count"[^>]*value="5"', html)  # bo's change shown
        assert re.search(r'name="table\.bank\.count"[^>]*value="3"', html)  # ana's edit kept
        again = {**ana, "seen": "1", "table.atm.count": "5"}
        assert srv.request("POST", "/sample/mtmf-000", form(**again))[0] == 303
    last = decisions(kinds)[-1].truth_after["features"]
    assert (last["bank"]["count"], last["atm"]["count"]) == (3, 5)


def test_a_conflict_on_a_json_edit_keeps_the_keys_it_changed_over_the_new_truth(kinds):
    with review_server(kinds) as srv:
        bo = form(verdict="correct", seen="0", reviewer="bo", accepted="Zurich\nZurigo")
        assert srv.request("POST", "/sample/place_association-000", bo)[0] == 303
        mine = {"kind": "text", "answer": "Zürich (ZH)", "accepted": ["Zurich"]}
        ana = form(verdict="correct", seen="0", reviewer="ana", truth_json=json.dumps(mine))
        status, _, body = srv.request("POST", "/sample/place_association-000", ana)
        assert status == 409
        text = html_unescape(
            re.search(rb'name="truth_json"[^>]*>(.*?)</textarea>', body, re.S).group(1)
        )
        merged = json.loads(text)
        assert merged["answer"] == "Zürich (ZH)" and merged["accepted"] == ["Zurich", "Zurigo"]


def html_unescape(b: bytes) -> str:
    import html

    return html.unescape(b.decode())


def test_truths_the_fields_cannot_hold_can_still_be_accepted_rejected_and_fixed(kinds):
    with review_server(kinds) as srv:
        empty = {"kind": "road_pair", "road_1": "", "road_2": "Rue B"}
        step = form(verdict="correct", seen="0", reviewer="a", truth_json=json.dumps(empty))
        assert srv.request("POST", "/sample/mml-000", step)[0] == 303
        _, _, body = srv.request("GET", "/sample/mml-000")
        page_form = dict(re.findall(rb'name="(road_[12])"[^>]*value="([^"]*)"', body))
        assert page_form == {b"road_1": b"", b"road_2": b"Rue B"}
        accept = form(verdict="accept", seen="1", reviewer="a", road_1="", road_2="Rue B")
        assert srv.request("POST", "/sample/mml-000", accept)[0] == 303
        reject = form(verdict="reject", seen="2", reviewer="a", reason="question ambiguous")
        assert srv.request("POST", "/sample/mml-000", reject)[0] == 303
        # after a rejection the history compares with the truth that was shown, not {}
        fix = form(verdict="correct", seen="3", reviewer="a", road_1="Rue A", road_2="Rue B")
        assert srv.request("POST", "/sample/mml-000", fix)[0] == 303
        _, _, body = srv.request("GET", "/sample/mml-000")
        history = body.decode().split('data-testid="history"')[1]
        assert (
            "kind: <code>null</code>" not in history
            and "road_1: <code>&#34;&#34;</code>" in history
        )


def test_hostile_forms_get_a_clear_answer_never_a_server_error(kinds):
    with review_server(kinds) as srv:
        cases = [
            ("route_geometry_indices-000", {"indices": "0, 2, ²"}, 422, "not a 0-based index"),
            ("stmf_count-000", {"truth_json": "[" * 50_000}, 422, "not valid JSON"),
            ("stmf_count-000", {"reason_text": "[" * 50_000, "value": "4"}, 303, ""),
            ("rle-000", {"seen": "99"}, 400, "lost the version"),
            ("rle-000", {"seen": "-1"}, 400, "lost the version"),
            ("rle-000", {"reviewer": "\u200b"}, 422, "is not a name"),
            ("rle-000", {"reviewer": "a" * 201}, 422, "at most 200"),
        ]
        for sid, extra, status, says in cases:
            fields = {"verdict": "correct", "seen": "0", "reviewer": "ana", **extra}
            got, _, body = srv.request("POST", f"/sample/{sid}", form(**fields))
            assert got == status and says in body.decode(), (extra, got, body[:300])
        got, _, body = srv.request("POST", "/sample/mml-000", "%%%", {"Content-Type": "text/plain"})
        assert got in (400, 422) or got == 303
        status, _, body = srv.request("GET", "/sample/nothing")
        assert status == 404 and body.decode().count("is not a sample of this dataset") == 1
        status, _, body = srv.request("GET", "/?task=bogus&not_reviewer=nobody")
        html = body.decode()
        assert "No sample has task &#39;bogus&#39;." in html and "0 samples match" in html
        assert '<option value="bogus" selected>bogus (none)</option>' in html
        for path in ("//evil.example/", "/%2F%2Fevil.example"):
            status, headers, _ = srv.request("GET", path, token=False)
            assert status == 403 and "location" not in headers


def test_the_export_button_replaces_only_an_earlier_export_of_this_dataset(kinds, tmp_path):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    victim = tmp_path / "victim"
    kinds_dataset(victim, copies=2)
    (victim / "review.sqlite").write_bytes(b"someone's decisions")
    runner = CliRunner()
    for target in (victim, kinds, tmp_path, kinds / "images"):
        r = runner.invoke(app, ["review", str(kinds), "--port", "0", "--export-to", str(target)])
        assert r.exit_code == 2 and "--export-to" in r.output, (target, r.output)
    assert (victim / "review.sqlite").read_bytes() == b"someone's decisions"
    out = tmp_path / "out"
    with review_server(kinds, "--export-to", str(out)) as srv:
        assert srv.request("POST", "/export")[0] == 303
        assert srv.request("POST", "/export")[0] == 303  # its own earlier export: replaced
        out.rename(tmp_path / "moved")
        kinds_dataset(out, copies=2)  # someone else's dataset there meanwhile
        status, _, body = srv.request("POST", "/export")
        assert status == 409 and b"nothing there was changed" in body
    assert len(load_dataset(out)) == 28


# ---------------------------------------------------------------- issue 26


def reviewer_in(body: bytes) -> str:
    m = re.search(rb'name="reviewer" id="reviewer" value="([^"]*)"', body)
    assert m, body[:500]
    return html_unescape(m.group(1))


def test_a_reviewer_name_written_by_another_local_page_is_not_taken(kinds):
    """Finding 16: a cookie written from another port of 127.0.0.1 named the reviewer."""
    with review_server(kinds, "--reviewer", "ana") as srv:
        evil = {"Cookie": "cartoqa_reviewer=mallory"}  # what any local page can write
        assert reviewer_in(srv.request("GET", "/sample/mml-000", headers=evil)[2]) == "ana"
        status, headers, _ = srv.request(
            "POST",
            "/sample/mml-000",
            form(verdict="accept", seen="0", reviewer="bo\u200b"),
            headers=evil,
        )
        assert status == 303
        mine = headers["set-cookie"].split(";")[0]
        both = {"Cookie": f"cartoqa_reviewer=mallory; {mine}"}
        assert reviewer_in(srv.request("GET", "/sample/srn-000", headers=both)[2]) == "bo"
        name, value = mine.split("=", 1)
        forged = {"Cookie": f"{name}=mallory.{value.rpartition('.')[2]}"}
        assert reviewer_in(srv.request("GET", "/sample/srn-000", headers=forged)[2]) == "ana"
        # bidi controls are no part of a name: "\u202etoor" is toor, not "root"
        rtl = form(verdict="accept", seen="0", reviewer="\u202etoor")
        assert srv.request("POST", "/sample/srn-000", rtl)[0] == 303
        page = srv.request("GET", "/sample/srn-000")[2].decode()
        assert "<b>accept</b> by toor at" in page and "\u202e" not in page
    assert [d.reviewer for d in decisions(kinds)] == ["bo", "toor"]


def test_a_held_store_answers_busy_and_holds_up_nothing_else(kinds):
    """Finding 17: a locked store froze every request for ~30 s."""
    import sqlite3
    import threading

    with review_server(kinds) as srv:
        assert srv.request("GET", "/")[0] == 200  # the store is made
        other = sqlite3.connect(kinds / "review.sqlite", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process writing, at length
        got: dict = {}
        accept = form(verdict="accept", seen="0", reviewer="ana")
        try:
            t = threading.Thread(
                target=lambda: got.update(post=srv.request("POST", "/sample/mml-000", accept))
            )
            t.start()
            status, _, body = srv.request("GET", "/sample/srn-000")  # not held up behind it
            assert status == 200 and b"srn-000" in body
            t.join(60)
            status, headers, body = got["post"]
            assert status == 503 and "review store is busy, try again" in body.decode()
            assert headers.get("retry-after")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert srv.request("POST", "/sample/mml-000", accept)[0] == 303
    assert [d.sample_id for d in decisions(kinds)] == ["mml-000"]


def test_a_chunked_body_is_bounded_as_it_arrives(kinds):
    """Finding 17: the 1 MB limit checked only Content-Length; a chunked 30 MB body was read."""
    import http.client
    from urllib.parse import urlsplit

    with review_server(kinds) as srv:
        u = urlsplit(srv.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        sent = []

        def body():
            yield b"verdict=accept&seen=0&reviewer=ana&filler="
            for _ in range(30):
                sent.append(1)
                yield b"a" * 1_000_000

        status = None
        with contextlib.suppress(OSError):  # the server stopped reading and closed
            conn.request(
                "POST",
                f"/{srv.token}/sample/mml-000",
                body=body(),
                headers={"Content-Type": "application/x-www-form-urlencoded"},
                encode_chunked=True,
            )
        try:
            status = conn.getresponse().status
        except (OSError, http.client.HTTPException):
            status = None  # closed before its answer could be read
        conn.close()
        # answered "too large" once past the limit (the rest is drained unread by the server)
        assert status in (413, None) and sent, status
        assert srv.request("GET", "/")[0] == 200  # still serving
    assert decisions(kinds) == []


def test_a_request_for_another_host_name_is_refused(kinds):
    """Finding 17: no Host check (DNS rebinding was stopped only by the token)."""
    with review_server(kinds) as srv:
        port = srv.origin.rsplit(":", 1)[1]
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.nip.io:{port}"):
            status, _, body = srv.request("GET", "/sample/mml-000", headers={"Host": host})
            assert status == 403 and b"Rue Grimaldi" not in body, host
        status, _, _ = srv.request(
            "POST",
            "/sample/mml-000",
            form(verdict="accept", seen="0", reviewer="ana"),
            headers={"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
        )
        assert status == 403 and decisions(kinds) == []
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            assert srv.request("GET", "/", headers={"Host": host})[0] == 200, host


def test_a_reload_after_an_export_does_not_export_again(kinds, tmp_path):
    """Finding 18: reloading the page a web export answered submitted it again."""
    out = tmp_path / "out"
    with review_server(kinds, "--export-to", str(out)) as srv:
        status, headers, _ = srv.request("POST", "/export")
        assert status == 303
        stamp = (out / "manifest.json").stat().st_mtime_ns
        for _ in range(2):  # the page after it, and a reload of it
            status, _, body = srv.request("GET", headers["location"], token=False)
            assert status == 200 and b"14 of 14 samples written to" in body
        assert (out / "manifest.json").stat().st_mtime_ns == stamp


def test_a_feature_table_change_is_shown_whole_in_history_and_in_the_conflict(tmp_path):
    """Finding 18: a feature-table change was cut from history and the conflict box."""
    from tests.annotations.review_data import table_dataset

    table_dataset(tmp_path / "ds")
    with review_server(tmp_path / "ds") as srv:
        bo = form(verdict="correct", seen="0", reviewer="bo", **{"table.veterinary.count": "2"})
        assert srv.request("POST", "/sample/mtmf-0000", bo)[0] == 303
        ana = form(verdict="correct", seen="0", reviewer="ana", **{"table.atm.count": "4"})
        status, _, body = srv.request("POST", "/sample/mtmf-0000", ana)
        assert status == 409
        box = body.decode().split('data-testid="conflict"')[1].split("</section>")[0]
        assert "features.veterinary.count" in box and "<code>2</code>" in box, box
        assert "…" not in box and "The Long Named Atm" not in box  # only the rows changed
        again = form(verdict="correct", seen="1", reviewer="ana", **{"table.atm.names": "A\nB"})
        assert srv.request("POST", "/sample/mtmf-0000", again)[0] == 303
        page = srv.request("GET", "/sample/mtmf-0000")[2].decode()
        history = page.split('data-testid="history"')[1]
        assert "features.veterinary.count: <code>1</code> → <code>2</code>" in history
        assert "features.atm.names" in history and "…" not in history


def test_a_corrected_route_is_checked_on_the_maps_roads_and_redrawn(tmp_path):
    """Finding 18: a corrected route lost its drawn path and was not checked against the
    road network (the oracle's connectivity fell with no warning)."""
    from PIL import Image

    from tests.annotations.review_data import network_route_dataset

    network_route_dataset(tmp_path / "ds")
    with review_server(tmp_path / "ds") as srv:
        before = srv.request("GET", "/drawing/srn-0000.png")[2]
        steps = "turn right | Rue Est\nturn right | Rue Sud"
        bad = form(verdict="correct", seen="0", reviewer="ana", steps=steps)
        status, _, body = srv.request("POST", "/sample/srn-0000", bad)
        html = html_unescape(body)
        assert status == 422 and "not connected on the map's roads" in html, html[:3000]
        assert "'Rue Sud' does not lead to the red marker" in html
        assert 'name="route_anyway"' in html and decisions(tmp_path / "ds") == []
        anyway = form(verdict="correct", seen="0", reviewer="ana", steps=steps, route_anyway="1")
        assert srv.request("POST", "/sample/srn-0000", anyway)[0] == 303
        after = srv.request("GET", "/drawing/srn-0000.png")[2]
    assert after != before
    import io

    im = Image.open(io.BytesIO(after)).convert("RGB")
    assert im.height < 2000
    (d,) = decisions(tmp_path / "ds")
    assert d.truth_after["steps"][-2] == "Rue Sud"


def test_correcting_rle_metres_in_the_tool_corrects_the_feet_and_says_so(tmp_path):
    """Finding 18: a correction of rle-…-m left its -ft twin at the old value."""
    from tests.annotations.review_data import rle_pair_dataset

    rle_pair_dataset(tmp_path / "ds")
    with review_server(tmp_path / "ds", "--reviewer", "ana") as srv:
        fix = form(verdict="correct", seen="0", reviewer="ana", value="520")
        status, headers, _ = srv.request("POST", "/sample/rle-0000-m", fix)
        assert status == 303
        page = srv.request("GET", headers["location"], token=False)[2].decode()
        assert (
            "rle-0000-m: correct by ana stored (version 1); rle-0000-ft corrected with it" in page
        )
        feet = srv.request("GET", "/sample/rle-0000-ft")[2].decode()
        assert 'id="f-value"' in feet and 'value="1706.04"' in feet
    last = {d.sample_id: d.truth_after for d in decisions(tmp_path / "ds")}
    assert last["rle-0000-ft"]["value"] == 1706.04 and last["rle-0000-m"]["value"] == 520


def test_an_imported_release_is_reviewed_its_images_served_and_nothing_beside_them(tmp_path):
    """cartoqa import-release names images under release/ (a link to the release's folder):
    the tool shows them and draws on them, serves nothing outside the release, and an export
    of the reviewed dataset holds copies, so it stands alone."""
    from cartoqa.stores import load_dataset
    from cartoqa.tasks.release import import_release
    from tests.release.fixture_release import make_release, release_root

    make_release(tmp_path)
    (release_root(tmp_path).parent / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    import_release(release_root(tmp_path), tmp_path / "ds", tasks=["MML", "SRN"])
    ds = load_dataset(tmp_path / "ds")
    srn = next(s for s in ds.samples if s.task == "srn")
    with review_server(tmp_path / "ds", "--export-to", str(tmp_path / "out")) as srv:
        status, headers, body = srv.request("GET", f"/{srn.prompt.images[0]}")
        assert status == 200 and headers["content-type"] == "image/png"
        assert body == ds.image_path(srn.prompt.images[0]).read_bytes()
        page = srv.request("GET", f"/sample/{srn.id}")[2].decode()
        assert srn.prompt.images[0] in page
        assert srv.request("GET", f"/drawing/{srn.id}.png")[0] == 200
        for path in ("/release/../secret.txt", "/release/%2e%2e/secret.txt", "/release/"):
            status, _, body = srv.request("GET", path)
            assert status in (400, 404) and b"TOP SECRET" not in body, path
        accept = form(verdict="accept", seen="0", reviewer="a")
        assert srv.request("POST", f"/sample/{srn.id}", accept)[0] == 303
        status, headers, _ = srv.request("POST", "/export")
        assert status == 303 and headers["location"] == f"/{srv.token}/?exported=1", headers
    shutil.rmtree(tmp_path / "Dataset")
    out = load_dataset(tmp_path / "out", verify_images=True)
    assert srn.id in out.by_id()
    assert out.by_id()[srn.id].prompt.images == srn.prompt.images
    assert not (tmp_path / "out" / "release").is_symlink()
