"""The drivable road graph of an extract, for route ground truth (osmnx, from the local file).

The graph is osmnx's: a directed ``MultiDiGraph`` (one-way streets have one
edge, two-way streets one each way; roundabouts are one-way), simplified,
but keeping every node where a road's name changes, so that each edge
carries one name.  Each edge gets ``road``: the name normalised (NFC,
spaces collapsed), or None for an unnamed road; ``unnamed`` says which.

Ways are kept the way osmnx's "drive" network keeps them (no footways,
cycleways, service roads, private or motor-vehicle-free roads),
from the same (cleaned) file the map is rendered from, so roads and map
agree.  The graph is cached per extract hash.
"""

from __future__ import annotations

import logging
import pickle
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError
from cartoqa.settings import cache_dir

from .extracts import Extract, load_extract

__all__ = ["DRIVABLE", "RoadGraph", "RoadGraphError", "load_road_graph", "normalise_road"]

log = logging.getLogger(__name__)

_VERSION = 3  # 3: built from the repaired copy of extracts osm2pgsql refuses (renumbered ids)
#: highway values of drivable roads: osmnx's "drive" network, as an allowlist, so that odd
#: tags (highway=trail in the Helsinki extract) stay out; service roads stay out as in osmnx
DRIVABLE = frozenset(
    [
        "motorway",
        "motorway_link",
        "trunk",
        "trunk_link",
        "primary",
        "primary_link",
        "secondary",
        "secondary_link",
        "tertiary",
        "tertiary_link",
        "unclassified",
        "residential",
        "living_street",
        "road",
    ]
)


class RoadGraphError(CartoqaError):
    """An extract with no drivable roads, or a graph that cannot be built."""


def normalise_road(name: Any) -> str | None:
    """A road name as answers are compared: NFC, spaces collapsed, stripped; None if empty.

    osmnx gives a list when it merged ways with different names; such an edge
    has no single name and counts as unnamed here.
    """
    if isinstance(name, list):
        names = {normalise_road(n) for n in name} - {None}
        return names.pop() if len(names) == 1 else None
    if not isinstance(name, str):
        return None
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFC", name)).strip()
    return text or None


def _drivable(tags: Any) -> bool:
    hw = tags.get("highway")
    return bool(
        hw in DRIVABLE
        and tags.get("area") != "yes"
        and tags.get("motor_vehicle") != "no"
        and tags.get("motorcar") != "no"
        and tags.get("access") not in ("private", "no")
    )


def _write_roads(src: Path, out: Path) -> int:
    """Copy the drivable ways of ``src`` and their nodes to an OSM XML file; returns the count."""
    import osmium

    ways: set[int] = set()
    nodes: set[int] = set()
    way: Any
    for way in osmium.FileProcessor(str(src), osmium.osm.WAY):
        if _drivable(way.tags):
            ways.add(way.id)
            nodes.update(n.ref for n in way.nodes)
    tmp = out.with_suffix(".tmp.osm")
    writer = osmium.SimpleWriter(str(tmp), overwrite=True)
    obj: Any
    try:
        for obj in osmium.FileProcessor(str(src), osmium.osm.NODE | osmium.osm.WAY):
            if obj.is_node() and obj.id in nodes:
                writer.add_node(obj)
            elif obj.is_way() and obj.id in ways:
                writer.add_way(obj)
    finally:
        writer.close()
    tmp.replace(out)
    return len(ways)


@dataclass
class RoadGraph:
    """An extract's drivable roads."""

    graph: Any
    """The osmnx MultiDiGraph (x = lon, y = lat on nodes; road, length, geometry on edges)."""
    extract_sha256: str

    def node_latlon(self, node: int) -> tuple[float, float]:
        d = self.graph.nodes[node]
        return float(d["y"]), float(d["x"])

    def roads_at(self, node: int) -> set[str]:
        """Names of the roads that meet at a node (unnamed roads left out)."""
        g = self.graph
        names = {d["road"] for _, _, d in g.out_edges(node, data=True)}
        names |= {d["road"] for _, _, d in g.in_edges(node, data=True)}
        return names - {None}

    def unnamed_share(self) -> float:
        edges = list(self.graph.edges(data="unnamed"))
        return sum(1 for *_, u in edges if u) / max(1, len(edges))


def load_road_graph(
    extract: Extract | str | Path | None = None, *, cache: Path | None = None
) -> RoadGraph:
    """The road graph of an extract (the embedded default when None), built once and cached."""
    import osmnx as ox

    ex = extract if isinstance(extract, Extract) else load_extract(extract, cache=cache)
    folder = (cache or cache_dir()) / "roads" / ex.sha256[:16]
    folder.mkdir(parents=True, exist_ok=True)
    cached = folder / f"graph-v{_VERSION}.pickle"
    if cached.is_file():
        with cached.open("rb") as f:
            return RoadGraph(pickle.load(f), ex.sha256)
    xml = folder / "roads.osm"
    if _write_roads(ex.path, xml) == 0:
        raise RoadGraphError(
            f"{ex.source} has no drivable roads (highway=residential, primary, ...); "
            "navigation tasks need a town or city extract"
        )
    try:
        graph = ox.graph_from_xml(xml, simplify=False, retain_all=True)
        # keep the nodes where a road's name changes: every edge then has one name
        graph = ox.simplify_graph(graph, edge_attrs_differ=["name"])
    except Exception as exc:  # osmnx raises plain errors on odd input
        raise RoadGraphError(f"osmnx could not build a graph from {ex.source}: {exc}") from None
    for _, _, d in graph.edges(data=True):
        d["road"] = normalise_road(d.get("name"))
        d["unnamed"] = d["road"] is None
    tmp = cached.with_suffix(".tmp")
    with tmp.open("wb") as f:
        pickle.dump(graph, f, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(cached)
    log.info("%s: road graph with %d nodes, %d edges", ex.name, len(graph), graph.number_of_edges())
    return RoadGraph(graph, ex.sha256)
