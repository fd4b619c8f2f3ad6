"""Storing a judgement: verdicts (raw judge replies as artifacts), judge failures and criterion
outcomes of one evaluation. Shared by the initial evaluation, re-scoring and review."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from service.artifacts import BlobStore, NewArtifact, record_artifact
from service.db import CriterionOutcomeRow, Evaluation, JudgeFailureRow, VerdictRow

#: Artifact kind of a stored measurement memo (``judges.MeasurementMemo.to_doc()`` as JSON).
MEASUREMENTS_KIND = "measurements"


def resolve_refs_by_name(
    verdicts: list[dict[str, Any]], by_name: dict[str, str]
) -> list[dict[str, Any]]:
    """Evidence may name a run artifact by file name (``checks.json``, ``frame-0.png``); store the
    sha256 address instead (``by_name``: the run's artifact names), keeping the name as
    ``artifact_name``."""
    out = []
    for v in verdicts:
        evidence = []
        for e in v.get("evidence", []):
            ref = e.get("artifact_ref")
            if ref in by_name:
                e = {**e, "artifact_ref": by_name[ref], "artifact_name": ref}
            evidence.append(e)
        out.append({**v, "evidence": evidence})
    return out


def store_judgement(
    s: Session,
    blobs: BlobStore,
    run_id: str,
    ev: Evaluation,
    verdicts: list[dict[str, Any]],
    failures: list[dict[str, Any]],
    criteria: list[dict[str, Any]],
) -> None:
    """Insert verdicts (with their raw judge replies as artifacts), failures and outcomes."""
    batch = JudgementBatch()
    batch.add(s, blobs, run_id, ev.id, verdicts, failures, criteria)
    batch.flush(s)


class JudgementBatch:
    """The rows of several judgements, inserted with one statement per table (re-scoring
    writes hundreds of evaluations per transaction; ORM objects cost ~10x more per row)."""

    def __init__(self) -> None:
        self.verdicts: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.outcomes: list[dict[str, Any]] = []

    def add(
        self,
        s: Session,
        blobs: BlobStore,
        run_id: str,
        evaluation_id: int,
        verdicts: list[dict[str, Any]],
        failures: list[dict[str, Any]],
        criteria: list[dict[str, Any]],
    ) -> None:
        """Queue one evaluation's rows; raw judge replies are stored as artifacts right away."""
        for v in verdicts:
            raw_id = None
            if v.get("raw") is not None:
                raw = record_artifact(
                    s,
                    blobs,
                    run_id,
                    NewArtifact(
                        kind="judge_raw",
                        data=v["raw"],
                        name=f"judge-{evaluation_id}-{v['criterion']}-{v['judge_profile_id']}.json",
                        procedure_id="judge",
                        procedure_version=str(v["judge_profile_id"]),
                    ),
                )
                raw_id = raw.id
            self.verdicts.append(
                {
                    "evaluation_id": evaluation_id,
                    "criterion": v["criterion"],
                    "judge_profile_id": str(v["judge_profile_id"]),
                    "status": v["status"],
                    "evidence": list(v.get("evidence", [])),
                    "raw_artifact_id": raw_id,
                    "latency_ms": v.get("latency_ms"),
                    "usage": v.get("usage"),
                    "cost_usd": v.get("cost_usd"),
                    "details": v.get("details"),
                }
            )
        for f in failures:
            row = {k: str(f[k]) for k in _FAILURE_KEYS}
            self.failures.append({"evaluation_id": evaluation_id, **row})
        for c in criteria:
            self.outcomes.append(
                {
                    "evaluation_id": evaluation_id,
                    "criterion": c["criterion"],
                    "kind": c["kind"],
                    "status": c["status"],
                    "review_required": bool(c.get("review_required")),
                    "review_reason": c.get("review_reason"),
                    "votes": c.get("votes"),
                    "disagreement": c.get("disagreement"),
                    "cause": c.get("cause"),
                }
            )

    def flush(self, s: Session) -> None:
        """Insert every queued row (one executemany per table) and start over."""
        for model, rows in (
            (VerdictRow, self.verdicts),
            (JudgeFailureRow, self.failures),
            (CriterionOutcomeRow, self.outcomes),
        ):
            if rows:
                s.execute(insert(model), rows)
                rows.clear()


def store_measurements(
    s: Session, blobs: BlobStore, run_id: str, doc: dict[str, Any] | None
) -> None:
    """Store a run's measurement memo (``judges.MeasurementMemo.to_doc()``) when judging added
    to it: later evaluations of the same masks (re-scoring) read it instead of measuring again.
    Content-addressed and idempotent: the same memo is stored once."""
    if not doc:
        return
    data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
    new = NewArtifact(
        kind=MEASUREMENTS_KIND,
        data=data,
        name="measurements.json",
        procedure_id="judge-measurements",
        procedure_version=str(doc.get("version", "")),
    )
    record_artifact(s, blobs, run_id, new)


_FAILURE_KEYS = ("criterion", "judge_profile_id", "cause", "detail")
