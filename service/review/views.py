"""What pages and the API show: blinded item payloads for reviewers, frame and mask listings.

The payloads are the read models of :mod:`service.review.payloads`.

A reviewer payload is built from an explicit allow-list of fields: the opaque work label, the
task's question, the frames (artifact URLs), an optional judge suggestion, the item's state —
never the run id, the model label or provider, other reviewers' labels, or any ranking.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.review.agreement import REVIEW_STATUSES
from service.review.blinding import opaque_run_label
from service.review.payloads import (
    CriterionBrief,
    FrameLink,
    ItemLine,
    MaskLink,
    ReviewerItem,
    Suggestion,
    SuggestionEvidence,
    TaskBrief,
)
from service.storage.models import Artifact, CriterionOutcomeRow, Run, TaskRow, VerdictRow
from service.storage.review_models import ReviewItem
from tasks import TaskSpec

ARTIFACT_URL = "/v1/artifacts/{sha256}"
PAGE_ARTIFACT_URL = "/ui/artifacts/{sha256}"
_MS = re.compile(r"-(\d+)(?:-|\.png$)")


REASONS = {
    "no_reliable_judge": "no judge has passed calibration for this criterion yet",
    "judges_disagree": "the judges disagree",
    "judge_uncertain": "the judge could not decide from the frames",
    "reviewers_disagree": "earlier reviewers disagreed",
    "reviewer_uncertain": "an earlier reviewer could not decide",
    "adjudicator_uncertain": "the judges disagree and the adjudicator could not decide",
    "adjudicator_failed": "the judges disagree and the adjudicator gave no usable answer",
    "adjudicator_not_trusted": "the judges disagree and the adjudicator is not trusted here",
}


def reason_text(reason: str) -> str:
    """A review reason code in words (unknown codes are shown as they are)."""
    return REASONS.get(reason, reason.replace("_", " "))


@dataclass(frozen=True)
class FrameRef:
    """A stored frame (or mask) of a run."""

    time_s: float
    sha256: str
    part: str | None = None
    kind: str | None = None

    @property
    def url(self) -> str:
        """Where the browser fetches the PNG."""
        return ARTIFACT_URL.format(sha256=self.sha256)

    @property
    def page_url(self) -> str:
        """The same artifact for pages (cookie-authenticated twin of ``/v1/artifacts``)."""
        return PAGE_ARTIFACT_URL.format(sha256=self.sha256)


@lru_cache(maxsize=256)
def _parse_spec(ref: str, spec_json: str) -> TaskSpec:
    """The task spec parsed from its JSON, cached per task ref and spec content."""
    del ref  # part of the lru_cache key only
    return TaskSpec.model_validate(json.loads(spec_json))


def task_spec(session: Session, ref: str) -> TaskSpec | None:
    """The frozen task version as stored by the service (None when unknown)."""
    row = session.scalar(select(TaskRow).where(TaskRow.ref == ref))
    if row is None:
        return None
    try:
        return _parse_spec(ref, json.dumps(row.spec, sort_keys=True))
    except ValueError:
        return None


def frame_time(a: Artifact) -> float:
    """A frame's timestamp: its ``time_s`` meta, else the ``-MS.png`` of its name, else 0."""
    meta = a.meta or {}
    if "time_s" in meta:
        return float(meta["time_s"])
    m = _MS.search(a.name)
    return int(m.group(1)) / 1000.0 if m else 0.0


def frames_of(session: Session, run_id: str) -> list[FrameRef]:
    """The run's rendered frames, by time."""
    rows = session.scalars(
        select(Artifact).where(Artifact.run_id == run_id, Artifact.kind == "frame")
    )
    return sorted({FrameRef(frame_time(a), a.sha256) for a in rows}, key=lambda f: f.time_s)


def masks_of(session: Session, run_id: str) -> list[FrameRef]:
    """The run's part masks (``visible`` and ``alone``), by time then part."""
    out: list[FrameRef] = []
    for a in session.scalars(
        select(Artifact).where(Artifact.run_id == run_id, Artifact.kind == "mask")
    ):
        meta = a.meta or {}
        part = str(meta.get("part") or a.name)
        kind = str(meta.get("kind") or ("alone" if a.name.endswith("-alone.png") else "visible"))
        out.append(FrameRef(frame_time(a), a.sha256, part, kind))
    return sorted(out, key=lambda m: (m.time_s, m.part or "", m.kind or ""))


def suggestion_of(session: Session, item: ReviewItem) -> Suggestion | None:
    """The judges' suggestion for the item (status and evidence), or None without a vote."""
    if item.suggestion is None:
        return None
    stored = session.scalar(
        select(CriterionOutcomeRow.votes).where(
            CriterionOutcomeRow.evaluation_id == item.evaluation_id,
            CriterionOutcomeRow.criterion == item.criterion,
        )
    )
    ineligible = {
        str(v.get("judge_profile_id"))
        for v in (stored if isinstance(stored, list) else [])
        if isinstance(v, dict) and v.get("eligible") is False
    }
    evidence: list[SuggestionEvidence] = []
    for v in session.scalars(
        select(VerdictRow).where(
            VerdictRow.evaluation_id == item.evaluation_id, VerdictRow.criterion == item.criterion
        )
    ):
        for e in v.evidence or []:
            if isinstance(e, dict) and e.get("description"):
                evidence.append(
                    SuggestionEvidence(
                        judge=v.judge_profile_id,
                        status=v.status,
                        text=str(e["description"]),
                        calibrated=v.judge_profile_id not in ineligible,
                    )
                )
    return Suggestion(status=item.suggestion, evidence=evidence[:8])


def reviewer_item(
    session: Session, item: ReviewItem, seed: int, *, with_suggestion: bool = True
) -> ReviewerItem:
    """The blinded payload of one item for a reviewer (allow-listed fields only)."""
    run = session.get(Run, item.run_id)
    task_ref = run.task_ref if run is not None else ""
    spec = task_spec(session, task_ref)
    question = ""
    if spec is not None:
        try:
            question = spec.criterion(item.criterion).question
        except KeyError:
            question = ""
    return ReviewerItem(
        item_id=item.id,
        work=opaque_run_label(seed, item.run_id),
        task=TaskBrief(
            ref=task_ref,
            title=spec.title if spec else task_ref,
            mode=spec.mode.value if spec else "static",
            prompt=spec.prompt if spec else "",
        ),
        criterion=CriterionBrief(id=item.criterion, question=question),
        kind=item.kind,
        reason=reason_text(item.reason),
        state=item.state,
        adjudication=item.state == "disputed",
        reviews_needed=item.reviews_needed,
        choices=list(REVIEW_STATUSES),
        suggestion=suggestion_of(session, item) if with_suggestion else None,
        frames=[FrameLink(time_s=f.time_s, url=f.url) for f in frames_of(session, item.run_id)],
        masks=[
            MaskLink(time_s=m.time_s, part=m.part, kind=m.kind, url=m.url)
            for m in masks_of(session, item.run_id)
        ],
    )


def item_summary(item: ReviewItem, seed: int, reviews: int, task_ref: str) -> ItemLine:
    """A short, blinded line about an item for listings (labels only once resolved)."""
    return ItemLine(
        item_id=item.id,
        work=opaque_run_label(seed, item.run_id),
        task=task_ref,
        criterion=item.criterion,
        kind=item.kind,
        state=item.state,
        reviews=reviews,
        reviews_needed=item.reviews_needed,
        final=item.final_label if item.state == "resolved" else None,
    )
