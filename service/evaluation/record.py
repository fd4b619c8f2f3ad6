"""The one writer of evaluations, and its reader.

:func:`append_evaluations` stores what :func:`judges.evaluate` decided — the evaluation row with
the versions of everything it used, every verdict (raw judge replies kept as artifacts), every
judge failure, every criterion outcome and the grown memo — and moves the run's current-outcome
pointer to it. First pass, re-scoring and review write through it; nothing is overwritten.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from pydantic import JsonValue
from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

import judges
from judges.frozen import plain
from service.evaluation.record_grading import read_adjudications, store_grading
from service.evaluation.row_values import EvaluationValues, RunPointer
from service.storage import (
    Artifact,
    CriterionOutcomeRow,
    Evaluation,
    JudgeFailureRow,
    Run,
    VerdictRow,
)
from service.storage.blobs import BlobStore, NewArtifact, record_artifact

MEASUREMENTS_KIND = "measurements"
"""Artifact kind of a stored measurement memo (``judges.MeasurementMemo.to_doc()`` as JSON)."""

EvaluationKind = Literal["initial", "rescore", "review"]


@dataclass(frozen=True)
class EvaluationVersions:
    """The versions an evaluation records: what exactly was judged, and how."""

    task_ref: str
    """The task version (rubric) the work was judged under."""
    rubric_hash: str
    """Content hash of that task version."""
    checker_version: str
    """The static checker that produced the check report."""
    render_profile_id: str | None
    """The render profile of the frames judged (None when nothing was rendered)."""
    render_record_id: int | None
    """The stored render those frames come from."""


@dataclass(frozen=True)
class NewEvaluation:
    """One evaluation to append: the panel's result and everything it is recorded with."""

    run_id: str
    kind: EvaluationKind
    result: judges.PanelResult
    versions: EvaluationVersions
    artifact_names: Mapping[str, str] = field(default_factory=dict)
    """File name → sha256 of the run's artifacts: evidence naming ``checks.json`` or
    ``frame-0.png`` is stored with the artifact's address instead (the name is kept)."""
    measurements: judges.MeasurementMemo | None = None
    """The memo judging read and filled; stored when judging added to it."""


class VerdictValues(TypedDict):
    """The columns of one ``verdicts`` row, as inserted."""

    evaluation_id: int
    criterion: str
    judge_profile_id: str
    status: str
    evidence: list[dict[str, JsonValue]]
    raw_artifact_id: int | None
    latency_ms: float
    usage: JsonValue
    cost_usd: float | None
    details: JsonValue
    level: int | None


class FailureValues(TypedDict):
    """The columns of one ``judge_failures`` row, as inserted."""

    evaluation_id: int
    criterion: str
    judge_profile_id: str
    cause: str
    detail: str


class OutcomeValues(TypedDict):
    """The columns of one ``criterion_outcomes`` row, as inserted."""

    evaluation_id: int
    criterion: str
    kind: str
    status: str
    review_required: bool
    review_reason: str | None
    votes: list[dict[str, JsonValue]]
    disagreement: str | None
    cause: str | None
    level: int | None


def _evidence(verdict: judges.Verdict, names: Mapping[str, str]) -> list[dict[str, JsonValue]]:
    doc: dict[str, JsonValue] = dict(verdict.evidence.to_dict())
    ref = verdict.evidence.artifact_ref
    if ref is not None and ref in names:
        doc["artifact_ref"], doc["artifact_name"] = names[ref], ref
    return [doc]


RECORD_KEY = "record_sha256"
"""A verdict whose ``details`` name an artifact of the run by this key (a review's label) is
linked to that artifact instead of storing a raw reply."""


def _raw_artifact(
    s: Session, blobs: BlobStore, new: NewEvaluation, verdict: judges.Verdict
) -> int | None:
    record = verdict.details.get(RECORD_KEY)
    if isinstance(record, str):
        return s.scalar(
            select(Artifact.id)
            .where(Artifact.run_id == new.run_id, Artifact.sha256 == record)
            .order_by(Artifact.id)
            .limit(1)
        )
    if verdict.raw_reply is None:
        return None
    judge = verdict.judge_profile_id
    name = f"judge-{verdict.criterion}-{judge}.json"
    raw = NewArtifact.text("judge_raw", verdict.raw_reply, name, ("judge", judge))
    return record_artifact(s, blobs, new.run_id, raw).id


def memo_bytes(memo: judges.MeasurementMemo) -> bytes:
    """A measurement memo's bytes as stored (sorted, compact JSON)."""
    return json.dumps(memo.to_doc(), sort_keys=True, separators=(",", ":")).encode("utf-8")


def _store_measurements(s: Session, blobs: BlobStore, new: NewEvaluation) -> None:
    memo = new.measurements
    if memo is None or not memo.added:
        return
    doc = memo.to_doc()
    data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
    record_artifact(
        s,
        blobs,
        new.run_id,
        NewArtifact(
            kind=MEASUREMENTS_KIND,
            data=data,
            name="measurements.json",
            procedure_id="judge-measurements",
            procedure_version=str(doc.get("version", "")),
        ),
    )


def _evaluation_values(new: NewEvaluation, supersedes: int | None) -> EvaluationValues:
    v, outcome = new.versions, new.result.outcome
    return {
        "run_id": new.run_id,
        "kind": new.kind,
        "supersedes_id": supersedes,
        "task_ref": v.task_ref,
        "rubric_hash": v.rubric_hash,
        "checker_version": v.checker_version,
        "render_profile_id": v.render_profile_id,
        "render_record_id": v.render_record_id,
        "judge_panel": new.result.panel.to_dict(),
        "outcome": outcome.status,
        "cause": outcome.cause,
        "reasons": list(outcome.reasons),
    }


ALL_COLUMNS = {"render_nulls": True}
"""Bulk inserts name every column (None as NULL), so all rows go in one statement; without it
rows are grouped by which of their values are None, a statement per group. Not for tables with
nullable JSON columns (None would be stored as JSON ``null``)."""


def _insert_evaluations(
    s: Session, items: Sequence[NewEvaluation], runs: Mapping[str, Run]
) -> list[Evaluation]:
    """Insert the evaluation rows in one statement and read them back in one query."""
    if len({n.run_id for n in items}) < len(items):  # a run twice: rows in order, one by one
        rows = [
            Evaluation(**_evaluation_values(n, runs[n.run_id].current_evaluation_id)) for n in items
        ]
        s.add_all(rows)
        s.flush()
        return rows
    values = [_evaluation_values(n, runs[n.run_id].current_evaluation_id) for n in items]
    stmt = insert(Evaluation).returning(Evaluation.run_id, Evaluation.id)
    ids: dict[str, int] = {
        str(run): int(ev) for run, ev in s.execute(stmt.execution_options(**ALL_COLUMNS), values)
    }
    found = {e.id: e for e in s.scalars(select(Evaluation).where(Evaluation.id.in_(ids.values())))}
    return [found[ids[n.run_id]] for n in items]


def append_evaluations(
    s: Session, blobs: BlobStore, items: Sequence[NewEvaluation]
) -> list[Evaluation]:
    """Append one evaluation per item and point each run's current outcome at it.

    One statement per table covers all of the items. Returns the rows, in ``items`` order.
    """
    if not items:
        return []
    ids = [n.run_id for n in items]
    runs = {r.id: r for r in s.scalars(select(Run).where(Run.id.in_(ids)).with_for_update())}
    rows = _insert_evaluations(s, items, runs)
    verdicts: list[VerdictValues] = []
    failures: list[FailureValues] = []
    outcomes: list[OutcomeValues] = []
    pointers: dict[str, RunPointer] = {}
    for new, ev in zip(items, rows, strict=True):
        for v in new.result.verdicts:
            verdicts.append(_verdict_row(s, blobs, new, ev.id, v))
        failures += [_failure_row(ev.id, f) for f in new.result.failures]
        outcomes += [_outcome_row(ev.id, c) for c in new.result.criteria]
        store_grading(s, blobs, new.run_id, ev.id, new.result)
        _store_measurements(s, blobs, new)
        pointers[new.run_id] = {
            "id": new.run_id,
            "outcome": ev.outcome,
            "outcome_cause": ev.cause,
            "current_evaluation_id": ev.id,
        }
    _point_runs(s, runs, list(pointers.values()))
    if verdicts:  # nullable JSON columns (usage, details): None stays SQL NULL
        s.execute(insert(VerdictRow), verdicts)
    if failures:
        s.execute(insert(JudgeFailureRow).execution_options(**ALL_COLUMNS), failures)
    if outcomes:
        s.execute(insert(CriterionOutcomeRow).execution_options(**ALL_COLUMNS), outcomes)
    s.flush()
    return rows


def _point_runs(s: Session, runs: Mapping[str, Run], values: Sequence[RunPointer]) -> None:
    """Move each run's current outcome to its new evaluation in one UPDATE (loaded rows too)."""
    s.execute(update(Run).execution_options(**ALL_COLUMNS), values)
    for doc in values:
        run = runs[doc["id"]]
        set_committed_value(run, "outcome", doc["outcome"])
        set_committed_value(run, "outcome_cause", doc["outcome_cause"])
        set_committed_value(run, "current_evaluation_id", doc["current_evaluation_id"])


def append_evaluation(s: Session, blobs: BlobStore, new: NewEvaluation) -> Evaluation:
    """Append one evaluation (see :func:`append_evaluations`)."""
    return append_evaluations(s, blobs, [new])[0]


def _verdict_row(
    s: Session, blobs: BlobStore, new: NewEvaluation, evaluation_id: int, v: judges.Verdict
) -> VerdictValues:
    return {
        "evaluation_id": evaluation_id,
        "criterion": v.criterion,
        "judge_profile_id": v.judge_profile_id,
        "status": v.status.value,
        "evidence": _evidence(v, new.artifact_names),
        "raw_artifact_id": _raw_artifact(s, blobs, new, v),
        "latency_ms": v.latency_ms,
        "usage": plain(v.usage),  # as Verdict.to_dict gives them, without the rest of it
        "cost_usd": v.cost_usd,
        "details": plain(v.details),
        "level": v.level,
    }


def _failure_row(evaluation_id: int, f: judges.JudgeFailure) -> FailureValues:
    return {
        "evaluation_id": evaluation_id,
        "criterion": f.criterion,
        "judge_profile_id": f.judge_profile_id,
        "cause": f.cause,
        "detail": f.detail,
    }


def _outcome_row(evaluation_id: int, c: judges.CriterionOutcome) -> OutcomeValues:
    return {
        "evaluation_id": evaluation_id,
        "criterion": c.criterion,
        "kind": c.kind,
        "status": c.status,
        "review_required": c.review_required,
        "review_reason": c.review_reason,
        "votes": [v.to_dict() for v in c.votes],
        "disagreement": c.disagreement,
        "cause": c.cause,
        "level": c.level,
    }


@dataclass(frozen=True)
class StoredEvaluation:
    """An evaluation read back: its panel, the judges' answers and the jury's decisions."""

    evaluation: Evaluation
    panel: judges.PanelRecord
    answers: judges.JudgeAnswers
    """Machine verdicts (raw replies read back) and judge failures; human verdicts left out."""
    criteria: tuple[judges.CriterionOutcome, ...]


def read_evaluation(s: Session, blobs: BlobStore, evaluation_id: int) -> StoredEvaluation:
    """What :func:`append_evaluations` stored for one evaluation."""
    ev = s.get(Evaluation, evaluation_id)
    if ev is None:
        raise LookupError(f"no evaluation {evaluation_id}")
    raw: dict[int, str] = {}
    verdicts: list[judges.Verdict] = []
    for row in s.scalars(
        select(VerdictRow).where(VerdictRow.evaluation_id == ev.id).order_by(VerdictRow.id)
    ):
        if row.judge_profile_id.startswith(judges.HUMAN_PROFILE_ID.partition("@")[0]):
            continue
        verdicts.append(_stored_verdict(s, blobs, row, raw))
    failures = tuple(
        judges.JudgeFailure(f.criterion, f.judge_profile_id, f.cause, f.detail)
        for f in s.scalars(
            select(JudgeFailureRow)
            .where(JudgeFailureRow.evaluation_id == ev.id)
            .order_by(JudgeFailureRow.id)
        )
    )
    criteria = tuple(
        judges.CriterionOutcome.from_dict(
            {
                "criterion": c.criterion,
                "kind": c.kind,
                "status": c.status,
                "review_required": c.review_required,
                "review_reason": c.review_reason,
                "votes": c.votes or [],
                "disagreement": c.disagreement,
                "cause": c.cause,
                "level": c.level,
            }
        )
        for c in s.scalars(
            select(CriterionOutcomeRow)
            .where(CriterionOutcomeRow.evaluation_id == ev.id)
            .order_by(CriterionOutcomeRow.id)
        )
    )
    panel = judges.PanelRecord.from_dict(ev.judge_panel or {})
    adjudications = read_adjudications(s, blobs, ev.id)
    answers = judges.JudgeAnswers(tuple(verdicts), failures, adjudications)
    return StoredEvaluation(ev, panel, answers, criteria)


def _stored_verdict(
    s: Session, blobs: BlobStore, row: VerdictRow, raw: dict[int, str]
) -> judges.Verdict:
    reply: str | None = None
    if row.raw_artifact_id is not None:
        if row.raw_artifact_id not in raw:
            art = s.get(Artifact, row.raw_artifact_id)
            raw[row.raw_artifact_id] = blobs.get(art.sha256).decode("utf-8") if art else ""
        reply = raw[row.raw_artifact_id] or None
    evidence = (row.evidence or [{}])[0]
    ref = evidence.get("artifact_name") or evidence.get("artifact_ref")
    t = evidence.get("time_s")
    return judges.Verdict(
        criterion=row.criterion,
        status=judges.VerdictStatus(row.status),
        evidence=judges.Evidence(
            ref, float(t) if t is not None else None, str(evidence.get("description") or "")
        ),
        judge_profile_id=row.judge_profile_id,
        latency_ms=row.latency_ms or 0.0,
        usage=row.usage,
        cost_usd=row.cost_usd,
        details=row.details or {},
        raw_reply=reply,
        level=row.level,
    )
