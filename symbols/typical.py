"""Which member names a look-alike class: the most typical one (issue 26, finding 5).

    key = typical_member(candidates, legend_entries)      # "area:landuse=grass"

A class of identical renders is one feature to a reader, asked once and
offered once, under one name. Naming it after its alphabetically first tag
asked a plain grass fill as "Driving Range" and the cupcake icon as
"Chocolate Store". The rule, in order:

1. only members the tagging schema names (a bare ``key=value`` would stand
   out among names);
2. of those, the ones whose image shows the class's look best
   (``symbols.lookalike.class_medoids``: a plain grass fill, not the garden
   whose faint dots are near enough to join it);
3. of those, the tag mappers use most: ``TAG_USES``, the number of OSM
   objects with each tag in the six real extracts of
   ``shared/data/osm`` (taginfo's world-wide counts are not reachable
   offline; ``count_tag_uses`` recounts them);
4. then the tag, alphabetically.

So the grass fill is "Grass" (356 uses against meadow's 30 and the golf
parts' none), the sports-pitch fill "Sport Pitch" (368 against the putting
green's 1), the cupcake icon "Candy Store" (confectionery 16, chocolate 7,
pastry 3).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from .catalogue import CatalogueEntry
from .tag_uses import EXTRACTS, TAG_USES

__all__ = ["EXTRACTS", "TAG_USES", "count_tag_uses", "typical_member"]


def typical_member(
    candidates: Iterable[str],
    entries: Mapping[str, CatalogueEntry],
    uses: Mapping[str, int] = TAG_USES,
) -> str | None:
    """The member ("category:key") of ``candidates`` (a class's medoids, or all of it) that
    names the class by the rule above; None when the schema names none of them."""
    named = [k for k in candidates if k in entries and entries[k].name_source != "tag"]
    if not named:
        return None
    return min(named, key=lambda k: (-uses.get(entries[k].key, 0), k))


def count_tag_uses(paths: Iterable[Path], keys: Iterable[str]) -> dict[str, int]:
    """ "key=value" -> the number of OSM objects (nodes, ways, relations) carrying that tag
    in the extracts at ``paths``, for the OSM ``keys`` given."""
    import osmium

    wanted = set(keys)
    counts: Counter[str] = Counter()
    kinds = osmium.osm.NODE | osmium.osm.WAY | osmium.osm.RELATION
    for path in paths:
        objects = osmium.FileProcessor(str(path), kinds).with_filter(
            osmium.filter.KeyFilter(*sorted(wanted))
        )
        for obj in objects:
            for tag in obj.tags:
                if tag.k in wanted:
                    counts[f"{tag.k}={tag.v}"] += 1
    return dict(sorted(counts.items()))
