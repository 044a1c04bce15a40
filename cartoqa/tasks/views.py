"""The shared map-view code of the map tasks: ``ViewSampler``, what every map task's
generator is given, and how a view is placed.

A map task's generator is ``(sampler, i) -> Plan``: it draws a view and markers
with the sampler (its seeded ``rng``, the extract's road graph and labels, the
questions' wording in ``prompts``) and returns a ``Plan`` (a ``maps.View`` to
render and its ``Question``s), or raises ``Reject`` with a reason the build
counts.  Nothing here renders: the build renders the accepted views in one
batch.  The generators are the tasks' own modules' (``cartoqa.tasks.navigation``:
SRN, RLE, MML; ``cartoqa.tasks.poi``: STMF and MTMF).

Every view keeps markers and paths ``MARGIN_PX`` from the image's edges, stays
inside the extract, and has at most ``MAX_BLANK_SHARE`` of its area outside the
extract's data (``view_not_covered``); a dead end the extract's cut made
(``RoadGraph.clip_end``) is never a marker; a task's first marker comes from a
``SPREAD_CELL_M`` cell weighted against the cells already used.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cartoqa.records import GroundTruth, LabelBox
from maps import HEIGHT_PX, WIDTH_PX, View
from maps.drawn_roads import DrawnRoads
from maps.labels import RoadLabels, VisibleWays
from maps.projection import metres_per_pixel, pixel_box, pixel_to_lat_lon, world_pixel
from maps.roads import RoadGraph

from .templates import PromptSet, default_prompts

__all__ = [
    "MARGIN_PX",
    "MAX_BLANK_SHARE",
    "SPREAD_CELL_M",
    "Plan",
    "Question",
    "Reject",
    "ViewSampler",
    "edge_ways",
    "fit_center",
    "labels_drawn",
    "view_bounds",
    "view_pixels",
]

#: the least distance from a marker or path to the image's edge (it also keeps them clear of
#: the zoom buttons, the scale bar and the attribution)
MARGIN_PX = 80
#: the largest share of a view that may lie outside the extract's data
MAX_BLANK_SHARE = 0.10
#: the side (metres on the ground) of the cells over which each task's markers are spread: a
#: candidate's first marker is drawn from a cell chosen with weight 1 / (1 + uses)², not from
#: the extract's nodes alike (a street with many nodes drew most samples: issue 26, Skøyen)
SPREAD_CELL_M = 250.0


class Reject(Exception):  # noqa: N818 - a verdict, not an error
    """A candidate that cannot make a fair question; ``reason`` is counted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Question:
    """One question on a planned map."""

    suffix: str
    """Appended to the map's id to make the sample id ("" or "-m", "-ft")."""
    text: str
    truth: GroundTruth
    metadata: dict[str, Any]
    task: str = ""
    """The task the question belongs to, where a plan carries several tasks' questions (tasks
    that share views: ``TaskSpec.views``); "" for the plan's own task."""


@dataclass
class Plan:
    """A map to render and the questions it carries."""

    task: str
    view: View
    questions: list[Question] = field(default_factory=list)
    scene: dict[str, Any] = field(default_factory=dict)
    """What the generator saw of the view that its task's ``TaskSpec.describe`` writes out
    for the ``text`` variant (the map-feature tasks: the features drawn); JSON-able, never
    part of a sample unless a variant asks for it."""


class ViewSampler:
    """Draws map views and their markers from one extract's road graph, with a seeded
    generator: what every map task's generator is given (``TaskSpec.generator``)."""

    def __init__(
        self,
        roads: RoadGraph,
        labels: RoadLabels,
        extract_bounds: tuple,
        seed: int,
        *,
        covered_share: Callable[[tuple[float, float, float, float]], float] | None = None,
        repeat_places: bool = False,
        prompts: PromptSet | None = None,
    ):
        self.prompts = prompts or default_prompts()
        """The wording of the questions (``cartoqa.tasks.templates``)."""
        self.roads = roads
        self.covered_share = covered_share
        self.repeat_places = repeat_places
        self._last_blank = 0.0
        self.g = roads.graph
        self.labels = labels
        self.bounds = extract_bounds
        self.rng = random.Random(seed)
        self.nodes = sorted(self.g.nodes)
        self.lat = np.array([self.g.nodes[n]["y"] for n in self.nodes])
        self.lon = np.array([self.g.nodes[n]["x"] for n in self.nodes])
        named = [
            n for n in self.nodes if any(d["road"] for *_, d in self.g.out_edges(n, data=True))
        ]
        #: nodes a marker may stand on: not a dead end the extract's cut made (issue 26)
        self.starts = [n for n in self.nodes if not roads.clip_end(n)]
        self._start_ok = np.array([not roads.clip_end(n) for n in self.nodes], dtype=bool)
        self.named = bool(named)
        self.named_starts = [n for n in named if not roads.clip_end(n)]
        #: (task, node, node) of the pairs asked, the lower node first: a pair asked both ways
        #: is one place (issue 26)
        self.used: set[tuple[str, int, int]] = set()
        x19, y19 = self.world_px(19)
        side = SPREAD_CELL_M / (
            metres_per_pixel(19) * math.cos(math.radians(float(np.median(self.lat))))
        )
        self._cell = {
            n: (int(x // side), int(y // side))
            for n, x, y in zip(self.nodes, x19, y19, strict=True)
        }
        self._drawn_roads: DrawnRoads | None = None
        self.shown: Any = None
        """The labels the last view showed (``RoadLabels.ways``; set by ``labels_drawn``)."""
        self._groups: dict[int, tuple[list[int], dict[tuple[int, int], list[int]]]] = {}
        #: task -> cell -> samples made with their first marker in it
        self.cell_uses: dict[str, dict[tuple[int, int], int]] = defaultdict(
            lambda: defaultdict(int)
        )
        s, w, n, e = extract_bounds
        x0, y0 = world_pixel(n, w, 19)
        x1, y1 = world_pixel(s, e, 19)
        #: zooms at which a whole view fits inside the extract (a view past its edge would be
        #: partly empty): a small extract cannot make zoom 15 or 16 maps
        self.zooms = [
            z
            for z in range(15, 20)
            if (x1 - x0) / 2 ** (19 - z) >= WIDTH_PX and (y1 - y0) / 2 ** (19 - z) >= HEIGHT_PX
        ]
        self._count: dict[str, int] = defaultdict(int)  # views made so far, per task
        self.state: dict[str, Any] = {}
        """What a task's generator keeps between its calls (built once per sampler)."""

    # ------------------------------------------------------------ helpers

    def choose(self, task: str, candidates: list[int]) -> int:
        """A node of ``candidates`` for the task's first marker: a cell of ``SPREAD_CELL_M``
        chosen with weight 1 / (1 + samples already there)², then a node in it."""
        key = id(candidates)
        if key not in self._groups:
            groups: dict[tuple[int, int], list[int]] = defaultdict(list)
            for n in candidates:
                groups[self._cell[n]].append(n)
            self._groups[key] = (candidates, dict(groups))
        by_cell = self._groups[key][1]
        cells = sorted(by_cell)
        uses = self.cell_uses[task]
        weights = [1.0 / (1 + uses.get(c, 0)) ** 2 for c in cells]
        if not cells:  # every node is a dead end the extract's cut made
            raise Reject("only_clipped_dead_ends")
        cell = self.rng.choices(cells, weights=weights)[0]
        return self.rng.choice(by_cell[cell])

    def placed(self, task: str, node: int) -> None:
        """Count a sample made with its first marker on ``node``."""
        self.cell_uses[task][self._cell[node]] += 1

    def pair(self, task: str, a: int, b: int) -> tuple[str, int, int]:
        """The key of a marker pair, whichever way it is asked."""
        return (task, min(a, b), max(a, b))

    def partner(self, origin: int, zoom: int, lo_px: float, hi_px: float) -> int:
        """A random node between lo_px and hi_px from ``origin`` at ``zoom`` (not a dead end
        the extract's cut made)."""
        i = self.nodes.index(origin)
        x, y = self.world_px(zoom)
        d = np.hypot(x - x[i], y - y[i])
        ok = np.flatnonzero((d >= lo_px) & (d <= hi_px) & self._start_ok)
        if ok.size == 0:
            raise Reject("no_partner_in_range")
        return self.nodes[int(self.rng.choice(ok))]

    def world_px(self, zoom: int) -> tuple[np.ndarray, np.ndarray]:
        """World pixels of every node at ``zoom``."""
        from cartoqa.geodesy import to_web_mercator
        from maps.projection import HALF_WORLD_M

        x, y = to_web_mercator(self.lat, self.lon)
        res = metres_per_pixel(zoom)
        return (x + HALF_WORLD_M) / res, (HALF_WORLD_M - y) / res

    def latlon(self, node: int) -> tuple[float, float]:
        """(lat, lon) of a road-graph node."""
        return self.roads.node_latlon(node)

    def pick_zoom(self, allowed: tuple[int, ...]) -> int:
        """One of the ``allowed`` zooms at which a view fits in the extract, at random."""
        zooms = [z for z in allowed if z in self.zooms]
        if not zooms:
            raise Reject("extract_smaller_than_the_view")
        return self.rng.choice(zooms)

    def place_view(self, task: str, points: list, zoom: int, markers: list, paths=()) -> View:
        """A view at ``zoom`` showing ``points`` clear of the edges (``fit_center``), with
        at most ``MAX_BLANK_SHARE`` of it outside the extract's data, its id the task's name
        and its count ("<task>-0003"); ``Reject`` where there is none."""
        center = fit_center(points, zoom, self.rng, extract_bounds=self.bounds)
        if center is None:
            raise Reject("does_not_fit_the_view")
        self._last_blank = 0.0
        bounds = view_bounds(center, zoom)
        # past the data's edge counts as blank whatever the header box says (issue 26)
        blank = 1.0 - self.roads.data_share(bounds, self.bounds)
        if self.covered_share is not None:
            blank = max(blank, 1.0 - self.covered_share(bounds))
        if blank > MAX_BLANK_SHARE:
            raise Reject("view_not_covered")
        self._last_blank = round(max(0.0, blank), 3)
        self._count[task] += 1
        return View.make(
            center, zoom, markers=markers, paths=list(paths), id=f"{task}-{self._count[task]:04d}"
        )

    def drawn_roads(self) -> DrawnRoads:
        """The road graph as the map draws it (made on first use)."""
        if self._drawn_roads is None:
            self._drawn_roads = DrawnRoads(self.g)
        return self._drawn_roads

    def view_meta(self, view: View) -> dict[str, Any]:
        """What an audit needs to redraw the view: its centre, markers and blank share."""
        return {
            "center_lat": round(view.center[0], 7),
            "center_lon": round(view.center[1], 7),
            "markers": ";".join(f"{m.colour}@{m.lat:.7f},{m.lon:.7f}" for m in view.markers),
            "blank_share": self._last_blank,
        }

    def labels_drawn(
        self,
        view: View,
        ways_of: dict[str, set[int]],
        near: dict[str, list[tuple[float, float]]],
    ) -> dict[str, LabelBox]:
        """``labels_drawn`` with the sampler's ``RoadLabels``; the labels the view showed are
        kept in ``shown`` for the checks that follow."""
        found, self.shown = labels_drawn(self.labels, view, ways_of, near)
        return found

    def edge_ways(self, edges: Iterable[tuple[int, int, int]]) -> set[int]:
        """The OSM way ids of road-graph edges (``edge_ways``)."""
        return edge_ways(self.g, edges)


def labels_drawn(
    labels: RoadLabels,
    view: View,
    ways_of: dict[str, set[int]],
    near: dict[str, list[tuple[float, float]]],
) -> tuple[dict[str, LabelBox], VisibleWays]:
    """For each road, a whole label in the view, clear of the markers, carried by one of the
    given OSM ways (the road's ways on the route or at the junction): a sidewalk or a square
    of the same name does not count.  Of several, the one nearest the road's points in
    ``near`` (its leg, or the junction) is kept as the evidence.  Returns those labels and
    every label the view shows (``RoadLabels.ways``); raises ``Reject("road_name_not_drawn")``
    where a road has none."""
    markers_px = view_pixels(view.center, view.zoom, [(m.lat, m.lon) for m in view.markers])
    shown = labels.ways(view, markers_px)
    found: dict[str, LabelBox] = {}
    for road, ways in sorted(ways_of.items()):
        points = near.get(road) or markers_px

        def distance(box: tuple[float, ...], pts: list = points) -> float:
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            return min(math.hypot(cx - x, cy - y) for x, y in pts)

        hits = sorted(
            (distance(tuple(box)), w, tuple(box)) for w in ways for box in shown.visible.get(w, [])
        )
        if not hits:
            raise Reject("road_name_not_drawn")
        _, w, box = hits[0]
        x0, y0, x1, y1 = (round(float(v), 1) for v in box)
        found[road] = LabelBox(road=road, osm_id=w, box=(x0, y0, x1, y1))
    return found, shown


def edge_ways(graph: Any, edges: Iterable[tuple[int, int, int]]) -> set[int]:
    """The OSM way ids of road-graph edges (osmnx keeps a list where it joined ways)."""
    out: set[int] = set()
    for e in edges:
        osmid = graph.edges[e].get("osmid")
        for w in osmid if isinstance(osmid, list) else [osmid]:
            if w is not None:
                out.add(int(w))
    return out


def fit_center(
    points: Sequence[tuple[float, float]],
    zoom: int,
    rng: random.Random,
    *,
    extract_bounds: tuple[float, float, float, float],
    margin_px: int = MARGIN_PX,
) -> tuple[float, float] | None:
    """A centre (lat, lon) at ``zoom`` that shows every point at least ``margin_px`` from the
    edge and keeps the whole view inside the extract; None when there is none.  The points are
    placed at a random spot within what the margin allows (not always in the middle)."""
    px = [world_pixel(lat, lon, zoom) for lat, lon in points]
    xs, ys = [p[0] for p in px], [p[1] for p in px]
    half_w, half_h = WIDTH_PX / 2 - margin_px, HEIGHT_PX / 2 - margin_px
    lo_x, hi_x = max(xs) - half_w, min(xs) + half_w
    lo_y, hi_y = max(ys) - half_h, min(ys) + half_h
    # the view must stay inside the extract
    s, w, n, e = extract_bounds
    ex0, ey0 = world_pixel(n, w, zoom)
    ex1, ey1 = world_pixel(s, e, zoom)
    lo_x, hi_x = max(lo_x, ex0 + WIDTH_PX / 2), min(hi_x, ex1 - WIDTH_PX / 2)
    lo_y, hi_y = max(lo_y, ey0 + HEIGHT_PX / 2), min(hi_y, ey1 - HEIGHT_PX / 2)
    if lo_x > hi_x or lo_y > hi_y:
        return None
    return pixel_to_lat_lon(rng.uniform(lo_x, hi_x), rng.uniform(lo_y, hi_y), zoom)


def view_pixels(
    center: tuple[float, float], zoom: int, points: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Where points fall in the image (Leaflet rounds the map's pixel origin)."""
    x0, y0, _, _ = pixel_box(center, zoom, WIDTH_PX, HEIGHT_PX)
    x0, y0 = round(x0), round(y0)
    out = []
    for lat, lon in points:
        x, y = world_pixel(lat, lon, zoom)
        out.append((x - x0, y - y0))
    return out


def view_bounds(center: tuple[float, float], zoom: int) -> tuple[float, float, float, float]:
    """(south, west, north, east) of the view."""
    x0, y0, x1, y1 = pixel_box(center, zoom, WIDTH_PX, HEIGHT_PX)
    north, west = pixel_to_lat_lon(x0, y0, zoom)
    south, east = pixel_to_lat_lon(x1, y1, zoom)
    return south, west, north, east
