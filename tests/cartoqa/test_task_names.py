"""No production module names a task except that task's own modules and the registry
(issue 14).  The test fails on any module that writes a registered task's name (or a
schema task's) outside those; ``REMAINING`` would list a joint kept on purpose."""

import re
from pathlib import Path

from cartoqa.records import TASK_TRUTH_KINDS
from cartoqa.tasks.spec import registered_tasks

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cartoqa", "maps", "symbols", "annotations", "evaluators")
#: where a task's own generator, spec and scorer live, and the registry itself
OWN = {
    "cartoqa/tasks/navigation.py",  # SRN, RLE, MML: generators and specs
    "cartoqa/tasks/poi.py",  # STMF (three requests) and MTMF: generator and specs
    "cartoqa/tasks/mfs.py",  # MFS: its own build and spec (its questions: symbols/)
    "cartoqa/tasks/gps/pure.py",
    "cartoqa/tasks/gps/applied.py",
    "cartoqa/tasks/gps/generate.py",
    "cartoqa/tasks/gps/_specs.py",
    "cartoqa/records/tasks.py",  # the schema's truth kinds (the registry's lower half)
    "evaluators/navigation.py",  # the map tasks' scorers
    "evaluators/map_features.py",  # STMF's and MTMF's scorers
    "evaluators/mfs.py",  # MFS's scorer
    "evaluators/gps.py",  # the GPS tasks' scorer
    "cartoqa/geodesy/__init__.py",  # exports the function bounding_box, not the task
}
#: file -> task names it still writes, until what replaces them lands (none left: a new
#: entry needs a reason and the issue that removes it)
REMAINING: dict[str, set[str]] = {}


def _names_in(path: Path, names: set[str]) -> set[str]:
    text = path.read_text(encoding="utf-8")
    code = re.sub(r'"""[\s\S]*?"""', "", text)  # docstrings may give examples
    found = re.findall(r"""["']([a-z][a-z0-9_]*)["']""", code)
    return {n for n in found if n in names}


def test_no_module_names_a_task_outside_its_own_modules_and_the_registry():
    names = set(registered_tasks()) | set(TASK_TRUTH_KINDS)
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in OWN:
                continue
            got = _names_in(path, names)
            if got:
                found[rel] = got
    assert found == REMAINING, {
        "new": {
            k: v - REMAINING.get(k, set()) for k, v in found.items() if v - REMAINING.get(k, set())
        },
        "gone": {
            k: v - found.get(k, set()) for k, v in REMAINING.items() if v - found.get(k, set())
        },
    }
