"""The drivable road graph of an extract, for route ground truth (osmnx, from the local file).

The graph is osmnx's: a directed ``MultiDiGraph`` (one-way streets have one
edge, two-way streets one each way; roundabouts are one-way), simplified,
but keeping every node where a road's name changes, so that each edge
carries one name.  Each edge gets ``road``: the name normalised (NFC,
spaces collapsed), or None for an unnamed road; ``unnamed`` says which.

Ways are kept the way osmnx's "drive" network keeps them (no footways,
cycleways, service roads, private or motor-vehicle-free roads),
from the same (cleaned) file the map is rendered from, so roads and map
agree.  The graph is cached per extract hash, with its SHA-256 beside it
(``cartoqa.stores.cache_files``): a pickle cut short, empty or of the wrong
bytes is dropped with a warning and built again (issue 27, item 7).

Where the data ends (issue 26): the graph keeps the convex hull of the
extract's nodes (``RoadGraph.data_share``: the share of a view inside it and
inside the header box), and marks with ``clip_end`` the dead ends that the
extract's cut made rather than the street: a way trimmed at a missing node
(a box-clipped file), or a dead end within ``CLIP_EDGE_M`` of the data's
edge (a polygon cut that kept whole ways).  Such a node is never a marker.
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import secrets
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa.errors import MapDataError
from cartoqa.settings import cache_dir
from cartoqa.stores.cache_files import (
    BadCacheEntry,
    clean_stale_tmp,
    load_cache_file,
    write_cache_file,
)

from .extracts import Extract, load_extract

__all__ = [
    "CLIP_EDGE_M",
    "DRIVABLE",
    "RoadGraph",
    "load_road_graph",
    "normalise_road",
]

log = logging.getLogger(__name__)

_VERSION = 5  # 4: the data's hull and the clip's dead ends (clip_end) kept with the graph;
# 5: written with its SHA-256 beside it
#: a dead end this close to the data's edge (metres) is taken as one the extract's cut made
CLIP_EDGE_M = 30.0
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
    tmp = out.with_name(f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp.osm")
    writer = osmium.SimpleWriter(str(tmp), overwrite=True)
    obj: Any
    try:
        try:
            for obj in osmium.FileProcessor(str(src), osmium.osm.NODE | osmium.osm.WAY):
                if obj.is_node() and obj.id in nodes:
                    writer.add_node(obj)
                elif obj.is_way() and obj.id in ways:
                    writer.add_way(obj)
        finally:
            writer.close()
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)  # (gone once renamed)
    return len(ways)


@dataclass
class RoadGraph:
    """An extract's drivable roads."""

    graph: Any
    """The osmnx MultiDiGraph (x = lon, y = lat on nodes; road, length, geometry on edges)."""
    extract_sha256: str

    @property
    def data_hull(self) -> Any:
        """The convex hull of the extract's nodes (Web Mercator metres; ``maps.coverage``), or
        None for a graph made without one (by hand)."""
        return self.graph.graph.get("data_hull")

    def data_share(
        self,
        bounds: tuple[float, float, float, float],
        box: tuple[float, float, float, float] | None = None,
    ) -> float:
        """The share of a (south, west, north, east) view inside the data's hull (and inside
        ``box``, such as the extract's header box): 1 - the part past the data's edge."""
        from .coverage import hull_share

        return hull_share(bounds, self.data_hull, box)

    def clip_end(self, node: int) -> bool:
        """Whether ``node`` is a dead end the extract's cut made (never a marker)."""
        return bool(self.graph.nodes[node].get("clip_end", False))

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
    clean_stale_tmp(folder, recursive=False)
    cached = folder / f"graph-v{_VERSION}.pickle"
    graph = load_cache_file(cached, _unpickle_graph, what="road graph")
    if graph is not None:
        return RoadGraph(graph, ex.sha256)
    xml = folder / "roads.osm"
    if _write_roads(ex.path, xml) == 0:
        raise MapDataError(
            f"{ex.source} has no drivable roads (highway=residential, primary, ...); "
            "navigation tasks need a town or city extract"
        )
    try:
        graph = ox.graph_from_xml(xml, simplify=False, retain_all=True)
        # keep the nodes where a road's name changes: every edge then has one name
        graph = ox.simplify_graph(graph, edge_attrs_differ=["name"])
    except Exception as exc:  # osmnx raises plain errors on odd input
        raise MapDataError(f"osmnx could not build a graph from {ex.source}: {exc}") from None
    for _, _, d in graph.edges(data=True):
        d["road"] = normalise_road(d.get("name"))
        d["unnamed"] = d["road"] is None
    hull = ex.coverage().hull
    if hull is None:  # a grid cached before hulls were kept
        from .coverage import coverage_of

        hull = coverage_of(ex.path).hull
    graph.graph["data_hull"] = hull
    _mark_clip_ends(graph, hull, _trimmed_ends(ex))
    write_cache_file(cached, pickle.dumps(graph, protocol=pickle.HIGHEST_PROTOCOL))
    log.info("%s: road graph with %d nodes, %d edges", ex.name, len(graph), graph.number_of_edges())
    return RoadGraph(graph, ex.sha256)


def _unpickle_graph(data: bytes) -> Any:
    """The graph a cached pickle holds; ``BadCacheEntry`` when it holds something else."""
    import networkx as nx

    graph = pickle.loads(data)
    if not isinstance(graph, nx.MultiDiGraph):
        raise BadCacheEntry(f"a {type(graph).__name__}, not a road graph")
    return graph


def _trimmed_ends(ex: Extract) -> set[int]:
    """Nodes where cleaning cut a drivable way at a missing node (read from the file as
    given; none when its ids were renumbered, where the hull's edge alone decides)."""
    if not ex.report.ways_with_missing_nodes or ex.report.negative_ids:
        return set()
    import osmium

    from .extracts import _longest_run

    present: set[int] = set()
    obj: Any
    for obj in osmium.FileProcessor(str(ex.source), osmium.osm.NODE):
        present.add(obj.id)
    ends: set[int] = set()
    for obj in osmium.FileProcessor(str(ex.source), osmium.osm.WAY):
        if not _drivable(obj.tags):
            continue
        refs = [n.ref for n in obj.nodes]
        if all(r in present for r in refs):
            continue
        run = _longest_run(refs, present)
        if len(run) < 2:
            continue
        for i in range(len(refs) - len(run) + 1):
            if refs[i : i + len(run)] == run:
                if i > 0:
                    ends.add(run[0])
                if i + len(run) < len(refs):
                    ends.add(run[-1])
                break
    return ends


def _mark_clip_ends(graph: Any, hull: Any, trimmed: set[int]) -> None:
    """Set ``clip_end`` on the dead ends the cut made: trimmed ways' cut ends, and dead ends
    within ``CLIP_EDGE_M`` of the hull's edge."""
    import math

    from shapely.geometry import Point, Polygon

    from .coverage import _mercator

    edge = None
    if hull is not None and len(hull) >= 3:
        edge = Polygon(hull).exterior
    for node, d in graph.nodes(data=True):
        arms = (set(graph.successors(node)) | set(graph.predecessors(node))) - {node}
        if len(arms) != 1:
            continue
        cut = node in trimmed
        if not cut and edge is not None:
            x, y = _mercator(d["y"], d["x"])
            scale = math.cos(math.radians(d["y"]))  # Web Mercator metres -> ground metres
            cut = edge.distance(Point(float(x), float(y))) * scale <= CLIP_EDGE_M
        if cut:
            d["clip_end"] = True
