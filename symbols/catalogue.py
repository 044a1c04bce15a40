"""The map features openstreetmap-carto draws, read from the style's own rules, named by the iD
editor's tagging schema (issue 16, item 1: the catalogue the MFS legend is drawn from).

    entries = build_catalogue()        # [CatalogueEntry(tags={"amenity": "bank"}, ...), ...]

Each entry is one OSM tag (``key=value``) that a rule of the style selects, in
one of three categories by the layers that draw it:

- ``symbol``: point icons (the ``amenity-points`` and ``amenity-low-priority``
  layers' markers with an icon file);
- ``line``: line styles (roads, railways, waterways, barriers, power lines,
  aerialways);
- ``area``: area styles (land cover, water areas, land-use overlays).

Its human-readable name is the iD tagging schema's preset name for exactly
that tag (``@openstreetmap/id-tagging-schema``, pinned in ``package.json``;
its version is recorded), never written by hand; a tag the schema has no
preset for keeps ``key=value`` as its name and says so (``name_source``).
Rendering the legend images, the look-alike classes, the embeddings and the
questions are the next items of issue 16.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from cartoqa.errors import RenderStackError
from cartoqa.settings import assets_dir

__all__ = [
    "CATEGORY_LAYERS",
    "CatalogueEntry",
    "build_catalogue",
    "schema_dir",
]

STYLE_XML = Path("/usr/share/openstreetmap-carto-common/style.xml")
SCHEMA_PACKAGE = "@openstreetmap/id-tagging-schema"
#: category -> the style layers that draw its features
CATEGORY_LAYERS: dict[str, tuple[str, ...]] = {
    "symbol": ("amenity-points", "amenity-low-priority"),
    "line": (
        "roads-fill",
        "bridges",
        "water-lines",
        "barriers",
        "power-line",
        "power-minorline",
        "aerialways",
        "guideways",
        "ferry-routes",
    ),
    "area": ("landcover", "water-areas", "landuse-overlay", "landcover-area-symbols"),
}
#: OSM keys the style's ``feature`` column names as its first word ("landuse_grass")
_KEYS = (
    "aerialway", "aeroway", "amenity", "barrier", "boundary", "building", "craft", "emergency",
    "highway", "historic", "landuse", "leisure", "man_made", "military", "natural", "office",
    "place", "power", "railway", "route", "shop", "tourism", "waterway", "golf", "advertising",
    "diplomatic",
)  # fmt: skip
_FEATURE = re.compile(r"\[feature\] = '([a-z]+(?:_[a-z]+)?)_([a-z0-9_]+)'")
_PLAIN = re.compile(r"\[([a-z_:]+)\] = '([a-z0-9_]+)'")


@dataclass(frozen=True)
class CatalogueEntry:
    """One feature the style draws: an OSM tag, its key class, category and name."""

    tags: dict[str, str]
    """The one OSM tag that selects it ({"amenity": "bank"})."""
    key_class: str
    """The tag's key: the OSM class the paper's distractor rule groups by."""
    category: str
    """"symbol", "line" or "area"."""
    name: str
    """The iD preset's English name ("Bank"), or "key=value" where it has none."""
    name_source: str
    """"id-tagging-schema" or "tag" (no preset for the tag)."""
    layers: tuple[str, ...] = field(default_factory=tuple)
    """The style layers that draw it."""
    icons: tuple[str, ...] = field(default_factory=tuple)
    """Icon files (symbols only)."""
    terms: tuple[str, ...] = field(default_factory=tuple)
    """The preset's English aliases and search terms ("Thrift Shop", "resale"): what tells
    two names that mean one thing (``symbols.questions``)."""

    @property
    def key(self) -> str:
        """ "amenity=bank": the entry's identity."""
        (k, v), *_ = self.tags.items()
        return f"{k}={v}"


def schema_dir(folder: Path | None = None) -> Path:
    """The installed tagging schema's folder (in the map assets' node_modules)."""
    base = folder or assets_dir()
    path = base / SCHEMA_PACKAGE
    if not (path / "dist" / "presets.json").is_file():
        raise RenderStackError(
            f"the iD tagging schema is not at {path}: run 'npm ci' in the cartoqa checkout "
            f"(package.json pins {SCHEMA_PACKAGE}), or set CARTOQA_ASSETS to a node_modules "
            "folder that has it"
        )
    return path


#: category -> the iD geometries whose preset names it, in order of preference
GEOMETRIES = {
    "symbol": ("point", "vertex", "area", "line"),
    "line": ("line", "area", "point", "vertex"),
    "area": ("area", "line", "point", "vertex"),
}

_Named = tuple[str, tuple[str, ...]]
"""(English preset name, its aliases and search terms)."""


@lru_cache(maxsize=4)
def _schema(path: Path) -> tuple[str, dict[tuple[str, str], dict[str, _Named]]]:
    """(version, (key, value) -> geometry -> (English name, aliases and search terms)) for
    presets of exactly one tag: ``highway=pedestrian`` is "Pedestrian Street" as a line and
    "Pedestrian Area" as an area."""
    version = json.loads((path / "package.json").read_text(encoding="utf-8"))["version"]
    presets = json.loads((path / "dist" / "presets.json").read_text(encoding="utf-8"))
    names = json.loads((path / "dist" / "translations" / "en.json").read_text(encoding="utf-8"))
    english = names["en"]["presets"]["presets"]
    out: dict[tuple[str, str], dict[str, _Named]] = {}
    # searchable presets first; a hidden one (iD keeps them for tags it no longer offers,
    # "School Grounds", "Bus Stop") names a tag no searchable preset does
    for searchable in (True, False):
        for pid, preset in sorted(presets.items()):
            tags = preset.get("tags") or {}
            if len(tags) != 1 or pid.startswith("@"):
                continue
            if (preset.get("searchable") is not False) != searchable:
                continue
            (k, v), *_ = tags.items()
            words = english.get(pid) or {}
            name = words.get("name")
            if name and v != "*":
                terms = tuple(str(t) for t in [*words.get("aliases", []), *words.get("terms", [])])
                by_geometry = out.setdefault((k, v), {})
                for geometry in preset.get("geometry") or ["point"]:
                    by_geometry.setdefault(geometry, (name, terms))
    return version, out


def _named(names: dict[str, _Named], category: str) -> _Named:
    """The name of the preset for the category's geometry, else of the nearest one."""
    for geometry in GEOMETRIES[category]:
        if geometry in names:
            return names[geometry]
    return ("", ())


def _rules(style: Path) -> list[tuple[str, str, list[str]]]:
    """(layer, filter text, icon files) of every rule the style draws with."""
    if not style.is_file():
        raise RenderStackError(
            f"{style} is not installed: bash scripts/setup.sh main installs openstreetmap-carto"
        )
    root = ET.parse(style).getroot()
    layers: dict[str, list[str]] = {}
    for el in root.findall("Layer"):
        for name in el.findall("StyleName"):
            layers.setdefault(name.text or "", []).append(el.get("name") or "")
    out: list[tuple[str, str, list[str]]] = []
    for st in root.findall("Style"):
        for rule in st.findall("Rule"):
            f = rule.find("Filter")
            files = [c.get("file", "") for c in rule if c.get("file")]
            for layer_name in layers.get(st.get("name") or "", []):
                out.append((layer_name, f.text if f is not None and f.text else "", files))
    return out


def _tags_of(filter_text: str) -> list[tuple[str, str]]:
    """The (key, value) tags a rule's filter selects."""
    found = []
    for prefix, value in _FEATURE.findall(filter_text):
        key = prefix if prefix in _KEYS else prefix.split("_")[0]
        if key not in _KEYS:
            continue
        if prefix not in _KEYS and "_" in prefix:  # man_made_tower: key man_made
            value = f"{prefix.split('_', 1)[1]}_{value}"
        found.append((key, value))
    if "[feature] = 'shop'" in filter_text:
        found += [("shop", v) for k, v in _PLAIN.findall(filter_text) if k == "shop"]
    for k, v in _PLAIN.findall(filter_text):
        if k in _KEYS and k != "shop":
            found.append((k, v))
    return found


def build_catalogue(
    *, style: Path = STYLE_XML, assets: Path | None = None
) -> tuple[list[CatalogueEntry], str]:
    """The catalogue (sorted by category, then tag) and the tagging schema's version."""
    version, names = _schema(schema_dir(assets))
    by_layer = {layer: cat for cat, layers in CATEGORY_LAYERS.items() for layer in layers}
    seen: dict[tuple[str, tuple[str, str]], dict] = {}
    for layer, text, files in _rules(style):
        category = by_layer.get(layer)
        if category is None:
            continue
        if category == "symbol" and not any(f.endswith(".svg") for f in files):
            continue  # a dot or a label, not an icon
        for tag in _tags_of(text):
            entry = seen.setdefault((category, tag), {"layers": set(), "icons": set()})
            entry["layers"].add(layer)
            entry["icons"].update(f for f in files if f.endswith(".svg"))
    out = []
    for (category, (k, v)), got in sorted(seen.items()):
        name, terms = _named(names.get((k, v), {}), category)
        out.append(
            CatalogueEntry(
                tags={k: v},
                key_class=k,
                category=category,
                name=name or f"{k}={v}",
                name_source="id-tagging-schema" if name else "tag",
                layers=tuple(sorted(got["layers"])),
                icons=tuple(sorted(got["icons"])),
                terms=terms,
            )
        )
    return out, version
