"""An independent reading of CartoMapQA's published scorer, for the parity tests.

Written from the rules of the published code (``eval.py``, ``evaluate_*.py``,
``Parse/parse_response_*.py``, ``get_response_*.py``, ``utils.py``), without scikit-learn and
without looking at ``evaluators/published``: the regressions and macro averages are computed
from their formulas here.  Where the published code raises, ``RefItem.crashed`` names the
exception and the item is scored as ``evaluators/published``'s module docstrings state (the
shared convention); the tests compare the crash flags item by item.

Random fall-backs are drawn from ``random.Random(f"{seed}:{key}")``; the tests compare only
WHICH items are drawn, never the drawn value.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

EPS = np.finfo(np.float64).eps
LETTERS = ("A", "B", "C", "D", "E")

# The 22 feature types under their published names, in the published order, and the
# lower-case spellings a model's JSON key may use for each (facts of prompt_mtmf.py).
MTMF_TYPES = (
    "convenience store",
    "supermarket",
    "drug store/pharmacy",
    "general clinic",
    "hospital",
    "restaurant",
    "fast food store",
    "coffee shop",
    "ATM or cash point",
    "bank",
    "playground",
    "park area",
    "fitness center",
    "clothes shop",
    "beauty shop",
    "water stream",
    "river",
    "bus stop",
    "gas station",
    "primary road",
    "car parking lot",
    "public toilet",
)


def _spellings(name: str) -> tuple[str, ...]:
    low = name.lower()
    under = low.replace(" ", "_")
    return (low,) if under == low else (low, under)


MTMF_SPELLINGS = {name: _spellings(name) for name in MTMF_TYPES}


def rng_for(seed: int, key: str) -> random.Random:
    return random.Random(f"{seed}:{key}")


def crash(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass
class RefItem:
    key: str
    values: dict[str, float | None]
    groups: dict[str, str] = field(default_factory=dict)
    crashed: str | None = None
    drawn: bool = False


# --------------------------------------------------------------------------- metrics


def _arr(values: Sequence[Any]) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def rmse(true: Sequence[Any], pred: Sequence[Any]) -> float:
    t, p = _arr(true), _arr(pred)
    if t.size == 0:
        return math.nan
    return math.sqrt(float(np.mean((t - p) ** 2)))


def mae(true: Sequence[Any], pred: Sequence[Any]) -> float:
    t, p = _arr(true), _arr(pred)
    return float(np.mean(np.abs(t - p))) if t.size else math.nan


def mape(true: Sequence[Any], pred: Sequence[Any]) -> float:
    t, p = _arr(true), _arr(pred)
    if not t.size:
        return math.nan
    return float(np.mean(np.abs(t - p) / np.maximum(np.abs(t), EPS)))


def r2(true: Sequence[Any], pred: Sequence[Any]) -> float:
    """Coefficient of determination, with sklearn's conventions for the edge cases."""
    t, p = _arr(true), _arr(pred)
    if t.size < 2:
        return math.nan
    residual = float(np.sum((t - p) ** 2))
    spread = float(np.sum((t - np.mean(t)) ** 2))
    if spread == 0.0:
        return 1.0 if residual == 0.0 else 0.0
    return 1.0 - residual / spread


def macro_prf(true: Sequence[int], pred: Sequence[int]) -> tuple[float, float, float]:
    """Macro precision/recall/F1 over the labels present in either list, 0 where undefined."""
    labels = sorted(set(true) | set(pred))
    ps, rs, fs = [], [], []
    for label in labels:
        tp = sum(1 for t, p in zip(true, pred, strict=False) if t == label and p == label)
        said = sum(1 for p in pred if p == label)
        real = sum(1 for t in true if t == label)
        prec = tp / said if said else 0.0
        rec = tp / real if real else 0.0
        ps.append(prec)
        rs.append(rec)
        fs.append(2 * prec * rec / (prec + rec) if prec + rec else 0.0)
    if not labels:
        return math.nan, math.nan, math.nan
    return float(np.mean(ps)), float(np.mean(rs)), float(np.mean(fs))


def name_precision(true: Sequence[str], pred: Sequence[str]) -> float:
    t = [x.strip() for x in true]
    p = [x.strip() for x in pred]
    if not p:
        return 1.0 if not t else 0.0
    return len(set(t) & set(p)) / len(p)


def name_recall(true: Sequence[str], seen: Any) -> float:
    """Share of true names ``in`` ``seen`` (text: substring; list: membership)."""
    if not true:
        return 1.0
    return sum(1 for name in true if name in seen) / len(true)


def f1_of(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def np_mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else math.nan


# --------------------------------------------------------------------------- parsers


def parse_mfs(response: str) -> tuple[str, str | None]:
    """(letter or "", crash text or None) as parse_mfs stores it; a crash stores ""."""
    text = response.strip()
    if not text:
        return "", "IndexError: string index out of range"
    if text[0] in LETTERS:
        return text[0], None
    marker = "correct answer is"
    if marker not in response:
        return "", None
    pieces = text.split(marker + " ")
    if len(pieces) < 2:
        return "", "IndexError: list index out of range"
    tail = pieces[1].strip().replace(".", "")
    return (tail if tail in LETTERS else ""), None


def presence_reading(response: str) -> str | None:
    text = response.strip()
    text = text.replace("**Answer:**", "").replace("*", "")
    first = text.split("\n")[0].lower()
    first = first.translate(str.maketrans("", "", "-,.")).strip()
    if first.startswith("yes"):
        return "yes"
    if first.startswith("no"):
        return "no"
    return None


def parse_presence(response: str, rng: random.Random) -> tuple[str, bool]:
    read = presence_reading(response)
    if read is not None:
        return read, False
    return rng.choice(["yes", "no"]), True


_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {
    "hundred": 100,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}


def words_to_int(text: str) -> int:
    """The published number-word reader, restated: -1 for an unknown word, 0 for none."""
    total = running = 0
    for word in text.split():
        if word == "and":
            scale, add = 1, 0
        elif word in _UNITS:
            scale, add = 1, _UNITS.index(word)
        elif word in _TENS:
            scale, add = 1, _TENS[word]
        elif word in _SCALES:
            scale, add = _SCALES[word], 0
        else:
            return -1
        running = running * scale + add
        if scale > 100:
            total += running
            running = 0
    return total + running


def count_reading(response: str) -> int | None:
    text = response.strip()
    first = text.split("\n")[0].translate(str.maketrans("", "", "-,."))
    if first.isnumeric():
        return int(first)
    rest = first
    for phrase in ("There are ", "there are ", "There is ", "there is "):
        if phrase in text:
            rest = text.split(phrase)[1]
            break
    word = rest.split(" ")[0].strip()
    if word.isnumeric():
        return int(word)
    value = words_to_int(word)
    return int(value) if value != -1 else None


def parse_count(response: str, rng: random.Random) -> tuple[int, bool]:
    read = count_reading(response)
    if read is not None:
        return read, False
    return rng.randint(0, 16), True


def parse_names(response: str) -> list[str]:
    lines = response.strip().strip().split("\n")
    return [re.sub(r"^\d+\.\s", "", line).replace("*", "").strip() for line in lines]


def _mtmf_normalise(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in value:  # a dict's keys; a list's items; a string's characters
        low = key.lower()
        for name, spellings in MTMF_SPELLINGS.items():
            if low in spellings:
                out[name] = value[key]
    return out


def parse_mtmf(response: str, truth: Mapping[str, Mapping]) -> list | str:
    cleaned = response.replace("```json", "").replace("```", "").replace("<|eot|>", "")
    try:
        value = json.loads(cleaned)
        raw = json.loads(cleaned)
        normal = _mtmf_normalise(value)
        for name in normal:
            normal[name]["true_count"] = truth[name]["count"]
            normal[name]["true_names"] = truth[name]["names"]
        return [normal, raw]
    except Exception:
        return cleaned


def _floatable(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def parse_rle(response: str) -> str | int:
    first = response.strip().split("\n")[0]
    for ch in "-,*":
        first = first.replace(ch, "")
    first = first.strip()
    if " is " in first:
        tail = first.split(" is ")[1].strip()
        for word in ("about", "approximately", ","):
            tail = tail.replace(word, "")
        return tail.strip().split(" ")[0]
    tokens = first.split(" ")
    numbers = [tok for tok in tokens if _floatable(tok)]
    if numbers:
        return numbers[0]
    if "which converts to" in response:
        return response.strip().split("which converts to ")[1].strip().split(" ")[0]
    return -1


def parse_mml(response: str) -> Any | None:
    text = response.strip().replace("json", "").replace("`", "").replace("<|eot|>", "")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def drop_repeated_straight(route: list[str]) -> list[str]:
    """The published normalisation: "continue straight" between two equal items goes, with
    the repeat; indices are collected first and popped from the end (a duplicate index pops
    twice, and may raise IndexError as published)."""
    doomed: list[int] = []
    for i, step in enumerate(route):
        if (
            step == "continue straight"
            and i - 1 >= 0
            and i + 1 < len(route)
            and route[i + 1] == route[i - 1]
        ):
            doomed += [i, i + 1]
    for i in sorted(doomed, reverse=True):
        route.pop(i)
    return route


def parse_srn(response: str) -> list[str]:
    text = response.strip()
    for junk in ("**Answer:**", "*", "Answer:", "[", "]", "<|eot|>"):
        text = text.replace(junk, "")
    return drop_repeated_straight([part.strip() for part in text.split(",")])


# --------------------------------------------------------------------------- items


def mfs_item(key: str, record: Mapping[str, Any], rng: random.Random) -> RefItem:
    answer = record["Answer"]
    drawn = answer == ""
    if drawn:
        answer = rng.choice(LETTERS)
    _, parse_crash = parse_mfs(record.get("Response") or "")
    return RefItem(
        key,
        {"correct": float(answer == record["Correct answer"])},
        crashed=parse_crash,
        drawn=drawn,
    )


def _yes_no(label: str) -> float | None:
    return {"yes": 1.0, "no": 0.0}.get(label)


def presence_item(key: str, record: Mapping[str, Any]) -> RefItem:
    t, p = record["Correct answer"].lower(), record["Answer"].lower()
    return RefItem(
        key,
        {"true": _yes_no(t), "pred": _yes_no(p), "correct": float(t == p)},
        drawn=presence_reading(record["Response"]) is None,
    )


def count_item(key: str, record: Mapping[str, Any]) -> RefItem:
    return RefItem(
        key,
        {"true": record["Correct answer"], "pred": record["Answer"]},
        drawn=count_reading(record["Response"]) is None,
    )


def names_item(key: str, record: Mapping[str, Any]) -> RefItem:
    true = record["Correct answer"]
    pred = list(record["Answer"])
    if len(pred) == 1:
        only = pred[0]
        if (
            "there are no" in only.lower()
            or "there is no" in only.lower()
            or "I am unable to" in only
            or "I'm not able" in only
            or only == "None"
        ):
            pred = []
    if pred and pred[-1] and pred[-1][-1] == ".":
        pred[-1] = pred[-1][:-1]
    if pred and "<|eot|>" in pred[-1]:
        pred[-1] = pred[-1].replace("<|eot|>", "")
    pred = [name for name in pred if name != '""']
    p = name_precision(true, pred)
    r = name_recall(true, record["Response"])
    return RefItem(key, {"precision": p, "recall": r, "f1": f1_of(p, r)})


def _mtmf_scores(true_counts, counts, true_names, names) -> dict[str, float]:
    p = name_precision(true_names, names)
    r = name_recall(true_names, names)
    return {
        "rmse": rmse(true_counts, counts),
        "r2": r2(true_counts, counts),
        "precision": p,
        "recall": r,
        "f1": f1_of(p, r),
    }


def _as_numbers(values: list) -> list[float]:
    """A list of counts as scikit-learn reads it: one numpy array (numeric text such as "3"
    becomes 3.0, as scikit-learn converts it), raising where it raises (text that is no
    number, None, nan)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "USO":
        arr = arr.astype(np.float64)
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("Input contains NaN or infinity.")
    return [float(x) for x in arr]


def mtmf_item(key: str, record: list | str, truth: Mapping[str, Mapping]) -> RefItem:
    try:
        if isinstance(record, str):
            raise json.JSONDecodeError("Expecting value", record, 0)
        data = record[0]
        tc, pc, tn, pn = [], [], [], []
        for name in MTMF_TYPES:
            entry = data[name]
            tc.append(entry["true_count"])
            pc.append(entry["count"])
            pn += [n for n in entry["names"] if n.strip() != ""]
            tn += entry["true_names"]
        tc, pc = _as_numbers(tc), _as_numbers(pc)
        return RefItem(key, _mtmf_scores(tc, pc, tn, pn))
    except Exception as exc:  # scored as the empty answer against the map's truth
        tc = [truth[name]["count"] for name in MTMF_TYPES]
        tn = [n for name in MTMF_TYPES for n in truth[name]["names"]]
        return RefItem(key, _mtmf_scores(tc, [0] * len(tc), tn, []), crashed=crash(exc))


def rle_item(key: str, record: Mapping[str, Any]) -> RefItem:
    groups = {"difficulty": record["Difficulty"], "unit": record["Measure"]}
    true = float(record["Correct_answer"])
    try:
        pred: float | None = float(record["Result"])
    except ValueError as exc:
        return RefItem(key, {"true": true, "pred": None}, groups, crashed=crash(exc))
    if pred == -1:
        pred = None
    elif not math.isfinite(pred):  # float() takes "nan"/"inf"; scikit-learn then raises
        err = "ValueError: Input contains infinity or NaN"
        return RefItem(key, {"true": true, "pred": None}, groups, crashed=err)
    return RefItem(key, {"true": true, "pred": pred}, groups)


def mml_item(key: str, record: Mapping[str, Any]) -> RefItem:
    groups = {"colour": record["Marker_color"], "zoom": str(record["zoom_level"])}
    answer = record["Answer"]
    if answer is None:
        return RefItem(key, {"correct": 0.0, "answered": 0.0}, groups)
    r1, r2_ = record["road_1"], record["road_2"]
    try:
        right = (answer["road_1"] == r1 and answer["road_2"] == r2_) or (
            answer["road_1"] == r2_ and answer["road_2"] == r1
        )
    except (TypeError, KeyError, IndexError) as exc:
        return RefItem(key, {"correct": 0.0, "answered": 1.0}, groups, crashed=crash(exc))
    return RefItem(key, {"correct": float(bool(right)), "answered": 1.0}, groups)


def _bearing(a: Sequence[Any], b: Sequence[Any]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (float(a[1]), float(a[2]), float(b[1]), float(b[2])))
    x = math.sin(lon2 - lon1) * math.cos(lat2)
    y = math.cos(lat1) * math.sin(lat2) - math.sin(lat1) * math.cos(lat2) * math.cos(lon2 - lon1)
    return (math.degrees(math.atan2(x, y)) + 360) % 360


def _turn(before: float, after: float) -> str:
    change = (after - before + 360) % 360
    if change < 40 or change > 320:
        return "continue straight"
    if change < 140:
        return "turn right"
    if change > 220:
        return "turn left"
    return "make a U-turn and continue straight"


def _on_road(node: Sequence[Any], links: Mapping[str, Any]) -> bool:
    return any(str(node[0]) == str(n[0]) for link in links for n in links[link])


def srn_connected(origin, dest, path, conj, roads) -> bool:
    """The published route check, restated; raises where it raises."""
    if path[0] != "blue" or path[-1] != "red":
        return False
    first, last = path[2], path[-2]
    if first not in roads or last not in roads:
        return False
    if not _on_road(origin, roads[first]) or not _on_road(dest, roads[last]):
        return False
    actions = ("left", "right", "straight", "u-turn")
    streets = [s for s in path if not any(a in s for a in actions) and s not in ("blue", "red")]
    if len(streets) <= 1:
        return True
    if any(s not in roads for s in streets):
        return False
    merged = [s for i, s in enumerate(streets) if i == 0 or s != streets[i - 1]]
    nodes = [origin]
    for prev, nxt in itertools.pairwise(merged):
        table = conj[nxt]  # KeyError as published when the road has no junction entry
        if prev not in table:
            return False
        nodes.append(table[prev][0])
    nodes.append(dest)
    expected = ["blue"]
    heading = 0.0
    for i, (a, b) in enumerate(itertools.pairwise(nodes)):
        new = _bearing(a, b)
        expected += [_turn(heading, new), merged[i]]
        heading = new
    expected.append("red")
    return all(x == y for x, y in zip(path, expected, strict=False))


def srn_truth(route_directions: str) -> list[str]:
    return [s.strip() for s in route_directions.replace("[", "").replace("]", "").split(",")]


def srn_item(key: str, record: Mapping[str, Any], roads: Mapping, conj: Mapping) -> RefItem:
    truth = srn_truth(record["route_directions"])
    answer = record["Answer"]
    matched = 0
    for t, a in zip(truth, answer, strict=False):
        if t != a:
            break
        matched += 1
    exact = matched == min(len(truth), len(answer))
    values = {"exact": float(exact), "step_accuracy": (matched - 1) / (len(truth) - 1)}
    crashed = None
    if exact:
        connected = True
    else:
        try:
            connected = srn_connected(record["origin"], record["destination"], answer, conj, roads)
        except (IndexError, KeyError) as exc:
            connected, crashed = False, crash(exc)
    values["connected"] = float(connected)
    return RefItem(key, values, {"zoom": str(record["zoom_level"])}, crashed=crashed)


# --------------------------------------------------------------------------- tables


def _counts(items: Sequence[RefItem]) -> dict[str, float]:
    return {
        "crashed": float(sum(1 for i in items if i.crashed)),
        "drawn at random": float(sum(1 for i in items if i.drawn)),
    }


def mfs_table(items: Sequence[RefItem]) -> dict[str, dict[str, float]]:
    n = len(items)
    acc = sum(i.values["correct"] for i in items) / n if n else math.nan
    return {"all": {"n": float(n), "accuracy": acc, **_counts(items)}}


def presence_table(items: Sequence[RefItem]) -> dict[str, dict[str, float]]:
    n = len(items)
    both = [i for i in items if i.values["true"] is not None and i.values["pred"] is not None]
    p, r, f = macro_prf(
        [int(i.values["true"]) for i in both], [int(i.values["pred"]) for i in both]
    )
    return {
        "all": {
            "n": float(n),
            "accuracy": sum(i.values["correct"] for i in items) / n,
            "precision": p,
            "recall": r,
            "f1": f,
            **_counts(items),
        }
    }


def count_table(items: Sequence[RefItem]) -> dict[str, dict[str, float]]:
    t = [i.values["true"] for i in items]
    p = [i.values["pred"] for i in items]
    return {"all": {"n": float(len(items)), "rmse": rmse(t, p), "r2": r2(t, p), **_counts(items)}}


def mean_table(items: Sequence[RefItem], metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    row = {"n": float(len(items))}
    for m in metrics:
        row[m] = np_mean([i.values[m] for i in items if i.values[m] is not None])
    return {"all": {**row, **_counts(items)}}


def rle_table(items: Sequence[RefItem]) -> dict[str, dict[str, float]]:
    out = {
        "all": {
            "n": float(len(items)),
            "dropped": float(sum(1 for i in items if i.values["pred"] is None)),
            **_counts(items),
        }
    }
    for difficulty in ("Simple", "Complex"):
        for unit in ("meters", "feet"):
            group = [i for i in items if i.groups == {"difficulty": difficulty, "unit": unit}]
            kept = [i for i in group if i.values["pred"] is not None]
            t = [i.values["true"] for i in kept]
            p = [i.values["pred"] for i in kept]
            row = {"n": float(len(group)), "dropped": float(len(group) - len(kept))}
            for name, fn in (("rmse", rmse), ("mae", mae), ("mape", mape), ("r2", r2)):
                row[name] = round(fn(t, p), 2) if kept else math.nan
            out[f"{difficulty} {unit}"] = row
    return out


def mml_table(items: Sequence[RefItem]) -> dict[str, dict[str, float]]:
    n = len(items)
    correct = sum(i.values["correct"] for i in items)
    out = {"all": {"n": float(n), "correct": correct, "accuracy": correct / n, **_counts(items)}}
    for colour in ("blue", "red"):
        mine = [i for i in items if i.groups["colour"] == colour]
        c = sum(i.values["correct"] for i in mine)
        out[f"colour={colour}"] = {"n": float(len(mine)), "correct": c, "accuracy": c / (n / 2)}
    for zoom in sorted({i.groups["zoom"] for i in items if i.values["answered"]}):
        mine = [i for i in items if i.groups["zoom"] == zoom]
        answered = sum(i.values["answered"] for i in mine)
        c = sum(i.values["correct"] for i in mine)
        out[f"zoom={zoom}"] = {
            "n": float(len(mine)),
            "answered": answered,
            "correct": c,
            "accuracy": c / answered,
        }
    return out


def srn_table(items: Sequence[RefItem]) -> dict[str, dict[str, float]]:
    def row(group: Sequence[RefItem]) -> dict[str, float]:
        k = len(group)
        return {
            "n": float(k),
            "SR2": sum(i.values["exact"] for i in group) / k if k else math.nan,
            "aSA": sum(i.values["step_accuracy"] for i in group) / k if k else math.nan,
            "connectivity": sum(i.values["connected"] for i in group) / k if k else math.nan,
        }

    out = {"all": {**row(items), **_counts(items)}}
    for zoom in ("17", "18", "19"):
        out[f"zoom={zoom}"] = row([i for i in items if i.groups["zoom"] == zoom])
    return out
