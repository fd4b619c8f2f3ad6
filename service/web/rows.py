"""What the run and report pages show besides the run view: typed rows for the templates.

The run page renders the run view's parts (:mod:`regua.views.runs`) as they are; these
rows add what only a page shows (each criterion's question, the review items with their labels,
the evaluation history with its statuses, the per-task report counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from regua.views.runs import CheckResultView, EvaluationView, LeakView, RunCostView
from service.review.views import FrameRef
from service.storage import Evaluation, RenderRecord, Run


@dataclass(frozen=True)
class LabelLine:
    """One reviewer's label on a review item (the name for admins, else a pseudonym)."""

    who: str
    status: str
    note: str
    time_s: float | None
    adjudication: bool
    unblinded: bool


@dataclass(frozen=True)
class ReviewLine:
    """One review item of a run with every label given on it."""

    criterion: str
    kind: str
    state: str
    needed: int
    final: str | None
    evaluation: int | None
    labels: list[LabelLine]


@dataclass(frozen=True)
class HistoryLine:
    """One evaluation of the run, with its necessary criteria's statuses."""

    id: int
    kind: str
    created_at: datetime | None
    outcome: str
    supersedes_id: int | None
    statuses: list[tuple[str, str]]


@dataclass(frozen=True)
class RunPage:
    """Everything the run page shows: the stored records, the shown evaluation and the texts."""

    run: Run
    current: Evaluation | None
    is_latest: bool
    latest_id: int | None
    render: RenderRecord | None
    panel_text: str
    frames: list[FrameRef]
    evaluation: EvaluationView | None
    """The shown evaluation (the current one unless an earlier one was asked for)."""
    questions: dict[str, str]
    """Criterion id → its question in the run's task version."""
    history: list[HistoryLine]
    checks: list[CheckResultView]
    reviews: list[ReviewLine]
    leaks: list[LeakView]
    raw_text: str
    svg_text: str
    costs: RunCostView | None = None
    """Generation, judging and total cost of the run (its current evaluation's judging)."""


@dataclass(frozen=True)
class ModelCounts:
    """One model's outcome counts on a task version, with links and the pending range."""

    model: str
    n: int
    counts: dict[str, int]
    links: dict[str, str]
    range_text: str
    bar: str
    """A small server-drawn SVG bar (presentation attributes only)."""


@dataclass(frozen=True)
class CriterionCounts:
    """One criterion's status counts in the runs' current evaluations, with heat levels."""

    id: str
    kind: str
    counts: dict[str, int]
    levels: dict[str, int]
    links: dict[str, str]


@dataclass(frozen=True)
class TaskCounts:
    """One task version of the report page: counts per model and per criterion."""

    ref: str
    models: list[ModelCounts]
    criteria: list[CriterionCounts]


@dataclass(frozen=True)
class RunFilters:
    """The runs a page is narrowed to, as the report links ask (query parameters; empty: any).

    Taken by a page as ``Annotated[RunFilters, Depends()]``: each field is a query parameter.
    """

    task: str | None = None
    model: str | None = None
    outcome: str | None = None
    criterion: str | None = None
    status: str | None = None
