"""The map-feature views written out as text: the ``text`` and ``image+text`` variants of STMF
(presence, count, names) and MTMF.

``feature_scene`` records, when a view is planned (``cartoqa.tasks.poi``), every feature of
the 22 types the view draws, from the same drawn features its truths are computed from, as
``Plan.scene``; ``describe`` writes that scene out.  It lists *all* the view's features,
whatever type the question asks of (listing only that type would give the answer away).

The scene (JSON-able)::

    {"width": 1366, "height": 768, "zoom": 19,
     "features": [{"type": "restaurant",       # the type's key (cartoqa.records.feature_types)
                   "name": "Le Grill",          # the label as the map writes it; None: none
                   "name_optional": false,      # the name may be listed or not
                   "optional": false,           # partly shown: may be counted or not
                   "at": [1321.6, 55.2],        # where it is, image pixels (see below)
                   "icon": [x0, y0, x1, y1],    # its icon's box, or None
                   "label_box": [x0, y0, x1, y1],  # its label's box, or None
                   "flags": ["label_cut"],      # the truth's flags (DrawnFeature.flags)
                   "osm": "node/4893574386"}, ...]}

``at`` is the centre of the icon where the map draws one, else of the label, else of the
part of the feature's extent (its bounding box; a road's, all its ways') inside the map,
kept inside the map.

The text: a header of two lines, then one line per feature, ordered top to bottom, then
left to right, then ``Map data © OpenStreetMap contributors.``::

    TYPE; NAME; X,Y[; partly shown (WHY)][; name optional (WHY)]

- TYPE: the type as the questions name it (``FeatureType.asked`` or ``.label``:
  "restaurant", "drug store or pharmacy", "water stream");
- NAME: the name as the map writes it, as a JSON string ("Le Grill"), or ``-`` when the map
  writes none for it;
- X,Y: ``at``, rounded to whole pixels (x to the right, y down, from the top-left corner);
- ``partly shown``: the map shows the feature only in part or not plainly as its type
  (cut at the edge, its symbol covered or missing, a road without its name written along
  it, a look-alike): it may be counted or not;
- ``name optional``: the name may be listed or not (cut at the edge, or it may belong to a
  nearby symbol); every name of a partly shown feature is optional too.

So a count is the lines of the type without ``partly shown`` (up to that plus the partly
shown ones), and a name list is the NAMEs of those lines ("" for ``-``), the optional ones
apart: what ``cartoqa.tasks.poi.tally`` makes of the same features.  With no feature of the
22 types the list is the single line ``(none)``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cartoqa.errors import CartoqaError
from cartoqa.records import DrawnFeature
from cartoqa.records.feature_types import FEATURE_TYPES
from maps.projection import HALF_WORLD_M, metres_per_pixel, pixel_box

if TYPE_CHECKING:
    from maps import View
    from maps.feature_pixels import DrawnObject

    from .views import Plan, Question

__all__ = ["ATTRIBUTION", "describe", "feature_scene", "type_name"]

ATTRIBUTION = "Map data © OpenStreetMap contributors."

#: a flag of a partly shown feature -> why, in the text
_WHY_PARTLY = {
    "icon_cut": "symbol cut at the map's edge",
    "icon_split": "symbol split by a tile seam",
    "icon_covered": "symbol covered",
    "orphan_label": "name written without its symbol",
    "area_without_icon": "area drawn without its symbol",
    "area_cut": "area cut at the map's edge",
    "drawn_as_building": "drawn as a building",
    "fill_not_shown": "painted over by another area",
    "name_not_shown": "no name written along it",
    "unnamed_line": "no name written along it",
    "label_cut": "only a cut name shows",
    "under_map_control": "under a map control",
    "look_alike": "drawn like this type, tagged as another",
}
#: a flag of an optional name -> why, in the text
_WHY_NAME = {
    "label_cut": "cut at the map's edge",
    "orphan_label_below": "may belong to a nearby symbol",
    "label_shared": "may belong to a nearby symbol",
}


def type_name(key: str) -> str:
    """How the questions name a type ("drug store or pharmacy")."""
    t = FEATURE_TYPES[key]
    return t.asked or t.label


def feature_scene(
    view: View, objects: list[DrawnObject], features: list[DrawnFeature]
) -> dict[str, Any]:
    """The scene of a view (the module's notes): ``features`` are the view's drawn features
    (``cartoqa.tasks.poi.drawn_features`` of ``objects``)."""
    x0, y0, _, _ = pixel_box(view.center, view.zoom, view.width, view.height)
    x0, y0 = round(x0), round(y0)  # as FeatureLabels.view and Leaflet
    res = metres_per_pixel(view.zoom)
    boxes = {o.row.ref: o.row.box for o in objects}

    def extent(osm: str) -> tuple[float, float, float, float] | None:
        """The feature's bounding box in image pixels (a road's ways' together)."""
        parts = [boxes[r] for r in osm.split(";") if r in boxes]
        if not parts:
            return None
        minx, miny = min(p[0] for p in parts), min(p[1] for p in parts)
        maxx, maxy = max(p[2] for p in parts), max(p[3] for p in parts)
        return (
            (minx + HALF_WORLD_M) / res - x0,
            (HALF_WORLD_M - maxy) / res - y0,
            (maxx + HALF_WORLD_M) / res - x0,
            (HALF_WORLD_M - miny) / res - y0,
        )

    def centre(box: tuple[float, ...]) -> tuple[float, float]:
        return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2

    def at(f: DrawnFeature) -> list[float]:
        if f.icon is not None:
            x, y = centre(f.icon)
        elif f.label_box is not None:
            x, y = centre(f.label_box)
        else:
            box = extent(f.osm)
            if box is None:
                x, y = view.width / 2, view.height / 2
            else:
                a, b = max(box[0], 0.0), max(box[1], 0.0)
                c, d = min(box[2], float(view.width)), min(box[3], float(view.height))
                x, y = ((a + c) / 2, (b + d) / 2) if a <= c and b <= d else centre(box)
        x = min(max(x, 0.0), float(view.width))
        y = min(max(y, 0.0), float(view.height))
        return [round(x, 1), round(y, 1)]

    return {
        "width": view.width,
        "height": view.height,
        "zoom": view.zoom,
        "features": [
            {
                "type": f.type,
                "name": f.label,
                "name_optional": f.label is not None and f.label_counted != "yes",
                "optional": f.counted == "optional",
                "at": at(f),
                "icon": list(f.icon) if f.icon is not None else None,
                "label_box": list(f.label_box) if f.label_box is not None else None,
                "flags": list(f.flags),
                "osm": f.osm,
            }
            for f in features
        ],
    }


def _line(f: dict[str, Any]) -> str:
    x, y = f["at"]
    name = "-" if f["name"] is None else json.dumps(f["name"], ensure_ascii=False)
    parts = [type_name(f["type"]), name, f"{round(x)},{round(y)}"]
    flags = f["flags"]
    if f["optional"]:
        why = sorted({_WHY_PARTLY[k] for k in flags if k in _WHY_PARTLY and k != "label_cut"})
        if not why and "label_cut" in flags:
            why = [_WHY_PARTLY["label_cut"]]
        parts.append("partly shown" + (f" ({', '.join(why)})" if why else ""))
    if f["name"] is not None and (f["optional"] or f["name_optional"]):
        why = sorted({_WHY_NAME[k] for k in flags if k in _WHY_NAME})
        parts.append("name optional" + (f" ({', '.join(why)})" if why else ""))
    return "; ".join(parts)


def describe(plan: Plan, question: Question, roads: Any = None) -> str:
    """The view of ``plan`` written out (the module's notes): every feature of the 22 types
    it draws, whichever ``question`` of it is asked (``TaskSpec.describe``; ``roads`` is not
    needed)."""
    scene = plan.scene
    if "features" not in scene:
        raise CartoqaError(
            f"view {plan.view.id!r} has no recorded scene (Plan.scene is empty): it was not "
            "planned by cartoqa.tasks.poi.attempt_map_features; plan it again with this "
            "version of cartoqa to write it out as text"
        )
    width, height = scene["width"], scene["height"]
    features = sorted(
        scene["features"],
        key=lambda f: (round(f["at"][1]), round(f["at"][0]), f["type"], f["name"] or ""),
    )
    head = [
        f"Features of the map ({width} x {height} pixels), one a line: type; name as "
        "written on the map (- for none); x,y of where it is; notes.",
        '"partly shown": it may be counted or not. "name optional": the name may be listed or not.',
    ]
    body = [_line(f) for f in features] or ["(none)"]
    return "\n".join([*head, *body, ATTRIBUTION])
