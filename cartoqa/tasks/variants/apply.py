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
- ``zoom``: the same centre, markers and paths at a second zoom (``second_zoom``: zoom - 1,
  else zoom + 1), each truth recomputed from that drawing (``TaskSpec.view_truth``: the
  names the answer needs must still be drawn, the features counted again); metadata
  ``zoom`` is the new zoom;
- ``lang:XX``: the same view drawn with every label from ``name:XX`` where the object has
  it, else ``name`` (``maps.MapEngine.in_language``); each truth recomputed from that
  drawing (road and feature names in the language); metadata ``translated_share``, the
  share of the view's named objects that have ``name:XX``
  (``maps.style_variants.translated_share``).

``zoom`` and ``lang:XX`` are written here and the map-feature tasks recompute their truths
for them (``TaskSpec.view_truth``), but SRN and MML do not yet (their names must be checked
as drawn on the new drawing), so ``BUILT`` leaves both out and a build that asks for them is
refused before any work.

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

__all__ = ["BUILT", "BaseItem", "VariantReport", "check_buildable", "make_variants"]

#: the variants a build makes now, in the order their samples are written ("lang:XX" for
#: every language code)
BUILT = ("text", "image+text", "coords", "greyscale", "nolabels")


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


def check_buildable(variants: Sequence[str]) -> None:
    """Refuse, before any work, the variants a build cannot make yet."""
    later = [
        v for v in variants if v not in BUILT and not (v.startswith("lang:") and "lang:XX" in BUILT)
    ]
    if later:
        raise CartoqaError(
            f"--variants {','.join(later)}: not built yet (language labels and zoom pairs are "
            f"coming); build some of {', '.join(BUILT)}"
        )


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
    check_buildable(variants)
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
    else:  # pragma: no cover - check_buildable refused it
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


def second_zoom(view: View, roads: RoadGraph, extract: Any) -> View | None:
    """The same centre, markers and paths at zoom - 1 (if at least 15), else zoom + 1 (if at
    most 19), where the markers and paths stay ``MARGIN_PX`` inside the image, the view inside
    the extract and at most ``MAX_BLANK_SHARE`` of it past the data's edge (the rules every
    base view keeps); None where neither zoom does.  Its id is the view's with "@zoom"."""
    from maps import HEIGHT_PX, WIDTH_PX

    from ..views import MARGIN_PX, MAX_BLANK_SHARE, view_bounds, view_pixels

    points = [(m.lat, m.lon) for m in view.markers] + [
        p for path in view.paths for p in path.points
    ]
    for zoom in (view.zoom - 1, view.zoom + 1):
        if not 15 <= zoom <= 19:
            continue
        px = view_pixels(view.center, zoom, points)
        if any(
            not (MARGIN_PX <= x <= WIDTH_PX - MARGIN_PX and MARGIN_PX <= y <= HEIGHT_PX - MARGIN_PX)
            for x, y in px
        ):
            continue
        bounds = view_bounds(view.center, zoom)
        s, w, n, e = bounds
        es, ew, en, ee = extract.bounds
        if s < es or w < ew or n > en or e > ee:
            continue
        blank = max(
            1.0 - roads.data_share(bounds, extract.bounds), 1.0 - extract.covered_share(bounds)
        )
        if blank > MAX_BLANK_SHARE:
            continue
        return replace(view, zoom=zoom, id=f"{view.id}@zoom")
    return None


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
    views: dict[str, Any] = {}
    if variant == "zoom":
        drawer = engine
        for item in items:
            vid = item.plan.view.id
            if vid not in views:
                views[vid] = second_zoom(item.plan.view, roads, engine.extract)
    else:
        if variant == "nolabels":
            from maps.style_variants import without_labels

            drawer = engine.restyled(without_labels(engine.style))
        else:
            drawer = engine.in_language(variant.partition(":")[2])
        for item in items:
            views.setdefault(
                item.plan.view.id, replace(item.plan.view, id=f"{item.plan.view.id}@{tag}")
            )
    kept: list[tuple[BaseItem, Any, dict[str, Any], bool]] = []
    shares: dict[str, Any] = {}
    for item in items:
        base, spec = item.sample, spec_of(item.sample.task)
        view = views[item.plan.view.id]
        if view is None:
            report._leave_out(variant, base.task, "no_second_zoom")
            continue
        truth, answerable = base.ground_truth, True
        if (
            variant == "nolabels"
            and spec.needs_labels is not None
            and spec.needs_labels(item.question)
        ):
            answerable = False
            report.unanswerable.setdefault(variant, Counter())[base.task] += 1
        elif spec.view_truth is not None:
            truth = spec.view_truth(item.plan, item.question, drawer, view)
            if isinstance(truth, str):
                report._leave_out(variant, base.task, truth)
                continue
        extra: dict[str, Any] = {}
        if variant == "zoom":
            extra = {"zoom": view.zoom}
        elif variant != "nolabels":
            from maps.style_variants import translated_share

            if view.id not in shares:
                shares[view.id] = translated_share(drawer, view)
            extra = {"translated_share": shares[view.id]}
        kept.append((item, truth, extra, answerable))
    wanted = {item.plan.view.id: views[item.plan.view.id] for item, *_ in kept}
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
