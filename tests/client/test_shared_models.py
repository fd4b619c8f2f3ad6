"""The client's answers are the API's own response models: every route it calls declares a model
of :mod:`regua.views` (the same class the client parses into), so the two cannot drift."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute

from regua.client import calls
from regua.client.transport import Call
from regua.views import calibrations, experiments, jobs, pairwise, reports, submissions
from service.api.routes import calibrations as calibration_routes
from service.api.routes import experiments as experiment_routes
from service.api.routes import generations as generation_routes
from service.api.routes import pairwise as pairwise_routes
from service.api.routes import reports as report_routes
from service.api.routes import runs as run_routes

EXPECTED = {
    ("POST", "/v1/runs"): submissions.RunAccepted,
    ("POST", "/v1/runs/batch"): submissions.BatchAccepted,
    ("GET", "/v1/runs"): submissions.RunList,
    ("GET", "/v1/runs/{run_id}"): submissions.RunView,
    ("GET", "/v1/reports"): reports.ReportDocument,
    ("POST", "/v1/generations"): jobs.GenerationJobView,
    ("GET", "/v1/generations/{job_id}"): jobs.GenerationJobView,
    ("POST", "/v1/experiments"): experiments.ExperimentAccepted,
    ("GET", "/v1/experiments/{experiment_id}"): experiments.ExperimentProgress,
    ("GET", "/v1/experiments/{experiment_id}/report"): experiments.ExperimentReport,
    ("GET", "/v1/experiments/{name}/history"): experiments.ExperimentHistory,
    ("GET", "/v1/calibrations"): calibrations.CalibrationList,
    ("GET", "/v1/calibrations/{run_id}"): calibrations.CalibrationView,
    ("GET", "/v1/calibrations/jobs/{job_id}"): jobs.JobView,
    ("GET", "/v1/pairwise/ranking"): pairwise.RankingView,
    ("POST", "/v1/pairwise/comparisons"): jobs.JobView,
    ("GET", "/v1/pairwise/jobs/{job_id}"): jobs.JobView,
}


def _declared() -> dict[tuple[str, str], object]:
    modules = (
        run_routes,
        report_routes,
        generation_routes,
        experiment_routes,
        calibration_routes,
        pairwise_routes,
    )
    found: dict[tuple[str, str], object] = {}
    for module in modules:
        for route in module.router.routes:
            assert isinstance(route, APIRoute)
            for method in route.methods or ():
                found[(method, route.path)] = route.response_model
    return found


def test_every_route_the_client_reads_declares_the_clients_model() -> None:
    declared = _declared()
    for key, model in EXPECTED.items():
        assert declared[key] is model, (key, declared[key])


def test_the_client_parses_into_those_models() -> None:
    run = calls.RunInput(task="t@1", output="<svg/>", model="m")
    parsed: dict[tuple[str, str], Call[Any]] = {
        ("POST", "/v1/runs"): calls.submit(run),
        ("GET", "/v1/runs/{run_id}"): calls.run("x"),
        ("GET", "/v1/reports"): calls.report(["t@1"]),
        ("GET", "/v1/pairwise/ranking"): calls.pairwise_ranking(),
        ("GET", "/v1/calibrations/{run_id}"): calls.calibration("x"),
    }
    for key, call in parsed.items():
        assert getattr(call.parse, "__self__", None) is EXPECTED[key], key
