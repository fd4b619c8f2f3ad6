"""Typed details of finished pipeline stages (the ``stage_records.detail`` JSON column).

Each stage writes one of these and later stages (and re-scoring) read them back with
:func:`read_detail`; older rows without a field read as its default.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from service.storage.models import StageRecord

StageStatus = Literal["done", "skipped", "incomplete"]
STAGE_STATUSES: tuple[StageStatus, ...] = ("done", "skipped", "incomplete")


def stage_status(value: str) -> StageStatus | None:
    """Narrow a stored stage status (None for anything else)."""
    return next((status for status in STAGE_STATUSES if status == value), None)


class StageDetail(BaseModel):
    """What every stage may record: the cause and error of a stage that gave up."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    cause: str | None = None
    """Why the stage is ``incomplete`` or ``skipped``."""
    error: str | None = None
    """The last error of a stage that was given up after its attempts."""
    attempts: int | None = None


class CheckDetail(StageDetail):
    """Extraction and static checks of the raw reply."""

    checker_version: str | None = None
    """The checker that ran (older rows: read the stage record's version)."""
    checks_status: Literal["pass", "fail"] | None = None
    extraction_status: str | None = None
    """``found`` or ``no_svg``."""
    extracted_artifact_id: int | None = None
    report_artifact_id: int | None = None
    render: bool = False
    """Whether the extracted SVG is to be rendered."""
    render_reason: str = ""
    """Why it is (or is not) rendered."""


class RenderDetail(StageDetail):
    """The sandboxed render of the extracted SVG (or why nothing was rendered)."""

    render_record_id: int | None = None
    log_artifact_id: int | None = None
    reason: str | None = None
    """Why the render was skipped."""


class EvaluateDetail(StageDetail):
    """The first evaluation of the run."""

    evaluation_id: int | None = None
    outcome: str | None = None


class FinalizeDetail(StageDetail):
    """The run's final outcome when it was marked done."""

    outcome: str | None = None


DetailT = TypeVar("DetailT", bound=StageDetail)


def read_detail(record: StageRecord | None, model: type[DetailT]) -> DetailT:
    """The typed detail of a stage record (defaults when there is no record)."""
    if record is None:
        return model()
    return model.model_validate(record.detail or {})
