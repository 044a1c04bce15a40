"""cartoqa raises a few exception classes, each by what the user does about it
(``cartoqa.errors``); a class that never reaches a user stays beside its code and is
named there as such."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from cartoqa import errors
from cartoqa.errors import (
    CartoqaError,
    DatabaseError,
    MapDataError,
    ModelError,
    RenderStackError,
    ReviewError,
    RouteError,
    StaleEditError,
    StoreBusyError,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cartoqa", "maps", "symbols", "annotations", "evaluators")


def _exception_classes() -> dict[str, str]:
    """Every exception class the packages define: name -> the file that defines it."""
    found: dict[str, str] = {}
    bases: dict[str, tuple[str, list[str]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    names = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                    bases[node.name] = (str(path.relative_to(ROOT)), names)
    grown = True
    while grown:
        grown = False
        for name, (where, names) in bases.items():
            if name not in found and any(
                b.endswith(("Error", "Exception")) or b in found for b in names
            ):
                found[name] = where
                grown = True
    return found


def test_every_exception_class_is_one_of_the_few_or_named_as_internal():
    doc = errors.__doc__ or ""
    named = set(re.findall(r"``(?:[\w.]+\.)?(\w+)``", doc))
    outside = {
        name: where
        for name, where in _exception_classes().items()
        if where != "cartoqa/errors.py" and name not in named
    }
    assert not outside, (
        f"exception classes outside cartoqa/errors.py that its docstring does not name as "
        f"internal: {outside}"
    )
    defined = {n for n, w in _exception_classes().items() if w == "cartoqa/errors.py"}
    assert defined == set(errors.__all__)
    assert len(defined) <= 13


def test_each_error_says_what_the_user_does_about_it():
    for name in errors.__all__:
        doc = getattr(errors, name).__doc__ or ""
        assert len(doc.split()) >= 8, name


def test_the_folded_classes_are_gone_from_their_old_modules():
    gone = {
        "maps.labels": "LabelError",
        "maps.tiles": "TileError",
        "maps.style": "StyleError",
        "maps.render": "RenderError",
        "maps.browser": "BrowserError",
        "maps.assets": "AssetError",
        "maps.extracts": "ExtractError",
        "maps.roads": "RoadGraphError",
        "maps.feature_pixels": "FeatureError",
        "symbols.legend": "LegendError",
        "symbols.catalogue": "CatalogueError",
        "symbols.embed": "EmbeddingError",
        "annotations.fields": "FormError",
        "annotations.decisions": "DecisionError",
        "annotations.app": "ReviewServerError",
    }
    for module, name in gone.items():
        assert not hasattr(importlib.import_module(module), name), (module, name)


def test_subclasses_exist_only_where_code_catches_them_apart():
    assert issubclass(DatabaseError, RenderStackError)
    assert issubclass(RouteError, MapDataError)
    assert issubclass(StoreBusyError, ReviewError) and issubclass(StaleEditError, ReviewError)
    for cls in (RenderStackError, MapDataError, ReviewError, ModelError):
        assert issubclass(cls, CartoqaError)
    assert not issubclass(MapDataError, RenderStackError)
    assert not issubclass(RenderStackError, MapDataError)
    err = RouteError("same_node", "a route needs two different nodes")
    assert err.reason == "same_node" and str(err) == "a route needs two different nodes"


def test_a_view_off_the_map_and_a_missing_extract_are_map_data_errors(tmp_path):
    from maps import View, load_extract

    with pytest.raises(MapDataError, match=r"is not a \(lat, lon\) on the Web Mercator map"):
        View((95.0, 0.0), 18)
    with pytest.raises(MapDataError, match="does not exist"):
        load_extract(tmp_path / "nowhere.osm.pbf")


def test_a_broken_legend_image_is_a_render_stack_error():
    from symbols.legend import checked_png

    with pytest.raises(RenderStackError, match="amenity=bank"):
        checked_png(b"not a png", 120, "amenity=bank")


def test_missing_clip_weights_are_a_model_error(tmp_path):
    from symbols.embed import ClipWeights

    with pytest.raises(ModelError, match="does not exist"):
        ClipWeights(checkpoint=tmp_path / "nope.pt").check()


def test_a_reviewer_without_a_name_is_a_review_error():
    from annotations.decisions import check_reviewer

    with pytest.raises(ReviewError, match="needs its reviewer's name"):
        check_reviewer("\u200b ")
