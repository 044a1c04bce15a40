"""The release's task folders, found through the registered tasks' specs."""

from __future__ import annotations

from pathlib import Path

from cartoqa.errors import DatasetError
from cartoqa.tasks.spec import registered_tasks

from .form import ReleaseForm

__all__ = ["form_for", "release_forms"]


def release_forms() -> list[ReleaseForm]:
    """Every form a registered task names (``TaskSpec.release``), once each, in the order
    the tasks were registered."""
    out: dict[str, ReleaseForm] = {}
    for spec in registered_tasks().values():
        form = spec.release
        if isinstance(form, ReleaseForm) and form.folder not in out:
            out[form.folder] = form
    return list(out.values())


def form_for(folder: Path) -> ReleaseForm:
    """The form of a model's response folder (``Responses/<TASK>/<model>``): by its parent's
    name where that is a task folder of the release, else by what the folder holds."""
    forms = release_forms()
    by_name = {f.folder: f for f in forms}
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(
            f"{folder} is not a folder; give a model's response folder of the release's "
            f"layout, Responses/<TASK>/<model>/ (TASK one of {', '.join(by_name)})"
        )
    for name in (folder.parent.name, folder.name):
        if name in by_name:
            if name == folder.name:
                models = sorted(p.name for p in folder.iterdir() if p.is_dir())
                raise DatasetError(
                    f"{folder} is a task folder; give one model's folder inside it "
                    f"({', '.join(models) or 'none there'})"
                )
            return by_name[name]
    found = [f for f in forms if f.detect(folder)]
    if len(found) == 1:
        return found[0]
    what = "none" if not found else " and ".join(f.folder for f in found)
    raise DatasetError(
        f"cannot tell which task's responses {folder} holds (its files match {what}); keep "
        f"the release's layout, Responses/<TASK>/<model>/, TASK one of {', '.join(by_name)}"
    )
