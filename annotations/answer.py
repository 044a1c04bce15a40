"""``cartoqa answer DATASET --as NAME``: the review tool's second mode, where a person
answers the questions blind, each answer stored at once as a run record (issue 33).

The person sees what a model sees, the image(s) and the prompt, and nothing else: no
truth, no audit drawing, no other person's answers.  Each answer is appended to the run
store of model ``human:NAME`` (``cartoqa.stores.RunStore``, named as ``cartoqa run``
names its stores), so ``cartoqa score``, ``report`` and the exports read a person's
sitting as they read a model's run.  The store is the only state: a sitting resumes
from it after the server is stopped or killed.

Behind the same ``TokenGate`` as the review tool (``/<token>/``):

- ``GET ROOT/``: progress (answered / total), the sitting's questions, which are
  answered, and the next one to answer.
- ``GET ROOT/q/{id}``: one question and its answer form (``annotations.answer_forms``),
  with a "served" stamp signed with a key made from the token: the seconds from the page
  served to the answer posted are the record's ``latency_s`` (the page's timer is for
  the person only).
- ``POST ROOT/q/{id}``: the answer.  A refused form (422) is shown again as typed; a
  question already answered (another tab) keeps its first answer (409, nothing stored).
  Then on to the next unanswered question after it.
"""

import hashlib
import hmac
import random
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError, ReviewError
from cartoqa.records import RunRecord, Sample
from cartoqa.stores import Dataset, RunStore

from .answer_forms import ACTIONS, MAX_LEGS, answer_form, read_answer
from .app import need_web
from .guard import IMAGE_FOLDERS, MAX_BODY, TokenGate, sample_image
from .server import allowed_hosts, listen, run_on

__all__ = [
    "ANSWER_STATIC",
    "check_name",
    "create_answer_app",
    "human_model",
    "open_sitting_store",
    "serve_answers",
    "sitting_samples",
]

ANSWER_STATIC = {"answer.js": "text/javascript", "review.css": "text/css"}
_STATIC = Path(__file__).with_name("static")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


def check_name(name: str) -> str:
    """``name`` when it can name a person's run; else ``ReviewError`` saying what may."""
    if not _NAME.match(name or ""):
        raise ReviewError(
            f"--as {name!r} cannot name a run: use 1 to 40 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (for example --as ana or --as reviewer_2)"
        )
    return name


def human_model(name: str) -> str:
    """The model a person's answers are stored under: ``human:NAME``."""
    return f"human:{check_name(name)}"


def sitting_samples(
    dataset: Dataset, *, n: int | None = None, seed: int = 0, variants: bool = False
) -> list[Sample]:
    """The questions of a sitting: every sample, or ``n`` of them stratified by task (as
    even across tasks as they allow, drawn with ``seed``: the same arguments give the same
    questions).  Variant copies (ids with "@") are left out unless ``variants``: a person
    who sees both copies of a question learns its answer."""
    samples = [s for s in dataset if variants or "@" not in s.id]
    if n is None:
        return samples
    if n < 1:
        raise ReviewError(f"--n {n} must be at least 1")
    rng = random.Random(seed)
    by_task: dict[str, list[Sample]] = {}
    for s in samples:
        by_task.setdefault(s.task, []).append(s)
    for task in sorted(by_task):
        rng.shuffle(by_task[task])
    chosen: list[Sample] = []
    queues = [by_task[t] for t in sorted(by_task)]
    while len(chosen) < n and any(queues):
        for q in queues:
            if q and len(chosen) < n:
                chosen.append(q.pop(0))
    return chosen


def open_sitting_store(runs_dir: Path, dataset: Dataset, name: str) -> RunStore:
    """The run store of ``name``'s answers to ``dataset``: the one ``cartoqa run`` would
    make for model ``human:NAME`` (the same arguments find it again, so a sitting resumes)."""
    return RunStore.open(
        runs_dir,
        dataset_name=dataset.manifest.name,
        dataset_sha256=dataset.manifest.samples_sha256,
        model=human_model(name),
        settings={},
    )


class _Stamp:
    """The time a question's page was served, signed so the form carries it back intact
    (and a restarted server still reads it)."""

    def __init__(self, token: str) -> None:
        self._key = hashlib.sha256(b"cartoqa answer: served\0" + token.encode()).digest()

    def _mac(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()[:32]

    def make(self, sample_id: str, now: float) -> str:
        text = f"{now:.3f}"
        return f"{text}.{self._mac(sample_id + chr(0) + text)}"

    def read(self, sample_id: str, stamp: str) -> float | None:
        text, _, mac = stamp.rpartition(".")
        if not text or not hmac.compare_digest(mac, self._mac(sample_id + chr(0) + text)):
            return None
        try:
            return float(text)
        except ValueError:
            return None


def create_answer_app(
    dataset: Dataset,
    store: RunStore,
    samples: Sequence[Sample],
    *,
    name: str,
    token: str,
    hosts: tuple[str, ...] = (),
    clock: Callable[[], float] = time.time,
) -> TokenGate:
    """The answer mode for ``samples`` of ``dataset``, answers appended to ``store`` as
    ``human:NAME``, behind ``/<token>/``."""
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, RedirectResponse, Response
    from jinja2 import Environment, PackageLoader, select_autoescape

    root = "/" + token
    model = human_model(name)
    pages = Environment(
        loader=PackageLoader("annotations", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    order = [s.id for s in samples]
    by_id = {s.id: s for s in samples}
    images = {img for s in samples for img in s.prompt.images}
    stamps = _Stamp(token)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    def answered() -> set[str]:
        store.refresh()  # what other processes (or tabs) stored
        return store.completed_ids() & set(order)

    def next_open(after: str | None, done: set[str]) -> str | None:
        """The first unanswered question after ``after`` (from the start), going round."""
        start = order.index(after) + 1 if after in by_id else 0
        for sid in order[start:] + order[:start]:
            if sid not in done and sid != after:
                return sid
        return None

    def page(template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = pages.get_template(template).render(
            root=root,
            dataset=dataset.manifest.name,
            attribution=dataset.manifest.attribution,
            name=name,
            **ctx,
        )
        return HTMLResponse(html, status_code=status)

    def problem(status: int, title: str, detail: str) -> HTMLResponse:
        return page("answer_index.html", status, problem=(title, detail), rows=[], progress=None)

    def question_page(
        sample: Sample,
        *,
        status: int = 200,
        values: dict[str, Any] | None = None,
        problems: Sequence[str] = (),
        message: str = "",
    ) -> HTMLResponse:
        done = answered()
        form = answer_form(sample)
        values = dict(values or {})
        legs = values.get("legs") or [("", "")]
        skip = next_open(sample.id, done)
        return page(
            "answer.html",
            status,
            sample=sample,
            form=form,
            values=values,
            legs=legs,
            actions=ACTIONS,
            max_legs=MAX_LEGS,
            problems=problems,
            message=message,
            stamp=stamps.make(sample.id, clock()),
            images=[
                f"{root}/{img}"
                for img in sample.prompt.images
                if img.split("/")[0] in IMAGE_FOLDERS
            ],
            position=order.index(sample.id) + 1,
            progress=(len(done), len(order)),
            is_answered=sample.id in done,
            skip=f"{root}/q/{skip}" if skip else None,
        )

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> Any:
        done = answered()
        first = next_open(None, done)
        stored = request.query_params.get("done", "")
        return page(
            "answer_index.html",
            rows=[(sid, by_id[sid].task, sid in done) for sid in order],
            progress=(len(done), len(order)),
            start=f"{root}/q/{first}" if first else None,
            message=f"{stored}: answer stored" if stored in done else "",
            problem=None,
        )

    @app.get("/q/{sid}", response_class=HTMLResponse)
    def question(sid: str) -> Any:
        sample = by_id.get(sid)
        if sample is None:
            return problem(404, "Not found", "No such question in this sitting.")
        return question_page(sample)

    @app.post("/q/{sid}", response_class=HTMLResponse)
    async def post_answer(sid: str, request: Request) -> Any:
        sample = by_id.get(sid)
        if sample is None:
            return problem(404, "Not found", "No such question in this sitting.")
        got = await request.form()
        now = clock()
        form: dict[str, Any] = {k: got.getlist(k) for k in got}
        if "add_leg" in form or "remove_leg" in form:  # the route form without its script
            filled = read_answer(sample, form)
            legs = list(filled.values.get("legs") or [("", "")])
            if "add_leg" in form and len(legs) < MAX_LEGS:
                legs.append(("", ""))
            elif "remove_leg" in form and len(legs) > 1:
                legs.pop()
            return question_page(sample, values={"legs": legs})
        filled = read_answer(sample, form)
        if filled.problems:
            return question_page(sample, status=422, values=filled.values, problems=filled.problems)
        served = stamps.read(sid, str((form.get("served") or [""])[0]))
        latency = max(0.0, now - served) if served is not None else None
        record = RunRecord(sample_id=sid, model=model, response=filled.text, latency_s=latency)
        if not store.append(record):
            return question_page(
                sample,
                status=409,
                values=filled.values,
                message="This question was already answered (in another tab or window): the "
                "first answer stands, this one was not stored.",
            )
        following = next_open(sid, answered())
        target = f"{root}/q/{following}?done={sid}" if following else f"{root}/?done={sid}"
        return RedirectResponse(target, status_code=303)

    @app.get("/static/{file}")
    def static(file: str) -> Any:
        if file not in ANSWER_STATIC:
            return problem(404, "Not found", "No such file.")
        return Response((_STATIC / file).read_bytes(), media_type=ANSWER_STATIC[file])

    @app.get("/{folder}/{rest:path}")
    def image(folder: str, rest: str) -> Any:
        relative = f"{folder}/{rest}"
        path = sample_image(dataset.path, relative) if relative in images else None
        if path is None:
            return problem(404, "Not found", "No such image in this sitting.")
        media = "image/png" if path.suffix.lower() == ".png" else "image/jpeg"
        return Response(path.read_bytes(), media_type=media)

    return TokenGate(app, token, hosts=hosts, max_body=MAX_BODY)


def serve_answers(
    dataset_path: Path,
    runs_dir: Path,
    name: str,
    *,
    n: int | None = None,
    seed: int = 0,
    variants: bool = False,
    host: str = "127.0.0.1",
    port: int = 8766,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve a sitting until stopped; prints the address with its token."""
    import secrets
    import sys

    from cartoqa.stores import load_dataset

    check_name(name)
    need_web()
    dataset = load_dataset(dataset_path)
    samples = sitting_samples(dataset, n=n, seed=seed, variants=variants)
    if not samples:
        raise CartoqaError(f"{dataset_path} has no questions to answer (variants left out)")
    store = open_sitting_store(runs_dir, dataset, name)
    token = secrets.token_urlsafe(24)
    app = create_answer_app(
        dataset, store, samples, name=name, token=token, hosts=allowed_hosts(host)
    )
    sock, shown = listen(host, port)
    done = len(store.completed_ids() & {s.id for s in samples})
    echo(
        f"{name} answers {len(samples)} questions of {dataset.manifest.name} ({done} answered); "
        f"answers in {store.path}"
    )
    echo(f"open http://{shown}/{token}/")
    sys.stdout.flush()
    run_on(app, sock, lifespan="off")
