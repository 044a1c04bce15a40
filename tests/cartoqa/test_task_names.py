"""No production module names a task but that task's own modules (issues 14 and 29).

A task's own modules are read off its registered spec: the modules its generator (or
builder), scorer, scoring modes and their tables, metrics, table, answer format, parser and
release form (``TaskSpec.release``) are defined in.
Any other module of the five packages that writes a task's name as a string (outside
docstrings and ``__all__``) fails the test: the spec is the only place a task is defined.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
from pathlib import Path

from cartoqa.tasks.spec import TaskSpec, registered_tasks

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cartoqa", "maps", "symbols", "annotations", "evaluators")


def _file_of(fn: object) -> str | None:
    while isinstance(fn, functools.partial):
        fn = fn.func
    try:
        path = inspect.getsourcefile(fn)  # type: ignore[arg-type]
    except TypeError:
        return None
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None


def own_files(spec: TaskSpec) -> set[str]:
    """The files that define ``spec``'s parts."""
    parts = [spec.generator, spec.builder, spec.score, spec.reduce, spec.table,
             spec.answer_format, *spec.modes.values(), *spec.mode_tables.values()]  # fmt: skip
    if spec.release is not None:  # the release form's readers and writers
        parts += [getattr(spec.release, f.name) for f in dataclasses.fields(spec.release)]
    return {f for p in parts if p is not None and (f := _file_of(p))}


def strings_in(path: Path) -> set[str]:
    """The string constants of a file, leaving out docstrings and ``__all__``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))
            for stmt, nxt in itertools.pairwise(body):  # attribute docstrings
                if isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(nxt, ast.Expr):
                    skip.add(id(nxt.value))
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            skip |= {id(n) for n in ast.walk(node.value)}
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
    }


def test_no_module_names_a_task_but_its_own():
    specs = registered_tasks()
    owners = {name: own_files(spec) for name, spec in specs.items()}
    assert all(owners.values()), {n for n, o in owners.items() if not o}
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            named = {n for n in strings_in(path) & set(specs) if rel not in owners[n]}
            if named:
                found[rel] = named
    assert found == {}


def test_the_check_sees_a_name_and_skips_docstrings(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        '"""The srn task."""\n__all__ = ["rle"]\nX = 1\n"""mml, said of X."""\n'
        'def f(t):\n    """distance"""\n    return t == "bearing"\n'
    )
    assert strings_in(f) == {"bearing"}
