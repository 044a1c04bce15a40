"""Terrain classification: the kind of terrain at a coordinate, six options (GPSBench's
form) or, in the variant ``terrain_classification_4``, four."""

from __future__ import annotations

from cartoqa.records import ChoiceTruth
from evaluators.gps import score_choice

from ...spec import TaskSpec
from .._register import register_gps
from .._sampling import Draft, Sampler
from .._terrain import TERRAIN_CLASSES, TERRAIN_SOURCE, ZONE, TerrainSampler, load_terrain

__all__ = [
    "ICE_MAX_LAT",
    "NEAR_KM",
    "TERRAIN_CITY_KM",
    "TERRAIN_DISTRACTORS",
    "TERRAIN_KINDS",
    "register_4",
    "terrain_classification",
    "terrain_classification_4",
    "terrain_distractors",
]

TERRAIN_KINDS = tuple(TERRAIN_CLASSES)
#: the paper's other three classes, distractors only (no point of ours is of them)
TERRAIN_DISTRACTORS = {"ice": "Arctic or ice", "sea": "ocean or sea", "water": "river or lake"}
#: a distractor must be clearly wrong for the point; it is left out where it could be argued:
#: "Arctic or ice" within ICE_MAX_LAT of a pole or with a polar/ice-cap climate zone (ET, EF)
#: within NEAR_KM (every mountain point: its rule is those zones); "ocean or sea" with sea
#: within NEAR_KM (every coastal point); "river or lake" everywhere but the desert points
#: (hot desert, no town within 50 km): the land mask has no inland water, and a point in a
#: city centre, a rainforest, a farmed plain, on a coast or high in the mountains may well
#: fall on a river or a lake
ICE_MAX_LAT, NEAR_KM = 50.0, 25.0
_POLAR_ZONES = {ZONE["ET"], ZONE["EF"]}


def terrain_distractors(t: TerrainSampler, kind: str, lat: float, lon: float) -> list[str]:
    """The extra classes that are clearly wrong at a point of ``kind`` (see above)."""
    out = []
    if abs(lat) < ICE_MAX_LAT and not (t.d.zones_within(lat, lon, NEAR_KM) & _POLAR_ZONES):
        out.append(TERRAIN_DISTRACTORS["ice"])
    if not t.d.sea_within(lat, lon, NEAR_KM):
        out.append(TERRAIN_DISTRACTORS["sea"])
    if kind == "desert":
        out.append(TERRAIN_DISTRACTORS["water"])
    return out


#: terrain's difficulty: the nearest city of 15,000's distance (km): under the first
#: "easy", under the second "medium", else "hard" (the farther, the less a reader can go by
#: a known place)
TERRAIN_CITY_KM = (25.0, 100.0)


def _terrain(s: Sampler, n: int, task: str) -> Draft:
    """A point of one terrain class (the classes in turn), chosen by ``_terrain``'s rules;
    six options (the paper's form: the other five of ours and, where clearly wrong, the
    paper's other three classes) or four (the variant)."""
    t = s.memo.get("terrain")
    if t is None:
        t = s.memo["terrain"] = TerrainSampler(load_terrain(), s.c, s.rng)
    kind = TERRAIN_KINDS[n % len(TERRAIN_KINDS)]
    lat, lon = t.point(kind)
    i, km = t.nearest_city(lat, lon)
    correct = TERRAIN_CLASSES[kind]
    others = [v for k, v in TERRAIN_CLASSES.items() if k != kind]
    if task == "terrain_classification":
        opts, letter = s.options(correct, others + terrain_distractors(t, kind, lat, lon), k=6)
        easy_km, medium_km = TERRAIN_CITY_KM
    else:
        opts, letter = s.options(correct, others)
        easy_km, medium_km = 25.0, 100.0
    listed = s.listed(opts)
    text = s.prompts.text(f"gps.{task}.question", lat=lat, lon=lon, options=listed)
    difficulty = "easy" if km < easy_km else "medium" if km < medium_km else "hard"
    meta = {
        "terrain": kind,
        "lat": round(lat, 5),
        "lon": round(lon, 5),
        "city_km": round(km, 1),
        # agricultural points start from hand-picked regions (see _terrain); the rest from data
        "terrain_source": "hand-picked region" if kind == "agricultural" else "data",
    }
    return Draft(
        text, ChoiceTruth(answer=letter, options=opts), str(s.c.subregion[i]), difficulty, meta
    )


def terrain_classification(s: Sampler, n: int) -> Draft:
    """The paper's form: six options."""
    return _terrain(s, n, "terrain_classification")


def terrain_classification_4(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: four of the six classes."""
    return _terrain(s, n, "terrain_classification_4")


register_gps(
    name="terrain_classification",
    track="applied",
    description="the kind of terrain at a coordinate, six options",
    truth_kinds=frozenset({"choice"}),
    score=score_choice,
    generator=terrain_classification,
    sources=(TERRAIN_SOURCE,),
)


def register_4() -> TaskSpec:
    """Register the variant ``terrain_classification_4`` (the package calls it after
    every default task)."""
    return register_gps(
        name="terrain_classification_4",
        track="variant",
        description="variant: the kind of terrain at a coordinate, four options",
        truth_kinds=frozenset({"choice"}),
        score=score_choice,
        generator=terrain_classification_4,
    )
