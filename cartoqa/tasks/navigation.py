"""The navigation tasks of CartoMapQA: SRN, RLE and MML, sampled from an extract's roads.

Each ``attempt_*`` method makes one candidate (a view and its questions) or
raises ``Reject`` with a reason the build counts.  Nothing here renders:
the build renders the accepted views in one batch.

- **SRN** (zoom 17-19): blue origin and red destination on road-graph nodes;
  ground truth the shortest drivable route as steps (``maps.routes``), with
  the map's road network for connectivity scoring.  Every road of the
  route must be named and its name drawn whole in the view.
- **RLE** (zoom 15-19, those at which a view fits in the extract): two
  blue markers joined by a blue path along the shortest route between two
  nodes; ground truth its length along the geometry, asked in metres and in
  feet (two questions, one image).
  *simple*: at most 1 turn and at most 500 px of path; *complex*: at least 3
  turns and at least 400 px.  Turns are the vertices of the path simplified
  (Ramer-Douglas-Peucker, 8 px at the map's zoom) where the heading changes
  by 40 degrees or more.
- **MML** (zoom 17-19): a blue or red marker (alternating) on a node where
  exactly two named roads meet, with no unnamed road and at least three
  arms; both names drawn whole in the view, clear of the marker.

An extract whose drivable roads carry no names cannot make SRN or MML
questions: every candidate is rejected as ``no_named_roads`` (and the build
says no question of the task could be made); RLE needs no names.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cartoqa.geodesy import initial_bearing_deg, path_length_m, simplify_rdp, turn_action
from cartoqa.records import GroundTruth, NumberTruth, RoadPairTruth, RouteTruth
from maps import HEIGHT_PX, WIDTH_PX, Marker, View
from maps.labels import RoadLabels
from maps.projection import metres_per_pixel, world_pixel
from maps.roads import RoadGraph
from maps.routes import RouteError, road_network, shortest_route

from ._views import fit_center, view_bounds, view_pixels

__all__ = ["NAVIGATION_TASKS", "NavigationSampler", "Plan", "Question", "Reject"]

NAVIGATION_TASKS = ("srn", "rle", "mml")
FEET_PER_M = 1 / 0.3048
#: the tolerance, in pixels at the map's zoom, of the simplification that counts RLE turns
RDP_PX = 8

SRN_PROMPT = (
    "The map shows a blue marker (the origin) and a red marker (the destination). You are "
    "driving a car at the blue marker, facing the top of the map. Give the shortest route "
    "you can legally drive (respect one-way streets) to the red marker, as a list:\n"
    "[blue, <action_1>, <road_1>, <action_2>, <road_2>, ..., <action_n>, <road_n>, red]\n"
    'where each action is exactly one of "continue straight", "make a U-turn and continue '
    'straight", "turn left", "turn right", and each road is the road\'s name as written on '
    "the map. Answer with the list only."
)
RLE_PROMPT = (
    "The blue path on the map joins the two blue markers along the roads. Using the scale bar "
    "at the bottom left of the map, estimate the real-world length of the blue path in {unit}. "
    'On the first line write only the number followed by "{abbr}", then explain briefly.'
)
MML_PROMPT = (
    "The {colour} marker stands on a road intersection. Which two roads meet there? Answer "
    'with the names as written on the map, as JSON: {{"road_1": "...", "road_2": "..."}}'
)


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


@dataclass
class Plan:
    """A map to render and the questions it carries."""

    task: str
    view: View
    questions: list[Question] = field(default_factory=list)


class NavigationSampler:
    """Draws navigation candidates from one extract's road graph, with a seeded generator."""

    def __init__(self, roads: RoadGraph, labels: RoadLabels, extract_bounds: tuple, seed: int):
        self.roads = roads
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
        self.named_starts = named
        self.used: set[tuple[str, int, int]] = set()
        self.mml_nodes = [n for n in self.nodes if self._two_road_junction(n)]
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
        self._count = {t: 0 for t in NAVIGATION_TASKS}

    # ------------------------------------------------------------ helpers

    def _two_road_junction(self, node: int) -> bool:
        g = self.g
        edges = list(g.out_edges(node, data=True)) + list(g.in_edges(node, data=True))
        if any(d["road"] is None for *_, d in edges):
            return False
        arms = set(g.successors(node)) | set(g.predecessors(node))
        return len(arms) >= 3 and len({d["road"] for *_, d in edges}) == 2

    def _partner(self, origin: int, zoom: int, lo_px: float, hi_px: float) -> int:
        """A random node between lo_px and hi_px from ``origin`` at ``zoom``."""
        i = self.nodes.index(origin)
        x, y = self._px(zoom)
        d = np.hypot(x - x[i], y - y[i])
        ok = np.flatnonzero((d >= lo_px) & (d <= hi_px))
        if ok.size == 0:
            raise Reject("no_partner_in_range")
        return self.nodes[int(self.rng.choice(ok))]

    def _px(self, zoom: int) -> tuple[np.ndarray, np.ndarray]:
        """World pixels of every node at ``zoom``."""
        from cartoqa.geodesy import to_web_mercator
        from maps.projection import HALF_WORLD_M

        x, y = to_web_mercator(self.lat, self.lon)
        res = metres_per_pixel(zoom)
        return (x + HALF_WORLD_M) / res, (HALF_WORLD_M - y) / res

    def _latlon(self, node: int) -> tuple[float, float]:
        return self.roads.node_latlon(node)

    def _zoom(self, allowed: tuple[int, ...]) -> int:
        zooms = [z for z in allowed if z in self.zooms]
        if not zooms:
            raise Reject("extract_smaller_than_the_view")
        return self.rng.choice(zooms)

    def _view(self, task: str, points: list, zoom: int, markers: list, paths=()) -> View:
        center = fit_center(points, zoom, self.rng, extract_bounds=self.bounds)
        if center is None:
            raise Reject("does_not_fit_the_view")
        self._count[task] += 1
        return View.make(
            center, zoom, markers=markers, paths=list(paths), id=f"{task}-{self._count[task]:04d}"
        )

    def _names_drawn(self, view: View, names: set[str]) -> None:
        shown = self.labels.names(
            view, view_pixels(view.center, view.zoom, [(m.lat, m.lon) for m in view.markers])
        )
        if not names <= shown.visible:
            raise Reject("road_name_not_drawn")

    # ------------------------------------------------------------ SRN

    def attempt_srn(self) -> Plan:
        if not self.named_starts:  # every step of an SRN answer names a road
            raise Reject("no_named_roads")
        zoom = self._zoom((17, 18, 19))
        origin = self.rng.choice(self.named_starts)
        dest = self._partner(origin, zoom, 250, 700)
        if ("srn", origin, dest) in self.used:
            raise Reject("duplicate")
        try:
            route = shortest_route(self.g, origin, dest)
        except RouteError as exc:
            raise Reject(exc.reason) from None
        if len(route.legs) > 8:
            raise Reject("route_too_long")
        a, b = self._latlon(origin), self._latlon(dest)
        view = self._view(
            "srn", route.coords(self.g), zoom, [Marker(*a, "blue"), Marker(*b, "red")]
        )
        self._names_drawn(view, {leg.road for leg in route.legs if leg.road})
        self.used.add(("srn", origin, dest))
        network = road_network(self.g, origin, dest, view_bounds(view.center, zoom))
        truth = RouteTruth(steps=list(route.steps), network=network)
        meta = {
            "zoom": zoom,
            "steps": len(route.legs),
            "length_m": round(route.length_m, 1),
            "difficulty": "short" if len(route.legs) <= 2 else "long",
        }
        return Plan("srn", view, [Question("", SRN_PROMPT, truth, meta)])

    # ------------------------------------------------------------ RLE

    def attempt_rle(self, difficulty: str) -> Plan:
        zoom = self._zoom((15, 16, 17, 18, 19))
        lo, hi = (100, 350) if difficulty == "simple" else (350, 900)
        origin = self.rng.choice(self.nodes)
        dest = self._partner(origin, zoom, lo, hi)
        try:
            route = shortest_route(self.g, origin, dest, require_names=False)
        except RouteError as exc:
            raise Reject(exc.reason) from None
        coords = route.coords(self.g)
        turns, px = path_turns(coords, zoom)
        if difficulty == "simple" and (turns > 1 or px > 500):
            raise Reject("not_simple")
        if difficulty == "complex" and (turns < 3 or px < 400):
            raise Reject("not_complex")
        if ("rle", origin, dest) in self.used:
            raise Reject("duplicate")
        a, b = coords[0], coords[-1]
        view = self._view(
            "rle", coords, zoom, [Marker(*a, "blue"), Marker(*b, "blue")], paths=[coords]
        )
        self.used.add(("rle", origin, dest))
        lats, lons = zip(*coords, strict=True)
        metres = path_length_m(lats, lons)
        feet = metres * FEET_PER_M
        meta = {"zoom": zoom, "difficulty": difficulty, "turns": turns}
        return Plan(
            "rle",
            view,
            [
                Question(
                    "-m",
                    RLE_PROMPT.format(unit="metres", abbr="m"),
                    NumberTruth(
                        value=round(metres, 2), unit="m", equivalents={"ft": round(feet, 2)}
                    ),
                    {**meta, "unit": "m"},
                ),
                Question(
                    "-ft",
                    RLE_PROMPT.format(unit="feet", abbr="ft"),
                    NumberTruth(
                        value=round(feet, 2), unit="ft", equivalents={"m": round(metres, 2)}
                    ),
                    {**meta, "unit": "ft"},
                ),
            ],
        )

    # ------------------------------------------------------------ MML

    def attempt_mml(self, colour: str) -> Plan:
        if not self.mml_nodes:
            raise Reject("no_two_road_junction" if self.named_starts else "no_named_roads")
        zoom = self._zoom((17, 18, 19))
        node = self.rng.choice(self.mml_nodes)
        if ("mml", node, zoom) in self.used:
            raise Reject("duplicate")
        names = sorted(self.roads.roads_at(node))
        at = self._latlon(node)
        view = self._view("mml", [at], zoom, [Marker(*at, colour)])  # type: ignore[arg-type]
        self._names_drawn(view, set(names))
        self.used.add(("mml", node, zoom))
        truth = RoadPairTruth(road_1=names[0], road_2=names[1])
        return Plan(
            "mml",
            view,
            [
                Question(
                    "", MML_PROMPT.format(colour=colour), truth, {"zoom": zoom, "colour": colour}
                )
            ],
        )


def path_turns(coords: list[tuple[float, float]], zoom: int) -> tuple[int, float]:
    """(turns, length in pixels) of a path drawn at ``zoom``: turns are the vertices kept by
    RDP at ``RDP_PX`` where the heading changes by 40 degrees or more."""
    lats, lons = zip(*coords, strict=True)
    length_px = path_length_m(lats, lons) / (
        metres_per_pixel(zoom) * math.cos(math.radians(lats[0]))
    )
    eps_km = RDP_PX * metres_per_pixel(zoom) * math.cos(math.radians(lats[0])) / 1000
    kept = [coords[i] for i in simplify_rdp(lats, lons, eps_km)]
    turns = 0
    for p, q, r in zip(kept, kept[1:], kept[2:], strict=False):
        h1 = float(initial_bearing_deg(p[0], p[1], q[0], q[1]))
        h2 = float(initial_bearing_deg(q[0], q[1], r[0], r[1]))
        turns += turn_action(h1, h2) != "continue straight"
    return turns, length_px
