"""The published CartoMapQA code itself, where a checkout of it is at hand, against
``evaluators.published`` and ``cartoqa score-release``: its parsers on every hostile reply
of the fixture release, and its evaluate_*.py on the fixture's response folders.

cartoqa does not ship the published code (it is another project's); set
``CARTOMAPQA_CODE`` to a checkout of github.com/ungquanghuy-kddi/CartoMapQA to run these.
Without it, ``test_published_parity.py`` checks the same arithmetic against a
re-implementation written in the tests from the published rules.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.published import mfs, mml, rle, srn, stmf

from .fixture_release import MODEL, make_release, make_responses, release_root

CODE = os.environ.get("CARTOMAPQA_CODE")

pytestmark = pytest.mark.skipif(
    not CODE,
    reason="the published CartoMapQA code is not here: set CARTOMAPQA_CODE to a checkout of "
    "github.com/ungquanghuy-kddi/CartoMapQA",
)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("published")
    make_release(root)
    make_responses(root)
    return root


@pytest.fixture(scope="module")
def theirs():
    """The published parsers, imported from the checkout (numpy's global random seeded so
    their draws are repeatable)."""
    sys.path.insert(0, str(CODE))
    try:
        import numpy as np
        from Parse import (  # type: ignore[import-not-found]
            parse_response_mfs,
            parse_response_mml,
            parse_response_rle,
            parse_response_srn,
            parse_response_stmf,
        )

        np.random.seed(0)
        yield {
            "mfs": parse_response_mfs.parse_mfs,
            "stmf": parse_response_stmf.parse_stmf,
            "rle": parse_response_rle.parse_rle,
            "mml": parse_response_mml.parse_mml,
            "srn": parse_response_srn.parse_srn,
        }
    finally:
        sys.path.remove(str(CODE))


def _replies(work: Path, folder: str) -> list[tuple[Path, dict]]:
    base = work / "Responses" / folder / MODEL
    return [(p, json.loads(p.read_text())) for p in sorted(base.rglob("*.json"))]


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # the published parser raising is an outcome to compare
        return ("raises", type(exc).__name__)


def test_the_published_parsers_read_every_reply_as_ours_do(work, theirs, capsys):
    checked = 0
    (path, doc) = _replies(work, "MFS")[0]
    for q in doc.values():
        ours = _outcome(lambda r: mfs.parse(r)[0], q["Response"])
        if mfs.parse(q["Response"])[1] is not None:
            ours = ("raises", "IndexError")
        assert _outcome(theirs["mfs"], q["Response"]) == ours, q["Response"]
        checked += 1
    for path, rec in _replies(work, "STMF"):
        kind = path.parent.name
        reply = rec["Response"]
        if kind == "name_listing":
            assert theirs["stmf"](reply, kind, path.name) == stmf.parse_names(reply), reply
        else:
            ours_fn = stmf.parse_presence if kind == "presence" else stmf.parse_count
            got = _outcome(ours_fn, reply, random.Random(0))
            if got[0] == "ok" and got[1][1]:
                continue  # drawn at random both sides: nothing to compare
            want = _outcome(theirs["stmf"], reply, kind, path.name)
            assert want == (got if got[0] == "raises" else ("ok", got[1][0])), reply
        checked += 1
    for folder, name in (("RLE", "rle"), ("MML", "mml"), ("SRN", "srn")):
        ours = {"rle": rle.parse, "mml": mml.parse, "srn": srn.parse}[name]
        for _, rec in _replies(work, folder):
            got, want = _outcome(ours, rec["Response"]), _outcome(theirs[name], rec["Response"])
            if got[0] == "raises" or want[0] == "raises":
                assert got[0] == want[0], rec["Response"]
            else:
                assert got == want, rec["Response"]
            checked += 1
    capsys.readouterr()  # the published parsers print as they go
    assert checked > 200


def _cartoqa_json(*args) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "cartoqa", "score-release", *map(str, args), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _published(task: str, folder: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", f"from evaluate_{task} import evaluate_{task} as f; "
         f"f({MODEL!r}, {str(folder)!r})"],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(CODE)}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def _without(work: Path, folder: str, drop: set[str], out: Path) -> Path:
    """A copy of a model's response folder without the items ``drop`` names (MFS: questions
    of its one file)."""
    src = work / "Responses" / folder / MODEL
    dst = out / "Responses" / folder / MODEL
    shutil.copytree(src, dst)
    if folder == "MFS":
        (f,) = dst.glob("*.json")
        doc = json.loads(f.read_text())
        f.write_text(json.dumps({k: v for k, v in doc.items() if k not in drop}))
    else:
        for p in list(dst.rglob("*")):
            if p.is_file() and (p.name in drop or p.stem in drop):
                p.unlink()
    return dst


def _f3(x: float) -> str:
    return f"{x:0.3f}"


@pytest.mark.parametrize("folder", ["MFS", "STMF", "MTMF", "RLE", "MML", "SRN"])
def test_the_published_evaluators_agree_on_every_item_they_do_not_crash_on(work, tmp_path, folder):
    task = folder.lower()
    full = _cartoqa_json(work / "Responses" / folder / MODEL, "--release", release_root(work))
    crashed = {i["key"] for sc in full.values() for i in sc["items"] if i["crashed"]}
    drawn = {i["key"] for sc in full.values() for i in sc["items"] if i["drawn"]}
    whole = _published(task, work / "Responses" / folder / MODEL, work)
    if folder not in ("MFS", "STMF"):  # their crashes are the parser's, on the reply: the
        # evaluator reads the stored records without raising
        crashes_expected = bool(crashed) or any(
            "raises" in n or "divides" in n for sc in full.values() for n in sc["notes"]
        )
        assert (whole.returncode != 0) == crashes_expected, (whole.stderr[-500:], crashed)
    # the items it does not crash on (MFS: nor draws for, its draws are unseeded)
    drop = crashed | (drawn if folder == "MFS" else set())
    (tmp_path / "Dataset").symlink_to(work / "Dataset")
    kept = _without(work, folder, drop, tmp_path)
    ours = _cartoqa_json(kept, "--release", release_root(work))
    done = _published(task, kept, tmp_path)
    printed = done.stdout
    if folder == "SRN" and done.returncode != 0:
        pytest.fail(done.stderr[-800:])
    assert done.returncode == 0, done.stderr[-800:]
    want: list[str] = []
    if folder == "MFS":
        want.append(f"Accuracy = {_f3(ours['MFS']['original']['all']['accuracy'])}")
    elif folder == "STMF":
        p = ours["STMF presence"]["original"]["all"]
        c = ours["STMF counting"]["original"]["all"]
        n = ours["STMF name listing"]["original"]["all"]
        want += [
            f"Presence: Accuracy = {_f3(p['accuracy'])}, Precision = {_f3(p['precision'])}, "
            f"Recall = {_f3(p['recall'])}, F1-score = {_f3(p['f1'])}",
            f"Counting: RMSE = {_f3(c['rmse'])}, R2 = {_f3(c['r2'])}",
            f"Name-listing: Avg_precision = {_f3(n['precision'])}, Avg_recall = "
            f"{_f3(n['recall'])}, Avg_f1 = {_f3(n['f1'])}",
        ]
    elif folder == "MTMF":
        m = ours["MTMF"]["original"]["all"]
        want += [
            f"Counting: RMSE = {_f3(m['rmse'])}, R2 = {_f3(m['r2'])}",
            f"Avg_micro_precision = {_f3(m['precision'])}, Avg_micro_recall = "
            f"{_f3(m['recall'])}, Avg_micro_f1 = {_f3(m['f1'])}",
        ]
    elif folder == "RLE":
        t = ours["RLE"]["original"]
        for group in ("Simple meters", "Simple feet", "Complex meters", "Complex feet"):
            g = t[group]
            want.append(f"RMSE = {g['rmse']}, MAE = {g['mae']}, MAPE = {g['mape']}, R2 = {g['r2']}")
    elif folder == "MML":
        t = ours["MML"]["original"]
        want += [
            f"Overall accuracy = {_f3(t['all']['accuracy'])}",
            f"Accuracy_red = {_f3(t['colour=red']['accuracy'])}",
            f"Accuracy_blue = {_f3(t['colour=blue']['accuracy'])}",
        ]
        want += [
            f"== Zoom level {g.split('=')[1]}: {_f3(v['accuracy'])}"
            for g, v in t.items()
            if g.startswith("zoom=")
        ]
    else:
        t = ours["SRN"]["original"]
        for z in ("17", "18", "19"):
            g = t[f"zoom={z}"]
            want.append(
                f"Zoom level {z}: shortest_path_success_rate = {_f3(g['SR2'])}, "
                f"avg_step_accuracy = {_f3(g['aSA'])}, connectivity_rate = {_f3(g['connectivity'])}"
            )
        want.append(f"shortest_path_success_rate: {_f3(t['all']['SR2'])}")
        want.append(f"avg_step_accuracy: {_f3(t['all']['aSA'])}")
        want.append(f"avg_connectivity_rate: {_f3(t['all']['connectivity'])}")
    for line in want:
        assert line in printed, (line, printed)
