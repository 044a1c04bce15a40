"""The GPS tasks' specs, registered when ``cartoqa.tasks.gps`` is imported."""

from __future__ import annotations

from typing import Any

from cartoqa.records import GroupingTruth, Sample, TextTruth, truth_kinds_for
from evaluators.sample_scores import gps_metrics, gps_score

from ..spec import TaskSpec, register_task
from ._cities import CONTINENT_NAMES
from .generate import GPS_TASKS, GPS_VARIANTS, TRACKS

__all__ = ["DESCRIPTIONS"]

#: one line per task, for ``cartoqa tasks``
DESCRIPTIONS = {
    "format_conversion": "a coordinate from decimal degrees to DMS or back",
    "coordinate_transformation": "WGS84 to UTM (zone given) or Web Mercator, or back",
    "distance": "the great-circle distance between two cities, in km",
    "bearing": "the initial bearing from one city to another",
    "interpolation": "the point a fraction of the way along a great circle",
    "polygon": "the area of a polygon of 3-6 cities on the 6371 km sphere",
    "bounding_box": "the minimum and maximum latitude and longitude of 3-8 cities",
    "route_geometry": "which of four index lists Ramer-Douglas-Peucker keeps",
    "relative_position_pure": "north, east, south or west, by the bearing between coordinates",
    "place_association": "the city at a noisy coordinate (province and country graded too)",
    "name_disambiguation": "which of four same-name cities, in four states, is at a point",
    "relative_position_applied": "north, east, south or west between two cities named only",
    "proximity": "which of four cities is nearest a fifth, all with coordinates",
    "route_analysis": "whether a named city is on the way between two others (detour < 10 %)",
    "spatial_patterns": "the outlier of five named cities (four on one continent)",
    "boundary_analysis": "four to six named cities grouped by continent",
    "terrain_classification": "the kind of terrain at a coordinate, six options",
    "missing_data": "a city's missing latitude or longitude, from its name and the other",
    "polygon_perimeter": "variant: a polygon's area and perimeter",
    "bounding_box_full": "variant: the bounds, centre, centroid and diagonal of 3-8 cities",
    "route_geometry_indices": "variant: the indices Ramer-Douglas-Peucker keeps, written out",
    "relative_position_pure_8": "variant: the eight compass points between coordinates",
    "format_conversion_lenient": "variant: format conversion, within 0.05 arcsec or 0.0001 deg",
    "relative_position_pure_latlon": (
        "variant: north, south, east or west by the larger latitude or longitude difference"
    ),
    "place_association_levels": "variant: the city, province and country at a noisy coordinate",
    "name_disambiguation_countries": "variant: four same-name cities in four countries",
    "proximity_names": "variant: the nearest of four cities to a fifth, by name only",
    "spatial_patterns_hinted": (
        "variant: the outlier of five named cities, four of one subregion, the hint given"
    ),
    "terrain_classification_4": "variant: the kind of terrain at a coordinate, four options",
}
#: what the random baseline draws a number from, where a task has a natural range
ANSWER_SPACES: dict[str, dict[str, Any]] = {
    "distance": {"low": 0, "high": 20_015},
    "bearing": {"low": 0, "high": 360},
    "missing_data": {"low": -180, "high": 180},
    # the random baseline groups the cities into any of the continents, not only the truth's
    "boundary_analysis": {"groups": sorted(CONTINENT_NAMES.values())},
}
#: the metrics beside accuracy a task's scores carry
METRICS = {
    "distance": ("accuracy", "1-MAPE"),
    "polygon": ("accuracy", "1-MAPE"),
    "polygon_perimeter": ("accuracy", "1-MAPE"),
    "place_association": ("accuracy", "province accuracy", "country accuracy"),
    "place_association_levels": ("accuracy", "province accuracy", "country accuracy"),
}


def format_place(sample: Sample) -> str:
    """Place association's answer as its prompt asks: city, province, country."""
    truth = sample.ground_truth
    assert isinstance(truth, TextTruth)
    extra = sample.metadata.model_extra or {}
    parts = [truth.answer, extra.get("province"), extra.get("country")]
    return "FINAL ANSWER: " + ", ".join(p for p in parts if p)


def format_grouping(sample: Sample) -> str:
    """Boundary analysis's answer as its prompt asks, plain text: "Asia: A, B; Europe: C"."""
    truth = sample.ground_truth
    assert isinstance(truth, GroupingTruth)
    return "FINAL ANSWER: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in truth.groups.items())


def format_city(sample: Sample) -> str:
    """Place association's answer as its sample asks: the city alone where the sample says
    so (``asked: city``, the default's), else, for a sample made before the default asked
    the city alone, city, province and country, as its prompt asked."""
    extra = sample.metadata.model_extra or {}
    if extra.get("asked") == "city":
        truth = sample.ground_truth
        assert isinstance(truth, TextTruth)
        return f"FINAL ANSWER: {truth.answer}"
    return format_place(sample)


#: what the oracle writes, where the truth's kind alone does not say
ANSWER_FORMATS = {
    "place_association": format_city,
    "place_association_levels": format_place,
    "boundary_analysis": format_grouping,
}
#: GPS breakdowns (metadata keys; a key no sample of a task carries gives no rows)
GPS_GROUPS = ("split", "difficulty", "region", "noise_m", "terrain")

for _name in (*GPS_TASKS, *GPS_VARIANTS):
    register_task(
        TaskSpec(
            name=_name,
            family="gps",
            track=TRACKS[_name],
            description=DESCRIPTIONS[_name],
            truth_kinds=truth_kinds_for(_name) or frozenset(),
            score=gps_score,
            reduce=gps_metrics,
            metrics=METRICS.get(_name, ("accuracy",)),
            group_by=GPS_GROUPS,
            answer_space=ANSWER_SPACES.get(_name, {}),
            answer_format=ANSWER_FORMATS.get(_name),
        ),
        replace=True,
    )
