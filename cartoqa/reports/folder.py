"""The report's folder, written whole: staged beside and swapped in, as exports are.

A report is written into a hidden sibling folder (``.OUT.staging-PID``) while a lock
(``.OUT.lock``) keeps other writers out, synced, and swapped into place with one atomic
exchange (``cartoqa.stores.dataset.swap_in_synced``): OUT then holds exactly the files this report
names, none of an earlier report's, and a failure (a full disk) leaves OUT as it was.  OUT
may be new, empty, or an earlier cartoqa report (its ``tables.json`` says so) holding only a
report's files; any other folder is refused, never emptied.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cartoqa.errors import CartoqaError
from cartoqa.stores._files import ensure_writable_folder
from cartoqa.stores._locks import LockBusy, try_lock
from cartoqa.stores.dataset import swap_in_synced

__all__ = ["REPORT_FILES", "check_report_target", "is_report", "report_folder"]

REPORT_FILES = ("report.md", "report.html", "tables.csv", "tables.json")
"""The files every report writes at its top, besides ``plots/*.png``."""

TITLE = "cartoqa report"
"""How the title in every report's tables.json begins."""


def is_report(folder: Path) -> bool:
    """Whether ``folder`` holds a cartoqa report: a ``tables.json`` that is one."""
    try:
        doc = json.loads((folder / "tables.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(doc, dict)
        and str(doc.get("title", "")).startswith(TITLE)
        and isinstance(doc.get("tasks"), list)
    )


def _ours(rel: str) -> bool:
    """A file a report writes (or a temporary one an earlier cartoqa left behind)."""
    folder, _, name = rel.rpartition("/")
    if folder not in ("", "plots"):
        return False
    if name.startswith(".") and name.endswith(".tmp"):
        return True
    if folder == "plots":
        return name == "" or name.endswith(".png")  # "": plots/ itself, empty
    return name in REPORT_FILES


def _entries(folder: Path) -> list[str]:
    """Every file and empty folder under ``folder``, relative, sorted; links as files."""
    out = []
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        for d in list(dirs):
            if (here / d).is_symlink():
                files.append(d)
                dirs.remove(d)
        rel = here.relative_to(folder).as_posix()
        prefix = "" if rel == "." else rel + "/"
        out += [prefix + f for f in files]
        if not files and not dirs and prefix:
            out.append(prefix)
    return sorted(out)


def check_report_target(out: Path) -> Path:
    """``out`` made absolute, once checked: in a folder this user can write (made if
    needed), and new, empty, or an earlier report of only a report's files; else
    ``CartoqaError`` naming the folder, what is in it and the fix."""
    target = Path(out).absolute()
    if target.is_symlink():
        raise CartoqaError(
            f"{target} is a symbolic link; choose a new folder for the report (cartoqa does "
            "not replace links)"
        )
    ensure_writable_folder(target.parent, what=f"the report {target.name}", error=CartoqaError)
    if not target.exists():
        return target
    if not target.is_dir():
        raise CartoqaError(f"{target} is a file, not a folder; choose another --out")
    entries = _entries(target)
    if not entries:
        return target
    report = is_report(target)
    foreign = [e for e in entries if not _ours(e)] if report else entries
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        if report:
            raise CartoqaError(
                f"{target} holds other files ({shown}) beside an earlier cartoqa report; a "
                "report replaces its whole folder, so move them out (or choose another "
                "--out), then run again"
            )
        raise CartoqaError(
            f"{target} holds other files ({shown}), not a cartoqa report; choose a new or "
            "empty folder for --out (a report replaces only an earlier report, never other "
            "files)"
        )
    return target


@contextmanager
def report_folder(out: Path) -> Iterator[Path]:
    """Check ``out`` (``check_report_target``), lock it, and yield a fresh staging folder
    beside it to write the report into.  When the block ends normally, the staging folder
    is synced and swapped into place (an earlier report there is deleted); when it raises
    (``OSError`` on a full disk), the staging folder is removed and ``out`` is as it was."""
    target = check_report_target(out)
    parent = target.parent
    try:
        lock = try_lock(parent / f".{target.name}.lock")
    except LockBusy as busy:
        raise CartoqaError(
            f"{target} is being written by {busy.holder}; wait for it to finish or choose "
            "another --out"
        ) from None  # (an OSError, a full disk, goes up as it is: nothing was changed)
    try:
        check_report_target(target)  # again, now that no one else writes
        for stale in parent.glob(f".{target.name}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)  # a dead writer's (we hold the lock)
        stage = parent / f".{target.name}.staging-{os.getpid()}"
        try:
            stage.mkdir()
            yield stage
            swap_in_synced(stage, target)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    finally:
        lock.release()
