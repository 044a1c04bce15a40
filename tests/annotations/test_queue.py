"""The review tool's list (``annotations.queue``): filters, progress, where a reviewer
starts, and the next and previous sample under a filter."""

from __future__ import annotations

from annotations.decisions import DecisionStore
from annotations.queue import Filters, ReviewQueue
from tests.cartoqa.model_data import kinds_dataset


def make(tmp_path, required=1):
    ds = kinds_dataset(tmp_path / "ds", copies=2)
    store = DecisionStore.open(tmp_path / "r.sqlite", ds, required=required)
    return ds, store, ReviewQueue(ds, store)


def test_filters_progress_and_neighbours(tmp_path):
    ds, store, q = make(tmp_path)
    by = ds.by_id()
    store.decide(by["srn-000"], reviewer="ana", verdict="accept", seen=0)
    store.decide(by["rle-001"], reviewer="bo", verdict="reject", seen=0, reason="x")
    assert [r.sample.id for r in q.rows(Filters(task="srn"))] == ["srn-000", "srn-001"]
    assert [r.sample.id for r in q.rows(Filters(status="rejected"))] == ["rle-001"]
    assert [r.sample.id for r in q.rows(Filters(reviewer="ana"))] == ["srn-000"]
    assert len(q.rows(Filters(not_reviewer="ana"))) == len(ds) - 1
    store.decide(by["mml-000"], reviewer="-x", verdict="accept", seen=0)  # a name with a dash
    assert [r.sample.id for r in q.rows(Filters(reviewer="-x"))] == ["mml-000"]
    assert q.rows(Filters(zoom="17")) == [] and q.rows(Filters(city="Nice")) == []
    p = q.progress()
    assert (p["done"], p["total"]) == (3, 28)
    assert p["tasks"]["srn"] == (1, 2) and p["tasks"]["mtmf"] == (0, 2)
    assert p["statuses"]["accepted"] == 2 and p["statuses"]["unreviewed"] == 25
    # next and previous under a filter, from a sample that no longer matches it
    f = Filters(status="unreviewed", task="srn")
    assert q.neighbours("srn-000", f) == (None, "srn-001")
    assert q.neighbours("srn-001", Filters(task="srn")) == ("srn-000", None)
    assert Filters.from_query({"task": " srn ", "junk": "x"}).query() == {"task": "srn"}


def test_with_two_reviews_a_reviewer_starts_where_they_have_not_decided(tmp_path):
    ds, store, q = make(tmp_path, required=2)
    by = ds.by_id()
    first = ds.samples[0].id
    store.decide(by[first], reviewer="ana", verdict="accept", seen=0)
    rows = q.all_rows()
    assert rows[0].status == "needs another review"
    assert q.start(rows, "ana").sample.id == ds.samples[1].id  # ana has decided the first
    assert q.start(rows, "bo").sample.id == first  # bo has not: it needs his review
    store.decide(by[first], reviewer="bo", verdict="accept", seen=1)
    assert q.progress()["done"] == 1
