"""What a bundle test compares between two installations, and a tampered bundle.

:func:`run_facts` reads, per run, everything that must survive a transfer: status, outcome,
model, each evaluation's kind and outcome, the current evaluation's criterion statuses and
verdicts, every artifact's kind, name and sha256 (and the sha256 of the bytes the blob store
hands back), and every review label. Database ids are left out: they differ by design.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.storage import (
    Artifact,
    CriterionOutcomeRow,
    Evaluation,
    ReviewItem,
    ReviewRow,
    Run,
    VerdictRow,
)
from service.storage.blobs import BlobStore


def _current(session: Session, run: Run) -> dict[str, Any]:
    ev = run.current_evaluation_id
    criteria = session.execute(
        select(CriterionOutcomeRow.criterion, CriterionOutcomeRow.status).where(
            CriterionOutcomeRow.evaluation_id == ev
        )
    ).all()
    verdicts = session.execute(
        select(VerdictRow.criterion, VerdictRow.judge_profile_id, VerdictRow.status).where(
            VerdictRow.evaluation_id == ev
        )
    ).all()
    return {"criteria": sorted(map(tuple, criteria)), "verdicts": sorted(map(tuple, verdicts))}


def run_facts(session: Session, blobs: BlobStore, run_ids: Sequence[str]) -> dict[str, Any]:
    """Everything a transfer must keep of each run (see the module)."""
    out: dict[str, Any] = {}
    for run_id in run_ids:
        run = session.get(Run, run_id)
        assert run is not None, f"run {run_id} is missing"
        arts = session.scalars(select(Artifact).where(Artifact.run_id == run_id))
        evaluations = session.execute(
            select(Evaluation.kind, Evaluation.outcome)
            .where(Evaluation.run_id == run_id)
            .order_by(Evaluation.id)
        ).all()
        reviews = session.execute(
            select(ReviewItem.criterion, ReviewRow.status, ReviewRow.note, ReviewRow.reviewer_name)
            .join(ReviewItem, ReviewItem.id == ReviewRow.item_id)
            .where(ReviewItem.run_id == run_id)
        ).all()
        raw = session.get(Artifact, run.raw_artifact_id) if run.raw_artifact_id else None
        out[run_id] = {
            "status": run.status,
            "outcome": run.outcome,
            "model": run.model_label,
            "raw": raw.sha256 if raw else None,
            "evaluations": [tuple(e) for e in evaluations],
            **_current(session, run),
            "artifacts": sorted(
                (a.kind, a.name, a.sha256, hashlib.sha256(blobs.get(a.sha256)).hexdigest())
                for a in arts
            ),
            "reviews": sorted(map(tuple, reviews)),
        }
    return out


def tamper_artifact(bundle: bytes) -> bytes:
    """The bundle with one artifact's bytes changed and its manifest left as it was."""
    out = io.BytesIO()
    changed = False
    with (
        tarfile.open(fileobj=io.BytesIO(bundle), mode="r:*") as src,
        tarfile.open(fileobj=out, mode="w:gz") as dst,
    ):
        for member in src:
            handle = src.extractfile(member)
            assert handle is not None
            data = handle.read()
            if member.name.startswith("artifacts/") and not changed:
                data = data + b" "
                changed = True
            info = tarfile.TarInfo(member.name)
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
    assert changed
    return out.getvalue()
