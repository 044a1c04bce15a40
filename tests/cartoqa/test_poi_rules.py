"""The rules that turn what a view shows (``maps.features.DrawnObject``) into counts and
names (``cartoqa.tasks.poi.drawn_features`` and ``tally``), case by case, on objects made
here: the edge cases an outside review raised, without a render."""

from __future__ import annotations

from cartoqa.tasks.poi import MIN_LINE_PX, drawn_features, tally
from maps.features import DrawnObject, ObjectRow


def _obj(table: str, osm_id: int, name: str, tags: dict, **kw) -> DrawnObject:
    return DrawnObject(ObjectRow(table, osm_id, name, tags), **kw)


def _one(obj: DrawnObject):
    (f,) = drawn_features([obj], 19)
    return f


def test_an_icon_wholly_in_counts_and_one_cut_is_optional():
    whole = _one(_obj("n", 1, "A", {"amenity": "bank"}, icon=(10, 10, 24, 24), icon_share=1.0))
    cut = _one(_obj("n", 2, "B", {"amenity": "bank"}, icon=(0, 10, 14, 24), icon_share=0.5))
    assert whole.counted == "yes" and cut.counted == "optional" and "icon_cut" in cut.flags
    split = _obj("n", 3, "C", {"amenity": "bank"}, icon=(10, 10, 24, 24), icon_share=1.0)
    split.notes.append("icon_split_by_seam")
    assert _one(split).counted == "optional" and "icon_split" in _one(split).flags


def test_an_icon_drawn_and_covered_or_missing_from_its_filled_area_is_optional():
    covered = _one(_obj("n", 1, "A", {"amenity": "cafe"}, icon_pixels_only=True))
    assert covered.counted == "optional" and "icon_covered" in covered.flags
    area = _one(_obj("a", 2, "", {"amenity": "parking"}, area_share=1.0, view_share=0.1))
    assert area.counted == "optional" and "area_without_icon" in area.flags
    assert drawn_features([_obj("n", 3, "B", {"amenity": "cafe"})], 19) == []  # not drawn


def test_a_park_counts_with_nine_tenths_of_it_in_the_view_and_never_as_a_building():
    park = {"leisure": "park"}
    assert _one(_obj("a", 1, "P", park, area_share=0.95, view_share=0.05)).counted == "yes"
    big = _one(_obj("a", 2, "Q", park, area_share=0.42, view_share=0.6))
    assert big.counted == "optional" and "area_cut" in big.flags
    built = _one(_obj("a", 3, "", {**park, "building": "yes"}, area_share=1.0, view_share=0.01))
    assert built.counted == "optional" and "drawn_as_building" in built.flags
    tiny = _one(_obj("a", 4, "", park, area_share=1.0, view_share=0.00001))
    assert tiny.counted == "optional"  # a few pixels of green
    assert tally([big])["park"].shown == 0 and tally([big])["park"].optional == 1


def test_a_road_counts_once_per_name_and_only_with_its_name_written():
    primary = {"highway": "primary"}
    a = _obj("l", 1, "Main Road", primary, line_px=150, total_px=300, label=(0, 0, 50, 10),
             label_text="Main Road")  # fmt: skip
    b = _obj("l", 2, "Main Road", primary, line_px=150, total_px=200)
    (f,) = drawn_features([a, b], 19)  # two ways of one road: one feature
    assert f.counted == "yes" and f.label == "Main Road" and f.osm == "way/1;way/2"
    stub = _one(_obj("l", 3, "Side Arm", primary, line_px=89, total_px=89))
    assert stub.counted == "optional" and "name_not_shown" in stub.flags
    long_unlabelled = _one(_obj("l", 4, "Long Road", primary, line_px=900, total_px=900))
    assert long_unlabelled.counted == "optional"
    short_labelled = _one(
        _obj(
            "l",
            5,
            "Short",
            primary,
            line_px=MIN_LINE_PX / 2,
            total_px=MIN_LINE_PX,
            label=(0, 0, 20, 10),
            label_text="Short",
        )
    )
    assert short_labelled.counted == "optional"  # half of it drawn, under 200 px
    unnamed = _one(_obj("l", 6, "", primary, line_px=500, total_px=500))
    assert unnamed.counted == "optional" and "unnamed_line" in unnamed.flags
    link = _one(_obj("l", 7, "Ramp", {"highway": "primary_link"}, line_px=500, total_px=500,
                     label=(0, 0, 20, 10), label_text="Ramp"))  # fmt: skip
    assert link.type == "primary_road" and link.counted == "optional"
    assert "look_alike" in link.flags


def test_an_orphan_label_under_an_unnamed_icon_is_that_icons_optional_name():
    cafe = _obj("n", 1, "", {"amenity": "cafe"}, icon=(100, 100, 114, 112), icon_share=1.0)
    wok = _obj("n", 2, "Wok Up", {"amenity": "restaurant"}, label=(90, 116, 125, 124),
               label_text="Wok Up")  # fmt: skip
    far = _obj("n", 3, "Far Away", {"amenity": "restaurant"}, label=(400, 116, 460, 124),
               label_text="Far Away")  # fmt: skip
    got = {f.osm: f for f in drawn_features([cafe, wok, far], 19)}
    assert got["node/2"].counted == "optional" and "orphan_label" in got["node/2"].flags
    assert got["node/1"].label == "Wok Up" and got["node/1"].label_counted == "optional"
    counts = tally(list(got.values()))
    assert counts["coffee_shop"].shown == 1 and counts["coffee_shop"].names == []
    assert counts["coffee_shop"].optional_names == ["Wok Up"]
    assert sorted(counts["restaurant"].optional_names) == ["Far Away", "Wok Up"]


def test_names_shown_dropped_and_cut():
    shown = _obj("n", 1, "Nordea", {"amenity": "bank"}, icon=(0, 0, 14, 10), icon_share=1.0,
                 label=(0, 12, 40, 20), label_text="Nordea")  # fmt: skip
    dropped = _obj("n", 2, "Danske", {"amenity": "bank"}, icon=(50, 0, 64, 10), icon_share=1.0)
    cut = _obj("n", 3, "Handels", {"amenity": "bank"}, icon=(90, 0, 104, 10), icon_share=1.0,
               label_partial=True)  # fmt: skip
    counts = tally(drawn_features([shown, dropped, cut], 19))["bank"]
    assert counts.shown == 3 and counts.names == ["", "Nordea"]
    assert counts.optional_names == ["Handels"]
    toilet = _obj("n", 4, "WC", {"amenity": "toilets"}, icon=(0, 0, 10, 10), icon_share=1.0)
    f = _one(toilet)
    assert f.label is None and "label_dropped" not in f.flags  # the style never names them
