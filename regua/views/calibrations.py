"""Calibrations and gate decisions as the API shows them (``/v1/calibrations``, ``/v1/gate``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from regua.views.jobs import JobView


class GateDecisionView(BaseModel):
    """One gate decision: may this judge (id and content hash) vote on this criterion?"""

    model_config = ConfigDict(extra="allow")

    profile_id: str
    profile_hash: str | None = None
    criterion: str
    task_family: str
    passed: bool
    """True only for ``trusted``: the judge may vote."""
    status: str = "not_trusted"
    """trusted | not_trusted | inconclusive."""
    needs: list[dict[str, Any]] = []
    """For inconclusive: how many more labels of which class would decide it."""
    reasons: list[str]
    gate_id: str
    set_id: str
    set_size: int | None = None
    """How many labelled items of this criterion the decision was measured on."""
    decided_at: str
    run_id: str | None = None


class CalibrationSummary(BaseModel):
    """A stored calibration run, in one line."""

    id: str
    profile_id: str
    profile_hash: str | None = None
    set_id: str
    criteria: list[str]
    created_at: str | None = None


class CalibrationView(CalibrationSummary):
    """A stored calibration run with its gate decisions and the full run."""

    task_ref: str
    decisions: list[GateDecisionView]
    run: dict[str, Any]
    """``CalibrationRun.to_dict()``: every metric with its interval, every item's answers."""


class CalibrationList(BaseModel):
    """The newest stored calibration runs."""

    calibrations: list[CalibrationSummary]


class JobList(BaseModel):
    """This process's calibration jobs, newest first."""

    jobs: list[JobView]
