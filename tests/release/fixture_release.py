"""A tiny CartoMapQA release in the published layout, and model responses stored as the
published ``get_response_*.py`` scripts would store them.

``make_release(root)`` writes ``root/Dataset/CartoMapQA/...`` (the release root, see
``release_root``) for all six tasks, with one tiny PNG reused for every image.
``make_responses(root, model, answers)`` writes ``root/Responses/<TASK>/<model>/...`` and
returns ``root/Responses``; the stored ``Answer``/``Result`` come from the independent parsers of
``published_reference`` (random fall-backs drawn from ``rng_for(0, <file name>)``).

``TRUTH`` holds every question and its truth; ``ANSWERS`` the raw replies (typical and
hostile), keyed by release task label and then by the response's key (the response file
name; MFS: the question id).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from . import published_reference as ref

MODEL = "fixture-model"
CITIES = ("Lyon", "Osaka")


def release_root(root: Path) -> Path:
    return Path(root) / "Dataset" / "CartoMapQA"


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 220, 240)).save(buf, format="PNG")
    return buf.getvalue()


PNG = _png()

# --------------------------------------------------------------------------- MFS

_MFS_REPLIES = [
    "A",
    "B",
    "C",
    "D",
    "E",
    " C",
    "c",
    "The correct answer is C.",
    "The correct answer is C",
    "correct answer is D.",
    "Answer: B",
    "**B**",
    "B) Bank",
    "(C)",
    "",
    "   ",
    "I think the correct answer is\nC",
    "The correct answer is (C).",
    "E.",
    "Option A",
    "A.",
    "None of these",
    "The correct answer is C. Also D",
    "D\nbecause of the cross",
    "the correct answer is E",
    "**Answer:** A",
    "<|eot|>",
    "Correct answer is B",
    "F",
    "a",
    "\nB",
    "The correct answer is c.",
    "I'm unsure",
    "BANK",
    "C is correct",
    "The symbol is a cup. The correct answer is D.",
    "Answer is A",
    "X",
    "E",
    "The correct answer is A..",
    "\t D ",
]
_MFS = {
    f"{i + 1}": {
        "ID": f"sym_{i + 1}.png",
        "Question": "Which feature does this symbol mark?",
        "A": "bank",
        "B": "cafe",
        "C": "pharmacy",
        "D": "school",
        "E": "park",
        "Correct answer": "ABCDE"[(i * 2) % 5],
    }
    for i in range(len(_MFS_REPLIES))
}

# --------------------------------------------------------------------------- STMF

_PRESENCE_REPLIES = [
    "Yes",
    "No",
    "yes",
    "no",
    "**Answer:** Yes",
    "*Yes*",
    "Yes.",
    "- Yes",
    "YES, there is a pharmacy",
    "No, none visible",
    " Yes",
    "\n\nNo",
    "Nope",
    "Not sure",
    "I cannot tell",
    "",
    "Y",
    "Yes<|eot|>",
    "**Yes**\nThere is one",
    "The answer is yes",
    "Noted: yes",
    "Yesterday",
    "N/A",
    "Maybe",
    "**Answer:**\nNo",
    "no.",
    "Yes, a green cross is drawn.",
    "No\nYes",
    "Answer: Yes",
    "absolutely yes",
    "**Answer:** No",
    "...Yes",
    "- - no",
    "no<|eot|>",
    "**No**",
    "NO",
    "There is no bank.",
    "yes\n",
    '"Yes"',
    "Yes — one icon",
    "No.\nThe map shows none.",
    "Possibly",
]
_COUNT_REPLIES = [
    "5",
    "0",
    "12",
    "Five",
    "five",
    "There are 3 pharmacies.",
    "there are 4 shops",
    "There is one pharmacy.",
    "There is 1",
    "twenty-one",
    "Thirty",
    "thirty",
    "2.5",
    "-3",
    "1,000",
    "I count 7 restaurants",
    "There are twenty one",
    "The map shows that there are 2",
    "none",
    "",
    "**3**",
    "3 restaurants",
    "There are  5",
    "There are 3. There are 5",
    "There are many",
    "one hundred and five",
    "About 6",
    "There are no pharmacies",
    "Seven",
    "zero",
    "There is a pharmacy",
    "4\nThere are 5",
    "There are\n5",
    "Count: 8",
    "8 (eight)",
    "eight",
    "ten.",
    "There is 2 and there are 3",
    " 9 ",
    "nine<|eot|>",
    "There are nine.",
    "-",
]
_NAMES_REPLIES = [
    "Green Pharmacy\nCity Drugs",
    "1. Green Pharmacy\n2. City Drugs",
    "**Green Pharmacy**",
    "",
    "None",
    "none",
    "I am unable to identify any names",
    "i am unable to identify",
    "There are no named pharmacies.",
    "Green Pharmacy\n\nCity Drugs",
    '""\nGreen Pharmacy',
    "Green Pharmacy.",
    "Green Pharmacy<|eot|>",
    "Green Pharmacy, City Drugs",
    "green pharmacy",
    "Green Pharmacy\nGreen Pharmacy",
    "- Green Pharmacy",
    "I'm not able to read names",
    '"Green Pharmacy"',
    "Green Pharmacy\nCity Drugs.",
    "I found: Green Pharmacy",
    '""',
    '""\n""',
    "City Drugs\n<|eot|>",
    "Le Bistro\nChez Paul",
    "Le Bistro",
    "1.Le Bistro",
    "10. Chez Paul",
    "Chez Paul.<|eot|>",
    "Chez Paul<|eot|>.",
    "There is no restaurant",
    "Le Bistro\nNone",
    "NONE",
    "  Green Pharmacy  \n  City Drugs  ",
    "*",
    "1. \n2. City Drugs",
    "Green Pharmacy\nCity Drugs\nOld Mill",
    "Sakura Cafe",
    "\n\n",
    "None.",
    'Sakura Cafe\n""',
    "Blue Bottle",
]


def _stmf_truth(kind: str, i: int) -> Any:
    if kind == "presence":
        return "Yes" if i % 3 != 1 else "No"
    if kind == "counting":
        return [5, 0, 12, 3, 21, 30, 2][i % 7]
    names = [
        ["Green Pharmacy", "City Drugs"],
        [],
        ["Le Bistro", "Chez Paul"],
        ["Sakura Cafe"],
        ["Green Pharmacy"],
    ]
    return names[i % 5]


_STMF_KINDS = {
    "presence": _PRESENCE_REPLIES,
    "counting": _COUNT_REPLIES,
    "name_listing": _NAMES_REPLIES,
}
_STMF = {
    kind: {
        f"q_{i + 1}": {
            "Image": f"map_{i % 40 + 1}.png",
            "City": CITIES[i % 2],
            "MF type": ["drug store/pharmacy", "restaurant", "coffee shop"][i % 3],
            "Correct answer": _stmf_truth(kind, i),
        }
        for i in range(len(replies))
    }
    for kind, replies in _STMF_KINDS.items()
}


def stmf_file(kind: str, qkey: str, question: dict) -> str:
    return f"{question['City']}_{question['Image'][:-4]}_q{qkey.split('_')[1]}_{kind}.json"


# --------------------------------------------------------------------------- MTMF


def _mtmf_truth(i: int) -> dict[str, dict[str, Any]]:
    truth = {name: {"count": 0, "names": []} for name in ref.MTMF_TYPES}
    truth["restaurant"] = {"count": i % 4, "names": ["Le Bistro", "Chez Paul", ""][: i % 4]}
    truth["bus stop"] = {"count": 2 + i % 2, "names": []}
    truth["hospital"] = {"count": i % 2, "names": ["St Mary"] if i % 2 else []}
    if i % 5 == 0:
        truth["river"] = {"count": 1, "names": ["Rhone"]}
    return truth


_MTMF = {f"{CITIES[i % 2]}/map_{i + 1}.png": _mtmf_truth(i) for i in range(42)}


def _mtmf_full(truth: dict, *, tweak=None, key=lambda n: n) -> str:
    body = {key(n): {"count": v["count"], "names": list(v["names"])} for n, v in truth.items()}
    if tweak:
        tweak(body)
    return json.dumps(body)


def _mtmf_replies() -> list[str]:
    out: list[str] = []
    truths = list(_MTMF.values())

    def set_(name, field, value):
        def fn(body):
            body[name][field] = value

        return fn

    def drop(name):
        return lambda body: body.pop(name)

    recipes = [
        lambda t: _mtmf_full(t),
        lambda t: "```json\n" + _mtmf_full(t) + "\n```",
        lambda t: "Here is the JSON:\n" + _mtmf_full(t),
        lambda t: "not json at all",
        lambda t: _mtmf_full(t, tweak=set_("restaurant", "names", "Le Bistro")),
        lambda t: _mtmf_full(t, tweak=set_("bus stop", "count", -1)),
        lambda t: _mtmf_full(t, tweak=set_("bus stop", "count", 2.5)),
        lambda t: _mtmf_full(t)[:-1] + ', "Hospital": {"count": 7, "names": ["X"]}}',
        lambda t: _mtmf_full(t, key=lambda n: n.replace(" ", "_")),
        lambda t: _mtmf_full(t, key=lambda n: n.title()),
        lambda t: _mtmf_full(t) + "<|eot|>",
        lambda t: "[1, 2, 3]",
        lambda t: '"hello"',
        lambda t: "{}",
        lambda t: _mtmf_full(t, tweak=set_("restaurant", "names", ["", "  ", "Le Bistro"])),
        lambda t: _mtmf_full(t, tweak=set_("restaurant", "names", [" Le Bistro ", "Chez Paul"])),
        lambda t: _mtmf_full(t, tweak=lambda b: b.__setitem__("hospital", 3)),
        lambda t: _mtmf_full(t, tweak=set_("river", "names", None)),
        lambda t: _mtmf_full(t, tweak=drop("public toilet")),
        lambda t: _mtmf_full(t, tweak=set_("bus stop", "count", "3")),
        lambda t: _mtmf_full(t, tweak=lambda b: b.__setitem__("temple", {"count": 1, "names": []})),
        lambda t: "",
        lambda t: "```json\n" + _mtmf_full(t) + "\n```\nI counted carefully.",
        lambda t: _mtmf_full(t, tweak=set_("restaurant", "names", ["Le Bistro", "Le Bistro"])),
        lambda t: _mtmf_full({n: {"count": 0, "names": []} for n in t}),
        lambda t: _mtmf_full(t, tweak=set_("hospital", "names", ["st mary"])),
        lambda t: "[" + _mtmf_full(t) + "]",
        lambda t: _mtmf_full(t, tweak=set_("restaurant", "count", 40)),
        lambda t: _mtmf_full(t, tweak=set_("bus stop", "count", "three")),
        lambda t: _mtmf_full(t, tweak=set_("bus stop", "count", None)),
        lambda t: _mtmf_full(t, tweak=set_("hospital", "count", True)),
        lambda t: _mtmf_full(t, tweak=lambda b: b["restaurant"].pop("names")),
        lambda t: _mtmf_full(t, tweak=lambda b: b["bus stop"].pop("count")),
        lambda t: _mtmf_full(t, tweak=set_("restaurant", "names", ["Le Bistro", 5])),
    ]
    for i, truth in enumerate(truths):
        out.append(recipes[i % len(recipes)](truth))
    return out


def mtmf_file(map_key: str) -> str:
    area, image = map_key.split("/")
    return f"{area}_{image[:-4]}"


# --------------------------------------------------------------------------- RLE

_RLE = [
    {
        "route_ID": f"{i + 1}",
        "Ans_meters": 500.0 + 37.25 * i,
        "Ans_feet": (500.0 + 37.25 * i) * 3.28084,
        "difficulty": "Simple" if i % 2 == 0 else "Complex",
        "city": CITIES[i % 2],
        "zoom_scale": 15 + i % 3,
    }
    for i in range(21)
]
_RLE_REPLIES = [
    "625 m",
    "625m",
    "The route length is about 625 meters",
    "-3000",
    "3,000 ft",
    "**625** m",
    "Approximately 600 m",
    "The length is approximately 1,200 feet.",
    "I cannot tell",
    "Scale bar found\nThe path spans 3 bars, which converts to 2000 ft",
    "1.2e3 m",
    "Answer: 500 m",
    "The answer is: 700 m",
    "It is 1 km",
    "0 m",
    "Distance: 1,234.5 meters",
    "-1",
    "",
    "The distance is approximately",
    "The length is 625m",
    "800\nm",
    "about 900 m",
    "Length: 1000 m (about 3281 ft)",
    "**Answer:** 1500 ft",
    "1,640.4 feet",
    "2 000 m",
    "It measures 450 metres",
    "The route is 1.5 km long",
    "700<|eot|>",
    "  550 m  ",
    "The total is 1200 ft which converts to 365 m",
    "Roughly 2,100 ft",
    "approx. 640 m",
    "- 720 m",
    "520 meters.",
    "The route length is 2500.",
    "which converts to 10 m",
    "Unknown",
    "nan m",
    "3 km",
    "1,900 ft",
    "Infinity ft",
]


def rle_file(route: dict, unit: str) -> str:
    return f"route_{route['route_ID']}_{unit}_{route['difficulty']}.json"


# --------------------------------------------------------------------------- MML

_MML_ROADS = [
    ("Main Street", "Oak Road"),
    ("Wright Street", "Elm Avenue"),
    ("Rue de la Paix, Nord", "Avenue Foch"),
]
_MML = {
    f"{i + 1}": {
        "road_1": _MML_ROADS[i % 3][0],
        "road_2": _MML_ROADS[i % 3][1],
        "zoom_level": 17 + i % 3,
    }
    for i in range(22)
}


def _mml_replies(r1: str, r2: str, i: int) -> str:
    good = json.dumps({"road_1": r1, "road_2": r2})
    forms = [
        f"```json\n{good}\n```",
        json.dumps({"road_1": r2, "road_2": r1}),
        good,
        json.dumps({"road_1": r1, "road_2": "Nowhere Lane"}),
        json.dumps({"road_1": r1}),
        json.dumps({"road_1": "Nowhere Lane"}),
        json.dumps([r1, r2]),
        f"{r1} and {r2}",
        "null",
        "42",
        json.dumps({"road_1": r1.lower(), "road_2": r2.lower()}),
        good + "<|eot|>",
        f"JSON: {good}",
        f"Here is the json: {good}",
        json.dumps({"Road_1": r1, "road_2": r2}),
        json.dumps({"road_1": f" {r1}", "road_2": r2}),
        "```\n" + good + "\n```",
        json.dumps({"road_2": r1, "road_1": r2, "note": "x"}),
        "",
        '{"road_1": }',
        json.dumps({"road_1": r2}),
    ]
    return forms[i % len(forms)]


def mml_file(marker: str, colour: str) -> str:
    return f"{marker}-{colour}.json"


# --------------------------------------------------------------------------- SRN


def _node(nid: str, lat: float, lon: float) -> list:
    return [nid, lat, lon]


def _network(kind: str) -> tuple[dict, dict, dict, list, list]:
    """(road_dict, road_conjunction, route fields, origin, destination) of one map kind."""
    # the markers' node ids are numbers, the road tables' text: the published check compares
    # them through str()
    o, j1, d = _node("101", 0.0, 0.0), _node("102", 0.001, 0.0), _node("103", 0.001, 0.001)
    if kind in ("A", "D"):
        j2, j3 = _node("104", 0.0005, 0.0), _node("105", 0.0005, 0.001)
        roads = {
            "Main Street": {"1": [o, j2, j1]},
            "Elm Avenue": {"2": [j1, d]},
            "Birch Way": {"3": [j2, j3]},
            "Cedar Lane": {"4": [j3, d]},
            "Pine Lane": {"5": [d, _node("106", 0.002, 0.001)]},
        }
        conj = {
            "Elm Avenue": {"Main Street": [j1]},
            "Main Street": {"Elm Avenue": [j1], "Birch Way": [j2]},
            "Birch Way": {"Main Street": [j2], "Cedar Lane": [j3]},
            "Cedar Lane": {"Birch Way": [j3]},
        }
        truth = "[blue, continue straight, Main Street, turn right, Elm Avenue, red]"
        if kind == "D":  # a truth the published normalisation would shorten (it is not applied)
            truth = (
                "[blue, continue straight, Main Street, continue straight, Main Street, "
                "turn right, Elm Avenue, red]"
            )
    elif kind == "B":
        d = _node("103", 0.001, -0.001)
        roads = {"Oak Road, East": {"1": [o, j1]}, "Main Street": {"2": [j1, d]}}
        conj = {"Main Street": {"Oak Road, East": [j1]}, "Oak Road, East": {"Main Street": [j1]}}
        truth = "[blue, continue straight, Oak Road, East, turn left, Main Street, red]"
    else:
        roads = {"Wright Street": {"1": [o, j1]}, "Elm Avenue": {"2": [j1, d]}}
        conj = {"Elm Avenue": {"Wright Street": [j1]}, "Wright Street": {"Elm Avenue": [j1]}}
        truth = "[blue, continue straight, Wright Street, turn right, Elm Avenue, red]"
    return roads, conj, {"route_directions": truth}, [int(o[0]), *o[1:]], [int(d[0]), *d[1:]]


_SRN_REPLIES = {
    "A": [
        "[blue, continue straight, Main Street, turn right, Elm Avenue, red]",
        "blue, continue straight, Main Street, turn right, Elm Avenue, red",
        "**Answer:** [blue, continue straight, Main Street, turn right, Elm Avenue, red]",
        "[Blue, continue straight, Main Street, turn right, Elm Avenue, Red]",
        "[blue, red]",
        "[blue, continue straight, Main Street, turn right, Pine Lane, red]",
        "[blue, continue straight, Main Street]",
        "[blue, continue straight, Main Street, turn right, Elm Avenue, red, turn left]",
        "[blue, turn left, Main Street, turn right, Elm Avenue, red]",
        "[blue, continue straight, Main Street, continue straight, "
        "Main Street, turn right, Elm Avenue, red]",
        "[red, continue straight, Main Street, turn right, Elm Avenue, blue]",
        "I cannot find a route",
        "[blue, continue straight, Elm Avenue, red]",
        "[blue, go straight, Main Street, turn right, Elm Avenue, red]",
        "[blue, continue straight, Main Street, turn right, Birch Way, turn left, Cedar Lane, red]",
        "[blue, continue straight, Main Street, turn right, Cedar Lane, red]",
        "[blue, continue straight, Main Street, turn right, Elm Ave, red]",
        "[blue, continue straight, main street, turn right, elm avenue, red]",
        "Answer: [blue, continue straight, Main Street, turn right, Elm Avenue, red]<|eot|>",
        "```\n[blue, continue straight, Main Street, turn right, Elm Avenue, red]\n```",
        "[blue, continue straight, Main Street, turn right, "
        "Elm Avenue, red]\nExplanation: north, then east.",
        "[blue, continue straight, Main Street, turn right, "
        "Birch Way, turn right, Cedar Lane, red]",
        "[continue straight, Main Street, turn right, Elm Avenue, red]",
    ],
    "D": [
        "[blue, continue straight, Main Street, continue straight, "
        "Main Street, turn right, Elm Avenue, red]",
        "[blue, continue straight, Main Street, turn right, Elm Avenue, red]",
    ],
    "B": [
        "[blue, continue straight, Oak Road, East, turn left, Main Street, red]",
        "[blue, continue straight, Oak Road East, turn left, Main Street, red]",
        '[blue, continue straight, "Oak Road, East", turn left, Main Street, red]',
        "[blue, continue straight, Oak Road, East, turn right, Main Street, red]",
        "[blue, continue straight, Main Street, red]",
        "[blue, red]",
        "[]",
        "",
        "[blue, turn left, Main Street, red]",
        "[blue, continue straight, Oak Road, red]",
    ],
    "C": [
        "[blue, continue straight, Wright Street, turn right, Elm Avenue, red]",
        "[blue, turn left, Wright Street, turn right, Elm Avenue, red]",
        "[blue, continue straight, Wright Street, turn left, Elm Avenue, red]",
        "[blue, continue straight, wright street, turn right, elm avenue, red]",
        "[blue, continue straight, Elm Avenue, red]",
        "[blue, continue straight, Wright Street, red]",
        "[blue, continue straight, Wright Street, turn right, "
        "Elm Avenue, turn left, Pine Lane, red]",
        "[blue, make a U-turn and continue straight, Wright Street, turn right, Elm Avenue, red]",
        "[blue, , Wright Street, turn right, Elm Avenue, red]",
        "[blue, continue straight, 'Wright Street', turn right, 'Elm Avenue', red]",
    ],
}
_SRN: dict[str, dict[str, Any]] = {}
_SRN_ANSWERS: dict[str, str] = {}
for _kind, _replies in _SRN_REPLIES.items():
    for _reply in _replies:
        _n = f"{len(_SRN) + 1}"
        _roads, _conj, _route, _o, _d = _network(_kind)
        _SRN[_n] = {
            "route": {**_route, "origin": _o, "destination": _d, "zoom_level": 17 + len(_SRN) % 3},
            "road_dict": _roads,
            "conjunction": _conj,
        }
        _SRN_ANSWERS[f"{_n}.json"] = _reply

TRUTH: dict[str, Any] = {
    "MFS": _MFS,
    "STMF": _STMF,
    "MTMF": _MTMF,
    "RLE": _RLE,
    "MML": _MML,
    "SRN": _SRN,
}

ANSWERS: dict[str, dict[str, str]] = {
    "MFS": {qid: _MFS_REPLIES[i] for i, qid in enumerate(_MFS)},
    **{
        label: {
            stmf_file(kind, q, _STMF[kind][q]): _STMF_KINDS[kind][i]
            for i, q in enumerate(_STMF[kind])
        }
        for label, kind in (
            ("STMF presence", "presence"),
            ("STMF counting", "counting"),
            ("STMF name listing", "name_listing"),
        )
    },
    "MTMF": {mtmf_file(k): r for k, r in zip(_MTMF, _mtmf_replies(), strict=False)},
    "RLE": {
        rle_file(route, unit): _RLE_REPLIES[(2 * i + j) % len(_RLE_REPLIES)]
        for i, route in enumerate(_RLE)
        for j, unit in enumerate(("meters", "feet"))
    },
    "MML": {
        mml_file(m, c): _mml_replies(t["road_1"], t["road_2"], 2 * i + j)
        for i, (m, t) in enumerate(_MML.items())
        for j, c in enumerate(("blue", "red"))
        if (m, c) != ("22", "red")
    },  # one marker answered in blue only: unbalanced
    "SRN": _SRN_ANSWERS,
}


# --------------------------------------------------------------------------- writers


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4), encoding="utf-8")


def _write_png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(PNG)


def make_release(root: Path) -> None:
    """The release's questions, truths and images under ``release_root(root)``."""
    base = release_root(root)
    feat = base / "MapFeatureUnderstanding"
    _write_json(feat / "MFS_task" / "mfs.json", _MFS)
    for q in _MFS.values():
        _write_png(feat / "_Symbols" / q["ID"])
    for kind, questions in _STMF.items():
        _write_json(feat / "STMF_task" / f"{kind}.json", questions)
    for map_key, truth in _MTMF.items():
        area, image = map_key.split("/")
        _write_png(feat / "_Maps" / area / image)
        _write_json(feat / "MTMF_task" / "Groundtruth" / area / f"{image[:-4]}.json", truth)
    scale = base / "MapScaleUnderstanding"
    _write_json(scale / "Scale_understanding.json", _RLE)
    for route in _RLE:
        _write_png(scale / "_Route" / f"route_{route['route_ID']}.png")
    marker = base / "MapMarkerLocalization"
    for n, info in _MML.items():
        _write_json(marker / "_marker_info" / f"{n}.json", info)
        for colour in ("blue", "red"):
            _write_png(marker / colour / f"{n}.png")
    nav = base / "MapNavigation"
    for n, entry in _SRN.items():
        _write_json(nav / "_routes" / f"{n}.json", entry["route"])
        _write_json(nav / "road_dict" / f"{n}.json", entry["road_dict"])
        _write_json(nav / "road_conjunction" / f"{n}.json", entry["conjunction"])
        _write_png(nav / "_maps" / f"{n}.png")


def stored_records(answers: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, Any]]:
    """Release task label -> response key -> the record the published scripts would store
    (MTMF: a list, or the text of a ``.txt``)."""
    answers = ANSWERS if answers is None else answers
    out: dict[str, dict[str, Any]] = {}
    mfs = {}
    for qid, reply in answers.get("MFS", {}).items():
        letter, _ = ref.parse_mfs(reply)
        mfs[qid] = {**_MFS[qid], "Response": reply, "Answer": letter}
    out["MFS"] = mfs
    for label, kind in (
        ("STMF presence", "presence"),
        ("STMF counting", "counting"),
        ("STMF name listing", "name_listing"),
    ):
        by_file = {stmf_file(kind, q, v): v for q, v in _STMF[kind].items()}
        records = {}
        for key, reply in answers.get(label, {}).items():
            rng = ref.rng_for(0, key)
            if kind == "presence":
                answer: Any = ref.parse_presence(reply, rng)[0]
            elif kind == "counting":
                answer = ref.parse_count(reply, rng)[0]
            else:
                answer = ref.parse_names(reply)
            records[key] = {**by_file[key], "Response": reply, "Answer": answer}
        out[label] = records
    by_map = {mtmf_file(k): t for k, t in _MTMF.items()}
    out["MTMF"] = {
        key: ref.parse_mtmf(reply, by_map[key]) for key, reply in answers.get("MTMF", {}).items()
    }
    by_route = {rle_file(r, u): (r, u) for r in _RLE for u in ("meters", "feet")}
    rle = {}
    for key, reply in answers.get("RLE", {}).items():
        route, unit = by_route[key]
        rle[key] = {
            "Correct_answer": round(route[f"Ans_{unit}"], 3),
            "Response": reply,
            "Result": ref.parse_rle(reply),
            "Measure": unit,
            "Difficulty": route["difficulty"],
            "City": route["city"],
            "Zoom_level": route["zoom_scale"],
        }
    out["RLE"] = rle
    mml = {}
    for key, reply in answers.get("MML", {}).items():
        n, colour = key[:-5].split("-")
        value = ref.parse_mml(reply)
        mml[key] = {
            **_MML[n],
            "Marker_color": colour,
            "Response": reply,
            "Answer": value if value is not None else reply,
        }
    out["MML"] = mml
    out["SRN"] = {
        key: {**_SRN[key[:-5]]["route"], "Response": reply, "Answer": ref.parse_srn(reply)}
        for key, reply in answers.get("SRN", {}).items()
    }
    return out


_FOLDERS = {
    "MFS": "MFS",
    "STMF presence": "STMF/{m}/presence",
    "STMF counting": "STMF/{m}/counting",
    "STMF name listing": "STMF/{m}/name_listing",
    "MTMF": "MTMF",
    "RLE": "RLE",
    "MML": "MML",
    "SRN": "SRN",
}


def model_folder(root: Path, release_folder: str, model: str = MODEL) -> Path:
    return Path(root) / "Responses" / release_folder / model


def make_responses(
    root: Path, model: str = MODEL, answers: dict[str, dict[str, str]] | None = None
) -> Path:
    """``root/Responses/<TASK>/<model>/`` as the published scripts save them; returns
    ``root/Responses``."""
    records = stored_records(answers)
    responses = Path(root) / "Responses"
    if records["MFS"]:
        _write_json(responses / "MFS" / model / f"{model}.json", records["MFS"])
    for label in ("STMF presence", "STMF counting", "STMF name listing"):
        kind = _FOLDERS[label].split("/")[-1]
        for key, record in records[label].items():
            _write_json(responses / "STMF" / model / kind / key, record)
    for key, record in records["MTMF"].items():
        if isinstance(record, str):
            path = responses / "MTMF" / model / f"{key}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(record, encoding="utf-8")
        else:
            _write_json(responses / "MTMF" / model / f"{key}.json", record)
    for task in ("RLE", "MML", "SRN"):
        for key, record in records[task].items():
            _write_json(responses / task / model / key, record)
    return responses
