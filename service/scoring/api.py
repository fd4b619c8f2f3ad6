"""HTTP: ``/v1/calibrations``, ``/v1/gate`` and ``/v1/evaluations`` (admin only).

Long work answers ``202 Accepted`` with a resource to poll: a re-scoring batch
(``GET /v1/evaluations/batches/{id}``, stored in ``rescore_batches``) or a calibration job
(``GET /v1/calibrations/jobs/{id}``, in memory: lost on restart; the stored calibration run is
durable). The work runs on the context's job runner (:mod:`service.scoring.jobs`), one job at a
time. The request is checked before it is accepted, so a bad one gets its 4xx at once; with
``"wait": true`` the work runs inside the request and the result comes back with 201.

Mounted through ``service.api.app.OPTIONAL_ROUTERS`` as ``service.scoring.api:router``.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

import judges
from judges.calibration import CalibrationRun, GateConfig
from regua.errors import InputError, NotFoundError, ReguaError
from service.api.deps import Caller, Ctx
from service.scoring.batches import batch_view, fail_batch, list_batches, new_batch_id, open_batch
from service.scoring.calibrate import calibrate, store_run
from service.scoring.calibration import calibration_view, gate_view, list_calibrations
from service.scoring.diff import diff_evaluations
from service.scoring.jobs import CANCELLED, Job
from service.scoring.rescore import plan_rescore, rescore

router = APIRouter(prefix="/v1", tags=["calibration"])

BATCH_URL = "/v1/evaluations/batches/{}"
CALIBRATION_JOB_URL = "/v1/calibrations/jobs/{}"
WAIT_DOC = "run inside the request and answer 201 with the result (instead of 202 and a job)"


class CalibrationRequest(BaseModel):
    """Calibrate ``judge`` on ``set`` (minutes: renders every artifact in the sandbox; in the
    background unless ``wait``), or store an already computed ``run``
    (``CalibrationRun.to_dict()``, always at once)."""

    judge: str | None = None
    set: str = "bundled"
    split: str = Field("held_out", pattern="^(held_out|tuning|all)$")
    repeats: int = Field(2, ge=1, le=10)
    seed: int = 0
    n_boot: int = Field(1000, ge=100, le=100_000)
    gate: dict[str, Any] | None = None
    run: dict[str, Any] | None = None
    wait: bool = Field(False, description=WAIT_DOC)


class RescoreRequest(BaseModel):
    """Re-judge stored runs of ``task`` with ``panel`` (optionally under another rubric)."""

    task: str
    panel: str
    runs: list[str] | None = None
    rubric: str | None = None
    note: str | None = None
    wait: bool = Field(False, description=WAIT_DOC)


def _accepted(response: Response, url: str) -> None:
    response.status_code = 202
    response.headers["Location"] = url


@router.post(
    "/calibrations",
    status_code=202,
    responses={201: {"description": "the stored run (an imported `run`, or with `wait`)"}},
)
def create_calibration(
    body: CalibrationRequest, ctx: Ctx, caller: Caller, response: Response
) -> dict[str, Any]:
    """Import a computed ``run`` (201), or calibrate ``judge``: 202 with a job to poll at
    ``status_url`` (``wait``: 201 with the stored run). The run is stored with its gate
    decisions."""
    caller.require("admin")
    if body.run is not None:
        run = CalibrationRun.from_dict(body.run)
        store_run(run, db=ctx.db, requested_by=caller.token_id)
        response.status_code = 201
        with ctx.db.read() as s:
            return calibration_view(s, run.run_id)
    judge, gate = _check_calibration(body)

    def work() -> dict[str, Any]:
        run = calibrate(judge, body.set, split=body.split, repeats=body.repeats, seed=body.seed,
                        n_boot=body.n_boot, gate=gate, db=ctx.db, blobs=ctx.blobs)  # fmt: skip
        run_id = store_run(run, db=ctx.db, requested_by=caller.token_id)
        return {"calibration_id": run_id, "calibration_url": f"/v1/calibrations/{run_id}"}

    if body.wait:
        run_id = work()["calibration_id"]
        response.status_code = 201
        with ctx.db.read() as s:
            return calibration_view(s, run_id)
    info = {"judge": judge, "set": body.set, "split": body.split}
    job_id = f"cj_{uuid.uuid4().hex[:16]}"
    job = ctx.job_runner().submit("calibration", work, job_id=job_id, info=info)
    url = CALIBRATION_JOB_URL.format(job.id)
    _accepted(response, url)
    return {"job_id": job.id, "state": job.state, "status_url": url, **info}


def _check_calibration(body: CalibrationRequest) -> tuple[str, GateConfig | None]:
    """The judge profile and the set exist (404 otherwise); the gate reads."""
    from service.cli.calibrate_cmd import BUNDLED_NAMES

    if not body.judge:
        raise InputError("give 'judge' (a profile id) or a computed 'run'")
    judges.get_profile(body.judge)
    if body.set not in BUNDLED_NAMES and not Path(body.set).exists():
        raise NotFoundError(f"no calibration set {body.set!r} (bundled, a .jsonl set or a folder)")
    return body.judge, GateConfig.from_dict(body.gate) if body.gate else None


@router.get("/calibrations/jobs")
def get_calibration_jobs(ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """This process's calibration jobs, newest first (kept in memory: lost on restart)."""
    caller.require("admin")
    jobs = ctx.jobs.jobs("calibration") if ctx.jobs is not None else []
    return {"jobs": [_job_view(j.to_dict()) for j in jobs]}


@router.get("/calibrations/jobs/{job_id}")
def get_calibration_job(job_id: str, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """A calibration job: ``state`` running|done|failed, ``elapsed_s``, ``calibration_id``
    (the stored run, ``GET /v1/calibrations/{id}``) when done, ``error`` when failed."""
    caller.require("admin")
    job = ctx.jobs.get(job_id) if ctx.jobs is not None else None
    if job is None or job.kind != "calibration":
        raise NotFoundError(f"no calibration job {job_id!r} (jobs are kept in memory)")
    return _job_view(job.to_dict())


def _job_view(doc: dict[str, Any]) -> dict[str, Any]:
    doc.pop("kind", None)
    return {**doc, "status_url": CALIBRATION_JOB_URL.format(doc["job_id"])}


@router.get("/calibrations")
def get_calibrations(ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """The newest stored calibration runs."""
    caller.require("admin")
    with ctx.db.read() as s:
        return {"calibrations": list_calibrations(s)}


@router.get("/calibrations/{run_id}")
def get_calibration(run_id: str, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """A stored calibration run: every metric with its interval, and its gate decisions."""
    caller.require("admin")
    with ctx.db.read() as s:
        return calibration_view(s, run_id)


@router.get("/gate")
def get_gate(ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """The latest gate decision per (profile, criterion, family): what the jury reads."""
    caller.require("admin")
    with ctx.db.read() as s:
        return {"decisions": gate_view(s)}


@router.post(
    "/evaluations",
    status_code=202,
    responses={201: {"description": "with `wait`: the finished batch with every evaluation"}},
)
def create_evaluations(
    body: RescoreRequest, ctx: Ctx, caller: Caller, response: Response
) -> dict[str, Any]:
    """Re-score stored runs from stored frames and masks; one new evaluation per run.

    The request is checked first (panel, rubric and runs exist; they fit together). Then 202
    with the batch to poll at ``status_url`` (``wait``: 201 with the finished batch)."""
    caller.require("admin")
    rubric = ctx.registry.get(body.rubric) if body.rubric else None
    renderer = ctx.components.renderer if ctx.components is not None else None
    args: dict[str, Any] = {"task_ref": body.task, "panel_id": body.panel, "run_ids": body.runs,
                            "rubric": rubric}  # fmt: skip
    if body.wait:
        result = rescore(ctx.db, ctx.blobs, renderer=renderer, settings=ctx.settings,
                         requested_by=caller.token_id, note=body.note, **args)  # fmt: skip
        response.status_code = 201
        return result.to_dict()
    plan = plan_rescore(ctx.db, **args)  # a refused request opens no batch
    runner = ctx.job_runner()
    batch_id = new_batch_id()
    open_batch(ctx.db, batch_id, task_ref=body.task, panel=plan.panel, runs=len(plan.runs),
               requested_by=caller.token_id, note=body.note)  # fmt: skip

    def work() -> dict[str, Any]:
        result = rescore(ctx.db, ctx.blobs, renderer=renderer, settings=ctx.settings,
                         requested_by=caller.token_id, note=body.note, batch_id=batch_id,
                         **args)  # fmt: skip
        return {"appended": len(result.appended)}

    def cancelled(job: Job) -> None:
        fail_batch(ctx.db, batch_id, ReguaError(CANCELLED), 0, job.elapsed_s)

    try:
        runner.submit("rescore", work, job_id=batch_id, on_cancel=cancelled)
    except Exception as exc:  # e.g. the service is stopping: the batch never ran
        fail_batch(ctx.db, batch_id, exc, 0, 0.0)
        raise
    url = BATCH_URL.format(batch_id)
    _accepted(response, url)
    return {"batch_id": batch_id, "state": "running", "runs": len(plan.runs), "done": 0,
            "status_url": url}  # fmt: skip


@router.get("/evaluations/batches")
def get_batches(ctx: Ctx, caller: Caller, limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
    """The newest re-scoring batches first (state and progress; no per-run lists)."""
    caller.require("admin")
    with ctx.db.read() as s:
        found = list_batches(s, limit)
    return {"batches": [{**b, "status_url": BATCH_URL.format(b["batch_id"])} for b in found]}


@router.get("/evaluations/batches/{batch_id}")
def get_batch(batch_id: str, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """One re-scoring batch: ``state`` running|done|failed, ``runs``, ``done``, ``elapsed_s``;
    the summary (appended, rerendered, skipped, judged, memo_hits, remeasured…) when done, the
    ``error`` when failed. Compare it with ``/v1/evaluations/diff?a=previous:<id>&b=<id>``."""
    caller.require("admin")
    job = ctx.jobs.get(batch_id) if ctx.jobs is not None else None
    with ctx.db.read() as s:
        view = batch_view(s, batch_id, job)
    return {**view, "status_url": BATCH_URL.format(batch_id)}


@router.get("/evaluations/diff")
def get_evaluations_diff(
    ctx: Ctx,
    caller: Caller,
    a: str = Query(..., description="batch id, previous:<batch id>, panel id or evaluation id"),
    b: str = Query(..., description="same forms as a"),
    task: str | None = Query(None, description="restrict panel selectors to this task version"),
) -> dict[str, Any]:
    """Per criterion: how many verdicts moved between a and b, and which runs moved."""
    caller.require("admin")
    with ctx.db.read() as s:
        return diff_evaluations(s, a, b, task)
