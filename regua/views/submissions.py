"""What the runs routes answer beyond the stored record: acceptance, listings, the full run view.

:class:`RunView` is :class:`regua.views.runs.RunRecord` plus, for a run regua generated, the
model call behind it and its place in a render-and-revise chain.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from regua.views.runs import RunLine, RunRecord


class RunAccepted(BaseModel):
    """A run that was stored and queued."""

    run_id: str
    status: Literal["queued", "running", "done"]


class BatchAccepted(BaseModel):
    """Runs stored and queued by a batch request, in request order."""

    batch_size: int
    runs: list[RunAccepted]


class GenerationView(BaseModel):
    """The ``generation`` object of a run's JSON (``None`` for a submitted run)."""

    api: str
    model: str
    repeat: int
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: float | None
    elapsed_ms: float | None
    finish_reason: str | None
    attempts: int
    cost_usd: float | None
    """``None``: not available (no price table, no price for the model, no token counts)."""
    price_table_version: str | None
    timed_out: bool
    refusal: bool
    params: dict[str, JsonValue]
    prompt_sha256: str
    cause: str | None
    mock: bool
    case_key: str | None


class RevisionView(BaseModel):
    """The ``revision`` object of a run's JSON: where the run sits in its chain."""

    round: int
    """0: the first answer; k: the answer after k rounds of feedback."""
    first_run_id: str
    revision_of: str | None
    revised_by: str | None
    """The run that revises this one (None: the chain ends here)."""
    chain: list[str]
    """Every run of the chain, round 0 first."""
    frames_shown: int | None = None
    findings_shown: bool | None = None
    conversation_sha256: str | None = None


class RunView(RunRecord):
    """Everything about one run: progress, outcome, checks, render, verdicts and artifacts.

    The stored record (:class:`regua.views.runs.RunRecord`) and, for a run regua
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
