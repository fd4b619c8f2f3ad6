"""Request and response bodies of the HTTP API (they document the OpenAPI schema).

The run view and its parts are the read models of :mod:`service.reports.run_views`; this module
adds what only the API shows beside them (the generation behind a run) and the request bodies,
which refuse fields they do not declare.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue

from service.api.text import Text, strict_json
from service.generation.revision_store import RevisionView
from service.generation.store import GenerationView
from service.reports.run_views import RunLine, RunRecord

JsonParams = Annotated[dict[str, JsonValue], AfterValidator(strict_json)]


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


class RunView(RunRecord):
    """Everything about one run: progress, outcome, checks, render, verdicts and artifacts.

    The stored record (:class:`service.reports.run_views.RunRecord`) and, for a run regua
    generated, the model call behind it.
    """

    generation: GenerationView | None = Field(
        default=None, description="The model call behind a run regua generated (else null)"
    )
    revision: RevisionView | None = Field(
        default=None,
        description="Where the run sits in a render-and-revise chain (round 0: the first "
        "answer; k: after k rounds of feedback), else null",
    )


class RunList(BaseModel):
    """A page of runs, newest first."""

    runs: list[RunLine]
    limit: int
    offset: int
