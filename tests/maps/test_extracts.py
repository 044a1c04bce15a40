"""Loading and cleaning extracts, on the real shared files."""

import hashlib
import logging

import osmium
import pytest

from cartoqa.errors import MapDataError
from maps import default_extract_path, load_extract

from .conftest import extract_path, network


def missing_refs(path) -> int:
    nodes = {n.id for n in osmium.FileProcessor(str(path), osmium.osm.NODE)}
    return sum(
        1
        for w in osmium.FileProcessor(str(path), osmium.osm.WAY)
        if any(n.ref not in nodes for n in w.nodes)
    )


@pytest.mark.parametrize(
    ("name", "bad_ways"), [("helsinki-centre.osm.pbf", 421), ("san-jose-downtown.osm", 125)]
)
def test_clipped_extracts_are_cleaned_and_counted(name, bad_ways, tmp_path, caplog):
    src = extract_path(name)
    caplog.set_level(logging.WARNING)
    e = load_extract(src, cache=tmp_path)
    r = e.report
    assert r.ways_with_missing_nodes == bad_ways  # the figure in the extracts' README
    assert r.trimmed + r.dropped == bad_ways and r.dropped > 0 and r.trimmed > 0
    assert e.path != src and missing_refs(e.path) == 0
    assert f"{bad_ways} of {r.ways} ways reference" in caplog.text
    assert f"dropped {r.dropped} ways" in caplog.text
    # trimmed ways keep their nodes in order and lose none that were present
    kept = sum(1 for _ in osmium.FileProcessor(str(e.path), osmium.osm.WAY))
    assert kept == r.ways - r.dropped


def test_whole_extract_is_used_as_is_and_hashed(tmp_path):
    src = extract_path("monaco.osm.pbf")
    e = load_extract(src, cache=tmp_path)
    assert e.sha256 == hashlib.sha256(src.read_bytes()).hexdigest()
    assert e.sha256.startswith("a3fa87c13df03c66")  # the README's SHA-256
    assert e.path == src and e.report.ways_with_missing_nodes == 0
    s, w, n, east = e.bounds
    assert 43.70 < s < n < 43.76 and 7.40 < w < east < 7.45
    again = load_extract(src, cache=tmp_path)  # from the cached report
    assert again == e


def test_embedded_default_is_pyrosms_helsinki(tmp_path):
    p = default_extract_path()
    assert p.name == "Helsinki.osm.pbf" and p.is_file()
    e = load_extract(None, cache=tmp_path)
    assert e.report.ways_with_missing_nodes > 0  # it is the clipped Helsinki centre
    assert 60.1 < e.center[0] < 60.2


def test_bad_extracts(tmp_path):
    with pytest.raises(MapDataError, match="does not exist"):
        load_extract(tmp_path / "nope.osm.pbf", cache=tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(MapDataError, match="not an OSM extract by its name"):
        load_extract(tmp_path / "notes.txt", cache=tmp_path)
    (tmp_path / "broken.osm.pbf").write_bytes(b"\x00\x01garbage" * 10)
    with pytest.raises(MapDataError, match="cannot read .*broken.osm.pbf"):
        load_extract(tmp_path / "broken.osm.pbf", cache=tmp_path)
    (tmp_path / "empty.osm").write_text('<?xml version="1.0"?><osm version="0.6"></osm>')
    with pytest.raises(MapDataError, match="holds no nodes"):
        load_extract(tmp_path / "empty.osm", cache=tmp_path)


def test_download_needs_exactly_one_place_or_box(tmp_path):
    from maps.extracts import download_extract

    with pytest.raises(MapDataError, match="exactly one of"):
        download_extract(out=tmp_path / "x.osm")
    with pytest.raises(MapDataError, match="exactly one of"):
        download_extract(place="Monaco", bbox=(43.7, 7.4, 43.75, 7.45), out=tmp_path / "x.osm")
    with pytest.raises(MapDataError, match="is empty"):
        download_extract(bbox=(43.75, 7.4, 43.7, 7.45), out=tmp_path / "x.osm")


@pytest.mark.skipif(not network("overpass-api.de"), reason="needs a network (Overpass API)")
def test_download_a_small_box(tmp_path):
    from maps.extracts import download_extract

    path = download_extract(bbox=(43.7370, 7.4230, 43.7390, 7.4260), out=tmp_path / "box.osm")
    e = load_extract(path, cache=tmp_path)
    assert e.report.ways > 0
