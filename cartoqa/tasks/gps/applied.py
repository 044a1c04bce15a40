"""The Applied track (geography) and the missing-data probe, from GeoNames cities."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from cartoqa.geodesy import EARTH_RADIUS_KM, distance_km, initial_bearing_deg, interpolate
from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    GroupingTruth,
    NumberTruth,
    TextTruth,
    Tolerance,
)

from ._cities import CONTINENT_NAMES, Cities, continent_of_place, left_out_rows
from ._labels import fold
from ._name_groups import NameGroup, load_division_groups, load_name_groups, split_groups
from ._sampling import SPLIT_SHARES, Draft, Sampler, split_targets
from ._terrain import TERRAIN_CLASSES, ZONE, TerrainSampler, load_terrain
from .pure import direction_question, edge_margin

__all__ = ["APPLIED_TASKS"]

NOISE_M = (0, 10, 50, 100, 500, 1000)
BANDS_KM = ((200, 500), (500, 1000), (1000, 2000), (2000, 3000))


def _noisy(s: Sampler, i: int, sigma_m: float) -> tuple[float, float]:
    lat, lon = float(s.c.lat[i]), float(s.c.lon[i])
    dlat = s.rng.normal(0, sigma_m / 111_000) if sigma_m else 0.0
    dlon = s.rng.normal(0, sigma_m / (111_000 * np.cos(np.radians(lat)))) if sigma_m else 0.0
    return lat + float(dlat), lon + float(dlon)


#: place association's population bands, by difficulty (GPSBench's)
POPULATION_BANDS = {"easy": (500_000, 10**12), "medium": (100_000, 500_000), "hard": (0, 100_000)}


def accepted_names(s: Sampler, i: int) -> list[str]:
    """The GeoNames alternate names that also count for city i: not its own name, not codes
    of three letters or fewer ("GUA"), and not another city's own name (an alternate of Lomé
    reads "Rome", one of Dallas "Talas")."""
    return [
        a
        for a in s.c.alternates[i]
        if a and a != s.c.name[i] and len(a) > 3 and not s.labels.is_other_city(i, a)
    ]


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


def _group_plan(
    s: Sampler, groups: tuple[NameGroup, ...], key: str
) -> tuple[list[str], dict[str, list[int]]]:
    """The split of each sample (60/10/30, exact, in a seeded order) and the name groups
    dealt to each split: a name group, and so a (name, answer) pair, is in one split only."""
    if key not in s.memo:
        n = s.per_task or 10
        plan = [name for name, k in split_targets(n).items() for _ in range(k)]
        plan = [plan[int(i)] for i in s.rng.permutation(n)]
        s.memo[key] = (plan, split_groups(groups, SPLIT_SHARES, s.rng))
    plan_and_groups: tuple[list[str], dict[str, list[int]]] = s.memo[key]
    return plan_and_groups


#: name disambiguation: the nearest other option's place within this many km of the answer
#: is "hard", within the second "medium" (a reader must know where each lies more finely
#: the nearer they are); measured on 3,400 samples at seed 42 (README)
NAMESAKE_KM = (300.0, 1200.0)


def _disambiguation(s: Sampler, n: int, task: str) -> Draft:
    """Four cities of one name (GeoNames cities1000, ``_name_groups``), in four first-level
    divisions (the default) or four countries (the variant); which one is at a point
    100-500 m from one of them.  The sample's split is the split its name group was dealt
    to."""
    by_division = task == "name_disambiguation"
    groups = load_division_groups() if by_division else load_name_groups()
    plan, by_split = _group_plan(s, groups, f"group_plan:{task}")
    split = plan[n % len(plan)]
    pool = by_split[split]
    group = groups[pool[int(s.rng.integers(len(pool)))]]
    picks: list[int] = []
    seen: set[tuple[str, str]] = set()
    for k in s.rng.permutation(len(group.places)):
        p = group.places[int(k)]
        # a division group holds one place per (country, province) already
        key = (p.country, p.province) if by_division else (p.country, "")
        if key not in seen:
            seen.add(key)
            picks.append(int(k))
        if len(picks) == 4:
            break
    places = [group.places[k] for k in picks]
    answer = places[0]
    sigma = float(s.rng.uniform(100, 500))
    lat = answer.lat + float(s.rng.normal(0, sigma / 111_000))
    lon = answer.lon + float(s.rng.normal(0, sigma / (111_000 * np.cos(np.radians(answer.lat)))))
    # one spelling for the question and every option, so no spelling points to the answer
    labels = [
        s.prompts.text(
            f"gps.{task}.option",
            spelling=group.spelling,
            province=p.province,
            country=p.country_name,
        )
        for p in places
    ]
    opts, letter = s.options(labels[0], labels[1:])
    listed = s.listed(opts)
    text = s.prompts.text(
        f"gps.{task}.question", spelling=group.spelling, lat=lat, lon=lon, options=listed
    )
    meta: dict[str, object] = {"group_size": len(group.places), "name_group": group.key}
    difficulty = "medium"  # the variant's label, as before
    if by_division:
        near_km = min(float(distance_km(answer.lat, answer.lon, p.lat, p.lon)) for p in places[1:])
        difficulty = (
            "hard" if near_km < NAMESAKE_KM[0] else "medium" if near_km < NAMESAKE_KM[1] else "easy"
        )
        meta["nearest_option_km"] = round(near_km, 1)
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        answer.subregion,
        difficulty,
        meta,
        split=split,
    )


def name_disambiguation(s: Sampler, n: int) -> Draft:
    """Four same-name cities in four states or provinces (the paper's form)."""
    return _disambiguation(s, n, "name_disambiguation")


def name_disambiguation_countries(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: four same-name cities in four countries, "Name, Country"."""
    return _disambiguation(s, n, "name_disambiguation_countries")


#: applied relative position's distance bands by difficulty: the nearer, the harder
BAND_DIFFICULTY = {(200, 500): "hard", (500, 1000): "medium"}


#: applied relative position: the bearing is at least this far from a quarter's edge
MIN_NAMED_MARGIN_DEG = 5.0


def relative_position_applied(s: Sampler, n: int) -> Draft:
    """Two same-continent cities by name only; the distance bands take turns."""
    lo, hi = BANDS_KM[n % len(BANDS_KM)]
    c = s.c
    while True:
        i, j, km = s.pair(lo, hi, same_continent=True)
        b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
        if edge_margin(b, 4) < MIN_NAMED_MARGIN_DEG:
            # without coordinates a reader knows where the cities are only roughly
            s.reject("near_sector_edge")
            continue
        names = s.named(j, i)
        if names:
            break
    question = s.prompts.text(
        "gps.relative_position_applied.question", target=names[0], origin=names[1]
    )
    d = direction_question(s, i, j, question, {"band_km": f"{lo}-{hi}"}, km)
    d.difficulty = BAND_DIFFICULTY.get((lo, hi), "easy")
    return d


#: proximity: the second-nearest candidate is at least this many times as far as the nearest
CLEAR_MARGIN = 1.1


def _proximity(s: Sampler, n: int, task: str) -> Draft:
    """Which of four cities is nearest a fifth; split by city (every city of a sample is of
    its split).  The default gives every city with its coordinates (``Sampler.label``), the
    variant ``proximity_names`` names them only."""
    c = s.c
    split = s.split_of(n)
    pools = s.split_pools(split)
    while True:
        idx = s.spread(5, 100, pools=pools)
        ref, cands = idx[0], idx[1:]
        d = [float(distance_km(c.lat[ref], c.lon[ref], c.lat[j], c.lon[j])) for j in cands]
        order = np.argsort(d)
        if d[int(order[1])] < CLEAR_MARGIN * d[int(order[0])]:
            s.reject("too_close_to_call")  # knowing where the cities are would not decide
            continue
        if task == "proximity":  # the coordinates tell namesakes apart
            names: list[str] | None = [s.label(i) for i in idx]
        else:
            names = s.named(*idx)
        if names:
            break
    label = dict(zip(idx, names, strict=True))
    nearest = cands[int(order[0])]
    opts, letter = s.options(label[nearest], [label[j] for j in cands if j != nearest])
    listed = s.listed(opts)
    text = s.prompts.text(f"gps.{task}.question", city=label[ref], options=listed)
    ratio = d[int(order[1])] / max(d[int(order[0])], 1.0)
    # the second-nearest's distance over the nearest's: the nearer to 1, the finer the
    # reckoning a reader needs
    lo, hi = PROXIMITY_RATIO if task == "proximity" else (1.3, 2.0)
    difficulty = "easy" if ratio > hi else "medium" if ratio > lo else "hard"
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        str(c.subregion[ref]),
        difficulty,
        {"ratio": round(ratio, 3)} if task == "proximity" else {},
        split=split,
    )


#: proximity's difficulty: the ratio of the second-nearest to the nearest candidate's
#: distance above the second is "easy", above the first "medium", else "hard"
PROXIMITY_RATIO = (1.3, 2.0)


def proximity(s: Sampler, n: int) -> Draft:
    """The paper's form: all five cities given with their coordinates."""
    return _proximity(s, n, "proximity")


def proximity_names(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: the five cities named only."""
    return _proximity(s, n, "proximity_names")


#: route analysis: a detour within this of 10 % is too close to the rule to ask
NEAR_RULE = 0.005
#: route analysis's difficulty: the detour's distance from the 10 % rule under the first is
#: "hard", under the second "medium", else "easy" (about 21/46/33 % at 3,400, seed 42)
ROUTE_RULE_GAP = (0.095, 0.3)


def route_analysis(s: Sampler, n: int) -> Draft:
    """Is a third city on the way between two others, named only (knowing where they are is
    the task): "on the way" when going through it adds less than 10 % to the great-circle
    distance.  Legs of 200 km or more; about half the waypoints are drawn near the route."""
    c = s.c
    for _ in range(1000):
        a, b, direct = s.pair(400)
        if n % 2 == 0:  # a waypoint near the great circle: about half the samples are on route
            f = float(s.rng.uniform(0.2, 0.8))
            mlat, mlon = interpolate(c.lat[a], c.lon[a], c.lat[b], c.lon[b], f)
            reach = 0.08 * direct
            # only cities within reach's latitude span can be within reach (a great circle
            # is never shorter than its change of latitude): the same cities, found faster
            band = np.flatnonzero(
                np.abs(c.lat - mlat) <= np.degrees(reach / EARTH_RADIUS_KM) + 1e-6
            )
            d = np.asarray(distance_km(mlat, mlon, c.lat[band], c.lon[band]))
            near = band[d < reach]
            if near.size == 0:
                continue
            w = int(near[s.rng.integers(near.size)])
        else:
            w = s.city()
        legs = [
            float(distance_km(c.lat[x], c.lon[x], c.lat[y], c.lon[y])) for x, y in ((a, w), (w, b))
        ]
        if min(legs) < 200:
            continue
        names = s.named(a, b, w)
        if not names:
            continue
        detour = (sum(legs) - direct) / direct
        if abs(detour - 0.1) < NEAR_RULE:
            s.reject("near_threshold")  # within half a point of the 10 % rule
            continue
        text = s.prompts.text(
            "gps.route_analysis.question", start=names[0], end=names[1], waypoint=names[2]
        )
        # how far the detour is from the 10 % rule: the nearer, the finer the reckoning a
        # reader needs (thresholds ``ROUTE_RULE_GAP``)
        gap = abs(detour - 0.1)
        difficulty = (
            "hard" if gap < ROUTE_RULE_GAP[0] else "medium" if gap < ROUTE_RULE_GAP[1] else "easy"
        )
        return Draft(
            text,
            BooleanTruth(value=detour < 0.1),
            str(c.subregion[a]),
            difficulty,
            {"detour": round(detour, 4)},
        )
    raise RuntimeError("no route-analysis triple found")


def continent_pools(s: Sampler) -> dict[str, np.ndarray]:
    """Continent code -> the cities whose bare names pick out one city and whose continent
    no reader disputes (``continent_of_place``; the debatable ones are left out, counted
    once as ``debatable_continent``)."""
    if "continent_pools" not in s.memo:
        c = s.c
        s.bare_pools()
        fit = s.memo["bare_fit"]
        of = np.array(
            [
                continent_of_place(
                    c.country[i], str(c.continent[i]), c.lat[i], c.lon[i], c.admin1[i]
                )
                or ""
                for i in range(len(c))
            ]
        )
        s.reject("debatable_continent", int((of == "").sum()))
        s.memo["city_continent"] = of
        s.memo["continent_pools"] = {
            k: np.flatnonzero((of == k) & fit) for k in sorted(set(of.tolist()) - {""})
        }
    pools: dict[str, np.ndarray] = s.memo["continent_pools"]
    return pools


def centroid_distances_km(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Each point's great-circle distance (km, on the 6371 km sphere) to the points' spherical
    centroid: the mean of their unit vectors, normalised."""
    la, lo = np.radians(lat), np.radians(lon)
    v = np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=-1)
    m = v.mean(axis=0)
    m /= np.linalg.norm(m)
    return np.asarray(EARTH_RADIUS_KM * np.arccos(np.clip(v @ m, -1.0, 1.0)))


#: spatial patterns' difficulty: the outlier's centroid distance over the second-farthest
#: city's: above the second "easy", above the first "medium", else "hard" (the nearer the
#: outlier sits to the group, the harder it is to pick out)
OUTLIER_MARGIN = (2.5, 4.0)


def spatial_patterns(s: Sampler, n: int) -> Draft:
    """The paper's form: five named cities, no hint; four on one continent and one on
    another, and the outlier is the city farthest from the five's spherical centroid
    (``centroid_distances_km``): more than twice the median and 1.3 times the
    second-farthest.  A weak outlier (some in-group city as far from the others as the
    outlier is from its nearest) is drawn again."""
    c = s.c
    split = s.split_of(n)  # split by city: every city of a sample is of its split
    pools = s.split_pools(split, continent_pools(s))
    regions = list(pools)
    for _ in range(2000):
        home, away = s.rng.choice(regions, 2, replace=False)
        pool, other = pools[home], pools[away]
        if pool.size < 4 or other.size == 0:
            continue
        four = [int(x) for x in s.rng.choice(pool, 4, replace=False)]
        out = int(other[s.rng.integers(other.size)])
        idx = [*four, out]
        la, lo = c.lat[idx], c.lon[idx]
        dc = centroid_distances_km(la, lo)
        ranked = np.sort(dc)
        if not (dc[4] > 2 * np.median(dc) and dc[4] > 1.3 * ranked[-2]):
            continue
        dm = np.asarray(distance_km(la[:, None], lo[:, None], la[None, :], lo[None, :]))
        if dm[4, :4].min() <= dm[:4, :4].max():
            s.reject("weak_outlier")
            continue
        names = s.bare_names(*idx)
        if not names:
            continue
        order = [int(k) for k in s.rng.permutation(5)]
        listed = "; ".join(names[k] for k in order)
        text = s.prompts.text("gps.spatial_patterns.question", cities=listed)
        margin = float(dc[4] / ranked[-2])
        lo_m, hi_m = OUTLIER_MARGIN
        difficulty = "easy" if margin > hi_m else "medium" if margin > lo_m else "hard"
        return Draft(
            text,
            TextTruth(answer=names[4], accepted=accepted_names(s, out)),
            str(c.subregion[four[0]]),
            difficulty,
            {
                "home_continent": CONTINENT_NAMES[str(home)],
                "outlier_continent": CONTINENT_NAMES[str(away)],
                "margin": round(margin, 3),
            },
            split=split,
        )
    raise RuntimeError("no valid spatial pattern found")


def spatial_patterns_hinted(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: four cities of one subregion and one of another, the outlier
    by its mean distance to the others, the prompt saying four lie in one region."""
    c = s.c
    if "region_pools" not in s.memo:
        # Russia east of the Urals is no part of "Eastern Europe" a reader would picture
        asian_russia = (np.array(c.country) == "RU") & (c.lon > 61)
        s.bare_pools()  # names that fit several places are left out (counted once)
        fit = s.memo["bare_fit"]
        s.memo["region_pools"] = {
            r: np.flatnonzero((c.subregion == r) & ~asian_russia & fit)
            for r in sorted(set(c.subregion.tolist()))
        }
    split = s.split_of(n)  # split by city: every city of a sample is of its split
    pools = s.split_pools(split, s.memo["region_pools"])
    regions = list(pools)
    for _ in range(2000):
        home, away = s.rng.choice(regions, 2, replace=False)
        pool, other = pools[home], pools[away]
        if pool.size < 4 or other.size == 0:
            continue
        four = [int(x) for x in s.rng.choice(pool, 4, replace=False)]
        out = int(other[s.rng.integers(other.size)])
        idx = [*four, out]
        la, lo = c.lat[idx], c.lon[idx]
        dm = np.asarray(distance_km(la[:, None], lo[:, None], la[None, :], lo[None, :]))
        mean = dm.sum(axis=1) / 4
        ranked = np.sort(mean)
        if mean[4] > 2 * np.median(mean) and mean[4] > 1.3 * ranked[-2]:
            if dm[4, :4].min() <= dm[:4, :4].max():
                # some in-region city is as far from the others as the outlier is near one
                s.reject("weak_outlier")
                continue
            names = s.bare_names(*idx)
            if not names:
                continue
            order = [int(k) for k in s.rng.permutation(5)]
            listed = "; ".join(names[k] for k in order)
            text = s.prompts.text("gps.spatial_patterns_hinted.question", cities=listed)
            alts = accepted_names(s, out)
            margin = mean[4] / ranked[-2]
            difficulty = "easy" if margin > 3 else "medium" if margin > 1.8 else "hard"
            return Draft(
                text,
                TextTruth(answer=names[4], accepted=alts),
                str(home),
                difficulty,
                {"outlier_region": str(away)},
                split=split,
            )
    raise RuntimeError("no valid spatial pattern found")


def boundary_analysis(s: Sampler, n: int) -> Draft:
    c = s.c
    k = 4 + n % 3
    split = s.split_of(n)  # split by city: every city of a sample is of its split
    pools = s.split_pools(split, s.bare_pools())
    while True:
        idx = s.spread(k, 100, pools=pools)
        continents = [
            continent_of_place(c.country[i], str(c.continent[i]), c.lat[i], c.lon[i], c.admin1[i])
            for i in idx
        ]
        if None in continents:  # the Urals, Istanbul, the Caucasus: people disagree
            s.reject("debatable_continent")
            continue
        names = s.bare_names(*idx)
        if names and any(ch in x for x in names for ch in ",;:"):
            # the plain-text answer ("Asia: A, B; Europe: C") could not hold such a name
            s.reject("name_with_list_punctuation")
            continue
        if names:
            break
    groups: dict[str, list[str]] = defaultdict(list)
    for continent, name in zip(continents, names, strict=True):
        groups[CONTINENT_NAMES[str(continent)]].append(name)
    listed = "; ".join(names)
    text = s.prompts.text("gps.boundary_analysis.question", cities=listed)
    # the more continents to tell apart, the harder: up to three "easy", four "medium",
    # five or more "hard"
    difficulty = "easy" if len(groups) <= 3 else "medium" if len(groups) == 4 else "hard"
    return Draft(
        text,
        GroupingTruth(groups=dict(sorted(groups.items()))),
        str(c.subregion[idx[0]]),
        difficulty,
        {"cities": k},
        split=split,
    )


#: the missing coordinate must be within 0.1 degrees (GPSBench's tolerance)
MISSING_DEG = Tolerance(abs=0.1)
#: the missing-data probe's difficulty: a city of the second's people or more is "easy", of
#: the first's "medium", else "hard" (place association's bands left 82 % "hard")
MISSING_POPULATION = (25_000, 60_000)


def missing_data(s: Sampler, n: int) -> Draft:
    """A city's missing latitude or longitude; split by city (a train sample of the city
    gives the coordinate a test question asks)."""
    split = s.split_of(n)
    pools = s.split_pools(split)
    while True:
        i = s.city(pools=pools)
        names = s.named(i)
        if names:
            break
    c = s.c
    meta: dict[str, object]
    if n % 2 == 0:
        text = s.prompts.text("gps.missing_data.latitude_given", city=names[0], lat=c.lat[i])
        truth = NumberTruth(value=round(float(c.lon[i]), 5), unit="deg", tolerance=MISSING_DEG)
        meta = {"given": "latitude"}
    else:
        text = s.prompts.text("gps.missing_data.longitude_given", city=names[0], lon=c.lon[i])
        truth = NumberTruth(value=round(float(c.lat[i]), 5), unit="deg", tolerance=MISSING_DEG)
        meta = {"given": "longitude"}
    pop = int(c.population[i])
    # the smaller the city, the less a reader knows where it is (``MISSING_POPULATION``)
    lo, hi = MISSING_POPULATION
    difficulty = "easy" if pop >= hi else "medium" if pop >= lo else "hard"
    meta["population"] = pop
    return Draft(text, truth, str(c.subregion[i]), difficulty, meta, split=split)


TERRAIN_KINDS = tuple(TERRAIN_CLASSES)
#: the paper's other three classes, distractors only (no point of ours is of them)
TERRAIN_DISTRACTORS = {"ice": "Arctic or ice", "sea": "ocean or sea", "water": "river or lake"}
#: a distractor must be clearly wrong for the point; it is left out where it could be argued:
#: "Arctic or ice" within ICE_MAX_LAT of a pole or with a polar/ice-cap climate zone (ET, EF)
#: within NEAR_KM (every mountain point: its rule is those zones); "ocean or sea" with sea
#: within NEAR_KM (every coastal point); "river or lake" everywhere but the desert points
#: (hot desert, no town within 50 km): the land mask has no inland water, and a point in a
#: city centre, a rainforest, a farmed plain, on a coast or high in the mountains may well
#: fall on a river or a lake
ICE_MAX_LAT, NEAR_KM = 50.0, 25.0
_POLAR_ZONES = {ZONE["ET"], ZONE["EF"]}


def terrain_distractors(t: TerrainSampler, kind: str, lat: float, lon: float) -> list[str]:
    """The extra classes that are clearly wrong at a point of ``kind`` (see above)."""
    out = []
    if abs(lat) < ICE_MAX_LAT and not (t.d.zones_within(lat, lon, NEAR_KM) & _POLAR_ZONES):
        out.append(TERRAIN_DISTRACTORS["ice"])
    if not t.d.sea_within(lat, lon, NEAR_KM):
        out.append(TERRAIN_DISTRACTORS["sea"])
    if kind == "desert":
        out.append(TERRAIN_DISTRACTORS["water"])
    return out


#: terrain's difficulty: the nearest city of 15,000's distance (km): under the first
#: "easy", under the second "medium", else "hard" (the farther, the less a reader can go by
#: a known place)
TERRAIN_CITY_KM = (25.0, 100.0)


def _terrain(s: Sampler, n: int, task: str) -> Draft:
    """A point of one terrain class (the classes in turn), chosen by ``_terrain``'s rules;
    six options (the paper's form: the other five of ours and, where clearly wrong, the
    paper's other three classes) or four (the variant)."""
    t = s.memo.get("terrain")
    if t is None:
        t = s.memo["terrain"] = TerrainSampler(load_terrain(), s.c, s.rng)
    kind = TERRAIN_KINDS[n % len(TERRAIN_KINDS)]
    lat, lon = t.point(kind)
    i, km = t.nearest_city(lat, lon)
    correct = TERRAIN_CLASSES[kind]
    others = [v for k, v in TERRAIN_CLASSES.items() if k != kind]
    if task == "terrain_classification":
        opts, letter = s.options(correct, others + terrain_distractors(t, kind, lat, lon), k=6)
        easy_km, medium_km = TERRAIN_CITY_KM
    else:
        opts, letter = s.options(correct, others)
        easy_km, medium_km = 25.0, 100.0
    listed = s.listed(opts)
    text = s.prompts.text(f"gps.{task}.question", lat=lat, lon=lon, options=listed)
    difficulty = "easy" if km < easy_km else "medium" if km < medium_km else "hard"
    meta = {
        "terrain": kind,
        "lat": round(lat, 5),
        "lon": round(lon, 5),
        "city_km": round(km, 1),
        # agricultural points start from hand-picked regions (see _terrain); the rest from data
        "terrain_source": "hand-picked region" if kind == "agricultural" else "data",
    }
    return Draft(
        text, ChoiceTruth(answer=letter, options=opts), str(s.c.subregion[i]), difficulty, meta
    )


def terrain_classification(s: Sampler, n: int) -> Draft:
    """The paper's form: six options."""
    return _terrain(s, n, "terrain_classification")


def terrain_classification_4(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: four of the six classes."""
    return _terrain(s, n, "terrain_classification_4")


APPLIED_TASKS = {
    "place_association": place_association,
    "name_disambiguation": name_disambiguation,
    "relative_position_applied": relative_position_applied,
    "proximity": proximity,
    "route_analysis": route_analysis,
    "spatial_patterns": spatial_patterns,
    "boundary_analysis": boundary_analysis,
    "terrain_classification": terrain_classification,
    "missing_data": missing_data,
}
#: cartoqa's own forms of applied tasks, each its own task so their scores never mix with
#: the paper's (track "variant", made only when asked for by name)
APPLIED_VARIANTS: dict[str, Callable[[Sampler, int], Draft]] = {
    "place_association_levels": place_association_levels,
    "name_disambiguation_countries": name_disambiguation_countries,
    "proximity_names": proximity_names,
    "spatial_patterns_hinted": spatial_patterns_hinted,
    "terrain_classification_4": terrain_classification_4,
}
