"""Request and response bodies of the HTTP API (they document the OpenAPI schema).

The response bodies are the read models of :mod:`regua.views` (shared with the public client,
:mod:`regua.client`); this module holds the request bodies, which refuse fields they do not
declare.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue

from service.api.text import Text, strict_json

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
