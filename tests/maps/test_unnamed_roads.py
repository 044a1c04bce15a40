"""An extract whose drivable roads have no names (issue: `cartoqa build` crashed with
"IndexError: Cannot choose from an empty sequence").

SRN and MML need named roads: each of their candidates is rejected as ``no_named_roads`` and
the build stops with a clear error; RLE needs no names and still samples.
"""

from __future__ import annotations

import pytest

from cartoqa.errors import CartoqaError
from cartoqa.tasks import build_dataset
from cartoqa.tasks.navigation import attempt_mml, attempt_rle, attempt_srn
from cartoqa.tasks.views import Reject, ViewSampler
from maps import MapEngine
from maps.labels import RoadLabels
from maps.roads import load_road_graph

from .road_fixtures import write_osm_grid


@pytest.fixture(scope="module")
def unnamed(cluster, cache, carto_files, tmp_path_factory):
    """A MapEngine on a 1.6 km x 1.2 km grid of unnamed residential streets."""
    path = tmp_path_factory.mktemp("unnamed") / "unnamed-grid.osm"
    write_osm_grid(path, 9, 7, names=False)
    return MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)


def test_the_sampler_rejects_srn_and_mml_as_no_named_roads(unnamed, cache):
    roads = load_road_graph(unnamed.extract, cache=cache)
    assert roads.graph.number_of_edges() > 50 and roads.unnamed_share() == 1.0
    sampler = ViewSampler(roads, RoadLabels(unnamed), unnamed.extract.bounds, seed=1)
    assert 19 in sampler.zooms  # big enough for a view: the names are what is missing
    for attempt in (lambda: attempt_srn(sampler), lambda: attempt_mml(sampler, "blue")):
        for _ in range(5):
            with pytest.raises(Reject) as r:
                attempt()
            assert r.value.reason == "no_named_roads"
    # RLE needs no names: some candidate makes a plan
    plans = []
    for i in range(200):
        try:
            plans.append(attempt_rle(sampler, "simple" if i % 2 == 0 else "complex"))
        except Reject:
            continue
        break
    assert plans and plans[0].task == "rle"


def test_build_on_an_extract_without_names_fails_clearly(unnamed, tmp_path):
    with pytest.raises(CartoqaError) as err:
        build_dataset(
            tmp_path / "ds", engine=unnamed, tasks=["srn", "mml"], per_task=1, progress=False
        )
    msg = str(err.value)
    assert "no_named_roads" in msg and "unnamed-grid" in msg
    assert not (tmp_path / "ds" / "manifest.json").exists()
