"""``cartoqa geo``: the geodesy core at a shell prompt, printing plain results."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from cartoqa import geodesy
from cartoqa.errors import CoordinateError

# negative numbers ("-0.1278") must reach the arguments, not be read as options
_NUMBERS = {"ignore_unknown_options": True}

app = typer.Typer(
    help="Geodesy on the sphere R = 6371 km: distance, bearing, interpolation, UTM, "
    "Web Mercator, DMS.",
    no_args_is_help=True,
)

Lat = Annotated[float, typer.Argument(help="Latitude in degrees (-90 to 90).")]
Lon = Annotated[float, typer.Argument(help="Longitude in degrees.")]


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


@contextmanager
def _reported() -> Iterator[None]:
    """Turn bad input into one line on stderr and exit status 2."""
    try:
        yield
    except CoordinateError as exc:
        raise _fail(exc) from None


@app.command(context_settings=_NUMBERS)
def distance(
    lat1: Lat,
    lon1: Lon,
    lat2: Lat,
    lon2: Lon,
    unit: Annotated[str, typer.Option(help="km, m or mi.")] = "km",
) -> None:
    """Great-circle (haversine) distance between two points."""
    factors = {"km": 1.0, "m": 1000.0, "mi": 1 / 1.609344}
    if unit not in factors:
        raise _fail(ValueError(f"--unit {unit!r} is not one of km, m, mi"))
    with _reported():
        km = geodesy.distance_km(lat1, lon1, lat2, lon2)
    typer.echo(f"{km * factors[unit]:.3f} {unit}")


@app.command(context_settings=_NUMBERS)
def bearing(lat1: Lat, lon1: Lon, lat2: Lat, lon2: Lon) -> None:
    """Initial bearing from point 1 to point 2 (clockwise from north) and its compass point."""
    with _reported():
        b = geodesy.initial_bearing_deg(lat1, lon1, lat2, lon2)
    typer.echo(f"{b:.2f} deg {geodesy.compass_direction(b)}")


@app.command(context_settings=_NUMBERS)
def interpolate(
    lat1: Lat,
    lon1: Lon,
    lat2: Lat,
    lon2: Lon,
    fraction: Annotated[float, typer.Argument(help="0 gives point 1, 1 gives point 2.")],
) -> None:
    """The point a fraction of the way along the great circle from point 1 to point 2."""
    with _reported():
        lat, lon = geodesy.interpolate(lat1, lon1, lat2, lon2, fraction)
    typer.echo(f"{lat:.6f}, {lon:.6f}")


@app.command(context_settings=_NUMBERS)
def utm(
    a: Annotated[float, typer.Argument(help="Latitude, or easting in metres with --inverse.")],
    b: Annotated[float, typer.Argument(help="Longitude, or northing in metres with --inverse.")],
    inverse: Annotated[
        bool, typer.Option("--inverse", help="Convert UTM back to latitude, longitude.")
    ] = False,
    zone: Annotated[int | None, typer.Option(help="UTM zone 1-60 (needed with --inverse).")] = None,
    hemisphere: Annotated[str, typer.Option(help="N or S (with --inverse).")] = "N",
) -> None:
    """WGS84 latitude/longitude to UTM (easting, northing, zone), or back with --inverse."""
    with _reported():
        if inverse:
            if zone is None:
                raise CoordinateError("--inverse needs --zone (1-60) and --hemisphere (N or S)")
            lat, lon = geodesy.from_utm(a, b, zone, hemisphere)
            typer.echo(f"{lat:.6f}, {lon:.6f}")
        else:
            u = geodesy.to_utm(a, b, zone=zone)
            typer.echo(f"{u.zone}{u.hemisphere} {u.easting_m:.2f} {u.northing_m:.2f}")


@app.command(context_settings=_NUMBERS)
def mercator(
    a: Annotated[float, typer.Argument(help="Latitude, or x in metres with --inverse.")],
    b: Annotated[float, typer.Argument(help="Longitude, or y in metres with --inverse.")],
    inverse: Annotated[
        bool, typer.Option("--inverse", help="Convert x, y back to latitude, longitude.")
    ] = False,
) -> None:
    """WGS84 latitude/longitude to Web Mercator (EPSG:3857) x, y in metres, or back (--inverse)."""
    with _reported():
        if inverse:
            lat, lon = geodesy.from_web_mercator(a, b)
            typer.echo(f"{lat:.6f}, {lon:.6f}")
        else:
            x, y = geodesy.to_web_mercator(a, b)
            typer.echo(f"{x:.2f} {y:.2f}")


@app.command(context_settings=_NUMBERS)
def dms(
    values: Annotated[
        list[str],
        typer.Argument(
            help="LAT LON in decimal degrees, or any coordinate text to read (quote it)."
        ),
    ],
    precision: Annotated[int, typer.Option(help="Decimals of a second.")] = 1,
) -> None:
    """Decimal degrees to degrees-minutes-seconds, or read coordinate text and print both forms."""
    with _reported():
        if len(values) == 2:
            try:
                lat, lon = (
                    float(values[0].replace("\u2212", "-")),
                    float(values[1].replace("\u2212", "-")),
                )
            except ValueError:
                lat, lon = geodesy.parse_coordinate(" ".join(values))
        else:
            lat, lon = geodesy.parse_coordinate(" ".join(values))
        typer.echo(geodesy.to_dms(lat, lon, precision=precision))
        typer.echo(f"{lat:.6f}, {lon:.6f}")
