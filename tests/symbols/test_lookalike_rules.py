"""Look-alike rules that a mean over the drawn pixels misses (issue 26, finding 5): fills of a
near tint, lines that differ only by width or a faint tint, and the member that names a
class.  Images drawn here with PIL in the style's own colours: no renderer, no weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from symbols.catalogue import CatalogueEntry
from symbols.lookalike import (
    BACKGROUND,
    class_medoids,
    delta_e,
    flat_fill,
    line_look,
    near_fills,
    near_lines,
    near_pairs,
)

#: openstreetmap-carto 5.7.0's fills (landuse.mss) and waterway colour
RESIDENTIAL, APRON, RELIGIOUS = "#e0dfdf", "#dadae0", "#d0d0d0"
GRASS, WATER, PARKING = "#cdebb0", "#aad3df", "#eeeeee"
#: the legend's zigzag, in legend pixels (``symbols.legend``: 120 m across 240 px)
PATH = [(20, 120), (87, 107), (153, 133), (220, 120)]


def _area(fill: str, *, stripes: str | None = None) -> np.ndarray:
    im = Image.new("RGB", (240, 240), BACKGROUND)
    d = ImageDraw.Draw(im)
    d.rectangle((61, 61, 178, 178), fill=fill)
    if stripes:
        for x in range(65, 178, 12):
            d.line((x, 61, x, 178), fill=stripes, width=3)
    return np.asarray(im, dtype=np.float32)


def _line(colour: str, width: int, *, dash: int = 0, casing: str | None = None) -> np.ndarray:
    im = Image.new("RGB", (240, 240), BACKGROUND)
    d = ImageDraw.Draw(im)
    if casing:
        d.line(PATH, fill=casing, width=width + 4, joint="curve")
    d.line(PATH, fill=colour, width=width, joint="curve")
    if dash:  # gaps of the background along the line
        for x in range(20, 220, 2 * dash):
            d.rectangle((x, 90, x + dash - 1, 150), fill=BACKGROUND)
    return np.asarray(im, dtype=np.float32)


def test_the_fills_the_reviewer_named_are_near_tints():
    """residential / apron / religious: a grey square, with nothing beside it to compare."""
    res, apron, rel = (flat_fill(_area(c)) for c in (RESIDENTIAL, APRON, RELIGIOUS))
    assert near_fills(res, apron) and near_fills(res, rel) and near_fills(apron, rel)
    assert 3 < delta_e(res, apron) < delta_e(res, rel) < 6  # 3.6 and 5.4
    assert not near_fills(res, flat_fill(_area(GRASS)))
    assert not near_fills(flat_fill(_area(GRASS)), flat_fill(_area(WATER)))
    assert not near_fills(flat_fill(_area(RELIGIOUS)), flat_fill(_area(PARKING)))  # 10.6


def test_a_patterned_fill_is_not_a_flat_one():
    """The prison's bars, a cemetery's crosses: a pattern is part of the look, and the mean
    image distance judges it, not the tint rule."""
    assert flat_fill(_area(RESIDENTIAL, stripes="#b0b0b0")) is None
    assert not near_fills(flat_fill(_area(RESIDENTIAL, stripes="#b0b0b0")), flat_fill(_area(APRON)))


def test_lines_of_one_colour_that_differ_by_a_map_pixel_are_look_alikes():
    """stream (legend 7 px) and drain (5 px): 1 px apart on the map, the same blue."""
    stream, drain = line_look(_line(WATER, 7)), line_look(_line(WATER, 5))
    assert stream is not None and drain is not None
    assert near_lines(stream, drain) and near_lines(drain, stream)
    # a faint tint at the same width counts as the same colour
    assert near_lines(line_look(_line("#999999", 4)), line_look(_line("#9a9a9f", 4)))


def test_lines_told_apart_by_width_colour_dashes_or_casing_stay_apart():
    thin = line_look(_line(WATER, 5))
    assert not near_lines(thin, line_look(_line(WATER, 13)))  # 4 map px wider: a river
    assert not near_lines(thin, line_look(_line("#999999", 5)))  # another colour
    assert not near_lines(line_look(_line("#999999", 5)), line_look(_line("#999999", 5, dash=6)))
    assert line_look(_line("#ffffff", 6, casing="#999999")) is None  # a cased road: two colours


def test_near_pairs_reads_images_and_pairs_features_not_classes(tmp_path: Path):
    images = {}
    for key, array in {
        "area:landuse=residential": _area(RESIDENTIAL),
        "area:landuse=religious": _area(RELIGIOUS),
        "area:amenity=parking": _area(PARKING),
        "line:waterway=stream": _line(WATER, 7),
        "line:waterway=drain": _line(WATER, 5),
        "line:waterway=river": _line(WATER, 21),
    }.items():
        path = tmp_path / f"{key.replace(':', '-')}.png"
        Image.fromarray(array.astype(np.uint8)).save(path)
        images[key] = path
    pairs = near_pairs(images)
    assert ("area:landuse=religious", "area:landuse=residential") in pairs
    assert ("area:amenity=parking", "area:landuse=residential") in pairs
    # parking is near residential, residential near religious, yet parking and religious are
    # 10.6 apart: a pair, not a chain
    assert ("area:amenity=parking", "area:landuse=religious") not in pairs
    assert ("line:waterway=drain", "line:waterway=stream") in pairs
    assert not any("river" in a or "river" in b for a, b in pairs)


def test_the_medoid_of_a_class_is_its_plain_look_not_the_member_with_faint_dots(tmp_path):
    images = {}
    for key, array in {
        "area:golf=driving_range": _area(GRASS),
        "area:landuse=grass": _area(GRASS),
        "area:landuse=meadow": _area(GRASS),
        "area:leisure=garden": _area(GRASS, stripes="#b8d89c"),
    }.items():
        path = tmp_path / f"{key.replace(':', '-')}.png"
        Image.fromarray(array.astype(np.uint8)).save(path)
        images[key] = path
    (medoids,) = class_medoids(images, [set(images)])
    assert medoids == {"area:golf=driving_range", "area:landuse=grass", "area:landuse=meadow"}


def _entry(key: str, name: str, category: str = "area") -> CatalogueEntry:
    k, v = key.split("=")
    return CatalogueEntry(
        tags={k: v}, key_class=k, category=category, name=name, name_source="id-tagging-schema"
    )


def test_a_class_is_named_by_the_tag_mappers_use_most_not_the_first_in_the_alphabet():
    from symbols.typical import TAG_USES, typical_member

    cases = [
        ("area", {"golf=driving_range": "Driving Range", "golf=fairway": "Fairway",
                  "golf=tee": "Tee Box", "landuse=grass": "Grass", "landuse=meadow": "Meadow",
                  "natural=grassland": "Grassland"}, "landuse=grass"),
        ("area", {"golf=green": "Putting Green", "leisure=pitch": "Sport Pitch",
                  "leisure=track": "Racetrack (Non-Motorsport)"}, "leisure=pitch"),
        ("symbol", {"shop=chocolate": "Chocolate Store", "shop=confectionery": "Candy Store",
                    "shop=pastry": "Pastry Shop"}, "shop=confectionery"),
    ]  # fmt: skip
    for category, members, expected in cases:
        entries = {f"{category}:{k}": _entry(k, n, category) for k, n in members.items()}
        assert typical_member(entries, entries) == f"{category}:{expected}"
        assert min(entries) != f"{category}:{expected}"  # what the first-tag rule named it
        others = [TAG_USES.get(k, 0) for k in members if k != expected]
        assert TAG_USES[expected] > max(others)
    # a member the schema does not name never names a class
    unnamed = CatalogueEntry(
        tags={"landuse": "village_green"}, key_class="landuse", category="area",
        name="landuse=village_green", name_source="tag",
    )  # fmt: skip
    assert typical_member(["area:x"], {"area:x": unnamed}) is None


def test_the_tag_counts_are_a_recount_of_the_shared_extracts():
    from symbols.catalogue import _KEYS
    from symbols.typical import EXTRACTS, TAG_USES, count_tag_uses

    pytest.importorskip("osmium")
    folder = Path(__file__).resolve().parents[3] / "shared" / "data" / "osm"
    paths = [folder / name for name in EXTRACTS]
    if not all(p.is_file() for p in paths):
        pytest.skip(f"the shared extracts are not in {folder}")
    counts = count_tag_uses(paths, _KEYS)
    assert {k: counts[k] for k in TAG_USES} == TAG_USES
    assert counts["landuse=grass"] == 356 and counts["leisure=pitch"] == 368
