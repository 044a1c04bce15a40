"""The task side's names and places (issue 29): the map tasks' shared view code is
``cartoqa.tasks.views``, the 22 feature types are schema data in ``cartoqa.records``, the
scorers, stores and review drawings import no task module, one module per "features" name,
and no spec carries a parser that nothing calls."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
from pathlib import Path

from cartoqa import __version__
from cartoqa.records.scores import SCORE_SCHEMA_VERSION
from cartoqa.tasks.spec import registered_tasks

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cartoqa", "maps", "symbols", "annotations", "evaluators")
#: modules below the task generators (architecture.md): they read the schema, never a task
LOWER = sorted(
    [
        *(ROOT / "evaluators").glob("*.py"),
        *(ROOT / "cartoqa" / "stores").glob("*.py"),
        *(ROOT / "cartoqa" / "records").glob("*.py"),
        *(ROOT / "symbols").glob("*.py"),
        ROOT / "annotations" / "drawing.py",
    ]
)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports by absolute name, at module level or in a function."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def test_the_scorers_stores_and_drawings_import_no_task_module():
    assert len(LOWER) > 30
    found = {
        p.relative_to(ROOT).as_posix(): sorted(
            m for m in _imports(p) if m.startswith("cartoqa.tasks")
        )
        for p in LOWER
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_old_homes_are_gone_and_the_new_ones_hold_the_names():
    for gone in (
        "cartoqa.tasks._views",
        "cartoqa.tasks.map_features",
        "evaluators.map_features",
    ):
        assert importlib.util.find_spec(gone) is None, gone
    from cartoqa.records.feature_types import FEATURE_TYPES, feature_type_of
    from cartoqa.tasks import navigation, views

    assert len(FEATURE_TYPES) == 22 and feature_type_of({"amenity": "doctors"}) == "clinic"
    assert {"ViewSampler", "Plan", "Question", "Reject", "fit_center"} <= set(views.__all__)
    assert not hasattr(navigation, "NavigationSampler")  # no alias for the old name
    assert {"attempt_srn", "attempt_rle", "attempt_mml"} <= set(navigation.__all__)


def test_at_most_one_module_is_named_after_features():
    named = sorted(
        p.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if "features" in p.stem
    )
    assert len(named) <= 1, named


def test_no_builtin_spec_carries_a_parser_nothing_calls():
    # each scorer reads its own answers; a spec-level parser was read only by the exact-match
    # fallback, which serves tasks that have no spec
    with_parse = [n for n, s in registered_tasks().items() if getattr(s, "parse", None)]
    assert with_parse == []


def test_stored_scores_are_keyed_by_the_versions_the_caller_gives():
    from cartoqa.scoring import task_versions
    from cartoqa.stores.scores import scoring_key

    versions = {"a_task": "1", "b_task": "3"}
    blob = json.dumps(
        {
            "cartoqa": __version__,
            "mode": "cartoqa",
            "tasks": sorted(versions.items()),
            "score_schema": SCORE_SCHEMA_VERSION,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    # the same key as before the versions were passed in: stored scores stay fresh
    assert scoring_key(versions, "cartoqa") == hashlib.sha256(blob.encode()).hexdigest()[:16]
    assert scoring_key({**versions, "b_task": "4"}, "cartoqa") != scoring_key(versions, "cartoqa")
    assert task_versions(["mml", "no_such_task", "mml"]) == {
        "mml": registered_tasks()["mml"].version,
        "no_such_task": "unregistered",
    }
