"""Place association, the city alone asked (issue 28 item 14): province and country of a
city-only answer are those of the city its name means near the point asked."""

from cartoqa.records import Metadata, Prompt, Provenance, Sample, TextTruth
from tests.gps_scores import level, score_gps

# Springfield, Illinois (GeoNames cities15000: US, admin1 IL), the point near it
ILLINOIS = {"country": "United States", "country_code": "US", "admin1": "IL",
            "province": "Illinois", "lat": 39.80, "lon": -89.64}  # fmt: skip


def sample(task, answer, accepted=(), **meta):
    return Sample(
        id="p1",
        task=task,
        prompt=Prompt(text="q"),
        ground_truth=TextTruth(answer=answer, accepted=list(accepted)),
        metadata=Metadata(track="applied", **meta),
        provenance=Provenance(generator="t"),
    )


def city_only(answer="Springfield", **extra):
    return sample("place_association", answer, asked="city", **(ILLINOIS | extra))


def test_the_right_city_alone_earns_province_and_country():
    got = score_gps(city_only(), "FINAL ANSWER: Springfield")
    assert got.correct and level(got, "province") and level(got, "country")


def test_another_city_alone_earns_the_levels_of_the_place_its_name_means_nearby():
    # Peoria and Decatur are Illinois cities: right province and country, wrong city
    got = score_gps(city_only(), "FINAL ANSWER: Decatur")
    assert not got.correct and level(got, "province") and level(got, "country")
    # St. Louis is in Missouri: right country only
    got = score_gps(city_only(), "FINAL ANSWER: St. Louis")
    assert not got.correct and level(got, "province") is False and level(got, "country")
    # Toronto: neither
    got = score_gps(city_only(), "FINAL ANSWER: Toronto")
    assert not got.correct and level(got, "province") is False and level(got, "country") is False


def test_a_shared_name_means_the_namesake_nearest_the_point():
    # "Paris" near Springfield, Illinois means Paris, Illinois? cities15000 holds Paris,
    # Texas and Paris, Tennessee in the US (no Illinois one): the nearest is in the US
    got = score_gps(city_only(), "FINAL ANSWER: Paris")
    assert level(got, "country") and level(got, "province") is False
    # near France the same name means Paris, France
    fr = sample(
        "place_association", "Versailles", asked="city", country="France",
        country_code="FR", admin1="11", province="Île-de-France", lat=48.80, lon=2.13,
    )  # fmt: skip
    got = score_gps(fr, "FINAL ANSWER: Paris")
    assert not got.correct and level(got, "country") and level(got, "province")


def test_a_name_that_is_no_city_earns_nothing():
    got = score_gps(city_only(), "FINAL ANSWER: Qwzxyplace")
    assert not got.correct and level(got, "province") is False and level(got, "country") is False


def test_a_written_province_and_country_are_graded_as_written():
    got = score_gps(city_only(), "FINAL ANSWER: Decatur, Ohio, Canada")
    assert not got.correct and level(got, "province") is False and level(got, "country") is False


def test_samples_made_before_keep_their_scores():
    # no "asked": the levels were asked, and a city alone names neither
    old = sample("place_association", "Springfield", **ILLINOIS)
    got = score_gps(old, "FINAL ANSWER: Springfield")
    assert got.correct and not level(got, "province") and not level(got, "country")


def test_the_levels_variant_grades_as_before():
    v = sample("place_association_levels", "Springfield", **ILLINOIS)
    got = score_gps(v, "FINAL ANSWER: Springfield, Illinois, USA")
    assert got.correct and level(got, "province") and level(got, "country")
    got = score_gps(v, "FINAL ANSWER: Springfield")
    assert got.correct and not level(got, "province") and not level(got, "country")
