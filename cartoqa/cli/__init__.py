"""The ``cartoqa`` command.  Each group lives in its own module; nothing imports the CLI."""

from __future__ import annotations

import typer

from cartoqa import __version__

from .answer import answer
from .audit import audit
from .build import build
from .dataset import app as dataset_app
from .demo import demo
from .export import export
from .geo import app as geo_app
from .gps import app as gps_app
from .maps import app as maps_app
from .release import import_release, score_release
from .report import report
from .review import app as review_app
from .run import run
from .score import score
from .tasks import tasks

app = typer.Typer(
    name="cartoqa",
    help="cartoqa: benchmarks of map reading for vision-language models, from OpenStreetMap data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(geo_app, name="geo")
app.add_typer(dataset_app, name="dataset")
app.add_typer(maps_app, name="maps")
app.add_typer(gps_app, name="gps")
app.add_typer(review_app, name="review")
app.command()(demo)
app.command()(run)
app.command()(build)
app.command()(score)
app.command(name="score-release")(score_release)
app.command(name="import-release")(import_release)
app.command()(audit)
app.command()(answer)
app.command()(report)
app.command()(tasks)
app.command()(export)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cartoqa {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """cartoqa: benchmarks of map reading for vision-language models, from OpenStreetMap data."""


def main() -> None:
    app()
