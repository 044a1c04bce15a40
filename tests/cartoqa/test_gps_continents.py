"""One rule for the continent of a city in boundary analysis (issue 28, item 13).

A reader found Hawaii kept as Oceania, the Canaries and Madeira as Africa and Indonesian New
Guinea as Oceania, while the Urals and Istanbul were rejected as debatable.  The rule now:
a city's continent is the land's it stands on, and a city is left out wherever readers name
two: the boundary zones of countries that span two continents, countries between two
(the Caucasus, Cyprus), and land governed from another continent than the one it lies on or
off (islands and exclaves: Hawaii, the Canaries, Madeira, the Azores, Ceuta, Melilla,
Indonesian New Guinea, San Andrés, and overseas territories such as Réunion or Guam).
"""

from __future__ import annotations

import pytest

from cartoqa.tasks.gps._cities import continent_of_place, load_cities


def _continent(name: str, country: str) -> str | None:
    c = load_cities()
    found = [i for i in range(len(c)) if c.name[i] == name and c.country[i] == country]
    assert found, (name, country)
    (i,) = found[:1]
    return continent_of_place(c.country[i], str(c.continent[i]), c.lat[i], c.lon[i], c.admin1[i])


@pytest.mark.parametrize(
    ("name", "country"),
    [
        ("Honolulu", "US"),  # Hawaii: Oceania by its land, North America by its country
        ("Hilo", "US"),
        ("Las Palmas de Gran Canaria", "ES"),  # the Canaries: off Africa, Spain's
        ("Santa Cruz de Tenerife", "ES"),
        ("Ceuta", "ES"),
        ("Melilla", "ES"),
        ("Funchal", "PT"),  # Madeira
        ("Ponta Delgada", "PT"),  # the Azores
        ("Jayapura", "ID"),  # New Guinea: Oceania by its land, Asia by its country
        ("Sorong", "ID"),
        ("San Andrés", "CO"),  # off Central America, Colombia's
        ("Saint-Denis", "RE"),  # Réunion: off Africa, France's
        ("Cayenne", "GF"),
        ("Dededo Village", "GU"),  # Guam: Oceania, the United States'
        ("Yekaterinburg", "RU"),  # the Urals
        ("Istanbul", "TR"),  # both sides of the Bosphorus
        ("Baku", "AZ"),
        ("Nicosia", "CY"),
        ("Port Said", "EG"),
    ],
)
def test_a_city_whose_continent_readers_dispute_gets_none(name: str, country: str) -> None:
    assert _continent(name, country) is None


@pytest.mark.parametrize(
    ("name", "country", "continent"),
    [
        ("Moscow", "RU", "EU"),
        ("Novosibirsk", "RU", "AS"),
        ("Edirne", "TR", "EU"),
        ("Ankara", "TR", "AS"),
        ("Cairo", "EG", "AF"),
        ("Madrid", "ES", "EU"),
        ("Lisbon", "PT", "EU"),
        ("Los Angeles", "US", "NA"),
        ("Anchorage", "US", "NA"),
        ("Jakarta", "ID", "AS"),
        ("Port Moresby", "PG", "OC"),
        ("San Juan", "PR", "NA"),  # the United States' too, and in North America
        ("Sydney", "AU", "OC"),
        ("Bogotá", "CO", "SA"),
    ],
)
def test_a_city_whose_continent_is_settled_keeps_it(
    name: str, country: str, continent: str
) -> None:
    assert _continent(name, country) == continent
