"""The queue on a real (SQLite, migrated) service database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from regua.errors import InputError
from service.review import store
from service.review.queue import QueuePolicy
from service.review.views import reviewer_item
from service.storage import Artifact, CriterionOutcomeRow, Evaluation, Run, VerdictRow
from service.storage.review_models import ReviewItem
from tests.helpers.review_runs import SECRET_MODEL, SECRET_PROVIDER, add_run, add_token, open_db

POLICY = QueuePolicy(seed=99, audit_rate=1.0)


def test_migration_creates_review_tables(tmp_path: Path, database_url: str) -> None:
    db, _ = open_db(tmp_path, database_url)
    assert {"review_items", "reviews", "review_scans"} <= set(db.table_names())


def test_uncertain_item_resolves_and_appends_a_review_evaluation(
    tmp_path: Path, database_url: str
) -> None:
    db, blobs = open_db(tmp_path, database_url)
    alice = store.Reviewer(add_token(db, "alice", "reviewer"), "alice", "reviewer")
    first_ev = add_run(db, blobs, "run1", {"R1": "uncertain"}, outcome="pending")
    with db.write() as s:
        assert store.sync_queue(s, QueuePolicy(seed=1, audit_rate=0.0)) == 1
        assert store.sync_queue(s, QueuePolicy(seed=1, audit_rate=0.0)) == 0
    with db.write() as s:
        (item,) = store.available_items(s, alice, 1)
        assert (item.criterion, item.kind, item.reviews_needed) == ("R1", "uncertain", 1)
        result = store.submit_review(s, blobs, item.id, alice, "pass", "seated fine", 0.0)
    assert result.state == "resolved" and result.evaluation_id is not None
    with db.read() as s:
        run = s.get(Run, "run1")
        assert run is not None and run.outcome == "pass"
        assert run.current_evaluation_id == result.evaluation_id
        new = s.get(Evaluation, result.evaluation_id)
        assert new is not None and (new.kind, new.supersedes_id) == ("review", first_ev)
        old = s.get(Evaluation, first_ev)
        assert old is not None and old.outcome == "pending"
        old_r1 = s.scalar(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == first_ev, CriterionOutcomeRow.criterion == "R1"
            )
        )
        assert old_r1 is not None and old_r1.status == "uncertain"
        human = s.scalars(
            select(VerdictRow).where(
                VerdictRow.evaluation_id == new.id, VerdictRow.judge_profile_id == "human@1"
            )
        ).all()
        assert [(h.criterion, h.status) for h in human] == [("R1", "pass")]
        assert "seated fine" in human[0].evidence[0]["description"]
        assert human[0].evidence[0]["artifact_ref"] is not None  # the frame at t=0
        kept = s.get(Artifact, human[0].raw_artifact_id)
        assert kept is not None and (kept.kind, kept.run_id) == ("review", "run1")
        assert json.loads(blobs.get(kept.sha256))["status"] == "pass"
        parent = s.get(Artifact, kept.parent_id)
        assert parent is not None and parent.kind == "frame"
        copied = s.scalars(select(VerdictRow).where(VerdictRow.evaluation_id == new.id)).all()
        assert len(copied) == 8  # 7 judge verdicts copied + 1 human
    with db.write() as s:
        assert store.sync_queue(s, POLICY) == 0  # a review evaluation raises no new items
        with pytest.raises(store.ReviewConflictError):
            store.submit_review(s, blobs, result.item_id, alice, "fail")


def test_audit_overturn_changes_outcome_and_is_counted_per_judge(
    tmp_path: Path, database_url: str
) -> None:
    db, blobs = open_db(tmp_path, database_url)
    a = store.Reviewer(add_token(db, "a", "reviewer"), "a", "reviewer")
    b = store.Reviewer(add_token(db, "b", "reviewer"), "b", "reviewer")
    add_run(db, blobs, "run2", {}, outcome="pass")
    with db.write() as s:
        store.sync_queue(s, POLICY)
        items = s.scalars(select(ReviewItem).where(ReviewItem.criterion == "P1")).all()
        (item,) = items
        assert (item.kind, item.reviews_needed, item.audited_judges) == ("audit", 2, ["geometry@1"])
        first = store.submit_review(s, blobs, item.id, a, "fail", "no pouch")
        assert first.state == "open" and first.evaluation_id is None
        second = store.submit_review(s, blobs, item.id, b, "fail", "no pouch at all")
        assert second.state == "resolved"
    with db.read() as s:
        run = s.get(Run, "run2")
        assert run is not None and run.outcome == "fail"
        (stats,) = store.audit_stats(s)
        assert (stats.judge_profile_id, stats.audited, stats.overturned) == ("geometry@1", 1, 1)
        carried = store.human_verdicts_for_run(s, "run2")  # both labels, for re-scoring
        assert [(v.criterion, v.status.value, v.judge_profile_id) for v in carried] == [
            ("P1", "fail", "human@1"),
            ("P1", "fail", "human@1"),
        ]
        assert "no pouch at all" in carried[1].evidence.description


def test_disagreement_disputes_and_adjudication_resolves(tmp_path: Path, database_url: str) -> None:
    db, blobs = open_db(tmp_path, database_url)
    a = store.Reviewer(add_token(db, "a", "reviewer"), "a", "reviewer")
    b = store.Reviewer(add_token(db, "b", "reviewer"), "b", "reviewer")
    c = store.Reviewer(add_token(db, "c", "reviewer"), "c", "reviewer")
    add_run(db, blobs, "run3", {}, outcome="pass")
    with db.write() as s:
        store.sync_queue(s, POLICY)
        item = s.scalars(select(ReviewItem).where(ReviewItem.criterion == "B1")).one()
        store.submit_review(s, blobs, item.id, a, "pass")
        disputed = store.submit_review(s, blobs, item.id, b, "fail")
        assert disputed.state == "disputed"
        assert [i.id for i in store.list_items(s, "disputed")] == [item.id]
        assert item.id not in [i.id for i in store.available_items(s, a, 1)]
        assert store.available_items(s, c, 1)[0].id == item.id  # disputes come first
        final = store.submit_review(s, blobs, item.id, c, "pass", "frame is complete")
        assert (final.state, final.adjudication, final.final_label) == ("resolved", True, "pass")
    with db.read() as s:
        (pair,) = store.agreement(s)
        assert (pair.reviewer_a, pair.reviewer_b, pair.items, pair.agreement) == ("a", "b", 1, 0.0)
        run = s.get(Run, "run3")
        assert run is not None and run.outcome == "pass"


def test_invalid_status_is_refused(tmp_path: Path, database_url: str) -> None:
    db, blobs = open_db(tmp_path, database_url)
    a = store.Reviewer(add_token(db, "a", "reviewer"), "a", "reviewer")
    add_run(db, blobs, "run4", {"R2": "uncertain"}, outcome="pending")
    with db.write() as s:
        store.sync_queue(s, POLICY)
        item = store.available_items(s, a, 1)[0]
        with pytest.raises(InputError):
            store.submit_review(s, blobs, item.id, a, "maybe")


def test_reviewer_payload_is_blinded(tmp_path: Path, database_url: str) -> None:
    db, blobs = open_db(tmp_path, database_url)
    add_run(db, blobs, "run5", {"R3": "uncertain"}, outcome="pending")
    with db.write() as s:
        store.sync_queue(s, POLICY)
        for item in store.list_items(s):
            payload = reviewer_item(s, item, 99).model_dump()
            text = json.dumps(payload)
            assert SECRET_MODEL not in text and SECRET_PROVIDER not in text
            assert "run5" not in text
            assert payload["criterion"]["question"]
            assert payload["frames"][0]["url"].startswith("/v1/artifacts/")


def test_concurrent_reviewers_keep_one_linear_evaluation_chain(
    tmp_path: Path, database_url: str
) -> None:
    """Two reviewers label the same 2-review items at once, in opposite orders."""
    import threading

    db, blobs = open_db(tmp_path, database_url)
    people = [store.Reviewer(add_token(db, n, "reviewer"), n, "reviewer") for n in ("a", "b")]
    first = add_run(db, blobs, "runc", {}, outcome="pass")
    with db.write() as s:
        store.sync_queue(s, POLICY)
        ids = [i.id for i in store.list_items(s)]
    assert len(ids) == 7
    errors: list[BaseException] = []

    def work(who: store.Reviewer, order: list[str]) -> None:
        try:
            for item_id in order:
                with db.write() as s:
                    store.submit_review(s, blobs, item_id, who, "pass")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(people[0], ids)),
        threading.Thread(target=work, args=(people[1], ids[::-1])),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with db.read() as s:
        items = store.list_items(s)
        assert {i.state for i in items} == {"resolved"}
        chain = s.scalars(
            select(Evaluation).where(Evaluation.run_id == "runc").order_by(Evaluation.id)
        ).all()
        assert len(chain) == 1 + len(ids)
        assert [e.supersedes_id for e in chain] == [None, *[e.id for e in chain[:-1]]]
        assert chain[0].id == first
        run = s.get(Run, "runc")
        assert run is not None and run.current_evaluation_id == chain[-1].id
        human = s.scalars(
            select(VerdictRow).where(
                VerdictRow.evaluation_id == chain[-1].id, VerdictRow.judge_profile_id == "human@1"
            )
        ).all()
        assert len(human) == 2 * len(ids)  # every label of every item is in the latest one
