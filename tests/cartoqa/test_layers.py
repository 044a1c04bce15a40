"""The model layer does not import the evaluators (issue 14): what a baseline writes comes
from the task's spec or the truth itself, never from a scorer's module."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL_LAYER = [*sorted((ROOT / "cartoqa" / "models").glob("*.py")), ROOT / "cartoqa" / "runner.py"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def test_the_model_layer_imports_no_evaluator():
    assert len(MODEL_LAYER) > 5
    found = {
        p.relative_to(ROOT).as_posix(): sorted(
            m for m in _imports(p) if m.split(".")[0] == "evaluators"
        )
        for p in MODEL_LAYER
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from evaluators.answers import CODECS\n    return CODECS\n")
    assert "evaluators.answers" in _imports(f)
