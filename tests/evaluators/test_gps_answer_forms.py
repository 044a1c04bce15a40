"""Issue 13, "Found" 5: every answer form a model plausibly writes that the GPS scorer used to
score wrong, each with the verdict it must get now (and near misses that must stay wrong)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    CoordinateTruth,
    IndicesTruth,
    NumberTruth,
    TextTruth,
    ValuesTruth,
)
from cartoqa.tasks.gps._cities import load_cities
from evaluators.gps import country_code
from evaluators.numeric import parse_number
from tests.evaluators.test_gps_scoring import sample
from tests.gps_scores import level, score_gps


def ok(s, text):
    return score_gps(s, text).correct


INTERP = sample("interpolation", CoordinateTruth(lat=44.3652, lon=90.9043))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FINAL ANSWER: (44.3652, 90.9043)", True),
        ("FINAL ANSWER: [44.3652, 90.9043]", True),
        ("FINAL ANSWER: Latitude: 44.3652, Longitude: 90.9043", True),
        ("FINAL ANSWER: lat = 44.3652, lon = 90.9043", True),
        ("FINAL ANSWER: Longitude: 90.9043, Latitude: 44.3652", True),  # labels give the order
        ('FINAL ANSWER: {"lat": 44.3652, "lon": 90.9043}', True),
        ("FINAL ANSWER: (44.3652, 90.9043).", True),
        ("FINAL ANSWER: (90.9043, 44.3652)", False),  # no labels: latitude first
        ("FINAL ANSWER: (44.3652, -90.9043)", False),
    ],
)
def test_coordinates_in_brackets_and_with_labels(text, expected):
    assert ok(INTERP, text) is expected


MISSING_WEST = sample("missing_data", NumberTruth(value=-53.0261, unit="deg"))
MISSING_EAST = sample("missing_data", NumberTruth(value=53.0261, unit="deg"))


@pytest.mark.parametrize(
    ("s", "text", "expected"),
    [
        (MISSING_WEST, "FINAL ANSWER: 53.0261° W", True),
        (MISSING_WEST, "FINAL ANSWER: 53.0261 degrees west", True),
        (MISSING_WEST, "FINAL ANSWER: -53.0261", True),
        (MISSING_WEST, "FINAL ANSWER: 53.0261", False),
        (MISSING_EAST, "FINAL ANSWER: 53.0261° W", False),
        (MISSING_EAST, "FINAL ANSWER: 53.0261° E", True),
    ],
)
def test_missing_data_reads_hemisphere_letters(s, text, expected):
    assert ok(s, text) is expected


CHOICE = sample(
    "relative_position_pure",
    ChoiceTruth(answer="D", options={"A": "north", "B": "south", "C": "east", "D": "west"}),
)


@pytest.mark.parametrize(
    "text",
    [
        "FINAL ANSWER: [D]",
        "FINAL ANSWER: <D>",
        "FINAL ANSWER: *D*",
        'FINAL ANSWER: "D"',
        "FINAL ANSWER: \\boxed{D}",
        "Working...\nThe answer is D",
        "Working...\nAnswer: D",
        "FINAL ANSWER: I think D",
        "FINAL ANSWER: D) west",
    ],
)
def test_letters_in_wrappers_and_phrases(text):
    assert score_gps(CHOICE, text).correct, text


@pytest.mark.parametrize(
    "text", ["FINAL ANSWER: [B]", "FINAL ANSWER: I think B", "FINAL ANSWER: Because it is west"]
)
def test_other_letters_and_words_stay_wrong(text):
    assert not ok(CHOICE, text)


YES = sample("route_analysis", BooleanTruth(value=True))
NO = sample("route_analysis", BooleanTruth(value=False))


@pytest.mark.parametrize(
    ("s", "text", "expected"),
    [
        (YES, "FINAL ANSWER: [Yes]", True),
        (YES, "FINAL ANSWER: <yes>", True),
        (YES, 'FINAL ANSWER: "Yes"', True),
        (YES, "FINAL ANSWER: Yes (detour 1.3%)", True),
        (NO, "FINAL ANSWER: No – the detour adds 14%", True),
        (NO, "FINAL ANSWER: No — it is off the route", True),
        (NO, "FINAL ANSWER: no idea", False),
        (YES, "FINAL ANSWER: [No]", False),
    ],
)
def test_yes_no_in_wrappers_and_with_asides(s, text, expected):
    assert ok(s, text) is expected


UTM = sample(
    "coordinate_transformation",
    ValuesTruth(
        values={"zone": 13.0, "easting": 810891.5, "northing": 2252034.6},
        tolerances={"zone": 0, "easting": 10, "northing": 10},
    ),
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('FINAL ANSWER: {"zone": "13N", "easting": 810891.5, "northing": 2252034.6}', True),
        ('FINAL ANSWER: {"zone": "13", "easting": 810891.5, "northing": 2252034.6}', True),
        ('FINAL ANSWER: {"Zone": 13, "Easting": 810891.5, "Northing": 2252034.6}', True),
        ("FINAL ANSWER: {'zone': 13, 'easting': 810891.5, 'northing': 2252034.6}", True),
        ('FINAL ANSWER: {"zone": 13, "easting": 810,891.5, "northing": 2,252,034.6}', True),
        ("FINAL ANSWER: Zone 13N, 810891.5 E, 2252034.6 N", True),
        ("FINAL ANSWER: zone 13, easting 810891.5 m, northing 2252034.6 m", True),
        (
            'FINAL ANSWER:\n{\n  "zone": 13,\n  "easting": 810891.5,\n  "northing": 2252034.6\n}',
            True,
        ),
        ('FINAL ANSWER: {"zone": "14N", "easting": 810891.5, "northing": 2252034.6}', False),
        ("FINAL ANSWER: Zone 13N, 810991.5 E, 2252034.6 N", False),  # 100 m off
        ('FINAL ANSWER: {"zone": 13, "easting": 810891.5}', False),  # northing missing
    ],
)
def test_utm_in_every_style(text, expected):
    assert ok(UTM, text) is expected


DIST = sample("distance", NumberTruth(value=7566.0, unit="km", equivalents={"mi": 4701.3}))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FINAL ANSWER: 7 566 km", True),  # a space groups thousands
        ("FINAL ANSWER: 7\u202f566 km", True),  # a narrow no-break space
        ("FINAL ANSWER: 7\u2009566 km", True),  # a thin space
        ("FINAL ANSWER: 7\u00a0566 km", True),  # a no-break space
        ("With R=6371 km this gives 7566 km", True),  # no marker: the last number with a unit
        ("R=6371 km, d = 1.1876 rad\nR=6371 km gives 7566 km", True),
        ("Using R = 6371 km.\nFINAL ANSWER: 7566 km", True),
        ("FINAL ANSWER: d = 6371 × 1.18756 = 7566 km", True),  # the result of the working
        ("FINAL ANSWER: 7566 km (with R = 6371 km)", True),  # the aside is not the result
        ("FINAL ANSWER: 7566 km\nCheck: R=6371 km gives 6371 km for one radian", True),
        ("FINAL ANSWER: 6371 km", False),
    ],
)
def test_distances_read_the_result_not_the_formula(text, expected):
    assert ok(DIST, text) is expected


def test_a_comma_and_space_still_separate_two_numbers():
    assert parse_number("10, 20").value == 10
    assert parse_number("10,20").value == 10
    assert parse_number("1,234.5 km").value == 1234.5
    assert parse_number("12 3456").value == 12  # not a group of three


ROUTE = sample("route_geometry_indices", IndicesTruth(indices=[0, 3, 7]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FINAL ANSWER: [0, 3, 7]\nI dropped [1, 2, 4, 5, 6] as they are within 2 km.", True),
        ("Dropping [1, 2].\nFINAL ANSWER: [0, 3, 7]", True),
        ("FINAL ANSWER:\n[0, 3, 7]\n", True),
        ("I keep [0, 3, 7]", True),  # no marker: the last list
        ("FINAL ANSWER: [1, 2, 4, 5, 6]\nKept [0, 3, 7].", False),  # the final one is scored
    ],
)
def test_the_final_index_list_is_scored_not_one_in_the_reasoning(text, expected):
    assert ok(ROUTE, text) is expected


MORON = sample(
    "place_association",
    TextTruth(answer="Mörön", accepted=["Moron", "Murun", "Mörön"]),
    country="Mongolia",
)
RIBERA = sample(  # a GeoNames name with commas of its own
    "place_association",
    TextTruth(answer="Sant Pere, Santa Caterina i La Ribera", accepted=["la Ribera"]),
    country="Spain",
)
JYV = sample(
    "place_association", TextTruth(answer="Jyväskylä", accepted=["Jyvaeskylae"]), country="Finland"
)


@pytest.mark.parametrize(
    ("s", "text", "expected"),
    [
        (MORON, "FINAL ANSWER: Mörön (Murun), Khövsgöl, Mongolia", True),
        (MORON, "FINAL ANSWER: Murun (Mörön), Khövsgöl, Mongolia", True),
        (MORON, "FINAL ANSWER: Mörön city, Khövsgöl, Mongolia", True),
        (MORON, "FINAL ANSWER: City of Mörön, Khövsgöl, Mongolia", True),
        (JYV, "FINAL ANSWER: Jyvaskyla, Central Finland, Finland", True),  # ASCII
        (JYV, "FINAL ANSWER: JYVÄSKYLÄ, Central Finland, Finland", True),
        (RIBERA, "FINAL ANSWER: Sant Pere, Santa Caterina i La Ribera, Catalonia, Spain", True),
        (RIBERA, "FINAL ANSWER: Sant Pere, Catalonia, Spain", False),
        (MORON, "FINAL ANSWER: Ulaangom (Ulangom), Uvs, Mongolia", False),
        (JYV, "FINAL ANSWER: Jyvaskyla city of Tampere, Finland", False),
    ],
)
def test_city_names_with_a_qualifier_or_another_spelling(s, text, expected):
    assert ok(s, text) is expected


OUTLIER = sample("spatial_patterns", TextTruth(answer="Saýat", accepted=["Sayat"]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FINAL ANSWER: Saýat", True),
        ("FINAL ANSWER: Sayat", True),
        ("FINAL ANSWER: **Saýat**", True),
        ("FINAL ANSWER: Saýat, Turkmenistan", True),
        ("FINAL ANSWER: Saýat (Sayat)", True),
        ("The others are in Australia.\nFINAL ANSWER: Sayat city", True),
        ("FINAL ANSWER: Busselton", False),
        ("FINAL ANSWER: Saýat or Busselton", False),
    ],
)
def test_the_outlier_city_by_name(text, expected):
    assert ok(OUTLIER, text) is expected


def _country(country, answer):
    s = sample("place_association", TextTruth(answer="X"), country=country)
    return level(score_gps(s, f"FINAL ANSWER: X, Somewhere, {answer}"), "country")


@pytest.mark.parametrize(
    ("country", "answer", "expected"),
    [
        ("Niger", "Nigeria", False),
        ("Nigeria", "Niger", False),
        ("India", "Indiana", False),
        ("Oman", "Romania", False),
        ("Niger", "Niger", True),
        ("United States", "USA", True),
        ("United States", "U.S.A.", True),
        ("United States", "US", True),
        ("United Kingdom", "UK", True),
        ("Czechia", "Czech Republic", True),
        ("Turkey", "Türkiye", True),
        ("Turkey", "Turkiye", True),
        ("Myanmar", "Burma", True),
        ("Vietnam", "Viet Nam", True),
        ("Germany", "DEU", True),
        ("Russia", "Russian Federation", True),
        ("The Netherlands", "Netherlands", True),
        ("Ivory Coast", "Côte d'Ivoire", True),
        ("South Korea", "Republic of Korea", True),
        ("Mongolia", "China", False),
    ],
)
def test_countries_match_as_whole_names_and_codes(country, answer, expected):
    assert _country(country, answer) is expected


def test_a_province_field_is_not_read_as_the_country():
    # "Georgia" is a US state here; the country is the last field
    assert _country("Georgia", "USA") is False
    s = sample("place_association", TextTruth(answer="Atlanta"), country="Georgia")
    assert level(score_gps(s, "FINAL ANSWER: Atlanta, Georgia, USA"), "country") is False


def test_every_country_the_city_table_names_resolves_to_its_own_code():
    cities = load_cities()
    pairs = set(zip(cities.country_name, cities.country, strict=True))
    wrong = {(name, code, country_code(name)) for name, code in pairs if country_code(name) != code}
    assert not wrong


SAMPLES = [INTERP, MISSING_WEST, CHOICE, YES, UTM, DIST, ROUTE, MORON, JYV]
_FORMISH = st.text(
    alphabet="0123456789 ,.:;=()[]{}<>\"'*-–NSEWlatonzeigkmYesNoABCD\\\n", max_size=120
)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=200), _FORMISH, _FORMISH.map("FINAL ANSWER: ".__add__)))
def test_no_answer_form_makes_the_scorer_raise(text):
    for s in SAMPLES:
        assert isinstance(score_gps(s, text).correct, bool)


def test_a_province_whose_name_has_commas_is_read_whole():
    from evaluators.gps import province_matches

    name = "Southern Nations, Nationalities, and People's Region"
    assert province_matches(f"FINAL ANSWER: Dimtu, {name}, Ethiopia", name)
    assert not province_matches("FINAL ANSWER: Dimtu, Oromiya, Ethiopia", name)


@pytest.mark.parametrize("province", ["Federal District", "Capital District", "Distrito Federal"])
def test_a_province_named_by_division_words_only_is_matched_whole(province):
    # Brasília's GeoNames province is "Federal District": every word of it is a division word
    from evaluators.gps import province_matches

    assert province_matches(f"FINAL ANSWER: Brasília, {province}, Brazil", province)
    assert province_matches(f"Brasilia, {province.upper()}, BR", province)
    assert not province_matches("FINAL ANSWER: Brasília, Goiás, Brazil", province)
    assert not province_matches("FINAL ANSWER: Brasília, , Brazil", province)
