"""`cartoqa maps render` end to end, through the real engine."""

import io

from PIL import Image
from typer.testing import CliRunner

from cartoqa.cli import app

from .conftest import extract_path


def test_render_command_writes_the_png_and_reports_the_drawing(
    cluster, cache, carto_files, tmp_path, monkeypatch
):
    monkeypatch.setenv("CARTOQA_PG_DIR", str(cluster.folder))
    monkeypatch.setenv("CARTOQA_CACHE", str(cache))
    out = tmp_path / "moorgate.png"
    result = CliRunner().invoke(
        app,
        [
            "maps",
            "render",
            "--extract",
            str(extract_path("london-moorgate.osm.pbf")),
            "--center",
            "51.5175,-0.0887",
            "--zoom",
            "18",
            "--marker",
            "blue:51.5180,-0.0895",
            "--marker",
            "red:51.5170,-0.0880",
            "--path",
            "51.5180,-0.0895;51.5175,-0.0887;51.5170,-0.0880",
            "--carto-files",
            str(carto_files),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert Image.open(io.BytesIO(out.read_bytes())).size == (1366, 768)
    assert "blue marker at pixel" in result.output and "red marker at pixel" in result.output
    assert "© OpenStreetMap contributors" in result.output
    assert "scale bar: " in result.output and " ft" in result.output


def test_render_command_rejects_bad_input(tmp_path):
    runner = CliRunner()
    bad_zoom = runner.invoke(
        app, ["maps", "render", "--center", "1,2", "--zoom", "12", "-o", "x.png"]
    )
    assert bad_zoom.exit_code == 2 and "greater than or equal to 15" in bad_zoom.output
    bad_marker = runner.invoke(
        app,
        [
            "maps",
            "render",
            "--center",
            "1,2",
            "--marker",
            "green:1,2",
            "-o",
            str(tmp_path / "x.png"),
        ],
    )
    assert bad_marker.exit_code == 2 and "blue or red" in bad_marker.output
    bad_centre = runner.invoke(
        app, ["maps", "render", "--center", "north pole-ish", "-o", str(tmp_path / "x.png")]
    )
    assert bad_centre.exit_code == 2 and "--center" in bad_centre.output


def test_demo_renders_the_embedded_extract(cluster, cache, carto_files, tmp_path, monkeypatch):
    monkeypatch.setenv("CARTOQA_PG_DIR", str(cluster.folder))
    monkeypatch.setenv("CARTOQA_CACHE", str(cache))
    result = CliRunner().invoke(
        app, ["demo", "--out", str(tmp_path), "--n", "3", "--carto-files", str(carto_files)]
    )
    assert result.exit_code == 0, result.output
    [png] = (tmp_path / "maps").glob("*.png")
    assert png.name == "Helsinki-z17.png"
    assert Image.open(png).size == (1366, 768)
    assert "© OpenStreetMap contributors" in result.output
    # the navigation part: built from the same extract, the oracle perfect, random not
    cells = [
        [c.strip() for c in line.strip().strip("│").split("│")]
        for line in result.output.splitlines()
        if line.startswith("│")
    ]
    rows = {c[0]: c[1:] for c in cells if c[0] in ("oracle", "random")}
    # SR2, aSA, connectivity, RLE MAPE, MML accuracy
    assert rows["oracle"] == ["1.000", "1.000", "1.000", "0.000", "1.000"]
    assert rows["random"][0] == "0.000" and rows["random"][4] == "0.000"
    assert (tmp_path / "navigation-3" / "manifest.json").is_file()
