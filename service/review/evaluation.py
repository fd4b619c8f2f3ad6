"""Appending a ``review`` evaluation once an item is resolved (nothing earlier is overwritten).

The new evaluation is :func:`judges.evaluate` on the run's stored evidence with the previous
evaluation's answers (machine verdicts and judge failures, as they were, with the eligibility
they were counted under) and every label of the run's resolved items: people decide their
criteria, the jury and the outcome rule decide the rest — so a review never papers over a
machinery failure. It is written by the one writer; ``runs.current_evaluation_id`` then points
at it and its ``supersedes_id`` names the previous one.
"""

from __future__ import annotations

import dataclasses

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from regua.errors import NotFoundError
from service.evaluation.humans import human_verdicts_for_runs
from service.evaluation.inputs import read_eval_inputs
from service.evaluation.record import (
    EvaluationVersions,
    NewEvaluation,
    StoredEvaluation,
    append_evaluation,
    read_evaluation,
)
from service.storage import Evaluation, ReviewItem, Run, TaskRow
from service.storage.blobs import BlobStore
from tasks import TaskSpec


def _task(s: Session, ref: str, run: Run) -> TaskSpec:
    """The task version the previous evaluation judged under.

    After a rubric re-score it may differ from the one the run was submitted for.
    """
    row = s.scalar(select(TaskRow).where(TaskRow.ref == ref)) or s.get(TaskRow, run.task_pk)
    if row is None:
        raise NotFoundError(f"task {ref} of run {run.id} is not stored")
    return TaskSpec.model_validate(row.spec)


def _counted_votes(prev: StoredEvaluation) -> dict[tuple[str, str], bool]:
    """``(judge id, criterion)`` → whether the previous jury counted that judge.

    A judge counts by its vote, or by its failure when that failure left the criterion open.
    """
    table = {
        (vote.judge_profile_id, c.criterion): vote.eligible
        for c in prev.criteria
        for vote in c.votes
    }
    causes = {c.criterion: c.cause or "" for c in prev.criteria}
    for f in prev.answers.failures:
        if f"{f.judge_profile_id}: " in causes.get(f.criterion, ""):
            table.setdefault((f.judge_profile_id, f.criterion), True)
    return table


def _panel(record: judges.PanelRecord) -> judges.JudgePanel:
    family = record.family or "*"
    return judges.JudgePanel(record.id or "unknown@1", family, record.assignments)


def _versions(ev: Evaluation) -> EvaluationVersions:
    return EvaluationVersions(
        ev.task_ref, ev.rubric_hash, ev.checker_version, ev.render_profile_id, ev.render_record_id
    )


def append_review_evaluation(s: Session, blobs: BlobStore, item: ReviewItem) -> Evaluation:
    """Write a new evaluation of ``item``'s run in which people decide the reviewed criteria."""
    run = s.get(Run, item.run_id, with_for_update=True)  # one new evaluation at a time
    if run is None or run.current_evaluation_id is None:
        raise NotFoundError(f"run {item.run_id} has no evaluation to build on")
    prev = read_evaluation(s, blobs, run.current_evaluation_id)
    if item.criterion not in {c.criterion for c in prev.criteria}:
        raise NotFoundError(f"criterion {item.criterion} is not in evaluation {prev.evaluation.id}")
    task = _task(s, prev.evaluation.task_ref, run)
    (stored,) = read_eval_inputs(s, blobs, {run.id: task}, [run.id])
    humans = human_verdicts_for_runs(s, [run.id], also=[item.id])[run.id]
    result = judges.evaluate(
        stored.inp,
        _panel(prev.panel),
        _counted_votes(prev),
        humans,
        answers=prev.answers,
        seated={},
    )
    result = dataclasses.replace(result, panel=prev.panel)
    new = NewEvaluation(
        run_id=run.id,
        kind="review",
        result=result,
        versions=_versions(prev.evaluation),
        artifact_names=stored.artifact_names,
    )
    return append_evaluation(s, blobs, new)
