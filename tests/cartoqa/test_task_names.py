"""No production module names a task except that task's own modules and the registry
(issue 14).  The joints still left are listed in ``REMAINING``, each with what replaces it;
the test fails on any new one, and on a listed one that has gone (so the list stays true)."""

import re
from pathlib import Path

from cartoqa.records import TASK_TRUTH_KINDS
from cartoqa.tasks.spec import registered_tasks

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cartoqa", "maps", "symbols", "annotations", "evaluators")
#: where a task's own generator, spec and scorer live, and the registry itself
OWN = {
    "cartoqa/tasks/navigation.py",  # SRN, RLE, MML: generators and specs
    "cartoqa/tasks/gps/pure.py",
    "cartoqa/tasks/gps/applied.py",
    "cartoqa/tasks/gps/generate.py",
    "cartoqa/tasks/gps/_specs.py",
    "cartoqa/records/tasks.py",  # the schema's truth kinds (the registry's lower half)
    "evaluators/navigation.py",  # the map tasks' scorers
    "evaluators/gps.py",  # the GPS tasks' scorer
    "cartoqa/geodesy/__init__.py",  # exports the function bounding_box, not the task
}
#: file -> task names it still writes, until what the comment says replaces them
REMAINING = {
    "cartoqa/models/baselines.py": {"stmf_count"},  # its answer space: a spec (issue 15)
    "evaluators/answers.py": {"rle"},  # RLE's first-line parse: a spec field
    "annotations/drawing.py": {"rle"},  # the audit drawing's RLE label: a spec field
}


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
