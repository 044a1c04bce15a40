"""SRN scoring of responses in the original CartoMapQA release layout, both modes."""

import json

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import DatasetError
from evaluators.cartomapqa_release import score_release
from maps.routes import road_network, shortest_route
from tests.maps.road_fixtures import graph, road

S, L, R = "continue straight", "turn left", "turn right"


def release(tmp_path, answers):
    """The cross-roads graph of the route tests, written as a release: one file per answer."""
    g = graph({1: (0, 0), 2: (0, 1), 3: (0, 2), 4: (1, 1), 5: (-1, 1), 6: (1, 0)})
    road(g, "North Street", [1, 2, 3])
    road(g, "East Road", [2, 4])
    road(g, "West Road", [5, 2])
    road(g, "South Lane", [1, 6])
    road(g, "Side Street", [6, 4])
    route = shortest_route(g, 1, 4)
    net = road_network(g, 1, 4, (40.0, 0.0, 50.0, 10.0))
    node = lambda n: [n, *net.nodes[str(n)]]  # noqa: E731
    road_dict = {
        name: {str(i): [node(e.u), node(e.v)] for i, e in enumerate(edges)}
        for name, edges in net.roads.items()
    }
    conj: dict = {}
    for pair, nodes in net.junctions.items():
        a, b = pair.split("|")
        conj.setdefault(a, {})[b] = [node(n) for n in nodes]
        conj.setdefault(b, {})[a] = [node(n) for n in nodes]
    folders = {k: tmp_path / k for k in ("responses", "road_dict", "road_conjunction")}
    for f in folders.values():
        f.mkdir()
    truth = "[" + ", ".join(route.steps) + "]"
    for i, answer in enumerate(answers):
        name = f"{i:03d}.json"
        (folders["responses"] / name).write_text(
            json.dumps(
                {
                    "Answer": answer,
                    "route_directions": truth,
                    "origin": node(1),
                    "destination": node(4),
                    "zoom_level": 17 + i % 3,
                }
            )
        )
        (folders["road_dict"] / name).write_text(json.dumps(road_dict))
        (folders["road_conjunction"] / name).write_text(json.dumps(conj))
    return folders


def test_both_modes_on_the_same_answers(tmp_path):
    exact = ["blue", S, "North Street", R, "East Road", "red"]
    prefix = ["blue", S, "North Street"]
    detour = ["blue", R, "South Lane", L, "Side Street", "red"]
    nonsense = ["I cannot read this map."]
    f = release(tmp_path, [exact, prefix, detour, nonsense])
    table = score_release(f["responses"], f["road_dict"], f["road_conjunction"])
    all_ = table["all"]
    assert all_["n"] == 4
    assert all_["SR2"] == pytest.approx(1 / 4)  # only the exact answer
    assert all_["SR2 (original)"] == pytest.approx(2 / 4)  # the strict prefix passes the zip
    # aSA, n = 6: the correct one 5/5, 2/5, 0, 0; the published (k - 1) / 5: 5/5, 2/5, 0, -1/5
    assert all_["aSA"] == pytest.approx((1 + 2 / 5) / 4)
    assert all_["aSA (original)"] == pytest.approx((1 + 2 / 5 + 0 - 1 / 5) / 4)
    # connectivity: exact (by success), prefix (by success, the zip), detour (a real path)
    assert all_["connectivity (original)"] == pytest.approx(3 / 4)
    assert all_["crashed (original)"] == 0
    assert table["zoom=17"]["n"] == 2


def test_the_stored_answer_is_read_as_the_list_it_is(tmp_path):
    """Items with quotes, an apostrophe, and a road name the published parser split at its
    comma: the correct scores clean each item and split the truth at the same commas."""
    truth = "[blue, turn left, Rue d'Alger, turn right, Boulevard Albert 1er, Monaco, red]"
    stored = ["blue", "turn left", "Rue d'Alger", "turn right", "Boulevard Albert 1er", "Monaco"]
    quoted = [f'"{t}"' for t in [*stored, "red"]]  # what the parser keeps of a JSON reply
    folders = {k: tmp_path / k for k in ("responses", "road_dict", "road_conjunction")}
    for name, answer in (("a.json", [*stored, "red"]), ("b.json", quoted)):
        for k, v in folders.items():
            v.mkdir(exist_ok=True)
            if k != "responses":
                (v / name).write_text("{}")
        record = {
            "Answer": answer,
            "route_directions": truth,
            "origin": [1, 0.0, 0.0],
            "destination": [2, 0.0, 0.001],
            "zoom_level": 18,
        }
        (folders["responses"] / name).write_text(json.dumps(record))
    got = score_release(*folders.values())["all"]
    assert (got["SR2"], got["aSA"]) == (1.0, 1.0)  # both right
    # published: the first exact (so connected), the second led by '"blue"': SR^2 0, aSA -1/6,
    # not connected (n = 7)
    assert got["SR2 (original)"] == pytest.approx(1 / 2)
    assert got["aSA (original)"] == pytest.approx((1 - 1 / 6) / 2)
    assert got["connectivity (original)"] == pytest.approx(1 / 2)


def test_an_answer_written_as_text_is_parsed_first(tmp_path):
    """Not the release's layout, but read: the published parser ("original"), parse_route
    (the correct scores)."""
    f = release(tmp_path, [f'["blue", "{S}", "North Street", "{R}", "East Road", "red"]'])
    got = score_release(f["responses"], f["road_dict"], f["road_conjunction"])["all"]
    assert (got["SR2"], got["aSA"]) == (1.0, 1.0)
    assert (got["SR2 (original)"], got["connectivity (original)"]) == (0.0, 0.0)
    assert got["aSA (original)"] == pytest.approx(-1 / 5)


def test_an_answer_that_is_no_list_of_text_is_a_dataset_error(tmp_path):
    f = release(tmp_path, [["blue", 3, "red"]])
    with pytest.raises(DatasetError, match=r"000.json: 'Answer' holds 3, not text"):
        score_release(f["responses"], f["road_dict"], f["road_conjunction"])


def test_the_command_and_a_missing_file(tmp_path):
    f = release(tmp_path, [["blue", S, "North Street", R, "East Road", "red"]])
    args = [
        "score-release",
        str(f["responses"]),
        "--road-dict",
        str(f["road_dict"]),
        "--road-conjunction",
        str(f["road_conjunction"]),
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["all"]["SR2"] == 1
    (f["road_dict"] / "000.json").unlink()
    with pytest.raises(DatasetError, match="000.json is missing"):
        score_release(f["responses"], f["road_dict"], f["road_conjunction"])
