"""Coordinate transformation: a city's coordinate to UTM (the zone given) or Web Mercator,
or back."""

from __future__ import annotations

from cartoqa.geodesy import to_utm, to_web_mercator
from cartoqa.records import CoordinateTruth, Tolerance, ValuesTruth
from evaluators.gps import by_truth, score_position, score_values

from .._register import register_gps
from .._sampling import Draft, Sampler, region_of

__all__ = ["coordinate_transformation"]

#: how close an inverse answer must be, each of lat and lon (GPSBench's)
FROM_UTM_TOLERANCE = Tolerance(abs=1e-4)
FROM_MERCATOR_TOLERANCE = Tolerance(abs=1e-3)


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
    region = region_of(s, i)
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
            CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6), tolerance=FROM_UTM_TOLERANCE),
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
        CoordinateTruth(lat=round(lat, 6), lon=round(lon, 6), tolerance=FROM_MERCATOR_TOLERANCE),
        region,
        "medium",
        {"mode": mode},
    )


register_gps(
    name="coordinate_transformation",
    track="pure",
    description="WGS84 to UTM (zone given) or Web Mercator, or back",
    truth_kinds=frozenset({"values", "coordinate"}),
    score=by_truth(values=score_values, coordinate=score_position),
    generator=coordinate_transformation,
)
