"""The audit drawing: the truth drawn where the sample says, the map left readable, the panel
and header written, and what old data lacks said rather than guessed."""

from __future__ import annotations

import itertools
import math

import pytest
from PIL import Image, ImageDraw

from annotations import HEADER_PX, LEG_COLOURS, PANEL_PX, describe_sample, draw_sample
from annotations.drawing import FEATURE_COLOURS, MARKER_RGB, ROAD_COLOURS, parse_markers
from cartoqa.errors import DatasetError
from cartoqa.geodesy import distance_km
from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    CountTruth,
    DrawnFeature,
    FeatureCount,
    FeatureTableTruth,
    LabelBox,
    NamesTruth,
    NumberTruth,
    Prompt,
    Provenance,
    RoadEdge,
    RoadNetwork,
    RoadPairTruth,
    RouteLeg,
    RouteTruth,
    Sample,
)
from maps.page import PIN_BOX_PX, View
from maps.projection import metres_per_pixel, pixel_box, pixel_to_lat_lon

W, H = 480, 320
PAPER = (242, 239, 233)  # openstreetmap-carto's land colour
CENTER, ZOOM = (43.7384, 7.4246), 18


def _map() -> Image.Image:
    """A plain 'map' with a grey road across it, so overlays have something under them."""
    im = Image.new("RGB", (W, H), PAPER)
    for y in range(150, 158):
        for x in range(W):
            im.putpixel((x, y), (200, 200, 200))
    return im


def _latlon(x: float, y: float) -> tuple[float, float]:
    """The (lat, lon) that a W x H view at CENTER, ZOOM puts at image pixel (x, y)."""
    x0, y0, _, _ = pixel_box(CENTER, ZOOM, W, H)
    return pixel_to_lat_lon(round(x0) + x, round(y0) + y, ZOOM)


def _sample(sid, task, truth, **meta) -> Sample:
    return Sample(
        id=sid,
        task=task,
        prompt=Prompt(text=f"the question of {sid}", images=[f"images/{sid}.png"]),
        ground_truth=truth,
        metadata={"zoom": ZOOM, **meta},
        provenance=Provenance(generator="test"),
    )


def _markers_text(*spots: tuple[str, float, float]) -> str:
    return ";".join(f"{c}@{_latlon(x, y)[0]:.9f},{_latlon(x, y)[1]:.9f}" for c, x, y in spots)


def _near(a, b) -> float:
    return math.dist(a[:3], b[:3])


def _at(img: Image.Image, x: float, y: float):
    """A pixel of the map part of the drawing, by its map coordinates."""
    return img.getpixel((round(x), round(y) + HEADER_PX))


# the route: blue at (60, 260), north to (60, 80), east to (400, 80), south to red (400, 250)
NODES = {1: (60, 260), 2: (60, 170), 3: (60, 80), 4: (230, 80), 5: (400, 80), 6: (400, 250)}
LEG_NODES = [[1, 2, 3], [3, 4, 5], [5, 6]]
BOXES = [(80, 190, 150, 210), (200, 40, 300, 60), (415, 110, 445, 185)]


def _route_sample(**meta) -> Sample:
    legs = []
    for i, nodes in enumerate(LEG_NODES):
        pts = [NODES[n] for n in nodes]
        px = sum(math.dist(a, b) for a, b in itertools.pairwise(pts))
        legs.append(
            RouteLeg(
                action=("continue straight", "turn right", "turn right")[i],
                road=("Rue A", "Rue B", "Rue C")[i],
                nodes=nodes,
                length_m=px * 0.43,
                length_px=px,
                points_px=[(float(x), float(y)) for x, y in pts],
                label=LabelBox(road=("Rue A", "Rue B", "Rue C")[i], osm_id=100 + i, box=BOXES[i]),
            )
        )
    nodes = {str(n): _latlon(*p) for n, p in NODES.items()}
    edge = RoadEdge(u=1, v=2, length_m=40, heading_start=0, heading_end=0)
    net = RoadNetwork(origin=1, destination=6, nodes=nodes, roads={"Rue A": [edge]}, junctions={})
    steps = ["blue", "continue straight", "Rue A", "turn right", "Rue B"]
    steps += ["turn right", "Rue C", "red"]
    truth = RouteTruth(steps=steps, network=net, nodes=[1, 2, 3, 4, 5, 6], legs=legs)
    return _sample("srn-0001", "srn", truth, **meta)


VIEW_META = {
    "center_lat": CENTER[0],
    "center_lon": CENTER[1],
    "blank_share": 0.25,
    "markers": _markers_text(("blue", 60, 260), ("red", 400, 250)),
}


def _ring_has(img: Image.Image, x: float, y: float, rgb) -> bool:
    """Whether the ring round a marker at (x, y) is drawn in (about) ``rgb``."""
    left, top, right, bottom = PIN_BOX_PX
    cx, cy = x + (left + right) / 2, y + (top + bottom) / 2
    r = max(right - left, bottom - top) / 2 + 8
    for a in range(0, 360, 15):
        t = math.radians(a)
        px = _at(img, cx + (r - 1) * math.cos(t), cy + (r - 1) * math.sin(t))
        if _near(px, rgb) < 40:
            return True
    return False


def _header_ok(img: Image.Image) -> None:
    strip = [img.getpixel((x, y)) for x in range(0, img.width, 3) for y in range(2, HEADER_PX - 2)]
    dark = sum(1 for p in strip if max(p) < 60)
    light = sum(1 for p in strip if min(p) > 180)
    assert dark > 0.7 * len(strip), "the header strip is not dark"
    assert light > 50, "no text in the header strip"


def _panel_ink(img: Image.Image, y0: int = HEADER_PX, y1: int | None = None) -> int:
    y1 = y1 or img.height
    return sum(
        1
        for x in range(img.width - PANEL_PX + 1, img.width, 2)
        for y in range(y0, y1, 2)
        if max(img.getpixel((x, y))) < 140
    )


def test_route_legs_boxes_nodes_markers_and_the_layout():
    sample = _route_sample(**VIEW_META)
    base = _map()
    before = base.tobytes()
    img = draw_sample(sample, base)
    assert base.tobytes() == before, "draw_sample changed the image it was given"
    assert img.mode == "RGB"
    assert img.size == (W + PANEL_PX, HEADER_PX + max(H, img.height - HEADER_PX))
    assert img.height >= HEADER_PX + H
    legs = sample.ground_truth.legs
    # each leg in its own colour along its shape (sampled away from its number badge)
    for i, leg in enumerate(legs):
        colour = LEG_COLOURS[i]
        pts = leg.points_px
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            for t in (0.4, 0.6, 0.8):
                px = _at(img, x0 + t * (x1 - x0), y0 + t * (y1 - y0))
                nearest = min([*LEG_COLOURS[:3], PAPER], key=lambda c: _near(px, c))
                assert nearest == colour, (i, t, px)
                assert _near(px, PAPER) > 60  # drawn, not left as the map
    # semi-transparent: the grey road under leg 2 (y 150-157 crosses x=60) still shows
    # through leg 1 differently from the paper under it
    assert _at(img, 60, 153) != _at(img, 60, 120)
    # each label box outlined in its leg's colour, its inside left as the map
    for i, (x0, y0, x1, y1) in enumerate(BOXES):
        assert _at(img, x0 - 1, (y0 + y1) / 2)[:3] == LEG_COLOURS[i]
        assert _at(img, x1 + 1, (y0 + y1) / 2)[:3] == LEG_COLOURS[i]
        assert _at(img, (x0 + x1) / 2, y1 + 1)[:3] == LEG_COLOURS[i]
        inside = _at(img, (x0 + x1) / 2, (y0 + y1) / 2)
        assert inside == base.getpixel((round((x0 + x1) / 2), round((y0 + y1) / 2)))
    # the route's nodes dotted (white), placed from their lat/lon by the view
    for n in (2, 4, 5):
        assert min(_at(img, *NODES[n])) > 245, n
    # both markers circled in their colours
    assert _ring_has(img, 60, 260, MARKER_RGB["blue"])
    assert _ring_has(img, 400, 250, MARKER_RGB["red"])
    assert not _ring_has(img, 230, 250, MARKER_RGB["red"])  # and nowhere else
    # the panel: a swatch per leg and text; the header
    panel = {img.getpixel((x, y)) for x in range(W + 10, W + 40) for y in range(HEADER_PX, 200)}
    for colour in LEG_COLOURS[:3]:
        assert colour in panel
    assert _panel_ink(img) > 300
    _header_ok(img)


def test_route_legend_says_each_leg_and_its_label():
    text = describe_sample(_route_sample(**VIEW_META), size=(W, H))
    legs = _route_sample().ground_truth.legs
    assert f"1. continue straight · Rue A · {legs[0].length_m:.1f} m · 180 px" in text
    assert f"2. turn right · Rue B · {legs[1].length_m:.0f} m · 340 px" in text
    assert any(t.startswith("label “Rue B” (way 101) at 200,40–300,60") for t in text)
    assert any(t.startswith("blue marker: ") and t.endswith("→ pixel 60, 260") for t in text)
    assert any(t.startswith("red marker: ") and t.endswith("→ pixel 400, 250") for t in text)
    assert "question: the question of srn-0001" in text


def test_a_route_made_before_legs_were_kept_is_drawn_as_far_as_it_goes():
    truth = RouteTruth(steps=["blue", "turn left", "Rue A", "turn right", "Rue B", "red"])
    sample = _sample("srn-0009", "srn", truth)  # no legs, no centre, no markers, no blank share
    base = _map()
    img = draw_sample(sample, base)
    # nothing can be placed: the map is untouched
    assert img.crop((0, HEADER_PX, W, HEADER_PX + H)).tobytes() == base.tobytes()
    _header_ok(img)
    assert _panel_ink(img) > 100
    text = describe_sample(sample, size=(W, H))
    assert "legs: not recorded (steps only)" in text
    assert "1. turn left · Rue A" in text and "2. turn right · Rue B" in text
    assert "markers: not recorded" in text
    assert any(t.startswith("network: not recorded") for t in text)


def test_route_markers_fall_back_to_the_network_ends_when_only_the_centre_is_known():
    meta = {k: v for k, v in VIEW_META.items() if k != "markers"}
    img = draw_sample(_route_sample(**meta), _map())
    assert _ring_has(img, 60, 260, MARKER_RGB["blue"])
    assert _ring_has(img, 400, 250, MARKER_RGB["red"])
    text = describe_sample(_route_sample(**meta), size=(W, H))
    assert "markers: not recorded; drawn at the network's origin and destination" in text


def test_road_pair_marker_and_both_label_boxes():
    labels = [
        LabelBox(road="Rue Grimaldi", osm_id=7, box=(250, 60, 380, 80)),
        LabelBox(road="Rue Princesse Caroline", osm_id=8, box=(40, 200, 170, 222)),
    ]
    truth = RoadPairTruth(
        road_1="Rue Grimaldi", road_2="Rue Princesse Caroline", junction=42, labels=labels
    )
    sample = _sample(
        "mml-0001",
        "mml",
        truth,
        colour="red",
        center_lat=CENTER[0],
        center_lon=CENTER[1],
        blank_share=0.0,
        markers=_markers_text(("red", 240, 200)),
    )
    img = draw_sample(sample, _map())
    for rgb, lb in zip(ROAD_COLOURS, labels, strict=True):
        x0, y0, x1, y1 = lb.box
        assert _at(img, x0 - 1, (y0 + y1) / 2)[:3] == rgb
        assert _at(img, x1 + 1, (y0 + y1) / 2)[:3] == rgb
        # the name's tag above the box, filled in the road's colour
        tag = [_at(img, x, y0 - 10) for x in range(round(x0), round(x0) + 60)]
        assert sum(_near(p, rgb) < 30 for p in tag) > 20
    assert _ring_has(img, 240, 200, MARKER_RGB["red"])
    assert not _ring_has(img, 240, 200, MARKER_RGB["blue"])
    _header_ok(img)
    text = describe_sample(sample, size=(W, H))
    assert "road 1: Rue Grimaldi" in text and "road 2: Rue Princesse Caroline" in text
    assert "junction node: 42" in text
    assert "label (way 8) at 40,200–170,222" in text


def test_road_pair_from_before_labels_were_kept_says_so():
    sample = _sample("mml-0002", "mml", RoadPairTruth(road_1="A", road_2="B"), colour="blue")
    img = draw_sample(sample, _map())
    assert img.crop((0, HEADER_PX, W, HEADER_PX + H)).tobytes() == _map().tobytes()
    text = describe_sample(sample)
    assert text.count("label: not recorded") == 2
    assert "junction node: not recorded" in text
    assert "markers: not recorded" in text


def test_length_markers_scale_and_a_scale_bar_at_the_maps_scale():
    truth = NumberTruth(value=114.72, unit="m", equivalents={"ft": 376.38})
    sample = _sample(
        "rle-0001-m",
        "rle",
        truth,
        unit="m",
        center_lat=CENTER[0],
        center_lon=CENTER[1],
        blank_share=0.5,
        markers=_markers_text(("blue", 100, 250), ("blue", 380, 120)),
    )
    img = draw_sample(sample, _map())
    assert _ring_has(img, 100, 250, MARKER_RGB["blue"])
    assert _ring_has(img, 380, 120, MARKER_RGB["blue"])
    mpp = metres_per_pixel(ZOOM) * math.cos(math.radians(CENTER[0]))
    text = describe_sample(sample, size=(W, H))
    assert "truth: 114.72 m = 376.38 ft (asked in m)" in text
    assert f"scale at zoom {ZOOM}, latitude {CENTER[0]:.4f}: {mpp:.3f} m per pixel" in text
    assert f"the truth on the image: {114.72 / mpp:.0f} px of path" in text
    a, b = parse_markers(sample.metadata.markers)
    straight = distance_km(a.lat, a.lon, b.lat, b.lon) * 1000
    px = math.dist((100, 250), (380, 120))
    assert f"straight line between the markers: {straight:.0f} m ({px:.0f} px)" in text
    assert f"path / straight line: {114.72 / straight:.2f}" in text
    # the panel's scale bar: the longest dark horizontal run in the panel is a round number
    # of metres at the map's scale
    best = 0
    for y in range(HEADER_PX, img.height):
        run = longest = 0
        for x in range(W + 1, img.width):
            run = run + 1 if max(img.getpixel((x, y))) < 60 else 0
            longest = max(longest, run)
        best = max(best, longest)
    metres = best * mpp
    assert any(abs(metres - m) <= 2 * mpp for m in (100, 150, 200)), (best, metres)


def test_other_kinds_get_the_map_the_question_and_the_truth_in_the_panel():
    truth = ChoiceTruth(answer="B", options={"A": "hospital", "B": "pharmacy"})
    sample = _sample("mfs-0001", "mfs", truth)
    base = _map()
    img = draw_sample(sample, base)
    assert img.crop((0, HEADER_PX, W, HEADER_PX + H)).tobytes() == base.tobytes()
    assert _panel_ink(img) > 100
    _header_ok(img)
    text = describe_sample(sample)
    assert text[0] == "Truth (choice)"
    assert '"answer": "B"' in text[1] and '"pharmacy"' in text[1]
    assert text[-1] == "question: the question of mfs-0001"


def test_a_small_image_leaves_the_header_room_for_its_text_and_the_attribution():
    """A legend symbol is 120 px: the header's text and the attribution beside it must not
    run into each other (a gap of dark columns between the two)."""
    truth = ChoiceTruth(answer="B", options={"A": "Bank", "B": "Cafe"})
    sample = _sample("mfs-0001", "mfs", truth)
    img = draw_sample(sample, Image.new("RGB", (120, 120), PAPER))
    _header_ok(img)
    inked = [
        any(min(img.getpixel((x, y))) > 150 for y in range(4, HEADER_PX - 4))
        for x in range(img.width)
    ]
    runs, run = [], 0
    first, last = inked.index(True), len(inked) - 1 - inked[::-1].index(True)
    for x in range(first, last):
        run = run + 1 if not inked[x] else 0
        runs.append(run)
    assert max(runs) >= 25, "the header's text runs into the attribution"


def test_a_long_panel_makes_the_image_taller_not_cut():
    legs = [
        RouteLeg(
            action="turn left",
            road=f"A rather long street name number {i} of the old town",
            nodes=[i, i + 1],
            length_m=50,
            length_px=100,
            points_px=[(10.0 + i, 10.0), (10.0 + i, 100.0)],
        )
        for i in range(12)
    ]
    steps = ["blue", *[x for leg in legs for x in (leg.action, leg.road)], "red"]
    sample = _sample("srn-0002", "srn", RouteTruth(steps=steps, legs=legs))
    small = Image.new("RGB", (200, 120), PAPER)
    img = draw_sample(sample, small)
    assert img.height > HEADER_PX + 120
    assert _panel_ink(img, y0=img.height - 120) > 0  # the question, at the bottom, is drawn
    # the eleventh leg's colour wraps round the palette
    assert LEG_COLOURS[10 % len(LEG_COLOURS)] == LEG_COLOURS[0]


def test_image_from_a_file_and_clear_errors_for_a_missing_or_broken_one(tmp_path):
    sample = _route_sample(**VIEW_META)
    path = tmp_path / "map.png"
    _map().save(path)
    assert draw_sample(sample, path).tobytes() == draw_sample(sample, _map()).tobytes()
    assert draw_sample(sample, str(path)).size == (W + PANEL_PX, draw_sample(sample, path).height)
    with pytest.raises(DatasetError, match=r"nothere\.png does not exist"):
        draw_sample(sample, tmp_path / "nothere.png")
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    with pytest.raises(DatasetError, match=r"broken\.png cannot be read as an image"):
        draw_sample(sample, broken)


def test_markers_text_parses_and_bad_parts_are_named():
    spots = parse_markers("blue@43.7392,7.4236;red@43.7372,7.4262")
    assert [(s.colour, s.lat, s.lon) for s in spots] == [
        ("blue", 43.7392, 7.4236),
        ("red", 43.7372, 7.4262),
    ]
    for bad in ("blue43.7,7.4", "blue@43.7", "@43.7,7.4", "blue@x,7.4"):
        with pytest.raises(ValueError, match="is not 'colour@lat,lon'"):
            parse_markers(bad)
    sample = _route_sample(**{**VIEW_META, "markers": "blue@nowhere"})
    text = describe_sample(sample, size=(W, H))
    assert (
        "markers: unreadable (marker 'blue@nowhere' is not 'colour@lat,lon'); drawn at the "
        "network's origin and destination"
    ) in text


def test_a_view_centre_places_points_as_the_builder_does():
    # the drawing's pixel for a lat/lon is maps.page.View's, at the map's own size
    lat, lon = _latlon(123.0, 45.0)
    x, y = View(CENTER, ZOOM, width=W, height=H).pixel(lat, lon)
    assert (round(x, 6), round(y, 6)) == (123.0, 45.0)


def test_name_tags_stay_inside_the_map_and_clear_of_the_marker():
    at_edge = LabelBox(road="Rue Grimaldi", osm_id=7, box=(W - 60, 60, W - 5, 80))
    under_marker = LabelBox(road="Rue Princesse Caroline", osm_id=8, box=(200, 216, 330, 236))
    truth = RoadPairTruth(
        road_1="Rue Grimaldi", road_2="Rue Princesse Caroline", labels=[at_edge, under_marker]
    )
    sample = _sample(
        "mml-0003",
        "mml",
        truth,
        colour="blue",
        center_lat=CENTER[0],
        center_lon=CENTER[1],
        markers=_markers_text(("blue", 240, 200)),
    )
    img = draw_sample(sample, _map())

    def tag_pixels(rgb, xs, y):
        return sum(_near(_at(img, x, y), rgb) < 30 for x in xs)

    # no room above or below inside the map's right edge: the tag goes to the box's left
    assert tag_pixels(ROAD_COLOURS[0], range(W - 140, W - 70), 68) > 15
    assert tag_pixels(ROAD_COLOURS[0], range(W - 60, W), 50) == 0
    # above the box would cover the marker's ring: the tag goes below the box
    assert tag_pixels(ROAD_COLOURS[1], range(205, 300), 241) > 60
    assert tag_pixels(ROAD_COLOURS[1], range(280, 330), 204) == 0
    assert _ring_has(img, 240, 200, MARKER_RGB["blue"])


# ---------------------------------------------------------------- map features (STMF, MTMF)

HOSTILE = "<img src=x onerror=alert(1)>"
ICON_RGB = (160, 90, 40)  # the synthetic map's icons: brown squares
RESTAURANT, BANK = FEATURE_COLOURS[0], FEATURE_COLOURS[1]  # the types' colours, in order


def _restaurants() -> list[DrawnFeature]:
    """Two counted restaurants (one unnamed, no label), one cut at the map's right edge and one
    whose icon is covered (its label orphaned): both optional."""
    return [
        DrawnFeature(
            osm="node/101",
            type="restaurant",
            name="Le Vistamar",
            label="Le Vistamar",
            label_counted="yes",
            icon=(100, 100, 114, 114),
            label_box=(74, 117, 140, 129),
        ),
        DrawnFeature(osm="way/102", type="restaurant", icon=(250, 190, 264, 204)),
        DrawnFeature(
            osm="node/103",
            type="restaurant",
            name=HOSTILE,
            counted="optional",
            label_counted="optional",
            icon=(468, 60, 482, 74),
            flags=["icon_cut", "label_cut"],
        ),
        DrawnFeature(
            osm="node/104",
            type="restaurant",
            name="Chez Nous",
            counted="optional",
            label="Chez Nous",
            label_counted="optional",
            label_box=(300, 250, 366, 262),
            flags=["icon_covered", "orphan_label"],
        ),
    ]


BANQUE = DrawnFeature(
    osm="node/201",
    type="bank",
    name="Banque Populaire",
    label="Banque Populaire",
    label_counted="yes",
    icon=(180, 40, 194, 54),
    label_box=(140, 57, 236, 69),
)


def _poi_map() -> Image.Image:
    """The plain map with each feature's icon (a brown square inside its box) and label."""
    im = _map()
    d = ImageDraw.Draw(im)
    for f in [*_restaurants(), BANQUE]:
        if f.icon is not None and f.flags[:1] != ["icon_covered"]:
            x0, y0, x1, y1 = f.icon
            d.rectangle((x0 + 2, y0 + 2, x1 - 2, y1 - 2), fill=ICON_RGB)
        if f.label_box is not None and f.label:
            d.text((f.label_box[0] + 2, f.label_box[1]), f.label, fill=(90, 60, 30))
    return im


def _feature_samples() -> dict[str, Sample]:
    """One sample of each map-feature task on ``_poi_map()``, with the evidence above."""
    feats = _restaurants()
    meta = {"center_lat": CENTER[0], "center_lon": CENTER[1], "blank_share": 0.0}
    table = {k: FeatureCount(count=0) for k in ("convenience_store", "restaurant", "atm", "bank")}
    table["restaurant"] = FeatureCount(
        count=2, names=["", "Le Vistamar"], optional_count=2, optional_names=[HOSTILE, "Chez Nous"]
    )
    table["bank"] = FeatureCount(count=1, names=["Banque Populaire"])
    truths = {
        "stmf_presence": BooleanTruth(value=True, feature_type="restaurant", features=feats),
        "stmf_count": CountTruth(value=2, optional=2, feature_type="restaurant", features=feats),
        "stmf_names": NamesTruth(
            names=["", "Le Vistamar"],
            optional=[HOSTILE, "Chez Nous"],
            feature_type="restaurant",
            features=feats,
        ),
        "mtmf": FeatureTableTruth(features=table, evidence=[BANQUE, *feats]),
    }
    return {
        task: _sample(f"mf-0001-{task}", task, truth, feature_type="restaurant", **meta)
        for task, truth in truths.items()
    }


def _ring(box, pad=2):
    x0, y0, x1, y1 = box
    return x0 - pad, y0 - pad, x1 + pad, y1 + pad


def _nearest(px, *colours):
    return min(colours, key=lambda c: _near(px, c))


def _grey_of(rgb):
    return tuple(round(0.4 * c + 0.6 * 150) for c in rgb)


@pytest.mark.parametrize("task", ["stmf_presence", "stmf_count", "stmf_names", "mtmf"])
def test_feature_evidence_is_drawn_on_the_map(task):
    sample = _feature_samples()[task]
    base = _poi_map()
    before = base.tobytes()
    img = draw_sample(sample, base)
    assert base.tobytes() == before
    assert img.size[0] == W + PANEL_PX and img.height >= HEADER_PX + H
    _header_ok(img)
    assert _panel_ink(img) > 300
    counted, unnamed, cut, orphan = _restaurants()
    # a counted icon: its box outlined, solid, in the type's colour; the icon inside untouched
    x0, y0, x1, y1 = _ring(counted.icon)
    edge = [_at(img, x, y0) for x in range(round(x0), round(x1) + 1)]
    edge += [_at(img, x0, y) for y in range(round(y0), round(y1) + 1)]
    for px in edge:
        assert _nearest(px, RESTAURANT, _grey_of(RESTAURANT), PAPER) == RESTAURANT, px
        assert _near(px, PAPER) > 60
    assert _at(img, 107, 107) == ICON_RGB
    assert _nearest(_at(img, *_ring(unnamed.icon)[:2]), RESTAURANT, PAPER) == RESTAURANT
    # its label box outlined thin (1 px) in the same colour, the label's text left readable
    lx0, ly0, lx1, ly1 = counted.label_box
    assert _nearest(_at(img, lx0 - 1, (ly0 + ly1) / 2), RESTAURANT, PAPER) == RESTAURANT
    assert _at(img, lx0 - 3, (ly0 + ly1) / 2) == PAPER
    assert _at(img, (lx0 + lx1) / 2, ly1 + 1) != PAPER
    # its number tag just beside the icon, filled in the type's colour
    above = [_at(img, x, y) for x in range(90, 125) for y in range(76, 97)]  # clear of the ring
    assert sum(_near(p, RESTAURANT) < 30 for p in above) > 30
    # an optional icon: dashed (the map shows between the dashes) and greyed, not the colour
    ox0, oy0, _, oy1 = _ring(cut.icon)
    side = [_at(img, ox0, y) for y in range(round(oy0), round(oy1) + 1)]
    drawn = [p for p in side if p != PAPER]
    assert 4 <= len(drawn) < len(side) - 3, side
    for px in drawn:
        assert _nearest(px, RESTAURANT, _grey_of(RESTAURANT)) == _grey_of(RESTAURANT), px
    # an orphaned label (no icon box): its label box dashed, its number beside it
    bx0, by0, bx1, _ = orphan.label_box
    top = [_at(img, x, by0 - 1) for x in range(round(bx0) - 1, round(bx1) + 2)]
    assert 0 < sum(p != PAPER for p in top) < len(top) - 5
    if task == "mtmf":
        # every type in its own colour
        bank = _ring(BANQUE.icon)
        assert _nearest(_at(img, bank[0], bank[1] + 5), BANK, RESTAURANT, PAPER) == BANK
    else:
        # the single-type tasks draw their type's evidence only
        assert _at(img, *_ring(BANQUE.icon)[:2]) == PAPER


def test_feature_panel_gives_the_truth_and_every_feature_with_its_flags():
    samples = _feature_samples()
    texts = {task: describe_sample(s, size=(W, H)) for task, s in samples.items()}
    listed = [
        "1. restaurant · Le Vistamar · node/101 · shown · label shown",
        '2. restaurant · "" · way/102 · shown · no label',
        f"3. restaurant · {HOSTILE} · node/103 · optional · label optional · "
        "flags: icon_cut, label_cut",
        "4. restaurant · Chez Nous · node/104 · optional · label optional · no icon box · "
        "flags: icon_covered, orphan_label",
    ]
    for task in ("stmf_presence", "stmf_count", "stmf_names"):
        text = texts[task]
        assert "type: restaurant" in text
        for line in listed:
            assert line in text, (task, line, text)
        assert "evidence: 4 features (2 counted, 2 optional)" in text
        assert not any("not the truth" in t or "says otherwise" in t for t in text)
        assert text[-1] == f"question: the question of mf-0001-{task}"
    assert texts["stmf_presence"][0] == "Feature presence (stmf_presence)"
    assert "Yes: 2 shown (2 optional)" in texts["stmf_presence"]
    assert "2 (up to 4 accepted: 2 optional)" in texts["stmf_count"]
    names = texts["stmf_names"]
    assert "names: 2 required, 2 optional" in names
    at = names.index("names: 2 required, 2 optional")
    assert names[at + 1 : at + 5] == [
        '""',
        "Le Vistamar",
        f"{HOSTILE} (optional)",
        "Chez Nous (optional)",
    ]
    # MTMF: one line per type with features, none for the others; every type's features
    mtmf = texts["mtmf"]
    assert mtmf[0] == "Features of every type (mtmf)"
    assert "3 features shown (+2 optional)" in mtmf
    assert f'restaurant 2 (+2): "", Le Vistamar, {HOSTILE} (optional), Chez Nous (optional)' in mtmf
    assert "bank 1: Banque Populaire" in mtmf
    assert "2 other types: 0" in mtmf
    assert not any(t.startswith(("atm", "convenience_store")) for t in mtmf)
    assert "evidence: 5 features (3 counted, 2 optional)" in mtmf
    # grouped by type in the table's order: the restaurants, then the bank
    assert listed[0] in mtmf and listed[3] in mtmf
    assert "5. bank · Banque Populaire · node/201 · shown · label shown" in mtmf


def test_a_type_asked_by_other_words_is_named_both_ways_and_a_wrong_tally_is_flagged():
    pharmacy = DrawnFeature(osm="node/9", type="pharmacy", name="Pharmacie", icon=(10, 10, 24, 24))
    truth = CountTruth(value=3, feature_type="pharmacy", features=[pharmacy])
    text = describe_sample(_sample("mf-0002-c", "stmf_count", truth), size=(W, H))
    assert "type: pharmacy (“drug store or pharmacy”)" in text
    assert "3" in text
    assert "evidence: 1 counted, 0 optional: not the truth's" in text
    no = BooleanTruth(value=False, feature_type="pharmacy", features=[pharmacy])
    text = describe_sample(_sample("mf-0002-p", "stmf_presence", no), size=(W, H))
    assert "No" in text and "evidence: 1 counted, which says otherwise" in text


def test_a_feature_truth_without_evidence_still_draws():
    base = _poi_map()
    for task, truth in (
        ("stmf_count", CountTruth(value=0, feature_type="bank")),
        ("stmf_presence", BooleanTruth(value=True, feature_type="bank")),
        ("stmf_names", NamesTruth(names=["A"], feature_type="bank")),
        ("mtmf", FeatureTableTruth(features={"bank": FeatureCount(count=1, names=["A"])})),
    ):
        sample = _sample(f"mf-0003-{task}", task, truth)
        img = draw_sample(sample, base)
        assert img.crop((0, HEADER_PX, W, HEADER_PX + H)).tobytes() == base.tobytes()
        _header_ok(img)
        text = describe_sample(sample, size=(W, H))
        assert "evidence: none recorded" in text, task
        assert not any(t.startswith("1. ") for t in text)
    assert "0" in describe_sample(_sample("c", "stmf_count", CountTruth(value=0, feature_type="x")))
    assert "Yes" in describe_sample(
        _sample("p", "stmf_presence", BooleanTruth(value=True, feature_type="bank"))
    )
    assert "bank 1: A" in describe_sample(
        _sample(
            "m", "mtmf", FeatureTableTruth(features={"bank": FeatureCount(count=1, names=["A"])})
        )
    )
    # a yes/no or a name list that is no map-feature question keeps the plain panel
    for task, truth in (
        ("route_analysis", BooleanTruth(value=True)),
        ("stmf_names", NamesTruth(names=["A"])),  # made before evidence was kept
    ):
        text = describe_sample(_sample("o", task, truth))
        assert text[0] == f"Truth ({truth.kind})"


def test_a_hostile_name_is_drawn_as_text():
    sample = _feature_samples()["stmf_names"]
    img = draw_sample(sample, _poi_map())
    assert img.height >= HEADER_PX + H
    text = describe_sample(sample, size=(W, H))
    assert f"{HOSTILE} (optional)" in text
    # the panel's ink where the names are listed: text, not an error or an empty panel
    assert _panel_ink(img, HEADER_PX, HEADER_PX + 200) > 200


# ---------------------------------------------------------------- issue 26


def test_a_drawing_of_twenty_thousand_names_stays_a_readable_size():
    """Finding 17: 20,000 names made an 85,604 px tall drawing (+420 MB)."""
    many = [f"Feature number {i}" for i in range(20_000)]
    names = _sample(
        "stmf_names-0001",
        "stmf_names",
        NamesTruth(names=many, optional=many[:50], feature_type="cafe"),
    )
    table = _sample(
        "mtmf-0001",
        "mtmf",
        FeatureTableTruth(features={"cafe": FeatureCount(count=20_000, names=many)}),
    )
    for sample in (names, table):
        img = draw_sample(sample, _map())
        assert img.height <= HEADER_PX + 3000 + 100, (sample.id, img.height)
        _header_ok(img)
    text = describe_sample(names, size=(W, H))
    assert "… and 19,960 more names" in text and "… and 10 more optional names" in text
    assert len(text) < 150
    (row,) = [t for t in describe_sample(table, size=(W, H)) if t.startswith("cafe 20000")]
    assert row.endswith("and 19,960 more") and len(row) < 2000


def test_a_corrected_route_is_redrawn_on_the_maps_roads():
    """Finding 18: a corrected route (its legs dropped) lost its drawn path, and said nothing
    of whether the map's roads connect it."""
    import tempfile
    from pathlib import Path

    from tests.annotations.review_data import network_route_dataset

    with tempfile.TemporaryDirectory() as tmp:
        (sample,) = network_route_dataset(Path(tmp) / "ds").samples
    net = sample.ground_truth.network
    view = View((43.7300, 7.4210), 17, width=640, height=400)
    base = Image.new("RGB", (640, 400), PAPER)

    def mid(a, b):
        (x0, y0), (x1, y1) = view.pixel(*net.nodes[a]), view.pixel(*net.nodes[b])
        return (x0 + x1) / 2, (y0 + y1) / 2

    for steps, second, said in (
        (["turn right", "Rue Est", "turn left", "Rue Nord"], ("2", "3"), "connected on"),
        (["turn right", "Rue Est", "turn right", "Rue Sud"], ("2", "4"), "NOT connected"),
    ):
        truth = sample.ground_truth.model_copy(update={"steps": ["blue", *steps, "red"]})
        fixed = sample.model_copy(update={"ground_truth": truth})
        img = draw_sample(fixed, base)
        assert _near(_at(img, *mid("1", "2")), LEG_COLOURS[0]) < 80
        assert _near(_at(img, *mid(*second)), LEG_COLOURS[1]) < 80
        text = describe_sample(fixed, size=(640, 400))
        assert any(t.startswith(said) for t in text), text
        assert any("each step's road is drawn whole" in t for t in text)
    bad = [t for t in text if t.startswith("NOT connected")]
    assert bad == ["NOT connected on the map's roads: 'Rue Sud' does not lead to the red marker"]
