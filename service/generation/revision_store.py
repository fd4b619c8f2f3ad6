"""Storing and reading render-and-revise links (``run_revisions``): who revised which run.

A chain starts with a first answer (round 0, a plain generated run without a link row); round
``k`` is a run whose row names the run it revises (``revision_of``), the chain's first run and
the conversation the model was sent. Rows are written with their run and never changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.records import field_dict
from regua.views.submissions import RevisionView
from service.storage import Artifact, GenerationRow, Run, RunRevisionRow
from service.storage.blobs import BlobStore, NewArtifact, record_artifact

CONVERSATION_KIND = "conversation"
"""Artifact kind of a revision round's stored conversation (``conversation.json``)."""


@dataclass(frozen=True)
class RevisionLink:
    """What links a revised run to its chain."""

    revision_of: str
    first_run_id: str
    round: int
    frames_shown: int
    findings_shown: bool
    conversation: bytes
    procedure_version: str


def write_link(s: Session, blobs: BlobStore, run_id: str, link: RevisionLink) -> None:
    """Store the conversation artifact and the link row of ``run_id`` (in its transaction)."""
    s.flush()  # the run and its raw artifact rows exist before anything points at them
    run = s.get(Run, run_id)
    parent = run.raw_artifact_id if run is not None else None
    art = record_artifact(
        s,
        blobs,
        run_id,
        NewArtifact(
            kind=CONVERSATION_KIND,
            data=link.conversation,
            procedure_id="revise",
            procedure_version=link.procedure_version,
            name="conversation.json",
            media_type="application/json",
            parent_id=parent,
        ),
        fresh_run=True,
    )
    s.add(
        RunRevisionRow(
            run_id=run_id,
            **field_dict(
                link, "revision_of", "first_run_id", "round", "frames_shown", "findings_shown"
            ),
            conversation_artifact_id=art.id,
        )
    )


def stored_rounds(s: Session, first_run_id: str) -> dict[int, str]:
    """Round → run id of the revisions already stored for a chain."""
    rows = s.execute(
        select(RunRevisionRow.round, RunRevisionRow.run_id).where(
            RunRevisionRow.first_run_id == first_run_id
        )
    ).all()
    return {int(r): str(run_id) for r, run_id in rows}


def rounds_of(s: Session, run_ids: Iterable[str]) -> dict[str, tuple[int, str]]:
    """Run id → (round, first run id) for every revised run among ``run_ids``."""
    ids = list(run_ids)
    out: dict[str, tuple[int, str]] = {}
    for chunk in (ids[i : i + 500] for i in range(0, len(ids), 500)):
        for run_id, rnd, first in s.execute(
            select(RunRevisionRow.run_id, RunRevisionRow.round, RunRevisionRow.first_run_id).where(
                RunRevisionRow.run_id.in_(chunk)
            )
        ):
            out[str(run_id)] = (int(rnd), str(first))
    return out


def chains_of(s: Session, first_run_ids: Sequence[str]) -> dict[str, dict[int, str]]:
    """First run id → round → run id, round 0 being the first run itself."""
    out: dict[str, dict[int, str]] = {f: {0: f} for f in first_run_ids}
    for chunk in (list(first_run_ids)[i : i + 500] for i in range(0, len(first_run_ids), 500)):
        for first, rnd, run_id in s.execute(
            select(RunRevisionRow.first_run_id, RunRevisionRow.round, RunRevisionRow.run_id).where(
                RunRevisionRow.first_run_id.in_(chunk)
            )
        ):
            out[str(first)][int(rnd)] = str(run_id)
    return out


def reply_of(s: Session, blobs: BlobStore, run_id: str) -> tuple[str, str | None]:
    """A generated run's reply text and, when the provider gave none, the cause."""
    run = s.get(Run, run_id)
    text = ""
    if run is not None and run.raw_artifact_id is not None:
        art = s.get(Artifact, run.raw_artifact_id)
        if art is not None:
            text = blobs.get(art.sha256).decode("utf-8", errors="replace")
    cause = s.scalar(select(GenerationRow.cause).where(GenerationRow.run_id == run_id))
    return text, cause


def revision_view(s: Session, run_id: str) -> RevisionView | None:
    """The chain a run belongs to (None for a run nobody revised and that revises nothing)."""
    row = s.scalar(select(RunRevisionRow).where(RunRevisionRow.run_id == run_id))
    first = row.first_run_id if row is not None else run_id
    chain = chains_of(s, [first])[first]
    if row is None and len(chain) == 1:
        return None
    rnd = row.round if row is not None else 0
    ordered = [chain[k] for k in sorted(chain)]
    conversation = None
    if row is not None and row.conversation_artifact_id is not None:
        art = s.get(Artifact, row.conversation_artifact_id)
        conversation = art.sha256 if art is not None else None
    return RevisionView(
        round=rnd,
        first_run_id=first,
        revision_of=row.revision_of if row is not None else None,
        revised_by=chain.get(rnd + 1),
        chain=ordered,
        frames_shown=row.frames_shown if row is not None else None,
        findings_shown=row.findings_shown if row is not None else None,
        conversation_sha256=conversation,
    )
