"""The answer fields a reviewer edits, per kind of ground truth, and the truth a filled-in
form makes (the review tool's correction form; issue 17, item 1).

    fields = form_fields(truth)                 # what the page shows, current values filled in
    new = truth_from_form(truth, request_form)  # the corrected truth as JSON (same when unedited)

Each kind shows the parts of its truth an answer is scored on:

- route: one line per step, ``action | road``; "blue" and "red" are added;
- road_pair: the two road names;
- count: the features counted, and how many more are accepted;
- number: the value, in the truth's unit (its other units follow);
- boolean: yes or no; choice: the option letter; text: the answer and its
  accepted variants; coordinate: latitude and longitude; values: one number
  per key; names: one name per line (``(no name)`` for an unnamed feature),
  required and optional; feature_table: per type the count and the names;
  indices: numbers separated by commas.

Every kind also has the whole truth as JSON (``truth_json``), for what the
fields do not cover; when it was edited it wins, and editing both is an error.

What the fields do not show is kept where it still holds: a route's road
network (the map's roads did not change) is kept, its legs and node path are
dropped when the steps change (they describe the old route); a road pair's
label boxes are kept for the roads still named; a count's or names'
feature evidence is kept.  A form that cannot be read raises ``ReviewError``
naming the field and what to write.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cartoqa.errors import ReviewError
from cartoqa.geodesy import TURN_ACTIONS
from cartoqa.records import number_text

__all__ = [
    "JSON_FIELD",
    "NO_NAME",
    "FormField",
    "edited_fields",
    "form_fields",
    "json_edited",
    "read_form",
    "truth_from_form",
    "truth_json",
]

#: how a name list writes an unnamed feature (the truth holds "")
NO_NAME = "(no name)"
JSON_FIELD = "truth_json"


@dataclass(frozen=True)
class FormField:
    """One input of the correction form."""

    name: str
    label: str
    value: str
    widget: str = "text"
    """"text", "number", "lines" (a text area, one item per line), "select" or "json"."""
    options: list[tuple[str, str]] = field(default_factory=list)
    """(value, label) for a select."""
    help: str = ""
    group: str = ""
    """Fields of one group are a row of a table (a feature table's type), ``column`` its
    heading."""
    column: str = ""


def _lines(items: list[str]) -> str:
    return "\n".join(x if x else NO_NAME for x in items)


def _read_lines(text: str) -> list[str]:
    out = []
    for line in text.replace("\r\n", "\n").split("\n"):
        s = line.strip()
        if s:
            out.append("" if s == NO_NAME else s)
    return out


def truth_json(truth: Mapping[str, Any]) -> str:
    return json.dumps(truth, ensure_ascii=False, sort_keys=True, indent=1)


def form_fields(truth: Mapping[str, Any]) -> list[FormField]:
    """The inputs for ``truth`` (as JSON), current values filled in; the JSON last."""
    kind = truth.get("kind")
    out = _KIND_FIELDS.get(str(kind), lambda t: [])(truth)
    out.append(
        FormField(
            JSON_FIELD,
            "The whole truth (JSON)",
            truth_json(truth),
            "json",
            help="Edit this for what the fields above do not cover; an edit here wins.",
        )
    )
    return out


def _route_fields(t: Mapping[str, Any]) -> list[FormField]:
    steps = list(t.get("steps", []))[1:-1]
    pairs = [f"{a} | {r}" for a, r in zip(steps[0::2], steps[1::2], strict=False)]
    if len(steps) % 2:
        pairs.append(f"{steps[-1]} |")  # a step without its road: shown, to be fixed
    return [
        FormField(
            "steps",
            "Route steps",
            "\n".join(pairs),
            "lines",
            help='One step per line: "action | road" (for example "turn left | Rue Grimaldi"); '
            "blue and red are added.",
        )
    ]


def _road_pair_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField("road_1", "Road 1", str(t.get("road_1", ""))),
        FormField("road_2", "Road 2", str(t.get("road_2", ""))),
    ]


def _count_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField(
            "value",
            f"Count of {t.get('feature_type', 'features')}",
            str(t.get("value", 0)),
            "number",
            help="Features wholly shown.",
        ),
        FormField(
            "optional",
            "Also accepted",
            str(t.get("optional", 0)),
            "number",
            help="Features partly shown: an answer up to count + this is right.",
        ),
    ]


def _number_fields(t: Mapping[str, Any]) -> list[FormField]:
    unit = t.get("unit")
    return [
        FormField(
            "value",
            f"Value ({unit})" if unit else "Value",
            number_text(float(t.get("value", 0))),
            "number",
            help="Its other units are converted with it." if t.get("equivalents") else "",
        )
    ]


def _boolean_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField(
            "value",
            "Answer",
            "yes" if t.get("value") else "no",
            "select",
            options=[("yes", "yes"), ("no", "no")],
        )
    ]


def _choice_fields(t: Mapping[str, Any]) -> list[FormField]:
    options = dict(t.get("options", {}))
    return [
        FormField(
            "answer",
            "Right option",
            str(t.get("answer", "")),
            "select",
            options=[(k, f"{k}: {v}") for k, v in options.items()],
        )
    ]


def _text_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField("answer", "Answer", str(t.get("answer", ""))),
        FormField(
            "accepted",
            "Also accepted",
            "\n".join(t.get("accepted", [])),
            "lines",
            help="Other spellings, one per line.",
        ),
    ]


def _coordinate_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField("lat", "Latitude", number_text(float(t.get("lat", 0))), "number"),
        FormField("lon", "Longitude", number_text(float(t.get("lon", 0))), "number"),
    ]


def _values_fields(t: Mapping[str, Any]) -> list[FormField]:
    units = t.get("units", {})
    return [
        FormField(
            f"values.{k}",
            f"{k} ({units[k]})" if k in units else k,
            number_text(float(v)),
            "number",
        )
        for k, v in dict(t.get("values", {})).items()
    ]


def _names_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField(
            "names",
            "Names",
            _lines(list(t.get("names", []))),
            "lines",
            help=f"One per line; {NO_NAME} for a feature shown without a name.",
        ),
        FormField(
            "optional_names",
            "Also accepted names",
            _lines(list(t.get("optional", []))),
            "lines",
            help="Names an answer may give or leave out (features partly shown).",
        ),
    ]


def _table_fields(t: Mapping[str, Any]) -> list[FormField]:
    out = []
    for key, fc in dict(t.get("features", {})).items():
        for part, label, value, widget in (
            ("count", "count", str(fc.get("count", 0)), "number"),
            ("names", "names", _lines(list(fc.get("names", []))), "lines"),
            ("optional_count", "also accepted", str(fc.get("optional_count", 0)), "number"),
            (
                "optional_names",
                "also accepted names",
                _lines(list(fc.get("optional_names", []))),
                "lines",
            ),
        ):
            out.append(
                FormField(
                    f"table.{key}.{part}", f"{key}: {label}", value, widget, group=key, column=label
                )
            )
    return out


def _indices_fields(t: Mapping[str, Any]) -> list[FormField]:
    return [
        FormField(
            "indices",
            "Indices kept",
            ", ".join(str(i) for i in t.get("indices", [])),
            help="0-based, separated by commas.",
        )
    ]


_KIND_FIELDS = {
    "route": _route_fields,
    "road_pair": _road_pair_fields,
    "count": _count_fields,
    "number": _number_fields,
    "boolean": _boolean_fields,
    "choice": _choice_fields,
    "text": _text_fields,
    "coordinate": _coordinate_fields,
    "values": _values_fields,
    "names": _names_fields,
    "feature_table": _table_fields,
    "indices": _indices_fields,
}

# ---------------------------------------------------------------------- reading a form

_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$", re.ASCII)
_LENGTH_UNITS = ("m", "ft", "km", "mi")


def _number(form: Mapping[str, str], name: str, label: str) -> float:
    raw = str(form.get(name, "")).strip().replace(" ", "").replace("\u202f", "")
    if _THOUSANDS.match(raw):
        raw = raw.replace(",", "")
    if not _NUMBER.match(raw):
        raise ReviewError(f"{label}: {raw!r} is not a number (write it like 412.5)")
    x = float(raw)
    if not math.isfinite(x):
        raise ReviewError(f"{label}: {raw!r} is not a finite number")
    return x


def _count(form: Mapping[str, str], name: str, label: str) -> int:
    x = _number(form, name, label)
    if x < 0 or not x.is_integer():
        raise ReviewError(f"{label}: {form.get(name)!r} is not a whole number of 0 or more")
    return int(x)


def _text(form: Mapping[str, str], name: str, label: str) -> str:
    s = str(form.get(name, "")).strip()
    if not s:
        raise ReviewError(f"{label} is empty: write it, or reject the sample")
    return s


def _read_route(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    steps = ["blue"]
    known = {*TURN_ACTIONS, *list(t.get("steps", []))[1:-1:2]}  # and the truth's own
    for n, line in enumerate(_read_lines(str(form.get("steps", ""))), 1):
        action, bar, road = line.partition("|")
        if not bar or not action.strip() or not road.strip():
            raise ReviewError(
                f"Route steps, line {n}: {line!r} is not 'action | road' "
                "(for example 'turn left | Rue Grimaldi')"
            )
        if action.strip() not in known:
            raise ReviewError(
                f"Route steps, line {n}: {action.strip()!r} is not an action the question "
                f"allows: {', '.join(TURN_ACTIONS)}"
            )
        steps += [action.strip(), road.strip()]
    if len(steps) == 1:
        raise ReviewError("Route steps is empty: give at least one 'action | road' line")
    steps.append("red")
    if steps != t.get("steps"):
        t = {**t, "steps": steps, "legs": [], "nodes": []}  # they describe the old route
    return t


def _read_road_pair(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    r1, r2 = _text(form, "road_1", "Road 1"), _text(form, "road_2", "Road 2")
    if {r1, r2} == {t.get("road_1"), t.get("road_2")}:
        return {**t, "road_1": r1, "road_2": r2}
    labels = [b for b in t.get("labels", []) if b.get("road") in (r1, r2)]
    return {**t, "road_1": r1, "road_2": r2, "labels": labels}


def _read_count(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    return {
        **t,
        "value": _count(form, "value", "Count"),
        "optional": _count(form, "optional", "Also accepted"),
    }


def _read_number(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    old = float(t.get("value", 0))
    new = _number(form, "value", "Value")
    if new == old or number_text(new) == number_text(old):
        return t
    if new < 0 and t.get("unit") in _LENGTH_UNITS:
        raise ReviewError(f"Value: {new} {t.get('unit')} is a negative length")
    eq = dict(t.get("equivalents", {}))
    if eq and old != 0:
        eq = {k: round(v * new / old, 6) for k, v in eq.items()}
    elif eq:
        raise ReviewError(
            "Value: the truth was 0, so its other units cannot follow; edit the JSON instead"
        )
    return {**t, "value": new, "equivalents": eq}


def _read_boolean(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    v = str(form.get("value", "")).strip().lower()
    if v not in ("yes", "no"):
        raise ReviewError(f"Answer: {v!r}; choose yes or no")
    return {**t, "value": v == "yes"}


def _read_choice(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    a = str(form.get("answer", "")).strip()
    if a not in t.get("options", {}):
        raise ReviewError(f"Right option: {a!r} is not one of {', '.join(t.get('options', {}))}")
    return {**t, "answer": a}


def _read_text(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    return {
        **t,
        "answer": _text(form, "answer", "Answer"),
        "accepted": [x for x in _read_lines(str(form.get("accepted", ""))) if x],
    }


def _read_coordinate(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    lat, lon = _number(form, "lat", "Latitude"), _number(form, "lon", "Longitude")
    if not -90 <= lat <= 90 or not -180 <= lon <= 180:
        raise ReviewError(f"({lat}, {lon}) is off the globe: latitude -90..90, longitude -180..180")
    if (number_text(lat), number_text(lon)) == (
        number_text(float(t.get("lat", 0))),
        number_text(float(t.get("lon", 0))),
    ):
        return t
    return {**t, "lat": lat, "lon": lon}


def _read_values(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    values = dict(t.get("values", {}))
    for k, old in list(values.items()):
        new = _number(form, f"values.{k}", k)
        if number_text(new) != number_text(float(old)):
            values[k] = new
    return {**t, "values": values}


def _read_names(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    return {
        **t,
        "names": _read_lines(str(form.get("names", ""))),
        "optional": _read_lines(str(form.get("optional_names", ""))),
    }


def _read_table(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    table = {}
    for key, fc in dict(t.get("features", {})).items():
        p = f"table.{key}."
        table[key] = {
            **fc,
            "count": _count(form, p + "count", f"{key}: count"),
            "names": _read_lines(str(form.get(p + "names", ""))),
            "optional_count": _count(form, p + "optional_count", f"{key}: also accepted"),
            "optional_names": _read_lines(str(form.get(p + "optional_names", ""))),
        }
    return {**t, "features": table}


def _read_indices(t: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    out = []
    for part in re.split(r"[,\s]+", str(form.get("indices", "")).strip()):
        if not part:
            continue
        if not re.fullmatch(r"\d{1,9}", part, re.ASCII):
            raise ReviewError(f"Indices kept: {part!r} is not a 0-based index")
        out.append(int(part))
    return {**t, "indices": sorted(set(out))}


_KIND_READERS = {
    "route": _read_route,
    "road_pair": _read_road_pair,
    "count": _read_count,
    "number": _read_number,
    "boolean": _read_boolean,
    "choice": _read_choice,
    "text": _read_text,
    "coordinate": _read_coordinate,
    "values": _read_values,
    "names": _read_names,
    "feature_table": _read_table,
    "indices": _read_indices,
}


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _normal(truth: dict[str, Any]) -> dict[str, Any]:
    """The truth as the records write it (defaults left out), when it is one."""
    from pydantic import ValidationError

    from cartoqa.records import TRUTHS

    try:
        return TRUTHS.validate_python(truth).model_dump(mode="json")
    except ValidationError:
        return truth  # the store refuses it, saying why


def truth_from_form(truth: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    """The truth the submitted ``form`` makes of ``truth`` (both JSON); equal to ``truth``
    when nothing was edited.  ``ReviewError`` when an edited field cannot be read, or when
    both the fields and the JSON were edited.  A field the form leaves out is unedited."""
    return read_form(truth, form)[0]


def _said(text: str) -> str:
    """A field's text as compared for edits: line ends, blank lines and spaces at the
    ends of lines do not count."""
    lines = (x.strip() for x in str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(x for x in lines if x)


def edited_fields(truth: Mapping[str, Any], form: Mapping[str, str]) -> list[str]:
    """The answer fields whose submitted text differs from what ``form_fields(truth)``
    shows (JSON apart), in form order."""
    return [
        f.name
        for f in form_fields(truth)
        if f.name != JSON_FIELD and f.name in form and _said(form[f.name]) != _said(f.value)
    ]


def _parse_json(raw: str) -> dict[str, Any]:
    try:
        got = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ReviewError(f"The whole truth (JSON) is not valid JSON: {exc}") from None
    if not isinstance(got, dict):
        raise ReviewError("The whole truth (JSON) must be an object ({...})")
    return got


def json_edited(truth: Mapping[str, Any], form: Mapping[str, str]) -> bool:
    """Whether the submitted JSON differs from ``truth`` (text that is not JSON differs)."""
    raw = form.get(JSON_FIELD)
    if raw is None or _said(raw) == _said(truth_json(truth)):
        return False
    try:
        return not _same(_normal(_parse_json(raw)), _normal(dict(truth)))
    except ReviewError:
        return True


def read_form(truth: Mapping[str, Any], form: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """``truth_from_form``, and which part was edited: "fields", "json" or "".  Only the
    edited part is read, so an unedited field the truth leaves empty is no error."""
    base = _normal(dict(truth))
    fields_edited = bool(edited_fields(base, form))
    if fields_edited and json_edited(base, form):
        raise ReviewError(
            "both the fields and the JSON were edited: keep one of the two edits "
            "(reload the sample to start again)"
        )
    if json_edited(base, form):
        return _normal(_parse_json(str(form[JSON_FIELD]))), "json"
    if not fields_edited:
        return base, ""
    # a field the form leaves out is one not edited
    full = {**{f.name: f.value for f in form_fields(base) if f.name != JSON_FIELD}, **form}
    reader = _KIND_READERS.get(str(base.get("kind")))
    got = _normal(reader(dict(base), full)) if reader else base
    return got, ("fields" if not _same(got, base) else "")
