"""A built dataset through ``export --to cartomapqa`` and back through ``import-release``.

``check_round_trip(ds, runs, tmp)``: the export's questions read back as the same samples (the
same fields, each image re-pointed into ``release/`` and holding the same bytes), and the
published arithmetic reached both ways (``score --mode original`` on the dataset,
``score-release`` on the responses the export wrote) gives the same tables.  Used by the build
tests, on the datasets they build anyway.
"""

from __future__ import annotations

import json
from pathlib import Path

from cartoqa.exports.cartomapqa import export_cartomapqa
from cartoqa.reports.collect import score_runs
from cartoqa.stores import Dataset, load_dataset
from cartoqa.tasks.release import import_release, score_release


def _without_images(sample) -> dict:
    d = sample.model_dump(mode="json")
    d["prompt"]["images"] = []
    return d


def check_round_trip(ds: Dataset, runs: Path, tmp: Path) -> None:
    out, _ = export_cartomapqa(ds, tmp / "export", runs_dir=runs)
    root = out / "Dataset" / "CartoMapQA"
    import_release(root, tmp / "back")
    back = load_dataset(tmp / "back", verify_images=True)
    mine = [s for s in ds.samples if any(s.task == t for t in back.manifest.counts)]
    assert [s.id for s in back.samples] == sorted(
        (s.id for s in mine), key=[s.id for s in back.samples].index
    )
    by_id = {s.id: s for s in mine}
    assert len(back.samples) == len(mine)
    for s in back.samples:
        assert _without_images(s) == _without_images(by_id[s.id]), s.id
        for theirs, ours in zip(s.prompt.images, by_id[s.id].prompt.images, strict=True):
            assert theirs.startswith("release/")
            assert back.image_path(theirs).read_bytes() == ds.image_path(ours).read_bytes()
    # the published arithmetic two ways, on every run of the dataset
    found = score_runs(ds, runs, mode="original")
    assert found.runs, "no run to compare"
    for run in found.runs:
        folder = next(p for p in (out / "Responses").glob(f"*/{run.model}") if p.is_dir())
        released = score_release(folder.parent.parent, model=run.model, release=root)
        for name, got in released.items():
            want = run.scores[got.task]
            assert json.dumps(got.original, sort_keys=True) == json.dumps(want, sort_keys=True), (
                name
            )
