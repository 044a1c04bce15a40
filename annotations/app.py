"""The review tool: a local web app where people accept, correct or reject ground truth
(issue 17, items 1 and 5).  ``cartoqa review DATASET`` serves it (``serve``).

Pages are server-rendered HTML (``annotations/templates``, Jinja with escaping on
everywhere); ``annotations/static/review.js`` adds the keyboard shortcuts and
nothing else, so the tool works without it.

- ``GET /``: progress, filters (task, status, city, zoom, reviewer), the matching
  samples, disagreements, the export button (with ``export_dir``).
- ``GET /sample/{id}``: the audit drawing (``annotations.drawing``) of the truth as it
  stands, the question as the model sees it, the answer fields of its kind
  (``annotations.fields``), the verdict buttons, the sample's decisions.
- ``POST /sample/{id}``: a decision.  It names the version the reviewer saw; one made
  on an older version is refused (409) with the change in between shown and the
  reviewer's edit kept in the form.  Then on to the next sample under the filter.
- ``GET /drawing/{id}.png``, ``GET /images/{file}``: the drawing, and the map itself
  (only files inside the dataset's ``images/``).
- ``POST /export``: write the reviewed dataset to ``export_dir``.

Security: every request carries the token (``?token=`` once, then a same-site,
HTTP-only cookie named after it; or an ``X-Cartoqa-Token`` header); a POST from
another origin is refused; a Content-Security-Policy allows only this server's
own script, style and images.  The server writes the decisions store and the
export folder, nothing else.
"""

import hashlib
import hmac
import io
import json
import socket
import sys
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from cartoqa.errors import CartoqaError
from cartoqa.records import Sample
from cartoqa.stores import Dataset

from .decisions import REASONS, VERDICTS, DecisionError, DecisionStore, StaleEditError
from .fields import JSON_FIELD, FormError, form_fields, read_form, truth_json
from .queue import STATUSES, Filters, ReviewQueue

__all__ = ["ReviewServerError", "create_app", "serve"]

STATIC = Path(__file__).with_name("static")
STATIC_FILES = {"review.js": "text/javascript", "review.css": "text/css"}
REVIEWER_COOKIE = "cartoqa_reviewer"
DRAWING_CACHE = 64
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
MAX_FORM_BYTES = 1_000_000
_CACHED = {"Cache-Control": "private, max-age=600"}  # drawings and maps: their URLs change


class ReviewServerError(CartoqaError):
    """The review server cannot start as asked."""


def _need_web() -> Any:
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


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def changes(before: dict[str, Any], after: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """(key, before, after) for each top-level key of a truth a decision changed, the values
    as JSON cut to 300 characters: what the page shows of another reviewer's edit."""
    if after is None:
        return [("(sample)", "kept", "rejected")]

    def cut(v: Any) -> str:
        s = json.dumps(v, ensure_ascii=False)
        return s if len(s) <= 300 else s[:299] + "…"

    return [
        (k, cut(before.get(k)), cut(after.get(k)))
        for k in sorted(set(before) | set(after))
        if not _same(before.get(k), after.get(k))
    ]


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


def image_file(dataset: Dataset, relative: str) -> Path | None:
    """The file ``relative`` names inside the dataset's ``images/`` folder, or None when it
    names anything else (``..``, an absolute path, a link out, a folder, nothing)."""
    root = (dataset.path / "images").resolve()
    if not relative or "\x00" in relative or "\\" in relative:
        return None
    try:
        path = (root / relative).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if not path.is_relative_to(root) or path == root or not path.is_file():
        return None
    return path


def _draw_png(sample: Sample, image: Path | None) -> bytes:
    from PIL import Image

    from .drawing import draw_sample

    if image is None:
        im = Image.new("RGB", (640, 400), (250, 250, 248))
    else:
        im = Image.open(image)
        im.load()
    out = io.BytesIO()
    draw_sample(sample, im).save(out, "PNG", optimize=False, compress_level=3)
    return out.getvalue()


def create_app(
    dataset: Dataset,
    store_path: Path,
    *,
    token: str,
    required: int = 1,
    default_reviewer: str = "",
    export_dir: Path | None = None,
) -> Any:
    """The FastAPI app of the review tool for ``dataset``, its decisions in ``store_path``
    (opened when the app starts, on the server's thread)."""
    _need_web()
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, RedirectResponse, Response
    from jinja2 import Environment, PackageLoader, select_autoescape
    from starlette.concurrency import run_in_threadpool

    if not token:
        raise ReviewServerError("the review server needs a token")
    pages = Environment(
        loader=PackageLoader("annotations", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    cookie = "cartoqa_review_" + hashlib.sha256(token.encode()).hexdigest()[:12]
    want = token.encode()
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
            dataset=dataset.manifest.name,
            attribution=dataset.manifest.attribution,
            **ctx,
        )
        return HTMLResponse(html, status_code=status)

    def problem(status: int, title: str, message: str) -> HTMLResponse:
        return page("problem.html", status, title=title, message=message)

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        given = (
            request.query_params.get("token")
            or request.headers.get("x-cartoqa-token")
            or request.cookies.get(cookie)
            or ""
        )
        if not hmac.compare_digest(given.encode("utf-8", "replace"), want):
            resp: Any = problem(
                403,
                "Token needed",
                "Open the address 'cartoqa review' printed, with its ?token=…; "
                "this server answers nothing without it.",
            )
        elif request.method != "GET" and not _same_origin(request):
            resp = problem(403, "Refused", "A form from another site cannot change decisions.")
        elif "token" in request.query_params and request.method == "GET":
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            resp = RedirectResponse(
                request.url.path + ("?" + urlencode(rest) if rest else ""), status_code=303
            )
            resp.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
        else:
            resp = await call_next(request)
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = (
            "same-origin"  # "no-referrer" makes forms send Origin: null
        )
        resp.headers["X-Frame-Options"] = "DENY"
        if "cache-control" not in resp.headers:
            resp.headers["Cache-Control"] = "no-store"
        return resp

    def reviewer_of(request: Request) -> str:
        return request.cookies.get(REVIEWER_COOKIE) or default_reviewer

    def sample_or_none(sid: str) -> Sample | None:
        return queue().by_id.get(sid)

    def link(sid: str | None, f: Filters) -> str | None:
        if sid is None:
            return None
        q = urlencode(f.query())
        return f"/sample/{sid}" + (f"?{q}" if q else "")

    # ------------------------------------------------------------------ pages

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Any:
        f = Filters.from_query(request.query_params)
        q = queue()
        every = q.all_rows()
        rows = q.rows(f, every)
        first = q.start(rows, reviewer_of(request))
        return page(
            "index.html",
            filters=f,
            query=urlencode(f.query()),
            rows=rows[:1000],
            hidden_rows=max(0, len(rows) - 1000),
            matching=len(rows),
            start=link(first.sample.id, f) if first else None,
            progress=q.progress(every),
            tasks=q.tasks,
            statuses=STATUSES,
            cities=q.cities,
            zooms=q.zooms,
            reviewers=q.reviewers(every),
            disagreements=store().disagreements(),
            export_dir=str(export_dir) if export_dir else None,
            required=required,
            message=request.query_params.get("done", ""),
        )

    def sample_page(
        request: Request,
        sample: Sample,
        f: Filters,
        *,
        status: int = 200,
        base: dict[str, Any] | None = None,
        values: dict[str, str] | None = None,
        error: str = "",
        conflict: Any = None,
        kept: bool = False,
        message: str = "",
    ) -> HTMLResponse:
        st = store()
        shown = st.shown_truth(sample)
        form_base = base if base is not None else shown
        fields = form_fields(form_base)
        if values:
            fields = [type(x)(**{**vars(x), "value": values.get(x.name, x.value)}) for x in fields]
        version = st.version(sample.id)
        every = queue().all_rows()
        before, after = queue().neighbours(sample.id, f, every)
        rows = queue().rows(f, every)
        position = next((i for i, r in enumerate(rows, 1) if r.sample.id == sample.id), None)
        img = sample.prompt.images[0] if sample.prompt.images else None
        history = st.history(sample.id)
        progress = queue().progress(every)
        return page(
            "sample.html",
            status,
            sample=sample,
            status_text=st.status(sample.id),
            version=version,
            fields=fields,
            base_json=truth_json(form_base),
            kept=kept,
            history=[(d, changes(d.truth_before, d.truth_after)) for d in reversed(history)],
            reasons=REASONS,
            verdicts=VERDICTS,
            reviewer=(values or {}).get("reviewer") or reviewer_of(request),
            reason=(values or {}).get("reason", ""),
            reason_text=(values or {}).get("reason_text", ""),
            prev=link(before, f),
            next=link(after, f),
            back="/" + (f"?{urlencode(f.query())}" if f.query() else ""),
            filters=f,
            position=position,
            matching=len(rows),
            progress=progress,
            task_progress=(sample.task, *progress["tasks"][sample.task]),
            image_url=f"/{img}" if img and img.startswith("images/") else None,
            drawing_url=f"/drawing/{sample.id}.png?v={version}",
            error=error,
            conflict=conflict,
            conflict_changes=changes(conflict.truth_before, conflict.truth_after)
            if conflict
            else [],
            message=message,
        )

    @app.get("/sample/{sid}", response_class=HTMLResponse)
    async def show(sid: str, request: Request) -> Any:
        sample = sample_or_none(sid)
        if sample is None:
            return problem(404, "No such sample", f"{sid!r} is not a sample of this dataset.")
        f = Filters.from_query(request.query_params)
        return sample_page(request, sample, f, message=request.query_params.get("done", ""))

    @app.post("/sample/{sid}", response_class=HTMLResponse)
    async def decide(sid: str, request: Request) -> Any:
        sample = sample_or_none(sid)
        if sample is None:
            return problem(404, "No such sample", f"{sid!r} is not a sample of this dataset.")
        if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
            return problem(413, "Too large", "A decision form is at most 1 MB.")
        form = await request.form()
        values = {k: v for k, v in form.items() if isinstance(v, str)}
        f = Filters.from_query({k[2:]: v for k, v in values.items() if k.startswith("f_")})
        st = store()
        shown = st.shown_truth(sample)
        verdict = values.get("verdict", "")
        reviewer = values.get("reviewer", "").strip()
        picked = (values.get("reason", ""), values.get("reason_text", ""))
        reason = "; ".join(x.strip() for x in picked if x.strip())

        def again(status: int, error: str, base: dict[str, Any] | None = None) -> HTMLResponse:
            return sample_page(
                request, sample, f, status=status, base=base, values=values, error=error
            )

        try:
            base = json.loads(values.get("base", ""))
            if not isinstance(base, dict):
                raise ValueError
        except ValueError:
            base = shown
        try:
            seen = int(values.get("seen", ""))
        except ValueError:
            return again(400, "The form lost the version it was made on: reload the sample.")
        if verdict not in VERDICTS:
            return again(400, f"Verdict {verdict!r}: press accept (a), correct (c) or reject (r).")
        if not reviewer:
            return again(
                422, "Write your name in 'Reviewer' first: every decision names its reviewer."
            )
        try:
            edited, part = read_form(base, values)
        except FormError as exc:
            return again(422, str(exc), base)
        # "accept" keeps the truth the reviewer saw (the form's base), "correct" stores the edit
        if verdict == "accept" and part:
            return again(
                422,
                "You edited the truth: press correct (c) to store the edit, or reload the "
                "sample to drop it.",
                base,
            )
        if verdict == "correct" and not part:
            return again(422, "Nothing was changed: edit the answer fields, or accept (a).", base)
        if verdict == "reject" and not reason:
            return again(
                422, "Say why it is rejected: pick a reason (keys 1-8) or write one.", base
            )
        try:
            d = st.decide(
                sample,
                reviewer=reviewer,
                verdict=verdict,
                seen=seen,
                truth=edited if verdict == "correct" else None,
                reason=reason,
            )
        except StaleEditError as exc:
            # nothing stored: the form shows the sample as it now stands, with the
            # reviewer's edit (the part they edited) and reason still in it
            keep = {k: values[k] for k in _KEEP if k in values}
            if part == "json":
                keep[JSON_FIELD] = values[JSON_FIELD]
            elif part == "fields":
                keep.update({k: v for k, v in values.items() if k not in _NOT_FIELDS})
            return sample_page(
                request,
                sample,
                f,
                status=409,
                values=keep,
                error=str(exc),
                conflict=exc.latest,
                kept=bool(part),
            )
        except DecisionError as exc:
            return again(422, str(exc), base)
        _, after = queue().neighbours(sample.id, f)
        done = f"{sample.id}: {d.verdict} stored (version {d.version})"
        target = link(after, f) or "/" + (f"?{urlencode(f.query())}" if f.query() else "")
        sep = "&" if "?" in target else "?"
        resp = RedirectResponse(target + sep + urlencode({"done": done}), status_code=303)
        resp.set_cookie(REVIEWER_COOKIE, reviewer, httponly=True, samesite="strict", path="/")
        return resp

    @app.get("/drawing/{sid}.png")
    async def drawing(sid: str) -> Any:
        sample = sample_or_none(sid)
        if sample is None:
            return problem(404, "No such sample", f"{sid!r} is not a sample of this dataset.")
        st = store()
        key = (sid, st.version(sid))
        png = drawings.get(key)
        if png is None:
            shown = sample.model_copy(update={"ground_truth": _truth_of(st.shown_truth(sample))})
            img = sample.prompt.images[0] if sample.prompt.images else None
            path = image_file(dataset, img[len("images/") :]) if img else None
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
        path = image_file(dataset, relative)
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
            with DecisionStore.open(store_path, dataset, required=required) as s:
                return export_reviewed(dataset, s, export_dir, overwrite=True)

        try:
            manifest = await run_in_threadpool(run)
        except CartoqaError as exc:
            return problem(500, "Export failed", str(exc))
        r = manifest.review
        done = (
            f"exported {r['exported']} of {r['samples']} samples to {export_dir} "
            f"({r['decisions']} decisions)"
        )
        return RedirectResponse("/?" + urlencode({"done": done}), status_code=303)

    return app


_KEEP = ("reviewer", "reason", "reason_text")
# form entries that are not answer fields
_NOT_FIELDS = {*_KEEP, "verdict", "seen", "base", JSON_FIELD}


def _truth_of(truth: dict[str, Any]) -> Any:
    from pydantic import TypeAdapter

    from cartoqa.records import GroundTruth

    return TypeAdapter(GroundTruth).validate_python(truth)


def _same_origin(request: Any) -> bool:
    """A POST's Origin (else its Referer) is this server; one with neither (a script
    holding the token) passes, an opaque "null" origin does not."""
    from urllib.parse import urlsplit

    origin = request.headers.get("origin") or request.headers.get("referer")
    if origin is None:
        return True
    got = urlsplit(origin)
    return got.scheme in ("http", "https") and got.netloc == request.headers.get("host")


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def serve(
    dataset_path: Path,
    store_path: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    required: int = 1,
    reviewer: str = "",
    export_dir: Path | None = None,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve the review tool until stopped; prints the address with its token."""
    import secrets

    from cartoqa.stores import load_dataset

    _need_web()
    import uvicorn

    dataset = load_dataset(dataset_path)
    if export_dir is not None and export_dir.resolve() == dataset.path.resolve():
        raise ReviewServerError(
            f"--export-to {export_dir} is the dataset itself: name a new folder"
        )
    with DecisionStore.open(store_path, dataset, required=required):
        pass  # a store that cannot open fails here, before the address is printed
    token = secrets.token_urlsafe(24)
    app = create_app(
        dataset,
        store_path,
        token=token,
        required=required,
        default_reviewer=reviewer,
        export_dir=export_dir,
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ReviewServerError(
            f"cannot listen on {host}:{port} ({exc.strerror}): give another --port "
            "(0 picks a free one)"
        ) from None
    sock.listen(64)
    bound = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    if not _loopback(host):
        echo(
            f"warning: serving on {host}, not only this machine: anyone who can reach it and "
            "has the address below (its token) can change decisions, and plain HTTP is not "
            "encrypted; share it on a trusted network only"
        )
    echo(f"reviewing {dataset.manifest.name} ({len(dataset)} samples); decisions in {store_path}")
    echo(f"open http://{shown_host}:{bound}/?token={token}")
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
