"""Prompts as data (issue 14): the package's templates in TOML, a user's file over them, the
hash of the wording in the manifest and in every sample's provenance."""

import tomllib
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import CartoqaError
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from cartoqa.tasks.templates import default_prompts, load_prompts


def test_every_package_file_is_toml_and_every_template_fills_with_its_own_fields():
    folder = resources.files("cartoqa.tasks") / "prompts"
    names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".toml"))
    assert "map.toml" in names and "gps.toml" in names
    for name in names:
        tomllib.loads((folder / name).read_text(encoding="utf-8"))
    p = default_prompts()
    assert {"map.srn", "map.rle", "map.mml", "gps.system"} <= set(p.templates)
    assert p.text("map.rle", unit="feet", abbr="ft").count("feet") == 1
    assert '{"road_1": "...", "road_2": "..."}' in p.text("map.mml", colour="red")
    with pytest.raises(CartoqaError, match="map.mml.*cannot be filled"):
        p.text("map.mml")
    with pytest.raises(CartoqaError, match="no prompt template 'map.nope'"):
        p.text("map.nope")


def _write(tmp_path, text):
    f = tmp_path / "p.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_a_users_file_replaces_keys_and_changes_the_hash(tmp_path):
    mine = load_prompts(_write(tmp_path, '[gps]\nsystem = "Be brief."\n'))
    assert mine.text("gps.system") == "Be brief."
    assert mine.text("map.srn") == default_prompts().text("map.srn")
    assert mine.sha256 != default_prompts().sha256 and "p.toml" in mine.source
    again = load_prompts(_write(tmp_path, '[gps]\nsystem = "Be brief."\n'))
    assert again.sha256 == mine.sha256


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[map]\nsrnn = "x"\n', "map.srnn is no prompt key"),
        ('[map]\nmml = "The {color} marker"\n', "map.mml asks for color.*it gives colour"),
        ("[map\nsrn = 1\n", "not valid TOML"),
        ("[map]\nsrn = 3\n", "map.srn is a int; templates are strings"),
        ('[map]\nmml = "{colour"\n', "not a format string"),
        # a template must keep every field, written as the package writes it: one that drops
        # them would make draws alike (generation once looped forever on it)
        ('[gps.distance]\nquestion = "How far is it?"\n', "leaves out or rewrites"),
        ('[gps.distance]\nquestion = ""\n', "leaves out or rewrites {destination}, {origin}"),
        ('[gps.polygon]\nquestion = "Area of {vertices!r}?"\n', "rewrites {vertices}"),
        ('[gps.format_conversion]\nto_dms = "{lat:.2f} {lon:.6f}"\n', "rewrites {lat:.6f}"),
        ('[map]\nmml = "{} {colour}"\n', "a field without a name"),
        ('[map]\nmml = "{0} {colour}"\n', "a field without a name"),
        ('[map]\nmml = "{colour:{colour}}"\n', "inside its format spec"),
        ('"map.srn" = "a"\n[map]\nsrn = "b"\n', "map.srn is given twice"),
    ],
)
def test_a_bad_file_is_refused_naming_the_key(tmp_path, text, message):
    with pytest.raises(CartoqaError, match=message):
        load_prompts(_write(tmp_path, text))


def test_odd_files_are_refused_or_read_as_a_person_meant(tmp_path, monkeypatch):
    f = tmp_path / "u16.toml"
    f.write_bytes('[gps]\nsystem = "x"\n'.encode("utf-16"))
    with pytest.raises(CartoqaError, match="not UTF-8 text"):
        load_prompts(f)
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + b'[gps]\nsystem = "Be brief."\n')
    assert load_prompts(bom).text("gps.system") == "Be brief."
    big = tmp_path / "big.toml"
    big.write_text('[gps]\nsystem = "' + "x" * 1_100_000 + '"\n')
    with pytest.raises(CartoqaError, match="more than the 1,000,000"):
        load_prompts(big)
    with pytest.raises(CartoqaError, match="cannot read it"):
        load_prompts(tmp_path)  # a folder
    monkeypatch.chdir(tmp_path)
    rel = load_prompts(Path("bom.toml"))  # the manifest names where it is, not how it was typed
    assert rel.source == f"cartoqa + {tmp_path / 'bom.toml'}"


def test_a_missing_file_says_what_to_give(tmp_path):
    with pytest.raises(CartoqaError, match="cannot read it.*TOML file of prompt templates"):
        load_prompts(tmp_path / "none.toml")


def test_the_wording_is_recorded_in_the_manifest_and_every_provenance(tmp_path):
    generate_gps(tmp_path / "a", per_task=10, seed=3, tasks=["bearing", "distance"])
    ds = load_dataset(tmp_path / "a")
    default = default_prompts()
    assert ds.manifest.prompts == {"sha256": default.sha256, "source": "cartoqa"}
    assert {s.provenance.prompts_sha256 for s in ds} == {default.sha256}
    f = _write(tmp_path, '[gps]\nsystem = "Be brief. FINAL ANSWER: <answer>"\n')
    r = CliRunner().invoke(
        app,
        ["build", str(tmp_path / "b"), "--tasks", "bearing,distance", "--per-task", "10"]
        + ["--seed", "3", "--prompts", str(f)],
    )
    assert r.exit_code == 0, r.output
    mine = load_dataset(tmp_path / "b")
    assert mine.manifest.prompts["sha256"] == load_prompts(f).sha256
    assert {s.prompt.system for s in mine} == {"Be brief. FINAL ANSWER: <answer>"}
    # the same questions otherwise: the wording is the only change
    assert [s.prompt.text for s in mine] == [s.prompt.text for s in ds]
    assert [s.ground_truth for s in mine] == [s.ground_truth for s in ds]


def test_a_bad_prompts_file_is_refused_before_any_work(tmp_path):
    f = _write(tmp_path, '[gps]\nsystem = "{nothing}"\n')
    r = CliRunner().invoke(
        app, ["gps", "generate", str(tmp_path / "g"), "--per-task", "10", "--prompts", str(f)]
    )
    assert r.exit_code == 2 and "gps.system asks for nothing" in r.output
    assert not (tmp_path / "g").exists()


def test_a_registered_task_brings_its_own_wording(tmp_path):
    from dataclasses import replace

    from cartoqa.tasks.spec import register_task
    from tests.cartoqa.test_task_seam import TOY

    base = default_prompts().sha256
    register_task(replace(TOY, templates={"map.toy_count": "Count the {thing}."}), replace=True)
    try:
        assert default_prompts().text("map.toy_count", thing="pins") == "Count the pins."
        assert default_prompts().sha256 != base
        mine = load_prompts(_write(tmp_path, '[map]\ntoy_count = "Zähle die {thing}."\n'))
        assert mine.text("map.toy_count", thing="Nadeln") == "Zähle die Nadeln."
        with pytest.raises(CartoqaError, match="must start with its family, 'map.'"):
            register_task(replace(TOY, name="toy_b", templates={"gps.x": "y"}))
        # refused when registered, so that nothing else breaks later
        with pytest.raises(CartoqaError, match="'map.srn' is the package's or another task's"):
            register_task(replace(TOY, name="toy_c", templates={"map.srn": "mine"}))
        with pytest.raises(CartoqaError, match="'map.toy_count' is the package's or another"):
            register_task(replace(TOY, name="toy_d", templates={"map.toy_count": "again"}))
        with pytest.raises(CartoqaError, match="not a format string"):
            register_task(replace(TOY, name="toy_e", templates={"map.toy_e": "{"}))
        assert default_prompts().text("map.srn")  # the package's wording still loads
    finally:
        register_task(TOY, replace=True)
    assert default_prompts().sha256 == base
