"""A map task asked in other wording (``cartoqa build --prompts FILE``) on a real extract:
the same maps and truths, the new text, its hash recorded."""

from cartoqa.stores import load_dataset
from cartoqa.tasks import build_dataset
from cartoqa.tasks.templates import default_prompts, load_prompts


def test_other_wording_changes_the_text_only(engine_for, tmp_path):
    engine = engine_for("london-moorgate.osm.pbf")
    f = tmp_path / "de.toml"
    f.write_text(
        '[map]\nmml = "Welche zwei Straßen treffen sich am {colour}en Marker? JSON: '
        '{{\\"road_1\\": \\"...\\", \\"road_2\\": \\"...\\"}}"\n',
        encoding="utf-8",
    )
    kw = {"engine": engine, "tasks": ["mml"], "per_task": 2, "seed": 9, "progress": False}
    build_dataset(tmp_path / "a", **kw)
    build_dataset(tmp_path / "b", prompts=f, **kw)
    a, b = load_dataset(tmp_path / "a"), load_dataset(tmp_path / "b")
    assert [s.ground_truth for s in a] == [s.ground_truth for s in b]
    assert a.manifest.images_sha256 == b.manifest.images_sha256
    for old, new in zip(a, b, strict=True):
        colour = old.metadata.colour
        assert new.prompt.text.startswith(f"Welche zwei Straßen treffen sich am {colour}en")
        assert old.prompt.text == default_prompts().text("map.mml", colour=colour)
        assert new.provenance.prompts_sha256 == load_prompts(f).sha256
    assert b.manifest.prompts["source"].endswith("de.toml")
