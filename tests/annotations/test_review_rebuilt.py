"""The review tool on a rebuilt dataset (issue 27, item 6): a sample whose generated truth the
rebuild changed shows "truth changed", in the list, its filter and its page."""

from __future__ import annotations

from annotations.decisions import DecisionStore
from cartoqa.stores import DatasetWriter, load_dataset
from tests.annotations.review_server import review_server
from tests.cartoqa.model_data import kinds_dataset


def test_the_review_tool_shows_a_truth_the_rebuild_changed(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    by = ds.by_id()
    with DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds) as store:
        store.decide(by["rle-000"], reviewer="ana", verdict="accept", seen=0)
        store.decide(by["mml-000"], reviewer="ana", verdict="accept", seen=0)
    with DatasetWriter(tmp_path / "ds", name=ds.manifest.name, overwrite=True) as w:
        for s in ds.samples:
            for r in s.prompt.images:
                w.add_image(r.split("/")[-1], ds.image_path(r).read_bytes())
            truth = s.ground_truth
            if s.id == "rle-000":
                truth = truth.model_copy(update={"value": 999.0})
            w.add(s.model_copy(update={"ground_truth": truth}))
        w.finish(seeds=[0])
    with review_server(tmp_path / "ds") as srv:
        status, _, body = srv.request("GET", "/?status=truth+changed")
        text = body.decode()
        assert status == 200 and "rle-000" in text and "mml-000" not in text, text[-2000:]
        status, _, body = srv.request("GET", "/sample/rle-000")
        text = body.decode()
        assert status == 200 and "truth changed" in text and "999" in text
