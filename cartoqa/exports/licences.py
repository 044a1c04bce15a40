"""What a task's samples are made from, and under which licences: read from the samples'
provenance (``Provenance.source``, ``extract_hash``) and the manifest's credits, never from
the task's name.

- A sample rendered from an OpenStreetMap extract (``extract_hash`` set), or whose source
  names OpenStreetMap data, is ODbL.
- Other sources are known by name or by the licence they state: the openstreetmap-carto
  style (its symbols, colours and patterns: CC0), the iD tagging schema (feature names:
  ISC), GeoNames (CC BY 4.0); a source that writes "CC0", "ISC", "CC BY 4.0" or "ODbL"
  gets that licence.
- A map task whose samples record neither an extract nor a source is taken to be rendered
  from OpenStreetMap data (what every map task but a legend is); any other task with no
  recognised source is "unknown".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cartoqa.records import Sample

__all__ = ["LICENCE_NOTES", "LICENCE_ORDER", "Sources", "licences_in", "sources_of"]

#: Hub licence identifier -> what it is, for cards and READMEs
LICENCE_NOTES = {
    "odbl": "Open Database License (ODbL 1.0, https://www.openstreetmap.org/copyright): "
    "OpenStreetMap data, and the map images and answers derived from it",
    "cc0-1.0": "CC0 1.0 (https://creativecommons.org/publicdomain/zero/1.0/): the "
    "openstreetmap-carto style (its symbols, colours and line and area patterns)",
    "isc": "ISC licence: feature names from the iD tagging schema "
    "(https://github.com/openstreetmap/id-tagging-schema)",
    "cc-by-4.0": "CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/): questions and "
    "answers derived from GeoNames city data, credit geonames.org",
    "unknown": "the samples name no data source in their provenance; the licence is for "
    "the dataset's maker to state",
}
LICENCE_ORDER = tuple(LICENCE_NOTES)

#: (how a source is named or what licence it states, its licence); first the sources'
#: names, then licence names as sources write them
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"openstreetmap-carto", re.IGNORECASE), "cc0-1.0"),
    (re.compile(r"\bid[ -]tagging[ -]schema\b", re.IGNORECASE), "isc"),
    (re.compile(r"geonames", re.IGNORECASE), "cc-by-4.0"),
    (re.compile(r"openstreetmap(?!-carto)", re.IGNORECASE), "odbl"),
    (re.compile(r"\bodbl\b", re.IGNORECASE), "odbl"),
    (re.compile(r"\bcc0\b", re.IGNORECASE), "cc0-1.0"),
    (re.compile(r"\bISC\b"), "isc"),
    (re.compile(r"\bcc[ -]by[ -]4\.0\b", re.IGNORECASE), "cc-by-4.0"),
)


def licences_in(text: str) -> set[str]:
    """The licences a source's text names or implies ("GeoNames cities15000, CC BY 4.0" ->
    {"cc-by-4.0"})."""
    return {licence for pattern, licence in _PATTERNS if pattern.search(text)}


@dataclass(frozen=True)
class Sources:
    """What one task's samples are made from."""

    licences: tuple[str, ...]
    """Hub identifiers, in ``LICENCE_ORDER`` ("odbl", "cc0-1.0", "isc", ...)."""
    sources: tuple[str, ...]
    """The samples' provenance sources, as written."""
    osm_rendered: bool
    """Whether its images are rendered from OpenStreetMap data (an extract, or a source
    naming OpenStreetMap data)."""


def sources_of(samples: Sequence[Sample], family: str) -> Sources:
    """The sources and licences of one task's ``samples`` (module docstring); ``family``
    is its spec's ("map", "gps")."""
    sources = tuple(sorted({s.provenance.source for s in samples if s.provenance.source}))
    found: set[str] = set()
    for source in sources:
        found |= licences_in(source)
    extract = any(s.provenance.extract_hash for s in samples)
    if extract or (family == "map" and not sources):
        found.add("odbl")
    has_images = any(s.prompt.images for s in samples)
    osm = "odbl" in found and has_images
    if not found:
        found.add("unknown")
    return Sources(
        licences=tuple(x for x in LICENCE_ORDER if x in found),
        sources=sources,
        osm_rendered=osm,
    )
