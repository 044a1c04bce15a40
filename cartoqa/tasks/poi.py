"""The map-feature tasks of CartoMapQA: STMF (presence, counting, name listing) and MTMF.

Views are zoom-19 maps without markers (``CARTOQA_FEATURE_ZOOM=18`` for zoom
18), each centred near an OSM object of one of the 22 types
(``cartoqa.records.feature_types``), taken in turn; every third view is placed
where that type is densest, so that counts reach CartoMapQA's 16.  The four
tasks share their views (``TaskSpec.views``): each view asks

- ``stmf_presence``: two questions, one of a type the map shows (Yes) and one
  of a type it shows nothing of, not even in part (No), so answers are
  balanced;
- ``stmf_count``: how many of a type it shows, the type chosen so that counts
  spread over the strata ``COUNT_STRATA`` (0, 1, 2-3, 4 and more);
- ``stmf_names``: the names the map writes for the view's type (at most
  ``MAX_UNNAMED_NAMES_SHARE`` of these questions ask of a type the view shows
  without any written name, where the view writes names of another type);
- ``mtmf``: counts and names of all 22 types at once, as one JSON object.

Ground truth is what the image shows (``maps.feature_pixels``; the rules per
feature are ``drawn_features``).  Features only partly shown are *optional*:
a count from ``value`` to ``value + optional`` is exact, and their names may
be listed or not.  Every question's truth carries its evidence (the
features, their icon and label boxes, flags such as ``orphan_label``), which
``cartoqa audit`` draws.  Each view's plan records those features as its scene, which the
``text`` variants write out (``cartoqa.tasks.feature_text``).  ``view_truth`` reads every
question's truth again from another drawing of its place, by the same rules: the same centre
at another zoom (``zoom``), labels in another language (``lang:XX``: the names that map
writes), or no labels (``nolabels``: presence and count; name questions, which need labels,
are flagged unanswerable (``reads_names``), as are presence and count questions of a line
type, which counts one feature per name written (``counts_by_name``)).
"""

from __future__ import annotations

import logging
import os
import weakref
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cartoqa.errors import CartoqaError, RenderStackError
from cartoqa.records import (
    BooleanTruth,
    CountTruth,
    DrawnFeature,
    FeatureCount,
    FeatureTableTruth,
    GroundTruth,
    NamesTruth,
    Sample,
)
from cartoqa.records.feature_types import FEATURE_TYPES, feature_type_of, optional_type_of
from maps import View
from maps.feature_pixels import MIN_ICON_SHARE, DrawnObject, FeatureLabels
from maps.projection import HALF_WORLD_M, metres_per_pixel, pixel_to_lat_lon, world_pixel

from .feature_text import feature_scene
from .views import Plan, Question, Reject, fit_center, view_bounds

if TYPE_CHECKING:
    from maps import MapEngine

    from .views import ViewSampler

__all__ = [
    "VIEW_GROUP",
    "counts_by_name",
    "drawn_features",
    "feature_zoom",
    "format_names",
    "reads_names",
    "tally",
    "view_truth",
]

log = logging.getLogger(__name__)

VIEW_GROUP = "map_features"
#: a view keeps the object it is centred near this far from its edges
MARGIN_PX = 150
#: a park counts when this share of its area is inside the view (as an icon must be);
#: less is optional: a reader may or may not count a park the edge cuts
PARK_AREA_SHARE = 0.9
#: a park with less than this much of it inside the view (px²) is optional
MIN_PARK_PX2 = 400.0
#: a park shows as a park when at least this share of its pixels in the view (and at least
#: ``MIN_PARK_PX2`` of them) have its own green fill; less: another layer paints over it
#: (a pedestrian area, a building, another landuse) and it is at most optional
PARK_FILL_SHARE = 0.2
#: a line (stream, river, primary road) counts when this much of it is drawn in the view
#: (or ``LINE_SHARE`` of it, when it is shorter); less is optional
MIN_LINE_PX = 200.0
LINE_SHARE = 0.9
#: the strata count questions are spread over (true counts, low to high; None: no upper
#: bound): each view asks its count of a type in the stratum asked least so far among those
#: the view has, so counts spread where the extract allows (an outside review found 18 of
#: 24 counts were 1)
COUNT_STRATA: tuple[tuple[int, int | None], ...] = ((0, 0), (1, 1), (2, 3), (4, None))
#: at most this share of name questions may ask of a type whose features the view shows
#: all without a written name (the answer is then "None" or empty names)
MAX_UNNAMED_NAMES_SHARE = 0.2
#: every n-th view is placed where its type is densest
DENSE_EVERY = 3
#: the largest count a random answer draws (CartoMapQA's largest true count)
MAX_RANDOM_COUNT = 16


def feature_zoom() -> int:
    """The zoom of map-feature views: 19, or 18 with ``CARTOQA_FEATURE_ZOOM=18``."""
    raw = os.environ.get("CARTOQA_FEATURE_ZOOM", "19").strip()
    if raw not in ("18", "19"):
        raise CartoqaError(f"CARTOQA_FEATURE_ZOOM={raw!r}: map-feature views are at 18 or 19")
    return int(raw)


# ------------------------------------------------------------------ the rules per feature


def _line_groups(objs: list[DrawnObject]) -> list[tuple[str, list[DrawnObject]]]:
    """Lines of one type joined by name (one road, one river); each unnamed way alone."""
    named: dict[tuple[str, str], list[DrawnObject]] = defaultdict(list)
    out: list[tuple[str, list[DrawnObject]]] = []
    for o in objs:
        t = feature_type_of(o.row.tags) or optional_type_of(o.row.tags) or ""
        if o.row.name:
            named[(t, o.row.name)].append(o)
        else:
            out.append((t, [o]))
    return [(t, group) for (t, _), group in sorted(named.items())] + out


def drawn_features(objs: list[DrawnObject], zoom: int) -> list[DrawnFeature]:
    """The view's features of the 22 types (look-alikes as optional ones), by these rules:

    - *icon types*: shown when the icon is drawn with at least ``MIN_ICON_SHARE`` of it in
      the view (and no metatile seam halves it); optional when it is cut at the edge
      ("icon_cut"), drawn and then covered ("icon_covered"), missing while its label shows
      ("orphan_label") or missing from an area the map fills ("area_without_icon");
    - *parks*: shown when ``PARK_AREA_SHARE`` of the park is inside the view and its own
      fill shows there (``PARK_FILL_SHARE`` of its pixels in the tiles are park green);
      optional when less is inside ("area_cut"), when it is also a building, which the map
      paints grey over it ("drawn_as_building"), or when another layer paints over its
      fill, as over a park that is also a pedestrian area ("fill_not_shown"); a park drawn
      as something else may be named by the other drawing's label: its name is optional;
    - *lines* (one feature per name): shown when ``MIN_LINE_PX`` of it (or
      ``LINE_SHARE`` of a shorter one) is drawn in the view and its name is written whole
      there; without its name ("name_not_shown") or unnamed ("unnamed_line") it is
      optional, as a reader cannot tell how many roads the stretches are;
    - *names*: a label wholly inside the view is the name ("yes" for a shown feature,
      "optional" for an optional one); a label cut at the edge is optional ("label_cut");
      a named feature whose label the style dropped is listed unnamed ("label_dropped");
      an orphan label right under another feature's unlabelled icon is an optional name
      of that feature too ("orphan_label_below"); a label that can be read as the name of
      two features (under one's icon and beside or under another's unlabelled icon) is an
      optional name of both ("label_shared").
    """
    px2 = metres_per_pixel(zoom) ** 2
    out: list[DrawnFeature] = []
    lines = [o for o in objs if o.row.table == "l"]
    for o in objs:
        if o.row.table == "l":
            continue
        key = feature_type_of(o.row.tags)
        look_alike = key is None
        key = key or optional_type_of(o.row.tags)
        if key is None:
            continue
        ftype = FEATURE_TYPES[key]
        flags = ["look_alike"] if look_alike else []
        if "icon_under_control" in o.notes:
            flags.append("under_map_control")
        if ftype.icons:
            split = "icon_split_by_seam" in o.notes
            if o.icon is not None and o.icon_share >= MIN_ICON_SHARE and not split:
                counted = "yes"
            elif o.icon is not None:
                counted, flags = "optional", [*flags, "icon_split" if split else "icon_cut"]
            elif o.icon_pixels_only:
                counted, flags = "optional", [*flags, "icon_covered"]
            elif o.label is not None:
                counted, flags = "optional", [*flags, "orphan_label"]
            elif o.row.table == "a" and o.area_share > 0:
                counted, flags = "optional", [*flags, "area_without_icon"]
            elif o.label_partial:
                counted, flags = "optional", [*flags, "label_cut"]
            else:
                continue
        else:  # a park: by its area
            if o.area_share <= 0 and o.label is None and not o.label_partial:
                continue
            inside_px2 = o.view_share * _view_m2(zoom) / px2
            whole = o.area_share >= PARK_AREA_SHARE and inside_px2 >= MIN_PARK_PX2
            counted = "yes" if whole else "optional"
            if not whole:
                flags.append("area_cut")
            other = False
            if o.row.tags.get("building", "no") != "no":
                counted = "optional"  # the buildings layer paints it grey, over the park
                flags.append("drawn_as_building")
                other = True
            elif o.fill_share is not None and (
                o.fill_share < PARK_FILL_SHARE or o.fill_px < MIN_PARK_PX2
            ):
                counted = "optional"  # painted over: a plaza, another landuse
                flags.append("fill_not_shown")
                other = True
            if other and o.label is None and not o.label_partial and o.row.name:
                # its name, if the map writes it, belongs to the other drawing (a plaza's)
                f = _with_label(o, key, "optional", flags)
                out.append(
                    f.model_copy(
                        update={"label": _label_text_of(o.row.name), "label_counted": "optional"}
                    )
                )
                continue
        if look_alike:
            counted = "optional"
        out.append(_with_label(o, key, counted, flags))
    for key, group in _line_groups(lines):
        if not key:
            continue
        look_alike = feature_type_of(group[0].row.tags) is None
        shown = sum(o.line_px for o in group)
        total = sum(o.total_px for o in group)
        flags = ["look_alike"] if look_alike else []
        if not group[0].row.name:
            flags.append("unnamed_line")
        whole = shown >= min(MIN_LINE_PX, LINE_SHARE * total)
        labelled = next((o for o in group if o.label is not None), None)
        if labelled is None and not flags:
            # a reader tells one road from another by its name: without it written in
            # the view, a stretch of orange may be a road of its own or another's arm
            flags.append("name_not_shown")
        counted = "yes" if whole and not flags else "optional"
        first = labelled or group[0]
        f = _with_label(first, key, counted, flags)
        if labelled is None and any(o.label_partial for o in group):
            f = f.model_copy(
                update={
                    "label": f.name or None,
                    "label_counted": "optional",
                    "flags": sorted({*f.flags, "label_cut"}),
                }
            )
        out.append(f.model_copy(update={"osm": ";".join(o.row.ref for o in group)}))
    return _orphans_read_as_names(out)


#: a label reads as an icon's own when it starts at most this far (px) under the icon and
#: spans the icon's centre (where the style puts an icon's label) ...
ORPHAN_BELOW_PX = 16.0
#: ... or when it lies beside the icon, their rows overlapping, at most this far from it
LABEL_BESIDE_PX = 8.0


def _reads_as_label_of(label: tuple[float, ...], icon: tuple[float, ...]) -> bool:
    """Whether a reader may take the label in box ``label`` for the name of the icon in box
    ``icon`` (both image pixels)."""
    lx0, ly0, lx1, ly1 = label
    ix0, iy0, ix1, iy1 = icon
    below = 0 <= ly0 - iy1 <= ORPHAN_BELOW_PX and lx0 <= (ix0 + ix1) / 2 <= lx1
    beside = ly0 < iy1 and iy0 < ly1 and max(ix0 - lx1, lx0 - ix1) <= LABEL_BESIDE_PX
    return below or beside


def _orphans_read_as_names(features: list[DrawnFeature]) -> list[DrawnFeature]:
    """Labels a reader can take for the name of another feature's icon (one that shows no
    label of its own) become optional names of that feature too:

    - an orphan label (a name written without its icon) under such an icon (an outside
      review: "Wok Up" under an unnamed café's cup): "orphan_label_below";
    - a feature's own label that also lies under or beside such an icon (issue 26: a
      label centred under a café and beside a restaurant's icon; an ATM and a bank
      sharing one label): the name is optional for both, "label_shared".

    Line labels (roads, rivers) are written along their lines and are left alone."""
    out = list(features)
    labelled = [
        (m, f)
        for m, f in enumerate(features)
        if f.label_box and f.label and "line" not in FEATURE_TYPES[f.type].geometries
    ]
    shared: set[int] = set()
    for n, f in enumerate(features):
        if f.icon is None or f.label is not None:
            continue
        for m, o in labelled:
            if m == n or not _reads_as_label_of(o.label_box, f.icon):  # type: ignore[arg-type]
                continue
            orphan = "orphan_label" in o.flags
            out[n] = f.model_copy(
                update={
                    "label": o.label,
                    "label_counted": "optional",
                    "flags": sorted({*f.flags, "orphan_label_below" if orphan else "label_shared"}),
                }
            )
            if not orphan:
                shared.add(m)
            break
    for m in shared:
        o = out[m]
        out[m] = o.model_copy(
            update={
                "label_counted": "optional" if o.label_counted == "yes" else o.label_counted,
                "flags": sorted({*o.flags, "label_shared"}),
            }
        )
    return out


def _view_m2(zoom: int) -> float:
    from maps import HEIGHT_PX, WIDTH_PX

    return WIDTH_PX * HEIGHT_PX * metres_per_pixel(zoom) ** 2


def _label_text_of(name: str) -> str:
    return " ".join(name.split())


def _label_text(o: DrawnObject, key: str) -> str:
    """The label as the style writes it (the type's label tag; lines joined by a space)."""
    tag = FEATURE_TYPES[key].label_tag
    text = o.label_text if tag == "name" else o.row.tags.get(tag, "")
    return " ".join(text.split())


def _label_source(o: DrawnObject, key: str) -> str:
    tag = FEATURE_TYPES[key].label_tag
    return o.row.name if tag == "name" else o.row.tags.get(tag, "")


def _with_label(o: DrawnObject, key: str, counted: str, flags: list[str]) -> DrawnFeature:
    flags = list(flags)
    source = _label_source(o, key)
    if o.label is not None:
        label: str | None = _label_text(o, key)
        label_counted = "yes" if counted == "yes" else "optional"
    elif o.label_partial:
        label, label_counted = " ".join(source.split()) or None, "optional"
        flags.append("label_cut")
    else:
        label, label_counted = None, "no"
        if source and counted == "yes" and FEATURE_TYPES[key].named:
            flags.append("label_dropped")
    return DrawnFeature(
        osm=o.row.ref,
        type=key,
        name=o.row.name,
        counted=counted,
        label=label,
        label_counted=label_counted,
        icon=o.icon,
        label_box=o.label,
        flags=sorted(set(flags)),
    )


@dataclass
class Tally:
    """One type's features in a view: what a count and a name list must say."""

    shown: int = 0
    optional: int = 0
    names: list[str] = field(default_factory=list)
    """The names of the shown features ("" for one shown without a whole label)."""
    optional_names: list[str] = field(default_factory=list)
    features: list[DrawnFeature] = field(default_factory=list)


def tally(features: list[DrawnFeature]) -> dict[str, Tally]:
    """Every one of the 22 types (absent ones too) -> its count and names in the view."""
    out = {k: Tally() for k in FEATURE_TYPES}
    for f in features:
        t = out[f.type]
        t.features.append(f)
        if f.counted == "yes":
            t.shown += 1
            if f.label_counted == "yes" and f.label is not None:
                t.names.append(f.label)
            elif f.label_counted == "optional" and f.label is not None:
                t.optional_names.append(f.label)
            else:
                t.names.append("")
        else:
            t.optional += 1
            if f.label is not None:
                t.optional_names.append(f.label)
    for t in out.values():
        t.names.sort()
        t.optional_names.sort()
    return out


def _presence_truth(counts: dict[str, Tally], key: str) -> BooleanTruth:
    """Whether the view shows a ``key`` (Yes when one is counted whole)."""
    t = counts[key]
    return BooleanTruth(value=t.shown > 0, feature_type=key, features=t.features)


def _count_truth(counts: dict[str, Tally], key: str) -> CountTruth:
    t = counts[key]
    return CountTruth(value=t.shown, optional=t.optional, feature_type=key, features=t.features)


def _names_truth(counts: dict[str, Tally], key: str) -> NamesTruth:
    t = counts[key]
    return NamesTruth(
        names=t.names, optional=t.optional_names, feature_type=key, features=t.features
    )


def _table_truth(counts: dict[str, Tally], features: list[DrawnFeature]) -> FeatureTableTruth:
    """MTMF: every type's count and names, the view's features as evidence."""
    table = {
        k: FeatureCount(
            count=v.shown,
            names=v.names,
            optional_count=v.optional,
            optional_names=v.optional_names,
        )
        for k, v in counts.items()
    }
    return FeatureTableTruth(features=table, evidence=features)


# ------------------------------------------------------------------ views and questions


@dataclass
class _State:
    labels: FeatureLabels
    zoom: int
    by_type: dict[str, list[tuple[float, float, str]]]
    """type -> its objects: (world px x, world px y, ref) at the views' zoom."""
    used: set[str] = field(default_factory=set)
    """Objects views were centred near already."""
    centres: list[tuple[float, float]] = field(default_factory=list)
    """The views' centres so far, in world px."""
    count: int = 0
    start_seconds: float = 0.0
    strata: Counter[int] = field(default_factory=Counter)
    """Count questions asked so far per stratum (an index into ``COUNT_STRATA``)."""
    names_asked: int = 0
    names_unnamed: int = 0
    """Name questions asked so far, and those of them whose features all show no name."""

    @property
    def seconds(self) -> float:
        """Time this sampler's views spent on the coded renders (the build reports it as
        "labels"; the engine's ``FeatureLabels`` serves every build made with it)."""
        return self.labels.seconds - self.start_seconds


_LABELS: weakref.WeakKeyDictionary[Any, FeatureLabels] = weakref.WeakKeyDictionary()


def _wanted(tags: dict[str, str]) -> bool:
    return feature_type_of(tags) is not None or optional_type_of(tags) is not None


def _fill(tags: dict[str, str]) -> str | None:
    """The fill colour a feature of a type counted by its area is drawn with."""
    key = feature_type_of(tags)
    return (FEATURE_TYPES[key].fill or None) if key is not None else None


def feature_labels(engine: MapEngine) -> FeatureLabels:
    """The engine's ``FeatureLabels`` (one per engine: its coded style is loaded once)."""
    if engine not in _LABELS:
        _LABELS[engine] = FeatureLabels(engine, _wanted, _fill)
    return _LABELS[engine]


def _state(sampler: ViewSampler) -> _State:
    st = sampler.state.get(VIEW_GROUP)
    if st is None:
        labels = feature_labels(sampler.labels.engine)
        zoom = feature_zoom()
        res = metres_per_pixel(zoom)
        by_type: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
        for row in labels.objects.values():
            key = feature_type_of(row.tags)
            if key is not None:
                px = ((row.x + HALF_WORLD_M) / res, (HALF_WORLD_M - row.y) / res, row.ref)
                by_type[key].append(px)
        st = _State(labels, zoom, {k: sorted(v) for k, v in sorted(by_type.items())})
        st.start_seconds = labels.seconds
        sampler.state[VIEW_GROUP] = st
    return st


def _anchor(sampler: ViewSampler, st: _State, i: int) -> tuple[str, tuple[float, float]]:
    """The view's type and the object (world px) it is centred near: the types the extract
    has, in turn, skipping those whose objects have all been anchors already; every
    ``DENSE_EVERY``-th view near where the type is densest."""
    present = [k for k in FEATURE_TYPES if st.by_type.get(k)]
    if not present:
        raise Reject("no_map_features")
    start = i % len(present)
    for key in present[start:] + present[:start]:
        objs = [p for p in st.by_type[key] if sampler.repeat_places or p[2] not in st.used]
        if objs:
            break
    else:
        raise Reject("no_place_left")
    if i % DENSE_EVERY == DENSE_EVERY - 1 and len(objs) > 1:
        from maps import HEIGHT_PX, WIDTH_PX

        def around(p: tuple[float, float, str]) -> int:
            return sum(
                abs(q[0] - p[0]) < WIDTH_PX / 2 and abs(q[1] - p[1]) < HEIGHT_PX / 2 for q in objs
            )

        ranked = sorted(objs, key=lambda p: (-around(p), p))
        pick = sampler.rng.choice(ranked[: max(1, min(5, len(ranked) // 4))])
    else:
        pick = sampler.rng.choice(objs)
    st.used.add(pick[2])
    return key, (pick[0], pick[1])


def _overlaps(st: _State, center: tuple[float, float]) -> bool:
    """Whether a view at ``center`` would share more than a quarter of an earlier one."""
    from maps import HEIGHT_PX, WIDTH_PX

    x, y = world_pixel(*center, st.zoom)
    return any(abs(x - a) < WIDTH_PX / 2 and abs(y - b) < HEIGHT_PX / 2 for a, b in st.centres)


def attempt_map_features(sampler: ViewSampler, i: int) -> Plan:
    """One view of the map-feature group and its questions of every member task."""
    st = _state(sampler)
    key, (px, py) = _anchor(sampler, st, i)
    zoom = st.zoom
    at = pixel_to_lat_lon(px, py, zoom)
    center = fit_center([at], zoom, sampler.rng, extract_bounds=sampler.bounds, margin_px=MARGIN_PX)
    if center is None:
        raise Reject("does_not_fit_the_view")
    if not sampler.repeat_places and _overlaps(st, center):
        raise Reject("overlaps_an_earlier_view")
    blank = 0.0
    if sampler.covered_share is not None:
        blank = 1.0 - sampler.covered_share(view_bounds(center, zoom))
        if blank > 0.10:
            raise Reject("view_not_covered")
    st.count += 1
    view = View.make(center, zoom, id=f"mf-{st.count:04d}")
    objects = st.labels.view(view)
    features = drawn_features(objects, zoom)
    counts = tally(features)
    shown = [k for k, t in counts.items() if t.shown > 0]
    absent = [k for k, t in counts.items() if t.shown == 0 and t.optional == 0]
    if key not in shown:
        if not shown:
            raise Reject("no_feature_shown")
        key = sampler.rng.choice(shown)
    if not absent:
        raise Reject("no_absent_type")
    no = sampler.rng.choice(absent)
    meta: dict[str, Any] = {
        "zoom": zoom,
        "center_lat": round(center[0], 7),
        "center_lon": round(center[1], 7),
        "blank_share": round(max(0.0, blank), 3),
        "markers": "",
    }
    flags = Counter(flag for f in features for flag in f.flags)
    if flags:
        meta["flags"] = ";".join(f"{k}={v}" for k, v in sorted(flags.items()))
    text = sampler.prompts.text

    def about(k: str, request: str) -> dict[str, Any]:
        t = counts[k]
        return {**meta, "feature_type": k, "request": request, "count": t.shown}

    questions = [
        Question(
            f"-p{n}",
            text(f"map.stmf_presence.{k}"),
            _presence_truth(counts, k),
            about(k, "presence"),
            task="stmf_presence",
        )
        for n, k in enumerate(sorted([key, no], key=lambda _: sampler.rng.random()), start=1)
    ]
    names_type = _names_type(sampler, st, counts, shown, key)
    count_type, stratum = _count_type(sampler, st, counts, key)
    st.strata[stratum] += 1
    questions.append(
        Question(
            "-c",
            text(f"map.stmf_count.{count_type}"),
            _count_truth(counts, count_type),
            about(count_type, "count"),
            task="stmf_count",
        )
    )
    questions.append(
        Question(
            "-n",
            text(f"map.stmf_names.{names_type}"),
            _names_truth(counts, names_type),
            about(names_type, "names"),
            task="stmf_names",
        )
    )
    types = "\n".join(f"{k}: {t.asked or t.label}" for k, t in FEATURE_TYPES.items())
    questions.append(
        Question(
            "-m",
            text("map.mtmf", types=types),
            _table_truth(counts, features),
            {**meta, "request": "all", "count": sum(v.shown for v in counts.values())},
            task="mtmf",
        )
    )
    st.centres.append(world_pixel(*center, zoom))
    return Plan("stmf_presence", view, questions, scene=feature_scene(view, objects, features))


def _stratum(n: int) -> int:
    """The index of the ``COUNT_STRATA`` stratum count ``n`` falls in."""
    for i, (low, high) in enumerate(COUNT_STRATA):
        if n >= low and (high is None or n <= high):
            return i
    raise AssertionError(n)  # pragma: no cover - the strata cover 0 and up


def _count_type(
    sampler: ViewSampler, st: _State, counts: dict[str, Tally], key: str
) -> tuple[str, int]:
    """The type the view's count question asks of, and its stratum: among the strata the
    view has a type in (a zero only of a type with nothing of it drawn, not even in part),
    the one asked least so far (ties: the higher counts first, as they are rarer); within
    it the view's own type, else one drawn at random."""
    by: dict[int, list[str]] = defaultdict(list)
    for k, t in counts.items():
        if t.shown == 0 and t.optional > 0:
            continue  # "0" would be right, and so would some: no clean zero
        by[_stratum(t.shown)].append(k)
    stratum = min(by, key=lambda s: (st.strata[s], -s))
    pick = key if key in by[stratum] else sampler.rng.choice(sorted(by[stratum]))
    return pick, stratum


def _names_type(
    sampler: ViewSampler, st: _State, counts: dict[str, Tally], shown: list[str], key: str
) -> str:
    """The type the view's name question asks of: the view's own type when the map writes
    names for it, else a shown type it writes names for; a type shown only without written
    names while that keeps such questions within ``MAX_UNNAMED_NAMES_SHARE``, or when the
    view writes no name of any type (the view's other questions are worth keeping, and a
    build asked for counts alone must not lose views to this)."""
    named = [k for k in shown if FEATURE_TYPES[k].named]
    written = [k for k in named if any(counts[k].names)]
    unnamed_ok = st.names_unnamed + 1 <= MAX_UNNAMED_NAMES_SHARE * (st.names_asked + 1)
    if key in written or (key in named and unnamed_ok):
        pick = key
    elif written:
        pick = sampler.rng.choice(written)
    else:
        pick = key if FEATURE_TYPES[key].named or not named else sampler.rng.choice(named)
    st.names_asked += 1
    st.names_unnamed += not any(counts[pick].names)
    return pick


# ------------------------------------------------------------------ answers and specs


def format_presence(sample: Sample) -> str:
    """Presence as its prompt asks: Yes or No on the first line."""
    truth = sample.ground_truth
    assert isinstance(truth, BooleanTruth)
    return "Yes" if truth.value else "No"


def format_names(sample: Sample) -> str:
    """Name listing as its prompt asks: one name a line, "" for an unnamed feature, None when
    the map shows none."""
    truth = sample.ground_truth
    assert isinstance(truth, NamesTruth)
    if not truth.names:
        return "None"
    return "\n".join(n if n else '""' for n in truth.names)


def reads_names(question: Question) -> bool:
    """STMF names and MTMF (``TaskSpec.needs_labels``): their answers list the names the map
    writes, which a map drawn without labels does not show."""
    return True


def counts_by_name(question: Question) -> bool:
    """STMF presence and count (``TaskSpec.needs_labels``): a question of a line type
    (primary road, river, stream) needs labels, since a line counts one feature per name
    written (``drawn_features``): without labels no stretch counts, and every answer from 0
    to the number of stretches would be right."""
    ftype = getattr(question.truth, "feature_type", None)
    return ftype is not None and "line" in FEATURE_TYPES[ftype].geometries


def view_truth(
    plan: Plan, question: Question, engine: MapEngine, view: View, roads: Any = None
) -> GroundTruth | str:
    """The four map-feature tasks (``TaskSpec.view_truth``): the question's truth for ``view``
    (the same place, perhaps at another zoom: the ``zoom`` variant) asked of the same type,
    recomputed from what ``engine`` draws of it (perhaps restyled: ``nolabels``; perhaps
    writing names in another language: ``lang:XX``, ``MapEngine.in_language``) by the code
    the generator's truths come from (``feature_labels(engine)``, ``drawn_features``,
    ``tally`` and the truths ``attempt_map_features`` makes of them); with the engine and view
    the question was planned on it is the question's own truth, byte for byte.  ``roads``
    (the extract's road graph, which the navigation tasks use) is not read.

    Names are the labels that engine writes (in its language, each object's ``name`` where it
    has none in it); counts are recomputed too: another zoom draws other icons and labels (the
    style draws fewer at 18 than at 19), labels of another length are placed otherwise, and
    without labels icons no longer compete with them for room.  A reason where the truth
    cannot be kept: the engine's colour-coded render does not place what its tiles place
    ("placement_differs"), or a presence question's type is then drawn only in part
    ("type_only_in_part": neither Yes nor No would be right alone).  A count of a type drawn
    only in part (0 to its optional ones) and a name list of a type the view no longer shows
    ("None", its optional names allowed) are kept: the scorer takes every answer in the
    range, so the truth stays fair (the generator avoids them only to spread its questions).
    """
    truth = question.truth
    key = getattr(truth, "feature_type", None)
    typed = isinstance(truth, BooleanTruth | CountTruth | NamesTruth)
    if not (isinstance(truth, FeatureTableTruth) or (typed and key is not None)):
        raise CartoqaError(
            f"question {question.suffix!r} of view {plan.view.id!r} has a {truth.kind} truth "
            f"of feature type {key!r}; only map-feature "
            "truths (presence, count or names of a feature type, or the MTMF table) are "
            "recomputed: pass a question of the map-feature tasks"
        )
    try:
        features = drawn_features(feature_labels(engine).view(view), view.zoom)
    except RenderStackError as exc:
        log.warning("view %s: its truth drawn again is left out: %s", view.id, exc)
        return "placement_differs"
    counts = tally(features)
    if isinstance(truth, FeatureTableTruth):
        return _table_truth(counts, features)
    assert key is not None
    if isinstance(truth, CountTruth):
        return _count_truth(counts, key)
    if isinstance(truth, NamesTruth):
        return _names_truth(counts, key)
    if counts[key].shown == 0 and counts[key].optional > 0:
        return "type_only_in_part"
    return _presence_truth(counts, key)


def _register() -> None:
    from evaluators import poi as scorers

    from .feature_text import describe
    from .release import features as release
    from .spec import TaskSpec, register_task

    common: dict[str, Any] = {
        "family": "map",
        "track": "cartomapqa",
        "generator": attempt_map_features,
        "views": VIEW_GROUP,
        "describe": describe,
    }
    register_task(
        TaskSpec(
            name="stmf_presence",
            description="map features: is a type of place shown (yes/no, balanced)",
            truth_kinds=frozenset({"boolean"}),
            score=scorers.presence_score,
            modes={"original": release.stmf_presence_original},
            mode_tables={"original": release.stmf_presence_table},
            release=release.STMF,
            answer_format=format_presence,
            reduce=scorers.presence_metrics,
            metrics=("accuracy", "precision", "recall", "f1", "unanswered"),
            group_by=("feature_type", "zoom"),
            questions_per_map=2,
            view_truth=view_truth,
            needs_labels=counts_by_name,
            **common,
        )
    )
    register_task(
        TaskSpec(
            name="stmf_count",
            description="map features: how many of a type of place the map shows",
            truth_kinds=frozenset({"count"}),
            score=scorers.count_score,
            modes={"original": release.stmf_count_original},
            mode_tables={"original": release.stmf_count_table},
            release=release.STMF,
            reduce=scorers.count_metrics,
            metrics=("rmse", "mae", "r2", "unanswered"),
            group_by=("feature_type", "zoom"),
            answer_space={"low": 0, "high": MAX_RANDOM_COUNT},
            view_truth=view_truth,
            needs_labels=counts_by_name,
            **common,
        )
    )
    register_task(
        TaskSpec(
            name="stmf_names",
            description="map features: the names the map writes for a type of place",
            truth_kinds=frozenset({"names"}),
            score=scorers.names_score,
            modes={"original": release.stmf_names_original},
            mode_tables={"original": release.stmf_names_table},
            release=release.STMF,
            answer_format=format_names,
            reduce=scorers.names_metrics,
            metrics=("precision", "recall", "f1", "fuzzy_f1", "unanswered"),
            headline="f1",
            group_by=("feature_type", "zoom"),
            view_truth=view_truth,
            needs_labels=reads_names,
            **common,
        )
    )
    register_task(
        TaskSpec(
            name="mtmf",
            description="map features: counts and names of all 22 types at once, as JSON",
            truth_kinds=frozenset({"feature_table"}),
            score=scorers.mtmf_score,
            modes={"original": release.mtmf_original},
            mode_tables={"original": release.mtmf_original_table},
            release=release.MTMF,
            answer_format=release.mtmf_answer,
            reduce=scorers.mtmf_metrics,
            metrics=("rmse", "r2", "precision", "recall", "f1", "unanswered"),
            group_by=("zoom",),
            answer_space={"low": 0, "high": MAX_RANDOM_COUNT},
            view_truth=view_truth,
            needs_labels=reads_names,
            **common,
        )
    )


_register()
