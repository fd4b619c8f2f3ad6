"""Every API operation the client offers, as a :class:`~regua.client.transport.Call`.

Both clients (:mod:`regua.client.sync`, :mod:`regua.client.aio`) send these and nothing else,
so an operation's path, query and read model are written once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from regua.client.transport import Call
from regua.views.calibrations import CalibrationList, CalibrationView
from regua.views.experiments import (
    ExperimentAccepted,
    ExperimentHistory,
    ExperimentProgress,
    ExperimentReport,
)
from regua.views.jobs import GenerationJobView, JobView
from regua.views.pairwise import RankingView
from regua.views.reports import ReportDocument
from regua.views.submissions import BatchAccepted, RunAccepted, RunList, RunView


class RunInput(BaseModel):
    """One model output to submit: the task, the reply and which model wrote it."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(description="Task reference ID@VERSION")
    output: str = Field(description="The model's raw reply (may hold prose around the SVG)")
    model: str = Field(description="Model label, e.g. 'gpt-x-2026'")
    provider: str | None = None
    params: dict[str, JsonValue] | None = None
    panel: str | None = Field(default=None, description="Judge panel ID@VERSION (else default)")

    def wire(self) -> dict[str, Any]:
        """The body of ``POST /v1/runs`` (one element of a batch)."""
        body: dict[str, Any] = {
            "task": self.task,
            "model": {"label": self.model, "provider": self.provider, "params": self.params},
            "output": self.output,
        }
        if self.panel is not None:
            body["panel"] = self.panel
        return body


def _json(body: Any) -> Any:
    return body


def _job_or_calibration(body: Any) -> CalibrationView | JobView:
    if isinstance(body, dict) and "job_id" in body:
        return JobView.model_validate(body)
    return CalibrationView.model_validate(body)


def request(
    method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
) -> Call[Any]:
    """Any ``/v1`` request; the decoded JSON answer (for what has no typed call yet)."""
    return Call(method, path, _json, params=params, json=json)


def submit(run: RunInput) -> Call[RunAccepted]:
    """Submit one model output (``POST /v1/runs``); the run's id and status."""
    return Call("POST", "/v1/runs", RunAccepted.model_validate, json=run.wire())


def submit_batch(runs: Sequence[RunInput]) -> Call[BatchAccepted]:
    """Submit many outputs at once (``POST /v1/runs/batch``, all accepted or none); their ids."""
    body = {"runs": [r.wire() for r in runs]}
    return Call("POST", "/v1/runs/batch", BatchAccepted.model_validate, json=body)


def run(run_id: str, wait_s: float = 0.0) -> Call[RunView]:
    """One run (``GET /v1/runs/{id}``): status, outcome, criteria with votes, stages, artifacts.

    With ``wait_s`` (at most 60) the service answers as soon as the run is done, or after
    ``wait_s`` seconds with the run as it is then.
    """
    params = {"wait_s": wait_s} if wait_s > 0 else None
    return Call("GET", f"/v1/runs/{run_id}", RunView.model_validate, params=params)


def runs(
    task: str | None = None, status: str | None = None, limit: int = 100, offset: int = 0
) -> Call[RunList]:
    """A page of the caller's runs, newest first (``GET /v1/runs``)."""
    params = {"task": task, "status": status, "limit": limit, "offset": offset}
    return Call("GET", "/v1/runs", RunList.model_validate, params=params)


def report(
    tasks: Sequence[str], models: Sequence[str] = (), **options: str | int | bool
) -> Call[ReportDocument]:
    """The report of ``tasks`` (``ID@VERSION`` or ``ID``), optionally of some models.

    ``GET /v1/reports``; options: ``group_by``, ``seed``, ``resamples``, ``weights``, ``by``.
    """
    params: dict[str, Any] = {"task": list(tasks), "model": list(models), **options}
    return Call("GET", "/v1/reports", ReportDocument.model_validate, params=params)


def generate(body: Mapping[str, Any]) -> Call[GenerationJobView]:
    """Ask the service to call a model for a task (``docs/generation.md``); the job."""
    return Call("POST", "/v1/generations", GenerationJobView.model_validate, json=dict(body))


def generation(job_id: str) -> Call[GenerationJobView]:
    """A generation job (``GET /v1/generations/{job}``): state, repeats done, run ids once done."""
    return Call("GET", f"/v1/generations/{job_id}", GenerationJobView.model_validate)


def start_experiment(
    file_text: str | None = None,
    document: Mapping[str, Any] | None = None,
    window: str | None = None,
    generator: str | None = None,
) -> Call[ExperimentAccepted]:
    """Run (or resume) an experiment from its file's YAML text or its document (``POST``)."""
    body: dict[str, Any] = {"file": file_text, "experiment": dict(document) if document else None}
    body |= {k: v for k, v in (("window", window), ("generator", generator)) if v is not None}
    return Call("POST", "/v1/experiments", ExperimentAccepted.model_validate, json=body)


def experiment(experiment_id: str) -> Call[ExperimentProgress]:
    """How far an experiment got (``GET /v1/experiments/{id}``)."""
    path = f"/v1/experiments/{experiment_id}"
    return Call("GET", path, ExperimentProgress.model_validate)


def experiment_report(experiment_id: str) -> Call[ExperimentReport]:
    """The paired report of an experiment (``GET /v1/experiments/{id}/report``)."""
    path = f"/v1/experiments/{experiment_id}/report"
    return Call("GET", path, ExperimentReport.model_validate)


def experiment_history(name: str) -> Call[ExperimentHistory]:
    """Every window of an experiment, one series per arm (``GET …/{name}/history``)."""
    return Call("GET", f"/v1/experiments/{name}/history", ExperimentHistory.model_validate)


def calibrations() -> Call[CalibrationList]:
    """The newest stored calibration runs (``GET /v1/calibrations``, admins)."""
    return Call("GET", "/v1/calibrations", CalibrationList.model_validate)


def calibration(run_id: str) -> Call[CalibrationView]:
    """One stored calibration run with its gate decisions (``GET …/{id}``, admins)."""
    return Call("GET", f"/v1/calibrations/{run_id}", CalibrationView.model_validate)


def calibrate(body: Mapping[str, Any]) -> Call[CalibrationView | JobView]:
    """Calibrate a judge (``docs/calibration.md``): the stored run (``wait``), else its job."""
    return Call("POST", "/v1/calibrations", _job_or_calibration, json=dict(body))


def calibration_job(job_id: str) -> Call[JobView]:
    """A calibration job (``GET /v1/calibrations/jobs/{job}``)."""
    return Call("GET", f"/v1/calibrations/jobs/{job_id}", JobView.model_validate)


def pairwise_ranking(
    task: str | None = None, criterion: str | None = None, **options: str | int
) -> Call[RankingView]:
    """The pairwise ranking of the stored comparisons (``GET /v1/pairwise/ranking``, admins)."""
    params: dict[str, Any] = {"task": task, "criterion": criterion, **options}
    return Call("GET", "/v1/pairwise/ranking", RankingView.model_validate, params=params)


def compare(body: Mapping[str, Any]) -> Call[JobView]:
    """Judge pairs of stored runs in the background (admins); the job."""
    return Call("POST", "/v1/pairwise/comparisons", JobView.model_validate, json=dict(body))


def pairwise_job(job_id: str) -> Call[JobView]:
    """A pairwise comparison job (``GET /v1/pairwise/jobs/{job}``)."""
    return Call("GET", f"/v1/pairwise/jobs/{job_id}", JobView.model_validate)
