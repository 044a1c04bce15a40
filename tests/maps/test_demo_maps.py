"""The main job's map part on a real extract: every registered map task built, rendered,
answered by the baselines and scored through public calls (``cartoqa.demo.run_demo``)."""

from cartoqa.demo import run_demo
from cartoqa.tasks.build import extract_tasks

from .conftest import extract_path


def test_the_demo_builds_and_scores_every_map_task(
    cluster, carto_files, cache, tmp_path, monkeypatch
):
    monkeypatch.setenv("CARTOQA_CACHE", str(cache))
    kwargs = {
        "gps": False,
        "per_task": 2,
        "extract": extract_path("london-moorgate.osm.pbf"),
        "carto_files": carto_files,
        "dsn": cluster.connection("postgres").conninfo(),
    }
    (part,) = run_demo(tmp_path, **kwargs)
    assert part.name == "maps" and set(part.dataset.manifest.counts) == set(extract_tasks())
    assert "© OpenStreetMap contributors" in part.dataset.manifest.attribution
    for s in part.dataset:
        assert (part.dataset.path / s.prompt.images[0]).stat().st_size > 50_000
    oracle, random = part.scores["oracle"], part.scores["random"]
    for task in extract_tasks():
        assert task in oracle and task in random
    assert oracle["srn"]["all"]["SR2"] == 1 and random["srn"]["all"]["SR2"] == 0
    assert oracle["mml"]["all"]["accuracy"] == 1
    assert part.answered["oracle"] == (len(part.dataset), 0)
    (again,) = run_demo(tmp_path, **kwargs)  # resumes: nothing asked again, nothing rebuilt
    assert again.answered["oracle"] == (0, len(part.dataset))
    assert again.dataset.manifest.created_at == part.dataset.manifest.created_at
