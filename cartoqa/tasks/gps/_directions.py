"""Direction questions, shared by both tracks' relative-position tasks: the compass
sectors, the multiple-choice question from one city to another, and the margin to a
sector's edge."""

from __future__ import annotations

from cartoqa.geodesy import compass_direction, initial_bearing_deg
from cartoqa.records import ChoiceTruth

from ._sampling import Draft, Sampler, distance_band, region_of

__all__ = [
    "CARDINALS",
    "CARDINAL_ORDER",
    "SECTORS",
    "SECTOR_NAMES",
    "direction_question",
    "edge_margin",
    "short_dlon",
]

SECTORS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
SECTOR_NAMES = {
    "N": "north",
    "NE": "north-east",
    "E": "east",
    "SE": "south-east",
    "S": "south",
    "SW": "south-west",
    "W": "west",
    "NW": "north-west",
}

CARDINALS = ["N", "E", "S", "W"]
#: the order a four-way direction question lists its options in, as GPSBench: a reader
#: expects one form of direction question (A north, B south, C east, D west)
CARDINAL_ORDER = ["N", "S", "E", "W"]


def direction_question(
    s: Sampler,
    i: int,
    j: int,
    question: str,
    meta: dict,
    km: float,
    points: int = 4,
    *,
    sector: str | None = None,
    difficulty: str | None = None,
) -> Draft:
    """A multiple-choice direction question from city i to city j, after ``question`` (the
    template ``gps.relative_position_pure.choices``): the four cardinal directions, always
    listed north, south, east, west (A-D), the truth by the initial bearing (N [315, 45),
    E [45, 135), ...) unless ``sector`` gives it; or all eight compass points (45-degree
    sectors, N [337.5, 22.5)), shuffled.  ``difficulty`` defaults to the distance band
    (the applied track's, the paper's own)."""
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    sector = sector or str(compass_direction(b, points=points))
    if points == 4:
        opts = {letter: SECTOR_NAMES[x] for letter, x in zip("ABCD", CARDINAL_ORDER, strict=True)}
        letter = "ABCD"[CARDINAL_ORDER.index(sector)]
    else:
        opts, letter = s.options(
            SECTOR_NAMES[sector], [SECTOR_NAMES[x] for x in SECTORS if x != sector], k=points
        )
    listed = s.listed(opts)
    text = s.prompts.text("gps.relative_position_pure.choices", question=question, options=listed)
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        region_of(s, i),
        difficulty or distance_band(km),
        # how far the bearing is from the nearest sector edge: a small margin is hard to call
        # (keywords: the metadata's field "bearing" is the angle, not the task of that name)
        dict(bearing=round(b, 2), margin_deg=round(edge_margin(b, points), 2), **meta),
    )


def edge_margin(bearing: float, points: int) -> float:
    """Degrees from a bearing to the nearest edge of its sector (4 or 8 sectors)."""
    width = 360.0 / points
    offset = (bearing + width / 2) % width
    return min(offset, width - offset)


def short_dlon(lon1: float, lon2: float) -> float:
    """lon2 - lon1 the short way round the antimeridian, in (-180, 180]."""
    d = (lon2 - lon1) % 360.0
    return d - 360.0 if d > 180.0 else d
