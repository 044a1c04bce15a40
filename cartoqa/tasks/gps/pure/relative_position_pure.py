"""Relative position (pure): north, south, east or west between two coordinates, by the
initial bearing (GPSBench's form), and two variants: ``relative_position_pure_8`` (the
eight compass points) and ``relative_position_pure_latlon`` (by the larger latitude or
longitude difference)."""

from __future__ import annotations

from cartoqa.geodesy import initial_bearing_deg
from evaluators.gps import score_choice

from ...spec import TaskSpec
from .._directions import direction_question, edge_margin, short_dlon
from .._register import register_gps
from .._sampling import Draft, Sampler

__all__ = [
    "latlon_direction",
    "margin_difficulty",
    "register_8",
    "register_latlon",
    "relative_position_pure",
    "relative_position_pure_8",
    "relative_position_pure_latlon",
]

#: a direction question's margin (``edge_margin``, degrees) below which it is hard, and
#: medium: terciles over 3,400 questions at seed 42, by the number of sectors (the margin
#: is not uniform: pairs across continents cluster near the diagonals)
MARGIN_BANDS_DEG = {4: (12.0, 27.0), 8: (8.0, 15.7)}
#: the same for the lat/lon rule's margin (``latlon_direction``)
LATLON_MARGIN_BANDS = (0.35, 0.68)


def margin_difficulty(margin: float, hard: float, medium: float) -> str:
    """A direction question's difficulty by how near it is to a tie between two answers:
    hard below ``hard``, medium below ``medium``, else easy."""
    return "hard" if margin < hard else "medium" if margin < medium else "easy"


def relative_position_pure(s: Sampler, n: int) -> Draft:
    """GPSBench's form: north, south, east or west (in that order), by the initial bearing
    (four quarters centred on north, east, south and west)."""
    i, j, km = s.pair(100)
    question = s.prompts.text(
        "gps.relative_position_pure.question", origin=s.label(i), destination=s.label(j)
    )
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    return direction_question(
        s,
        i,
        j,
        question,
        {},
        km,
        difficulty=margin_difficulty(edge_margin(b, 4), *MARGIN_BANDS_DEG[4]),
    )


def latlon_direction(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[str, float]:
    """The latitude/longitude-difference rule: the larger of |dlat| and |dlon| (degrees,
    dlon the short way round the antimeridian) decides the axis, its sign the direction
    (north for a positive dlat, east for a positive dlon).  Returns the sector and the
    rule's margin, (|dlat| - |dlon|) / (|dlat| + |dlon|) in absolute value: 0 a tie, 1 a
    point due north, south, east or west.  An exact tie goes to north/south."""
    dlat, dlon = lat2 - lat1, short_dlon(lon1, lon2)
    a, o = abs(dlat), abs(dlon)
    margin = abs(a - o) / (a + o) if a + o else 0.0
    if a >= o:
        return ("N" if dlat > 0 else "S"), margin
    return ("E" if dlon > 0 else "W"), margin


#: the least margin (``latlon_direction``) of a lat/lon-rule question: nearer a tie, the
#: labels' 4 decimals could tip it, and the draw is made again (``latlon_tie``)
LATLON_MIN_MARGIN = 0.001


def relative_position_pure_latlon(s: Sampler, n: int) -> Draft:
    """Variant: the default's question and options, the truth by the latitude/longitude
    difference rule (``latlon_direction``), which the paper's own example (a bearing near
    321 degrees called west) fits and which disagrees with the bearing rule on about a
    quarter of the questions; difficulty by the rule's margin."""
    while True:
        i, j, km = s.pair(100)
        c = s.c
        sector, margin = latlon_direction(
            float(c.lat[i]), float(c.lon[i]), float(c.lat[j]), float(c.lon[j])
        )
        if margin >= LATLON_MIN_MARGIN:
            break
        s.reject("latlon_tie")
    question = s.prompts.text(
        "gps.relative_position_pure_latlon.question", origin=s.label(i), destination=s.label(j)
    )
    difficulty = margin_difficulty(margin, *LATLON_MARGIN_BANDS)
    return direction_question(
        s,
        i,
        j,
        question,
        {"latlon_margin": round(margin, 4)},
        km,
        sector=sector,
        difficulty=difficulty,
    )


def relative_position_pure_8(s: Sampler, n: int) -> Draft:
    """Variant: the eight compass points as options (shuffled)."""
    i, j, km = s.pair(100)
    question = s.prompts.text(
        "gps.relative_position_pure_8.question", origin=s.label(i), destination=s.label(j)
    )
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    return direction_question(
        s,
        i,
        j,
        question,
        {},
        km,
        points=8,
        difficulty=margin_difficulty(edge_margin(b, 8), *MARGIN_BANDS_DEG[8]),
    )


register_gps(
    name="relative_position_pure",
    track="pure",
    description="north, east, south or west, by the bearing between coordinates",
    truth_kinds=frozenset({"choice"}),
    score=score_choice,
    generator=relative_position_pure,
)


def register_8() -> TaskSpec:
    """Register the variant ``relative_position_pure_8`` (the package calls it after
    every default task)."""
    return register_gps(
        name="relative_position_pure_8",
        track="variant",
        description="variant: the eight compass points between coordinates",
        truth_kinds=frozenset({"choice"}),
        score=score_choice,
        generator=relative_position_pure_8,
    )


def register_latlon() -> TaskSpec:
    """Register the variant ``relative_position_pure_latlon`` (the package calls it
    after every default task)."""
    return register_gps(
        name="relative_position_pure_latlon",
        track="variant",
        description=(
            "variant: north, south, east or west by the larger latitude or longitude difference"
        ),
        truth_kinds=frozenset({"choice"}),
        score=score_choice,
        generator=relative_position_pure_latlon,
    )
