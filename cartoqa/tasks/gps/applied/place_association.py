"""Place association: the city at a noisy coordinate (GPSBench's form: the city alone asked,
province and country graded too), and the variant ``place_association_levels``: the city,
its province and its country asked."""

from __future__ import annotations

import difflib

import numpy as np

from cartoqa.geodesy import distance_km
from cartoqa.records import Sample, TextTruth
from evaluators.gps import score_place

from ...spec import TaskSpec
from .._admin1 import ADMIN1_SOURCE
from .._cities import Cities, left_out_rows
from .._labels import fold
from .._register import register_gps
from .._sampling import Draft, Sampler
from ._names import accepted_names

__all__ = [
    "BIGGER",
    "BIGGER_CITY_KM",
    "NEAR_TIE",
    "NEIGHBOUR_KM",
    "NOISE_M",
    "POPULATION_BANDS",
    "TWIN_KM",
    "format_city",
    "format_place",
    "has_twin_town",
    "near_same_names",
    "place_association",
    "place_association_levels",
    "register_levels",
]

NOISE_M = (0, 10, 50, 100, 500, 1000)


def _noisy(s: Sampler, i: int, sigma_m: float) -> tuple[float, float]:
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    dlat = s.rng.normal(0, sigma_m / 111_000) if sigma_m else 0.0
    dlon = s.rng.normal(0, sigma_m / (111_000 * np.cos(np.radians(lat)))) if sigma_m else 0.0
    return lat + float(dlat), lon + float(dlon)


#: place association's population bands, by difficulty (GPSBench's)
POPULATION_BANDS = {"easy": (500_000, 10**12), "medium": (100_000, 500_000), "hard": (0, 100_000)}


def _population_pools(s: Sampler) -> dict[tuple[str, str], np.ndarray]:
    """(band, continent) -> the cities of that population band on that continent."""
    if "population_pools" not in s.memo:
        pop = s.c.population
        s.memo["population_pools"] = {
            (band, k): np.intersect1d(s.by_continent[k], np.flatnonzero((pop >= lo) & (pop < hi)))
            for band, (lo, hi) in POPULATION_BANDS.items()
            for k in s.by_continent
        }
    pools: dict[tuple[str, str], np.ndarray] = s.memo["population_pools"]
    return pools


#: place association: a city with BIGGER times the answer's people within BIGGER_CITY_KM of
#: the point makes the answer a district or suburb of it (Maianga in Luanda, Üsküdar in
#: Istanbul), or a place "next to" it that a person names by its big neighbour: the draw is
#: made again
BIGGER, BIGGER_CITY_KM = 2, 15.0
#: place association: the second-nearest city within NEAR_TIE times the nearest's distance
#: from the point is a near-tie (the noise could as well have come from it)
NEAR_TIE = 1.25
#: place association's rules look this far from the point (a latitude band each way)
NEIGHBOUR_KM = 100.0
#: twin towns: another city within TWIN_KM whose name a reader could take for the city's
#: (Nogales, Arizona, and Nogales, Sonora; Laredo and Nuevo Laredo)
TWIN_KM = 35.0


def near_same_names(a: str, b: str) -> bool:
    """Whether a reader could take two names for one: equal once folded (``_labels.fold``),
    one inside the other (of four letters or more: "Laredo" in "Nuevo Laredo"), or nine
    letters in ten alike (difflib's ratio 0.8 or more: "Valga" and "Valka")."""
    fa, fb = fold(a), fold(b)
    short, long_ = sorted((fa, fb), key=len)
    if fa == fb or (len(short) >= 4 and short in long_):
        return True
    return difflib.SequenceMatcher(None, fa, fb, autojunk=False).ratio() >= 0.8


def has_twin_town(c: Cities, i: int, km: float = TWIN_KM) -> bool:
    """Whether another city within ``km`` of city i has its name (once folded), or, across a
    border, a name a reader could take for its own (``near_same_names``): the border twins
    Nogales and Nogales, Laredo and Nuevo Laredo.  A suburb named after its city in the same
    country (Sainte-Foy-lès-Lyon) is no twin: the city is the answer there."""
    band = np.flatnonzero(np.abs(c.lat - c.lat[i]) <= km / 111.0)
    d = np.asarray(distance_km(c.lat[i], c.lon[i], c.lat[band], c.lon[band]))
    key = fold(c.name[i])
    for j in (int(j) for j in band[d <= km]):
        if j == i:
            continue
        if fold(c.name[j]) == key:
            return True
        if c.country[j] != c.country[i] and near_same_names(c.name[i], c.name[j]):
            return True
    return False


def _place_point(s: Sampler, n: int) -> tuple[int, float, float, int, str]:
    """The city at a (noisy) point, stratified by population: the three bands take turns
    (every noise level meets every band), the continent by quota.  A point nearer another
    GeoNames city than the answer would make two answers right, one whose second-nearest
    city is within ``NEAR_TIE`` times the nearest's distance nearly so, a city with a twin
    town (``has_twin_town``) would leave the province and country open, and one within
    ``BIGGER_CITY_KM`` of a city ``BIGGER`` times as large would make the answer a district
    or neighbour a person names by the big city: all are drawn again, and counted
    (``nearer_another_city``, ``near_tie``, ``twin_town``, ``inside_bigger_city``)."""
    sigma = NOISE_M[n % len(NOISE_M)]
    band = list(POPULATION_BANDS)[(n // len(NOISE_M)) % len(POPULATION_BANDS)]
    split = s.split_of(n)
    pools = s.split_pools(split, _population_pools(s))
    twins: dict[int, bool] = s.memo.setdefault("twin_town", {})
    out_lat, out_lon, out_pop = left_out_rows()
    if "by_lat" not in s.memo:
        order = np.argsort(s.c.lat, kind="stable")
        s.memo["by_lat"] = order, s.c.lat[order]
    by_lat, lat_sorted = s.memo["by_lat"]
    band_deg = NEIGHBOUR_KM / 111.0
    while True:
        pool = pools[band, s.continent()]
        if pool.size == 0:  # no city of this size on this continent in this split
            continue
        i = int(pool[s.rng.integers(pool.size)])
        if i not in twins:
            twins[i] = has_twin_town(s.c, i)
        if twins[i]:
            s.reject("twin_town")
            continue
        lat, lon = _noisy(s, i, sigma)
        # every rule below looks within a few tens of km of the point: the cities of a
        # latitude band NEIGHBOUR_KM wide each way give the same answers, faster
        lo = np.searchsorted(lat_sorted, lat - band_deg)
        strip = by_lat[lo : np.searchsorted(lat_sorted, lat + band_deg, side="right")]
        d = np.asarray(distance_km(lat, lon, s.c.lat[strip], s.c.lon[strip]))
        k = int(np.flatnonzero(strip == i)[0])
        di = float(d[k])
        if max(BIGGER_CITY_KM, di + 10.0, NEAR_TIE * di) >= NEIGHBOUR_KM:
            raise RuntimeError(f"a noisy point {di:.0f} km from its city: noise too large")
        # the rows left out of the pools are cities too, as neighbours (San Sebastián)
        d_out = np.asarray(distance_km(lat, lon, out_lat, out_lon))
        if di > d.min() or di > d_out.min():
            s.reject("nearer_another_city")
            continue
        others = np.delete(d, k)
        nearest_other = min(float(others.min()) if others.size else np.inf, float(d_out.min()))
        if nearest_other <= NEAR_TIE * di:
            s.reject("near_tie")
            continue
        reach = max(BIGGER_CITY_KM, di + 10.0)
        big = BIGGER * s.c.population[i]
        if (s.c.population[strip[d <= reach]] >= big).any() or (
            out_pop[d_out <= reach] >= big
        ).any():
            s.reject("inside_bigger_city")  # a district or neighbour: a person names the city
            continue
        break
    return i, lat, lon, sigma, split


def _place_draft(s: Sampler, n: int, task: str) -> Draft:
    i, lat, lon, sigma, split = _place_point(s, n)
    # the population band is the difficulty (GPSBench's own bands)
    difficulty = list(POPULATION_BANDS)[(n // len(NOISE_M)) % len(POPULATION_BANDS)]
    text = s.prompts.text(f"gps.{task}.question", lat=lat, lon=lon)
    truth = TextTruth(answer=s.c.name[i], accepted=accepted_names(s, i))
    meta = {
        "noise_m": sigma,
        "country": s.c.country_name[i],
        "admin1": s.c.admin1[i],
        "province": s.c.admin1_name[i] or None,
        "population": int(s.c.population[i]),
    }
    if task == "place_association":
        # the city alone is asked: the scorer grades the province and country of the city an
        # answer names (``evaluators.place_levels``), near the point asked
        meta |= {"asked": "city", "country_code": s.c.country[i], "lat": lat, "lon": lon}
    return Draft(text, truth, str(s.c.subregion[i]), difficulty, meta, split=split)


def place_association(s: Sampler, n: int) -> Draft:
    """The city at a (noisy) point, the city alone asked (the paper's form); the point is
    drawn by ``_place_point``'s rules."""
    return _place_draft(s, n, "place_association")


def place_association_levels(s: Sampler, n: int) -> Draft:
    """cartoqa's form: the city, its province or state and its country asked."""
    return _place_draft(s, n, "place_association_levels")


def format_place(sample: Sample) -> str:
    """Place association's answer as its prompt asks: city, province, country."""
    truth = sample.ground_truth
    assert isinstance(truth, TextTruth)
    extra = sample.metadata.model_extra or {}
    parts = [truth.answer, extra.get("province"), extra.get("country")]
    return "FINAL ANSWER: " + ", ".join(p for p in parts if p)


def format_city(sample: Sample) -> str:
    """Place association's answer as its sample asks: the city alone where the sample says
    so (``asked: city``, the default's), else, for a sample made before the default asked
    the city alone, city, province and country, as its prompt asked."""
    extra = sample.metadata.model_extra or {}
    if extra.get("asked") == "city":
        truth = sample.ground_truth
        assert isinstance(truth, TextTruth)
        return f"FINAL ANSWER: {truth.answer}"
    return format_place(sample)


register_gps(
    name="place_association",
    track="applied",
    description="the city at a noisy coordinate (province and country graded too)",
    truth_kinds=frozenset({"text"}),
    score=score_place,
    metrics=("accuracy", "province accuracy", "country accuracy"),
    answer_format=format_city,
    generator=place_association,
    sources=(ADMIN1_SOURCE,),
)


def register_levels() -> TaskSpec:
    """Register the variant ``place_association_levels`` (the package calls it after
    every default task)."""
    return register_gps(
        name="place_association_levels",
        track="variant",
        description="variant: the city, province and country at a noisy coordinate",
        truth_kinds=frozenset({"text"}),
        score=score_place,
        metrics=("accuracy", "province accuracy", "country accuracy"),
        answer_format=format_place,
        generator=place_association_levels,
    )
