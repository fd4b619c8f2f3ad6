"""The run view and its parts: typed read models of a stored run (the API's and the pages' JSON).

Built from stored records by the service's reports, declared by the HTTP routes as their
response models, rendered by the pages and parsed by the public client (:mod:`regua.client`).
Every field is named and typed; values that are free JSON by nature (a stage's detail, a check's
evidence, an artifact's metadata, a model's request parameters, the judge panel record) are
:data:`JsonObject` or :class:`~pydantic.JsonValue`, never ``Any``. Extra fields are refused: a
new field is declared here first.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from regua.outcomes import CriterionStatus, OutcomeStatus
from regua.records import FromRecord

JsonObject = dict[str, JsonValue]
"""A JSON object as stored (keys are text, values any JSON)."""

RunStatus = Literal["queued", "running", "done"]


def _is_none(value: object) -> bool:
    return value is None


class View(FromRecord, BaseModel):
    """Base of every read model: named fields only (``View.of(row, ...)`` copies a row's)."""

    model_config = ConfigDict(extra="forbid")


class OutcomeView(View):
    """pass | fail | pending | incomplete, with the cause (incomplete) or reasons (pending/fail)."""

    status: OutcomeStatus
    cause: str | None = None
    reasons: list[str] = []


class EvidenceView(View):
    """Where to look: an artifact (sha256), a frame time, and what was seen."""

    artifact_ref: str | None = None
    artifact_name: str | None = Field(
        default=None,
        exclude_if=_is_none,
        description="The file name the judge gave, when the evidence names a stored artifact",
    )
    time_s: float | None = None
    description: str


class VerdictView(View):
    """One judge's verdict on one criterion."""

    judge_profile_id: str
    status: CriterionStatus
    evidence: list[EvidenceView]
    latency_ms: float | None = None
    cost_usd: float | None = None
    raw_artifact: str | None = Field(default=None, description="sha256 of the judge's raw reply")
    level: int | None = Field(
        default=None, exclude_if=_is_none, description="The level given on a graded criterion"
    )


class AnswerView(View):
    """One judge's answer as the adjudicator was shown it: what, never who."""

    status: str
    level: int | None = Field(default=None, exclude_if=_is_none)
    evidence: str
    time_s: float | None = None


class AdjudicationView(View):
    """Why the panel's adjudicator was asked on a criterion, what it saw and what came of it."""

    adjudicator_id: str
    adjudicator_hash: str
    reason: str = Field(description="Why it was asked (the judges' disagreement)")
    answers: list[AnswerView] = Field(description="The anonymous answers it was shown")
    trusted: bool = Field(description="Whether the gate trusts it on this criterion")
    result: Literal[
        "decided", "adjudicator_uncertain", "adjudicator_failed", "adjudicator_not_trusted"
    ]
    decided: bool = Field(description="Its verdict decided the criterion: no person needed")
    status: CriterionStatus | None = None
    level: int | None = Field(default=None, exclude_if=_is_none)
    evidence: list[EvidenceView]
    failure: str | None = Field(default=None, description="cause: detail, when it failed")
    prompt_version: str | None = None
    prompt_artifact: str | None = Field(default=None, description="sha256 of the prompt sent")
    raw_artifact: str | None = Field(default=None, description="sha256 of its raw reply")


class BoundView(View):
    """One bound of a rubric on a run: ``I >= 4``, the level found, whether it held."""

    criterion: str
    text: str
    level: int | None
    held: bool | None = Field(description="None when the level is not decided")


class RubricView(View):
    """A graded task's rubric on this evaluation: score, levels, bounds and verdict apart."""

    name: str
    formula: str
    score: float | None = Field(description="None until every level is decided")
    score_text: str | None
    arithmetic: str | None
    threshold: float
    threshold_met: bool | None
    max_score: float
    levels: dict[str, int | None]
    bounds: list[BoundView]
    missing: list[str]
    verdict: OutcomeStatus = Field(description="The evaluation's outcome, beside the score")


class GateView(View):
    """The gate decision a vote was counted (or not counted) by, as stored then."""

    passed: bool
    gate_id: str
    set_id: str | None
    calibration_run_id: str | None
    profile_hash: str | None
    decided_at: str | None
    stored_at: str | None
    reasons: list[str]


class VoteView(View):
    """One stored vote with the judge's identity, whether it counted and why."""

    judge_profile_id: str
    status: CriterionStatus
    eligible: bool
    note: str | None = Field(
        default=None, exclude_if=_is_none, description="The jury's own reason not to count it"
    )
    kind: str | None
    profile_hash: str | None
    basis: str
    gate: GateView | None
    level: int | None = Field(default=None, exclude_if=_is_none, description="A graded vote")


class CriterionView(View):
    """The jury's result for one criterion, with every verdict and vote behind it."""

    criterion: str
    kind: Literal["necessary", "optional"]
    status: CriterionStatus
    review_required: bool
    review_reason: str | None = None
    disagreement: str | None = None
    cause: str | None = None
    votes: list[VoteView]
    verdicts: list[VerdictView]
    level: int | None = Field(
        default=None, exclude_if=_is_none, description="The decided level (graded criteria)"
    )
    adjudication: AdjudicationView | None = Field(
        default=None, exclude_if=_is_none, description="The adjudication, when one was asked"
    )


class JudgeFailureView(View):
    """A judge that gave no verdict on a criterion, and why."""

    criterion: str
    judge_profile_id: str
    cause: str
    detail: str


class VersionsView(View):
    """The versions of everything an evaluation used."""

    task: str
    rubric_hash: str
    checker: str
    render_profile: str | None
    judge_panel: JsonObject = Field(description="The judge panel record (id, judges, hashes)")


class EvaluationView(View):
    """One (append-only) evaluation with the versions of everything it used."""

    id: int
    kind: str
    created_at: str | None
    supersedes_id: int | None = None
    outcome: OutcomeView
    versions: VersionsView
    criteria: list[CriterionView]
    judge_failures: list[JudgeFailureView]
    rubric: RubricView | None = Field(
        default=None, exclude_if=_is_none, description="The rubric score of a graded task"
    )


class EvaluationLine(View):
    """One evaluation in a run's history, marked when a later one superseded it."""

    id: int
    kind: str
    created_at: str | None
    outcome: str
    cause: str | None
    supersedes_id: int | None
    superseded: bool


class StageView(View):
    """One finished pipeline stage of the run."""

    stage: str
    version: str
    status: str
    detail: JsonObject | None


class CheckResultView(View):
    """One static check's result with its evidence as stored."""

    id: str
    version: str
    status: str
    evidence: list[JsonValue]


class ChecksView(View):
    """The run's static checks: the overall status and every result."""

    status: Literal["pass", "fail"] | None
    results: list[CheckResultView]


class RenderView(View):
    """The newest render record of a run: status, cause, profile, browser and sandbox."""

    status: str
    cause: str | None
    detail: str | None
    render_profile_id: str
    browser_version: str | None
    sandbox: JsonObject | None
    attempts: int
    elapsed_ms: float | None
    """Wall time of the render on its worker (the wait for a free worker not included)."""
    cpu_ms: float | None = None
    """CPU time of the sandbox's process tree during the render (the budget's measure)."""
    queue_wait_ms: float | None = None
    """How long the render waited for a free worker (not part of its cost)."""


class ProcedureRef(View):
    """The procedure (id and version) that produced an artifact."""

    id: str
    version: str


class ArtifactView(View):
    """One stored artifact and its place in the chain (parent, producing procedure)."""

    id: int
    sha256: str
    kind: str
    name: str
    media_type: str
    size: int
    parent_id: int | None
    parent_sha256: str | None
    procedure: ProcedureRef
    meta: JsonObject
    url: str


class ModelView(View):
    """Which model produced the output (never shown to judges or reviewers)."""

    label: str
    provider: str | None = None
    params: JsonObject | None = None


class LeakView(View):
    """A leak flag of a run: which reserved task's canary, prompt or 8-grams the reply carried."""

    task: str
    kind: str
    flagged_at: str | None
    overlap: str | None = None
    """``overlap``: the reply's text sharing 8 consecutive words with the reserved prompt."""
    share: float | None = None
    """``overlap``: the share of the prompt's 8-grams the reply contains."""


class LeakSummary(View):
    """Per reserved task: how many flags of each kind, and which runs."""

    task: str
    canary: int
    prompt: int
    runs: list[str]
    overlap: int = 0


class RunCostView(View):
    """What a run cost: generation, judging and their sum (None: not available, never estimated)."""

    generation_cost_usd: float | None = Field(
        description="The generation's cost (usage times the price table), or the stated one"
    )
    judging_cost_usd: float | None = Field(
        description="The judge calls of the current evaluation, priced from the same table"
    )
    total_cost_usd: float | None = Field(description="generation + judging")
    judging_calls: int = Field(description="Model calls of the current evaluation's judges")
    judging_calls_unpriced: int = Field(description="Of those, calls with no price")
    method: str


class RunRecord(View):
    """Everything stored about one run: progress, outcome, checks, render, verdicts, artifacts.

    ``model`` and ``costs`` are left out (unset) for anyone who must stay blind (a price tells
    the model); ``leaks`` is set for admins only.
    """

    run_id: str
    task: str
    model: ModelView | None = Field(default=None, exclude_if=_is_none)
    submitted_at: str | None
    finished_at: str | None
    status: RunStatus
    outcome: OutcomeView | None
    stages: list[StageView]
    checks: ChecksView
    render: RenderView | None
    evaluation: EvaluationView | None
    evaluations: list[EvaluationLine]
    artifacts: list[ArtifactView]
    leaks: list[LeakView] | None = Field(
        default=None, exclude_if=_is_none, description="Leak flags (admins only)"
    )
    costs: RunCostView | None = Field(
        default=None,
        exclude_if=_is_none,
        description="Generation, judging and total cost (left out for anyone who must stay blind)",
    )


class RunLine(View):
    """One run in a listing."""

    run_id: str
    task: str
    status: RunStatus
    outcome: OutcomeStatus | None = None
    cause: str | None = None
    submitted_at: str | None = None
    model: str | None = Field(default=None, exclude_if=_is_none)
