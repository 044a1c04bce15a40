"""SRN's and MML's truths under ``lang:XX`` (issue 32): ``cartoqa.tasks.navigation_views`` with
an engine drawing labels in French (``MapEngine.in_language("fr")``).

Real PostGIS, Mapnik, osmnx and the generators, on a street grid written here whose ways carry
``name:fr`` in every way that matters: a street translated whole, one not translated, one
with an empty ``name:fr`` (the map falls back to ``name``), one translated on half its length
only (its name changes mid-street on the French map), and two streets that take one French
name.  The expected truths are worked out here from the ways as written (which ways a leg or
a junction uses, and their French names), not by the code under test.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from cartoqa.records import RoadPairTruth, RouteTruth
from cartoqa.tasks.navigation import attempt_mml, attempt_srn
from cartoqa.tasks.navigation_views import mml_view_truth, srn_view_truth
from cartoqa.tasks.views import Plan, Question, Reject, ViewSampler
from maps import Marker, View
from maps.routes import route_from_nodes

from .road_fixtures import ll

NX, NY = 6, 4  # a 500 m x 300 m grid, 100 m between streets: only zoom-19 views fit
#: (way id, grid points it runs through, name, name:fr or None)
WAYS = [
    (2000, [(i, 0) for i in range(NX)], "Row 0", "Rang Zéro"),
    (2001, [(i, 1) for i in range(4)], "Row 1", "Rang Un"),  # translated west of column 3
    (2002, [(i, 1) for i in range(3, NX)], "Row 1", None),  # ... and not east of it
    (2003, [(i, 2) for i in range(NX)], "Row 2", "Rue du Pont"),
    (2004, [(i, 3) for i in range(NX)], "Row 3", None),
    (2010, [(0, j) for j in range(NY)], "Column 0", "Colonne Zéro"),
    (2011, [(1, j) for j in range(NY)], "Column 1", "Colonne Un"),
    (2012, [(2, j) for j in range(NY)], "Column 2", ""),  # empty: the map writes name
    (2013, [(3, j) for j in range(NY)], "Column 3", None),
    (2014, [(4, j) for j in range(NY)], "Column 4", "Rue du Pont"),  # Row 2's French name
    (2015, [(5, j) for j in range(NY)], "Column 5", "Colonne Cinq"),
]


def _node(i: int, j: int) -> int:
    return 1 + i + j * NX


def _french(name: str, fr: str | None) -> str:
    return fr.strip() if fr and fr.strip() else name


#: (node, node) -> the French name of the way between them, both ways round
FRENCH_BETWEEN = {
    pair: _french(name, fr)
    for _, points, name, fr in WAYS
    for a, b in itertools.pairwise(points)
    for pair in ((_node(*a), _node(*b)), (_node(*b), _node(*a)))
}
FRENCH_NAMES = set(FRENCH_BETWEEN.values())


def _write(path: Path) -> None:
    lines = []
    for j in range(NY):
        for i in range(NX):
            lat, lon = ll(i, j)
            lines.append(
                f'  <node id="{_node(i, j)}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>'
            )
    for wid, points, name, fr in WAYS:
        tags = {"highway": "residential", "name": name}
        if fr is not None:
            tags["name:fr"] = fr
        lines.append(
            f'  <way id="{wid}" version="1">'
            + "".join(f'<nd ref="{_node(*p)}"/>' for p in points)
            + "".join(f'<tag k="{k}" v="{v}"/>' for k, v in tags.items())
            + "</way>"
        )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6" generator="cartoqa">\n'
        + "\n".join(lines)
        + "\n</osm>\n"
    )


@pytest.fixture(scope="module")
def grid(cluster, cache, carto_files, tmp_path_factory):
    """(base engine, French engine, road graph, SRN plans, MML plans) of the grid."""
    from maps import MapEngine
    from maps.labels import RoadLabels
    from maps.roads import load_road_graph

    path = tmp_path_factory.mktemp("nav-lang") / "grid.osm"
    _write(path)
    base = MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)
    roads = load_road_graph(base.extract, cache=cache)
    sampler = ViewSampler(roads, RoadLabels(base), base.extract.bounds, 5, repeat_places=True)
    plans: dict[str, list[Plan]] = {"srn": [], "mml": []}
    why: Counter[str] = Counter()
    for i in range(120):
        for task, attempt in (
            ("srn", lambda: attempt_srn(sampler)),
            ("mml", lambda: attempt_mml(sampler, "blue" if i % 2 == 0 else "red")),  # noqa: B023
        ):
            if len(plans[task]) >= 6:
                continue
            try:
                plans[task].append(attempt())
            except Reject as exc:
                why[f"{task}:{exc.reason}"] += 1
    srn, mml = plans["srn"], plans["mml"]
    assert len(srn) >= 3 and len(mml) >= 3, (len(srn), len(mml), why)
    return base, base.in_language("fr"), roads, srn, mml


def _expected_route(truth: RouteTruth) -> list[str] | str:
    """The French steps of a route, or the reason it has none, from the ways as written."""
    legs = [{FRENCH_BETWEEN[p] for p in itertools.pairwise(leg.nodes)} for leg in truth.legs]
    if any(len(names) > 1 for names in legs):
        return "name_differs_along_road"
    names = [next(iter(n)) for n in legs]
    if any(a == b for a, b in itertools.pairwise(names)):
        return "names_merge_in_language"
    steps = list(truth.steps)
    for k, name in enumerate(names):
        steps[2 + 2 * k] = name  # ["blue", action, road, action, road, ..., "red"]
    return steps


def _expected_pair(node: int) -> tuple[str, str] | str:
    names = {n for (a, _), n in FRENCH_BETWEEN.items() if a == node}
    if len(names) > 2:
        return "name_differs_along_road"
    if len(names) < 2:
        return "names_merge_in_language"
    first, second = sorted(names)
    return first, second


def test_the_base_engine_gives_each_question_its_own_truth_byte_for_byte(grid):
    base, _, roads, srn, mml = grid
    for plan in srn:
        (q,) = plan.questions
        again = srn_view_truth(plan, q, base, plan.view, roads)
        assert again.model_dump_json() == q.truth.model_dump_json(), plan.view.id
    for plan in mml:
        (q,) = plan.questions
        again = mml_view_truth(plan, q, base, plan.view, roads)
        assert again.model_dump_json() == q.truth.model_dump_json(), plan.view.id


def test_french_routes_name_the_roads_as_the_french_map_writes_them(grid):
    _, french, roads, srn, _ = grid
    matched = 0
    for plan in srn:
        (q,) = plan.questions
        got = srn_view_truth(plan, q, french, plan.view, roads)
        want = _expected_route(q.truth)
        if isinstance(want, str):
            assert got == want, plan.view.id
            continue
        if isinstance(got, str):  # a French label the map could not place: a fair reason
            assert got in ("road_name_not_drawn",), (plan.view.id, got)
            continue
        assert got.steps == want, plan.view.id
        assert got.nodes == q.truth.nodes
        assert [leg.road for leg in got.legs] == want[2:-1:2]
        for leg, old in zip(got.legs, q.truth.legs, strict=True):
            assert leg.points_px == old.points_px and leg.action == old.action
            assert leg.label is not None and leg.label.road == leg.road
        # the network a connectivity check reads: French names only, the route's among them
        assert set(got.network.roads) <= FRENCH_NAMES
        assert set(want[2:-1:2]) <= set(got.network.roads)
        matched += 1
    assert matched >= 2


def _route_question(roads, a: tuple[int, int], b: tuple[int, int]) -> tuple[Plan, Question]:
    """An SRN question from grid point a to b (``_line``), on a zoom-19 view around them."""
    route = route_from_nodes(roads.graph, [_node(*p) for p in _line(a, b)])
    truth = RouteTruth(steps=list(route.steps), nodes=list(route.nodes))
    (la, oa), (lb, ob) = ll(*a), ll(*b)
    view = View.make(
        ((la + lb) / 2, (oa + ob) / 2),
        19,
        markers=[Marker(la, oa, "blue"), Marker(lb, ob, "red")],
        id="forced",
    )
    q = Question("", "", truth, {})
    return Plan("srn", view, [q]), q


def _line(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int]]:
    """Grid points from a to b: along a's row, then along b's column."""
    (i0, j0), (i1, j1) = a, b
    di = 1 if i1 >= i0 else -1
    dj = 1 if j1 >= j0 else -1
    row = [(i, j0) for i in range(i0, i1 + di, di)]
    col = [(i1, j) for j in range(j0 + dj, j1 + dj, dj)] if j1 != j0 else []
    return row + col


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        ((2, 1), (4, 1), "name_differs_along_road"),  # Row 1 across column 3
        ((2, 2), (4, 3), "names_merge_in_language"),  # Row 2 then Column 4: one French name
    ],
)
def test_a_route_the_french_map_names_otherwise_is_left_out_with_its_reason(grid, a, b, reason):
    _, french, roads, _, _ = grid
    plan, q = _route_question(roads, a, b)
    assert _expected_route_from_nodes(q.truth.nodes) == reason  # the fixture's premise
    assert srn_view_truth(plan, q, french, plan.view, roads) == reason


def _expected_route_from_nodes(nodes: list[int]) -> str | None:
    """The reason a route through ``nodes`` has no French truth (None: it has one)."""
    pairs = list(itertools.pairwise(nodes))
    french = [FRENCH_BETWEEN[p] for p in pairs]
    names = [_base_between(p) for p in pairs]
    for name in set(names):
        if len({f for f, n in zip(french, names, strict=True) if n == name}) > 1:
            return "name_differs_along_road"
    runs = [k for k, _ in itertools.groupby(names)]
    french_runs = [k for k, _ in itertools.groupby(french)]
    return "names_merge_in_language" if len(french_runs) < len(runs) else None


def _base_between(pair: tuple[int, int]) -> str:
    for _, points, name, _ in WAYS:
        ids = [_node(*p) for p in points]
        if any(set(pair) == {x, y} for x, y in itertools.pairwise(ids)):
            return name
    raise AssertionError(pair)


def test_french_junctions_name_the_two_roads_as_the_french_map_writes_them(grid):
    _, french, roads, _, mml = grid
    matched = 0
    for plan in mml:
        (q,) = plan.questions
        got = mml_view_truth(plan, q, french, plan.view, roads)
        want = _expected_pair(q.truth.junction)
        if isinstance(want, str):
            assert got == want, plan.view.id
            continue
        if isinstance(got, str):
            assert got in ("road_name_not_drawn", "label_beyond_corner"), (plan.view.id, got)
            continue
        assert isinstance(got, RoadPairTruth)
        assert (got.road_1, got.road_2) == want
        assert {lb.road for lb in got.labels} == set(want)
        matched += 1
    assert matched >= 2
    # the junctions the French map names otherwise, asked directly
    for point, reason in (((3, 1), "name_differs_along_road"), ((4, 2), "names_merge_in_language")):
        node = _node(*point)
        assert _expected_pair(node) == reason
        lat, lon = ll(*point)
        view = View.make((lat, lon), 19, markers=[Marker(lat, lon, "blue")], id="junction")
        names = sorted(roads.roads_at(node))
        q = Question("", "", RoadPairTruth(road_1=names[0], road_2=names[1], junction=node), {})
        assert mml_view_truth(Plan("mml", view, [q]), q, french, view, roads) == reason
