"""The answer forms of ``cartoqa answer`` (issue 33): for each kind of truth, the fields a
person fills in, and how a filled-in form becomes answer text in the task's own format,
so that the task's scorer reads a person's answer exactly as it reads a model's.

Only what the question itself shows goes into a form: the choice letters, the unit the
question asks in, the feature types a table asks about.  Never a value of the truth.
Kinds without a form of their own (GPS coordinates, values, indices, groupings, text)
take free text, which is given ``FINAL ANSWER:`` when the person did not write it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cartoqa.records import ChoiceTruth, FeatureTableTruth, NumberTruth, Sample

__all__ = ["ACTIONS", "MAX_LEGS", "AnswerForm", "Filled", "answer_form", "read_answer"]

#: the actions a route leg starts with (the SRN questions name these)
ACTIONS = (
    "continue straight",
    "turn left",
    "turn right",
    "make a U-turn and continue straight",
)
#: the most legs a route form takes
MAX_LEGS = 40
_FINAL = "FINAL ANSWER:"


@dataclass(frozen=True)
class AnswerForm:
    """What the answer page shows for one sample: its form's kind and what that form needs."""

    form: str
    """"choice", "yesno", "count", "number", "names", "road_pair", "route", "table", "text"."""
    options: dict[str, str] = field(default_factory=dict)
    """Choice letters and their text (multiple choice)."""
    unit: str = ""
    """The unit a number is asked in."""
    rows: list[str] = field(default_factory=list)
    """The feature types a table asks about."""


@dataclass
class Filled:
    """A submitted form read: the answer text, or the problems; ``values`` keeps what was
    typed so a refused form is shown again as it was."""

    text: str = ""
    problems: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)


def answer_form(sample: Sample) -> AnswerForm:
    """The form a person answers ``sample`` with, fitted to its truth's kind."""
    t = sample.ground_truth
    kind = t.kind
    if isinstance(t, ChoiceTruth):
        return AnswerForm("choice", options=dict(t.options))
    if kind == "boolean":
        return AnswerForm("yesno")
    if kind == "count":
        return AnswerForm("count")
    if isinstance(t, NumberTruth):
        return AnswerForm("number", unit=t.unit or "")
    if kind == "names":
        return AnswerForm("names")
    if kind == "road_pair":
        return AnswerForm("road_pair")
    if kind == "route":
        return AnswerForm("route")
    if isinstance(t, FeatureTableTruth):
        return AnswerForm("table", rows=list(t.features))
    return AnswerForm("text")


def _one(form: Mapping[str, Any], name: str) -> str:
    v = form.get(name, "")
    if isinstance(v, list):
        v = v[0] if v else ""
    return str(v).strip()


def _number(raw: str, what: str, problems: list[str], *, whole: bool = False) -> float | None:
    if not raw:
        problems.append(f"Write {what}.")
        return None
    try:
        n = float(raw.replace(",", "").replace(" ", ""))
    except ValueError:
        problems.append(f"{what.capitalize()}: {raw!r} is not a number.")
        return None
    if not math.isfinite(n) or n < 0:
        problems.append(f"{what.capitalize()}: {raw!r} must be a number 0 or more.")
        return None
    if whole and n != int(n):
        problems.append(f"{what.capitalize()}: {raw!r} must be a whole number.")
        return None
    return n


def _number_text(n: float) -> str:
    return str(int(n)) if n == int(n) else repr(n)


def read_answer(sample: Sample, form: Mapping[str, Any]) -> Filled:
    """The answer text ``form`` (field name -> value) gives for ``sample``, in its task's
    format, or the problems that keep it from being one."""
    spec = answer_form(sample)
    out = Filled()
    p = out.problems
    if spec.form == "choice":
        got = _one(form, "choice").upper()
        out.values["choice"] = got
        if got not in spec.options:
            p.append(f"Pick one of {', '.join(sorted(spec.options))}.")
        else:
            out.text = f"{_FINAL} {got}"
    elif spec.form == "yesno":
        got = _one(form, "yesno").lower()
        out.values["yesno"] = got
        if got not in ("yes", "no"):
            p.append("Answer yes or no.")
        else:
            out.text = f"{_FINAL} {got}"
    elif spec.form in ("count", "number"):
        raw = _one(form, "number")
        out.values["number"] = raw
        whole = spec.form == "count"
        n = _number(raw, "a whole number" if whole else "a number", p, whole=whole)
        if n is not None:
            text = _number_text(n)
            out.text = (
                text if whole else f"{_FINAL} {text}" + (f" {spec.unit}" if spec.unit else "")
            )
    elif spec.form == "names":
        raw = _one(form, "names")
        out.values["names"] = raw
        names = [line.strip() for line in raw.splitlines() if line.strip()]
        out.text = json.dumps(names, ensure_ascii=False)
    elif spec.form == "road_pair":
        r1, r2 = _one(form, "road_1"), _one(form, "road_2")
        out.values.update(road_1=r1, road_2=r2)
        if not r1 or not r2:
            p.append("Write both roads.")
        else:
            out.text = json.dumps({"road_1": r1, "road_2": r2}, ensure_ascii=False)
    elif spec.form == "route":
        _read_route(form, out)
    elif spec.form == "table":
        _read_table(spec, form, out)
    else:
        raw = _one(form, "text")
        out.values["text"] = raw
        if not raw:
            p.append("Write an answer.")
        else:
            out.text = raw if raw.upper().startswith(_FINAL) else f"{_FINAL} {raw}"
    if p:
        out.text = ""
    return out


def _read_route(form: Mapping[str, Any], out: Filled) -> None:
    legs: list[tuple[str, str]] = []
    for i in range(MAX_LEGS):
        if f"action_{i}" not in form and f"road_{i}" not in form:
            break
        legs.append((_one(form, f"action_{i}"), _one(form, f"road_{i}")))
    legs = [(a, r) for a, r in legs if a or r]
    out.values["legs"] = legs or [("", "")]
    if not legs:
        out.problems.append("Add at least one leg: an action and the road it takes.")
        return
    steps = ["blue"]
    for n, (action, road) in enumerate(legs, 1):
        if action not in ACTIONS:
            out.problems.append(f"Leg {n}: pick an action ({', '.join(ACTIONS)}).")
        if not road:
            out.problems.append(f"Leg {n}: write the road.")
        steps += [action, road]
    steps.append("red")
    if any(c in s for s in steps for c in '[]"'):
        out.text = json.dumps(steps, ensure_ascii=False)
    else:
        out.text = "[" + ", ".join(steps) + "]"


def _read_table(spec: AnswerForm, form: Mapping[str, Any], out: Filled) -> None:
    table: dict[str, dict[str, Any]] = {}
    for i, feature in enumerate(spec.rows):
        raw = _one(form, f"count_{i}")
        names_raw = _one(form, f"names_{i}")
        out.values[f"count_{i}"] = raw
        out.values[f"names_{i}"] = names_raw
        n = _number(raw, f"the count of {feature}", out.problems, whole=True)
        names = [line.strip() for line in names_raw.splitlines() if line.strip()]
        table[feature] = {"count": int(n) if n is not None else 0, "names": names}
    out.text = json.dumps(table, ensure_ascii=False)
