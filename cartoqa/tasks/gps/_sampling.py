"""Sampling rules shared by the GPS tasks: continent quotas, separations, bands."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from cartoqa.errors import CartoqaError
from cartoqa.geodesy import EARTH_RADIUS_KM, distance_km

from ..templates import PromptSet, default_prompts
from ._cities import Cities
from ._labels import CityLabels, fold, labels_for

__all__ = [
    "QUOTAS",
    "SPLIT_SHARES",
    "Draft",
    "Sampler",
    "deal_splits",
    "distance_band",
    "region_of",
    "split_targets",
]

#: GPSBench's continent quotas
QUOTAS = {"AF": 0.20, "AS": 0.25, "EU": 0.20, "NA": 0.15, "SA": 0.15, "OC": 0.05}
LETTERS = "ABCDEFGH"
SPLIT_SHARES = (("train", 0.6), ("dev", 0.1), ("test", 0.3))


@dataclass
class Draft:
    """One generated question before it becomes a ``Sample``."""

    text: str
    truth: Any
    region: str
    difficulty: str
    meta: dict[str, Any] = field(default_factory=dict)
    split: str | None = None
    """The split this sample must go to (name disambiguation deals its name groups to
    splits); None lets ``generate`` deal it by stratum."""


def split_targets(n: int) -> dict[str, int]:
    """train/dev/test sizes for ``n`` samples: 60/10/30, exact in total."""
    targets = {name: round(share * n) for name, share in SPLIT_SHARES[:-1]}
    targets[SPLIT_SHARES[-1][0]] = n - sum(targets.values())
    return targets


@lru_cache(maxsize=8)
def _deal_sequence(n: int) -> tuple[str, ...]:
    """The split of the k-th item dealt of ``n``: each to the split furthest behind its
    share."""
    targets = split_targets(n)
    given = dict.fromkeys(targets, 0)
    out = []
    for _ in range(n):
        name = min(
            (s for s in targets if given[s] < targets[s]),
            key=lambda s: (given[s] + 0.5) / targets[s],
        )
        given[name] += 1
        out.append(name)
    return tuple(out)


def deal_splits(strata: Sequence[str], rng: np.random.Generator) -> list[str]:
    """train/dev/test for each item, 60/10/30 within every stratum as nearly as possible and
    exactly over all items: the items are ordered by stratum (at random within one) and each
    is dealt to the split furthest behind its share."""
    n = len(strata)
    codes = np.unique(np.asarray(strata, dtype=str), return_inverse=True)[1].reshape(-1)
    order = np.lexsort((rng.random(n), codes))
    out = np.empty(n, dtype=object)
    out[order] = _deal_sequence(n)
    return [str(x) for x in out]


def distance_band(km: float) -> str:
    """easy under 500 km, medium under 2,000 km, hard beyond (our stratification bands)."""
    return "easy" if km < 500 else "medium" if km < 2000 else "hard"


def _unit_vectors(cities: Cities) -> np.ndarray:
    """Each city's position as a unit vector (n x 3), for fast separation tests."""
    lat, lon = np.radians(cities.lat), np.radians(cities.lon)
    return np.column_stack((np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)))


class Sampler:
    """Draws cities by the quota rules with one seeded generator."""

    def __init__(
        self,
        cities: Cities,
        rng: np.random.Generator,
        per_task: int | None = None,
        prompts: PromptSet | None = None,
    ) -> None:
        self.c = cities
        self.rng = rng
        self.prompts = prompts or default_prompts()
        """The wording the questions are asked in: ``self.prompts.text("gps.<task>.<key>",
        ...)`` (``cartoqa.tasks.templates``)."""
        self.per_task = per_task
        """How many samples the task will draw (None: not known, as in a test)."""
        self._labels: CityLabels | None = None
        self.by_continent = {k: np.flatnonzero(cities.continent == k) for k in QUOTAS}
        self._keys = list(QUOTAS)
        self.memo: dict[str, Any] = {}
        """Per-task state built once per generator (the terrain task's point sampler)."""
        # Generator.choice(p=...) draws one uniform and looks it up in the normalised
        # cumulative weights: the same lookup done here, without choice's checks per call
        cdf = np.cumsum([QUOTAS[k] for k in self._keys])
        self._cdf = cdf / cdf[-1]
        self._unit = _unit_vectors(cities)
        self.rejected: Counter[str] = Counter()
        """Reason -> draws turned down (an ambiguous sample), for the manifest."""

    def split_of(self, n: int) -> str:
        """The split of sample n of a task split by city: an exact 60/10/30 plan over the
        task's samples, in a seeded order."""
        if "split_plan" not in self.memo:
            k = self.per_task or 10
            dealt = [name for name, m in split_targets(k).items() for _ in range(m)]
            self.memo["split_plan"] = [dealt[int(j)] for j in self.rng.permutation(k)]
        plan: list[str] = self.memo["split_plan"]
        return plan[n % len(plan)]

    def city_splits(self) -> np.ndarray:
        """Each city's split for a task split by city: the cities dealt 60/10/30 within
        every (subregion, population band), so each split draws from every region and size
        (``deal_splits``)."""
        if "city_splits" not in self.memo:
            c = self.c
            band = np.where(
                c.population >= 500_000, "easy", np.where(c.population >= 100_000, "medium", "hard")
            )  # by population: 500,000 and 100,000 people
            strata = np.char.add(np.char.add(c.subregion.astype(str), "|"), band)
            self.memo["city_splits"] = np.array(deal_splits(strata.tolist(), self.rng))
        splits: np.ndarray = self.memo["city_splits"]
        return splits

    def split_pools(
        self, split: str, pools: dict[Any, np.ndarray] | None = None
    ) -> dict[Any, np.ndarray]:
        """``pools`` (default: ``by_continent``) less the cities dealt to other splits: a
        sample of ``split`` draws only cities of its split, so no city a test question asks
        about is in a train sample of the task (issue 28)."""
        pools = self.by_continent if pools is None else pools
        # pools are ``by_continent`` or a task's pools kept in ``memo``: one object each
        key = f"split_pools|{split}|{id(pools)}"
        if key not in self.memo:
            mine = self.city_splits() == split
            self.memo[key] = {k: v[mine[v]] for k, v in pools.items()}
        out: dict[Any, np.ndarray] = self.memo[key]
        return out

    def reject(self, reason: str, n: int = 1) -> None:
        """Count ``n`` draws turned down for ``reason``."""
        self.rejected[reason] += n

    def continent(self) -> str:
        """A continent by the quotas (the draw ``rng.choice(6, p=quotas)`` makes)."""
        return self._keys[int(self._cdf.searchsorted(self.rng.random(), side="right"))]

    def city(self, continent: str | None = None, pools: dict[str, np.ndarray] | None = None) -> int:
        """A city (its row in ``c``) of ``continent`` (default: one drawn by the quotas),
        uniformly from ``pools`` (continent -> rows; default: every city of it; a task that
        deals its splits by city passes ``split_pools(...)``)."""
        pool = (pools or self.by_continent)[continent or self.continent()]
        return int(pool[self.rng.integers(len(pool))])

    def bare_pools(self) -> dict[str, np.ndarray]:
        """``by_continent`` less the cities whose name alone fits several places
        (``_labels``): name-only tasks draw from these.  The cities left out are counted
        once per task as ``ambiguous_name`` draws."""
        if "bare_pools" not in self.memo:
            fit = self.labels.bare_fit()
            self.memo["bare_fit"] = fit
            self.memo["bare_pools"] = {k: v[fit[v]] for k, v in self.by_continent.items()}
            self.reject("ambiguous_name", int((~fit).sum()))
        pools: dict[str, np.ndarray] = self.memo["bare_pools"]
        return pools

    def distances(self, i: int, pool: np.ndarray | None = None) -> np.ndarray:
        """Great-circle km from city i to every city of ``pool`` (default: all), from the
        chord between unit vectors: the haversine's values to a micrometre, a few times
        faster on a whole continent."""
        u = self._unit if pool is None else self._unit[pool]
        chord = np.sqrt(np.square(u - self._unit[i]).sum(axis=1))
        return 2.0 * EARTH_RADIUS_KM * np.arcsin(np.minimum(chord / 2.0, 1.0))

    def pair(
        self, min_km: float, max_km: float = 25_000.0, same_continent: bool = False
    ) -> tuple[int, int, float]:
        """Two cities ``min_km``-``max_km`` apart: the first by quota, the second by quota too
        (or from the same continent)."""
        for _ in range(1000):
            i = self.city()
            cont = self.c.continent[i] if same_continent else self.continent()
            pool = self.by_continent[cont]
            # the separation test on unit vectors: the central angle is at least min_km's
            # exactly when the cosine (a dot product) is at most its cosine; a few times
            # faster than haversine distances to the whole pool, the same cities
            cos = self._pool_units(cont) @ self._unit[i]
            far = cos <= np.cos(min(min_km / EARTH_RADIUS_KM, np.pi))
            if max_km / EARTH_RADIUS_KM < np.pi:  # else any two points are near enough
                far &= cos >= np.cos(max_km / EARTH_RADIUS_KM)
            ok = np.flatnonzero(far)
            if ok.size:
                k = int(ok[self.rng.integers(ok.size)])
                j = int(pool[k])
                c = self.c
                return i, j, float(distance_km(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
        raise RuntimeError(f"no city pair {min_km}-{max_km} km apart found")

    def _pool_units(self, continent: str) -> np.ndarray:
        """The unit vectors of a continent's cities (``by_continent``), gathered once."""
        key = f"pool_units|{continent}"
        if key not in self.memo:
            self.memo[key] = np.ascontiguousarray(self._unit[self.by_continent[continent]])
        units: np.ndarray = self.memo[key]
        return units

    def continents_for(self, n: int) -> list[str]:
        """The continents of an ``n``-city set: drawn by the quotas for fewer than 6 cities,
        allocated in proportion to them (largest remainders) for 6 or more."""
        if n < 6:
            return [self.continent() for _ in range(n)]
        shares = {k: q * n for k, q in QUOTAS.items()}
        counts = {k: int(v) for k, v in shares.items()}
        for k in sorted(shares, key=lambda k: -(shares[k] - counts[k]))[: n - sum(counts.values())]:
            counts[k] += 1
        plan = [k for k, c in counts.items() for _ in range(c)]
        return [plan[int(i)] for i in self.rng.permutation(len(plan))]

    def spread(
        self,
        n: int,
        min_km: float,
        continent: str | None = None,
        pools: dict[str, np.ndarray] | None = None,
    ) -> list[int]:
        """``n`` cities pairwise at least ``min_km`` apart (by quota, or from one continent),
        from ``pools`` (default: every city)."""
        for _ in range(1000):
            chosen: list[int] = []
            plan = [continent] * n if continent else self.continents_for(n)
            for _ in range(50 * n):
                i = self.city(plan[len(chosen)], pools)
                if all(
                    distance_km(self.c.lat[i], self.c.lon[i], self.c.lat[j], self.c.lon[j])
                    >= min_km
                    for j in chosen
                ):
                    chosen.append(i)
                    if len(chosen) == n:
                        return chosen
        raise RuntimeError(f"could not place {n} cities {min_km} km apart")

    def options(self, correct: str, others: list[str], k: int = 4) -> tuple[dict[str, str], str]:
        """Lettered options: the correct one and k-1 others, shuffled; returns (options, letter)."""
        picks = [correct, *[others[i] for i in self.rng.permutation(len(others))[: k - 1]]]
        order = self.rng.permutation(len(picks))
        opts = {LETTERS[j]: picks[int(p)] for j, p in enumerate(order)}
        if len(set(opts.values())) < len(opts):
            raise CartoqaError(
                f"two options read the same ({sorted(opts.values())}); the wording of the "
                "options must tell them apart"
            )
        letter = LETTERS[int(np.flatnonzero(order == 0)[0])]  # where the correct one went
        return opts, letter

    @staticmethod
    def listed(opts: dict[str, str]) -> str:
        """Lettered options one a line: "A) ...\nB) ..."."""
        return "\n".join(f"{k}) {v}" for k, v in opts.items())

    def label(self, i: int) -> str:
        """City i as the Pure track writes it: its name and coordinate to 4 decimals."""
        return f"{self.c.name[i]} ({self.c.lat[i]:.4f}, {self.c.lon[i]:.4f})"

    @property
    def labels(self) -> CityLabels:
        """The table of names that pick out one city (built on first use, then kept)."""
        if self._labels is None:
            self._labels = labels_for(self.c)
        return self._labels

    def named(self, *idx: int) -> list[str] | None:
        """ "Name, Country" labels (the province added where the country has namesakes) for
        these cities, or None, counted as ``ambiguous_name``, when one fits several cities."""
        out = [self.labels.with_country(i) for i in idx]
        if any(x is None for x in out):
            self.reject("ambiguous_name")
            return None
        return [x for x in out if x is not None]

    def bare_names(self, *idx: int) -> list[str] | None:
        """The names alone where each picks out one city (``_labels``), or None, counted as
        ``ambiguous_name``."""
        out = [self.labels.bare(i) for i in idx]
        if any(x is None for x in out) or len({fold(x or "") for x in out}) < len(out):
            self.reject("ambiguous_name")
            return None
        return [x for x in out if x is not None]


def region_of(s: Sampler, i: int) -> str:
    """City i's region (its UN subregion), a sample's ``region``."""
    return str(s.c.subregion[i])
