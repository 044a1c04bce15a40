"""Make the paired variants' samples of a build's map views (``build_dataset(variants=...)``).

Each base sample of a map task made from an extract's views gets, per variant asked, a
copy asked under one change (``names``: its id "<base>@<tag>", metadata ``variant`` and
``base``):

- ``text``: no image; the view written out by its task's ``TaskSpec.describe``, then the
  question unchanged (template ``map.variant.text``);
- ``image+text``: the base image and the same written-out view (``map.variant.image_text``);
- ``coords``: the base image, and the markers' coordinates, the view's bounds and its scale
  after the question (``map.variant.coords``, as GPSBench adds coordinates to map prompts);
- ``greyscale``: the base image in greyscale (ITU-R 601 luma, every channel the same);
  prompt and truth unchanged; a view whose markers have two colours (an origin and a
  destination) is flagged ``answerable: false``, since grey markers cannot say which is
  which;
- ``nolabels``: the same view drawn with the style's labels removed
  (``maps.style_variants.without_labels``); a question that needs labels read
  (``TaskSpec.needs_labels``) keeps its truth and is flagged ``answerable: false``; a task
  whose truth follows what the style draws (``TaskSpec.view_truth``) gets the truth of
  the new render, and a question whose truth cannot be recomputed is left out (counted);
- ``zoom``: the same place at a second zoom (``second_zooms``: zoom - 1, else zoom + 1, the
  centre kept where the markers and paths still fit, else moved as little as they need),
  each truth recomputed from that drawing (``TaskSpec.view_truth``: the names the answer
  needs must still be drawn, the features counted again); of the two zooms, the first that
  keeps every truth of the view (else the one that keeps most); metadata ``zoom`` is the
  new zoom;
- ``lang:XX``: the same view drawn with every label from ``name:XX`` where the object has
  it, else ``name`` (``maps.MapEngine.in_language``); each truth recomputed from that
  drawing (road and feature names in the language); metadata ``translated_share``, the
  share of the view's named objects that have ``name:XX``
  (``maps.style_variants.translated_share``).

Under ``zoom`` and ``lang:XX`` every map task but RLE recomputes its truths
(``TaskSpec.view_truth``: ``cartoqa.tasks.poi``, ``cartoqa.tasks.navigation_views``); RLE's
length does not depend on the drawing.  A copy's other metadata (a feature question's
``count`` and ``flags``, SRN's ``steps``) describe its base view.

A task without ``describe`` has no text twin, and a question whose truth cannot be kept
under a variant has no copy under it: both are counted under ``left_out`` with the reason.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cartoqa.errors import CartoqaError
from cartoqa.records import Sample

from .names import ANSWERABLE_KEY, BASE_KEY, VARIANT_KEY, variant_tag

if TYPE_CHECKING:
    from maps import MapEngine, View
    from maps.roads import RoadGraph

    from ..templates import PromptSet
    from ..views import Plan, Question

__all__ = ["BUILT", "BaseItem", "VariantReport", "make_variants"]

#: the variants a build makes now, in the order their samples are written ("lang:XX" for
#: every language code)
BUILT = ("text", "image+text", "coords", "greyscale", "nolabels", "zoom", "lang:XX")


@dataclass(frozen=True)
class BaseItem:
    """A base sample as the build wrote it, with the plan and question it came from."""

    plan: Plan
    question: Question
    sample: Sample
    png: bytes
    """The base image's PNG bytes."""


@dataclass
class VariantReport:
    """What the variants made and what they left out, for the manifest."""

    asked: list[str] = field(default_factory=list)
    made: dict[str, Counter[str]] = field(default_factory=dict)
    """Variant -> task -> samples made."""
    left_out: dict[str, dict[str, Counter[str]]] = field(default_factory=dict)
    """Variant -> task -> reason -> base samples without a copy under the variant."""
    unanswerable: dict[str, Counter[str]] = field(default_factory=dict)
    """Variant -> task -> samples flagged ``answerable: false``."""

    def manifest(self) -> dict[str, Any]:
        """The manifest's ``variants`` record."""
        return {
            "asked": list(self.asked),
            "made": {v: dict(sorted(c.items())) for v, c in self.made.items()},
            "unanswerable": {v: dict(sorted(c.items())) for v, c in self.unanswerable.items()},
            "left_out": {
                v: {t: dict(sorted(r.items())) for t, r in sorted(by_task.items())}
                for v, by_task in self.left_out.items()
            },
        }

    def _leave_out(self, variant: str, task: str, reason: str) -> None:
        self.left_out.setdefault(variant, {}).setdefault(task, Counter())[reason] += 1


def make_variants(
    items: Sequence[BaseItem],
    variants: Sequence[str],
    *,
    engine: MapEngine,
    roads: RoadGraph,
    prompts: PromptSet,
    add_image: Callable[[str, bytes], str],
    add_sample: Callable[[Sample], None],
    spec_of: Callable[[str], Any],
    progress: bool = False,
) -> VariantReport:
    """Write each item's copies under ``variants`` (``add_image(name, png) -> path``,
    ``add_sample``), variant by variant, in the order of ``items``; returns what was made
    and left out."""
    report = VariantReport(asked=list(variants))
    for variant in variants:
        report.made[variant] = Counter()
        if variant in ("nolabels", "zoom") or variant.startswith("lang:"):
            _redrawn(
                items, variant, engine, roads, spec_of, report, add_image, add_sample, progress
            )
            continue
        grey: dict[str, str] = {}
        for item in items:
            task = item.sample.task
            sample = _copy(item, variant, spec_of(task), roads, prompts, grey, add_image, report)
            if sample is not None:
                add_sample(sample)
                report.made[variant][task] += 1
    return report


def _copy(
    item: BaseItem,
    variant: str,
    spec: Any,
    roads: RoadGraph,
    prompts: PromptSet,
    grey: dict[str, str],
    add_image: Callable[[str, bytes], str],
    report: VariantReport,
) -> Sample | None:
    base = item.sample
    question = base.prompt.text
    images = list(base.prompt.images)
    if variant in ("text", "image+text"):
        if spec.describe is None:
            report._leave_out(variant, base.task, "no_text_form")
            return None
        description = spec.describe(item.plan, item.question, roads)
        key = "map.variant.text" if variant == "text" else "map.variant.image_text"
        text = prompts.text(key, description=description, question=question)
        if variant == "text":
            images = []
    elif variant == "coords":
        text = prompts.text("map.variant.coords", question=question, **coords_fields(item.plan))
    elif variant == "greyscale":
        text = question
        view_id = item.plan.view.id
        if view_id not in grey:
            grey[view_id] = add_image(f"{view_id}@{variant_tag(variant)}.png", greyscale(item.png))
        images = [grey[view_id]]
        # markers of two colours name two roles (the origin and the destination): in grey
        # they cannot be told apart, so the question cannot be answered as asked
        if len({m.colour for m in item.plan.view.markers}) > 1:
            report.unanswerable.setdefault(variant, Counter())[base.task] += 1
            return _variant_sample(base, variant, text=text, images=images, answerable=False)
    else:  # pragma: no cover - parse_variants refused it
        raise CartoqaError(f"variant {variant!r} is not built")
    return _variant_sample(base, variant, text=text, images=images)


def _variant_sample(
    base: Sample,
    variant: str,
    *,
    text: str,
    images: list[str],
    truth: Any = None,
    answerable: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Sample:
    extra: dict[str, Any] = {**(metadata or {}), VARIANT_KEY: variant, BASE_KEY: base.id}
    if not answerable:
        extra[ANSWERABLE_KEY] = False
    record = base.model_dump()
    record.update(
        id=f"{base.id}@{variant_tag(variant)}",
        prompt={"text": text, "system": base.prompt.system, "images": images},
        metadata={**record["metadata"], **extra},
    )
    if truth is not None:
        record["ground_truth"] = truth.model_dump()
    return Sample.model_validate(record)


def coords_fields(plan: Plan) -> dict[str, str]:
    """What ``map.variant.coords`` is filled with: ``markers`` (one line each: colour and
    latitude, longitude to 6 decimals, "none" for a map without markers), ``bounds`` (south,
    west, north, east) and ``scale`` (metres per image pixel at the view's centre)."""
    from maps.projection import metres_per_pixel

    view = plan.view
    markers = (
        "\n".join(f"- {m.colour} marker: {m.lat:.6f}, {m.lon:.6f}" for m in view.markers)
        or "- none"
    )
    s, w, n, e = view.bounds()
    scale = metres_per_pixel(view.zoom) * math.cos(math.radians(view.center[0]))
    return {
        "markers": markers,
        "bounds": f"south {s:.6f}, west {w:.6f}, north {n:.6f}, east {e:.6f}",
        "scale": f"{scale:.3f}",
    }


def greyscale(png: bytes) -> bytes:
    """The PNG in greyscale (ITU-R 601-2 luma, as PIL's "L"), written back as RGB so that
    every reader takes it like the base image."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        out = im.convert("L").convert("RGB")
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    return buf.getvalue()


def second_zooms(view: View, roads: RoadGraph, extract: Any) -> list[View]:
    """The same place at zoom - 1 (if at least 15), then at zoom + 1 (if at most 19), each
    where the rules every base view keeps allow it: the markers and paths ``MARGIN_PX`` inside
    the image, the view inside the extract and at most ``MAX_BLANK_SHARE`` of it past the
    data's edge.  The view keeps its centre where it can; else it moves as little as those
    rules need (a marker off-centre leaves the image when the zoom doubles its offset).  Each
    has the view's id with "@zoom"."""
    from maps import HEIGHT_PX, WIDTH_PX
    from maps.projection import pixel_to_lat_lon, world_pixel

    from ..views import MARGIN_PX, MAX_BLANK_SHARE, view_bounds

    points = [(m.lat, m.lon) for m in view.markers] + [
        p for path in view.paths for p in path.points
    ]
    out = []
    for zoom in (view.zoom - 1, view.zoom + 1):
        if not 15 <= zoom <= 19:
            continue
        # the centres (world pixels) that keep every point inside the margin and the view
        # inside the extract: a box; the view's own centre moved into it, as little as can be
        px = [world_pixel(lat, lon, zoom) for lat, lon in points]
        half_w, half_h = WIDTH_PX / 2 - MARGIN_PX, HEIGHT_PX / 2 - MARGIN_PX
        es, ew, en, ee = extract.bounds
        ex0, ey0 = world_pixel(en, ew, zoom)
        ex1, ey1 = world_pixel(es, ee, zoom)
        lo_x = max([ex0 + WIDTH_PX / 2, *(x - half_w for x, _ in px)])
        hi_x = min([ex1 - WIDTH_PX / 2, *(x + half_w for x, _ in px)])
        lo_y = max([ey0 + HEIGHT_PX / 2, *(y - half_h for _, y in px)])
        hi_y = min([ey1 - HEIGHT_PX / 2, *(y + half_h for _, y in px)])
        if lo_x > hi_x or lo_y > hi_y:
            continue
        cx, cy = world_pixel(*view.center, zoom)
        center = view.center
        if not (lo_x <= cx <= hi_x and lo_y <= cy <= hi_y):
            center = pixel_to_lat_lon(min(max(cx, lo_x), hi_x), min(max(cy, lo_y), hi_y), zoom)
        bounds = view_bounds(center, zoom)
        blank = max(
            1.0 - roads.data_share(bounds, extract.bounds), 1.0 - extract.covered_share(bounds)
        )
        if blank > MAX_BLANK_SHARE:
            continue
        out.append(replace(view, center=center, zoom=zoom, id=f"{view.id}@zoom"))
    return out


def _truths(
    group: Sequence[BaseItem],
    view: Any,
    variant: str,
    drawer: MapEngine,
    roads: RoadGraph,
    spec_of: Callable[[str], Any],
) -> list[tuple[Any, bool]]:
    """Each item's truth for ``view`` drawn by ``drawer`` (or the reason it has none), and
    whether it can be answered (``nolabels``: not where it needs labels read)."""
    out: list[tuple[Any, bool]] = []
    for item in group:
        spec = spec_of(item.sample.task)
        if (
            variant == "nolabels"
            and spec.needs_labels is not None
            and spec.needs_labels(item.question)
        ):
            out.append((item.sample.ground_truth, False))
        elif spec.view_truth is not None:
            out.append((spec.view_truth(item.plan, item.question, drawer, view, roads), True))
        else:
            out.append((item.sample.ground_truth, True))
    return out


def _redrawn(
    items: Sequence[BaseItem],
    variant: str,
    engine: MapEngine,
    roads: RoadGraph,
    spec_of: Callable[[str], Any],
    report: VariantReport,
    add_image: Callable[[str, bytes], str],
    add_sample: Callable[[Sample], None],
    progress: bool,
) -> None:
    """``nolabels``, ``zoom`` and ``lang:XX``: each place drawn again (without labels, at a
    second zoom, or by an engine that writes labels in the language), each question's truth
    recomputed from that drawing (``TaskSpec.view_truth``; kept where the task has none;
    under ``nolabels`` a question that needs labels keeps it and is flagged unanswerable),
    and the views that keep at least one question rendered."""
    tag = variant_tag(variant)
    if variant == "zoom":
        drawer = engine
    elif variant == "nolabels":
        from maps.style_variants import without_labels

        drawer = engine.restyled(without_labels(engine.style))
    else:
        drawer = engine.in_language(variant.partition(":")[2])
    groups: dict[str, list[BaseItem]] = {}
    for item in items:
        groups.setdefault(item.plan.view.id, []).append(item)
    # per view: the drawing its copies are asked on, each item's truth there (or why none)
    chosen: dict[str, Any] = {}
    truths: dict[int, tuple[Any, bool]] = {}
    for vid, group in groups.items():
        view = group[0].plan.view
        if variant == "zoom":
            candidates = second_zooms(view, roads, engine.extract)
        else:
            candidates = [replace(view, id=f"{vid}@{tag}")]
        best: tuple[int, Any, list[tuple[Any, bool]]] | None = None
        for candidate in candidates:  # zoom: the first zoom that keeps every truth, else
            got = _truths(group, candidate, variant, drawer, roads, spec_of)  # the most
            n_kept = sum(not isinstance(t, str) for t, _ in got)
            if best is None or n_kept > best[0]:
                best = (n_kept, candidate, got)
            if n_kept == len(group):
                break
        if best is None:
            for item in group:
                report._leave_out(variant, item.sample.task, "no_second_zoom")
            continue
        chosen[vid] = best[1]
        for item, found in zip(group, best[2], strict=True):
            truths[id(item)] = found
    kept: list[tuple[BaseItem, Any, dict[str, Any], bool]] = []
    shares: dict[str, Any] = {}
    for item in items:
        base = item.sample
        if item.plan.view.id not in chosen:
            continue
        view = chosen[item.plan.view.id]
        truth, answerable = truths[id(item)]
        if isinstance(truth, str):
            report._leave_out(variant, base.task, truth)
            continue
        if not answerable:
            report.unanswerable.setdefault(variant, Counter())[base.task] += 1
        extra: dict[str, Any] = {}
        if variant == "zoom":
            lat, lon = view.center
            extra = {"zoom": view.zoom, "center_lat": round(lat, 7), "center_lon": round(lon, 7)}
        elif variant != "nolabels":
            from maps.style_variants import translated_share

            if view.id not in shares:
                shares[view.id] = translated_share(drawer, view)
            extra = {"translated_share": shares[view.id]}
        kept.append((item, truth, extra, answerable))
    wanted = {item.plan.view.id: chosen[item.plan.view.id] for item, *_ in kept}
    shots = drawer.render_many(list(wanted.values()), progress=progress)
    paths = {
        vid: add_image(f"{view.id}.png", shot.png)
        for (vid, view), shot in zip(wanted.items(), shots, strict=True)
    }
    for item, truth, extra, answerable in kept:
        base = item.sample
        sample = _variant_sample(
            base,
            variant,
            text=base.prompt.text,
            images=[paths[item.plan.view.id]],
            truth=truth,
            answerable=answerable,
            metadata=extra,
        )
        add_sample(sample)
        report.made[variant][base.task] += 1
