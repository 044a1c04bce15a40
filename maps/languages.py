"""Names in another language: an extract's objects named from ``name:<lang>`` (issue 32's
``lang:XX`` variant), in the database the style and the truth readers read.

osm2pgsql (with the carto lua and ``--hstore``) keeps every tag that has no column of its
own in the ``tags`` hstore, ``name:de`` among them.  ``ensure_language_views(database,
"de")`` makes, once per database and language, a view beside each table the style reads
(``planet_osm_point``, ``_line``, ``_polygon``, ``_roads``): ``planet_osm_point_lang_de``
holds every column of its table, in its order, with ``name`` replaced by

    COALESCE(NULLIF(TRIM(tags->'name:de'), ''), name)

so an object with a German name is named so, and every other keeps its ``name`` (for a code
such as ``pt-BR`` the lower case key ``name:pt-br``, which some data holds, is tried next).  Every
use of ``name`` in the style's SQL (filters, ``length(name)``, orderings, the brand
fallback) then reads the language's name unchanged; ``language_sql`` points SQL written for
the tables at the views.  The views are plain views (PostgreSQL inlines them: the tables'
spatial indexes serve them), made under an advisory lock, so two processes asking at once
make them once; a view made by another version of this code is made again.

A language is a code as OSM's ``name:XX`` keys write them (BCP 47): ``de``, ``fr``,
``zh``, ``pt-BR``, ``zh-Hans``.  ``language_code`` checks one and writes it as OSM does
(language lower case, script title case, region upper case: "pt-br" -> "pt-BR"); anything
else is refused before it reaches SQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from cartoqa.errors import CartoqaError

from .database import ExtractDatabase, query_rows

if TYPE_CHECKING:
    from .page import View

__all__ = [
    "TABLES",
    "ensure_language_views",
    "language_code",
    "language_sql",
    "name_keys",
    "tables_read",
    "translated_share",
    "view_name",
    "way_names",
]

#: the osm2pgsql tables the style and the readers read, each given a view per language
TABLES = ("planet_osm_point", "planet_osm_line", "planet_osm_polygon", "planet_osm_roads")
#: written as each view's comment: a view with another one is made again
VIEWS_VERSION = "cartoqa language view 1"

#: the advisory lock held while a language's views are made: this and the code, hashed
LOCK_PREFIX = "cartoqa-lang-"

_CODE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")
_TABLE_RE = re.compile(r"\b(" + "|".join(TABLES) + r")\b")


def language_code(lang: str) -> str:
    """``lang`` checked and written as OSM's ``name:XX`` keys write it ("DE" -> "de", "pt-br"
    -> "pt-BR", "zh-hans" -> "zh-Hans"); anything else raises ``CartoqaError`` naming it."""
    if not isinstance(lang, str) or not _CODE.fullmatch(lang):
        raise CartoqaError(
            f"language {lang!r}: not a language code; give one as OSM's name:XX tags write "
            "it, such as de, fr, zh, pt-BR or zh-Hans (letters and digits, subtags joined by '-')"
        )
    first, *rest = lang.split("-")
    parts = [first.lower()]
    for p in rest:
        if len(p) == 4 and p.isalpha():
            parts.append(p.title())  # a script: Hans, Latn
        elif len(p) == 2 and p.isalpha():
            parts.append(p.upper())  # a region: BR, CH
        else:
            parts.append(p.lower())  # a variant or a numeric region: tarask, 419
    return "-".join(parts)


def view_name(table: str, lang: str) -> str:
    """The view of ``table`` in language ``lang``: "planet_osm_point_lang_pt_br"."""
    return f"{table}_lang_{language_code(lang).lower().replace('-', '_')}"


def name_keys(lang: str) -> list[str]:
    """The tag keys read for a name in ``lang``, in order: OSM's form ("name:pt-BR") and,
    where it differs, the all lower case one some data holds ("name:pt-br")."""
    code = language_code(lang)
    return list(dict.fromkeys([f"name:{code}", f"name:{code.lower()}"]))


def tables_read(sql: str) -> int:
    """How many times ``sql`` names one of the ``TABLES``."""
    return len(_TABLE_RE.findall(sql))


def language_sql(sql: str, lang: str | None) -> str:
    """``sql`` (the style's or a reader's, written for the tables) reading the views of
    ``lang`` instead; ``sql`` itself, unchanged, for None (a base engine)."""
    if lang is None:
        return sql
    code = language_code(lang)
    return _TABLE_RE.sub(lambda m: view_name(m.group(1), code), sql)


def _view_sql(table: str, code: str, columns: list[str]) -> str:
    if "name" not in columns or "tags" not in columns:
        raise CartoqaError(
            f"the table {table} has no 'name' or no 'tags' column: the extract was not "
            "imported with osm2pgsql's --hstore and the carto lua (maps.database does)"
        )
    select = ",\n  ".join(
        f"COALESCE({_tag_sql(code)}, name) AS name"
        if c == "name"
        else '"' + c.replace('"', '""') + '"'
        for c in columns
    )
    return f"CREATE VIEW {view_name(table, code)} AS SELECT\n  {select}\nFROM {table}"


def _views_ready(c: object, code: str) -> bool:
    names = [view_name(t, code) for t in TABLES]
    rows = c.execute(  # type: ignore[attr-defined]
        "SELECT count(*) FROM pg_class WHERE relkind = 'v' AND relname = ANY(%s) "
        "AND obj_description(oid, 'pg_class') = %s",
        (names, VIEWS_VERSION),
    ).fetchone()
    return bool(rows[0] == len(names))


def ensure_language_views(database: ExtractDatabase, lang: str) -> int:
    """Make the views of ``lang`` in ``database`` where they are missing or were made by
    another version of this code (the module's notes); how many this call made (0 when
    they were there, or another process made them while this one waited for the lock)."""
    import psycopg

    code = language_code(lang)
    conn = database.connection
    try:
        with psycopg.connect(conn.conninfo(), autocommit=True, connect_timeout=10) as c:
            if _views_ready(c, code):
                return 0
            made = 0
            with c.transaction():
                # one process at a time per database and language; the lock ends with the
                # transaction
                c.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (LOCK_PREFIX + code,))
                if _views_ready(c, code):
                    return 0
                for table in TABLES:
                    columns = [
                        r[0]
                        for r in c.execute(
                            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                            "AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                            (table,),
                        )
                    ]
                    view = view_name(table, code)
                    c.execute(f"DROP VIEW IF EXISTS {view}")
                    c.execute(_view_sql(table, code, columns))
                    c.execute(f"COMMENT ON VIEW {view} IS '{VIEWS_VERSION}'")
                    made += 1
            return made
    except psycopg.Error as exc:
        raise CartoqaError(
            f"could not make the {code!r} name views in {conn.dbname}: {str(exc).strip()[:400]}"
        ) from None


def _tag_sql(code: str) -> str:
    """SQL of an object's name in language ``code`` from its tags (NULL where it has none)."""
    keys = ", ".join(f"NULLIF(TRIM(tags->'{k}'), '')" for k in name_keys(code))
    return f"COALESCE({keys})" if len(name_keys(code)) > 1 else keys


class Drawing(Protocol):
    """What these functions read of a ``maps.MapEngine`` (named so, not imported: the
    engine's module imports this one)."""

    database: ExtractDatabase
    language: str | None


def way_names(engine: Drawing, way_ids: Iterable[int], lang: str) -> dict[int, str | None]:
    """Each OSM way's ``name:<lang>`` (stripped; None where the way has none, an empty one,
    or is not in the extract's database), for every id in ``way_ids`` (e.g. a road graph
    edge's ``osmid``s, ``maps.labels.way_ids``).  Read from the lines and the areas (a closed
    way drawn as an area, a pedestrian square) of the extract's database."""
    code = language_code(lang)
    ids = sorted({int(i) for i in way_ids})
    out: dict[int, str | None] = dict.fromkeys(ids)
    if not ids:
        return out
    rows = query_rows(
        engine.database.connection,
        f"SELECT osm_id, {_tag_sql(code)} FROM planet_osm_line WHERE osm_id = ANY(%(ids)s) "
        "UNION ALL "
        f"SELECT osm_id, {_tag_sql(code)} FROM planet_osm_polygon WHERE osm_id = ANY(%(ids)s)",
        {"ids": ids},
        during="ways' names were read",
        what=f"reading ways' name:{code}",
    )
    for osm_id, name in rows:
        name = (name or "").strip()
        if name and out.get(int(osm_id)) is None:
            out[int(osm_id)] = name
    return out


def translated_share(engine: Drawing, view: View) -> float | None:
    """The share of the named objects in ``view`` that have a name in the engine's language
    (``engine.language``, set by ``MapEngine.in_language``), rounded to 4 places; None where
    the view meets no named object.

    Counted: every distinct OSM object (node, way or relation: one per table and osm id) of
    ``planet_osm_point``, ``planet_osm_line`` and ``planet_osm_polygon`` whose ``name`` is
    not empty and whose geometry meets the view's bounds (``view.bounds()``); of those, the
    translated ones have a non-empty ``name:<lang>`` tag.  It counts what the data names in
    the view, whether or not the style found room for its label (a measure of how much of
    the map the language can change, not of the labels drawn), boundaries and buildings
    included.  Raises ``CartoqaError`` on a base engine (it has no language)."""
    lang = getattr(engine, "language", None)
    if lang is None:
        raise CartoqaError(
            "translated_share needs an engine with a language: use engine.in_language('de')"
        )
    code = language_code(lang)
    s, w, n, e = view.bounds()
    env = "ST_Transform(ST_MakeEnvelope(%(w)s, %(s)s, %(e)s, %(n)s, 4326), 3857)"
    parts = [
        f"SELECT '{t}' AS t, osm_id, bool_or(COALESCE({_tag_sql(code)}, '') <> '') AS tr "
        f"FROM {t} WHERE way && {env} AND ST_Intersects(way, {env}) "
        "AND COALESCE(name, '') <> '' GROUP BY osm_id"
        for t in TABLES[:3]
    ]
    rows = query_rows(
        engine.database.connection,
        f"SELECT count(*), count(*) FILTER (WHERE tr) FROM ({' UNION ALL '.join(parts)}) AS o",
        {"s": s, "w": w, "n": n, "e": e},
        during="the view's translated names were counted",
        what=f"counting names with name:{code}",
    )
    total, translated = int(rows[0][0]), int(rows[0][1])
    return round(translated / total, 4) if total else None
