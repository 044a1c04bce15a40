"""OSM XML written by the tests, element by element, so that a test can arrange ids and order
(negative ids as JOSM writes them, ways before nodes, a duplicated node) or place streets far
apart (data that covers only part of its bounding box).  Positions are on road_fixtures' 100 m
grid."""

from __future__ import annotations

from .road_fixtures import ll


def osm_grid_xml(
    nx: int,
    ny: int,
    *,
    step: float = 2.0,
    at: tuple[float, float] = (0.0, 0.0),
    first_node: int = 1,
    first_way: int = 1000,
    id_sign: int = 1,
    prefix: str = "",
    version: int | None = 1,
) -> tuple[list[str], list[str]]:
    """The elements of a street grid as OSM XML lines, to be arranged by the test: (node lines,
    way lines).  Junction (i, j) is at grid point ``at + (i, j)·step``; node and way ids count
    up from ``first_node`` / ``first_way``, times ``id_sign`` (-1: ids as JOSM gives new
    objects); streets are residential, named "{prefix}Row j" and "{prefix}Column i";
    ``version=None`` leaves the version out (as JOSM does for new objects)."""
    ids = {(i, j): id_sign * (first_node + i + j * nx) for j in range(ny) for i in range(nx)}
    ver = f' version="{version}"' if version is not None else ""
    nodes = []
    for (i, j), n in ids.items():
        lat, lon = ll(at[0] + i * step, at[1] + j * step)
        nodes.append(f'  <node id="{n}"{ver} lat="{lat:.7f}" lon="{lon:.7f}"/>')
    refs = [[ids[(i, j)] for i in range(nx)] for j in range(ny)]
    refs += [[ids[(i, j)] for j in range(ny)] for i in range(nx)]
    labels = [f"{prefix}Row {j}" for j in range(ny)] + [f"{prefix}Column {i}" for i in range(nx)]
    ways = []
    for k, (way, label) in enumerate(zip(refs, labels, strict=True)):
        ways.append(
            f'  <way id="{id_sign * (first_way + k)}"{ver}>'
            + "".join(f'<nd ref="{r}"/>' for r in way)
            + f'<tag k="highway" v="residential"/><tag k="name" v="{label}"/></way>'
        )
    return nodes, ways


def osm_relation_xml(rid: int, ways: list[int], *, name: str = "Grid route") -> str:
    """A route relation over the given ways, as one OSM XML line."""
    members = "".join(f'<member type="way" ref="{w}" role=""/>' for w in ways)
    return (
        f'  <relation id="{rid}" version="1">{members}<tag k="type" v="route"/>'
        f'<tag k="route" v="bus"/><tag k="name" v="{name}"/></relation>'
    )


def write_osm(path, lines, *, bounds: tuple[float, float, float, float] | None = None) -> None:
    """An OSM XML file of the given element lines, in the given order; ``bounds`` (south,
    west, north, east) writes a <bounds> element, which osmium reads as the header box."""
    head = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="cartoqa">']
    if bounds is not None:
        s, w, n, e = bounds
        head.append(f'  <bounds minlat="{s}" minlon="{w}" maxlat="{n}" maxlon="{e}"/>')
    path.write_text("\n".join([*head, *lines, "</osm>"]) + "\n")
