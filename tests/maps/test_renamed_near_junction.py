"""An MML junction where a road takes another name a few metres away (issue 26, finding 7):
a tiny extract written by the test, rendered with the real style.

Reno mml-0001: at the marker "Oak Avenue" meets "Main Street", but 15 m north Oak Avenue
becomes "Elm Road", whose label stands nearer the marker than Oak Avenue's own.  A reader
names the label they see next to the marker: the question is rejected.  With Elm Road's
name change 150 m away the same junction makes a question.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from cartoqa.tasks.navigation import RENAME_M, attempt_mml
from cartoqa.tasks.views import Reject, ViewSampler, view_pixels
from maps import MapEngine
from maps.labels import RoadLabels
from maps.roads import load_road_graph

from .osm_xml import write_osm
from .road_fixtures import ll


def town_xml(change_at: float) -> list[str]:
    """Main Street east-west through J at (0, 0), from x = -6 to 6; Oak Avenue from (0, -9)
    north to J and on to (0, ``change_at``); Elm Road from there north to (0, 5)."""
    points = {
        1: (-6, 0),
        2: (0, 0),  # J
        3: (6, 0),
        4: (0, -9),
        5: (0, -4.5),
        6: (0, change_at),
        7: (0, 2.5),
        # the corners of a residential area around it all (the data's extent)
        11: (-7, -10),
        12: (7, -10),
        13: (7, 3.5),
        14: (-7, 3.5),
    }
    lines = []
    for n, (x, y) in points.items():
        lat, lon = ll(x, y)
        lines.append(f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>')

    def way(wid: int, refs: list[int], name: str) -> str:
        nds = "".join(f'<nd ref="{r}"/>' for r in refs)
        return (
            f'  <way id="{wid}" version="1">{nds}<tag k="highway" v="residential"/>'
            f'<tag k="name" v="{name}"/></way>'
        )

    lines += [
        way(101, [1, 2, 3], "Main Street"),
        way(102, [4, 5, 2, 6], "Oak Avenue"),
        way(103, [6, 7], "Elm Road"),
        '  <way id="104" version="1"><nd ref="11"/><nd ref="12"/><nd ref="13"/><nd ref="14"/>'
        '<nd ref="11"/><tag k="landuse" v="residential"/></way>',
    ]
    return lines


def engine(folder, change_at, cluster, cache, carto_files) -> MapEngine:
    path = folder / f"oak-{int(change_at * 100)}m.osm"
    write_osm(path, town_xml(change_at))
    return MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)


def mml_outcomes(eng: MapEngine, cache, tries: int = 30) -> tuple[list, Counter]:
    roads = load_road_graph(eng.extract, cache=cache)
    sampler = ViewSampler(roads, RoadLabels(eng), eng.extract.bounds, seed=2, repeat_places=True)
    plans, why = [], Counter()
    for i in range(tries):
        try:
            plans.append(attempt_mml(sampler, "blue" if i % 2 == 0 else "red"))
        except Reject as r:
            why[r.reason] += 1
    return plans, why


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("renamed")


def test_a_name_change_15_m_from_the_junction_with_the_nearer_label_is_rejected(
    folder, cluster, cache, carto_files
):
    assert RENAME_M > 15
    eng = engine(folder, 0.15, cluster, cache, carto_files)
    plans, why = mml_outcomes(eng, cache)
    assert why["name_changes_near_junction"] > 0, why
    labels = RoadLabels(eng)
    for p in plans:  # a question left has Oak Avenue's label nearer than any of Elm Road's
        (truth,) = [q.truth for q in p.questions]
        assert {truth.road_1, truth.road_2} == {"Main Street", "Oak Avenue"}
        (marker,) = view_pixels(
            p.view.center, p.view.zoom, [(m.lat, m.lon) for m in p.view.markers]
        )
        shown = labels.ways(p.view, [marker])
        (oak,) = [b.box for b in truth.labels if b.road == "Oak Avenue"]
        elm = [
            b for w, boxes in shown.visible.items() if shown.name_of[w] == "Elm Road" for b in boxes
        ]
        assert all(far(b, marker) >= far(oak, marker) for b in elm)


def far(box, point) -> float:
    return math.hypot((box[0] + box[2]) / 2 - point[0], (box[1] + box[3]) / 2 - point[1])


def test_a_name_change_150_m_away_leaves_the_junction_askable(folder, cluster, cache, carto_files):
    plans, why = mml_outcomes(engine(folder, 1.5, cluster, cache, carto_files), cache)
    assert why["name_changes_near_junction"] == 0
    assert plans, why
