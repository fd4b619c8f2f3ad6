"""What a reviewer is shown, as typed read models: the blinded item and its listing line.

Built by :mod:`service.review.views` from an explicit allow-list of fields and returned as they
are by the API (``GET /v1/reviews/next``, ``GET /v1/reviews``) and the review page: the opaque
work label, the task's question, the frames, an optional judge suggestion and the item's state —
never the run id, the model label or provider, other reviewers' labels, or any ranking.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Payload(BaseModel):
    """Base of the reviewer's read models: named fields only."""

    model_config = ConfigDict(extra="forbid")


class TaskBrief(Payload):
    """The task as a reviewer sees it."""

    ref: str
    title: str
    mode: str
    prompt: str


class CriterionBrief(Payload):
    """The criterion to label and its question."""

    id: str
    question: str


class SuggestionEvidence(Payload):
    """One judge's evidence behind the suggestion, and whether that judge is calibrated."""

    judge: str
    status: str
    text: str
    calibrated: bool


class Suggestion(Payload):
    """The judges' suggestion for the item: a status and up to eight pieces of evidence."""

    status: str
    evidence: list[SuggestionEvidence]


class FrameLink(Payload):
    """A rendered frame of the drawing and where to fetch it."""

    time_s: float
    url: str


class MaskLink(Payload):
    """A part mask (``visible`` or ``alone``) of a frame and where to fetch it."""

    time_s: float
    part: str | None
    kind: str | None
    url: str


class ReviewerItem(Payload):
    """The blinded item a reviewer labels (allow-listed fields only)."""

    item_id: str
    work: str
    """An opaque label of the run, stable per installation; never the run id."""
    task: TaskBrief
    criterion: CriterionBrief
    kind: str
    reason: str
    state: str
    adjudication: bool
    reviews_needed: int
    choices: list[str]
    suggestion: Suggestion | None
    frames: list[FrameLink]
    masks: list[MaskLink]


class ItemLine(Payload):
    """A short, blinded line about an item (its final label only once resolved)."""

    item_id: str
    work: str
    task: str
    criterion: str
    kind: str
    state: str
    reviews: int
    reviews_needed: int
    final: str | None


class Progress(Payload):
    """How many labels the reviewer gave, and how many items are left for them."""

    done: int
    left: int


class NextItem(Payload):
    """The reviewer's next item (``null`` when none is left) and their progress."""

    item: ReviewerItem | None
    """The blinded item: opaque work label, task, criterion, frames, suggestion, choices."""
    progress: Progress
