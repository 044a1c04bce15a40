"""Baselines that need no model: ``oracle``, ``random`` and ``constant:TEXT``.

- ``oracle`` answers from the ground truth in the task's answer format (the
  spec's ``answer_format``, else the truth's own ``answer_text()``): a run of
  it that does not score 100% shows that a prompt, parser and scorer disagree.
- ``random`` gives a task-appropriate random answer (a letter among the
  options, yes or no, a count from 0 to 16, a point on the sphere...), seeded
  per sample, so a resumed or re-ordered run gives the same answers.
- ``constant:TEXT`` answers TEXT to everything (``\\n`` writes a newline).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cartoqa.errors import ModelError
from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    CoordinateTruth,
    CountTruth,
    FeatureTableTruth,
    GroupingTruth,
    IndicesTruth,
    NamesTruth,
    NumberTruth,
    RoadPairTruth,
    RouteTruth,
    Sample,
    TextTruth,
    ValuesTruth,
)

from ._types import Request, Response

__all__ = [
    "ConstantModel",
    "FunctionModel",
    "OracleModel",
    "RandomModel",
    "oracle_answer",
    "random_answer",
]

#: the range of a random number for a task whose spec gives none (``TaskSpec.answer_space``)
_DEFAULT_RANGE = (0.0, 1000.0)
_VALUE_RANGES = (
    ("lat", (-90.0, 90.0)),
    ("lon", (-180.0, 180.0)),
    ("easting", (166_000.0, 834_000.0)),
    ("northing", (0.0, 10_000_000.0)),
    ("area", (0.0, 100_000.0)),
    ("perimeter", (0.0, 5_000.0)),
    ("x", (-20_037_508.0, 20_037_508.0)),
    ("y", (-20_037_508.0, 20_037_508.0)),
)
_ACTIONS = ("continue straight", "make a U-turn and continue straight", "turn left", "turn right")


def _answer_space(task: str) -> Mapping[str, Any]:
    from cartoqa.tasks.spec import get_task

    spec = get_task(task)
    return spec.answer_space if spec is not None else {}


def _number_range(task: str) -> tuple[float, float]:
    """The range a random number is drawn from: the task spec's answer space (CartoMapQA's
    counting tasks: 0-16), else 0-1000."""
    space = _answer_space(task)
    if "low" in space:
        return float(space["low"]), float(space["high"])
    return _DEFAULT_RANGE


def _rng(seed: int, sample_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{sample_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _words(text: str) -> list[str]:
    return re.findall(r"\b[A-Z][\w'-]+(?: [A-Z][\w'-]+)*", text) or ["unknown"]


def random_answer(sample: Sample, *, seed: int = 0) -> str:
    """A random answer of the right shape for the sample's task (no ground-truth values used,
    only its shape: the option letters, the units, the keys asked for)."""

    rng = _rng(seed, sample.id)
    truth = sample.ground_truth
    words = _words(sample.prompt.text)
    fake: Any
    if isinstance(truth, NumberTruth):
        lo, hi = _number_range(sample.task)
        if truth.unit == "ft":
            lo, hi = lo * 3.28084, hi * 3.28084
        value = (
            rng.randint(int(lo), int(hi)) if truth.unit is None else round(rng.uniform(lo, hi), 1)
        )
        fake = NumberTruth(value=value, unit=truth.unit)
    elif isinstance(truth, BooleanTruth):
        fake = BooleanTruth(value=rng.random() < 0.5)
    elif isinstance(truth, ChoiceTruth):
        fake = truth.model_copy(update={"answer": rng.choice(sorted(truth.options))})
    elif isinstance(truth, TextTruth):
        fake = TextTruth(answer=rng.choice(words))
    elif isinstance(truth, CoordinateTruth):
        lat = math.degrees(math.asin(rng.uniform(-1, 1)))  # uniform on the sphere
        fake = CoordinateTruth(lat=lat, lon=rng.uniform(-180, 180))
    elif isinstance(truth, ValuesTruth):
        values = {}
        for key in truth.values:
            lo, hi = next((r for k, r in _VALUE_RANGES if k in key.lower()), (0.0, 1000.0))
            values[key] = round(rng.uniform(lo, hi), 6)
        fake = ValuesTruth(values=values)
    elif isinstance(truth, NamesTruth):
        fake = NamesTruth(names=rng.sample(words, k=min(len(words), rng.randint(0, 3))))
    elif isinstance(truth, CountTruth):
        lo, hi = _number_range(sample.task)
        fake = truth.model_copy(update={"value": rng.randint(int(lo), int(hi)), "optional": 0})
    elif isinstance(truth, FeatureTableTruth):
        lo, hi = _number_range(sample.task)
        return json.dumps(
            {k: {"count": rng.randint(int(lo), int(hi)), "names": []} for k in truth.features}
        )
    elif isinstance(truth, RoadPairTruth):
        fake = RoadPairTruth(road_1=rng.choice(words), road_2=rng.choice(words))
    elif isinstance(truth, RouteTruth):
        steps = ["blue"]
        for _ in range(rng.randint(1, 4)):
            steps += [rng.choice(_ACTIONS), rng.choice(words)]
        fake = RouteTruth(steps=[*steps, "red"])
    elif isinstance(truth, IndicesTruth):
        n = max(truth.indices, default=0) + 1
        fake = IndicesTruth(indices=sorted(rng.sample(range(n), k=rng.randint(0, n))))
    elif isinstance(truth, GroupingTruth):
        # the labels the task's answer space names (every continent), not the truth's own
        labels = _answer_space(sample.task).get("groups") or sorted(truth.groups)
        groups: dict[str, list[str]] = {k: [] for k in labels}
        for item in (i for items in truth.groups.values() for i in items):
            groups[rng.choice(sorted(groups))].append(item)
        fake = GroupingTruth(groups={k: v for k, v in groups.items() if v})
    else:  # pragma: no cover - every kind is handled above
        raise TypeError(f"no random answer for {type(truth).__name__}")
    # the task's extra metadata may hold truths too (place association's province and
    # country, which its answer format writes): the random answer sees the declared fields only
    blind = type(sample.metadata).model_construct(**vars(sample.metadata))
    return _formatted(sample.model_copy(update={"ground_truth": fake, "metadata": blind}))


class _Baseline:
    """A model that answers each request by ``_answer``; an exception of ``failures`` (an
    unreadable image, a tool that failed) fails that request alone."""

    batch_size = 256
    thread_safe = True
    spec = "baseline"
    failures: tuple[type[Exception], ...] = ()

    def _answer(self, request: Request) -> str:
        raise NotImplementedError

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            t0 = time.perf_counter()
            try:
                text = self._answer(r)
            except self.failures as exc:
                out.append(Response(text=None, latency_s=time.perf_counter() - t0, error=str(exc)))
                continue
            out.append(Response(text=text, latency_s=time.perf_counter() - t0))
        return out

    def close(self) -> None:
        pass


def _sample(request: Request, spec: str) -> Sample:
    if request.sample is None:
        raise ModelError(f"{spec} answers from the sample itself; request {request.id!r} has none")
    return request.sample


class OracleModel(_Baseline):
    """Answers with the ground truth, written in the task's answer format."""

    spec = "oracle"

    def _answer(self, request: Request) -> str:
        return oracle_answer(_sample(request, self.spec))


def oracle_answer(sample: Sample) -> str:
    """The ground truth written as the task asks (``_formatted``)."""
    return _formatted(sample)


def _formatted(sample: Sample) -> str:
    """A sample's truth written by its spec's ``answer_format`` where it has one, else by
    its truth kind's format."""
    from cartoqa.tasks.spec import get_task

    spec = get_task(sample.task)
    if spec is not None and spec.answer_format is not None:
        return spec.answer_format(sample)
    return sample.ground_truth.answer_text()


class RandomModel(_Baseline):
    """A seeded, task-appropriate random answer per sample."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.spec = "random" if seed == 0 else f"random:{seed}"

    def _answer(self, request: Request) -> str:
        return random_answer(_sample(request, self.spec), seed=self.seed)


class ConstantModel(_Baseline):
    """The same text for every request."""

    def __init__(self, text: str) -> None:
        self.text = text.replace("\\n", "\n")
        self.spec = f"constant:{text}"

    def _answer(self, request: Request) -> str:
        return self.text


class FunctionModel(_Baseline):
    """A Python function of the sample as a model: for your own baselines.

    ``FunctionModel("baseline:flat-earth", answer_fn)``; ``batch_size`` sets how
    many samples the runner hands over at once (1: each answer is stored before the next
    is asked).
    """

    def __init__(self, spec: str, answer: Callable[[Sample], str], *, batch_size: int = 1):
        self.spec = spec
        self.answer = answer
        self.batch_size = batch_size

    def _answer(self, request: Request) -> str:
        return self.answer(_sample(request, self.spec))
