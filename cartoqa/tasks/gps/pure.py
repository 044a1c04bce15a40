"""The Pure GPS track: nine geometry tasks, ground truth from ``cartoqa.geodesy``."""

from __future__ import annotations

import numpy as np

from cartoqa.geodesy import (
    bounding_box,
    compass_direction,
    destination,
    distance_km,
    initial_bearing_deg,
    interpolate,
    polygon_area_km2,
    polygon_perimeter_km,
    simplify_rdp,
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
    ValuesTruth,
)

from ._sampling import Draft, Sampler, distance_band

__all__ = ["PURE_TASKS"]

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


def format_conversion(s: Sampler, n: int) -> Draft:
    i = s.city()
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    hemis = (lat < 0) + (lon < 0)
    difficulty = ("easy", "medium", "hard")[hemis]
    if n % 2 == 0:
        dms = str(to_dms(lat, lon, precision=1))
        text = (
            f"Convert the coordinate {lat:.6f}, {lon:.6f} (decimal degrees, latitude first) to "
            "degrees, minutes and seconds with hemisphere letters, seconds to one decimal. "
            "Give it as FINAL ANSWER: DD°MM'SS.S\"N, DDD°MM'SS.S\"E"
        )
        return Draft(
            text, TextTruth(answer=dms), _region(s, i), difficulty, {"direction": "to_dms"}
        )
    text = (
        f"Convert {to_dms(lat, lon, precision=1)} to decimal degrees. Give it as "
        "FINAL ANSWER: <latitude>, <longitude> (negative for south and west, 4 decimals or more)"
    )
    truth = CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6))
    return Draft(text, truth, _region(s, i), difficulty, {"direction": "to_decimal"})


def coordinate_transformation(s: Sampler, n: int) -> Draft:
    i = s.city()
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    mode = ("to_utm", "to_mercator", "from_utm", "from_mercator")[n % 4]
    region = _region(s, i)
    if mode in ("to_utm", "from_utm"):
        u = to_utm(lat, lon)
        hemi = "north" if lat >= 0 else "south"
        if mode == "to_utm":
            text = (
                f"Convert {lat:.6f}, {lon:.6f} (WGS84 decimal degrees) to UTM. Give zone number, "
                'easting and northing in metres as FINAL ANSWER: {"zone": <n>, "easting": <m>, '
                '"northing": <m>}'
            )
            values = {
                "zone": float(u.zone),
                "easting": round(float(u.easting_m), 2),
                "northing": round(float(u.northing_m), 2),
            }
            truth = ValuesTruth(
                values=values,
                tolerances={"zone": 0, "easting": 10, "northing": 10},
                units={"easting": "m", "northing": "m"},
            )
            return Draft(text, truth, region, "medium", {"mode": mode})
        text = (
            f"A point has UTM zone {u.zone}, {hemi}ern hemisphere, easting "
            f"{float(u.easting_m):.2f} m, northing {float(u.northing_m):.2f} m (WGS84). "
            "Give its latitude and longitude as "
            "FINAL ANSWER: <latitude>, <longitude>"
        )
        return Draft(
            text,
            CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6)),
            region,
            "hard",
            {"mode": mode, "tolerance_deg": 0.0001},
        )
    x, y = (float(v) for v in to_web_mercator(lat, lon))
    if mode == "to_mercator":
        text = (
            f"Convert {lat:.6f}, {lon:.6f} (WGS84) to Web Mercator (EPSG:3857) metres. Give it as "
            'FINAL ANSWER: {"x": <m>, "y": <m>}'
        )
        truth = ValuesTruth(
            values={"x": round(x, 2), "y": round(y, 2)},
            tolerances={"x": 100, "y": 100},
            units={"x": "m", "y": "m"},
        )
        return Draft(text, truth, region, "easy", {"mode": mode})
    text = (
        f"A point has Web Mercator (EPSG:3857) coordinates x = {x:.2f} m, y = {y:.2f} m. Give its "
        "WGS84 latitude and longitude as FINAL ANSWER: <latitude>, <longitude>"
    )
    return Draft(
        text,
        CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6)),
        region,
        "medium",
        {"mode": mode, "tolerance_deg": 0.001},
    )


def distance(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(50)
    text = (
        f"What is the great-circle distance between {s.label(i)} and {s.label(j)}? "
        "Give it in kilometres as FINAL ANSWER: <number> km"
    )
    truth = NumberTruth(
        value=round(km, 3), unit="km", equivalents={"mi": round(km / KM_PER_MILE, 3)}
    )
    return Draft(text, truth, _region(s, i), distance_band(km), {"unit": "km"})


def bearing(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(100)
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    text = (
        f"What is the initial bearing (forward azimuth, degrees clockwise from true north) from "
        f"{s.label(i)} to {s.label(j)}? Give it as FINAL ANSWER: <number> degrees"
    )
    return Draft(text, NumberTruth(value=round(b, 3), unit="deg"), _region(s, i), distance_band(km))


def interpolation(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(500)
    c = s.c
    f = (0.25, 0.5, 0.75)[n % 3]
    lat, lon = interpolate(c.lat[i], c.lon[i], c.lat[j], c.lon[j], f)
    text = (
        f"Along the great circle from {s.label(i)} to {s.label(j)}, which point lies {f:g} of "
        "the way? Give it as FINAL ANSWER: <latitude>, <longitude>"
    )
    truth = CoordinateTruth(lat=round(float(lat), 6), lon=round(float(lon), 6))
    return Draft(text, truth, _region(s, i), distance_band(km), {"fraction": f})


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


def polygon(s: Sampler, n: int) -> Draft:
    k = 3 + n % 4
    idx = _regional(s, k)
    c = s.c
    area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
    perim = float(polygon_perimeter_km(c.lat[idx], c.lon[idx]))
    pts = "; ".join(s.label(i) for i in idx)
    text = (
        f"These cities are the vertices of a polygon, in order: {pts}. On a sphere of radius "
        "6371 km, what are its area and perimeter? Give them as "
        'FINAL ANSWER: {"area_km2": <number>, "perimeter_km": <number>}'
    )
    truth = ValuesTruth(
        values={"area_km2": round(area, 2), "perimeter_km": round(perim, 3)},
        tolerances={"area_km2": round(0.05 * area, 3), "perimeter_km": round(0.05 * perim, 3)},
        units={"area_km2": "km2", "perimeter_km": "km"},
    )
    difficulty = ("easy", "easy", "medium", "hard")[k - 3]
    return Draft(text, truth, _region(s, idx[0]), difficulty, {"vertices": k})


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


def bounding_box_task(s: Sampler, n: int) -> Draft:
    k = 3 + n % 6
    idx = s.spread(k, 100)
    c = s.c
    box = bounding_box(c.lat[idx], c.lon[idx])._asdict()
    pts = "; ".join(s.label(i) for i in idx)
    keys = ", ".join(f'"{k_}": <number>' for k_ in BBOX_TOLERANCES)
    text = (
        f"For these cities: {pts}, give the bounding box (plain minimum and maximum of latitude "
        "and longitude), the centre of the bounds, the centroid (mean of the coordinates) and "
        "the great-circle length of the diagonal from the south-west to the north-east corner "
        f"in km. Tolerances: 0.01 degrees, 10 km. FINAL ANSWER: {{{keys}}}"
    )
    truth = ValuesTruth(
        values={k_: round(float(v), 6) for k_, v in box.items()},
        tolerances=BBOX_TOLERANCES,
        units={"diagonal_km": "km"},
    )
    difficulty = "easy" if k <= 4 else "medium" if k <= 6 else "hard"
    return Draft(text, truth, _region(s, idx[0]), difficulty, {"points": k})


def route_geometry(s: Sampler, n: int) -> Draft:
    k = 8 + n % 8
    start = s.city()
    lat, lon = float(s.c.lat[start]), float(s.c.lon[start])
    heading = float(s.rng.uniform(0, 360))
    lats, lons = [lat], [lon]
    for _ in range(k - 1):
        heading += float(s.rng.normal(0, 30))
        lat, lon = (
            float(v) for v in destination(lat, lon, heading % 360, float(s.rng.uniform(3, 30)))
        )
        lats.append(round(lat, 5))
        lons.append(round(lon, 5))
    lats[0], lons[0] = round(lats[0], 5), round(lons[0], 5)
    eps = float(s.rng.choice([0.5, 1.0, 1.5, 2.0]))
    kept = [int(v) for v in simplify_rdp(lats, lons, eps)]
    pts = "\n".join(
        f"{j}: {a:.5f}, {b:.5f}" for j, (a, b) in enumerate(zip(lats, lons, strict=True))
    )
    text = (
        f"Simplify this path with the Ramer-Douglas-Peucker algorithm, tolerance {eps:g} km "
        f"(great-circle cross-track distances), keeping the first and last point:\n{pts}\n"
        "Which point indices are kept? FINAL ANSWER: [<i>, <j>, ...]"
    )
    difficulty = "easy" if k <= 10 else "medium" if k <= 12 else "hard"
    return Draft(
        text,
        IndicesTruth(indices=kept),
        _region(s, start),
        difficulty,
        {"epsilon_km": eps, "points": k},
    )


def direction_question(s: Sampler, i: int, j: int, question: str, meta: dict, km: float) -> Draft:
    """A multiple-choice direction question: the 8-sector compass point of the initial bearing
    from city i to city j, against three other sectors."""
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    sector = str(compass_direction(b))
    opts, letter = s.options(
        SECTOR_NAMES[sector], [SECTOR_NAMES[x] for x in SECTORS if x != sector]
    )
    listed = s.listed(opts)
    text = f"{question}\n{listed}\nAnswer with the letter: FINAL ANSWER: <letter>"
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        _region(s, i),
        distance_band(km),
        {"bearing": round(b, 2), **meta},
    )


def relative_position_pure(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(100)
    question = (
        f"Going by the initial bearing, in which direction does {s.label(j)} lie from {s.label(i)}?"
    )
    return direction_question(s, i, j, question, {}, km)


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
