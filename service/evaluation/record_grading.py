"""Writing and reading back adjudications and rubric scores (part of the one writer).

:func:`service.evaluation.record.append_evaluations` calls :func:`store_grading` for each new
evaluation: every adjudication becomes an ``adjudications`` row, its prompt and the adjudicator's
raw reply become artifacts of the run (kinds ``adjudication_prompt`` and ``judge_raw``), and a
graded task's rubric becomes one ``rubric_scores`` row with the evaluation's verdict beside the
score. :func:`read_adjudications` gives them back as
:class:`judges.adjudication_record.Adjudication`, so a later evaluation that reuses the answers
(review) reuses the adjudications too.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from judges.adjudication_record import ADJUDICATION_RESULTS, Adjudication, PeerAnswer
from judges.rubric_score import RubricScore
from regua.records import field_dict
from service.storage import AdjudicationRow, Artifact, RubricScoreRow
from service.storage.blobs import BlobStore, NewArtifact, record_artifact

PROMPT_KIND = "adjudication_prompt"
"""Artifact kind of the adjudication prompt as sent (text parts, each image by its frame)."""


def _text_artifact(
    s: Session, blobs: BlobStore, run_id: str, kind: str, text: str, name: str, version: str
) -> int:
    new = NewArtifact.text(kind, text, name, ("adjudication", version))
    return record_artifact(s, blobs, run_id, new).id


def adjudication_row(
    s: Session, blobs: BlobStore, run_id: str, evaluation_id: int, adj: Adjudication
) -> AdjudicationRow:
    """The row of one adjudication, its prompt and raw reply stored as artifacts of the run."""
    verdict, failure = adj.verdict, adj.failure
    stem = f"adjudication-{adj.criterion}-{adj.adjudicator_id}"
    prompt_id = (
        None
        if adj.prompt is None
        else _text_artifact(
            s, blobs, run_id, PROMPT_KIND, adj.prompt, f"{stem}-prompt.txt", adj.adjudicator_id
        )
    )
    raw = verdict.raw_reply if verdict is not None else (failure.raw_reply if failure else None)
    raw_id = (
        None
        if raw is None
        else _text_artifact(s, blobs, run_id, "judge_raw", raw, f"{stem}.json", adj.adjudicator_id)
    )
    return AdjudicationRow(
        evaluation_id=evaluation_id,
        **field_dict(adj, "criterion", "adjudicator_id", "adjudicator_hash", "reason"),
        answers=[a.to_dict() for a in adj.answers],
        trusted=adj.trusted,
        result=adj.result,
        status=None if verdict is None else verdict.status.value,
        level=None if verdict is None else verdict.level,
        evidence=None if verdict is None else [verdict.evidence.to_dict()],
        failure_cause=None if failure is None else failure.cause,
        failure_detail=None if failure is None else failure.detail,
        prompt_version=adj.prompt_version,
        prompt_artifact_id=prompt_id,
        raw_artifact_id=raw_id,
    )


_RUBRIC_AS_STORED = (
    "name",
    "formula",
    "score",
    "score_text",
    "arithmetic",
    "threshold",
    "threshold_met",
    "max_score",
)
"""The fields of a rubric score its stored row takes over as they are."""


def rubric_row(evaluation_id: int, rubric: RubricScore, verdict: str) -> RubricScoreRow:
    """The stored rubric score of one evaluation (``verdict``: its outcome status)."""
    return RubricScoreRow(
        evaluation_id=evaluation_id,
        **field_dict(rubric, *_RUBRIC_AS_STORED),
        levels=dict(rubric.levels),
        bounds=[b.to_dict() for b in rubric.bounds],
        missing=list(rubric.missing),
        verdict=verdict,
    )


def store_grading(
    s: Session, blobs: BlobStore, run_id: str, evaluation_id: int, result: judges.PanelResult
) -> None:
    """Add the adjudication rows and the rubric score of one new evaluation to the session."""
    s.add_all(adjudication_row(s, blobs, run_id, evaluation_id, a) for a in result.adjudications)
    if result.rubric is not None:
        s.add(rubric_row(evaluation_id, result.rubric, result.outcome.status))


def _text(s: Session, blobs: BlobStore, artifact_id: int | None) -> str | None:
    if artifact_id is None:
        return None
    art = s.get(Artifact, artifact_id)
    return None if art is None else blobs.get(art.sha256).decode("utf-8")


def adjudication_of(s: Session, blobs: BlobStore, row: AdjudicationRow) -> Adjudication:
    """A stored adjudication read back (prompt and reply from their artifacts)."""
    raw = _text(s, blobs, row.raw_artifact_id)
    verdict = None
    if row.status is not None:
        ev = (row.evidence or [{}])[0]
        t = ev.get("time_s")
        verdict = judges.Verdict(
            criterion=row.criterion,
            status=judges.VerdictStatus(row.status),
            evidence=judges.Evidence(
                ev.get("artifact_ref"), None if t is None else float(t), str(ev.get("description"))
            ),
            judge_profile_id=row.adjudicator_id,
            raw_reply=raw,
            level=row.level,
        )
    failure = (
        None
        if row.failure_cause is None
        else judges.JudgeFailure(
            row.criterion, row.adjudicator_id, row.failure_cause, row.failure_detail or "", 0.0, raw
        )
    )
    return Adjudication(
        criterion=row.criterion,
        adjudicator_id=row.adjudicator_id,
        adjudicator_hash=row.adjudicator_hash,
        reason=row.reason,
        answers=tuple(PeerAnswer.from_dict(a) for a in row.answers or ()),
        trusted=row.trusted,
        result=ADJUDICATION_RESULTS[row.result],
        verdict=verdict,
        failure=failure,
        prompt=_text(s, blobs, row.prompt_artifact_id),
        prompt_version=row.prompt_version,
    )


def adjudication_rows(s: Session, evaluation_id: int) -> Sequence[AdjudicationRow]:
    """The adjudication rows of one evaluation, in the order they were written."""
    return s.scalars(
        select(AdjudicationRow)
        .where(AdjudicationRow.evaluation_id == evaluation_id)
        .order_by(AdjudicationRow.id)
    ).all()


def read_adjudications(
    s: Session, blobs: BlobStore, evaluation_id: int
) -> tuple[Adjudication, ...]:
    """Every adjudication of one evaluation, as :func:`store_grading` stored it."""
    return tuple(adjudication_of(s, blobs, r) for r in adjudication_rows(s, evaluation_id))


def read_rubric(s: Session, evaluation_id: int) -> RubricScoreRow | None:
    """The stored rubric score of one evaluation, if its task declares a rubric."""
    return s.scalar(select(RubricScoreRow).where(RubricScoreRow.evaluation_id == evaluation_id))
