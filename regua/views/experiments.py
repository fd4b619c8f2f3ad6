"""An experiment as the API shows it: accepted, its progress, its paired report and history."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ExperimentAccepted(BaseModel):
    """An experiment accepted: its id, whether it resumes a stored one, where to follow it."""

    experiment_id: str
    resumed: bool
    job_id: str
    status_url: str
    report_url: str


class ExperimentProgress(BaseModel):
    """How far an experiment got."""

    experiment_id: str
    status: str
    planned: int
    generated: int
    runs_left: int
    error: str | None = None
    resent_calls: int = 0
    """Model calls sent again after a kill cut them off (same ``Idempotency-Key``: a provider
    that honours it generated once; one that ignores it was asked twice)."""


class ExperimentReport(BaseModel):
    """The paired report of one experiment run.

    Keys: ``experiment``, ``arms``, ``comparisons``, ``reproducibility``, ``methods``.
    """

    model_config = ConfigDict(extra="allow")

    schema_: str = Field(alias="schema")


class ExperimentHistory(BaseModel):
    """Every window of an experiment: one series per arm and version key, with its drift."""

    model_config = ConfigDict(extra="allow")

    experiment: str
    series: list[dict[str, Any]]
