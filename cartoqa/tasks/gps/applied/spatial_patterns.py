"""Spatial patterns: the outlier of five named cities, four on one continent (GPSBench's
form), and the variant ``spatial_patterns_hinted``: four of one subregion, the hint given."""

from __future__ import annotations

import numpy as np

from cartoqa.geodesy import EARTH_RADIUS_KM, distance_km
from cartoqa.records import TextTruth
from evaluators.gps import score_city

from ...spec import TaskSpec
from .._cities import CONTINENT_NAMES, continent_of_place
from .._register import register_gps
from .._sampling import Draft, Sampler
from ._names import accepted_names

__all__ = [
    "OUTLIER_MARGIN",
    "centroid_distances_km",
    "continent_pools",
    "register_hinted",
    "spatial_patterns",
    "spatial_patterns_hinted",
]


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
        drawn = _four_and_one(s, pools, regions)
        if drawn is None:
            continue
        home, away, four, out = drawn
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
        drawn = _four_and_one(s, pools, regions)
        if drawn is None:
            continue
        home, away, four, out = drawn
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


register_gps(
    name="spatial_patterns",
    track="applied",
    description="the outlier of five named cities (four on one continent)",
    truth_kinds=frozenset({"text"}),
    score=score_city,
    generator=spatial_patterns,
)


def register_hinted() -> TaskSpec:
    """Register the variant ``spatial_patterns_hinted`` (the package calls it after
    every default task)."""
    return register_gps(
        name="spatial_patterns_hinted",
        track="variant",
        description=(
            "variant: the outlier of five named cities, four of one subregion, the hint given"
        ),
        truth_kinds=frozenset({"text"}),
        score=score_city,
        generator=spatial_patterns_hinted,
    )


def _four_and_one(
    s: Sampler, pools: dict[str, np.ndarray], regions: list[str]
) -> tuple[str, str, list[int], int] | None:
    """One draw of both forms: two groups (home, away), four cities of home and one of away;
    None where the groups drawn hold too few cities."""
    home, away = s.rng.choice(regions, 2, replace=False)
    pool, other = pools[home], pools[away]
    if pool.size < 4 or other.size == 0:
        return None
    four = [int(x) for x in s.rng.choice(pool, 4, replace=False)]
    out = int(other[s.rng.integers(other.size)])
    return home, away, four, out
