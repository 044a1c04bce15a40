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
- ``POST ROOT/export``: write the reviewed dataset to ``export_dir``, then redirect to
  the list, which says what was written (a reload does not export again).

A corrected route is checked on the map's road network (``annotations.checks``): steps
it does not connect are refused unless the reviewer ticks "store it anyway".  The
reviewer's name is kept in a cookie signed with a key made from the token, so no other
local page can set it.  Handlers that touch the store run in a thread pool; a store held
by another process past ``BUSY_TIMEOUT_S`` answers 503.
"""

import hashlib
import hmac
import io
import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlencode

from cartoqa.errors import CartoqaError, ReviewError, StaleEditError, StoreBusyError
from cartoqa.records import TRUTHS, Sample
from cartoqa.stores import Dataset

from .checks import route_problem
from .decisions import (
    REASONS,
    VERDICTS,
    Decision,
    DecisionStore,
    check_reviewer,
)
from .fields import (
    JSON_FIELD,
    edited_fields,
    form_fields,
    json_edited,
    read_form,
    truth_json,
)
from .guard import IMAGE_FOLDERS, MAX_BODY, TokenGate, image_file, sample_image
from .queue import STATUSES, Filters, ReviewQueue, Row

__all__ = ["check_export_dir", "create_app", "need_web"]

STATIC = Path(__file__).with_name("static")
STATIC_FILES = {"review.js": "text/javascript", "review.css": "text/css"}
REVIEWER_COOKIE = "cartoqa_reviewer"
DRAWING_CACHE = 64
MAX_FORM_BYTES = MAX_BODY
#: how long a request waits for a store another process holds, before "busy" (503)
BUSY_TIMEOUT_S = 3.0
#: the form's box that stores a corrected route the map's roads do not connect
ROUTE_ANYWAY = "route_anyway"
MAX_ROWS = 1000
_CACHED = {"Cache-Control": "private, max-age=600"}  # drawings and maps: their URLs change
_KEEP = ("reviewer", "reason", "reason_text")


def need_web() -> None:
    """Raise ``ReviewError`` naming the extra when the web packages are missing."""
    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import python_multipart  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ReviewError(
            f"the review tool needs {exc.name}: pip install 'cartoqa[review]' "
            "(bash scripts/setup.sh test installs it)"
        ) from None


def check_export_dir(dataset: Dataset, out: Path) -> None:
    """Refuse an export folder that would replace anything but an earlier export of this
    dataset: the dataset itself, a folder around or inside it, another dataset, a
    folder of other files."""
    src, dst = dataset.path.resolve(), out.resolve()
    if dst == src or src.is_relative_to(dst) or dst.is_relative_to(src):
        raise ReviewError(
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
        raise ReviewError(
            f"--export-to {out} holds something other than a reviewed export of "
            f"{dataset.manifest.name}: name a new folder (nothing there was changed)"
        )


def changes(before: dict[str, Any], after: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """(part, before, after) for each part of a truth a decision changed, whole (nothing
    cut): objects are followed down to the parts that changed ("features.bank.count"), so
    a feature table shows the rows that changed, not the table; a rejection is one line."""
    if after is None:
        return [("(sample)", "kept", "rejected")]
    out: list[tuple[str, str, str]] = []
    _diff(before, after, "", out)
    return out


_ABSENT = object()


def _diff(before: Any, after: Any, where: str, out: list[tuple[str, str, str]]) -> None:
    def text(v: Any) -> str:
        return "(none)" if v is _ABSENT else json.dumps(v, ensure_ascii=False)

    if isinstance(before, dict) and isinstance(after, dict):
        for k in sorted(set(before) | set(after)):
            b, a = before.get(k, _ABSENT), after.get(k, _ABSENT)
            if b is _ABSENT or a is _ABSENT:
                if not (b is _ABSENT and a is _ABSENT):
                    out.append((f"{where}{k}", text(b), text(a)))
            elif json.dumps(b, sort_keys=True) != json.dumps(a, sort_keys=True):
                _diff(b, a, f"{where}{k}.", out)
        return
    out.append((where.rstrip("."), text(before), text(after)))


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
        self._lock = threading.Lock()  # handlers run in a thread pool

    def get(self, key: tuple[str, int]) -> bytes | None:
        with self._lock:
            png = self._png.get(key)
            if png is not None:
                self._png.move_to_end(key)
            return png

    def put(self, key: tuple[str, int], png: bytes) -> None:
        with self._lock:
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
    if not name.strip():
        return "Write your name in 'Reviewer' first: every decision names its reviewer."
    try:
        check_reviewer(name)
    except ReviewError as exc:
        got = str(exc)
        if "nothing is left" in got:
            return f"{name!r} is not a name once invisible characters are removed: write yours."
        return got[0].upper() + got[1:] + "."
    return ""


class _Signer:
    """The reviewer's name kept in a cookie that only this tool can have written: browsers
    send a 127.0.0.1 cookie to every port, and let any local page write one, so the name
    is signed with a key made from the token (which other pages do not know)."""

    def __init__(self, token: str) -> None:
        self._key = hashlib.sha256(b"cartoqa review: reviewer cookie\0" + token.encode()).digest()

    def _mac(self, name: str) -> str:
        return hmac.new(self._key, name.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def value(self, name: str) -> str:
        return f"{quote(name, safe='')}.{self._mac(name)}"

    def name(self, cookie_header: str) -> str:
        """The first cookie of the name this tool signed, read from the raw header (another
        page's cookie of the same name is sent beside it, and ignored)."""
        for part in cookie_header.split(";"):
            key, eq, value = part.strip().partition("=")
            if key != REVIEWER_COOKIE or not eq:
                continue
            quoted, dot, mac = value.strip().strip('"').rpartition(".")
            if not dot:
                continue
            name = unquote(quoted)
            if hmac.compare_digest(mac, self._mac(name)):
                return name
        return ""


def create_app(
    dataset: Dataset,
    store_path: Path,
    *,
    token: str,
    required: int = 1,
    default_reviewer: str = "",
    export_dir: Path | None = None,
    hosts: tuple[str, ...] = (),
    disputed: set[str] | frozenset[str] | None = None,
) -> TokenGate:
    """The review tool for ``dataset``, its decisions in ``store_path`` (opened when the
    app starts), behind ``/<token>/``, answering requests whose Host is an address,
    ``localhost`` or one of ``hosts``.  Handlers that read the store run in a thread pool,
    so a store another process holds delays no other request; past ``BUSY_TIMEOUT_S`` the
    request is answered 503, "busy"."""
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
    signer = _Signer(token)

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        store = DecisionStore.open(
            store_path, dataset, required=required, busy_timeout_s=BUSY_TIMEOUT_S
        )
        state["store"] = store
        state["queue"] = ReviewQueue(dataset, store, disputed or ())
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
        return signer.name(request.headers.get("cookie", "")) or default_reviewer

    def sample_url(sid: str, f: Filters) -> str:
        q = urlencode(f.query())
        return f"{root}/sample/{sid}" + (f"?{q}" if q else "")

    def list_url(f: Filters) -> str:
        q = urlencode(f.query())
        return f"{root}/" + (f"?{q}" if q else "")

    def done_message(request: Request) -> str:
        """What the last decision stored, read from the store (not from the address)."""
        sid = request.query_params.get("done", "")
        st = store()
        d = st.latest(sid) if sid in queue().by_id else None
        if d is None:
            return ""
        text = f"{sid}: {d.verdict} by {d.reviewer} stored (version {d.version})"
        for twin in st.twins_of(sid):
            t = st.latest(twin)
            if t is not None and t.at == d.at and t.reason.startswith("follows the correction"):
                text += f"; {twin} corrected with it (version {t.version})"
        return text

    def exported_message(request: Request) -> str:
        """What the last export wrote, read from the export folder (not from the address)."""
        if export_dir is None or "exported" not in request.query_params:
            return ""
        try:
            manifest = json.loads((export_dir / "manifest.json").read_text(encoding="utf-8"))
            r = manifest["review"]
            return (
                f"Exported: {r['exported']} of {r['samples']} samples written to "
                f"{export_dir}, with {r['decisions']} decisions in {r['decisions_file']}."
            )
        except (OSError, ValueError, KeyError, TypeError):
            return ""

    # ------------------------------------------------------------------ the list

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> Any:
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
            "disputed": ["1"] if disputed is not None else [],
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
            with_runs=disputed is not None,
            unknown=unknown,
            disagreements=store().disagreements(),
            export_dir=str(export_dir) if export_dir else None,
            required=required,
            message=exported_message(request) or done_message(request),
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
        route_warning: str = "",
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
            image_url=f"{root}/{img}" if img and img.split("/", 1)[0] in IMAGE_FOLDERS else None,
            drawing_url=f"{root}/drawing/{sample.id}.png?v={version}",
            same_map=[(r, sample_url(r.sample.id, f)) for r in same_map],
            error=error,
            conflict=conflict,
            conflict_changes=conflict_changes,
            kept=kept,
            route_warning=route_warning,
            route_anyway=ROUTE_ANYWAY,
            message=done_message(request),
        )

    def no_sample(sid: str) -> HTMLResponse:
        return problem(404, "No such sample", f"{sid!r} is not a sample of this dataset.")

    @app.get("/sample/{sid}", response_class=HTMLResponse)
    def show(sid: str, request: Request) -> Any:
        sample = queue().by_id.get(sid)
        if sample is None:
            return no_sample(sid)
        return sample_page(request, sample, Filters.from_query(request.query_params))

    @app.post("/sample/{sid}", response_class=HTMLResponse)
    async def decide(sid: str, request: Request) -> Any:
        # the body is read here (the gate has bounded it); the store is used in a thread
        try:
            form = await request.form()
        except Exception:
            return problem(400, "Not a form", "Send the sample page's form.")
        values = {k: v for k, v in form.items() if isinstance(v, str)}
        return await run_in_threadpool(decide_form, sid, request, values)

    def decide_form(sid: str, request: Request, values: dict[str, str]) -> Any:
        sample = queue().by_id.get(sid)
        if sample is None:
            return no_sample(sid)
        f = Filters.from_query({k[2:]: v for k, v in values.items() if k.startswith("f_")})
        st = store()
        verdict = values.get("verdict", "")
        reviewer = values.get("reviewer", "")
        picked = (values.get("reason", ""), values.get("reason_text", ""))
        reason = "; ".join(x.strip() for x in picked if x.strip())
        try:
            seen = int(values.get("seen", ""))
        except ValueError:
            seen = -1
        version = st.version(sid)
        # the truth the form was filled from: what this reviewer saw at their version
        base = st.shown_at(sample, seen) if 0 <= seen <= version else st.shown_truth(sample)

        def again(status: int, error: str, route_warning: str = "") -> HTMLResponse:
            # what was typed, on the version it was typed on: a resubmit is still checked
            return sample_page(
                request,
                sample,
                f,
                status=status,
                base=base,
                values=values,
                seen=seen,
                error=error,
                route_warning=route_warning,
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
            except ReviewError as exc:
                return again(422, str(exc))
            if not part:
                return again(422, "Nothing was changed: edit the answer fields, or accept (a).")
            why = route_problem(edited)
            if why is not None and not values.get(ROUTE_ANYWAY):
                return again(
                    422,
                    f"The corrected steps are not connected on the map's roads: {why}. Fix "
                    "the steps, or tick 'store it anyway' if the map's road data is what is "
                    "wrong (every answer's connectivity is scored on it).",
                    route_warning=why,
                )
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
        except StoreBusyError:
            raise
        except ReviewError as exc:
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
            REVIEWER_COOKIE,
            signer.value(d.reviewer),
            httponly=True,
            samesite="strict",
            path=root,
        )
        return resp

    # ------------------------------------------------------------------ files

    @app.get("/drawing/{sid}.png")
    def drawing(sid: str) -> Any:
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
            path = sample_image(dataset.path, img) if img else None
            if img and path is None:
                return problem(404, "No image", f"{img!r} is not a file in the dataset's images/.")
            try:
                png = _draw_png(shown, path)
            except (CartoqaError, OSError) as exc:
                return problem(500, "Cannot draw", f"{sid}: {exc}")
            drawings.put(key, png)
        return Response(png, media_type="image/png", headers=_CACHED)

    @app.get("/images/{relative:path}")
    def image(relative: str) -> Any:
        return _image_response(image_file(dataset.path, relative))

    @app.get("/release/{relative:path}")
    def release_image(relative: str) -> Any:  # an imported release's images
        return _image_response(image_file(dataset.path, relative, "release"))

    def _image_response(path: Path | None) -> Any:
        if path is None:
            return problem(
                404,
                "No such image",
                "Only the files in the dataset's images/ (and an imported release's release/) "
                "are served.",
            )
        media = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}.get(
            path.suffix.lower(), "application/octet-stream"
        )
        return Response(path.read_bytes(), media_type=media, headers=_CACHED)

    @app.get("/static/{name}")
    def static(name: str) -> Any:
        if name not in STATIC_FILES:
            return problem(404, "Not found", "No such file.")
        return Response(
            (STATIC / name).read_bytes(),
            media_type=STATIC_FILES[name],
            headers={"Cache-Control": "private, max-age=60"},
        )

    @app.post("/export", response_class=HTMLResponse)
    def export() -> Any:
        if export_dir is None:
            return problem(
                404, "No export folder", "Start the tool with --export-to FOLDER to export here."
            )
        from .export import export_reviewed

        try:
            check_export_dir(dataset, export_dir)  # again: the folder may have changed
            with DecisionStore.open(store_path, dataset, required=required, read_only=True) as s:
                export_reviewed(dataset, s, export_dir, overwrite=True)
        except StoreBusyError:
            raise
        except CartoqaError as exc:
            return problem(409, "Not exported", str(exc))
        # POST, redirect, GET: a reload of the page shown after shows it again, it does
        # not export again
        return RedirectResponse(f"{root}/?exported=1", status_code=303)

    async def on_error(request: Request, exc: Exception) -> Any:
        if isinstance(exc, StoreBusyError) or (
            isinstance(exc, sqlite3.OperationalError)
            and ("locked" in str(exc) or "busy" in str(exc))
        ):
            resp = problem(
                503,
                "Busy",
                f"The review store is busy, try again: another process holds {store_path.name}. "
                "Nothing of this request was stored.",
            )
            resp.headers["Retry-After"] = "2"
            return resp
        return problem(
            500,
            "Server error",
            f"{type(exc).__name__}. A decision is stored only when the next page says so: "
            "reload the sample to see where it stands.",
        )

    app.add_exception_handler(Exception, on_error)
    return TokenGate(app, token, hosts=hosts, max_body=MAX_FORM_BYTES)
