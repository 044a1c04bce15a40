"""Dependencies point one way and go round in no circle (architecture.md, issue 29).

Every import of the five packages counts, at module level or inside a function (a lazy
import is still a dependency).  Each module belongs to a layer; it may import its own
layer's group and any lower layer, never a higher one nor another group of its own rank.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cartoqa", "maps", "symbols", "annotations", "evaluators")

#: group -> rank: a module may import from its own group and from groups of lower rank
LAYERS: dict[str, int] = {
    "cartoqa.errors": 0,
    "cartoqa": 1,  # the package itself: its version
    "cartoqa.settings": 1,
    "cartoqa.geodesy": 1,
    "cartoqa.records": 2,  # the sample schema
    "cartoqa.stores": 3,  # datasets, runs, caches on disk
    "maps": 4,  # OSM data in, map images out
    "evaluators": 4,  # parsers and metrics
    "symbols": 5,  # the legend and its embeddings (draws with maps)
    "cartoqa.tasks": 6,  # the generators and the registry of tasks
    "cartoqa.models": 7,
    "cartoqa.scoring": 7,
    "cartoqa.pinned": 7,
    "cartoqa.runner": 8,
    "cartoqa.reports": 8,
    "cartoqa.exports": 8,
    "annotations": 9,  # the review tool
    "cartoqa.testing": 9,  # fake servers and the tiny VLM, for tests and the demo
    "cartoqa.demo": 10,
    "cartoqa.cli": 11,
    "cartoqa.__main__": 12,
}


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[0] if parts[0] != "cartoqa" or len(parts) == 1 else ".".join(parts[:2])


def _known(name: str) -> str | None:
    """The module of ours ``name`` is, or the nearest package of ours above it."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path) -> set[str]:
    """Our modules ``module`` imports, anywhere in its file."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {m for a in node.names if (m := _known(a.name))}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            for alias in node.names:
                m = _known(f"{name}.{alias.name}") or _known(name)
                if m:
                    found.add(m)
    found.discard(module)
    return found


GRAPH = {m: imports_of(m, p) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    assert len(MODULES) > 150
    assert {m for m in MODULES if _group(m) not in LAYERS} == set()


def test_no_module_imports_a_higher_layer_or_a_sibling_group():
    bad = {}
    for module, targets in GRAPH.items():
        here = _group(module)
        for target in targets:
            there = _group(target)
            if there != here and LAYERS[there] >= LAYERS[here]:
                bad.setdefault(module, []).append(target)
    assert bad == {}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle():
    assert _cycles(GRAPH) == []


def test_the_checks_see_what_they_check(tmp_path):
    """A lazy import inside a function counts, and a cycle of three is found."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from cartoqa.tasks.spec import get_task\n    return get_task\n")
    assert "cartoqa.tasks.spec" in imports_of("evaluators.x", f)
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
