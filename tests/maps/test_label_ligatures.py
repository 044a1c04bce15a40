"""Names with ligatures are whole labels (issue 26, finding 2).

An outside review found the river "Hoffselva", a whole, sharp label on a long straight
line, taken as cut: the style's fonts (Noto Sans, regular and italic) draw "ff", "fi",
"fl", "ffi" and "ffl" as one glyph each, and the whole-label check wanted as many glyph
boxes as the name has letters.  The same check decides which road names SRN and MML may
ask about.  Here a tiny extract written by the test has the river and three streets whose
names ligate, each a long straight line across the view, drawn whole (and two, "Fifth
Avenue" and "Fleet Street", whose capital F does not ligate).  Labels cut at the view's
edge stay partial: ``test_labels.py`` checks that on Monaco.
"""

from __future__ import annotations

import pytest

from cartoqa.tasks.poi import drawn_features, feature_labels, tally
from maps import MapEngine, View
from maps.glyphs import glyph_count

from .osm_xml import write_osm
from .road_fixtures import ll

#: (way id, tags, y in grid units, x from, x to): horizontal lines, 100 m a grid unit
LINES = [
    (7001, {"waterway": "river", "name": "Hoffselva"}, 0.0, -1.2, 1.2),
    (7002, {"highway": "residential", "name": "Fifth Avenue"}, 0.25, -1.2, 1.2),
    (7003, {"highway": "residential", "name": "Fleet Street"}, -0.25, -1.2, 1.2),
    (7004, {"highway": "primary", "name": "Waffle Lane"}, 0.5, -1.2, 1.2),
    (7005, {"highway": "residential", "name": "Garfield Avenue"}, -0.5, -1.2, 1.2),
    (7006, {"highway": "residential", "name": "Mayflower Street"}, -0.75, -1.2, 1.2),
]
#: the streets whose names ligate ("Fi", "Fl": a capital F does not)
LIGATED = (7004, 7005, 7006)
NAMES = {way: tags["name"] for way, tags, *_ in LINES}


def _xml(path) -> None:
    nodes, ways = [], []
    nid = 1
    for way, tags, y, xa, xb in LINES:
        refs = []
        for k in range(9):
            lat, lon = ll(xa + (xb - xa) * k / 8, y)
            nodes.append(f'  <node id="{nid}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>')
            refs.append(nid)
            nid += 1
        t = "".join(f'<tag k="{k}" v="{v}"/>' for k, v in tags.items())
        nd = "".join(f'<nd ref="{r}"/>' for r in refs)
        ways.append(f'  <way id="{way}" version="1">{nd}{t}</way>')
    write_osm(path, [*nodes, *ways])


@pytest.fixture(scope="module")
def engine(cluster, cache, carto_files, tmp_path_factory):
    path = tmp_path_factory.mktemp("ligatures") / "ligatures.osm"
    _xml(path)
    return MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)


def test_the_fonts_ligate_these_names_so_they_have_fewer_glyphs_than_letters():
    assert glyph_count("Hoffselva") == 8  # "ff" one glyph
    assert glyph_count("Fifth Avenue") == 11  # "Fi" and "ft" do not ligate
    assert glyph_count("Waffle Lane") == 8  # "ffl" one glyph
    assert glyph_count("fjord fish flat") == 11  # "fi", "fl"
    assert glyph_count("Garfield Avenue") == 13  # "fi"
    assert glyph_count("Mayflower Street") == 14  # "fl"
    assert glyph_count("Edge Street") == 10  # no ligature: one glyph a letter


@pytest.mark.parametrize("zoom", [19, 18])
def test_a_river_named_with_a_ligature_is_drawn_whole_and_counted(engine, zoom):
    view = View.make(ll(0.0, 0.0), zoom, id=f"lig-{zoom}")
    objs = {o.row.osm_id: o for o in feature_labels(engine).view(view) if o.row.table == "l"}
    river = objs[7001]
    assert river.label is not None and not river.label_partial, river
    assert river.label_text == "Hoffselva"
    waffle = objs[7004]
    assert waffle.label is not None and not waffle.label_partial
    counts = tally(drawn_features(list(objs.values()), zoom))
    assert counts["river"].shown == 1 and counts["river"].names == ["Hoffselva"]
    assert counts["primary_road"].shown == 1 and counts["primary_road"].names == ["Waffle Lane"]


@pytest.mark.parametrize("zoom", [19, 18])
def test_roads_named_with_ligatures_are_drawn_whole_for_srn_and_mml(engine, zoom):
    from maps.labels import RoadLabels

    labels = RoadLabels(engine)
    view = View.make(ll(0.0, 0.0), zoom, id=f"lig-roads-{zoom}")
    ways = labels.ways(view)
    for way in (7002, 7003, *LIGATED):
        assert way in ways.visible, (NAMES[way], zoom, sorted(ways.partial))
    assert {NAMES[w] for w in (7002, 7003, *LIGATED)} <= labels.names(view).visible
