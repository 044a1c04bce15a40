"""The cartoqa command: the installed entry point and each geo command's output."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.geodesy import distance_km, to_dms, to_utm

runner = CliRunner()


def run(*args):
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_installed_entry_point_runs():
    exe = Path(sys.executable).with_name("cartoqa")
    assert exe.exists(), "the cartoqa console script is not installed in this environment"
    out = subprocess.run(
        [exe, "geo", "distance", "48.8566", "2.3522", "51.5074", "-0.1278"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == f"{distance_km(48.8566, 2.3522, 51.5074, -0.1278):.3f} km"
    assert out.startswith("343.5")


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["geo"],
        ["dataset"],
        ["demo"],
        ["geo", "distance"],
        ["geo", "bearing"],
        ["geo", "interpolate"],
        ["geo", "utm"],
        ["geo", "mercator"],
        ["geo", "dms"],
        ["dataset", "info"],
    ],
)
def test_help_on_every_command(args):
    code, out = run(*args, "--help")
    assert code == 0
    assert "Usage" in out


def test_distance_units_and_negative_numbers():
    assert run("geo", "distance", "-33.8688", "151.2093", "-37.8136", "144.9631") == (
        0,
        f"{distance_km(-33.8688, 151.2093, -37.8136, 144.9631):.3f} km\n",
    )
    code, out = run("geo", "distance", "0", "0", "0", "1", "--unit", "mi")
    assert code == 0 and out == f"{distance_km(0, 0, 0, 1) / 1.609344:.3f} mi\n"


def test_bearing_interpolate():
    assert run("geo", "bearing", "0", "0", "10", "10")[1].endswith("NE\n")
    assert run("geo", "interpolate", "0", "0", "0", "90", "0.5")[1] == "0.000000, 45.000000\n"


def test_utm_and_back():
    u = to_utm(-33.8688, 151.2093)
    code, out = run("geo", "utm", "-33.8688", "151.2093")
    assert code == 0 and out == f"56S {u.easting_m:.2f} {u.northing_m:.2f}\n"
    code, out = run(
        "geo",
        "utm",
        "--inverse",
        f"{u.easting_m}",
        f"{u.northing_m}",
        "--zone",
        "56",
        "--hemisphere",
        "S",
    )
    assert code == 0 and out == "-33.868800, 151.209300\n"
    code, out = run("geo", "utm", "--inverse", "1", "2")
    assert code == 2 and "needs --zone" in out


def test_mercator_and_dms():
    code, out = run("geo", "mercator", "0", "180")
    assert code == 0 and out.startswith("20037508.34 ")
    assert run("geo", "mercator", "0", "200")[1].startswith(
        f"{-160 * math.pi / 180 * 6378137:.2f} "
    )
    assert run("geo", "dms", "48.8566", "-2.3522")[1].splitlines()[0] == to_dms(48.8566, -2.3522)
    code, out = run("geo", "dms", "48°51'24\"N 2°21'08\"W")
    assert code == 0 and out.splitlines()[1] == "48.856667, -2.352222"


def test_bad_input_exits_2_with_the_reason():
    code, out = run("geo", "distance", "95", "0", "0", "0")
    assert code == 2 and "lat1=95.0 is outside [-90, 90]" in out
    code, out = run("geo", "dms", "not a place")
    assert code == 2 and "cannot read" in out
