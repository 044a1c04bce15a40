"""The review tool's server over real HTTP (``cartoqa review DATASET``, a uvicorn process):
the token on every request, images only from images/, forms from this site only, stale
and bad decisions refused with nothing stored, and nothing written but the store and the
export folder."""

from __future__ import annotations

import json
import os
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
        paths = ["/", "/sample/mml-000", "/drawing/mml-000.png", "/images/mml-000.png"]
        for path in [*paths, "/static/review.js", "/nothing", "/docs", "/openapi.json"]:
            for headers in ({}, {"X-Cartoqa-Token": "wrong"}, {"Cookie": "cartoqa_review_x=1"}):
                status, _, body = srv.request("GET", path, headers=headers, token=False)
                assert status == 403, (path, headers)
                assert b"Rue Grimaldi" not in body and b"token" in body
        for path in paths:
            assert srv.request("GET", path)[0] == 200, path
        # a decision without the token is refused and stores nothing
        status, _, _ = srv.request(
            "POST", "/sample/mml-000", form(verdict="accept", seen="0", reviewer="x"), token=False
        )
        assert status == 403 and decisions(kinds) == []
        assert srv.request("GET", f"/?token={srv.token}x", token=False)[0] == 403


def test_the_token_in_the_address_becomes_a_strict_cookie_and_leaves_the_address(kinds):
    with review_server(kinds) as srv:
        status, headers, _ = srv.request("GET", f"/?task=srn&token={srv.token}", token=False)
        assert status == 303 and headers["location"] == "/?task=srn"
        cookie = headers["set-cookie"]
        assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        name_value = cookie.split(";")[0]
        status, headers, body = srv.request(
            "GET", "/?task=srn", headers={"Cookie": name_value}, token=False
        )
        assert status == 200 and b"srn-000" in body and b"mml-000" not in body
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "same-origin"


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
        host = srv.base.split("//")[1]
        status, _, _ = srv.request(
            "POST",
            "/sample/mml-000",
            form(verdict="accept", seen="0", reviewer="x"),
            headers={"Origin": srv.base, "Host": host},
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
        assert got == 303 and headers["location"].startswith("/sample/rle-000?done=")
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
        assert status == 303 and "exported" in headers["location"]
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
        port = srv.base.rsplit(":", 1)[1]
        r = runner.invoke(app, ["review", "serve", str(kinds), "--port", port])
        assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.output
