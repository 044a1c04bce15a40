"""One Mapnik render of a metatile serves its tiles, its placement boxes and the road-label
check (issue 31): the label check reads the boxes the tiles' own render placed instead of
drawing the metatile again, keeps that render in the tiles' memory, and an accepted view's
tiles are stored from it, so that rendering the view draws nothing again.  A candidate that
may still be rejected gets no tile encoded.  The coded render draws only what places and
what lies above the road names (``maps.colour_coded.without_background``)."""

from __future__ import annotations

import copy

import pytest

from maps import View
from maps.colour_coded import BACKGROUND
from maps.labels import RoadLabels, _coded_xml
from maps.projection import pixel_box
from maps.style import style_xml
from maps.tiles import TileRenderer


@pytest.fixture
def fresh(engine_for, tmp_path):
    """Monaco's engine with a tile renderer of its own over an empty tile cache."""
    base = engine_for("monaco.osm.pbf")
    engine = copy.copy(base)
    engine.tiles = TileRenderer(base.style, base.database, cache=tmp_path)
    return engine


def view_tiles(engine, view: View) -> list[tuple[int, int, int]]:
    box = pixel_box(view.center, view.zoom, view.width, view.height)
    return engine.tiles.tiles_for(view.zoom, *box)


def test_the_label_check_draws_each_metatile_once_for_tiles_boxes_and_labels(fresh):
    labels = RoadLabels(fresh)
    view = View.make(fresh.extract.center, 18, id="centre-z18")
    assert labels.names(view).visible  # the check ran and found names
    metatiles = {fresh.tiles.metatile_of(*t) for t in view_tiles(fresh, view)}
    # the tiles' renderer drew each metatile of the view once, with its boxes; the check
    # drew no plain copy of its own
    assert fresh.tiles.rendered_metatiles == len(metatiles)
    assert "plain" not in labels._maps
    assert all(fresh.tiles.boxes_path(*m).is_file() for m in metatiles)
    # a candidate may still be rejected: none of its tiles is encoded yet
    assert not list(fresh.tiles.folder.rglob("*.png"))
    # accepted: its tiles come from the kept renders, and rendering it draws nothing again
    assert labels.keep_tiles(view) == len(view_tiles(fresh, view))
    assert labels.keep_tiles(view) == 0  # stored once
    shot = fresh.render(view)
    assert shot.png and not shot.aborted
    assert fresh.tiles.rendered_metatiles == len(metatiles)


def test_tiles_of_metatiles_no_longer_kept_are_left_to_the_render(fresh):
    labels = RoadLabels(fresh)
    view = View.make(fresh.extract.center, 19, id="centre-z19")
    labels.ways(view)
    fresh.tiles._images.clear()  # pushed out of the tiles' memory by later candidates
    assert labels.keep_tiles(view) == 0
    assert not list(fresh.tiles.folder.rglob("*.png"))


def test_the_coded_road_label_style_leaves_out_what_only_paints(engine_for):
    engine = engine_for("monaco.osm.pbf")
    plain = style_xml(engine.style, engine.database.connection)
    coded = _coded_xml(plain, "cq0")
    # under the road names: fills, casings and roads only paint, and are left out...
    for layer in ("water-areas", "buildings", "roads-casing", "roads-fill", "bridges"):
        assert f'name="{layer}" srs=' in plain and f'name="{layer}" srs=' not in coded
    # ...what places (icons, junction names) stays, as does everything above the names; the
    # placement check (tests/maps/test_labels.py) proves the boxes equal render after render
    for layer in ("amenity-points", "junctions", "roads-text-name", "text-point", "addresses"):
        assert f'name="{layer}" srs=' in coded
    assert f'background-color="{BACKGROUND}"' in coded
    assert len(coded) < len(plain)


def test_a_metatile_coded_once_serves_every_build_on_the_cache(fresh):
    view = View.make(fresh.extract.center, 18, id="centre-z18")
    first = RoadLabels(fresh)
    want = first.ways(view)
    drawn = fresh.tiles.rendered_metatiles
    metatiles = sorted({fresh.tiles.metatile_of(*t) for t in view_tiles(fresh, view)})
    assert all(first.glyphs_path(*m).is_file() for m in metatiles)
    # another build (another process, another worker) on the same cache reads them: no
    # Mapnik render at all, the same answer
    again = RoadLabels(fresh)
    assert again.ways(view) == want
    assert fresh.tiles.rendered_metatiles == drawn and not again._maps


def test_a_bad_stored_metatile_is_dropped_and_coded_again(fresh, caplog):
    view = View.make(fresh.extract.center, 18, id="centre-z18")
    want = RoadLabels(fresh).ways(view)
    metatile = fresh.tiles.metatile_of(*view_tiles(fresh, view)[0])
    labels = RoadLabels(fresh)
    path = labels.glyphs_path(*metatile)
    path.write_bytes(path.read_bytes()[:-40])  # cut short: fails its SHA-256
    with caplog.at_level("WARNING"):
        assert labels.ways(view) == want
    assert "road-label glyphs" in caplog.text and path.name in caplog.text
    assert labels._maps  # coded again
    assert labels.glyphs_path(*metatile).is_file()
