"""``cartoqa build --variants lang:sv`` on Helsinki, whose streets nearly all carry
``name:sv`` (issue 32): the copies' truths name roads as the Swedish map writes them.

The expected names are read from the extract here with pyosmium (another reader than the
database and Mapnik the build uses): each Finnish street name and the ``name:sv`` its ways
carry.  Real PostGIS, Mapnik, Chromium and the generators.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from cartoqa.stores import load_dataset
from cartoqa.tasks.variants import base_id, variant_of

from .conftest import extract_path

EXTRACT = "helsinki-centre.osm.pbf"
TASKS = ["srn", "mml", "stmf_names"]


def _swedish() -> dict[str, set[str]]:
    """Each street name -> the names its ways take on a Swedish map (``name:sv``, else the
    name itself), read with pyosmium."""
    import osmium

    found: dict[str, set[str]] = defaultdict(set)

    class Ways(osmium.SimpleHandler):
        def way(self, w) -> None:
            name = " ".join(w.tags.get("name", "").split())
            if "highway" in w.tags and name:
                sv = " ".join(w.tags.get("name:sv", "").split())
                found[name].add(sv or name)

    Ways().apply_file(str(extract_path(EXTRACT)))
    return dict(found)


@pytest.fixture(scope="module")
def built(tmp_path_factory, engine_for, cache, carto_files):
    from cartoqa.tasks import build_dataset

    out = tmp_path_factory.mktemp("lang") / "ds"
    report = build_dataset(
        out,
        engine=engine_for(EXTRACT),
        cache=cache,
        carto_files=carto_files,
        tasks=TASKS,
        per_task=3,
        seed=2,
        variants=["lang:sv"],
        progress=False,
    )
    return out, report, load_dataset(out)


def test_every_question_is_copied_in_swedish_or_counted_as_left_out(built):
    out, _, ds = built
    m = ds.manifest.variants
    assert m["asked"] == ["lang:sv"]
    made, left = m["made"]["lang:sv"], m["left_out"].get("lang:sv", {})
    for task in TASKS:
        n_base = sum(1 for s in ds.samples if s.task == task and variant_of(s) is None)
        assert n_base > 0
        assert made.get(task, 0) + sum(left.get(task, {}).values()) == n_base, task
    by_id = {s.id: s for s in ds.samples}
    copies = [s for s in ds.samples if variant_of(s) == "lang:sv"]
    assert {s.task for s in copies} == set(TASKS)
    for s in copies:
        assert s.id == f"{base_id(s)}@lang-sv"
        share = (s.metadata.model_extra or {})["translated_share"]
        assert 0.0 < share <= 1.0, s.id
        base_png = (out / by_id[base_id(s)].prompt.images[0]).read_bytes()
        assert (out / s.prompt.images[0]).read_bytes() != base_png


def test_roads_are_named_as_the_swedish_map_writes_them(built):
    _, _, ds = built
    swedish = _swedish()
    by_id = {s.id: s for s in ds.samples}
    changed = 0
    for s in ds.samples:
        if variant_of(s) != "lang:sv" or s.task not in ("srn", "mml"):
            continue
        base, t = by_id[base_id(s)].ground_truth, s.ground_truth
        if s.task == "srn":
            pairs = list(zip(base.steps[2:-1:2], t.steps[2:-1:2], strict=True))
            assert base.steps[1::2] == t.steps[1::2]  # the actions are the same
            assert set(t.network.roads) & {sv for _, sv in pairs} == {sv for _, sv in pairs}
        else:
            # the pair is sorted in each language: compare as sets, through the mapping
            pairs = [(n, sv) for n in (base.road_1, base.road_2) for sv in (t.road_1, t.road_2)]
            pairs = [(n, sv) for n, sv in pairs if sv in swedish.get(n, set())]
            assert {sv for _, sv in pairs} == {t.road_1, t.road_2}, s.id
        for fi, sv in pairs:
            assert sv in swedish[fi], (s.id, fi, sv)
            changed += sv != fi
    assert changed >= 2


def test_the_oracle_is_right_in_swedish_and_the_finnish_answer_is_not(built):
    from cartoqa.models.baselines import oracle_answer
    from cartoqa.scoring import score_samples

    _, _, ds = built
    by_id = {s.id: s for s in ds.samples}
    copies = [s for s in ds.samples if variant_of(s) == "lang:sv"]
    right = [r for rows in score_samples(copies, {s.id: oracle_answer(s) for s in copies}).values()
             for r in rows]  # fmt: skip
    assert all(sc.correct for _, sc in right), [s.id for s, sc in right if not sc.correct]
    # the base's Finnish answer on the Swedish map: wrong wherever a name it needs changed
    finnish = score_samples(copies, {s.id: oracle_answer(by_id[base_id(s)]) for s in copies})

    def names(t) -> list[str] | set[str]:
        return t.steps if hasattr(t, "steps") else {t.road_1, t.road_2}

    differs = [
        (s, sc)
        for task in ("srn", "mml")
        for s, sc in finnish.get(task, [])
        if names(s.ground_truth) != names(by_id[base_id(s)].ground_truth)
    ]
    assert differs
    assert not [s.id for s, sc in differs if sc.correct]


def test_the_swedish_copies_export_to_their_own_hugging_face_configs(built, tmp_path, monkeypatch):
    """Read back with the ``datasets`` library itself: a "lang:sv" copy is a config of its
    own per task ("srn__lang_sv"), each row naming its variant and base."""
    datasets = pytest.importorskip("datasets", reason="the export extra is not installed")
    from cartoqa.exports.hf import export_hf

    _, _, ds = built
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    out = export_hf(ds, tmp_path / "hf").out
    for task in ("srn", "mml"):
        copies = [s for s in ds.samples if s.task == task and variant_of(s) == "lang:sv"]
        rows = datasets.load_dataset(str(out), name=f"{task}__lang_sv", cache_dir=str(tmp_path))
        rows = rows["test"]
        assert rows["id"] == [s.id for s in copies]
        assert set(rows["variant"]) == {"lang:sv"}
        assert rows["base_id"] == [base_id(s) for s in copies]
