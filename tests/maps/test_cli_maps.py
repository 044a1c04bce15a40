"""`cartoqa maps render` end to end, through the real engine."""

import io
import subprocess

import pytest
from PIL import Image
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.settings import running_as_root
from cartoqa.stores import load_dataset
from maps.projection import pixel_to_lat_lon, world_pixel

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
        app, ["demo", "--out", str(tmp_path), "--no-gps", "--carto-files", str(carto_files)]
    )
    assert result.exit_code == 0, result.output
    pngs = sorted((tmp_path / "maps" / "images").glob("*.png"))
    assert pngs and all(Image.open(p).size == (1366, 768) for p in pngs)
    assert "© OpenStreetMap contributors" in result.output
    # every map task of the embedded extract: the oracle perfect, random not
    cells = [
        [c.strip() for c in line.strip().strip("│").split("│")]
        for line in result.output.splitlines()
        if line.startswith("│")
    ]
    rows = {(c[0], c[1]): c[2:] for c in cells}
    assert rows["srn", "SR2"] == ["1.000", "0.000"]
    assert rows["srn", "connectivity"][0] == "1.000"
    assert rows["mml", "accuracy"] == ["1.000", "0.000"]
    assert rows["rle m", "mape"][0] == "0.000" and float(rows["rle m", "mape"][1]) > 0.05
    assert load_dataset(tmp_path / "maps").manifest.extract_hashes.keys() == {"Helsinki"}


def _render(*args: str):
    return CliRunner().invoke(app, ["maps", "render", "--center", "51.5175,-0.0887", *args])


def test_render_refuses_a_marker_outside_the_view_before_rendering(tmp_path):
    out = tmp_path / "far.png"
    cx, cy = world_pixel(51.5175, -0.0887, 17)
    top = round(cy - 384)  # the image's top row, in world pixels (Leaflet rounds it)
    # about 9 km north of the zoom-17 view (the "blue marker at pixel (683, -11760)");
    # the extract does not exist: the marker is refused before any map work
    far = _render(
        "--marker", "blue:51.6,-0.0887", "--extract", str(tmp_path / "none.osm"), "-o", str(out)
    )
    assert far.exit_code == 2, far.output
    msg = " ".join(far.output.split())
    expected_y = world_pixel(51.6, -0.0887, 17)[1] - top
    assert expected_y < -10_000
    assert f"blue marker at (51.600000, -0.088700) falls at pixel (683, {expected_y:.0f})" in msg
    assert "outside the image" in msg and "none.osm" not in msg
    assert "shows (51.51" in msg and "zoom out" in msg and "Move the centre" in msg
    assert not out.exists()
    # a marker 10 px below the top edge: inside, but its pin (42 px tall) would be cut
    lat, lon = pixel_to_lat_lon(cx, top + 10, 17)
    edge = _render("--marker", f"red:{lat:.7f},{lon:.7f}", "-o", str(out))
    assert edge.exit_code == 2 and "cut by the top edge" in " ".join(edge.output.split())


def test_render_refuses_an_output_it_cannot_write_before_rendering(tmp_path):
    # the extract does not exist: an output error must come first, before any map work
    nowhere = ["--extract", str(tmp_path / "no-such-extract.osm")]
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    under_a_file = _render(*nowhere, "-o", str(a_file / "map.png"))
    assert under_a_file.exit_code == 2
    msg = " ".join(under_a_file.output.split())
    assert f"{a_file} is a file, not a folder" in msg and "Traceback" not in msg
    a_folder = _render(*nowhere, "-o", str(tmp_path))
    assert a_folder.exit_code == 2 and "is a folder; give a file name" in a_folder.output
    # the extract error, now that the output is fine
    fine = _render(*nowhere, "-o", str(tmp_path / "new" / "map.png"))
    assert fine.exit_code == 2 and "no-such-extract.osm" in " ".join(fine.output.split())


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder this process cannot write in: chmod 555, or as root (who ignores modes) a
    read-only tmpfs mounted there."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if not running_as_root():
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"as root a read-only folder needs a mount: {mounted.stderr.decode()[:200]}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_render_refuses_a_read_only_folder_before_rendering(read_only_folder, tmp_path):
    out = read_only_folder / "map.png"
    r = _render("--extract", str(tmp_path / "no-such-extract.osm"), "-o", str(out))
    assert r.exit_code == 2, r.output
    msg = " ".join(r.output.split())
    assert str(read_only_folder) in msg and "no-such-extract" not in msg
    assert "Traceback" not in msg and "choose" in msg
