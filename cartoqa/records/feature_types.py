"""The 22 map-feature types of CartoMapQA's STMF and MTMF tasks, as OSM tag filters.

    FEATURE_TYPES["bank"].matches({"amenity": "bank", "atm": "yes"})   # True
    feature_type_of({"amenity": "doctors"})                              # "clinic"

Each type names the OSM tags that make a feature of it, the geometries it
takes (point, area, line), and how the openstreetmap-carto style (5.7.0, the
one cartoqa renders with) draws it: the style layers that put it on the map,
its icon file where it has one, and whether its name is written.  A person
reading the map sees what the style draws, so two tags drawn the same way are
one type (``amenity=clinic`` and ``amenity=doctors`` share the doctors icon),
and a tag drawn the same as a type but not of it is *optional*: an answer
may count it or not (``highway=primary_link``, drawn like a primary road).
``tests/cartoqa/test_feature_types.py`` checks every line of the table
against the style's own rules.

The decisions on unclear cases are in each type's ``note``.  The table is
schema-level data (a ``FeatureTableTruth`` is keyed by these types), so the
generators (``cartoqa.tasks.poi``: views, ground truth from the image,
questions), their scorers (``evaluators.poi``) and the review tool's drawings
(``annotations.drawing``) all read it from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["FEATURE_TYPES", "FeatureType", "feature_type_of", "optional_type_of"]


@dataclass(frozen=True)
class FeatureType:
    """One of the 22 types: what counts, and how the map shows it."""

    key: str
    """A short identifier: letters and underscores ("coffee_shop")."""
    label: str
    """How a question names it ("coffee shop")."""
    tags: Mapping[str, tuple[str, ...]]
    """OSM key -> the values that make a feature of this type (any one suffices)."""
    geometries: frozenset[str]
    """Which of "point", "area" and "line" the type takes."""
    layers: tuple[str, ...]
    """The style layers that draw it (``style.xml``'s layer names)."""
    icons: tuple[str, ...] = ()
    """The icon files the style draws for it (``symbols/...``); none for fills and lines."""
    named: bool = True
    """Whether the style writes the feature's name on the map."""
    label_tag: str = "name"
    """The tag whose value the style writes as the feature's label (ATMs: ``operator``)."""
    fill: str = ""
    """Types counted by their area (parks): the colour ("#rrggbb") the style fills them with
    at zooms 18-19; a feature of the type shows only where that fill does."""
    asked: str = ""
    """How the questions name the type where its ``label`` alone is narrower than what
    counts (clinic: doctors' practices too); empty: the label."""
    optional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tags drawn like this type but not of it: neither required nor penalised."""
    note: str = ""
    """The decision on an unclear case, and why."""

    def matches(self, tags: Mapping[str, str]) -> bool:
        """Whether an OSM object with ``tags`` is a feature of this type."""
        return any(tags.get(k) in values for k, values in self.tags.items())

    def is_optional(self, tags: Mapping[str, str]) -> bool:
        """Whether ``tags`` make a feature drawn like this type without being one."""
        return not self.matches(tags) and any(
            tags.get(k) in values for k, values in self.optional.items()
        )


def _t(key: str, label: str, tags: dict[str, tuple[str, ...]], geometries: str, layers: str,
       icons: str = "", **kw: object) -> FeatureType:  # fmt: skip
    return FeatureType(
        key=key,
        label=label,
        tags=tags,
        geometries=frozenset(geometries.split()),
        layers=tuple(layers.split()),
        icons=tuple(icons.split()),
        **kw,  # type: ignore[arg-type]
    )


_POI = "amenity-points text-point"
_TYPES = (
    _t(
        "convenience_store",
        "convenience store",
        {"shop": ("convenience",)},
        "point area",
        _POI,
        "shop/convenience.svg",
    ),
    _t(
        "supermarket",
        "supermarket",
        {"shop": ("supermarket",)},
        "point area",
        _POI,
        "shop/supermarket.svg",
    ),
    _t(
        "pharmacy",
        "drug store or pharmacy",
        {"amenity": ("pharmacy",), "shop": ("chemist",)},
        "point area",
        _POI,
        "amenity/pharmacy.svg shop/chemist.svg",
        note="amenity=pharmacy and shop=chemist (a drug store without a dispensary) are both "
        "asked for by the type's name; each has its own icon.",
    ),
    _t(
        "clinic",
        "general clinic",
        {"amenity": ("clinic", "doctors")},
        "point area",
        _POI,
        "amenity/doctors.svg",
        asked="general clinic or doctors' practice",
        note="amenity=clinic and amenity=doctors are drawn with the same doctors icon, so a "
        "reader cannot tell them apart: both count (a clinic's grounds are filled too).",
    ),
    _t(
        "hospital",
        "hospital",
        {"amenity": ("hospital",)},
        "point area",
        "amenity-points text-point landcover",
        "amenity/hospital.svg",
        note="the icon and the name count; a hospital's grounds are also filled, and one "
        "hospital drawn as an area with its icon is one feature.",
    ),
    _t(
        "restaurant",
        "restaurant",
        {"amenity": ("restaurant",)},
        "point area",
        _POI,
        "amenity/restaurant.svg",
        optional={"amenity": ("food_court",)},
        note="amenity=food_court is drawn with the very restaurant icon, so a reader counts "
        "it as a restaurant, but it is a hall of counters, not one: optional.",
    ),
    _t(
        "fast_food",
        "fast food restaurant",
        {"amenity": ("fast_food",)},
        "point area",
        _POI,
        "amenity/fast_food.svg",
    ),
    _t(
        "coffee_shop",
        "coffee shop",
        {"amenity": ("cafe",)},
        "point area",
        _POI,
        "amenity/cafe.svg",
        optional={"shop": ("coffee",)},
        note="shop=coffee (beans and ground coffee, drawn with its own coffee-bean icon) is "
        "no café, but it is literally a coffee shop, and the question asks for coffee shops "
        "or cafés: optional.",
    ),
    _t(
        "atm",
        "ATM or cash point",
        {"amenity": ("atm",)},
        "point",
        _POI,
        "amenity/atm.svg",
        label_tag="operator",
        note="only amenity=atm: a bank tagged atm=yes is drawn with the bank icon alone and "
        "counts as a bank, not as an ATM. The style labels an ATM with its operator, not "
        "its name: the operator is what a name list must give.",
    ),
    _t(
        "bank",
        "bank",
        {"amenity": ("bank",)},
        "point area",
        _POI,
        "amenity/bank.svg",
        note="atm=yes on a bank changes nothing on the map: it is a bank.",
    ),
    _t(
        "playground",
        "playground",
        {"leisure": ("playground",)},
        "point area",
        "amenity-points text-point landcover",
        "leisure/playground.svg",
    ),
    _t(
        "park",
        "park",
        {"leisure": ("park",)},
        "area",
        "landcover text-point",
        fill="#c8facc",
        note="parks are areas: the style fills them and writes their name, and draws no icon "
        "for a park mapped as a point, so park points do not count. A park counts only where "
        "its green fill shows: one also tagged as a pedestrian area, a building or another "
        "landuse is painted as that (grey, or another fill) and is at most optional.",
    ),
    _t(
        "fitness_centre",
        "fitness centre",
        {"leisure": ("fitness_centre",)},
        "point area",
        _POI,
        "leisure/fitness.svg",
        optional={"leisure": ("fitness_station",)},
        note="leisure=fitness_station (outdoor equipment) is drawn with the same fitness "
        "icon, so a reader cannot tell it from a fitness centre, but it is none: optional.",
    ),
    _t(
        "clothes_shop",
        "clothes shop",
        {"shop": ("clothes", "fashion")},
        "point area",
        _POI,
        "shop/clothes.svg",
        note="shop=fashion is OSM's older tag for a clothes shop and the style draws it with "
        "the same clothes icon: both count.",
    ),
    _t(
        "beauty_shop",
        "beauty shop",
        {"shop": ("beauty",)},
        "point area",
        _POI,
        "shop/beauty.svg",
        optional={"shop": ("cosmetics",)},
        note="shop=hairdresser has its own icon and is not a beauty shop. shop=cosmetics "
        "(a perfume bottle) is not one either, but a reader may well take a cosmetics shop "
        "for a beauty shop: optional.",
    ),
    _t(
        "stream",
        "water stream",
        {"waterway": ("stream",)},
        "line",
        "water-lines water-lines-text",
        note="a line; one stream is one name (its OSM ways joined); an unnamed stream is "
        "optional, as a reader cannot tell how many unnamed lines there are.",
    ),
    _t(
        "river",
        "river",
        {"waterway": ("river",)},
        "line",
        "water-lines water-lines-text",
        note="the waterway=river line, counted as streams are; the river's water area "
        "(natural=water, water=river) is drawn as water, not as the river's line, and does "
        "not count.",
    ),
    _t(
        "bus_stop",
        "bus stop",
        {"highway": ("bus_stop",)},
        "point",
        _POI,
        "highway/bus_stop.svg",
        note="highway=bus_stop, the tag the style draws the bus stop icon for; platforms "
        "without it are not drawn as bus stops.",
    ),
    _t(
        "gas_station", "gas station", {"amenity": ("fuel",)}, "point area", _POI, "amenity/fuel.svg"
    ),
    _t(
        "primary_road",
        "primary road",
        {"highway": ("primary",)},
        "line",
        "roads-casing roads-fill roads-text-name",
        optional={"highway": ("primary_link",)},
        note="highway=primary; primary_link is drawn in the same colour, so a reader may take "
        "it for one: optional. One road is one name (its ways joined).",
    ),
    _t(
        "car_parking",
        "car parking",
        {"amenity": ("parking",)},
        "point area",
        "amenity-points text-point landcover",
        "amenity/parking.svg",
        note="amenity=parking, point or area; parking_space and parking_entrance are drawn "
        "otherwise (or not at all) and do not count.",
    ),
    _t(
        "public_toilet",
        "public toilet",
        {"amenity": ("toilets",)},
        "point area",
        "amenity-points",
        "amenity/toilets.svg",
        named=False,
        note="the style draws the icon and never a name: name listing expects none.",
    ),
)

#: key -> type, in CartoMapQA's order
FEATURE_TYPES: dict[str, FeatureType] = {t.key: t for t in _TYPES}


def feature_type_of(tags: Mapping[str, str]) -> str | None:
    """The type an OSM object with ``tags`` is (the first that matches, in table order; no
    two types share a tag), or None."""
    for t in _TYPES:
        if t.matches(tags):
            return t.key
    return None


def optional_type_of(tags: Mapping[str, str]) -> str | None:
    """The type an object is drawn like without being one of (``FeatureType.optional``)."""
    if feature_type_of(tags) is not None:
        return None
    for t in _TYPES:
        if t.is_optional(tags):
            return t.key
    return None
