"""The map-feature truths under ``lang:XX`` (issue 32): ``cartoqa.tasks.poi.view_truth`` with
an engine drawing labels in French (``MapEngine.in_language("fr")``) gives names as that
engine writes them: ``name:fr`` where an object has one, its ``name`` where it has none or an
empty one.

Real PostGIS, Mapnik and the generator, on a tiny extract written here: a street grid just
larger than one zoom-19 view, so that every view the generator makes shows the whole row of
four restaurants and a café between its streets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cartoqa.records import BooleanTruth, CountTruth, FeatureTableTruth, NamesTruth
from cartoqa.tasks.poi import attempt_map_features, view_truth
from cartoqa.tasks.views import Plan, Reject, ViewSampler

from .osm_xml import osm_grid_xml, write_osm
from .road_fixtures import ll

#: node id -> (grid x, grid y, tags): restaurants and a café 35 m apart, between the streets
PLACES = {
    501: (1.4, 1.5, {"amenity": "restaurant", "name": "Harbour Grill", "name:fr": "Grill du Port"}),
    502: (1.75, 1.5, {"amenity": "restaurant", "name": "Blue Fish", "name:fr": "Poisson Bleu"}),
    503: (2.1, 1.5, {"amenity": "restaurant", "name": "Sun Deck"}),
    504: (2.45, 1.5, {"amenity": "restaurant", "name": "Old Mill", "name:fr": ""}),
    505: (2.8, 1.5, {"amenity": "cafe", "name": "Corner Cafe", "name:fr": "Café du Coin"}),
}
#: the names a French map writes: name:fr, else name
FRENCH = {"Harbour Grill": "Grill du Port", "Blue Fish": "Poisson Bleu",
          "Corner Cafe": "Café du Coin"}  # fmt: skip


def _write(path: Path) -> None:
    nodes, ways = osm_grid_xml(5, 4, step=1.0)  # 400 m x 300 m: just over one zoom-19 view
    for n, (x, y, tags) in PLACES.items():
        lat, lon = ll(x, y)
        nodes.append(
            f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}">'
            + "".join(f'<tag k="{k}" v="{v}"/>' for k, v in tags.items())
            + "</node>"
        )
    write_osm(path, nodes + ways)


@pytest.fixture(scope="module")
def harbour(cluster, cache, carto_files, tmp_path_factory):
    """(base engine, French engine, map-feature plans of the tiny extract)."""
    from maps import MapEngine
    from maps.labels import RoadLabels
    from maps.roads import load_road_graph

    path = tmp_path_factory.mktemp("feature-lang") / "harbour.osm"
    _write(path)
    base = MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)
    roads = load_road_graph(base.extract, cache=cache)
    sampler = ViewSampler(
        roads, RoadLabels(base), base.extract.bounds, 3, repeat_places=True
    )  # fmt: skip
    plans: list[Plan] = []
    for i in range(20):
        if len(plans) == 2:
            break
        try:
            plans.append(attempt_map_features(sampler, i))
        except Reject:
            continue
    assert len(plans) == 2
    return base, base.in_language("fr"), plans


def _french(names: list[str]) -> list[str]:
    return sorted(FRENCH.get(n, n) for n in names)


def test_names_are_those_the_french_map_writes_falling_back_to_name(harbour):
    base, french, plans = harbour
    asked = set()
    for plan in plans:
        table = next(q.truth for q in plan.questions if q.task == "mtmf")
        assert isinstance(table, FeatureTableTruth)
        # the premise: the view shows every place whole, each with its name written
        assert table.features["restaurant"].names == [
            "Blue Fish", "Harbour Grill", "Old Mill", "Sun Deck"
        ]  # fmt: skip
        assert table.features["coffee_shop"].names == ["Corner Cafe"]
        for q in plan.questions:
            again = view_truth(plan, q, base, plan.view)
            assert again.model_dump_json() == q.truth.model_dump_json()
            got = view_truth(plan, q, french, plan.view)
            assert type(got) is type(q.truth), (q.suffix, got)
            asked.add(q.task)
            if isinstance(got, NamesTruth):
                assert got.names == _french(q.truth.names)
                assert got.optional == _french(q.truth.optional)
                assert got.feature_type == q.truth.feature_type
            elif isinstance(got, FeatureTableTruth):
                for key, c in q.truth.features.items():
                    g = got.features[key]
                    assert (g.count, g.optional_count) == (c.count, c.optional_count), key
                    assert g.names == _french(c.names), key
                    assert g.optional_names == _french(c.optional_names), key
                assert got.features["restaurant"].names == [
                    "Grill du Port", "Old Mill", "Poisson Bleu", "Sun Deck"
                ]  # fmt: skip
                assert got.features["coffee_shop"].names == ["Café du Coin"]
                # the evidence: the French label, found where the French map wrote it
                labels = {f.osm: (f.label, f.label_box) for f in got.evidence}
                assert labels["node/501"][0] == "Grill du Port" and labels["node/501"][1]
                assert labels["node/503"][0] == "Sun Deck" and labels["node/503"][1]
            else:
                assert isinstance(got, BooleanTruth | CountTruth)
                # the same places drawn, only their names in French
                assert got.model_dump(exclude={"features"}) == q.truth.model_dump(
                    exclude={"features"}
                )
    assert asked == {"stmf_presence", "stmf_count", "stmf_names", "mtmf"}
