"""Map-feature ground truth (``maps.feature_pixels`` + ``cartoqa.tasks.poi``) on an extract made
for its hard cases, checked against the image by other means: Tesseract reading the
rendered map (a name the truth calls drawn is read, one it calls dropped is not) and the
icons' own colours in the style (an icon the truth counts has its pixels there, one it
says the map dropped has none).

The extract is a street grid with POIs placed, in pixels at zoom 19 from the view's
centre, so that the style

- drops a name by a collision (Alpha Diner's label runs into Bravo Cafe's icon);
- draws one of two icons at one spot (a bus stop under a pharmacy);
- writes a name whose icon it dropped (Foxtrot Burgers, its icon under Echo Bank's);
- cuts a label at the view's bottom edge (Golf Clothing) and an icon at its right edge;
- wraps a long name over four lines;
- draws two branches of one brand (Spar, twice) and a café without a name;

and no river, stream or playground is in it (types absent from the extract).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from cartoqa.tasks.poi import drawn_features, feature_labels, tally
from maps import MapEngine, View
from maps.page import CONTROL_BOXES
from maps.projection import metres_per_pixel, world_pixel

from .osm_xml import osm_grid_xml, write_osm
from .road_fixtures import ll

CENTRE = (3.0, 3.0)  # grid units (100 m): the middle of a block, clear of street labels
M_PER_PX = metres_per_pixel(19) * math.cos(math.radians(43.7))
#: (node id, dx, dy in pixels from the view's centre, tags)
POIS = [
    (90001, -300, -150, {"amenity": "restaurant", "name": "Alpha Diner"}),
    (90002, -300, -132, {"amenity": "cafe", "name": "Bravo Cafe"}),
    (90003, -100, -150, {"highway": "bus_stop", "name": "Stop Charlie"}),
    (90004, -100, -150, {"amenity": "pharmacy", "name": "Delta Pharmacy"}),
    (90005, 100, -150, {"amenity": "bank", "name": "Echo Bank"}),
    (90006, 100, -141, {"amenity": "fast_food", "name": "Foxtrot Burgers"}),
    (90007, -100, 368, {"shop": "clothes", "name": "Golf Clothing"}),
    (90008, 300, 0, {"amenity": "pharmacy", "name": "Hotel Alexandria Grand Central Pharmacy"}),
    (90009, -400, 150, {"shop": "supermarket", "name": "Spar"}),
    (90010, 200, 150, {"shop": "supermarket", "name": "Spar"}),
    (90011, 0, 200, {"amenity": "cafe"}),
    (90012, 690, 0, {"shop": "convenience", "name": "India Mart"}),
    (90013, -500, -300, {"amenity": "atm", "operator": "Kilo Bank"}),
    (90015, 400, -250, {"amenity": "cafe"}),
    (90016, 400, -249, {"amenity": "restaurant", "name": "Mike Noodles"}),
]
#: a POI whose label the seam between two metatiles cuts in two (placed in ``scene``)
SEAM_POI = (90014, {"shop": "beauty", "name": "Lima Seam Salon"})
#: icon colours of the style (openstreetmap-carto 5.7.0's amenity-points markers)
ORANGE, RED, BLUE, PURPLE = (0xC7, 0x74, 0x00), (0xBF, 0x00, 0x00), (0x00, 0x92, 0xDA), (
    0xAC, 0x39, 0xAC)  # fmt: skip


def _at(dx: float, dy: float) -> tuple[float, float]:
    return ll(CENTRE[0] + dx * M_PER_PX / 100, CENTRE[1] - dy * M_PER_PX / 100)


@pytest.fixture(scope="module")
def scene(cluster, cache, carto_files, tmp_path_factory):
    """(features by node id, the tally by type, the rendered image as an RGB array, the
    image file, the render)."""
    nodes, ways = osm_grid_xml(4, 4, step=2.0)
    pois = []
    # the metatile seam nearest the view's centre (8 x 256 px metatiles), 3 px right of
    # the POI: its label, centred under its icon, straddles the seam
    cx, _ = world_pixel(*_at(0, 0), 19)
    seam = round(cx / 2048) * 2048
    seam_poi = (SEAM_POI[0], seam - 3 - cx, 100, SEAM_POI[1])
    for nid, dx, dy, tags in [*POIS, seam_poi]:
        lat, lon = _at(dx, dy)
        t = "".join(f'<tag k="{k}" v="{v}"/>' for k, v in tags.items())
        pois.append(f'  <node id="{nid}" version="1" lat="{lat:.8f}" lon="{lon:.8f}">{t}</node>')
    folder = tmp_path_factory.mktemp("poi-grid")
    path = folder / "poi-grid.osm"
    write_osm(path, [*nodes, *pois, *ways])  # POIs between the streets' nodes and ways
    engine = MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)
    view = View.make(_at(0, 0), 19, id="poi-grid")
    features = drawn_features(feature_labels(engine).view(view), 19)
    shot = engine.render(view)
    image = folder / "view.png"
    shot.save(image)
    by_id = {int(f.osm.split("/")[1]): f for f in features if f.osm.startswith("node/")}
    return by_id, tally(features), shot.image(), image, shot


def _pixels(img: np.ndarray, box, rgb, tol: int = 40) -> int:
    """Pixels within ``tol`` of colour ``rgb`` in ``box`` (x0, y0, x1, y1) of the image."""
    x0, y0, x1, y1 = (round(v) for v in box)
    part = img[max(0, y0) : y1, max(0, x0) : x1].astype(int)
    return int((np.abs(part - np.array(rgb)).max(axis=2) < tol).sum())


def _spot(dx: float, dy: float, r: int = 9):
    x, y = 683 + dx, 384 + dy
    return (x - r, y - r, x + r, y + r)


@pytest.fixture(scope="module")
def read(scene):
    """The labels Tesseract reads on the image (an independent reader; OCR is never truth)."""
    from cartoqa.models.ocr import TESSERACT, read_labels

    if shutil.which(TESSERACT) is None:
        pytest.skip("tesseract is not installed (bash scripts/setup.sh test installs it)")
    return " ".join(read_labels(Path(scene[3])))


def test_a_name_dropped_by_a_collision_is_not_required(scene, read):
    by_id, counts, img, *_ = scene
    alpha, bravo = by_id[90001], by_id[90002]
    assert alpha.counted == "yes" and alpha.label is None and "label_dropped" in alpha.flags
    assert bravo.label == "Bravo Cafe" and bravo.label_counted == "yes"
    assert counts["restaurant"].names == [""]  # shown, its name not written
    assert "Alpha" not in read and "Bravo Cafe" in read
    assert _pixels(img, alpha.icon, ORANGE) > 20 and _pixels(img, bravo.icon, ORANGE) > 20


def test_of_two_icons_at_one_spot_only_the_drawn_one_counts(scene):
    by_id, counts, img, *_ = scene
    drawn = [nid for nid in (90003, 90004) if nid in by_id]  # which wins is the style's
    assert len(drawn) == 1 and by_id[drawn[0]].counted == "yes"
    assert counts["bus_stop"].shown + counts["pharmacy"].shown == 1 + 1  # + the wrapped one
    assert counts["bus_stop"].optional == 0
    won, lost = (BLUE, RED) if drawn == [90003] else (RED, BLUE)
    assert _pixels(img, _spot(-100, -150), won) > 20
    assert _pixels(img, _spot(-100, -150), lost) == 0


def test_a_name_written_without_its_icon_is_an_orphan_and_optional(scene, read):
    by_id, counts, img, *_ = scene
    echo, fox = by_id[90005], by_id[90006]
    assert fox.counted == "optional" and "orphan_label" in fox.flags
    assert fox.label == "Foxtrot Burgers" and fox.label_counted == "optional"
    assert counts["fast_food"].shown == 0 and counts["fast_food"].optional == 1
    assert counts["fast_food"].optional_names == ["Foxtrot Burgers"]
    assert echo.counted == "yes" and echo.label == "Echo Bank"  # its icon won the spot
    assert "Foxtrot" in read
    # no fast-food icon between the bank's icon and the orphan label
    assert (
        _pixels(img, (echo.icon[0], echo.icon[3] + 1, echo.icon[2], fox.label_box[1]), ORANGE) == 0
    )


def test_a_label_cut_at_the_edge_is_optional_and_its_icon_counts(scene):
    by_id, counts, img, *_ = scene
    golf = by_id[90007]
    assert golf.counted == "yes" and golf.label_box is None and golf.label_counted == "optional"
    assert "label_cut" in golf.flags
    assert counts["clothes_shop"].names == [] and counts["clothes_shop"].optional_names == [
        "Golf Clothing"
    ]
    # the label's top shows in the last rows of the image: cut, not dropped
    assert _pixels(img, (golf.icon[0] - 40, 760, golf.icon[2] + 40, 768), PURPLE, 60) > 0
    india = by_id[90012]  # icon out of the view, the start of its label in it
    assert india.counted == "optional" and india.icon is None


def test_a_wrapped_name_is_one_name_its_lines_joined(scene, read):
    by_id, *_ = scene
    f = by_id[90008]
    assert f.label == "Hotel Alexandria Grand Central Pharmacy" and f.label_counted == "yes"
    assert f.label_box[3] - f.label_box[1] > 30  # four lines
    assert "Alexandria" in read and "Pharmacy" in read


def test_two_branches_of_one_brand_are_two_features_and_two_names(scene):
    by_id, counts, img, *_ = scene
    assert counts["supermarket"].shown == 2 and counts["supermarket"].names == ["Spar", "Spar"]
    for nid in (90009, 90010):
        assert _pixels(img, by_id[nid].icon, PURPLE) > 20


def test_an_unnamed_feature_is_listed_as_an_empty_name(scene):
    by_id, counts, *_ = scene
    assert by_id[90011].counted == "yes" and by_id[90011].name == ""
    cafes = [f for f in counts["coffee_shop"].features if f.counted == "yes"]
    unnamed = [f for f in cafes if f.label_counted == "no"]  # 90011 (an optional name: none)
    assert counts["coffee_shop"].names == sorted(["Bravo Cafe", *([""] * len(unnamed))])


def test_an_atm_is_labelled_with_its_operator_as_the_style_writes_it(scene, read):
    by_id, counts, *_ = scene
    atm = by_id[90013]
    assert atm.name == "" and atm.label == "Kilo Bank" and atm.label_counted == "yes"
    assert counts["atm"].names == ["Kilo Bank"]
    assert "Kilo Bank" in read


def test_a_label_across_a_metatile_seam_is_whole_when_both_metatiles_placed_it(scene, read):
    by_id, *_ = scene
    lima = by_id[SEAM_POI[0]]
    seam_x = lima.icon[0] + (lima.icon[2] - lima.icon[0]) / 2 + 3
    assert lima.label_box[0] < seam_x < lima.label_box[2]  # the seam runs through it
    assert lima.label == "Lima Seam Salon" and lima.label_counted == "yes"
    assert "Lima Seam Salon" in read


def test_an_orphan_label_under_an_unnamed_icon_is_an_optional_name_of_it(scene, read):
    by_id, counts, *_ = scene
    drawn = [n for n in (90015, 90016) if n in by_id and by_id[n].icon is not None]
    assert len(drawn) == 1  # one icon at the spot; the other's name is written under it
    other = ({90015, 90016} - set(drawn)).pop()
    if other == 90016:  # the restaurant's name under the unnamed café's cup
        cafe, noodles = by_id[90015], by_id[90016]
        assert "orphan_label" in noodles.flags and noodles.label == "Mike Noodles"
        assert cafe.label == "Mike Noodles" and cafe.label_counted == "optional"
        assert "orphan_label_below" in cafe.flags
        assert "Mike Noodles" in counts["coffee_shop"].optional_names
        assert "Mike Noodles" in counts["restaurant"].optional_names
    else:  # the restaurant won the spot and shows its own name
        assert by_id[90016].label == "Mike Noodles" and by_id[90016].counted == "yes"
    assert "Mike Noodles" in read


def test_the_scale_bar_box_is_the_one_leaflet_draws(engine_for):
    from maps.page import scale_bar_box

    engine = engine_for("monaco.osm.pbf")
    views = [View.make((43.7385, 7.4255), z, id=f"z{z}") for z in (15, 16, 17, 18, 19)]
    for view, shot in zip(views, engine.render_many(views, progress=False), strict=True):
        want = scale_bar_box(view)
        got = shot.controls["scale"]
        assert abs(got[0] - want[0]) <= 0.5 and abs(got[2] - want[2]) <= 0.5, (view.zoom, got)
        assert want[1] <= got[1] and got[3] <= want[3]


def test_types_absent_from_the_extract_are_zero_and_nothing_optional(scene):
    _, counts, *_ = scene
    for key in ("river", "stream", "playground", "hospital"):
        assert counts[key].shown == 0 and counts[key].optional == 0 and not counts[key].features


def test_the_page_controls_lie_inside_the_boxes_the_truth_subtracts(scene):
    shot = scene[4]
    assert set(shot.controls) == set(CONTROL_BOXES)
    for name, (x0, y0, x1, y1) in shot.controls.items():
        a, b, c, d = CONTROL_BOXES[name]
        assert a <= x0 and b <= y0 and x1 <= c and y1 <= d, name
