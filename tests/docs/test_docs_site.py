"""The documentation site builds with ``mkdocs build --strict`` (no broken link, no page
left out of the nav), its generated pages hold what the code holds, and the README's links
into docs/ land on files and headings that exist (issue 29)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"[`*_]|\[([^]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def anchors(page: Path) -> set[str]:
    text, fence, out = page.read_text(encoding="utf-8"), False, set()
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"#{1,6} (.*)", line)):
            out.add(slug(m.group(1)))
    return out


def test_every_readme_link_into_docs_lands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", text)
    assert len(links) > 15, links
    for target, anchor in links:
        assert (ROOT / target).is_file(), target
        if anchor:
            assert anchor in anchors(ROOT / target), f"{target}#{anchor}"


def test_the_images_the_pages_show_are_there():
    for page in DOCS.rglob("*.md"):
        for image in re.findall(r"!\[[^]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / image).resolve().is_file(), (page, image)


def test_the_tutorial_gives_each_plug_in_file_in_a_marked_block():
    text = (DOCS / "adding-a-task.md").read_text(encoding="utf-8")
    found = dict(re.findall(r"<!-- file: (\S+) -->\s*\n```[a-z]*\n(.*?)\n```", text, re.DOTALL))
    assert {"pyproject.toml", "toy_tasks/__init__.py"} <= set(found)
    assert '[project.entry-points."cartoqa.tasks"]' in found["pyproject.toml"]
    (module,) = re.findall(r'^toy = "([\w.]+)"$', found["pyproject.toml"], re.MULTILINE)
    source = found[module.replace(".", "/") + ".py"]
    assert "register_task(" in source and "TaskSpec(" in source
    compile(source, module, "exec")  # it is Python


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="the docs extra: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-5000:]
    assert "WARNING" not in done.stderr, done.stderr[-5000:]
    return out


def page_text(site: Path, page: str) -> str:
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">")


def test_the_site_builds_strict_with_every_page(site):
    for page in DOCS.rglob("*.md"):
        rel = page.relative_to(DOCS).with_suffix("")
        built = (
            site / rel / "index.html" if rel.name != "index" else site / rel.parent / "index.html"
        )
        assert built.is_file(), rel


def test_the_cli_reference_is_every_commands_help(site):
    import typer

    from cartoqa.cli import app

    text = page_text(site, "reference/cli")
    root = typer.main.get_command(app)

    def walk(cmd, path: list[str]):
        assert f"Usage: {' '.join(path)}" in text, path
        for param in cmd.params:
            for opt in param.opts:
                if opt.startswith("--") and not getattr(param, "hidden", False):
                    assert opt in text, (path, opt)
        if hasattr(cmd, "commands"):  # a group (typer carries its own copy of click)
            for name, sub in cmd.commands.items():
                if not sub.hidden:
                    walk(sub, [*path, name])

    walk(root, ["cartoqa"])


def test_every_task_has_a_page_with_its_registered_facts(site):
    from cartoqa.tasks.spec import registered_tasks

    for name, spec in registered_tasks().items():
        if getattr(spec.score, "__module__", "").split(".")[0] not in ("cartoqa", "evaluators"):
            continue  # a plug-in installed beside cartoqa has no page in cartoqa's site
        page = f"tasks/gps/{name}" if spec.family == "gps" else f"tasks/{name}"
        text = page_text(site, page)
        assert spec.description in text.replace("&#39;", "'"), name
        for metric in spec.metrics:
            assert metric in text, (name, metric)


def test_the_api_reference_holds_the_docstrings(site):
    from cartoqa.tasks.spec import TaskSpec, register_task

    text = page_text(site, "api/tasks-spec")
    assert "TaskSpec" in text and "register_task" in text
    assert TaskSpec.__doc__.split("\n")[0].strip() in text
    assert register_task.__doc__.split("\n")[0].strip() in text


#: a repository path as the docs write it in backticks: a file of ours, by its folder
_PATH = re.compile(
    r"`((?:cartoqa|maps|symbols|annotations|evaluators|tests|benchmarks|scripts|docs)"
    r"/[\w./-]+\.(?:py|toml|md|sh|json))`"
)


def test_every_file_the_docs_name_exists():
    """A module path in the README or a docs page names a file of the repository (the
    moves of issue 29 left none behind)."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    missing = {}
    for page in pages:
        for path in _PATH.findall(page.read_text(encoding="utf-8")):
            if not (ROOT / path).exists():
                missing.setdefault(page.relative_to(ROOT).as_posix(), []).append(path)
    assert missing == {}
