"""The Pure GPS track: nine geometry tasks, ground truth from ``cartoqa.geodesy``; their
wording is ``cartoqa/tasks/prompts/gps.toml`` (``gps.<task>.<key>``)."""

from __future__ import annotations

import json
import math

import numpy as np

from cartoqa.geodesy import (
    EARTH_RADIUS_KM,
    bounding_box,
    compass_direction,
    destination,
    distance_km,
    initial_bearing_deg,
    interpolate,
    parse_coordinate,
    polygon_area_km2,
    polygon_is_simple,
    polygon_perimeter_km,
    rdp_thresholds_km,
    to_dms,
    to_utm,
    to_web_mercator,
)
from cartoqa.records import (
    ChoiceTruth,
    CoordinateTruth,
    IndicesTruth,
    NumberTruth,
    TextTruth,
    Tolerance,
    ValuesTruth,
)

from ..templates import PromptSet
from ._sampling import Draft, Sampler, distance_band

__all__ = ["PURE_TASKS", "PURE_VARIANTS"]

KM_PER_MILE = 1.609344
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


def _region(s: Sampler, i: int) -> str:
    return str(s.c.subregion[i])


#: how close an answer must be, by question (GPSBench's tolerances); each truth carries its
#: own, and the scorer reads it from there
TOLERANCES = {
    "decimal": Tolerance(abs=1e-4),  # DMS to decimal degrees, each of lat and lon
    "from_utm": Tolerance(abs=1e-4),
    "from_mercator": Tolerance(abs=1e-3),
    "distance": Tolerance(abs=5.0, rel=0.05),  # km
    "bearing": Tolerance(abs=5.0, wrap=360.0),
    "interpolation": Tolerance(abs=0.01),
    "polygon": Tolerance(rel=0.05),
}


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
        return Draft(text, TextTruth(answer=dms), _region(s, i), difficulty, meta, split=split)
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
    return Draft(text, truth, _region(s, i), rounding_difficulty(margin), meta, split=split)


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
            _region(s, i),
            difficulty,
            {"direction": "to_dms"},
            split=split,
        )
    text = s.prompts.text(
        "gps.format_conversion_lenient.to_decimal", dms=to_dms(lat, lon, precision=1)
    )
    truth = CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6), tolerance=TOLERANCES["decimal"])
    return Draft(text, truth, _region(s, i), difficulty, {"direction": "to_decimal"}, split=split)


def coordinate_transformation(s: Sampler, n: int) -> Draft:
    """A city's coordinate to UTM or Web Mercator or back; split by city, as format
    conversion."""
    split = s.split_of(n)
    d = _transform(s, s.city(pools=s.split_pools(split)), n)
    d.split = split
    return d


def _transform(s: Sampler, i: int, n: int) -> Draft:
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    mode = ("to_utm", "to_mercator", "from_utm", "from_mercator")[n % 4]
    region = _region(s, i)
    if mode in ("to_utm", "from_utm"):
        u = to_utm(lat, lon)
        hemi = "north" if lat >= 0 else "south"
        if mode == "to_utm":  # the zone is given, as in GPSBench
            text = s.prompts.text(
                "gps.coordinate_transformation.to_utm",
                lat=lat,
                lon=lon,
                zone=u.zone,
                hemisphere=hemi,
            )
            values = {
                "easting": round(float(u.easting_m), 2),
                "northing": round(float(u.northing_m), 2),
            }
            truth = ValuesTruth(
                values=values,
                tolerances={"easting": 10, "northing": 10},
                units={"easting": "m", "northing": "m"},
            )
            return Draft(text, truth, region, "medium", {"mode": mode, "zone": int(u.zone)})
        text = s.prompts.text(
            "gps.coordinate_transformation.from_utm",
            zone=u.zone,
            hemisphere=hemi,
            easting=float(u.easting_m),
            northing=float(u.northing_m),
        )
        return Draft(
            text,
            CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6), tolerance=TOLERANCES["from_utm"]),
            region,
            "hard",
            {"mode": mode},
        )
    x, y = (float(v) for v in to_web_mercator(lat, lon))
    if mode == "to_mercator":
        text = s.prompts.text("gps.coordinate_transformation.to_mercator", lat=lat, lon=lon)
        truth = ValuesTruth(
            values={"x": round(x, 2), "y": round(y, 2)},
            tolerances={"x": 100, "y": 100},
            units={"x": "m", "y": "m"},
        )
        return Draft(text, truth, region, "easy", {"mode": mode})
    text = s.prompts.text("gps.coordinate_transformation.from_mercator", x=x, y=y)
    return Draft(
        text,
        CoordinateTruth(
            lat=round(lat, 6), lon=round(lon, 6), tolerance=TOLERANCES["from_mercator"]
        ),
        region,
        "medium",
        {"mode": mode},
    )


# Difficulty of the two-city questions: not the distance (over 90 % of pairs drawn by the
# continent quotas are beyond 2,000 km, so a distance band calls nearly all "hard"), but how
# far a reader's shortcut lands from the truth: the flat (equirectangular) reading of the
# coordinates, dlon scaled by the cosine of the mean latitude, which is right for near,
# low-latitude pairs and wrong for long or polar ones.  Thresholds: terciles of each
# measure over 3,400 questions at seed 42 (tests/cartoqa/test_gps_paper_forms_pure.py).


def _flat(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, float]:
    """The flat reading's east and north offsets, in degrees of arc."""
    return short_dlon(lon1, lon2) * math.cos(math.radians((lat1 + lat2) / 2)), lat2 - lat1


def flat_distance_error(lat1: float, lon1: float, lat2: float, lon2: float, km: float) -> float:
    """|flat distance - great-circle distance| / great-circle distance."""
    x, y = _flat(lat1, lon1, lat2, lon2)
    flat_km = math.radians(math.hypot(x, y)) * EARTH_RADIUS_KM
    return abs(flat_km - km) / km


def flat_bearing_error(lat1: float, lon1: float, lat2: float, lon2: float, b: float) -> float:
    """Degrees between the flat reading's bearing and the initial bearing ``b``."""
    x, y = _flat(lat1, lon1, lat2, lon2)
    d = abs(math.degrees(math.atan2(x, y)) % 360.0 - b) % 360.0
    return min(d, 360.0 - d)


def linear_point_error(
    lat1: float, lon1: float, lat2: float, lon2: float, f: float, lat: float, lon: float
) -> float:
    """Degrees (the larger of latitude and longitude) between the point ``f`` of the way
    along the straight line in latitude and longitude and the great-circle point."""
    return max(
        abs(lat1 + f * (lat2 - lat1) - lat),
        abs(short_dlon(lon, lon1 + f * short_dlon(lon1, lon2))),
    )


def band(value: float, medium: float, hard: float) -> str:
    """easy below ``medium``, medium below ``hard``, else hard."""
    return "easy" if value < medium else "medium" if value < hard else "hard"


#: the shortcut errors' terciles over 3,400 questions at seed 42
DISTANCE_BANDS = (0.0104, 0.048)  # relative error of the flat distance
BEARING_BANDS_DEG = (6.0, 23.7)  # the flat bearing's error
INTERPOLATION_BANDS_DEG = (1.5, 7.8)  # the straight-line point's error


def _ends(s: Sampler, i: int, j: int) -> tuple[float, float, float, float]:
    c = s.c
    return float(c.lat[i]), float(c.lon[i]), float(c.lat[j]), float(c.lon[j])


def distance(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(50)
    text = s.prompts.text("gps.distance.question", origin=s.label(i), destination=s.label(j))
    truth = NumberTruth(
        value=round(km, 3),
        unit="km",
        equivalents={"mi": round(km / KM_PER_MILE, 3)},
        tolerance=TOLERANCES["distance"],
    )
    err = flat_distance_error(*_ends(s, i, j), km)
    return Draft(
        text,
        truth,
        _region(s, i),
        band(err, *DISTANCE_BANDS),
        {"unit": "km", "km": round(km, 1), "flat_error": round(err, 4)},
    )


def bearing(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(100)
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    text = s.prompts.text("gps.bearing.question", origin=s.label(i), destination=s.label(j))
    truth = NumberTruth(value=round(b, 3), unit="deg", tolerance=TOLERANCES["bearing"])
    err = flat_bearing_error(*_ends(s, i, j), b)
    return Draft(
        text,
        truth,
        _region(s, i),
        band(err, *BEARING_BANDS_DEG),
        {"km": round(km, 1), "flat_error_deg": round(err, 3)},
    )


def interpolation(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(500)
    c = s.c
    f = (0.25, 0.5, 0.75)[n % 3]
    lat, lon = interpolate(c.lat[i], c.lon[i], c.lat[j], c.lon[j], f)
    text = s.prompts.text(
        "gps.interpolation.question", origin=s.label(i), destination=s.label(j), fraction=f
    )
    truth = CoordinateTruth(
        lat=round(float(lat), 6), lon=round(float(lon), 6), tolerance=TOLERANCES["interpolation"]
    )
    err = linear_point_error(*_ends(s, i, j), f, float(lat), float(lon))
    return Draft(
        text,
        truth,
        _region(s, i),
        band(err, *INTERPOLATION_BANDS_DEG),
        {"fraction": f, "km": round(km, 1), "linear_error_deg": round(err, 3)},
    )


def _regional(s: Sampler, k: int) -> list[int]:
    """GPSBench's regional polygon: an anchor, cities 50-2,000 km from it, >= 50 km apart."""
    c = s.c
    for _ in range(1000):
        cont = s.continent()
        pool = s.by_continent[cont]
        if pool.size < 2 * k:
            continue
        a = s.city(cont)
        d = s.distances(a, pool)
        near = pool[(d >= 50) & (d <= 2000)]
        if near.size < k - 1:
            continue
        chosen = [a]
        for idx in s.rng.permutation(near):
            if all(distance_km(c.lat[idx], c.lon[idx], c.lat[j], c.lon[j]) >= 50 for j in chosen):
                chosen.append(int(idx))
                if len(chosen) == k:
                    break
        if len(chosen) == k:
            # vertices sorted by angle around the centroid
            la, lo = c.lat[chosen], c.lon[chosen]
            ang = np.arctan2(la - la.mean(), lo - lo.mean())
            return [chosen[int(t)] for t in np.argsort(ang)]
    raise RuntimeError("no regional polygon found")


#: the least isoperimetric quotient (4πA/P²; 1 for a circle, 0.6 for an equilateral
#: triangle) of a polygon question: a thinner sliver's area hangs on tiny angles
MIN_ROUNDNESS = 0.05


def _polygon_prompt(s: Sampler, n: int) -> tuple[list[int], str, str]:
    """A regional polygon whose great-circle edges do not cross (its vertices are sorted by
    angle on the plane of latitude and longitude, which does not promise that) and that is
    no sliver; others are drawn again (``self_intersecting``, ``sliver``)."""
    k = 3 + n % 4
    c = s.c
    while True:
        idx = _regional(s, k)
        if not polygon_is_simple(c.lat[idx], c.lon[idx]):
            s.reject("self_intersecting")
            continue
        area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
        perimeter = float(polygon_perimeter_km(c.lat[idx], c.lon[idx]))
        if 4 * np.pi * area / perimeter**2 < MIN_ROUNDNESS:
            s.reject("sliver")
            continue
        break
    pts = "; ".join(s.label(i) for i in idx)
    difficulty = ("easy", "easy", "medium", "hard")[k - 3]
    return idx, s.prompts.text("gps.polygon.vertices", points=pts), difficulty


def polygon(s: Sampler, n: int) -> Draft:
    """GPSBench's form: the area of a 3-6 vertex regional polygon, within 5 %."""
    idx, given, difficulty = _polygon_prompt(s, n)
    c = s.c
    area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
    text = s.prompts.text("gps.polygon.question", vertices=given)
    truth = NumberTruth(value=round(area, 2), unit="km2", tolerance=TOLERANCES["polygon"])
    return Draft(text, truth, _region(s, idx[0]), difficulty, {"vertices": len(idx)})


def polygon_perimeter(s: Sampler, n: int) -> Draft:
    """Variant: area and perimeter together, each within 5 %."""
    idx, given, difficulty = _polygon_prompt(s, n)
    c = s.c
    area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
    perim = float(polygon_perimeter_km(c.lat[idx], c.lon[idx]))
    text = s.prompts.text("gps.polygon_perimeter.question", vertices=given)
    truth = ValuesTruth(
        values={"area_km2": round(area, 2), "perimeter_km": round(perim, 3)},
        tolerances={"area_km2": round(0.05 * area, 3), "perimeter_km": round(0.05 * perim, 3)},
        units={"area_km2": "km2", "perimeter_km": "km"},
    )
    return Draft(text, truth, _region(s, idx[0]), difficulty, {"vertices": len(idx)})


BBOX_TOLERANCES = {
    "min_lat": 0.01,
    "max_lat": 0.01,
    "min_lon": 0.01,
    "max_lon": 0.01,
    "center_lat": 0.01,
    "center_lon": 0.01,
    "centroid_lat": 0.01,
    "centroid_lon": 0.01,
    "diagonal_km": 10.0,
}
#: GPSBench's bounding box: the four bounds
BBOX_BOUNDS = ("min_lat", "max_lat", "min_lon", "max_lon")


def _bbox(s: Sampler, n: int, keys: tuple[str, ...], prompt: str) -> Draft:
    """A bounding-box question on 3-8 cities asking for ``keys``, worded by the template
    ``prompt``."""
    k = 3 + n % 6
    idx = s.spread(k, 100)
    c = s.c
    box = bounding_box(c.lat[idx], c.lon[idx])._asdict()
    pts = "; ".join(s.label(i) for i in idx)
    listed = ", ".join(f'"{k_}": <number>' for k_ in keys)
    text = s.prompts.text(prompt, points=pts, keys=listed)
    truth = ValuesTruth(
        values={k_: round(float(box[k_]), 6) for k_ in keys},
        tolerances={k_: BBOX_TOLERANCES[k_] for k_ in keys},
        units={"diagonal_km": "km"} if "diagonal_km" in keys else {},
    )
    difficulty = "easy" if k <= 4 else "medium" if k <= 6 else "hard"
    return Draft(text, truth, _region(s, idx[0]), difficulty, {"points": k})


def bounding_box_task(s: Sampler, n: int) -> Draft:
    """GPSBench's form: the minimum and maximum latitude and longitude, each within 0.01°."""
    return _bbox(s, n, BBOX_BOUNDS, "gps.bounding_box.question")


def bounding_box_full(s: Sampler, n: int) -> Draft:
    """Variant: the bounds, the centre of the bounds, the centroid and the diagonal."""
    return _bbox(s, n, tuple(BBOX_TOLERANCES), "gps.bounding_box_full.question")


def _path(s: Sampler, n: int) -> tuple[list[float], list[float], float, list[int], str, str]:
    """A random path of 8-15 points 3-30 km apart, an RDP tolerance, the indices RDP keeps,
    the difficulty and the region of its first point."""
    k = 8 + n % 8
    start = s.city()
    lat, lon = float(s.c.lat[start]), float(s.c.lon[start])
    heading = float(s.rng.uniform(0, 360))
    lats, lons = [lat], [lon]
    for _ in range(k - 1):
        heading += float(s.rng.normal(0, HEADING_SD_DEG))
        lat, lon = (
            float(v) for v in destination(lat, lon, heading % 360, float(s.rng.uniform(3, 30)))
        )
        lats.append(round(lat, 5))
        lons.append(round(lon, 5))
    lats[0], lons[0] = round(lats[0], 5), round(lons[0], 5)
    eps = float(s.rng.choice(RDP_TOLERANCES_KM))
    thresholds = rdp_thresholds_km(lats, lons)
    kept = [int(v) for v in np.flatnonzero(thresholds > eps)]  # what simplify_rdp keeps
    inner = thresholds[1:-1]
    if inner.size and float(np.abs(inner - eps).min()) < RDP_CLEARANCE_KM:
        s.reject("near_tolerance")  # a point kept or dropped by metres: redraw the path
        return _path(s, n)
    difficulty = "easy" if k <= 10 else "medium" if k <= 12 else "hard"
    return lats, lons, eps, kept, difficulty, _region(s, start)


RDP_TOLERANCES_KM = (0.5, 1.0, 1.5, 2.0)
#: how much a path turns at each point (normal, degrees): straight enough that RDP drops a
#: fair share of the points, so the right list can hide among its options
HEADING_SD_DEG = 15.0
#: every point's RDP threshold is at least this far from the tolerance asked
RDP_CLEARANCE_KM = 0.02


def _path_text(prompts: PromptSet, lats: list[float], lons: list[float], eps: float) -> str:
    """The path and the RDP rule (``gps.route_geometry.path``), which both route-geometry
    questions open with."""
    pts = "\n".join(
        f"{j}: {a:.5f}, {b:.5f}" for j, (a, b) in enumerate(zip(lats, lons, strict=True))
    )
    return prompts.text("gps.route_geometry.path", tolerance=eps, points=pts)


def _wrong_lists(s: Sampler, n_points: int, kept: list[int]) -> list[str] | None:
    """Three index lists RDP does not give, arranged so that nothing but RDP tells the right
    one: the four options are a hidden list with two interior points added (one each) and
    two dropped (one each), and the right list takes one of those four roles at random.  All
    four are one edit from the hidden list and two from each other, two are one point longer
    and two one point shorter, so neither "the option nearest the rest" nor "the longest"
    (RDP tends to keep most points) beats chance.  None when the path keeps or drops fewer
    than three interior points, too few to arrange that either way."""
    right = set(kept)
    inner = list(range(1, n_points - 1))
    kept_in = [j for j in inner if j in right]
    left_out = [j for j in inner if j not in right]
    if len(kept_in) < 3 or len(left_out) < 3:  # so that every role below is possible
        return None

    def two(pool: list[int], first: int | None = None) -> list[int]:
        rest = [j for j in pool if j != first]
        picked = [rest[int(k)] for k in s.rng.permutation(len(rest))[: 2 - (first is not None)]]
        return [first, *picked] if first is not None else picked

    if s.rng.random() < 0.5:  # right = hidden + a: one of the two "added" lists
        a = kept_in[int(s.rng.integers(len(kept_in)))]
        hidden = right - {a}
        adds = two([j for j in inner if j not in hidden], first=a)
        drops = two([j for j in inner if j in hidden])
    else:  # right = hidden - x: one of the two "dropped" lists
        x = left_out[int(s.rng.integers(len(left_out)))]
        hidden = right | {x}
        adds = two([j for j in inner if j not in hidden])
        drops = two([j for j in inner if j in hidden], first=x)
    options = [hidden | {adds[0]}, hidden | {adds[1]}, hidden - {drops[0]}, hidden - {drops[1]}]
    wrong = [o for o in options if o != right]
    assert len(wrong) == 3
    return [json.dumps(sorted(o)) for o in wrong]


def route_geometry(s: Sampler, n: int) -> Draft:
    """GPSBench's form: which of four index lists RDP keeps (multiple choice; the wrong lists
    from ``_wrong_lists``)."""
    while True:
        lats, lons, eps, kept, difficulty, region = _path(s, n)
        wrong = _wrong_lists(s, len(lats), kept)
        if wrong is not None:
            break
        s.reject("too_few_to_arrange")  # RDP keeps (or drops) nearly every point
    opts, letter = s.options(json.dumps(kept), wrong)
    text = s.prompts.text(
        "gps.route_geometry.question",
        path=_path_text(s.prompts, lats, lons, eps),
        options=s.listed(opts),
    )
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        region,
        difficulty,
        {"epsilon_km": eps, "points": len(lats)},
    )


def route_geometry_indices(s: Sampler, n: int) -> Draft:
    """Variant: the kept indices written out, with no options to choose from."""
    lats, lons, eps, kept, difficulty, region = _path(s, n)
    text = s.prompts.text(
        "gps.route_geometry_indices.question", path=_path_text(s.prompts, lats, lons, eps)
    )
    return Draft(
        text,
        IndicesTruth(indices=kept),
        region,
        difficulty,
        {"epsilon_km": eps, "points": len(lats)},
    )


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
        _region(s, i),
        difficulty or distance_band(km),
        # how far the bearing is from the nearest sector edge: a small margin is hard to call
        {"bearing": round(b, 2), "margin_deg": round(edge_margin(b, points), 2), **meta},
    )


def edge_margin(bearing: float, points: int) -> float:
    """Degrees from a bearing to the nearest edge of its sector (4 or 8 sectors)."""
    width = 360.0 / points
    offset = (bearing + width / 2) % width
    return min(offset, width - offset)


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


def short_dlon(lon1: float, lon2: float) -> float:
    """lon2 - lon1 the short way round the antimeridian, in (-180, 180]."""
    d = (lon2 - lon1) % 360.0
    return d - 360.0 if d > 180.0 else d


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


PURE_TASKS = {
    "format_conversion": format_conversion,
    "coordinate_transformation": coordinate_transformation,
    "distance": distance,
    "bearing": bearing,
    "interpolation": interpolation,
    "polygon": polygon,
    "bounding_box": bounding_box_task,
    "route_geometry": route_geometry,
    "relative_position_pure": relative_position_pure,
}
#: richer forms than GPSBench's, each its own task so their scores never mix with the paper's
PURE_VARIANTS = {
    "polygon_perimeter": polygon_perimeter,
    "bounding_box_full": bounding_box_full,
    "route_geometry_indices": route_geometry_indices,
    "relative_position_pure_8": relative_position_pure_8,
    "format_conversion_lenient": format_conversion_lenient,
    "relative_position_pure_latlon": relative_position_pure_latlon,
}
