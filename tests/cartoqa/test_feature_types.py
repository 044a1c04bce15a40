"""The 22 STMF/MTMF feature types against the style cartoqa renders with: every tag the table
names is drawn by the layers it says, with the icons it says, and named where it says; and
the shared extracts hold the types (issue 15, item 1)."""

import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

from cartoqa.records.feature_types import FEATURE_TYPES, feature_type_of, optional_type_of

STYLE = Path("/usr/share/openstreetmap-carto-common/style.xml")
OSM = Path(__file__).resolve().parents[3] / "shared" / "data" / "osm"


@lru_cache(maxsize=1)
def _rules():
    """(layer, filter text, symbolizer kinds, files, text expressions) for every rule of the
    style."""
    if not STYLE.is_file():
        pytest.skip(f"{STYLE} is not installed (bash scripts/setup.sh main)")
    root = ET.parse(STYLE).getroot()
    layers = defaultdict(list)
    for layer in root.findall("Layer"):
        for name in layer.findall("StyleName"):
            layers[name.text].append(layer.get("name"))
    out = []
    for style in root.findall("Style"):
        for rule in style.findall("Rule"):
            f = rule.find("Filter")
            kinds = [c.tag for c in rule if c.tag.endswith("Symbolizer")]
            files = [c.get("file", "") for c in rule if c.get("file")]
            texts = [(c.text or "").strip() for c in rule if c.tag == "TextSymbolizer"]
            for layer in layers[style.get("name")]:
                out.append((layer, f.text if f is not None and f.text else "", kinds, files, texts))
    return out


def _selects(f: str, key: str, value: str) -> bool:
    """Whether a rule's filter selects ``key=value``: carto writes [feature] = 'key_value' for
    most POIs and [key] = 'value' for the others, and some rules take a whole key
    ([feature] = 'shop', the names of every shop but those it excludes)."""
    if re.search(rf"\[feature\] = '{key}_{value}'|\[{key}\] = '{value}'", f):
        return True
    if f"[feature] = '{key}'" not in f or f"[{key}] != '{value}'" in f:
        return False
    return not re.search(rf"\[{key}\] = '", f)  # no other value singled out


def _drawn(key: str, value: str):
    """The rules of the style that draw ``key=value``."""
    return [r for r in _rules() if _selects(r[1], key, value)]


def test_there_are_the_22_types_in_cartomapqas_order_with_unique_tags():
    assert len(FEATURE_TYPES) == 22
    assert list(FEATURE_TYPES)[:3] == ["convenience_store", "supermarket", "pharmacy"]
    seen = Counter((k, v) for t in FEATURE_TYPES.values() for k, vs in t.tags.items() for v in vs)
    assert max(seen.values()) == 1  # no tag is two types


@pytest.mark.parametrize("key", list(FEATURE_TYPES))
def test_each_type_is_drawn_as_the_table_says(key):
    t = FEATURE_TYPES[key]
    for tag, values in t.tags.items():
        for value in values:
            rules = _drawn(tag, value)
            layers = {r[0] for r in rules}
            assert set(t.layers) - {"text-point"} <= layers, (tag, value, sorted(layers))
            files = {Path(f).name for r in rules for f in r[3]}
            if t.icons:
                assert any(Path(i).name in files for i in t.icons), (tag, value, files)
            texts = [r for r in rules if any(k == "TextSymbolizer" for k in r[2])]
            assert bool(texts) == t.named, (tag, value, "named" if texts else "no name")
    for icon in t.icons:
        assert (STYLE.parent / "symbols" / icon).is_file(), icon


@pytest.mark.parametrize("key", [k for k, t in FEATURE_TYPES.items() if t.named])
def test_each_type_is_labelled_with_the_tag_the_table_says(key):
    """The point labels (text-point) of a type write its ``label_tag``: the name, or for
    ATMs the operator; the ground truth's names are taken from that tag."""
    t = FEATURE_TYPES[key]
    for tag, values in t.tags.items():
        for value in values:
            written = {x for r in _drawn(tag, value) if r[0] == "text-point" for x in r[4] if x}
            if "text-point" in t.layers:
                assert written == {f"[{t.label_tag}]"}, (tag, value, written)


def test_unclear_cases_are_decided():
    assert feature_type_of({"amenity": "bank", "atm": "yes"}) == "bank"
    assert feature_type_of({"amenity": "atm"}) == "atm"
    assert feature_type_of({"amenity": "doctors"}) == feature_type_of({"amenity": "clinic"})
    assert feature_type_of({"shop": "chemist"}) == "pharmacy"
    assert feature_type_of({"highway": "primary_link"}) is None
    assert optional_type_of({"highway": "primary_link"}) == "primary_road"
    assert optional_type_of({"highway": "primary"}) is None
    assert feature_type_of({"shop": "hairdresser"}) is None
    assert optional_type_of({"leisure": "fitness_station"}) == "fitness_centre"
    # the blind audit of issue 26: a coffee-bean shop is "a coffee shop" to a reader
    assert optional_type_of({"shop": "coffee"}) == "coffee_shop"
    assert _drawn("shop", "coffee")  # and the style draws it
    # an optional tag is drawn like its type: here, with the very same icon
    icons = {Path(f).name for r in _drawn("leisure", "fitness_station") for f in r[3]}
    assert "fitness.svg" in icons
    assert _drawn("public_transport", "platform") == []  # platforms alone are not drawn
    assert feature_type_of({"natural": "water", "water": "river"}) is None
    assert feature_type_of({}) is None
    assert all(t.note or len(t.tags) == 1 for t in FEATURE_TYPES.values())


def test_the_shared_extracts_hold_most_types():
    osmium = pytest.importorskip("osmium")
    if not OSM.is_dir():
        pytest.skip(f"{OSM} is not here (it ships beside the project in CI)")
    found: dict[str, set[str]] = {}
    for name in ("helsinki-centre.osm.pbf", "london-moorgate.osm.pbf", "sydney-cbd.osm.pbf"):
        types: set[str] = set()
        for obj in osmium.FileProcessor(str(OSM / name)):
            k = feature_type_of(dict(obj.tags))
            if k:
                types.add(k)
        found[name] = types
    assert all(len(v) >= 12 for v in found.values()), {k: len(v) for k, v in found.items()}
    assert set().union(*found.values()) >= set(FEATURE_TYPES) - {"river", "stream", "gas_station"}


def test_a_type_counted_by_its_fill_names_the_fill_the_style_paints():
    """Parks count where their own fill shows (issue 26, finding 1): the colour the table
    gives is the one the style's landcover layer paints ``leisure=park`` with at zoom 19."""
    _rules()  # skips without the style
    root = ET.parse(STYLE).getroot()
    filled = [t for t in FEATURE_TYPES.values() if t.fill]
    assert [t.key for t in filled] == ["park"]
    for t in filled:
        ((key, (value,)),) = t.tags.items()
        fills = set()
        for style in root.findall("Style"):
            if style.get("name") != "landcover-high-zoom":  # the landcover layer's, z10+
                continue
            for rule in style.findall("Rule"):
                f = rule.find("Filter")
                if f is not None and f.text == f"([feature] = '{key}_{value}')":
                    fills |= {p.get("fill") for p in rule.findall("PolygonSymbolizer")}
        assert fills == {t.fill}, (t.key, fills)


def test_the_clinic_questions_name_doctors_practices_too():
    assert "doctors' practice" in FEATURE_TYPES["clinic"].asked


def _icon_tags() -> dict[str, set[tuple[str, str]]]:
    """icon file name -> the (key, value) pairs that a point rule of the style draws with it
    (rules that single out tags: [feature] = 'key_value', or [feature] = 'shop' and
    [shop] = 'value')."""
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for layer, f, _kinds, files, _texts in _rules():
        if layer != "amenity-points":
            continue
        m = re.fullmatch(r"\(\[feature\] = '([a-z]+)_([a-z_]+)'\)", f.strip())
        pairs = {(m.group(1), m.group(2))} if m else set()
        if re.match(r"\(\[feature\] = 'shop'\) and \(", f.strip()) and "!=" not in f:
            pairs = {("shop", v) for v in re.findall(r"\[shop\] = '([a-z_]+)'", f)}
        for file in files:
            out[Path(file).name].update(pairs)
    return out


@pytest.mark.parametrize("key", [k for k, t in FEATURE_TYPES.items() if t.icons])
def test_every_tag_drawn_with_a_types_icon_is_of_the_type_or_optional(key):
    """A reader counts icons: a tag the style draws with a type's very icon but that is not
    of the type (amenity=food_court, drawn with the restaurant icon) must be at least
    optional, never left out (the blind audit of issue 26 counted a food court missing)."""
    t = FEATURE_TYPES[key]
    icons = {Path(i).name for i in t.icons}
    drawn_alike = {kv for icon in icons for kv in _icon_tags().get(icon, set())}
    assert drawn_alike, (key, "no rule of the style draws its icon")
    for k, v in sorted(drawn_alike):
        tags = {k: v}
        assert t.matches(tags) or t.is_optional(tags), (key, f"{k}={v} drawn with {icons}")
