"""The one base of the two colour-coded readers (``maps.colour_coded``): road labels
(``maps.labels``) and map features (``maps.feature_pixels``) share its style, render and
decode steps instead of each carrying its own copy."""

from __future__ import annotations

import hashlib
import inspect

import numpy as np
import pytest

import maps.feature_pixels as feature_pixels
import maps.labels as labels
from maps.colour_coded import (
    PLACEMENT_TRIES,
    ColourCoded,
    Glyph,
    box_votes,
    code_colour,
    near_metatile,
    neighbours,
    overlap,
    render_with_boxes,
    salts,
    sql_code,
)
from maps.projection import tile_bounds_m


def test_both_readers_are_colour_coded_renders_of_the_one_base():
    for reader in (labels.RoadLabels, feature_pixels.FeatureLabels):
        assert issubclass(reader, ColourCoded)
        # the map per salt, the render with a detector and the placement retries are the
        # base's: a reader names its checks and its coded style, nothing more
        for shared in ("_map", "_render", "_coded_as_placed"):
            assert shared not in vars(reader), (reader.__name__, shared)
        assert "coded_xml" in vars(reader)
    assert labels.RoadLabels.check == "label" and feature_pixels.FeatureLabels.check == "feature"
    for module in (labels, feature_pixels):
        source = inspect.getsource(module)
        assert "def render_with_boxes" not in source and "def _neighbours" not in source
        assert "hashlib" not in source and "mapnik.LabelCollisionDetector" not in source
    assert labels.PLACEMENT_TRIES == feature_pixels.PLACEMENT_TRIES == PLACEMENT_TRIES == 3


def test_the_feature_reader_is_named_for_what_it_holds():
    assert feature_pixels.FeatureLabels.__module__ == "maps.feature_pixels"
    assert feature_pixels.DrawnObject.__module__ == "maps.feature_pixels"
    assert render_with_boxes.__module__ == "maps.colour_coded"


def test_each_reader_keeps_its_own_salts():
    assert labels.SALTS == salts("cq") == tuple(f"cq{i}" for i in range(8))
    assert feature_pixels.SALTS == salts("cf") == tuple(f"cf{i}" for i in range(8))


def test_a_code_colour_is_the_md5_the_style_sql_computes(cluster):
    import psycopg

    conn = cluster.connection("postgres")
    with psycopg.connect(conn.conninfo()) as c:
        for prefix, osm_id in (("cq0", 4242), ("cf3in", -17), ("cq7", 123456789012)):
            got = c.execute(f"SELECT {sql_code(prefix)} FROM (SELECT %s::bigint AS osm_id) r",
                            (osm_id,)).fetchone()[0]  # fmt: skip
            assert got == f"#{code_colour(f'{prefix}{osm_id}'):06x}"
    assert code_colour("cq04242") == int(hashlib.md5(b"cq04242").hexdigest()[:6], 16)
    # each reader's own colour of an object is the base's, on its own key
    assert labels._code(4242, "cq0") == code_colour("cq04242")
    assert feature_pixels._colour("cf0", "i", "n", 7) == code_colour("cf0in7")
    assert feature_pixels._sql_colour("cf0", "t", "a") == sql_code("cf0ta")


def test_box_votes_read_the_owners_inside_a_box_clipped_to_the_image():
    index = np.full((8, 8), -1, dtype=np.int32)
    index[1:3, 1:3] = 0
    index[2, 2] = 1
    votes, window = box_votes(index, (0.5, 0.5, 2.2, 2.9), 8)
    assert sorted(votes.tolist()) == [0, 0, 0, 1]
    assert window == (slice(0, 3), slice(0, 3))
    votes, window = box_votes(index, (-4.0, -4.0, 1.5, 1.5), 8)  # off the top left, clipped
    assert votes.tolist() == [0] and window == (slice(0, 2), slice(0, 2))
    assert box_votes(index, (9.0, 1.0, 12.0, 3.0), 8) is None  # wholly off the image
    assert box_votes(index, (3.0, 3.0, 3.0, 5.0), 8) is None  # no width


def test_glyphs_next_to_each_other_make_one_label():
    a = Glyph(1, (0.0, 0.0, 10.0, 10.0), True)
    b = Glyph(1, (15.0, 0.0, 25.0, 10.0), True)  # 5 px on: the same label
    far = Glyph(1, (300.0, 0.0, 310.0, 10.0), True)  # a repeat of the name
    groups = neighbours([a, far, b])
    assert sorted(len(g) for g in groups) == [1, 2]
    assert overlap(a.box, (5.0, 5.0, 20.0, 20.0)) and not overlap(a.box, b.box)


def test_the_objects_near_a_metatile_include_its_buffer():
    z, mx, my, n = 17, 68232, 47792, 8
    x0, y0, x1, _ = tile_bounds_m(z, mx, my, n, n)
    bbox = np.array(
        [
            [x0 + 10, y0 + 10, x0 + 20, y0 + 20],  # inside
            [x1 + 5, y0, x1 + 6, y0 + 1],  # just past the edge: in the buffer
            [x1 + 5000, y0, x1 + 5001, y0 + 1],  # far away
        ]
    )
    assert near_metatile(bbox, z, mx, my, n).tolist() == [True, True, False]


@pytest.mark.parametrize("reader", [labels.RoadLabels, feature_pixels.FeatureLabels])
def test_a_reader_names_its_check_in_the_errors_the_base_raises(reader):
    assert reader.what in ("road-name labels", "map features")
    assert reader.placement in ("label placement", "coded placement")
    assert reader.log.name == reader.__module__
