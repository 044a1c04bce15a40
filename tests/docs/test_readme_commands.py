"""Every ``cartoqa`` command the README shows runs (issue 29); those the docs pages show
name real subcommands and options.

The commands are read from the README's code blocks (``$ cartoqa ...`` in console blocks,
``cartoqa ...`` in bash blocks).  Every one names a real subcommand and only options that
subcommand has, and its ``--help`` parses in a real process.  The cheap ones (geodesy, the
task list, a GPS dataset generated, validated, answered by a baseline, scored and
reported) run for real, in order, in a temporary folder; where the README shows what a
command prints, it prints exactly that.  The two set-up commands (``bash scripts/...``) are
run by CI itself.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import typer

from cartoqa.cli import app

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

#: subcommand paths cheap enough to run for real here (no map rendering, no model weights)
CHEAP = {
    ("geo", "distance"),
    ("geo", "bearing"),
    ("geo", "dms"),
    ("geo", "interpolate"),
    ("geo", "utm"),
    ("geo", "mercator"),
    ("tasks",),
    ("gps", "generate"),
    ("dataset", "info"),
    ("run",),
    ("score",),
    ("report",),
}
#: groups that run a subcommand when given none: ``cartoqa review DATASET`` serves DATASET
DEFAULT_SUBCOMMAND = {("review",): "serve"}
#: models that answer with no weights and no network
BASELINES = ("oracle", "random", "constant:")


@dataclass
class Shown:
    """One command the README shows, and the lines it shows it printing (console blocks)."""

    args: list[str]
    printed: list[str] = field(default_factory=list)


def readme_commands(text: str) -> list[Shown]:
    """The ``cartoqa`` commands of the README's fenced code blocks, in order."""
    shown: list[Shown] = []
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
        lines = body.replace("\\\n", " ").splitlines()
        current: Shown | None = None
        for line in lines:
            if lang == "console" and line.startswith("$ "):
                command, current = line[2:], None
            elif lang in ("bash", "sh") and line.startswith("cartoqa "):
                command, current = line, None
            else:
                if current is not None and lang == "console":
                    current.printed.append(line)
                continue
            args = shlex.split(command, comments=True)
            if args and args[0] == "cartoqa":
                current = Shown(args[1:])
                shown.append(current)
    return shown


def is_group(cmd: Any) -> bool:
    return hasattr(cmd, "commands")  # typer carries its own copy of click's Group


def resolve(args: list[str]) -> tuple[list[str], Any]:
    """The subcommand path the arguments name, and its (click) command."""
    cmd = typer.main.get_command(app)
    path: list[str] = []
    for token in args:
        if not is_group(cmd) or token.startswith("-"):
            break
        sub = cmd.commands.get(token)
        if sub is None:
            default = DEFAULT_SUBCOMMAND.get(tuple(path))
            if default is None:
                break
            token, sub = default, cmd.commands[default]
        path.append(token)
        cmd = sub
    return path, cmd


def cartoqa(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cartoqa", *args],
        capture_output=True, text=True, timeout=600, cwd=cwd,
    )  # fmt: skip


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def test_the_readme_shows_commands_of_every_kind():
    paths = {tuple(resolve(s.args)[0]) for s in COMMANDS}
    assert {("geo", "distance"), ("gps", "generate"), ("run",), ("score",), ("build",)} <= paths
    assert len(README.read_text(encoding="utf-8").splitlines()) < 200


@pytest.mark.parametrize("shown", COMMANDS, ids=[" ".join(s.args) for s in COMMANDS])
def test_each_command_names_a_subcommand_and_its_own_options(shown):
    path, cmd = resolve(shown.args)
    assert path, f"'cartoqa {' '.join(shown.args)}' names no subcommand"
    assert not is_group(cmd), f"'cartoqa {' '.join(path)}' needs a subcommand"
    known = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}
    named = {
        a.split("=")[0] for a in shown.args[len(path) :] if re.match(r"--?[A-Za-z]", a)
    }  # not a negative number
    assert named <= known, f"'cartoqa {' '.join(path)}' has no {sorted(named - known)}"


DOCS_COMMANDS = [
    (page.relative_to(ROOT).as_posix(), Shown([a.strip("[]") for a in shown.args]))
    for page in sorted((ROOT / "docs").rglob("*.md"))
    for shown in readme_commands(page.read_text(encoding="utf-8"))
]  # a synopsis's optional parts are written [--tasks ...]


@pytest.mark.parametrize(
    "shown",
    [s for _, s in DOCS_COMMANDS],
    ids=[f"{p}: {' '.join(s.args)}" for p, s in DOCS_COMMANDS],
)
def test_each_command_the_docs_show_names_a_subcommand_and_its_own_options(shown):
    test_each_command_names_a_subcommand_and_its_own_options(shown)


@pytest.mark.parametrize(
    "path",
    sorted({tuple(resolve(s.args)[0]) for s in COMMANDS}),
    ids=lambda p: " ".join(p),
)
def test_help_parses_for_each_subcommand(path, tmp_path):
    done = cartoqa(*path, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Usage:" in done.stdout


#: commands whose first argument is a dataset some earlier command must have made
ON_A_DATASET = {("dataset", "info"), ("run",), ("score",), ("report",)}


def cheap(shown: Shown, here: Path) -> bool:
    """Runs here: no map rendering, no weights, and its dataset made by a cheap command
    before it (the map dataset the README builds is not made here, so its commands are
    only checked to parse)."""
    path, _ = resolve(shown.args)
    if tuple(path) not in CHEAP:
        return False
    if tuple(path) in ON_A_DATASET and not (here / shown.args[len(path)]).is_dir():
        return False
    if path == ["run"]:
        model = shown.args[shown.args.index("--model") + 1]
        return model.startswith(BASELINES)
    return True


@pytest.mark.slow
def test_the_cheap_commands_run_and_print_what_the_readme_shows(tmp_path):
    ran = []
    for shown in COMMANDS:
        if not cheap(shown, tmp_path):
            continue
        done = cartoqa(*shown.args, cwd=tmp_path)
        command = "cartoqa " + " ".join(shown.args)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
        printed = [line for line in shown.printed if line.strip() and line.strip() != "..."]
        if printed:
            assert done.stdout.splitlines() == printed, command
        ran.append(shown.args[0])
    assert {"geo", "tasks", "gps", "run", "score", "report"} <= set(ran), ran
    assert (tmp_path / "gps-report" / "report.html").is_file()
