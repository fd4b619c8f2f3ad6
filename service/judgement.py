"""Storing a judgement: verdicts (raw judge replies as artifacts), judge failures and criterion
outcomes of one evaluation. Shared by the initial evaluation, re-scoring and review."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.artifacts import BlobStore, NewArtifact, record_artifact
from service.db import Artifact, CriterionOutcomeRow, Evaluation, JudgeFailureRow, VerdictRow
from service.pipeline import StageContext


def resolve_refs(ctx: StageContext, verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evidence may name a run artifact by file name (``checks.json``, ``frame-0.png``); store the
    sha256 address instead, keeping the name as ``artifact_name``."""
    with ctx.db.read() as s:
        rows = s.execute(
            select(Artifact.name, Artifact.sha256).where(Artifact.run_id == ctx.run_id)
        ).all()
    by_name = {name: sha for name, sha in rows if name}
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
                    name=f"judge-{ev.id}-{v['criterion']}-{v['judge_profile_id']}.json",
                    procedure_id="judge",
                    procedure_version=str(v["judge_profile_id"]),
                ),
            )
            raw_id = raw.id
        s.add(
            VerdictRow(
                evaluation_id=ev.id,
                criterion=v["criterion"],
                judge_profile_id=str(v["judge_profile_id"]),
                status=v["status"],
                evidence=list(v.get("evidence", [])),
                raw_artifact_id=raw_id,
                latency_ms=v.get("latency_ms"),
                usage=v.get("usage"),
                cost_usd=v.get("cost_usd"),
                details=v.get("details"),
            )
        )
    for f in failures:
        s.add(JudgeFailureRow(evaluation_id=ev.id, **{k: str(f[k]) for k in _FAILURE_KEYS}))
    for c in criteria:
        s.add(
            CriterionOutcomeRow(
                evaluation_id=ev.id,
                criterion=c["criterion"],
                kind=c["kind"],
                status=c["status"],
                review_required=bool(c.get("review_required")),
                review_reason=c.get("review_reason"),
                votes=c.get("votes"),
                disagreement=c.get("disagreement"),
                cause=c.get("cause"),
            )
        )


_FAILURE_KEYS = ("criterion", "judge_profile_id", "cause", "detail")
