"""Writing and reading pairwise comparisons and human preferences (the only writer of both).

Each order's raw reply (or failure) is kept as a ``pairwise_reply`` artifact (JSON) before the
comparison row that names it, in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from judges.pairwise import (
    Comparison,
    HumanPreference,
    JudgedPair,
    PairAnswer,
    PairFailure,
    PairOutcome,
)
from judges.pairwise.agreement import HUMAN_WINNERS
from judges.pairwise.model import RESULTS
from service.storage import (
    Artifact,
    Database,
    PairwiseComparisonRow,
    PairwisePreferenceRow,
    Run,
)
from service.storage.blobs import BlobStore, NewArtifact, record_artifact

REPLY_KIND = "pairwise_reply"
PROCEDURE = "pairwise"


@dataclass(frozen=True)
class PairSide:
    """One side of a comparison: its stored run, model label and drawing's sha256.

    A drawing of imported preferences has no run; its label is the drawing's file name.
    """

    run_id: str | None
    model: str
    sha256: str | None


def _reply_doc(order: int, answer: PairAnswer | PairFailure) -> bytes:
    shown = {"X": "a", "Y": "b"} if order == 1 else {"X": "b", "Y": "a"}
    doc: dict[str, object] = {"order": order, "shown": shown}
    if isinstance(answer, PairAnswer):
        doc |= {"winner": answer.winner, "reason": answer.reason, "raw_reply": answer.raw_reply}
    else:
        doc |= {"failure": answer.cause, "detail": answer.detail, "raw_reply": answer.raw_reply}
    return json.dumps(doc, sort_keys=True).encode()


def _winner(answer: PairAnswer | PairFailure) -> str | None:
    return answer.winner if isinstance(answer, PairAnswer) else None


def _sides(a: PairSide, b: PairSide) -> dict[str, str | None]:
    """The ``a_``/``b_`` columns of a comparison: each side's run id, model and drawing sha256."""
    return {
        f"{prefix}_{name}": getattr(side, name)
        for prefix, side in (("a", a), ("b", b))
        for name in ("run_id", "model", "sha256")
    }


def record_comparison(
    s: Session,
    blobs: BlobStore,
    key: tuple[str, str],
    sides: tuple[PairSide, PairSide],
    outcome: PairOutcome,
) -> PairwiseComparisonRow:
    """Store one comparison (``key`` = task ref, criterion) with both raw replies as artifacts."""
    task_ref, criterion = key
    a, b = sides
    ids: list[int] = []
    for order, answer in ((1, outcome.first), (2, outcome.second)):
        ends = (a.run_id or a.sha256, b.run_id or b.sha256)
        name = f"{task_ref}|{criterion}|{ends[0]}|{ends[1]}|{order}"[:200]
        new = NewArtifact(
            REPLY_KIND,
            _reply_doc(order, answer),
            PROCEDURE,
            outcome.judge_id[:100],
            name,
            media_type="application/json",
        )
        ids.append(record_artifact(s, blobs, None, new).id)
    s.flush()
    failure = outcome.failure
    row = PairwiseComparisonRow(
        **_sides(a, b),
        task_ref=task_ref,
        criterion=criterion,
        judge_id=outcome.judge_id,
        first_winner=_winner(outcome.first),
        second_winner=_winner(outcome.second),
        first_reply_id=ids[0],
        second_reply_id=ids[1],
        result=outcome.result,
        position_biased=outcome.position_biased,
        failure_cause=failure.cause if failure else None,
        failure_detail=failure.detail[:2000] if failure else None,
    )
    s.add(row)
    s.flush()
    return row


def comparison_rows(
    db: Database, task_ref: str | None = None, criterion: str | None = None
) -> list[PairwiseComparisonRow]:
    """Stored comparisons (oldest first), optionally of one task version and criterion."""
    query = select(PairwiseComparisonRow).order_by(PairwiseComparisonRow.id)
    if task_ref:
        query = query.where(PairwiseComparisonRow.task_ref == task_ref)
    if criterion:
        query = query.where(PairwiseComparisonRow.criterion == criterion)
    with db.read() as s:
        rows = list(s.scalars(query))
        s.expunge_all()
    return rows


def ranking_keys(db: Database) -> list[tuple[str, str, str]]:
    """The (task version, criterion, judge identity) of stored comparisons of runs, sorted.

    Each is ranked on its own: comparisons by different judges are never pooled.
    """
    c = PairwiseComparisonRow
    query = (
        select(c.task_ref, c.criterion, c.judge_id)
        .where(c.a_run_id.is_not(None))
        .distinct()
        .order_by(c.task_ref, c.criterion, c.judge_id)
    )
    with db.read() as s:
        return [(str(t), str(k), str(j)) for t, k, j in s.execute(query)]


def preference_keys(db: Database) -> list[tuple[str | None, str | None]]:
    """The (task version, criterion) of imported preferences (None: imported without one)."""
    p = PairwisePreferenceRow
    query = select(p.task_ref, p.criterion).distinct()
    with db.read() as s:
        keys = {(t, k) for t, k in s.execute(query)}
    return sorted(keys, key=lambda k: (k[0] or "", k[1] or ""))


def models_of_drawings(db: Database, shas: Iterable[str]) -> dict[str, str]:
    """Drawing sha256 → the model of the stored runs that submitted it (when exactly one)."""
    wanted = sorted(set(shas))
    found: dict[str, set[str]] = {}
    with db.read() as s:
        for start in range(0, len(wanted), 500):
            query = (
                select(Artifact.sha256, Run.model_label)
                .join(Run, Run.id == Artifact.run_id)
                .where(
                    Artifact.kind == "extracted", Artifact.sha256.in_(wanted[start : start + 500])
                )
            )
            for sha, model in s.execute(query):
                found.setdefault(str(sha), set()).add(str(model))
    return {sha: next(iter(models)) for sha, models in found.items() if len(models) == 1}


def decided(rows: Sequence[PairwiseComparisonRow]) -> list[Comparison]:
    """The comparisons of runs' models with a result (judge failures carry none)."""
    return [
        Comparison(r.a_model, r.b_model, result)
        for r in rows
        if r.a_run_id is not None and (result := RESULTS.get(r.result or "")) is not None
    ]


def judged_pairs(rows: Sequence[PairwiseComparisonRow]) -> list[JudgedPair]:
    """Comparisons of drawings (by sha256) for calibration against human preferences."""
    return [
        JudgedPair(r.a_sha256, r.b_sha256, RESULTS.get(r.result or ""), r.position_biased)
        for r in rows
        if r.a_sha256 and r.b_sha256
    ]


def preferences(
    db: Database, task_ref: str | None = None, criterion: str | None = None
) -> list[HumanPreference]:
    """Imported human preferences; rows without a task or criterion apply to every one."""
    query = select(PairwisePreferenceRow).order_by(PairwisePreferenceRow.id)
    with db.read() as s:
        rows = list(s.scalars(query))
    return [
        HumanPreference(
            r.left_sha256, r.right_sha256, winner, r.annotator, (r.left_model, r.right_model)
        )
        for r in rows
        if (not task_ref or r.task_ref in (None, task_ref))
        and (not criterion or r.criterion in (None, criterion))
        and (winner := HUMAN_WINNERS.get(r.winner)) is not None
    ]
