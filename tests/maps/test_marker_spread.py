"""Variety of navigation samples (issue 26, finding 10): hand-made graphs, real sampler.

- A marker pair asked both ways is one pair: the same two markers joined by the same blue
  path make the same RLE picture twice.
- Samples spread over the extract: in Skøyen 10 of 18 samples stood on one 400 m street, the
  one with the most nodes, because markers were drawn from the nodes alike.
"""

from __future__ import annotations

from collections import Counter

from cartoqa.tasks.navigation import attempt_rle
from cartoqa.tasks.views import Reject, ViewSampler
from maps.roads import RoadGraph

from .road_fixtures import graph, ll, road

BIG = (*ll(-20, -20), *ll(50, 40))  # an extract box around every fixture here


def attempts(sampler: ViewSampler, n: int, *, want: int | None = None):
    plans, why = [], Counter()
    for _ in range(n):
        try:
            plans.append(attempt_rle(sampler, "simple"))
        except Reject as r:
            why[r.reason] += 1
        if want is not None and len(plans) == want:
            break
    return plans, why


def test_a_pair_asked_both_ways_is_one_pair():
    """One straight 300 m road: the only pair of markers is its two ends, either way round."""
    g = graph({1: (0, 0), 2: (3, 0)})
    road(g, "Long Road", [1, 2])
    sampler = ViewSampler(RoadGraph(g, "pair"), None, BIG, seed=3)
    plans, why = attempts(sampler, 200)
    assert len(plans) == 1, [p.view.markers for p in plans]
    assert why["duplicate"] > 0
    # with repeats allowed, both ways come back
    again = ViewSampler(RoadGraph(g, "pair"), None, BIG, seed=3, repeat_places=True)
    plans, _ = attempts(again, 200)
    ends = {(p.view.markers[0].lon, p.view.markers[1].lon) for p in plans}
    assert len(ends) == 2


def dense_street_town():
    """A 3 km x 2 km grid of streets 200 m apart (16 x 11 junctions); on row 5 (y = 1 km) the
    400 m between x = 1.0 and 1.4 km ("Dense Street") has a node every 2 m: 200 nodes, more
    than the rest of the town's 176."""
    nodes: dict[int, tuple[float, float]] = {}
    ids: dict[tuple[int, int], int] = {}
    for j in range(11):
        for i in range(16):
            ids[i, j] = len(nodes) + 1
            nodes[ids[i, j]] = (2.0 * i, 2.0 * j)
    dense = []
    for k in range(1, 200):
        x = 10 + k * 0.02
        if abs(x - 12) < 1e-9:
            continue
        n = len(nodes) + 1
        nodes[n] = (x, 10.0)
        dense.append((x, n))
    g = graph(nodes)
    for j in range(11):
        row = [ids[i, j] for i in range(16)]
        if j == 5:
            row = sorted([(2.0 * i, ids[i, 5]) for i in range(16)] + dense, key=lambda t: t[0])
            row = [n for _, n in row]
        road(g, f"Row {j}", row)
    for i in range(16):
        road(g, f"Column {i}", [ids[i, j] for j in range(11)])
    on_dense = {n for _, n in dense} | {ids[5, 5], ids[6, 5], ids[7, 5]}
    return g, on_dense


def test_samples_spread_over_the_town_not_along_its_densest_street():
    g, on_dense = dense_street_town()
    assert len(on_dense) > g.number_of_nodes() / 2
    sampler = ViewSampler(RoadGraph(g, "dense"), None, BIG, seed=7)
    plans, _ = attempts(sampler, 2000, want=18)
    assert len(plans) == 18
    origins = []
    for p in plans:
        blue = p.view.markers[0]
        origins.append(
            min(
                g.nodes,
                key=lambda n: abs(g.nodes[n]["y"] - blue.lat) + abs(g.nodes[n]["x"] - blue.lon),
            )
        )
    dense = sum(o in on_dense for o in origins)
    assert dense <= 3, f"{dense} of 18 samples start on Dense Street"
    # and they do not pile up anywhere else: no 250 m cell holds more than 2 of them
    assert max(sampler.cell_uses["rle"].values()) <= 2
