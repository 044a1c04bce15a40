"""The ``lang:XX`` variant's maps (issue 32): an engine drawing every label from ``name:XX``
where the object has it, else ``name`` (``MapEngine.in_language``), the truth readers reading
the same names, ``way_names`` and ``translated_share``.

Real PostGIS, Mapnik and Chromium, on a tiny extract written here (a street and a café with
German names, a street whose ``name:de`` is empty and a café with none) and one check on the
shared Monaco extract.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from cartoqa.errors import CartoqaError
from maps import MapEngine, View, in_language_style, translated_share, way_names
from maps.languages import ensure_language_views, language_code, view_name
from maps.style_variants import variant_info

from .osm_xml import write_osm
from .road_fixtures import ll

ROOT = Path(__file__).resolve().parents[2]

#: the tiny extract: nodes (id -> grid point, tags) and ways (id -> node ids, tags)
NODES = {
    1: (-2.0, 0.0, {}),
    2: (0.0, 0.0, {}),
    3: (2.0, 0.0, {}),
    4: (0.0, -2.0, {}),
    5: (0.0, 2.0, {}),
    10: (0.8, 0.8, {"amenity": "cafe", "name": "Corner Cafe", "name:de": "Eckcafe"}),
    11: (-6.0, -6.0, {"amenity": "cafe", "name": "Blue Bean"}),
}
WAYS = {
    100: ([1, 2, 3], {"highway": "secondary", "name": "Harbour Street",
                      "name:de": "Hafenstrasse"}),
    101: ([4, 2, 5], {"highway": "residential", "name": "Mill Lane", "name:de": ""}),
}  # fmt: skip


def _write_town(path: Path) -> None:
    lines = []
    for n, (x, y, tags) in NODES.items():
        lat, lon = ll(x, y)
        head = f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"'
        if not tags:
            lines.append(head + "/>")
            continue
        lines += [
            head + ">",
            *(f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()),
            "  </node>",
        ]
    for w, (refs, tags) in WAYS.items():
        lines.append(f'  <way id="{w}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
        lines.append("  </way>")
    write_osm(path, lines)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.fixture(scope="module")
def town(cluster, cache, carto_files, tmp_path_factory):
    """The base engine of the tiny extract, its German twin, and the base engine's style and
    zoom-19 tiles before the German one drew anything (the café's view drawn by the base)."""
    path = tmp_path_factory.mktemp("lang-town") / "lang-town.osm"
    _write_town(path)
    base = MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)
    shot = base.render(View.make(ll(0.8, 0.8), 19, id="town-cafe"))
    before = {"style": _snapshot(base.style.folder), "tiles": _snapshot(base.tiles.folder)}
    german = base.in_language("de")
    return {"base": base, "de": german, "base_shot": shot, "before": before}


# ------------------------------------------------------------------ codes


@pytest.mark.parametrize(
    ("given", "code"),
    [("de", "de"), ("DE", "de"), ("fr", "fr"), ("zh", "zh"), ("pt-br", "pt-BR"),
     ("zh-hans", "zh-Hans"), ("be-tarask", "be-tarask"), ("es-419", "es-419")],
)  # fmt: skip
def test_language_codes_are_written_as_osm_keys_write_them(given, code):
    assert language_code(given) == code
    assert view_name("planet_osm_point", given) == f"planet_osm_point_lang_{code.lower()}".replace(
        "-", "_"
    )


@pytest.mark.parametrize(
    "bad", ["", "d", "german", "de_DE", "de;", "de' OR 1=1 --", "de fr", "de-", "ü", "de-x"]
)
def test_a_bad_language_code_is_refused_naming_it(bad, town):
    with pytest.raises(CartoqaError, match="not a language code") as err:
        town["base"].in_language(bad)
    assert repr(bad) in str(err.value)
    with pytest.raises(CartoqaError, match="not a language code"):
        in_language_style(town["base"].style, bad)
    with pytest.raises(CartoqaError, match="not a language code"):
        way_names(town["base"], [100], bad)


def test_the_readers_code_the_language_copy_as_they_code_the_base():
    """The colour-coded styles of the road-label and feature readers, made from the language
    copy's XML, are the base's coded styles reading the views: every insertion found its
    place (the layers' SQL anchors hold with the views' names)."""
    from maps.database import CARTO_DIR
    from maps.feature_pixels import coded_xml
    from maps.labels import _coded_xml
    from maps.languages import language_sql

    xml = (CARTO_DIR / "style.xml").read_text(encoding="utf-8")
    german = language_sql(xml, "de")
    assert german != xml and language_sql(xml, None) is xml
    for code in (_coded_xml, coded_xml):
        assert code(german, "cq0") == language_sql(code(xml, "cq0"), "de"), code.__name__


# ------------------------------------------------------------------ the database's views


def test_the_views_name_objects_in_the_language_and_fall_back_to_name(town):
    from maps.database import query_rows

    german = town["de"]
    conn = german.database.connection
    names = {}
    for table in ("planet_osm_point", "planet_osm_line"):
        for osm_id, name in query_rows(
            conn, f"SELECT osm_id, name FROM {view_name(table, 'de')}", during="t", what="t"
        ):
            names[int(osm_id)] = name
    assert names == {10: "Eckcafe", 11: "Blue Bean", 100: "Hafenstrasse", 101: "Mill Lane"}
    # the roads table too (the style reads it for low zooms)
    roads = query_rows(conn, "SELECT name FROM planet_osm_roads_lang_de", during="t", what="t")
    assert {r[0] for r in roads} == {"Hafenstrasse"}
    # the tables keep their names
    base = query_rows(conn, "SELECT name FROM planet_osm_line ORDER BY osm_id", during="t",
                      what="t")  # fmt: skip
    assert [r[0] for r in base] == ["Harbour Street", "Mill Lane"]


def test_two_processes_make_a_language_s_views_once(town):
    """A real race: the test holds the French views' lock while two processes ask for them;
    once both wait for it (both found the views missing), it lets go: one makes the four
    views, the other then finds them made."""
    import psycopg

    from maps.languages import LOCK_PREFIX

    conn = town["base"].database.connection
    code = (
        "import sys\n"
        "from maps.database import Connection, ExtractDatabase\n"
        "from maps.languages import ensure_language_views\n"
        "c = Connection(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])\n"
        "print(ensure_language_views(ExtractDatabase(None, c, False), 'fr'))\n"
    )
    args = [conn.dbname, conn.host, str(conn.port), conn.user]
    with psycopg.connect(conn.conninfo(), autocommit=True) as held:
        held.execute("SELECT pg_advisory_lock(hashtext(%s))", (LOCK_PREFIX + "fr",))
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, *args],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        waiting, deadline = 0, time.monotonic() + 60
        while waiting < 2 and time.monotonic() < deadline and all(p.poll() is None for p in procs):
            time.sleep(0.05)
            waiting = held.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()[0]
        held.execute("SELECT pg_advisory_unlock(hashtext(%s))", (LOCK_PREFIX + "fr",))
    outs = [p.communicate(timeout=120) for p in procs]
    assert waiting == 2, [o[1][-800:] for o in outs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-800:] for o in outs]
    assert sorted(int(o[0].strip()) for o in outs) == [0, 4]
    # asked again, nothing is made
    assert ensure_language_views(town["base"].database, "fr") == 0


# ------------------------------------------------------------------ the engine and its copy


def test_the_language_engine_has_a_style_and_tile_cache_of_its_own(town):
    base, german = town["base"], town["de"]
    assert base.language is None and german.language == "de"
    assert german.database is base.database and german.extract is base.extract
    assert german.style.folder.name == f"{base.style.folder.name}-lang-de1"
    info = variant_info(german.style)
    assert info is not None and info["variant"] == "lang" and info["language"] == "de"
    assert info["counts"]["tables_read"] == 88  # every table read of the 78 layers
    xml = german.style.xml_path.read_text(encoding="utf-8")
    assert "planet_osm_point_lang_de" in xml and "FROM planet_osm_point\n" not in xml
    assert german.tiles.folder != base.tiles.folder
    assert german.tiles.folder.parents[1] == base.tiles.folder.parents[1]
    # asked again: the same copy, not rewritten; the German engine asked for German: itself
    mtime = german.style.xml_path.stat().st_mtime_ns
    assert in_language_style(base.style, "de") == german.style
    assert german.in_language("DE") is german
    assert german.style.xml_path.stat().st_mtime_ns == mtime
    with pytest.raises(CartoqaError, match="base engine"):
        german.in_language("fr")


def test_the_german_render_writes_german_names_and_leaves_the_base_alone(town, tmp_path):
    from cartoqa.models.ocr import read_labels

    base, german = town["base"], town["de"]
    view = View.make(ll(0.8, 0.8), 19, id="town-cafe")
    shot = german.render(view)
    assert shot.png != town["base_shot"].png
    words = " ".join(read_labels(shot.save(tmp_path / "de.png")))
    base_words = " ".join(read_labels(town["base_shot"].save(tmp_path / "base.png")))
    assert "Eckcafe" in words and "Corner" not in words, words
    assert "Corner" in base_words and "Eckcafe" not in base_words, base_words
    # the base engine's style and tiles are byte for byte what they were
    assert _snapshot(base.style.folder) == town["before"]["style"]
    assert _snapshot(base.tiles.folder) == town["before"]["tiles"]


def test_the_feature_reader_gives_the_names_the_language_engine_draws(town):
    from maps.feature_pixels import FeatureLabels

    def cafes(engine: MapEngine, at: tuple[float, float]) -> dict[int, str]:
        drawn = FeatureLabels(engine, lambda tags: "amenity" in tags).view(
            View.make(ll(*at), 19, id="cafe"), covers=[]
        )
        return {d.row.osm_id: d.label_text for d in drawn if d.label is not None}

    assert cafes(town["base"], (0.8, 0.8)) == {10: "Corner Cafe"}
    assert cafes(town["de"], (0.8, 0.8)) == {10: "Eckcafe"}
    assert cafes(town["de"], (-6.0, -6.0)) == {11: "Blue Bean"}  # no name:de: its name


def test_the_road_label_reader_gives_the_names_the_language_engine_draws(town):
    from maps.labels import RoadLabels

    view = View.make(ll(0.0, 0.0), 18, id="town-roads")
    base = RoadLabels(town["base"]).ways(view)
    german = RoadLabels(town["de"]).ways(view)
    assert base.name_of == {100: "Harbour Street", 101: "Mill Lane"}
    assert german.name_of == {100: "Hafenstrasse", 101: "Mill Lane"}  # empty name:de: name
    assert 100 in german.visible and 101 in german.visible
    # the glyphs are counted for the German name (a longer word, placed whole)
    assert german.visible[100] != base.visible.get(100)


# ------------------------------------------------------------------ names and shares


def test_way_names_give_each_way_s_name_in_the_language(town):
    got = way_names(town["base"], [100, 101, 999, 100], "de")
    assert got == {100: "Hafenstrasse", 101: None, 999: None}
    assert way_names(town["base"], [100], "fr") == {100: None}
    assert way_names(town["base"], [], "de") == {}


def test_translated_share_counts_the_named_objects_in_the_view(town):
    german = town["de"]
    # Harbour Street and the Corner Cafe have name:de, Mill Lane an empty one: 2 of 3
    assert translated_share(german, View.make(ll(0.0, 0.0), 18, id="a")) == 0.6667
    # the Blue Bean alone: 0 of 1
    assert translated_share(german, View.make(ll(-6.0, -6.0), 19, id="b")) == 0.0
    # nothing named
    assert translated_share(german, View.make(ll(12.0, 12.0), 19, id="c")) is None
    with pytest.raises(CartoqaError, match="in_language"):
        translated_share(town["base"], View.make(ll(0.0, 0.0), 18, id="a"))


# ------------------------------------------------------------------ a shared extract


def test_helsinki_in_swedish_draws_the_swedish_street_names(engine_for):
    """Helsinki is bilingual: most streets have ``name:sv`` beside the Finnish ``name``
    (1278 of 2850 named objects of the extract).  The road-label reader of the Swedish
    engine gives each labelled street's Swedish name where it has one, its name where not."""
    from maps.labels import RoadLabels
    from maps.roads import normalise_road

    base = engine_for("helsinki-centre.osm.pbf")
    swedish = base.in_language("sv")
    view = View.make((60.1710, 24.9440), 17, id="helsinki-sv")
    share = translated_share(swedish, view)
    assert share is not None and 0.3 < share < 1.0
    shown = RoadLabels(swedish).ways(view)
    plain = RoadLabels(base).ways(view)
    names_sv = way_names(base, sorted(shown.name_of), "sv")
    translated = [i for i, n in names_sv.items() if n]
    assert len(translated) >= 5 and translated != list(names_sv)
    for i, name in names_sv.items():
        want = (normalise_road(name) or name) if name else plain.name_of.get(i)
        if want is not None:
            assert shown.name_of[i] == want, i
    assert any(shown.name_of[i] != plain.name_of.get(i) for i in translated)
