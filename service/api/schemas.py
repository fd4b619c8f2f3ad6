"""Request and response bodies of the HTTP API (they document the OpenAPI schema)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from judges import CriterionStatus, OutcomeStatus
from service.api.text import Text, strict_json
from service.generation.store import GenerationView

JsonParams = Annotated[dict[str, Any], AfterValidator(strict_json)]


class ModelInfo(BaseModel):
    """Which model produced the output (never shown to judges or reviewers)."""

    model_config = ConfigDict(extra="forbid")
    label: Text = Field(min_length=1, max_length=200, description="Model label, e.g. 'gpt-x-2026'")
    provider: Text | None = Field(default=None, max_length=200)
    params: JsonParams | None = Field(
        default=None, description="Request parameters (JSON; NaN and Infinity are refused)"
    )


class RunRequest(BaseModel):
    """One model output to evaluate against a task version."""

    model_config = ConfigDict(extra="forbid")
    task: Text = Field(min_length=3, max_length=200, description="Task reference ID@VERSION")
    model: ModelInfo
    output: Text = Field(description="The model's raw reply text (may contain prose around SVG)")
    panel: Text | None = Field(
        default=None,
        min_length=3,
        max_length=200,
        description="Judge panel ID@VERSION (GET /v1/panels); default: the service's panel "
        "(REGUA_PANEL), else the task version's default",
    )


class BatchRequest(BaseModel):
    """Many runs at once; all are accepted or none."""

    model_config = ConfigDict(extra="forbid")
    runs: list[RunRequest] = Field(min_length=1, max_length=1000)


class RunAccepted(BaseModel):
    """A run that was stored and queued."""

    run_id: str
    status: Literal["queued", "running", "done"]


class BatchAccepted(BaseModel):
    """Runs stored and queued by a batch request, in request order."""

    batch_size: int
    runs: list[RunAccepted]


class TokenRequest(BaseModel):
    """A new API token."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["submitter", "reviewer", "admin"]
    name: Text = Field(default="", max_length=200)
    expires_in: str | None = Field(
        default=None, max_length=20, description="lifetime, e.g. 7d, 12h, 30m (default: none)"
    )


class TokenCreated(BaseModel):
    """The token secret, shown once."""

    token: str
    role: str
    name: str
    id: int
    expires_at: str | None = None


class _Open(BaseModel):
    """Response part that may grow new fields without breaking clients."""

    model_config = ConfigDict(extra="allow")


class OutcomeView(_Open):
    """pass | fail | pending | incomplete, with the cause (incomplete) or reasons (pending/fail)."""

    status: OutcomeStatus
    cause: str | None = None
    reasons: list[str] = []


class EvidenceView(_Open):
    """Where to look: an artifact (sha256), a frame time, and what was seen."""

    artifact_ref: str | None = None
    time_s: float | None = None
    description: str


class VerdictView(_Open):
    """One judge's verdict on one criterion."""

    judge_profile_id: str
    status: CriterionStatus
    evidence: list[EvidenceView]
    latency_ms: float | None = None
    raw_artifact: str | None = Field(default=None, description="sha256 of the judge's raw reply")


class CriterionView(_Open):
    """The jury's result for one criterion, with every verdict behind it."""

    criterion: str
    kind: Literal["necessary", "optional"]
    status: CriterionStatus
    review_required: bool
    review_reason: str | None = None
    verdicts: list[VerdictView]


class EvaluationView(_Open):
    """One (append-only) evaluation with the versions of everything it used."""

    id: int
    kind: str
    created_at: str | None
    supersedes_id: int | None = None
    outcome: OutcomeView
    versions: dict[str, Any]
    criteria: list[CriterionView]
    judge_failures: list[dict[str, Any]]


class ArtifactView(_Open):
    """One stored artifact and its place in the chain (parent, producing procedure)."""

    id: int
    sha256: str
    kind: str
    name: str
    media_type: str
    size: int
    parent_id: int | None
    parent_sha256: str | None
    procedure: dict[str, str]
    meta: dict[str, Any]
    url: str


class RunView(_Open):
    """Everything about one run: progress, outcome, checks, render, verdicts and artifacts."""

    run_id: str
    task: str
    model: ModelInfo | None = None
    submitted_at: str | None
    finished_at: str | None
    status: Literal["queued", "running", "done"]
    outcome: OutcomeView | None
    stages: list[dict[str, Any]]
    checks: dict[str, Any]
    render: dict[str, Any] | None
    evaluation: EvaluationView | None
    evaluations: list[dict[str, Any]]
    artifacts: list[ArtifactView]
    generation: GenerationView | None = Field(
        default=None, description="The model call behind a run regua generated (else null)"
    )


class RunLine(_Open):
    """One run in a listing."""

    run_id: str
    task: str
    status: Literal["queued", "running", "done"]
    outcome: OutcomeStatus | None = None
    cause: str | None = None
    submitted_at: str | None = None
    model: str | None = None


class RunList(BaseModel):
    """A page of runs, newest first."""

    runs: list[RunLine]
    limit: int
    offset: int
