"""``/v1/experiments``: run an experiment file resumably, follow it, read its report.

``POST /v1/experiments`` takes the file (YAML text in ``file``, or the same document as JSON in
``experiment``) and a ``window`` (default ``default``): the experiment run ``ID@WINDOW`` is
stored, or found again when it exists with the same file, and its missing cases are generated in
the background (202). Posting it again after an interruption resumes it; nothing is generated
twice. ``GET /v1/experiments/{id}`` is its progress, ``/report`` the paired report and
``/v1/experiments/{name}/history`` every window side by side.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from regua.errors import ExperimentFileError
from regua.views.experiments import (
    ExperimentAccepted,
    ExperimentHistory,
    ExperimentProgress,
    ExperimentReport,
)
from service.access.tokens import Principal
from service.api.deps import Ctx, Submitter
from service.api.headers import REPORT_HEADERS
from service.experiments.access import readable_experiment, readable_windows
from service.experiments.exports import experiment_page_html
from service.experiments.jobs import experiment_progress, start_experiment
from service.experiments.report_db import experiment_history, experiment_report
from service.experiments.spec import ExperimentFile, load_experiment_text, parse_experiment
from service.experiments.store import DEFAULT_WINDOW

router = APIRouter(prefix="/v1/experiments", tags=["experiments"])


class ExperimentBody(BaseModel):
    """An experiment to run: its file (YAML text) or its document, and the time window."""

    file: str | None = Field(None, description="the experiment file's YAML text")
    experiment: dict[str, Any] | None = Field(None, description="the same document as JSON")
    window: str = Field(DEFAULT_WINDOW, pattern=r"^[\w.:-]{1,100}$")
    generator: str | None = Field(None, description="a registered generator (default: runner)")


def _may_read(ctx: Ctx, caller: Principal, ident: str) -> None:
    """Submitters read their own experiments, admins every one, reviewers none.

    Reports name the models, and reviewers stay blind to them. Another token's experiment is
    "not found" like an unknown id (see :mod:`service.experiments.access`).
    """
    readable_experiment(ctx.db, ident, caller)


def _spec(body: ExperimentBody) -> ExperimentFile:
    if (body.file is None) == (body.experiment is None):
        raise ExperimentFileError("give exactly one of 'file' (YAML text) or 'experiment'")
    if body.file is not None:
        return load_experiment_text(body.file, "file")
    return parse_experiment(body.experiment, "experiment")


@router.post("", status_code=202, response_model=ExperimentAccepted)
def create_experiment(
    body: ExperimentBody, ctx: Ctx, caller: Submitter, response: Response
) -> ExperimentAccepted:
    """Store (or resume) an experiment and generate its missing cases in the background."""
    started = start_experiment(
        ctx,
        _spec(body),
        window=body.window,
        generator=body.generator,
        caller=caller,
    )
    url = f"/v1/experiments/{started.experiment_id}"
    response.headers["Location"] = url
    return ExperimentAccepted(
        experiment_id=started.experiment_id,
        resumed=started.resumed,
        job_id=started.job_id,
        status_url=url,
        report_url=f"{url}/report",
    )


@router.get("/{experiment_id}", response_model=ExperimentProgress)
def get_experiment(experiment_id: str, ctx: Ctx, caller: Submitter) -> ExperimentProgress:
    """The experiment's status, cases generated of those planned, and runs not judged yet.

    ``resent_calls``: model calls sent again after a kill cut them off (same Idempotency-Key).
    """
    _may_read(ctx, caller, experiment_id)
    p = experiment_progress(ctx, experiment_id)
    return ExperimentProgress(**p.__dict__)


@router.get("/{experiment_id}/report", response_model=ExperimentReport)
def get_experiment_report(experiment_id: str, ctx: Ctx, caller: Submitter) -> dict[str, Any]:
    """The paired report (schema ``regua.experiment-report/1``)."""
    _may_read(ctx, caller, experiment_id)
    experiment_progress(ctx, experiment_id)  # an experiment whose runs are all judged is done
    return experiment_report(ctx.db, experiment_id)


@router.get("/{experiment_id}/report.html", response_class=HTMLResponse)
def get_experiment_report_html(experiment_id: str, ctx: Ctx, caller: Submitter) -> HTMLResponse:
    """The report page (SVG charts, no script) with the experiment's windows over time."""
    return HTMLResponse(experiment_page_html(ctx, experiment_id, caller), headers=REPORT_HEADERS)


@router.get("/{name}/history", response_model=ExperimentHistory)
def get_experiment_history(name: str, ctx: Ctx, caller: Submitter) -> dict[str, Any]:
    """Every window of the experiment ``name``: one series per arm and version, with drift."""
    rows = readable_windows(ctx.db, name, caller)
    return experiment_history(ctx.db, name, only={r.id for r in rows})
