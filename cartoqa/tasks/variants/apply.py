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
  prompt and truth unchanged;
- ``nolabels``: the same view drawn with the style's labels removed
  (``maps.style_variants.without_labels``); a question that needs labels read
  (``TaskSpec.needs_labels``) keeps its truth and is flagged ``answerable: false``; a task
  whose truth follows what the style draws (``TaskSpec.view_truth``) gets the truth of
  the new render, and a question whose truth cannot be recomputed is left out (counted).

A task without ``describe`` has no text twin: it is counted under ``left_out`` with the
reason, as are the other variants a task cannot take.  ``lang:XX`` and ``zoom`` are named
(``VARIANT_NAMES``) but not built yet: a build that asks for them is refused before any
work.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cartoqa.errors import CartoqaError
from cartoqa.records import Sample

from .names import ANSWERABLE_KEY, BASE_KEY, VARIANT_KEY, variant_tag

if TYPE_CHECKING:
    from maps import MapEngine
    from maps.roads import RoadGraph

    from ..templates import PromptSet
    from ..views import Plan, Question

__all__ = ["BUILT", "BaseItem", "VariantReport", "check_buildable", "make_variants"]

#: the variants a build makes now, in the order their samples are written
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
    later = [v for v in variants if v not in BUILT]
    if later:
        raise CartoqaError(
            f"--variants {','.join(later)}: named but not built yet (language labels and "
            f"zoom pairs are coming); build some of {', '.join(BUILT)}"
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
        if variant == "nolabels":
            _nolabels(items, engine, spec_of, report, add_image, add_sample, progress)
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
) -> Sample:
    extra: dict[str, Any] = {VARIANT_KEY: variant, BASE_KEY: base.id}
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


def _nolabels(
    items: Sequence[BaseItem],
    engine: MapEngine,
    spec_of: Callable[[str], Any],
    report: VariantReport,
    add_image: Callable[[str, bytes], str],
    add_sample: Callable[[Sample], None],
    progress: bool,
) -> None:
    """Render each view once without labels, then copy its questions."""
    from maps.style_variants import without_labels

    plain = engine.restyled(without_labels(engine.style))
    views: dict[str, Any] = {}
    for item in items:
        views.setdefault(item.plan.view.id, item.plan.view)
    shots = plain.render_many(list(views.values()), progress=progress)
    paths: Mapping[str, str] = {
        vid: add_image(f"{vid}@nolabels.png", shot.png)
        for vid, shot in zip(views, shots, strict=True)
    }
    for item in items:
        base, spec = item.sample, spec_of(item.sample.task)
        images = [paths[item.plan.view.id]]
        if spec.needs_labels is not None and spec.needs_labels(item.question):
            sample = _variant_sample(
                base, "nolabels", text=base.prompt.text, images=images, answerable=False
            )
            report.unanswerable.setdefault("nolabels", Counter())[base.task] += 1
        elif spec.view_truth is not None:
            truth = spec.view_truth(item.plan, item.question, plain, item.plan.view)
            if isinstance(truth, str):
                report._leave_out("nolabels", base.task, truth)
                continue
            sample = _variant_sample(
                base, "nolabels", text=base.prompt.text, images=images, truth=truth
            )
        else:
            sample = _variant_sample(base, "nolabels", text=base.prompt.text, images=images)
        add_sample(sample)
        report.made["nolabels"][base.task] += 1
