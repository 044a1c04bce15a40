"""The published SRN arithmetic, quirk by quirk (issue 12, item 7).

Each case is a reply, the list the published parser stores for it in the
release layout, and the published SR^2, aSA and connectivity, worked out
by hand below from the rules in shared/spec/cartomapqa-release.md (never
from the published code).  Both entry points are checked on every case:
srn's registered "original" scorer on the reply (what ``cartoqa score
--mode original`` uses) and ``score_release`` on the stored list (what
``cartoqa score-release`` uses); the stored list is what
``evaluators.published.srn.parse`` makes of the reply.

The map, in (lat, lon) degrees::

    J (0.001, 0) -- East Road --- D (0.001, 0.001)   red marker at D
    |                              |
    North Street               Side Street           Wright Street, Wood Street:
    |                              |                 W (0.0005, 0.002) -- D
    O (0, 0) ---- South Lane ---- K (0, 0.001)       Ring Road: O -- R (0.002, 0.002) -- D
    blue marker at O                                 Lone Lane: L (0.002, 0.001) -- D

Bearings (published formula, from heading 0 at O): O->J 0, J->D just under
90, O->K exactly 90, K->D exactly 0.  So the truth is [blue, continue
straight, North Street, turn right, East Road, red] (n = 6: aSA is
(k - 1) / 5, k the leading items that match) and the detour [blue, turn
right, South Lane, turn left, Side Street, red] drives too (K->D after O->K
is a change of 270 degrees: left).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cartoqa.records import Metadata, Prompt, Provenance, RoadEdge, RoadNetwork, RouteTruth, Sample
from cartoqa.scoring import score_run
from cartoqa.tasks.spec import get_task
from evaluators.navigation import (
    published_bearing,
    published_normalisation,
    published_parse,
    published_turn,
)
from evaluators.published import srn as published_srn

S, L, R = "continue straight", "turn left", "turn right"
U = "make a U-turn and continue straight"
TRUTH = ["blue", S, "North Street", R, "East Road", "red"]
DETOUR = ["blue", R, "South Lane", L, "Side Street", "red"]

NODES = {
    1: (0.0, 0.0),  # O, the blue marker
    2: (0.001, 0.0),  # J
    3: (0.001, 0.001),  # D, the red marker
    4: (0.0, 0.001),  # K
    5: (0.0005, 0.002),  # W
    6: (0.002, 0.002),  # on Ring Road
    7: (0.002, 0.001),  # on Lone Lane
}
ROADS = {
    "North Street": [1, 2],
    "East Road": [2, 3],
    "South Lane": [1, 4],
    "Side Street": [4, 3],
    "Wright Street": [5, 3],
    "Wood Street": [5, 3],
    "Ring Road": [1, 6, 3],
    "Lone Lane": [7, 3],  # meets nothing in the junction table
}
#: the pairs of roads that meet, and where
MEETS = {
    ("North Street", "East Road"): [2],
    ("North Street", "South Lane"): [1],
    ("South Lane", "Side Street"): [4],
    ("Side Street", "East Road"): [3],
    ("Wright Street", "East Road"): [3],
    ("Wright Street", "Side Street"): [3],
    ("Wood Street", "East Road"): [3],
    ("Wood Street", "Side Street"): [3],
    ("Ring Road", "North Street"): [1],
    ("Ring Road", "South Lane"): [1],
}


def point(n: int) -> list:
    return [n, *NODES[n]]


def road_dict() -> dict:
    return {name: {"1": [point(n) for n in nodes]} for name, nodes in ROADS.items()}


def conjunction() -> dict:
    """Road B -> road A -> the junctions, both ways round for every pair that meets."""
    conj: dict = {}
    for (a, b), nodes in MEETS.items():
        conj.setdefault(a, {})[b] = [point(n) for n in nodes]
        conj.setdefault(b, {})[a] = [point(n) for n in nodes]
    return conj


def network() -> RoadNetwork:
    edges = {}
    for name, nodes in ROADS.items():
        edges[name] = [
            RoadEdge(
                u=u,
                v=v,
                length_m=100,
                heading_start=published_bearing(*NODES[u], *NODES[v]),
                heading_end=published_bearing(*NODES[u], *NODES[v]),
            )
            for a, b in itertools.pairwise(nodes)
            for u, v in ((a, b), (b, a))
        ]
    return RoadNetwork(
        origin=1,
        destination=3,
        nodes={str(n): ll for n, ll in NODES.items()},
        roads=edges,
        junctions={"|".join(sorted(pair)): nodes for pair, nodes in MEETS.items()},
    )


TRUTH_TEXT = "[" + ", ".join(TRUTH) + "]"


def write_release(tmp, answers, *, truth=TRUTH_TEXT, conj=None, zooms=None):
    """One response file per stored answer, with the road dictionary and junction table."""
    folders = {k: tmp / k for k in ("responses", "road_dict", "road_conjunction")}
    for f in folders.values():
        f.mkdir(parents=True, exist_ok=True)
    for i, answer in enumerate(answers):
        name = f"{i:03d}.json"
        record = {
            "route_directions": truth,
            "origin": point(1),
            "destination": point(3),
            "zoom_level": zooms[i] if zooms else 17,
            "Response": "(the model's reply)",
        }
        if answer is not ...:
            record["Answer"] = answer
        (folders["responses"] / name).write_text(json.dumps(record))
        (folders["road_dict"] / name).write_text(json.dumps(road_dict()))
        (folders["road_conjunction"] / name).write_text(json.dumps(conj or conjunction()))
    return folders


def score_release(responses, road_dict, road_conjunction) -> dict:
    """The published arithmetic over the stored records (``evaluators.published.srn``, what
    ``cartoqa score-release`` computes), its metrics named as they are beside cartoqa's; each
    group's crashes counted."""
    from evaluators.published import srn

    names = sorted(p.name for p in responses.glob("*.json"))

    def read(folder):
        return {n: json.loads((folder / n).read_text()) for n in names}

    ev = srn.evaluate(
        [(n, json.loads((responses / n).read_text())) for n in names],
        road_dicts=read(road_dict),
        conjunctions=read(road_conjunction),
    )
    out = {}
    for group, row in ev.table.items():
        members = [i for i in ev.items if group == "all" or f"zoom={i.groups.get('zoom')}" == group]
        out[group] = {
            "n": row["n"],
            "SR2 (original)": row["SR2"],
            "aSA (original)": row["aSA"],
            "connectivity (original)": row["connectivity"],
            "crashed (original)": sum(i.crashed is not None for i in members),
        }
    return out


def release_scores(tmp, answers, **kw) -> dict:
    f = write_release(tmp, answers, **kw)
    return score_release(f["responses"], f["road_dict"], f["road_conjunction"])["all"]


@dataclasses.dataclass
class Published:
    exact: bool
    step_accuracy: float
    connected: bool
    crash: str | None
    why: str | None


def published_of(reply: str | None, steps: list[str] = TRUTH) -> Published:
    """The published scores of a reply on the fixture's truth, through srn's registered
    "original" scorer (what ``cartoqa score --mode original`` uses)."""
    sample = Sample(
        id="srn-1",
        task="srn",
        prompt=Prompt(text="q"),
        ground_truth=RouteTruth(steps=steps, network=network()),
        metadata=Metadata(zoom=17, steps=len(steps)),
        provenance=Provenance(generator="tests"),
    )
    sc = get_task("srn").scorer("original")(sample, reply)
    crashed = bool(sc.values.get("crashed"))
    return Published(
        exact=bool(sc.values["exact"]),
        step_accuracy=sc.values["step_accuracy"],
        connected=bool(sc.values["connected"]),
        crash=sc.why if crashed else None,
        why=sc.why,
    )


# (reply, the list the published parser stores for it, SR^2, aSA, connectivity, crashes)
CASES = {
    # the truth itself
    "exact": ("[" + ", ".join(TRUTH) + "]", TRUTH, 1, 5 / 5, 1, 0),
    # zip stops at the shorter list: a strict prefix is exact, k = 3: aSA 2/5; exact is connected
    "strict prefix": (f"[blue, {S}, North Street]", ["blue", S, "North Street"], 1, 2 / 5, 1, 0),
    # the truth and more after it: exact, k = 6, aSA 5/5
    "steps after red": (
        "[" + ", ".join([*TRUTH, L, "South Lane"]) + "]",
        [*TRUTH, L, "South Lane"],
        1,
        5 / 5,
        1,
        0,
    ),
    # leading prefix only: item 1 differs, k = 1, aSA 0 (counting every match would give 4/5);
    # connectivity recomputes [blue, S, North Street, R, East Road, red]: item 1 differs
    "wrong first turn": (
        f"[blue, {L}, North Street, {R}, East Road, red]",
        ["blue", L, "North Street", R, "East Road", "red"],
        0,
        0 / 5,
        0,
        0,
    ),
    # k = 3: aSA 2/5; the recomputed turn at J is right, not left
    "wrong second turn": (
        f"[blue, {S}, North Street, {L}, East Road, red]",
        ["blue", S, "North Street", L, "East Road", "red"],
        0,
        2 / 5,
        0,
        0,
    ),
    # no "blue" first: k = 0, aSA (0 - 1) / 5, not clamped; connectivity needs blue first
    "omits blue": (
        f"[{S}, North Street, {R}, East Road, red]",
        [S, "North Street", R, "East Road", "red"],
        0,
        -1 / 5,
        0,
        0,
    ),
    # exact strings: "Blue" is not "blue"
    "capital Blue": (
        f"[Blue, {S}, North Street, {R}, East Road, red]",
        ["Blue", S, "North Street", R, "East Road", "red"],
        0,
        -1 / 5,
        0,
        0,
    ),
    # k = 2: aSA 1/5; item 2 "north street" is no key of the road dictionary
    "road in lower case": (
        f"[blue, {S}, north street, {R}, East Road, red]",
        ["blue", S, "north street", R, "East Road", "red"],
        0,
        1 / 5,
        0,
        0,
    ),
    # k = 1; "Continue straight" holds "straight", so it is an action, but the recomputed
    # item 1 is "continue straight": differs
    "action capitalised": (
        f"[blue, Continue straight, North Street, {R}, East Road, red]",
        ["blue", "Continue straight", "North Street", R, "East Road", "red"],
        0,
        0 / 5,
        0,
        0,
    ),
    # quotes stay on the items: '"blue"' is not "blue", so k = 0; connectivity: item 0 is not blue
    "JSON quotes kept": (
        json.dumps(TRUTH),
        [f'"{t}"' for t in TRUTH],
        0,
        -1 / 5,
        0,
        0,
    ),
    "backticks kept": (
        "[" + ", ".join(f"`{t}`" for t in TRUTH) + "]",
        [f"`{t}`" for t in TRUTH],
        0,
        -1 / 5,
        0,
        0,
    ),
    "single quotes kept": (
        "[" + ", ".join(f"'{t}'" for t in TRUTH) + "]",
        [f"'{t}'" for t in TRUTH],
        0,
        -1 / 5,
        0,
        0,
    ),
    # "*" and "Answer:" are removed, so markdown around the list is harmless
    "markdown answer": (
        "**Answer:** [" + ", ".join(f"**{t}**" for t in TRUTH) + "]",
        TRUTH,
        1,
        5 / 5,
        1,
        0,
    ),
    # the brackets are removed wherever they are and the whole reply split on commas: no
    # brackets read the same; text around the list joins the first and last items
    "no brackets": (", ".join(TRUTH), TRUTH, 1, 5 / 5, 1, 0),
    "text around the list": (
        "The route is [" + ", ".join(TRUTH) + "].",
        ["The route is blue", S, "North Street", R, "East Road", "red."],
        0,
        -1 / 5,
        0,
        0,
    ),
    "not a route": ("I cannot read this map.", ["I cannot read this map."], 0, -1 / 5, 0, 0),
    "empty reply": ("", [""], 0, -1 / 5, 0, 0),
    # "continue straight" between two mentions of North Street goes, with the second mention:
    # the answer becomes the truth
    "straight on the same road": (
        f"[blue, {S}, North Street, {S}, North Street, {R}, East Road, red]",
        TRUTH,
        1,
        5 / 5,
        1,
        0,
    ),
    # marks (2, 3) and (3, 4); popped from the highest down: 4, 3, then 3 again (now "red"),
    # then 2, leaving [blue, continue straight]: a strict prefix of the truth, k = 2
    "run of four straights": (
        f"[blue, {S}, {S}, {S}, {S}, red]",
        ["blue", S],
        1,
        1 / 5,
        1,
        0,
    ),
    # item 2 does not exist: the published check raises IndexError; here not connected.
    # zip: blue matches, red differs: k = 1
    "blue, red": ("[blue, red]", ["blue", "red"], 0, 0 / 5, 0, 1),
    # another drivable route: connected though not exact; item 1 differs at once: k = 1
    "detour": ("[" + ", ".join(DETOUR) + "]", DETOUR, 0, 0 / 5, 1, 0),
    # the recomputed directions [blue, R, South Lane, L, Side Street, red] are compared by zip
    # with the answer, which goes on after red: the six they share match, so connected
    "detour then more": (
        "[" + ", ".join([*DETOUR, L, "Side Street", "red"]) + "]",
        [*DETOUR, L, "Side Street", "red"],
        0,
        0 / 5,
        1,
        0,
    ),
    # "Wright Street" holds "right": read as an action, so the only road is North Street and the
    # answer passes (items 2 and -2 hold the markers); k = 4: aSA 3/5
    "Wright Street is an action": (
        f"[blue, {S}, North Street, {R}, Wright Street, red]",
        ["blue", S, "North Street", R, "Wright Street", "red"],
        0,
        3 / 5,
        1,
        0,
    ),
    # the same answer on a road of the same place called Wood Street: two roads that do not meet
    "Wood Street is a road": (
        f"[blue, {S}, North Street, {R}, Wood Street, red]",
        ["blue", S, "North Street", R, "Wood Street", "red"],
        0,
        3 / 5,
        0,
        0,
    ),
    # one road, holding both markers: passes whatever its action
    "single road, any action": (
        f"[blue, {U}, Ring Road, red]",
        ["blue", U, "Ring Road", "red"],
        0,
        0 / 5,
        1,
        0,
    ),
    # Lone Lane holds the red marker but is no key of the junction table: KeyError in the
    # published check; here not connected; k = 1
    "road missing from the junction table": (
        f"[blue, {R}, South Lane, {L}, Lone Lane, red]",
        ["blue", R, "South Lane", L, "Lone Lane", "red"],
        0,
        0 / 5,
        0,
        1,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_reply_scored_by_the_published_arithmetic(case):
    reply, _, sr2, asa, conn, crashed = CASES[case]
    sc = published_of(reply)
    assert (sc.exact, sc.connected) == (bool(sr2), bool(conn)), sc.why
    assert sc.step_accuracy == pytest.approx(asa)
    assert (sc.crash is not None) == bool(crashed), sc.crash


@pytest.mark.parametrize("case", list(CASES))
def test_a_stored_answer_scored_by_the_published_arithmetic(case, tmp_path):
    _, stored, sr2, asa, conn, crashed = CASES[case]
    got = release_scores(tmp_path, [stored])
    assert got["SR2 (original)"] == sr2
    assert got["aSA (original)"] == pytest.approx(asa)
    assert got["connectivity (original)"] == conn
    assert got["crashed (original)"] == crashed


@pytest.mark.parametrize("case", list(CASES))
def test_the_stored_list_is_what_the_published_parser_makes(case):
    reply, stored, *_ = CASES[case]
    assert published_srn.parse(reply) == stored


def test_a_set_of_answers_averages_per_zoom_and_counts_the_crashes(tmp_path):
    names = list(CASES)
    zooms = [17 + i % 3 for i in range(len(names))]
    table = score_release(
        *write_release(tmp_path, [CASES[c][1] for c in names], zooms=zooms).values()
    )
    for group, members in (("all", names), ("zoom=18", names[1::3])):
        rows = [CASES[c] for c in members]
        got = table[group]
        assert got["n"] == len(rows)
        assert got["SR2 (original)"] == pytest.approx(sum(r[2] for r in rows) / len(rows))
        assert got["aSA (original)"] == pytest.approx(sum(r[3] for r in rows) / len(rows))
        assert got["connectivity (original)"] == pytest.approx(sum(r[4] for r in rows) / len(rows))
        assert got["crashed (original)"] == sum(r[5] for r in rows)
    assert table["all"]["crashed (original)"] == 2  # [blue, red] and Lone Lane


def test_score_mode_original_reports_the_crashes_and_the_negative_asa():
    """What ``cartoqa score --mode original`` prints for SRN: score_run's table."""
    samples = [
        Sample(
            id=f"srn-{i}",
            task="srn",
            prompt=Prompt(text="q"),
            ground_truth=RouteTruth(steps=TRUTH, network=network()),
            metadata=Metadata(zoom=17, steps=6),
            provenance=Provenance(generator="tests"),
        )
        for i in range(len(CASES))
    ]
    replies = {f"srn-{i}": case[0] for i, case in enumerate(CASES.values())}
    table = score_run(samples, replies, mode="original")["srn"]["all"]
    rows = list(CASES.values())
    assert table["SR2"] == pytest.approx(sum(r[2] for r in rows) / len(rows))
    assert table["aSA"] == pytest.approx(sum(r[3] for r in rows) / len(rows))
    assert table["connectivity"] == pytest.approx(sum(r[4] for r in rows) / len(rows))
    assert table["crashed"] == 2
    assert "crashed" not in score_run(samples, {}, mode="cartoqa")["srn"]["all"]


def test_a_missing_reply_is_the_empty_reply_and_the_parser_crash_is_counted():
    sc = published_of(None)
    assert (sc.exact, sc.step_accuracy, sc.connected) == (False, pytest.approx(-1 / 5), False)
    # [cs, cs, cs, cs]: marks (1, 2) and (2, 3); popped 3, 2, then 2 again with two items left:
    # the published parser raises, scored here as the empty reply
    sc = published_of(f"[{S}, {S}, {S}, {S}]")
    assert (sc.exact, sc.step_accuracy, sc.connected) == (False, pytest.approx(-1 / 5), False)
    assert sc.crash and "IndexError" in sc.crash


def test_the_truth_is_not_normalised(tmp_path):
    """evaluate_srn.py splits route_directions on commas and compares: only the answer goes
    through the continue-straight normalisation (in the published parser), so the truth itself
    written out is not exact where it repeats a road after "continue straight"."""
    repeated = ["blue", S, "North Street", S, "North Street", R, "East Road", "red"]
    # the answer is normalised to TRUTH, the truth is not: k = 3, aSA 2/7
    sc = published_of("[" + ", ".join(repeated) + "]", steps=repeated)
    assert (sc.exact, sc.step_accuracy) == (False, pytest.approx(2 / 7))
    got = release_scores(tmp_path, [TRUTH], truth="[" + ", ".join(repeated) + "]")
    assert (got["SR2 (original)"], got["aSA (original)"]) == (0, pytest.approx(2 / 7))


def test_the_junction_table_is_read_next_then_previous(tmp_path):
    """The detour leaves South Lane for Side Street: the published check looks up
    conj["Side Street"]["South Lane"]."""
    forward = {"Side Street": {"South Lane": [point(4)]}, "South Lane": {}}
    assert release_scores(tmp_path / "a", [DETOUR], conj=forward)["connectivity (original)"] == 1
    backward = {"South Lane": {"Side Street": [point(4)]}, "Side Street": {}}
    got = release_scores(tmp_path / "b", [DETOUR], conj=backward)
    assert (got["connectivity (original)"], got["crashed (original)"]) == (0, 0)
    # Side Street no key at all: the published check raises KeyError
    got = release_scores(tmp_path / "c", [DETOUR], conj={"South Lane": {}})
    assert (got["connectivity (original)"], got["crashed (original)"]) == (0, 1)
    # listed, but with no junction node: IndexError
    empty: dict = {"Side Street": {"South Lane": []}, "South Lane": {}}
    got = release_scores(tmp_path / "d", [DETOUR], conj=empty)
    assert (got["connectivity (original)"], got["crashed (original)"]) == (0, 1)


def test_the_junction_node_is_the_first_listed(tmp_path):
    """Directions run through conj[next][previous][0]: listed first, a far node of the pair makes
    the recomputed turn at it another one."""
    # a junction at (0, -0.001) lies west of O: bearing 270 from the starting heading 0 is a
    # left turn, and the answer says right, so not connected
    far = {"Side Street": {"South Lane": [[9, 0.0, -0.001], point(4)]}, "South Lane": {}}
    assert release_scores(tmp_path / "a", [DETOUR], conj=far)["connectivity (original)"] == 0
    near = {"Side Street": {"South Lane": [point(4), [9, 0.0, -0.001]]}, "South Lane": {}}
    assert release_scores(tmp_path / "b", [DETOUR], conj=near)["connectivity (original)"] == 1


def test_a_missing_or_empty_answer(tmp_path):
    # no Answer: the published evaluator raises KeyError; scored as the empty reply, counted
    got = release_scores(tmp_path / "a", [...])
    assert got["SR2 (original)"] == 0 and got["aSA (original)"] == pytest.approx(-1 / 5)
    assert (got["connectivity (original)"], got["crashed (original)"]) == (0, 1)
    # an empty list: zip finds no difference, so exact (and so connected), with k = 0
    got = release_scores(tmp_path / "b", [[]])
    assert got["SR2 (original)"] == 1 and got["aSA (original)"] == pytest.approx(-1 / 5)
    assert (got["connectivity (original)"], got["crashed (original)"]) == (1, 0)


@pytest.mark.parametrize(
    ("change", "action"),
    [
        (0, S),
        (39.9, S),
        (40.1, R),  # the published file's other rule (30 / 150 / 210 / 330) is not the one used
        (139.9, R),
        (140.1, U),
        (219.9, U),
        (220.1, L),
        (319.9, L),
        (320.1, S),
    ],
)
def test_turn_thresholds(change, action):
    for start in (0.0, 100.0, 350.0):
        assert published_turn(start, (start + change) % 360) == action


def _popped(steps: list[str]) -> list[str] | None:
    """The normalisation as the spec's quirk states it, on a copy: mark every "continue
    straight" between two equal items and the item after it, then pop the marked positions
    from the highest down (None when a pop runs past the end)."""
    marks = []
    for i in range(1, len(steps) - 1):
        if steps[i] == S and steps[i - 1] == steps[i + 1]:
            marks += [i, i + 1]
    out = list(steps)
    for i in sorted(marks, reverse=True):
        if i >= len(out):
            return None
        del out[i]
    return out


@given(st.lists(st.sampled_from([S, "A", "B", "blue"]), max_size=14))
def test_the_normalisation_pops_as_the_published_one(steps):
    assert published_normalisation(steps) == _popped(steps)


def test_the_normalisation_of_a_long_answer_is_linear():
    rng = random.Random(5)
    steps = [rng.choice([S, "A", S, "B"]) for _ in range(9_000)]
    assert published_normalisation(steps) == _popped(steps)
    # 9,000 straights (MAX_ROUTE_STEPS allows 10,000) through the parser: the published pops
    # run past the end of the list, so it raises; said, not raised
    items, crash = published_parse("[blue, " + ", ".join([S] * 9_000) + ", red]")
    assert items is None and "IndexError" in str(crash)
