"""The task names the sample schema knows, and the ground-truth kinds each allows.

Nothing here names a task.  A task's spec declares its name and kinds when it is
registered (``cartoqa.tasks.spec.register_task`` calls ``declare_truth_kinds``).
The modules that register tasks are found through the entry-point group
``cartoqa.tasks``: cartoqa declares its own task modules there (in its
``pyproject.toml``), and any distribution installed beside it may add its own.
The first lookup of a name not declared yet imports every module of the group,
so whatever a program imported first, a sample of any installed task loads.
"""

from __future__ import annotations

import importlib.metadata
import threading
import warnings

from cartoqa.errors import CartoqaError

__all__ = [
    "ENTRY_POINT_GROUP",
    "declare_truth_kinds",
    "declared_tasks",
    "load_task_modules",
    "truth_kinds_for",
]

#: the entry-point group of the modules that register tasks
ENTRY_POINT_GROUP = "cartoqa.tasks"
#: the distribution whose entry points are the built-in tasks: a failure to load one of
#: them is an error; a plug-in's failure is a warning, and its tasks are then missing
OWN_DISTRIBUTION = "cartoqa"

#: task name -> the ground-truth kinds its samples may carry, as the specs declared them
_KINDS: dict[str, frozenset[str]] = {}
_loaded = False
#: held while the group loads: a lookup from another thread (the runner's workers) waits
#: for every module instead of seeing half of them
_LOADING = threading.RLock()


def declare_truth_kinds(name: str, kinds: set[str] | frozenset[str]) -> None:
    """Declare a task name and the ground-truth kinds its samples may carry, to the sample
    schema.  ``cartoqa.tasks.spec.register_task`` calls it for every task it registers."""
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"task name {name!r} must be letters, digits and underscores")
    _KINDS[name] = frozenset(kinds)


def truth_kinds_for(task: str) -> frozenset[str] | None:
    """The allowed ground-truth kinds of a task, or None for a task no installed module
    registers (the entry-point group is loaded first where the name is not known yet)."""
    if task not in _KINDS:
        load_task_modules()
    return _KINDS.get(task)


def declared_tasks() -> list[str]:
    """Every task name declared, after loading the group, sorted."""
    load_task_modules()
    return sorted(_KINDS)


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The group's entry points: cartoqa's own first, in the order its metadata lists them
    (that order is the built-in tasks' order), then other distributions' by (distribution,
    name), so that the order of registration never depends on the file system."""
    found = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    own = [ep for ep in found if _is_own(ep)]
    others = sorted((ep for ep in found if not _is_own(ep)), key=lambda ep: (_owner(ep), ep.name))
    return own + others


def load_task_modules() -> None:
    """Import every module of the entry-point group ``cartoqa.tasks``, once per process
    (their imports register the tasks).  An entry point may also name a function
    (``pkg.module:register``), which is called with no argument.  cartoqa's own modules
    must load (``CartoqaError`` otherwise, saying how to reinstall); a plug-in that fails is
    named in a warning and left out."""
    global _loaded
    with _LOADING:
        if _loaded:
            return
        _loaded = True  # first: the modules' own lookups must not load the group again
        try:
            _load_all()
        except BaseException:
            _loaded = False  # so that a later call tries again
            raise


def _load_all() -> None:
    points = _entry_points()
    if not any(_is_own(ep) for ep in points):
        raise CartoqaError(
            f"no entry point of the group {ENTRY_POINT_GROUP!r} comes from the cartoqa "
            "distribution, so its built-in tasks cannot be found: cartoqa's metadata is "
            "missing or stale (a checkout used without installing it, or a cartoqa.egg-info "
            "older than pyproject.toml).  Install it again: pip install -e ."
        )
    for ep in points:
        try:
            loaded = ep.load()
            if callable(loaded):
                loaded()
        except Exception as exc:
            where = f"{ep.name} = {ep.value!r}"
            if _is_own(ep):
                raise CartoqaError(f"cartoqa's task module {where} failed to load: {exc}") from exc
            owner = _owner(ep) or "an unknown distribution"
            warnings.warn(
                f"the task plug-in {where} of {owner} failed to load and its tasks are left "
                f"out: {type(exc).__name__}: {exc}.  Fix it, or uninstall it (pip uninstall "
                f"{owner}).",
                RuntimeWarning,
                stacklevel=3,
            )


def _owner(ep: importlib.metadata.EntryPoint) -> str:
    """The name of the distribution that declares ``ep`` ("" where it is not known)."""
    dist = getattr(ep, "dist", None)
    return (dist.metadata["Name"] or "") if dist is not None else ""


def _is_own(ep: importlib.metadata.EntryPoint) -> bool:
    return _owner(ep).lower() == OWN_DISTRIBUTION
