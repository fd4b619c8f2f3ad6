"""What the one writer keeps on every evaluation, first pass, re-score and review alike.

Each test would fail if a rule of the method were dropped: people's verdicts survive a
re-score, the checker version recorded is the one that checked, judges' disagreement is stored,
and a review never papers over a machinery failure.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from service.evaluation.rescore import rescore
from service.review import store
from service.review.queue import QueuePolicy
from service.storage import CriterionOutcomeRow, Database, Evaluation, ReviewItem, Run, VerdictRow
from service.storage.blobs import LocalBlobStore
from tests.helpers.review_runs import TASK_REF, add_run, add_token, open_db

PANEL = "pelican-bicycle-default@1"


def _current(db: Database, run_id: str) -> Evaluation:
    with db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        ev = s.get(Evaluation, run.current_evaluation_id)
        assert ev is not None
        return ev


def _outcome(db: Database, evaluation_id: int, criterion: str) -> CriterionOutcomeRow:
    with db.read() as s:
        row = s.scalar(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == evaluation_id,
                CriterionOutcomeRow.criterion == criterion,
            )
        )
        assert row is not None
        return row


def _review(
    db: Database, blobs: LocalBlobStore, run_id: str, criterion: str, status: str, audit: float
) -> int | None:
    """One person labels the run's item on ``criterion``; the new evaluation's id."""
    reviewer = store.Reviewer(add_token(db, f"r-{run_id}-{criterion}", "reviewer"), "r", "reviewer")
    policy = QueuePolicy(seed=1, audit_rate=audit, reviews_per_audit_item=1)
    with db.write() as s:
        store.sync_queue(s, policy)
        item = s.scalars(
            select(ReviewItem).where(ReviewItem.run_id == run_id, ReviewItem.criterion == criterion)
        ).one()
        return store.submit_review(
            s, blobs, item.id, reviewer, status, "seen by a person"
        ).evaluation_id


def test_rescore_keeps_the_peoples_verdicts(tmp_path: Path) -> None:
    db, blobs = open_db(tmp_path)
    add_run(db, blobs, "r1", {"R1": "uncertain"}, outcome="pending")
    assert _review(db, blobs, "r1", "R1", "fail", audit=0.0) is not None
    reviewed = _current(db, "r1")
    assert reviewed.outcome == "fail"
    result = rescore(db, blobs, task_ref=TASK_REF, panel_id=PANEL, run_ids=["r1"])
    (_, new_id, previous) = result.appended[0]
    assert previous == reviewed.id
    assert _outcome(db, new_id, "R1").status == "fail"  # the person's label still decides
    assert _current(db, "r1").outcome == "fail"
    with db.read() as s:
        humans = s.scalars(
            select(VerdictRow).where(
                VerdictRow.evaluation_id == new_id, VerdictRow.judge_profile_id == "human@1"
            )
        ).all()
    assert [(h.criterion, h.status) for h in humans] == [("R1", "fail")]
    assert "seen by a person" in humans[0].evidence[0]["description"]
    assert humans[0].raw_artifact_id is not None  # linked to the kept review record


def test_every_evaluation_records_the_checker_that_checked(tmp_path: Path) -> None:
    db, blobs = open_db(tmp_path)
    add_run(db, blobs, "r2", {}, outcome="pass")
    result = rescore(db, blobs, task_ref=TASK_REF, panel_id=PANEL, run_ids=["r2"])
    (_, new_id, _) = result.appended[0]
    with db.read() as s:
        ev = s.get(Evaluation, new_id)
        assert ev is not None
    assert ev.kind == "rescore" and ev.checker_version == "checks@test"  # the check stage's
    assert ev.render_record_id is None and ev.rubric_hash


def test_review_never_papers_over_a_machinery_failure(tmp_path: Path) -> None:
    """A run whose render the machinery could not finish stays incomplete whatever people say
    about one criterion, with its cause; a person's fail of a necessary criterion still fails
    it (the work broke a condition: no machinery can undo that)."""
    db, blobs = open_db(tmp_path)
    add_run(db, blobs, "r3", {}, outcome="incomplete", render_cause="crash")
    add_run(db, blobs, "r4", {}, outcome="incomplete", render_cause="crash")
    for run_id in ("r3", "r4"):  # audits of automatic passes are drawn on any run but
        with db.write() as s:  # incomplete ones, so the item is made by hand here
            ev = _current(db, run_id)
            s.add(
                ReviewItem(
                    id=f"it_{run_id}",
                    run_id=run_id,
                    criterion="P1",
                    kind="audit",
                    evaluation_id=ev.id,
                    original_status="pass",
                    suggestion="pass",
                    reason="test",
                    audited_judges=["geometry@1"],
                    reviews_needed=1,
                )
            )
    passed = store.Reviewer(add_token(db, "p", "reviewer"), "p", "reviewer")
    with db.write() as s:
        store.submit_review(s, blobs, "it_r3", passed, "pass")
        store.submit_review(s, blobs, "it_r4", passed, "fail")
    kept = _current(db, "r3")
    assert (kept.kind, kept.outcome, kept.cause) == (
        "review",
        "incomplete",
        "render_incomplete: crash",
    )
    failed = _current(db, "r4")
    assert (failed.kind, failed.outcome) == ("review", "fail")
