"""The column values the evaluation writer hands to its bulk INSERT and UPDATE statements."""

from __future__ import annotations

from typing import TypedDict

from pydantic import JsonValue


class EvaluationValues(TypedDict):
    """One ``evaluations`` row, as inserted."""

    run_id: str
    kind: str
    supersedes_id: int | None
    task_ref: str
    rubric_hash: str
    checker_version: str
    render_profile_id: str | None
    render_record_id: int | None
    judge_panel: JsonValue
    outcome: str
    cause: str | None
    reasons: list[str]


class RunPointer(TypedDict):
    """A run's move to its new current evaluation (one row of the bulk UPDATE)."""

    id: str
    outcome: str
    outcome_cause: str | None
    current_evaluation_id: int
