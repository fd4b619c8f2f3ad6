"""Background jobs as the API shows them: a generic job, and a generation with its runs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

JobState = Literal["running", "done", "failed", "interrupted"]
"""``interrupted``: the service stopped while the job ran; it can be resumed."""


class JobView(BaseModel):
    """A background job as the API shows it (plus its info and result fields)."""

    model_config = ConfigDict(extra="allow")

    job_id: str
    kind: str
    state: JobState
    elapsed_s: float
    submitted_at: str
    error: str | None = None
    status_url: str | None = None


class ChainView(BaseModel):
    """One first answer and its revisions (``stopped``: why it ended before every round)."""

    run_ids: list[str]
    stopped: str | None = None


class GenerationJobView(BaseModel):
    """A generation as the API shows it: how far it got and, once done, its runs."""

    job_id: str
    state: JobState
    task: str
    api: str
    model: str
    mock: bool
    repeats: int
    done: int
    run_ids: list[str]
    error: str | None = None
    status_url: str
    revise: int = 0
    """Revision rounds asked per first answer (0: first answers only)."""
    rounds_done: int = 0
    chains: list[ChainView] = []
    """Per first answer: its run and each revision's, round 0 first (once done)."""
    resumable: bool = False
    """An interrupted job: ``POST /v1/generations/{job}/resume`` goes on where it stopped."""
    resent_calls: int = 0
    """Model calls sent again after a kill cut them off (with the same ``Idempotency-Key``, so
    a provider that honours it generated once; one that ignores it was asked twice)."""
