"""The review tool: a local web app where people accept, correct or reject ground truth
(issue 17, item 1).  ``annotations.server.serve`` runs it; ``annotations.guard`` holds
its defences (item 5).

Every address starts with ``/<token>/`` (``ROOT`` below).  Pages are server-rendered
HTML (``annotations/templates``, Jinja, escaping on everywhere);
``annotations/static/review.js`` adds the keyboard shortcuts and nothing else, so the
tool works without it.

- ``GET ROOT/``: progress, filters (task, status, city, zoom, reviewer and not
  reviewer), the matching samples, disagreements, the export button (with
  ``export_dir``).
- ``GET ROOT/sample/{id}``: the audit drawing (``annotations.drawing``) of the truth
  as it stands, the question as the model sees it, the answer fields of its kind
  (``annotations.fields``), the verdict buttons, the samples asking of the same map,
  and the sample's decisions.
- ``POST ROOT/sample/{id}``: a decision, made on the version the page showed
  (``seen``).  One made on an older version is refused (409): the page shows the
  change that came in between, and keeps the fields this reviewer edited (only
  those) over the new truth.  A refused form (422) keeps what was typed and the
  version it was made on.  Then on to the next sample under the filter.
- ``GET ROOT/drawing/{id}.png``, ``GET ROOT/images/{file}``: the drawing, and the
  map itself (only files inside the dataset's ``images/``).
- ``POST ROOT/export``: write the reviewed dataset to ``export_dir``.
"""

import io
import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlencode

from cartoqa.errors import CartoqaError
from cartoqa.records import TRUTHS, Sample
from cartoqa.stores import Dataset

from .decisions import REASONS, VERDICTS, Decision, DecisionError, DecisionStore, StaleEditError
from .fields import (
    JSON_FIELD,
    FormError,
    edited_fields,
    form_fields,
    json_edited,
    read_form,
    truth_json,
)
from .guard import TokenGate, image_file
from .queue import STATUSES, Filters, ReviewQueue, Row

__all__ = ["ReviewServerError", "check_export_dir", "create_app", "need_web"]

STATIC = Path(__file__).with_name("static")
STATIC_FILES = {"review.js": "text/javascript", "review.css": "text/css"}
REVIEWER_COOKIE = "cartoqa_reviewer"
MAX_REVIEWER = 200
DRAWING_CACHE = 64
MAX_FORM_BYTES = 1_000_000
MAX_ROWS = 1000
_CACHED = {"Cache-Control": "private, max-age=600"}  # drawings and maps: their URLs change
_KEEP = ("reviewer", "reason", "reason_text")


class ReviewServerError(CartoqaError):
    """The review server cannot start or act as asked."""


def need_web() -> None:
    """Raise ``ReviewServerError`` naming the extra when the web packages are missing."""
    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import python_multipart  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ReviewServerError(
            f"the review tool needs {exc.name}: pip install 'cartoqa[review]' "
            "(bash scripts/setup.sh test installs it)"
        ) from None


def check_export_dir(dataset: Dataset, out: Path) -> None:
    """Refuse an export folder that would replace anything but an earlier export of this
    dataset: the dataset itself, a folder around or inside it, another dataset, a
    folder of other files."""
    src, dst = dataset.path.resolve(), out.resolve()
    if dst == src or src.is_relative_to(dst) or dst.is_relative_to(src):
        raise ReviewServerError(
            f"--export-to {out} is the dataset, or a folder around or inside it: name a new "
            "folder beside it"
        )
    if not dst.exists() or (dst.is_dir() and not any(dst.iterdir())):
        return
    try:
        manifest = json.loads((dst / "manifest.json").read_text(encoding="utf-8"))
        source = (manifest.get("review") or {}).get("source") or {}
    except (OSError, ValueError, AttributeError):
        source = {}
    if (
        source.get("samples_sha256") != dataset.manifest.samples_sha256
        or (dst / "review.sqlite").exists()
    ):
        raise ReviewServerError(
            f"--export-to {out} holds something other than a reviewed export of "
            f"{dataset.manifest.name}: name a new folder (nothing there was changed)"
        )


def changes(before: dict[str, Any], after: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """(part, before, after) for each top-level key of a truth a decision changed, the
    values as JSON cut to 300 characters; a rejection is one line."""
    if after is None:
        return [("(sample)", "kept", "rejected")]

    def cut(v: Any) -> str:
        s = json.dumps(v, ensure_ascii=False)
        return s if len(s) <= 300 else s[:299] + "…"

    return [
        (k, cut(before.get(k)), cut(after.get(k)))
        for k in sorted(set(before) | set(after))
        if json.dumps(before.get(k), sort_keys=True) != json.dumps(after.get(k), sort_keys=True)
    ]


def shown_before(sample: Sample, history: list[Decision]) -> list[dict[str, Any]]:
    """For each decision (oldest first), the truth its reviewer was shown: the one a
    rejection dropped stays shown, where the store records the rejected sample as {}."""
    shown = sample.ground_truth.model_dump(mode="json")
    out = []
    for d in history:
        out.append(d.truth_before or shown)
        if d.truth_after is not None:
            shown = d.truth_after
    return out


def _merge_json(raw: str, base: dict[str, Any], new: dict[str, Any]) -> str:
    """The JSON a reviewer edited from ``base``, its edits (the top-level keys they
    changed or removed) made on ``new`` instead; their text as it was when not JSON."""
    try:
        theirs = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(theirs, dict):
        return raw
    merged = dict(new)
    for k in set(theirs) | set(base):
        if k not in theirs:
            merged.pop(k, None)
        elif theirs[k] != base.get(k):
            merged[k] = theirs[k]
    return truth_json(merged)


class _Drawings:
    """The audit drawings made, by (sample id, version), the newest ``DRAWING_CACHE``."""

    def __init__(self) -> None:
        self._png: OrderedDict[tuple[str, int], bytes] = OrderedDict()

    def get(self, key: tuple[str, int]) -> bytes | None:
        png = self._png.get(key)
        if png is not None:
            self._png.move_to_end(key)
        return png

    def put(self, key: tuple[str, int], png: bytes) -> None:
        self._png[key] = png
        while len(self._png) > DRAWING_CACHE:
            self._png.popitem(last=False)


def _draw_png(sample: Sample, image: Path | None) -> bytes:
    from PIL import Image

    from .drawing import draw_sample

    if image is None:
        im = Image.new("RGB", (640, 400), (250, 250, 248))
    else:
        im = Image.open(image)
        im.load()
    out = io.BytesIO()
    draw_sample(sample, im).save(out, "PNG", compress_level=3)
    return out.getvalue()


def _reviewer_problem(name: str) -> str:
    if not name:
        return "Write your name in 'Reviewer' first: every decision names its reviewer."
    if len(name) > MAX_REVIEWER:
        return f"A reviewer's name is at most {MAX_REVIEWER} characters."
    if not any(ch.isalnum() for ch in name):
        return f"{name!r} is not a name: use letters or digits."
    return ""


def create_app(
    dataset: Dataset,
    store_path: Path,
    *,
    token: str,
    required: int = 1,
    default_reviewer: str = "",
    export_dir: Path | None = None,
) -> TokenGate:
    """The review tool for ``dataset``, its decisions in ``store_path`` (opened when the
    app starts, on the server's thread), behind ``/<token>/``."""
    need_web()
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, RedirectResponse, Response
    from jinja2 import Environment, PackageLoader, select_autoescape
    from starlette.concurrency import run_in_threadpool

    root = "/" + token
    pages = Environment(
        loader=PackageLoader("annotations", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    state: dict[str, Any] = {}
    drawings = _Drawings()

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        store = DecisionStore.open(store_path, dataset, required=required)
        state["store"] = store
        state["queue"] = ReviewQueue(dataset, store)
        yield
        store.close()

    app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)

    def store() -> DecisionStore:
        return state["store"]

    def queue() -> ReviewQueue:
        return state["queue"]

    def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = pages.get_template(name).render(
            root=root,
            dataset=dataset.manifest.name,
            attribution=dataset.manifest.attribution,
            **ctx,
        )
        return HTMLResponse(html, status_code=status)

    def problem(status: int, title: str, detail: str) -> HTMLResponse:
        return page("problem.html", status, title=title, detail=detail)

    def reviewer_of(request: Request) -> str:
        return unquote(request.cookies.get(REVIEWER_COOKIE, "")) or default_reviewer

    def sample_url(sid: str, f: Filters) -> str:
        q = urlencode(f.query())
        return f"{root}/sample/{sid}" + (f"?{q}" if q else "")

    def list_url(f: Filters) -> str:
        q = urlencode(f.query())
        return f"{root}/" + (f"?{q}" if q else "")

    def done_message(request: Request) -> str:
        """What the last decision stored, read from the store (not from the address)."""
        sid = request.query_params.get("done", "")
        d = store().latest(sid) if sid in queue().by_id else None
        return f"{sid}: {d.verdict} by {d.reviewer} stored (version {d.version})" if d else ""

    # ------------------------------------------------------------------ the list

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Any:
        f = Filters.from_query(request.query_params)
        q = queue()
        every = q.all_rows()
        rows = q.rows(f, every)
        first = q.start(rows, reviewer_of(request))
        reviewers = q.reviewers(every)
        known = {
            "task": q.tasks,
            "status": list(STATUSES),
            "city": q.cities,
            "zoom": [str(z) for z in q.zooms],
            "reviewer": reviewers,
            "not_reviewer": reviewers,
        }
        unknown = [
            f"No sample has {key.replace('_', ' ')} {value!r}."
            for key, value in f.query().items()
            if value not in known[key]
        ]
        return page(
            "index.html",
            filters=f,
            query=urlencode(f.query()),
            rows=rows[:MAX_ROWS],
            hidden_rows=max(0, len(rows) - MAX_ROWS),
            matching=len(rows),
            start=sample_url(first.sample.id, f) if first else None,
            progress=q.progress(every),
            tasks=q.tasks,
            statuses=STATUSES,
            cities=q.cities,
            zooms=q.zooms,
            reviewers=reviewers,
            unknown=unknown,
            disagreements=store().disagreements(),
            export_dir=str(export_dir) if export_dir else None,
            required=required,
            message=done_message(request),
        )

    # ------------------------------------------------------------------ one sample

    def sample_page(
        request: Request,
        sample: Sample,
        f: Filters,
        *,
        status: int = 200,
        base: dict[str, Any] | None = None,
        values: dict[str, str] | None = None,
        seen: int | None = None,
        error: str = "",
        conflict: Decision | None = None,
        kept: bool = False,
    ) -> HTMLResponse:
        st, q = store(), queue()
        shown = st.shown_truth(sample)
        form_base = base if base is not None else shown
        values = values or {}
        fields = [
            type(x)(**{**vars(x), "value": values.get(x.name, x.value)})
            for x in form_fields(form_base)
        ]
        version = st.version(sample.id)
        every = q.all_rows()
        before, after = q.neighbours(sample.id, f, every)
        rows = q.rows(f, every)
        position = next((i for i, r in enumerate(rows, 1) if r.sample.id == sample.id), None)
        progress = q.progress(every)
        img = sample.prompt.images[0] if sample.prompt.images else None
        same_map: list[Row] = [
            r
            for r in every
            if img and r.sample.prompt.images[:1] == [img] and r.sample.id != sample.id
        ]
        history = st.history(sample.id)
        befores = shown_before(sample, history)
        conflict_changes: list[tuple[str, str, str]] = []
        if conflict is not None:
            at = next(i for i, d in enumerate(history) if d.seq == conflict.seq)
            conflict_changes = changes(befores[at], conflict.truth_after)
        return page(
            "sample.html",
            status,
            sample=sample,
            status_text=st.status(sample.id),
            version=version,
            seen=version if seen is None else seen,
            fields=fields,
            history=[
                (d, changes(b, d.truth_after))
                for d, b in reversed(list(zip(history, befores, strict=True)))
            ],
            reasons=REASONS,
            verdicts=VERDICTS,
            reviewer=values.get("reviewer") or reviewer_of(request),
            reason=values.get("reason", ""),
            reason_text=values.get("reason_text", ""),
            prev=sample_url(before, f) if before else None,
            next=sample_url(after, f) if after else None,
            back=list_url(f),
            filters=f,
            position=position,
            matching=len(rows),
            progress=progress,
            task_progress=(sample.task, *progress["tasks"][sample.task]),
            image_url=f"{root}/{img}" if img and img.startswith("images/") else None,
            drawing_url=f"{root}/drawing/{sample.id}.png?v={version}",
            same_map=[(r, sample_url(r.sample.id, f)) for r in same_map],
            error=error,
            conflict=conflict,
            conflict_changes=conflict_changes,
            kept=kept,
            message=done_message(request),
        )

    def no_sample(sid: str) -> HTMLResponse:
        return problem(404, "No such sample", f"{sid!r} is not a sample of this dataset.")

    @app.get("/sample/{sid}", response_class=HTMLResponse)
    async def show(sid: str, request: Request) -> Any:
        sample = queue().by_id.get(sid)
        if sample is None:
            return no_sample(sid)
        return sample_page(request, sample, Filters.from_query(request.query_params))

    @app.post("/sample/{sid}", response_class=HTMLResponse)
    async def decide(sid: str, request: Request) -> Any:
        sample = queue().by_id.get(sid)
        if sample is None:
            return no_sample(sid)
        if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
            return problem(413, "Too large", "A decision form is at most 1 MB.")
        try:
            form = await request.form()
        except Exception:
            return problem(400, "Not a form", "Send the sample page's form.")
        values = {k: v for k, v in form.items() if isinstance(v, str)}
        f = Filters.from_query({k[2:]: v for k, v in values.items() if k.startswith("f_")})
        st = store()
        verdict = values.get("verdict", "")
        reviewer = values.get("reviewer", "").strip()
        picked = (values.get("reason", ""), values.get("reason_text", ""))
        reason = "; ".join(x.strip() for x in picked if x.strip())
        try:
            seen = int(values.get("seen", ""))
        except ValueError:
            seen = -1
        version = st.version(sid)
        # the truth the form was filled from: what this reviewer saw at their version
        base = st.shown_at(sample, seen) if 0 <= seen <= version else st.shown_truth(sample)

        def again(status: int, error: str) -> HTMLResponse:
            # what was typed, on the version it was typed on: a resubmit is still checked
            return sample_page(
                request, sample, f, status=status, base=base, values=values, seen=seen, error=error
            )

        def conflict(latest: Decision, message: str) -> HTMLResponse:
            # the sample as it stands now, with the fields this reviewer edited (only those)
            theirs = edited_fields(base, values)
            keep = {k: values[k] for k in _KEEP if k in values}
            keep.update({k: values[k] for k in theirs})
            json_too = not theirs and json_edited(base, values)
            if json_too:
                keep[JSON_FIELD] = _merge_json(values[JSON_FIELD], base, st.shown_truth(sample))
            return sample_page(
                request,
                sample,
                f,
                status=409,
                values=keep,
                error=message,
                conflict=latest,
                kept=bool(theirs) or json_too,
            )

        if seen < 0 or seen > version:
            return again(400, "The form lost the version it was made on: reload the sample.")
        if verdict not in VERDICTS:
            return again(400, f"Verdict {verdict!r}: press accept (a), correct (c) or reject (r).")
        if seen != version:
            latest = st.latest(sid)
            assert latest is not None  # seen < version
            return conflict(
                latest,
                f"{sid} was changed while you looked at version {seen}: {latest.reviewer} "
                f"made it '{latest.verdict}' at {latest.at} (version {latest.version}); "
                "your decision was not stored, look again",
            )
        trouble = _reviewer_problem(reviewer)
        if trouble:
            return again(422, trouble)
        edited: dict[str, Any] | None = None
        if verdict == "correct":
            try:
                edited, part = read_form(base, values)
            except FormError as exc:
                return again(422, str(exc))
            if not part:
                return again(422, "Nothing was changed: edit the answer fields, or accept (a).")
        elif verdict == "accept" and (edited_fields(base, values) or json_edited(base, values)):
            return again(
                422,
                "You edited the truth: press correct (c) to store the edit, or reload the "
                "sample to drop it.",
            )
        elif verdict == "reject" and not reason:
            return again(422, "Say why it is rejected: pick a reason (keys 1-8) or write one.")
        try:
            d = st.decide(
                sample, reviewer=reviewer, verdict=verdict, seen=seen, truth=edited, reason=reason
            )
        except StaleEditError as exc:
            return conflict(exc.latest, str(exc))
        except DecisionError as exc:
            return again(422, str(exc))
        # the next sample under the filter, from the top once past the last
        every = queue().all_rows()
        _, after = queue().neighbours(sid, f, every)
        if after is None:
            after = next((r.sample.id for r in queue().rows(f, every) if r.sample.id != sid), None)
        target = sample_url(after, f) if after else list_url(f)
        sep = "&" if "?" in target else "?"
        resp = RedirectResponse(target + sep + urlencode({"done": d.sample_id}), status_code=303)
        resp.set_cookie(
            REVIEWER_COOKIE, quote(reviewer, safe=""), httponly=True, samesite="strict", path=root
        )
        return resp

    # ------------------------------------------------------------------ files

    @app.get("/drawing/{sid}.png")
    async def drawing(sid: str) -> Any:
        sample = queue().by_id.get(sid)
        if sample is None:
            return no_sample(sid)
        st = store()
        key = (sid, st.version(sid))
        png = drawings.get(key)
        if png is None:
            shown = sample.model_copy(
                update={"ground_truth": TRUTHS.validate_python(st.shown_truth(sample))}
            )
            img = sample.prompt.images[0] if sample.prompt.images else None
            path = image_file(dataset.path, img.removeprefix("images/")) if img else None
            if img and path is None:
                return problem(404, "No image", f"{img!r} is not a file in the dataset's images/.")
            try:
                png = await run_in_threadpool(_draw_png, shown, path)
            except (CartoqaError, OSError) as exc:
                return problem(500, "Cannot draw", f"{sid}: {exc}")
            drawings.put(key, png)
        return Response(png, media_type="image/png", headers=_CACHED)

    @app.get("/images/{relative:path}")
    async def image(relative: str) -> Any:
        path = image_file(dataset.path, relative)
        if path is None:
            return problem(
                404, "No such image", "Only the files in the dataset's images/ are served."
            )
        media = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}.get(
            path.suffix.lower(), "application/octet-stream"
        )
        return Response(path.read_bytes(), media_type=media, headers=_CACHED)

    @app.get("/static/{name}")
    async def static(name: str) -> Any:
        if name not in STATIC_FILES:
            return problem(404, "Not found", "No such file.")
        return Response(
            (STATIC / name).read_bytes(),
            media_type=STATIC_FILES[name],
            headers={"Cache-Control": "private, max-age=60"},
        )

    @app.post("/export", response_class=HTMLResponse)
    async def export() -> Any:
        if export_dir is None:
            return problem(
                404, "No export folder", "Start the tool with --export-to FOLDER to export here."
            )
        from .export import export_reviewed

        def run() -> Any:
            check_export_dir(dataset, export_dir)  # again: the folder may have changed
            with DecisionStore.open(store_path, dataset, required=required) as s:
                return export_reviewed(dataset, s, export_dir, overwrite=True)

        try:
            manifest = await run_in_threadpool(run)
        except CartoqaError as exc:
            return problem(409, "Not exported", str(exc))
        r = manifest.review
        return page(
            "problem.html",
            title="Exported",
            detail=f"{r['exported']} of {r['samples']} samples written to {export_dir}, with "
            f"{r['decisions']} decisions in {r['decisions_file']}.",
        )

    async def on_error(request: Request, exc: Exception) -> Any:
        return problem(
            500,
            "Server error",
            f"{type(exc).__name__}. A decision is stored only when the next page says so: "
            "reload the sample to see where it stands.",
        )

    app.add_exception_handler(Exception, on_error)
    return TokenGate(app, token)
