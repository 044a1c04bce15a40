"""Issue 28, items 1-9: the GPS scorer reads what strong models write.

Each answer form an outside review wrote the way strong models write it is scored on a
real generated sample (the generators' own truths, prompts and metadata) with its expected
verdict: the correct forms right (labelled UTM in any order and case, Web Mercator in prose,
the paper's bounding-box list and grouping text, lenient grouping, LaTeX, DMS with
hemisphere letters, quadrant bearings, radians, nautical miles, "lat ≈ .., lon ≈ .."), the
hedges, the wrong units and a province or country alone wrong.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable

import numpy as np
import pytest

from cartoqa.records import Metadata, Prompt, Provenance, Sample, TextTruth
from cartoqa.tasks.gps import GPS_TASKS
from cartoqa.tasks.gps._cities import load_cities
from cartoqa.tasks.gps._sampling import Sampler
from cartoqa.tasks.gps.applied._names import accepted_names
from cartoqa.tasks.spec import get_task
from tests.gps_scores import score_gps


def _make(task: str, n: int, sampler: Sampler) -> Sample:
    d = GPS_TASKS[task](sampler, n)
    return Sample(
        id=f"{task}-{n}",
        task=task,
        split="test",
        prompt=Prompt(text=d.text),
        ground_truth=d.truth,
        metadata=Metadata(
            region=d.region, difficulty=d.difficulty, track=get_task(task).track, **d.meta
        ),
        provenance=Provenance(generator="tests"),
    )


@pytest.fixture(scope="module")
def gen() -> Callable[[str, Callable[[Sample], bool]], Sample]:
    """The first generated sample of a task that fits a test's need."""
    cities = load_cities()
    samplers: dict[str, Sampler] = {}

    def find(task: str, want: Callable[[Sample], bool] = lambda s: True) -> Sample:
        s = samplers.setdefault(task, Sampler(cities, np.random.default_rng([28, len(task)])))
        for n in range(400):
            got = _make(task, n, s)
            if want(got):
                return got
        raise AssertionError(f"no {task} sample fits")

    return find


def _mode(mode: str) -> Callable[[Sample], bool]:
    return lambda s: (s.metadata.model_extra or {}).get("mode") == mode


def _verdict(sample: Sample, answer: str) -> bool:
    return score_gps(sample, answer).correct


# ------------------------------------------------------------------ 1: UTM labelled

UTM_FORMS = [
    ("FINAL ANSWER: Easting = {e}, Northing = {n}", True),
    ("FINAL ANSWER: easting: {e}, northing: {n}", True),
    ("FINAL ANSWER: Northing = {n}, Easting = {e}", True),
    ("FINAL ANSWER: NORTHING: {n} m; EASTING: {e} m", True),
    ("FINAL ANSWER: E = {e} m, N = {n} m", True),
    ("FINAL ANSWER: Easting = {n}, Northing = {e}", False),  # swapped values
]


@pytest.mark.parametrize(("form", "right"), UTM_FORMS)
def test_utm_labelled_in_any_order_and_case(gen, form, right):
    s = gen("coordinate_transformation", _mode("to_utm"))
    v = s.ground_truth.values
    answer = form.format(e=f"{v['easting']:.2f}", n=f"{v['northing']:.2f}")
    assert _verdict(s, answer) is right, (answer, score_gps(s, answer))


# ------------------------------------------------------------------ 2: Web Mercator in prose

MERCATOR_FORMS = [
    ("FINAL ANSWER: x = {x:,.2f} m; y = {y:,.2f} m", True),
    ("FINAL ANSWER: x: {x:.2f}, y: {y:.2f}", True),
    ("FINAL ANSWER: X = {x:,.2f} m, Y = {y:,.2f} m", True),
    ("FINAL ANSWER: y = {y:,.2f} m; x = {x:,.2f} m", True),
    ("FINAL ANSWER: ({x:.2f}, {y:.2f})", True),
    ("FINAL ANSWER: x = {y:,.2f} m; y = {x:,.2f} m", False),
]


@pytest.mark.parametrize(("form", "right"), MERCATOR_FORMS)
def test_web_mercator_in_prose(gen, form, right):
    s = gen("coordinate_transformation", _mode("to_mercator"))
    v = s.ground_truth.values
    answer = form.format(x=v["x"], y=v["y"])
    assert _verdict(s, answer) is right, (answer, score_gps(s, answer))


# ------------------------------------------------------------------ 3: the paper's forms


def _paper_box(v: dict[str, float]) -> list[float]:
    """The paper's order: north, west, south, east (-22.7161, 48.5742, -43.5553, 138.1833)."""
    return [v["max_lat"], v["min_lon"], v["min_lat"], v["max_lon"]]


BOX_FORMS = [
    (lambda v: ", ".join(f"{x:.4f}" for x in _paper_box(v)), True),
    (lambda v: "[" + ", ".join(f"{x:.4f}" for x in _paper_box(v)) + "]", True),
    # the keys' order, as the prompt lists them
    (
        lambda v: ", ".join(f"{v[k]:.4f}" for k in ("min_lat", "max_lat", "min_lon", "max_lon")),
        True,
    ),
    (lambda v: ", ".join(f"{x + 1:.4f}" for x in _paper_box(v)), False),
    (lambda v: ", ".join(f"{x:.4f}" for x in _paper_box(v)[:3]), False),
]


@pytest.mark.parametrize(("form", "right"), BOX_FORMS)
def test_bounding_box_as_the_papers_list(gen, form, right):
    s = gen("bounding_box")
    answer = "FINAL ANSWER: " + form(s.ground_truth.values)
    assert _verdict(s, answer) is right, (answer, score_gps(s, answer))


def _ascii(name: str) -> str:
    text = unicodedata.normalize("NFKD", name)
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def _text_groups(groups: dict[str, list[str]], fix: Callable[[str], str] = str) -> str:
    return "; ".join(f"{k}: {', '.join(fix(n) for n in v)}" for k, v in groups.items())


GROUPING_FORMS = [
    ("paper text", lambda g: _text_groups(g), True),
    ("paper text, lines", lambda g: "\n".join(f"{k}: {', '.join(v)}" for k, v in g.items()), True),
    ("ASCII folded", lambda g: _text_groups(g, _ascii), True),
    (
        "ASCII folded JSON",
        lambda g: (
            "{"
            + ", ".join(
                f'"{k}": [' + ", ".join(f'"{_ascii(n)}"' for n in v) + "]" for k, v in g.items()
            )
            + "}"
        ),
        True,
    ),
    ("extra empty continent", lambda g: _text_groups(g) + f"; {_absent(g)}: ", True),
    (
        "extra empty list",
        lambda g: (
            "{"
            + ", ".join(f'"{k}": [' + ", ".join(f'"{n}"' for n in v) + "]" for k, v in g.items())
            + f', "{_absent(g)}": []}}'
        ),
        True,
    ),
    ("a city moved", lambda g: _moved(g), False),
    ("a city left out", lambda g: _text_groups({k: v[1:] for k, v in g.items()}), False),
]


def _absent(groups: dict[str, list[str]]) -> str:
    """A continent the grouping leaves empty."""
    return next(c for c in ("Oceania", "South America", "Africa", "Europe") if c not in groups)


def _moved(groups: dict[str, list[str]]) -> str:
    keys = list(groups)
    out = {k: list(v) for k, v in groups.items()}
    out[keys[1]].append(out[keys[0]].pop())
    return _text_groups(out)


def _has_accent(s: Sample) -> bool:
    names = [n for v in s.ground_truth.groups.values() for n in v]
    return len(s.ground_truth.groups) >= 2 and any(_ascii(n) != n for n in names)


@pytest.mark.parametrize(
    ("label", "form", "right"), GROUPING_FORMS, ids=[f[0] for f in GROUPING_FORMS]
)
def test_grouping_as_the_papers_text_and_lenient(gen, label, form, right):
    s = gen("boundary_analysis", _has_accent)
    groups = {k: list(v) for k, v in s.ground_truth.groups.items()}
    answer = "FINAL ANSWER: " + form(groups)
    assert _verdict(s, answer) is right, (answer, score_gps(s, answer))


def test_grouping_ascii_apostrophe(gen):
    """A name written with the typographic apostrophe (’, ʼ) in GeoNames, answered with ASCII '."""
    s = gen(
        "boundary_analysis",
        lambda s: any(c in n for v in s.ground_truth.groups.values() for n in v for c in "’ʼ‘`"),
    )
    fix = lambda n: n.replace("’", "'").replace("ʼ", "'").replace("‘", "'").replace("`", "'")  # noqa: E731
    answer = "FINAL ANSWER: " + _text_groups(s.ground_truth.groups, fix)
    assert _verdict(s, answer), (answer, score_gps(s, answer))


# ------------------------------------------------------------------ 5: LaTeX


def test_latex_distance_with_braced_thousands(gen):
    s = gen("distance", lambda s: s.ground_truth.value >= 1000)
    v = s.ground_truth.value
    whole, frac = f"{v:.1f}".split(".")
    latex = f"{int(whole):,}".replace(",", "{,}") + "." + frac
    assert _verdict(s, f"FINAL ANSWER: ${latex}$ km")
    assert _verdict(s, f"FINAL ANSWER: $\\approx {latex}\\,\\text{{km}}$")
    wrong = f"{int(v / 2):,}".replace(",", "{,}")
    assert not _verdict(s, f"FINAL ANSWER: ${wrong}$ km")


@pytest.mark.parametrize(
    ("form", "right"),
    [
        ("$ {m:.4f} \\times 10^{{{e}}}$ km²", True),
        ("${m:.4f}\\times10^{{{e}}}\\ \\text{{km}}^2$", True),
        ("{m:.4f} × 10^{e} km²", True),
        ("$ {m:.4f} \\times 10^{{{e1}}}$ km²", False),  # the exponent matters
    ],
)
def test_latex_power_of_ten_keeps_its_exponent(gen, form, right):
    s = gen("polygon", lambda s: s.ground_truth.value >= 1000)
    v = s.ground_truth.value
    e = math.floor(math.log10(v))
    answer = "FINAL ANSWER: " + form.format(m=v / 10**e, e=e, e1=e - 1)
    assert _verdict(s, answer) is right, (answer, score_gps(s, answer))


def test_latex_degree_coordinates(gen):
    s = gen("interpolation")
    lat, lon = s.ground_truth.lat, s.ground_truth.lon
    ns, ew = "N" if lat >= 0 else "S", "E" if lon >= 0 else "W"
    assert _verdict(s, f"FINAL ANSWER: $({lat:.4f}^\\circ, {lon:.4f}^\\circ)$")
    assert _verdict(s, f"FINAL ANSWER: ${abs(lat):.4f}^\\circ${ns}, ${abs(lon):.4f}^\\circ${ew}")
    assert _verdict(
        s,
        f"FINAL ANSWER: ${abs(lat):.4f}^{{\\circ}}\\,\\mathrm{{{ns}}}, "
        f"{abs(lon):.4f}^{{\\circ}}\\,\\mathrm{{{ew}}}$",
    )
    assert not _verdict(s, f"FINAL ANSWER: $({lat + 1:.4f}^\\circ, {lon:.4f}^\\circ)$")


# ------------------------------------------------------------------ 6: DMS, quadrants, rad, nmi


def _dm(value: float) -> tuple[int, int]:
    a = abs(value)
    d = int(a)
    return d, round((a - d) * 60)


@pytest.mark.parametrize("given", ["latitude", "longitude"])
def test_missing_data_dms_with_hemisphere(gen, given):
    s = gen("missing_data", lambda s: (s.metadata.model_extra or {}).get("given") == given)
    v = s.ground_truth.value
    d, m = _dm(v)
    if m == 60:
        d, m = d + 1, 0
    letter = ("N" if v >= 0 else "S") if given == "longitude" else ("E" if v >= 0 else "W")
    other = {"N": "S", "S": "N", "E": "W", "W": "E"}[letter]
    assert _verdict(s, f"FINAL ANSWER: {d}°{m:02d}′{letter}")
    assert _verdict(s, f"FINAL ANSWER: {d}° {m:02d}' {letter}")
    assert not _verdict(s, f"FINAL ANSWER: {d}°{m:02d}′{other}") or abs(v) < 0.1


def _quadrant(bearing: float) -> str:
    b = bearing % 360
    if b <= 90:
        return f"N {b:.1f}° E"
    if b <= 180:
        return f"S {180 - b:.1f}° E"
    if b <= 270:
        return f"S {b - 180:.1f}° W"
    return f"N {360 - b:.1f}° W"


@pytest.mark.parametrize("quadrant", ["NE", "SE", "SW", "NW"])
def test_quadrant_bearings(gen, quadrant):
    lo = {"NE": 10, "SE": 100, "SW": 190, "NW": 280}[quadrant]
    s = gen("bearing", lambda s: lo <= s.ground_truth.value <= lo + 70)
    v = s.ground_truth.value
    assert _verdict(s, f"FINAL ANSWER: {_quadrant(v)}"), _quadrant(v)
    assert _verdict(s, f"FINAL ANSWER: {_quadrant(v).replace(' ', '')}")
    assert not _verdict(s, f"FINAL ANSWER: {_quadrant(v + 90)}")


def test_bearing_in_radians(gen):
    s = gen("bearing", lambda s: s.ground_truth.value > 30)
    r = math.radians(s.ground_truth.value)
    assert _verdict(s, f"FINAL ANSWER: {r:.4f} rad")
    assert _verdict(s, f"FINAL ANSWER: {r:.4f} radians")
    assert not _verdict(s, f"FINAL ANSWER: {r:.4f}")  # a bare number is degrees


def test_distance_in_nautical_miles(gen):
    s = gen("distance", lambda s: s.ground_truth.value > 1000)
    km = s.ground_truth.value
    nmi = km / 1.852
    assert _verdict(s, f"FINAL ANSWER: {nmi:,.0f} nmi")
    assert _verdict(s, f"FINAL ANSWER: {nmi:,.0f} nautical miles")
    # item 8: the kilometres' number written in nautical miles is wrong
    assert not _verdict(s, f"FINAL ANSWER: {km:,.0f} nmi")
    assert not _verdict(s, f"FINAL ANSWER: {km:,.0f} NM")


@pytest.mark.parametrize(
    "form",
    [
        "FINAL ANSWER: lat ≈ {lat:.4f}, lon ≈ {lon:.4f}",
        "FINAL ANSWER: latitude ≈ {lat:.4f}°, longitude ≈ {lon:.4f}°",
        "FINAL ANSWER: lon ≈ {lon:.4f}, lat ≈ {lat:.4f}",
        "FINAL ANSWER: lat = {lat:.4f}; lon = {lon:.4f}",
    ],
)
def test_labelled_approximate_coordinates(gen, form):
    s = gen("interpolation")
    lat, lon = s.ground_truth.lat, s.ground_truth.lon
    assert _verdict(s, form.format(lat=lat, lon=lon))
    assert not _verdict(s, form.format(lat=lat + 0.5, lon=lon))


def test_labelled_degrees_and_minutes_still_read(gen):
    """Labels before degrees, minutes and seconds are read as before, not as "36"."""
    s = gen("interpolation")
    lat, lon = s.ground_truth.lat, s.ground_truth.lon

    def dms(v: float, pos: str, neg: str) -> str:
        a = abs(v)
        d, m = int(a), int((a - int(a)) * 60)
        sec = (a - d - m / 60) * 3600
        return f"{d}°{m}′{sec:.1f}″{pos if v >= 0 else neg}"

    answer = f"FINAL ANSWER: Latitude: {dms(lat, 'N', 'S')}, Longitude: {dms(lon, 'E', 'W')}"
    assert _verdict(s, answer), answer


# ------------------------------------------------------------------ 7: hedges


def test_choice_hedge_two_letters(gen):
    s = gen("relative_position_pure")
    other = next(k for k in s.ground_truth.options if k != s.ground_truth.answer)
    for a, b in ((s.ground_truth.answer, other), (other, s.ground_truth.answer)):
        assert not _verdict(s, f"FINAL ANSWER: {a}, {b}")
        assert not _verdict(s, f"FINAL ANSWER: {a} or {b}")
    assert _verdict(s, f"FINAL ANSWER: {s.ground_truth.answer}")


def test_bearing_hedge_with_its_back_bearing(gen):
    s = gen("bearing", lambda s: s.ground_truth.value < 180)
    v = s.ground_truth.value
    assert not _verdict(s, f"FINAL ANSWER: {v:.0f}° or {v + 180:.0f}°")
    assert not _verdict(s, f"FINAL ANSWER: {v + 180:.0f}° or {v:.0f}°")
    assert _verdict(s, f"FINAL ANSWER: {v:.0f}°")


def _listed(s: Sample) -> list[str]:
    text = s.prompt.text
    return text[text.index(": ") + 2 : text.index(". Which")].split("; ")


def test_spatial_patterns_hedge_naming_two_cities(gen):
    s = gen("spatial_patterns")
    right = s.ground_truth.answer
    other = next(n for n in _listed(s) if n != right)
    assert not _verdict(s, f"FINAL ANSWER: {right}, {other}")
    assert not _verdict(s, f"FINAL ANSWER: {other}, {right}")
    assert not _verdict(s, f"FINAL ANSWER: {right} or {other}")
    assert _verdict(s, f"FINAL ANSWER: {right}")


def test_place_association_hedge_naming_two_cities(gen):
    s = gen("place_association")
    right = s.ground_truth.answer
    # "city, province, country": a second city is read as a (wrong) province, so the
    # hedge counted here is the one that says so ("or", "/")
    assert not _verdict(s, f"FINAL ANSWER: {right} or Tauranga")
    assert not _verdict(s, f"FINAL ANSWER: {right} / Tauranga")
    assert not _verdict(s, f"FINAL ANSWER: Tauranga or {right}")
    md = s.metadata.model_extra or {}
    assert _verdict(s, f"FINAL ANSWER: {right}, {md['province']}, {md['country']}")
    # two names of the one city are no hedge
    alt = s.ground_truth.accepted[0]
    assert _verdict(s, f"FINAL ANSWER: {right} / {alt}, {md['country']}")


# ------------------------------------------------------------------ 9: a province or country alone


def _city_sample(name: str, country: str) -> Sample:
    """A place-association sample for one real GeoNames city, with the generator's own
    accepted names (``accepted_names``) and metadata."""
    cities = load_cities()
    sampler = Sampler(cities, np.random.default_rng(0))
    rows = [
        i
        for i in range(len(cities.name))
        if cities.name[i] == name and cities.country[i] == country
    ]
    i = max(rows, key=lambda r: cities.population[r])
    return Sample(
        id=f"place_association-{country}",
        task="place_association",
        split="test",
        prompt=Prompt(
            text=f"Which city is at or next to {cities.lat[i]:.5f}, {cities.lon[i]:.5f}?"
        ),
        ground_truth=TextTruth(answer=cities.name[i], accepted=accepted_names(sampler, i)),
        metadata=Metadata(
            track="applied",
            country=cities.country_name[i],
            province=cities.admin1_name[i],
            admin1=cities.admin1[i],
        ),
        provenance=Provenance(generator="tests"),
    )


@pytest.mark.parametrize(
    ("city", "country", "answer", "right"),
    [
        ("Salvador", "BR", "Bahia, Brazil", False),
        ("Salvador", "BR", "Bahia", False),
        ("Salvador", "BR", "Brazil", False),
        ("Salvador", "BR", "Salvador, Bahia, Brazil", True),
        ("Salvador", "BR", "Cidade do São Salvador da Bahia de Todos os Santos, Brazil", True),
        ("Asunción", "PY", "Paraguay", False),
        ("Asunción", "PY", "Asuncion, Paraguay", True),
    ],
)
def test_a_province_or_country_alone_is_no_city(city, country, answer, right):
    s = _city_sample(city, country)
    assert _verdict(s, f"FINAL ANSWER: {answer}") is right, (answer, s.ground_truth.accepted[:40])


# ------------------------------------------------------------------ linear time on the new forms

NEW_SHAPES = {
    "LaTeX": lambda n: "$5{,}448.8 \\times 10^{4}\\,\\text{km}^\\circ$ " * (n // 40),
    "dollars": lambda n: "$" * n,
    "math brackets": lambda n: "\\(" * (n // 2),
    "labels": lambda n: "Easting = 1, Northing = 2, x = 3; y ≈ 4, " * (n // 42),
    "groups": lambda n: "Asia: a, b; Oceania: c\n" * (n // 24),
    "degrees and minutes": lambda n: "27°52′N S 65.5° W " * (n // 18),
    "lat lon": lambda n: "lat ≈ 1, lon ≈ 2, " * (n // 18),
    "plain numbers": lambda n: "1.5, " * (n // 5),
}


@pytest.mark.parametrize("shape", list(NEW_SHAPES))
def test_the_new_forms_are_read_in_linear_time(gen, shape):
    """Ten times the answer takes about ten times as long (a quadratic reader 100 times),
    on a sample of each task whose reader this issue changed; nothing raises."""
    import time

    picked = [
        gen("coordinate_transformation", _mode("to_utm")),
        gen("coordinate_transformation", _mode("to_mercator")),
        gen("bounding_box"),
        gen("boundary_analysis"),
        gen("interpolation"),
        gen("bearing"),
        gen("missing_data"),
        gen("spatial_patterns"),
        gen("place_association"),
    ]

    def run(n: int) -> float:
        answer = "FINAL ANSWER: " + NEW_SHAPES[shape](n)
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            for s in picked:
                score_gps(s, answer)
            best = min(best, time.perf_counter() - t0)
        return best

    t_small, t_big = run(10_000), run(100_000)
    assert t_big < 30 * t_small + 0.05, f"{shape}: {t_small:.4f} s, then {t_big:.4f} s"


@pytest.mark.parametrize(
    ("answer", "province", "right"),
    [
        # GeoNames writes China's divisions in pinyin with their kind; a model writes the name
        ("Quzhou, Zhejiang, China", "Zhejiang Sheng", True),
        ("Quzhou, Zhejiang Province, China", "Zhejiang Sheng", True),
        ("Shanghai, Shanghai, China", "Shanghai Shi", True),
        ("Nanning, Guangxi, China", "Guangxi Zhuangzu Zizhiqu", True),
        ("Urumqi, Xinjiang, China", "Xinjiang Weiwu'er Zizhiqu", True),
        ("Yinchuan, Ningxia, China", "Ningxia Huizu Zizhiqu", True),
        ("Quzhou, Jiangsu, China", "Zhejiang Sheng", False),
        ("Nanning, Guangdong, China", "Guangxi Zhuangzu Zizhiqu", False),
    ],
)
def test_chinese_divisions_read_without_their_kind(answer, province, right):
    from evaluators.gps import province_matches

    assert province_matches(answer, province) is right
