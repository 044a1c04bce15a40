"""The rules that turn what a view shows (``maps.feature_pixels.DrawnObject``) into counts and
names (``cartoqa.tasks.poi.drawn_features`` and ``tally``), case by case, on objects made
here: the edge cases an outside review raised, without a render."""

from __future__ import annotations

from cartoqa.records.feature_types import FEATURE_TYPES
from cartoqa.tasks.poi import MIN_LINE_PX, drawn_features, tally
from maps.feature_pixels import DrawnObject, ObjectRow


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


def test_a_label_under_one_icon_and_beside_another_is_an_optional_name_of_both():
    """Issue 26, finding 3: one label centred under a café's icon and beside a restaurant's
    (whose own name the map dropped) can be read as either's: optional for both."""
    cafe = _obj("n", 1, "Corner Cafe", {"amenity": "cafe"}, icon=(100, 100, 114, 112),
                icon_share=1.0, label=(80, 116, 134, 125), label_text="Corner Cafe")  # fmt: skip
    diner = _obj("n", 2, "Rosa", {"amenity": "restaurant"}, icon=(138, 114, 152, 126),
                 icon_share=1.0)  # fmt: skip
    got = {f.osm: f for f in drawn_features([cafe, diner], 19)}
    c, d = got["node/1"], got["node/2"]
    assert c.counted == "yes" and c.label == "Corner Cafe" and c.label_counted == "optional"
    assert d.counted == "yes" and d.label == "Corner Cafe" and d.label_counted == "optional"
    assert "label_shared" in c.flags and "label_shared" in d.flags
    counts = tally([c, d])
    assert counts["coffee_shop"].names == [] and counts["coffee_shop"].optional_names == [
        "Corner Cafe"
    ]
    assert counts["restaurant"].names == [] and counts["restaurant"].optional_names == [
        "Corner Cafe"
    ]


def test_an_atm_and_a_bank_sharing_one_label_have_it_as_an_optional_name_both():
    bank = _obj("n", 1, "Kilo Bank", {"amenity": "bank"}, icon=(100, 100, 114, 112),
                icon_share=1.0, label=(92, 116, 138, 125), label_text="Kilo Bank")  # fmt: skip
    atm = _obj("n", 2, "", {"amenity": "atm", "operator": "Kilo Bank"},
               icon=(117, 100, 131, 112), icon_share=1.0)  # fmt: skip
    counts = tally(drawn_features([bank, atm], 19))
    assert counts["bank"].shown == 1 and counts["atm"].shown == 1
    assert counts["bank"].names == [] and counts["bank"].optional_names == ["Kilo Bank"]
    assert counts["atm"].names == [] and counts["atm"].optional_names == ["Kilo Bank"]


def test_a_label_clear_of_other_icons_or_beside_a_labelled_one_stays_required():
    cafe = _obj("n", 1, "Corner Cafe", {"amenity": "cafe"}, icon=(100, 100, 114, 112),
                icon_share=1.0, label=(80, 116, 134, 125), label_text="Corner Cafe")  # fmt: skip
    far = _obj("n", 2, "", {"amenity": "restaurant"}, icon=(200, 114, 214, 126), icon_share=1.0)
    named = _obj("n", 3, "Rosa", {"amenity": "restaurant"}, icon=(138, 114, 152, 126),
                 icon_share=1.0, label=(125, 130, 165, 139), label_text="Rosa")  # fmt: skip
    counts = tally(drawn_features([cafe, far, named], 19))
    assert counts["coffee_shop"].names == ["Corner Cafe"]
    assert counts["restaurant"].names == ["", "Rosa"]
    assert counts["restaurant"].optional_names == []


def _views_like_the_review(n: int):
    """Tallies of ``n`` views as the outside review saw them: the view's own type shown once
    (the anchor), other types shown 0, 2-3 or 4+ times; every other view's anchor without a
    written name, while another type there has names."""
    from cartoqa.tasks.poi import Tally

    out = []
    for i in range(n):
        counts = {k: Tally() for k in FEATURE_TYPES}
        counts["bank"] = Tally(shown=1, names=[""] if i % 2 else ["Nordea"])
        counts["bus_stop"] = Tally(shown=2 + i % 2, names=["Stop A", "Stop B"][: 1 + i % 2])
        counts["restaurant"] = Tally(shown=4 + i % 3, names=["Rosa", "Wok Up", "", ""])
        out.append(counts)
    return out


def test_count_questions_spread_over_the_strata_and_unnamed_name_questions_are_capped():
    """Issue 26, finding 4: 18 of 24 counts were 1, 8 of 24 name questions unnamed."""
    import random
    from collections import Counter
    from types import SimpleNamespace

    from cartoqa.tasks.poi import (
        COUNT_STRATA,
        MAX_UNNAMED_NAMES_SHARE,
        _count_type,
        _names_type,
        _State,
        _stratum,
    )

    sampler = SimpleNamespace(rng=random.Random(7))  # the sampler's seeded generator
    st = _State(labels=None, zoom=19, by_type={})  # type: ignore[arg-type]
    asked, unnamed = Counter(), 0
    for counts in _views_like_the_review(24):
        key, stratum = _count_type(sampler, st, counts, "bank")
        st.strata[stratum] += 1
        asked[_stratum(counts[key].shown)] += 1
        shown = [k for k, t in counts.items() if t.shown]
        names = _names_type(sampler, st, counts, shown, "bank")
        unnamed += not any(counts[names].names)
    assert set(asked) == set(range(len(COUNT_STRATA))) and max(asked.values()) == 6, asked
    assert unnamed <= MAX_UNNAMED_NAMES_SHARE * 24 and st.names_asked == 24
