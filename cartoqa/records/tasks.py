"""The task names cartoqa knows and the ground-truth kinds each allows.

CartoMapQA's six map tasks (STMF split into its three requests) and
GPSBench's seventeen text tasks.  A sample whose task is registered must
carry a ground truth of an allowed kind; ``register_task`` adds new ones.
"""

from __future__ import annotations

__all__ = ["TASK_TRUTH_KINDS", "declare_truth_kinds", "register_task", "truth_kinds_for"]

#: task name -> the ground-truth kinds its samples may carry
TASK_TRUTH_KINDS: dict[str, frozenset[str]] = {
    # CartoMapQA (map images)
    "mfs": frozenset({"choice"}),
    "stmf_presence": frozenset({"boolean"}),
    "stmf_count": frozenset({"count"}),
    "stmf_names": frozenset({"names"}),
    "mtmf": frozenset({"feature_table"}),
    "rle": frozenset({"number"}),
    "mml": frozenset({"road_pair"}),
    "srn": frozenset({"route"}),
    # GPSBench, pure GPS track
    "format_conversion": frozenset({"text", "coordinate"}),
    "coordinate_transformation": frozenset({"values", "coordinate"}),
    "distance": frozenset({"number"}),
    "bearing": frozenset({"number"}),
    "interpolation": frozenset({"coordinate"}),
    "polygon": frozenset({"number"}),
    "bounding_box": frozenset({"values"}),
    "route_geometry": frozenset({"choice"}),
    "relative_position_pure": frozenset({"choice"}),
    # cartoqa's own forms of six of them (separate tasks, so their scores never mix)
    "polygon_perimeter": frozenset({"values"}),
    "bounding_box_full": frozenset({"values"}),
    "route_geometry_indices": frozenset({"indices"}),
    "relative_position_pure_8": frozenset({"choice"}),
    "format_conversion_lenient": frozenset({"text", "coordinate"}),
    "relative_position_pure_latlon": frozenset({"choice"}),
    # GPSBench, applied track
    "place_association": frozenset({"text"}),
    "name_disambiguation": frozenset({"choice"}),
    "relative_position_applied": frozenset({"choice"}),
    "proximity": frozenset({"choice", "text"}),
    "route_analysis": frozenset({"boolean"}),
    "spatial_patterns": frozenset({"text"}),
    "boundary_analysis": frozenset({"grouping"}),
    "terrain_classification": frozenset({"choice"}),
    "missing_data": frozenset({"coordinate", "number"}),
    # cartoqa's own forms of five of them (variants, as above)
    "place_association_levels": frozenset({"text"}),
    "name_disambiguation_countries": frozenset({"choice"}),
    "proximity_names": frozenset({"choice", "text"}),
    "spatial_patterns_hinted": frozenset({"text"}),
    "terrain_classification_4": frozenset({"choice"}),
}


def declare_truth_kinds(name: str, kinds: set[str] | frozenset[str]) -> None:
    """Declare a task name and the ground-truth kinds its samples may carry, to the sample
    schema.  ``cartoqa.tasks.register_task`` calls it for every task it registers."""
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"task name {name!r} must be letters, digits and underscores")
    TASK_TRUTH_KINDS[name] = frozenset(kinds)


#: the old name, kept for code written before ``cartoqa.tasks.register_task``
register_task = declare_truth_kinds


def truth_kinds_for(task: str) -> frozenset[str] | None:
    """The allowed ground-truth kinds of a task, or None for a task nobody registered."""
    return TASK_TRUTH_KINDS.get(task)
