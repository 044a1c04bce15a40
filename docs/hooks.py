"""mkdocs hooks: the pages that are made from the code at build time, so they never go stale.

- ``reference/cli.md``: every command's ``--help``, read from the Typer app
  (``cartoqa.cli:app``) through click, the way ``cartoqa CMD --help`` prints it.
- ``tasks/gps/<task>.md``: one page per registered GPS task and variant, from its
  ``TaskSpec`` (family, track, truth kinds, metrics, breakdowns), its prompt templates
  (the package's ``prompts/*.toml``) and the rows of the GPS family page's tables that
  name it.
- ``<!-- cartoqa-task: NAME -->`` in a written page is replaced by the same facts for NAME.

Listed in ``mkdocs.yml`` under ``hooks:``; ``mkdocs build --strict`` runs them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: the nav section the generated GPS task pages are listed under
GPS_SECTION = "GPS tasks"
#: the hand-written GPS family page whose tables the generated pages quote
GPS_FAMILY_PAGE = "tasks/gps.md"
MARKER = re.compile(r"<!-- cartoqa-task: ([a-z0-9_]+) -->")
ROWS_MARKER = re.compile(r"<!-- cartoqa-gps-rows: ([a-z0-9_]+) -->")
TABLE_MARKER = "<!-- cartoqa-task-table -->"


def _specs() -> dict[str, Any]:
    """cartoqa's own registered tasks (a plug-in installed beside it is left out, so the
    site is the same wherever it is built)."""
    from cartoqa.tasks.spec import registered_tasks

    return {
        name: spec
        for name, spec in registered_tasks().items()
        if getattr(spec.score, "__module__", "").split(".")[0] in ("cartoqa", "evaluators")
    }


def _gps_tasks() -> list[str]:
    return [name for name, spec in _specs().items() if spec.family == "gps"]


# ------------------------------------------------------------------ the CLI reference


def _help_pages() -> str:
    import typer
    import typer.core

    from cartoqa.cli import app

    typer.core.HAS_RICH = False  # plain click help: text, not a terminal's boxes
    root = typer.main.get_command(app)
    out = [
        "# Command-line reference",
        "",
        "Every command's `--help`, generated from the command line itself when this site is",
        "built (`docs/hooks.py`), so it is always the installed version's.",
        "",
    ]

    # typer carries its own copy of click: its commands make their own contexts
    def walk(cmd: Any, ctx: Any, path: list[str]) -> None:
        level = min(len(path) + 1, 4)
        out.extend(["#" * level + " `" + " ".join(path) + "`", "", "```text"])
        out.append(cmd.get_help(ctx).rstrip())
        out.extend(["```", ""])
        for name in cmd.list_commands(ctx) if hasattr(cmd, "list_commands") else ():
            sub = cmd.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = sub.context_class(
                sub, info_name=name, parent=ctx, terminal_width=80, max_content_width=80
            )
            walk(sub, sub_ctx, [*path, name])

    ctx = root.context_class(root, info_name="cartoqa", terminal_width=80, max_content_width=80)
    walk(root, ctx, ["cartoqa"])
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ task pages


def _templates(spec: Any) -> dict[str, str]:
    from cartoqa.tasks.templates import default_prompts

    prefix = f"{spec.family}.{spec.name}"
    return {
        key: text
        for key, text in default_prompts().templates.items()
        if key == prefix or key.startswith(prefix + ".")
    }


def _facts(name: str) -> str:
    spec = _specs().get(name)
    if spec is None:
        raise KeyError(f"docs: no registered task {name!r} (a page names it in a marker)")
    rows = [
        ("task", f"`{spec.name}`"),
        ("family, track", f"{spec.family}, {spec.track}"),
        ("what it asks", spec.description),
        ("ground truth kinds", ", ".join(f"`{k}`" for k in sorted(spec.truth_kinds))),
        ("metrics", ", ".join(f"`{m}`" for m in spec.metrics)),
        ("headline", f"`{spec.headline or spec.metrics[0]}`"),
        ("breakdowns", ", ".join(f"`{g}`" for g in spec.group_by) or "none"),
        ("scoring modes", ", ".join(f"`{m}`" for m in ("cartoqa", *spec.modes))),
    ]
    lines = [
        "| | |",
        "|---|---|",
        *("| " + k + " | " + v.replace("|", "\\|") + " |" for k, v in rows),
        "",
        "*From the task's registered spec when this site was built (`cartoqa tasks` lists",
        "the same).*",
        "",
    ]
    templates = _templates(spec)
    if templates:
        lines += [
            "**Its wording** (the package's templates; `--prompts FILE` replaces any key):",
            "",
        ]
        for key, text in templates.items():
            lines += [f"`{key}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(lines)


def _names(row: str, name: str) -> bool:
    """Whether a table row names the task: as `name`, or, in a column headed "task" that
    writes tasks in words ("place association"), by its name in words."""
    if f"`{name}`" in row:
        return True
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    words = name.replace("_", " ")
    return (
        len(cells) > 1 and re.search(rf"(^|[ /]){re.escape(words)}($|[ /])", cells[1]) is not None
    )


def _quoted_rows(family_page: str, name: str) -> list[str]:
    """Each table of the family page, cut to its header and the rows naming `name`."""
    out: list[str] = []
    lines = family_page.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header, rule = lines[i], lines[i + 1]
            by_words = header.replace(" ", "").startswith("|reason|task|")
            j = i + 2
            rows = []
            while j < len(lines) and lines[j].startswith("|"):
                if f"`{name}`" in lines[j] or (by_words and _names(lines[j], name)):
                    rows.append(lines[j])
                j += 1
            if rows:
                out += [header, rule, *rows, ""]
            i = j
        else:
            i += 1
    return out


def _rows_section(name: str, family_page: str) -> str:
    quoted = _quoted_rows(family_page, name)
    if not quoted:
        return ""
    return "\n".join(
        [
            "## In the GPS page's tables",
            "",
            "The rows of the tables on [GPS tasks](../gps.md) that name this task:",
            "",
            *quoted,
        ]
    )


def _task_table() -> str:
    """Every built-in task: name (linked to its page), family, track, what it asks."""
    lines = ["| task | family | track | what it asks |", "|---|---|---|---|"]
    for name, spec in _specs().items():
        link = f"gps/{name}.md" if spec.family == "gps" else f"{name}.md"
        lines.append(f"| [`{name}`]({link}) | {spec.family} | {spec.track} | {spec.description} |")
    return "\n".join(lines) + "\n"


def _gps_page(name: str, family_page: str) -> str:
    spec = _specs()[name]
    title = name.replace("_", " ").capitalize()
    kind = "variant" if spec.track == "variant" else "task"
    what = spec.description.removeprefix("variant: ")  # the page says "variant" already
    lines = [
        f"# {title}",
        "",
        f"A GPS {kind}: {what}. Its family's page, [GPS tasks](../gps.md), says how",
        "the cities are drawn, the splits, the names that pick out one city, the draws made",
        "again, the answer forms and how answers are read and scored.",
        "",
        _facts(name),
    ]
    lines.append(_rows_section(name, family_page))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ mkdocs events


def on_config(config: Any, **_: Any) -> Any:
    """List a page per GPS task under the nav's "GPS tasks" section."""
    pages = [{name: f"tasks/gps/{name}.md"} for name in _gps_tasks()]

    def add(items: list) -> bool:
        for item in items:
            if isinstance(item, dict):
                for key, value in item.items():
                    if key == GPS_SECTION and isinstance(value, list):
                        value.extend(pages)
                        return True
                    if isinstance(value, list) and add(value):
                        return True
        return False

    if not add(config["nav"] or []):
        raise ValueError(f"docs: mkdocs.yml's nav has no section {GPS_SECTION!r}")
    return config


def on_files(files: Any, config: Any, **_: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, "reference/cli.md", content=_help_pages()))
    family = (Path(config["docs_dir"]) / GPS_FAMILY_PAGE).read_text(encoding="utf-8")
    for name in _gps_tasks():
        if (Path(config["docs_dir"]) / "tasks" / "gps" / f"{name}.md").exists():
            continue  # a written page: its markers are filled in on_page_markdown
        content = _gps_page(name, family)
        files.append(File.generated(config, f"tasks/gps/{name}.md", content=content))
    return files


def on_page_markdown(markdown: str, config: Any, **_: Any) -> str:
    markdown = MARKER.sub(lambda m: _facts(m.group(1)), markdown)
    if ROWS_MARKER.search(markdown):
        family = (Path(config["docs_dir"]) / GPS_FAMILY_PAGE).read_text(encoding="utf-8")
        markdown = ROWS_MARKER.sub(lambda m: _rows_section(m.group(1), family), markdown)
    return markdown.replace(TABLE_MARKER, _task_table())
