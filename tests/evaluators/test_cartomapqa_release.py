"""SRN responses in the published CartoMapQA release layout, scored both ways (``cartoqa
score-release``; the SRN form, ``cartoqa.tasks.release.routes``): the cases of the SRN-only
``evaluators.cartomapqa_release`` it replaces, where they still apply."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import DatasetError
from cartoqa.records import RouteTruth, Sample
from cartoqa.tasks.release import score_release
from cartoqa.tasks.release.routes import SRN_FORM
from maps.routes import road_network, shortest_route
from tests.maps.road_fixtures import graph, road

S, L, R = "continue straight", "turn left", "turn right"


def release(tmp_path: Path, answers: list) -> tuple[Path, Path]:
    """The cross-roads graph of the route tests as a release of one route, answered once per
    item of ``answers`` (stored as the record's "Answer", the reply as its "Response"):
    (the release root, the model's response folder)."""
    g = graph({1: (0, 0), 2: (0, 1), 3: (0, 2), 4: (1, 1), 5: (-1, 1), 6: (1, 0)})
    road(g, "North Street", [1, 2, 3])
    road(g, "East Road", [2, 4])
    road(g, "West Road", [5, 2])
    road(g, "South Lane", [1, 6])
    road(g, "Side Street", [6, 4])
    route = shortest_route(g, 1, 4)
    net = road_network(g, 1, 4, (40.0, 0.0, 50.0, 10.0))
    ds = tmp_path / "ds"
    (ds / "images").mkdir(parents=True)
    samples = []
    for i in range(len(answers)):
        (ds / "images" / f"srn-{i:03d}.png").write_bytes(b"png")
        samples.append(
            Sample(
                id=f"srn-{i:03d}",
                task="srn",
                prompt={"text": "Which route?", "images": [f"images/srn-{i:03d}.png"]},
                ground_truth=RouteTruth(steps=list(route.steps), network=net),
                metadata={"zoom": 17 + i % 3},
                provenance={"generator": "test"},
            )
        )
    root = tmp_path / "Dataset" / "CartoMapQA"
    SRN_FORM.write_questions(samples, ds, root)
    folder = tmp_path / "Responses" / "SRN" / "model"
    SRN_FORM.write_replies(samples, {s.id: "" for s in samples}, folder)
    for s, answer in zip(samples, answers, strict=True):
        f = folder / f"{s.id.removeprefix('srn-')}.json"
        record = json.loads(f.read_text())
        record["Answer"] = answer
        record["Response"] = (
            answer if isinstance(answer, str) else "[" + ", ".join(map(str, answer)) + "]"
        )
        f.write_text(json.dumps(record))
    return root, folder


def test_both_modes_on_the_same_answers(tmp_path):
    exact = ["blue", S, "North Street", R, "East Road", "red"]
    prefix = ["blue", S, "North Street"]
    detour = ["blue", R, "South Lane", L, "Side Street", "red"]
    nonsense = ["I cannot read this map."]
    root, folder = release(tmp_path, [exact, prefix, detour, nonsense])
    got = score_release(folder, release=root)["SRN"]
    original, cartoqa = got.original["all"], got.cartoqa["all"]
    assert original["n"] == 4
    assert cartoqa["SR2"] == pytest.approx(1 / 4)  # only the exact answer
    assert original["SR2"] == pytest.approx(2 / 4)  # the strict prefix passes the zip
    # aSA, n = 6: the correct one 5/5, 2/5, 0, 0; the published (k - 1) / 5: 5/5, 2/5, 0, -1/5
    assert cartoqa["aSA"] == pytest.approx((1 + 2 / 5) / 4)
    assert original["aSA"] == pytest.approx((1 + 2 / 5 + 0 - 1 / 5) / 4)
    # connectivity: exact (by success), prefix (by success, the zip), detour (a real path)
    assert original["connectivity"] == pytest.approx(3 / 4)
    assert original["crashed"] == 0
    assert got.original["zoom=17"]["n"] == 2


def test_the_stored_answer_is_read_as_the_list_it_is(tmp_path):
    """Items with quotes (what the published parser keeps of a JSON reply): the published
    arithmetic compares them as stored; cartoqa reads the reply itself."""
    steps = ["blue", S, "North Street", R, "East Road", "red"]
    quoted = [f'"{t}"' for t in steps]
    root, folder = release(tmp_path, [steps, quoted])
    record = json.loads((folder / "001.json").read_text())
    record["Response"] = json.dumps(steps)
    (folder / "001.json").write_text(json.dumps(record))
    got = score_release(folder, release=root)["SRN"]
    assert (got.cartoqa["all"]["SR2"], got.cartoqa["all"]["aSA"]) == (1.0, 1.0)  # both right
    # published: the first exact (so connected); the second led by '"blue"': SR^2 0, aSA -1/5,
    # not connected (n = 6)
    assert got.original["all"]["SR2"] == pytest.approx(1 / 2)
    assert got.original["all"]["aSA"] == pytest.approx((1 - 1 / 5) / 2)
    assert got.original["all"]["connectivity"] == pytest.approx(1 / 2)


def test_an_answer_stored_as_text_is_compared_character_by_character(tmp_path):
    """Not the release's layout: the published evaluator zips the truth with the text's
    characters ("[" is not "blue"); cartoqa reads the reply."""
    root, folder = release(
        tmp_path, [f'["blue", "{S}", "North Street", "{R}", "East Road", "red"]']
    )
    got = score_release(folder, release=root)["SRN"]
    assert (got.cartoqa["all"]["SR2"], got.cartoqa["all"]["aSA"]) == (1.0, 1.0)
    assert (got.original["all"]["SR2"], got.original["all"]["connectivity"]) == (0.0, 0.0)
    assert got.original["all"]["aSA"] == pytest.approx(-1 / 5)


def test_an_answer_holding_no_text_is_scored_and_counted_crashed(tmp_path):
    """A 3 among the steps: the published connectivity check raises on it (TypeError: "in"
    an int); the item is still scored, not connected."""
    root, folder = release(tmp_path, [["blue", S, "North Street", 3, "East Road", "red"]])
    got = score_release(folder, release=root)["SRN"]
    assert got.original["all"]["crashed"] == 1
    assert got.original["all"]["connectivity"] == 0.0
    assert "TypeError" in got.items[0]["crashed"]


def test_the_command_and_a_missing_file(tmp_path):
    root, folder = release(tmp_path, [["blue", S, "North Street", R, "East Road", "red"]])
    args = ["score-release", str(folder), "--release", str(root), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["SRN"]["original"]["all"]["SR2"] == 1
    (root / "MapNavigation" / "road_dict" / "000.json").unlink()
    with pytest.raises(DatasetError, match=r"road_dict/000.json is missing"):
        score_release(folder, release=root)
