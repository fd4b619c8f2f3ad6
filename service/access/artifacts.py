"""Who may read which stored artifact, by role (one rule for the API and the pages).

Submitters read artifacts of their own runs; reviewers only frames and masks (what judges see,
never the reply text or the model); admins everything. Artifacts of runs of a reserved task are
for admins only (:mod:`service.access.pools`). Anything else is "not found", exactly as an
unknown address, so nobody can test whether some bytes were stored for another submitter.
"""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from regua.errors import NotFoundError
from service.access.pools import hidden_run_ids, sees_hidden
from service.access.tokens import Principal
from service.storage import Artifact, Run

REVIEWER_KINDS = ("frame", "mask")
"""Artifact kinds a reviewer may fetch: what judges see, never the reply text or the model."""


def readable_media_type(session: Session, principal: Principal, sha256: str) -> str:
    """The media type of the artifact ``sha256`` when ``principal`` may read it, else 404."""
    q = select(Artifact).where(Artifact.sha256 == sha256)
    if not sees_hidden(principal.role):
        hidden = Artifact.run_id.in_(hidden_run_ids(session))
        q = q.where(or_(Artifact.run_id.is_(None), ~hidden))
    if principal.role == "submitter":
        q = q.join(Run, Run.id == Artifact.run_id).where(Run.submitted_by == principal.token_id)
    elif principal.role == "reviewer":
        q = q.where(Artifact.kind.in_(REVIEWER_KINDS))
    art = session.scalars(q.limit(1)).first()
    if art is None:
        raise NotFoundError(f"no artifact {sha256!r}")
    return art.media_type
