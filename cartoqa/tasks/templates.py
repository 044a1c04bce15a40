"""Prompt templates as data: every question's wording, by key, from TOML files.

    prompts = load_prompts()                      # the package's own wording
    prompts = load_prompts(Path("mine.toml"))     # with a user's keys over it
    text = prompts.text("map.mml", colour="red")

The package's templates are ``cartoqa/tasks/prompts/<family>.toml``, one file a
family; a table nests keys (``[gps.distance]`` then ``question = "..."`` is
the key ``gps.distance.question``).  A template is a ``str.format`` string:
fields in braces (``{lat:.4f}``), literal braces doubled (``{{"road_1": ...}}``).
A user's file (``cartoqa build --prompts FILE``) holds any of those keys, in
the same layout, and replaces them: a published benchmark's wording, another
language.  A key it adds that the package does not have, or a template that
asks for a field the task does not give, is refused with the key named.

``PromptSet.sha256`` identifies the wording a dataset was asked with: the
manifest and each sample's provenance record it.
"""

from __future__ import annotations

import hashlib
import json
import string
import tomllib
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError
from cartoqa.records.tasks import load_task_modules

__all__ = [
    "PromptSet",
    "bring_templates",
    "brought_templates",
    "default_prompts",
    "load_prompts",
    "package_keys",
    "parse_template",
]


class PromptSet:
    """Templates by dotted key, and the hash of them all."""

    def __init__(self, templates: dict[str, str], source: str) -> None:
        self.templates = dict(sorted(templates.items()))
        self.source = source
        """Where they came from: "cartoqa" or "cartoqa + FILE"."""
        blob = json.dumps(self.templates, ensure_ascii=False, sort_keys=True).encode()
        self.sha256 = hashlib.sha256(blob).hexdigest()
        for key, template in self.templates.items():
            parse_template(key, template)  # every one a format string cartoqa takes

    def text(self, key: str, **fields: Any) -> str:
        """The template ``key`` filled in with ``fields``."""
        template = self.templates.get(key)
        if template is None:
            raise CartoqaError(f"no prompt template {key!r} in {self.source}")
        try:
            return template.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise CartoqaError(
                f"prompt template {key!r} ({self.source}) cannot be filled: {exc!r}; it may "
                f"use the fields {', '.join(sorted(fields)) or 'none'}"
            ) from None

    def has(self, key: str) -> bool:
        return key in self.templates


def parse_template(key: str, template: str) -> set[str]:
    """The names of the fields a template fills, or ``CartoqaError`` naming the key when it
    is no format string cartoqa takes (a single brace, an unnamed field, a field inside a
    spec)."""
    return {name for name, _, _ in _slots(key, template)}


def package_keys() -> set[str]:
    """The keys of the package's own templates."""
    return {k for k, _ in _package_templates()}


def _slots(key: str, template: str) -> set[tuple[str, str, str]]:
    """(field, conversion, format spec) for each field of a template; unnamed fields ("{}")
    and fields inside a format spec are refused."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise CartoqaError(
            f"prompt template {key!r} is not a format string: {exc}; write literal braces "
            "doubled ({{ and }})"
        ) from None
    out = set()
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name or name.isdigit():
            raise CartoqaError(
                f"prompt template {key!r} has a field without a name ({{{name}}}); name it, "
                "for example {lat}"
            )
        if "{" in (spec or ""):
            raise CartoqaError(
                f"prompt template {key!r}: the field {name!r} has a field inside its format "
                "spec; write the spec out"
            )
        out.add((name, conversion or "", spec or ""))
    return out


def _written(name: str, conversion: str, spec: str) -> str:
    """A slot as a template writes it: ("lat", "", ".6f") -> "{lat:.6f}"."""
    return (
        "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
    )


def _flatten(table: dict[str, Any], prefix: str, where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            got = _flatten(v, key + ".", where)
        elif isinstance(v, str):
            got = {key: v}
        else:
            raise CartoqaError(f"{where}: {key} is a {type(v).__name__}; templates are strings")
        twice = sorted(set(got) & set(out))
        if twice:  # a quoted dotted key ("gps.x.y" = ...) beside the table [gps.x]
            raise CartoqaError(f"{where}: {', '.join(twice)} is given twice; keep one")
        out |= got
    return out


def _read(text: str, where: str) -> dict[str, str]:
    try:
        return _flatten(tomllib.loads(text), "", where)
    except tomllib.TOMLDecodeError as exc:
        raise CartoqaError(f"{where} is not valid TOML: {exc}") from None


@lru_cache(maxsize=1)
def _package_templates() -> tuple[tuple[str, str], ...]:
    folder = resources.files("cartoqa.tasks") / "prompts"
    merged: dict[str, str] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            merged |= _read(
                entry.read_text(encoding="utf-8"), f"cartoqa/tasks/prompts/{entry.name}"
            )
    return tuple(merged.items())


def default_prompts() -> PromptSet:
    """The package's own wording, with the templates registered tasks bring
    (``TaskSpec.templates``)."""
    return _default(tuple(sorted(_ours().items())))


@lru_cache(maxsize=8)
def _default(templates: tuple[tuple[str, str], ...]) -> PromptSet:
    return PromptSet(dict(templates), "cartoqa")


#: task name -> the templates its spec brings (``TaskSpec.templates``), as registered
_BROUGHT: dict[str, dict[str, str]] = {}


def bring_templates(task: str, templates: Mapping[str, str]) -> None:
    """Record the templates a task's spec brings (``cartoqa.tasks.spec.register_task`` calls
    it); a second call for the same task replaces the first."""
    _BROUGHT[task] = dict(templates)


def brought_templates() -> dict[str, str]:
    """The templates registered tasks bring, every module of the entry-point group
    ``cartoqa.tasks`` loaded first (so a plug-in's are there whatever was imported)."""
    load_task_modules()
    return {k: v for brought in _BROUGHT.values() for k, v in brought.items()}


def _ours() -> dict[str, str]:
    package = dict(_package_templates())
    brought = brought_templates()
    clash = sorted(set(package) & set(brought))
    if clash:
        raise CartoqaError(
            f"a registered task brings the template {', '.join(clash)}, which the package "
            "has already; give it a key of its own"
        )
    return package | brought


def load_prompts(path: Path | None = None) -> PromptSet:
    """The package's templates, with those of the TOML file at ``path`` over them."""
    if path is None:
        return default_prompts()
    path = Path(path).absolute()
    try:
        if path.stat().st_size > MAX_PROMPTS_BYTES:
            raise CartoqaError(
                f"--prompts {path}: {path.stat().st_size:,} bytes, more than the "
                f"{MAX_PROMPTS_BYTES:,} a file of prompt templates may hold"
            )
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is read past
    except OSError as exc:
        raise CartoqaError(
            f"--prompts {path}: cannot read it ({exc.strerror}); give a TOML file of prompt "
            "templates (see cartoqa/tasks/prompts/ for the keys)"
        ) from None
    except UnicodeDecodeError as exc:
        raise CartoqaError(
            f"--prompts {path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    theirs = _read(text, str(path))
    ours = _ours()
    unknown = sorted(set(theirs) - set(ours))
    if unknown:
        raise CartoqaError(
            f"--prompts {path}: {', '.join(unknown)} is no prompt key; the keys are those of "
            "cartoqa/tasks/prompts/*.toml (for example map.srn, gps.system)"
        )
    for key, template in theirs.items():
        given = parse_template(key, ours[key])
        extra = parse_template(key, template) - given
        if extra:
            raise CartoqaError(
                f"--prompts {path}: {key} asks for {', '.join(sorted(extra))}, which the task "
                f"does not give; it gives {', '.join(sorted(given)) or 'none'}"
            )
        # every field, written as the package writes it: the question keeps all it says, so
        # the same draws make the same questions (and no two questions become one)
        lost = sorted(_slots(key, ours[key]) - _slots(key, template))
        if lost:
            shown = ", ".join(_written(*slot) for slot in lost)
            raise CartoqaError(
                f"--prompts {path}: {key} leaves out or rewrites {shown}; a template must fill "
                f"every field of the package's, written the same way ({ours[key]!r})"
            )
    return PromptSet(ours | theirs, f"cartoqa + {path}")


#: the largest file of prompt templates read (the package's are about 10 kB)
MAX_PROMPTS_BYTES = 1_000_000
