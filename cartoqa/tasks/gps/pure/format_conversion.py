"""Format conversion: a city's coordinate from decimal degrees to degrees, minutes and
seconds or back; GPSBench's form, scored exactly at the precision asked, and the variant
``format_conversion_lenient``, within half the last written unit."""

from __future__ import annotations

from cartoqa.geodesy import parse_coordinate, to_dms
from cartoqa.records import CoordinateTruth, TextTruth, Tolerance
from evaluators.gps import score_dms

from ...spec import TaskSpec
from .._register import register_gps
from .._sampling import Draft, Sampler, region_of

__all__ = [
    "DECIMAL_PLACES",
    "DMS_SECONDS_DECIMALS",
    "format_conversion",
    "format_conversion_lenient",
    "register_lenient",
    "rounding_difficulty",
    "rounding_margin",
]

#: the variant's tolerance of a decimal answer, each of lat and lon (GPSBench's)
DECIMAL_TOLERANCE = Tolerance(abs=1e-4)


#: the precision the default format conversion asks for, and scores exactly (as GPSBench):
#: seconds of arc to one decimal, decimal degrees to exactly four decimals
DMS_SECONDS_DECIMALS = 1
DECIMAL_PLACES = 4


def _conversion_difficulty(lat: float, lon: float) -> str:
    """How hard a conversion is to write right: by how many of its two values are negative
    (a south or west hemisphere, where the sign and the letter must be turned into each
    other), easy none, medium one, hard both."""
    return ("easy", "medium", "hard")[(lat < 0) + (lon < 0)]


def rounding_margin(values: tuple[float, float], per_degree: float) -> float:
    """How far the nearer of two values is from a rounding tie in the last unit asked
    (``per_degree`` units a degree: 36,000 for seconds to one decimal), in units: 0.5 for a
    value written exactly, 0 for one halfway between two.  An exact scorer makes this the
    conversion's difficulty: near a tie, the least slip in the arithmetic changes the last
    digit, and the answer is wrong."""
    return min(abs((abs(v) * per_degree) % 1.0 - 0.5) for v in values)


#: rounding margins below which a conversion is hard, and medium: near terciles over
#: 3,400 questions at seed 42 (28 %, 38 %, 34 %; the margins take few values, GeoNames
#: giving coordinates to 4 or 5 decimals)
ROUNDING_BANDS = (0.11, 0.27)


def rounding_difficulty(margin: float) -> str:
    """hard nearest a tie (``rounding_margin``), easy farthest."""
    return (
        "hard" if margin < ROUNDING_BANDS[0] else "medium" if margin < ROUNDING_BANDS[1] else "easy"
    )


def format_conversion(s: Sampler, n: int) -> Draft:
    """GPSBench's form: a city's coordinate from decimal degrees to DMS or back, scored
    exactly at the precision asked (seconds to one decimal; decimal degrees to exactly four
    decimals: "30.43" for "30.4" is wrong, "30.40" right); split by city (a train sample
    converting a city the other way would give a test answer away).  The metadata says the
    precision (``seconds_decimals``, ``decimals``): the scorer is exact only where it does,
    so datasets made before score as they did."""
    split = s.split_of(n)
    i = s.city(pools=s.split_pools(split))
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    if n % 2 == 0:
        dms = str(to_dms(lat, lon, precision=DMS_SECONDS_DECIMALS))
        text = s.prompts.text("gps.format_conversion.to_dms", lat=lat, lon=lon)
        margin = rounding_margin((lat, lon), 3600 * 10**DMS_SECONDS_DECIMALS)
        meta = {
            "direction": "to_dms",
            "seconds_decimals": DMS_SECONDS_DECIMALS,
            "rounding_margin": round(margin, 4),
        }
        difficulty = rounding_difficulty(margin)
        return Draft(text, TextTruth(answer=dms), region_of(s, i), difficulty, meta, split=split)
    dms = to_dms(lat, lon, precision=DMS_SECONDS_DECIMALS)
    # the truth is the DMS given, converted (not the city's own coordinate, which the DMS
    # has rounded), to the decimals asked; a value halfway between two is right either way
    exact = parse_coordinate(str(dms))
    text = s.prompts.text("gps.format_conversion.to_decimal", dms=dms, decimals=DECIMAL_PLACES)
    truth = CoordinateTruth(
        lat=round(exact[0], DECIMAL_PLACES),
        lon=round(exact[1], DECIMAL_PLACES),
        tolerance=Tolerance(abs=0.5 * 10.0**-DECIMAL_PLACES),
    )
    margin = rounding_margin(exact, 10**DECIMAL_PLACES)
    meta = {
        "direction": "to_decimal",
        "rounding_margin": round(margin, 4),
        "decimals": DECIMAL_PLACES,
        "exact_lat": round(exact[0], 9),
        "exact_lon": round(exact[1], 9),
    }
    return Draft(text, truth, region_of(s, i), rounding_difficulty(margin), meta, split=split)


def format_conversion_lenient(s: Sampler, n: int) -> Draft:
    """Variant: cartoqa's earlier form, right within half the last written unit (0.05" of
    arc; 0.0001 degrees of the city's own coordinate, 4 decimals or more asked)."""
    split = s.split_of(n)
    i = s.city(pools=s.split_pools(split))
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    difficulty = _conversion_difficulty(lat, lon)
    if n % 2 == 0:
        dms = str(to_dms(lat, lon, precision=1))
        text = s.prompts.text("gps.format_conversion_lenient.to_dms", lat=lat, lon=lon)
        return Draft(
            text,
            TextTruth(answer=dms),
            region_of(s, i),
            difficulty,
            {"direction": "to_dms"},
            split=split,
        )
    text = s.prompts.text(
        "gps.format_conversion_lenient.to_decimal", dms=to_dms(lat, lon, precision=1)
    )
    truth = CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6), tolerance=DECIMAL_TOLERANCE)
    return Draft(text, truth, region_of(s, i), difficulty, {"direction": "to_decimal"}, split=split)


register_gps(
    name="format_conversion",
    track="pure",
    description="a coordinate from decimal degrees to DMS or back",
    truth_kinds=frozenset({"text", "coordinate"}),
    score=score_dms,
    generator=format_conversion,
)


def register_lenient() -> TaskSpec:
    """Register the variant ``format_conversion_lenient`` (the package calls it
    after every default task)."""
    return register_gps(
        name="format_conversion_lenient",
        track="variant",
        description="variant: format conversion, within 0.05 arcsec or 0.0001 deg",
        truth_kinds=frozenset({"text", "coordinate"}),
        score=score_dms,
        generator=format_conversion_lenient,
    )
