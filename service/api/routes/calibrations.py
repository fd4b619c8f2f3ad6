"""``/v1/calibrations``: calibrate a judge on a labelled set, or import a computed run (admin).

The set is named (``set``: bundled, or a path on the server) or sent in the request
(``upload``: a ``labels.csv`` table and its files). Calibrating renders every drawing of the set
in the sandbox (through the service's render pool, reusing renders kept in the artifact store),
so it answers ``202 Accepted`` with a job to poll (``GET /v1/calibrations/jobs/{id}``, kept in
memory: lost on restart; the stored calibration run is durable). ``"wait": true`` runs it
inside the request and answers 201 with the run. The request is checked before it is
accepted, so a bad one gets its 4xx at once.
"""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

import judges
from judges.calibration import CalibrationRun, GateConfig
from judges.calibration.labeltable import DEFAULT_TASK, set_from_label_table
from regua.errors import CalibrationError, InputError, NotFoundError
from regua.views.calibrations import CalibrationList, CalibrationView, JobList
from regua.views.jobs import JobView
from service.access.pools import check_task_access
from service.api.deps import Admin, Ctx
from service.api.started import started_or_done
from service.api.text import SEED_MAX, StorableJson, Text
from service.calibration.calibrate import CalibrationRequest, calibrate, store_run
from service.calibration.sets import BUNDLED_NAMES, LoadedSet, check_drawings, files_artifact
from service.calibration.store import calibration_view, list_calibrations
from service.context import ServiceContext
from service.pipeline.jobs import JobFields
from tasks import TaskRegistry

router = APIRouter(prefix="/v1/calibrations", tags=["calibration"])

JOB_URL = "/v1/calibrations/jobs/{}"
WAIT_DOC = "run inside the request and answer 201 with the result (instead of 202 and a job)"


class UploadedSet(BaseModel):
    """A label set sent in the request: ``labels.csv`` text and the files it names.

    The same format as a folder given to ``regua calibrate --set DIR``: ``labels_csv`` has the
    columns ``file, criterion, status, annotator`` (optional ``time, evidence``); ``files`` maps
    each file name to its text (an SVG, or a raw model reply to extract the SVG from).
    """

    name: str = Field("uploaded", min_length=1, max_length=200, pattern=r"^[\w.@-]+$")
    labels_csv: str = Field(min_length=1)
    files: dict[str, str] = Field(min_length=1, max_length=5000)


class CalibrationBody(BaseModel):
    """A calibration to compute, or a computed run to store.

    Calibrate ``judge`` on ``set`` (minutes: renders every artifact in the sandbox; in the
    background unless ``wait``), or store an already computed ``run``
    (``CalibrationRun.to_dict()``, always at once).
    """

    judge: Text | None = Field(None, max_length=200)
    set: str = Field("bundled", max_length=200)
    """A bundled set's name (a folder or file on the server is for ``regua calibrate``)."""
    split: str = Field("held_out", pattern="^(held_out|tuning|all)$")
    repeats: int = Field(2, ge=1, le=10)
    seed: int = Field(0, ge=0, le=SEED_MAX)
    n_boot: int = Field(1000, ge=100, le=100_000)
    gate: StorableJson | None = None
    task: str | None = None
    """The task of a label set (default ``pelican-bicycle-structured@1``): any registered version,
    bundled or added; the decisions are stored for its family."""
    upload: UploadedSet | None = None
    """A label set sent in the request (instead of ``set``)."""
    replace: bool = False
    """Store the decisions even where they demote a trusted judge on a smaller set (otherwise
    such a calibration is refused with 409 ``would_demote``, naming both sets)."""
    run: StorableJson | None = None
    wait: bool = Field(False, description=WAIT_DOC)


def _request(body: CalibrationBody, registry: TaskRegistry) -> CalibrationRequest:
    """The judge profile, the task and the set exist (404 otherwise); the gate reads."""
    if not body.judge:
        raise InputError("give 'judge' (a profile id) or a computed 'run'")
    judges.get_profile(body.judge)
    if body.task is not None:
        registry.get(body.task)  # 404 unknown_task, naming the registered ones
    uploaded = _uploaded(body.upload, body.task, registry) if body.upload is not None else None
    if uploaded is None and body.set not in BUNDLED_NAMES:
        # never a path on the server: its existence would answer a file-system probe
        raise NotFoundError(
            f"no calibration set {body.set[:100]!r}: over the API a set is one of "
            f"{', '.join(BUNDLED_NAMES)}, or the labels sent in 'upload'"
        )
    gate = GateConfig.from_dict(body.gate) if body.gate else None
    name = body.upload.name if body.upload is not None else body.set
    return CalibrationRequest(
        body.judge,
        name,
        body.split,
        body.repeats,
        body.seed,
        body.n_boot,
        gate,
        body.task,
        uploaded,
        body.replace,
    )


def _uploaded(upload: UploadedSet, task_ref: str | None, registry: TaskRegistry) -> LoadedSet:
    """The uploaded label set, checked now (all or nothing).

    A bad table, a missing file or a file that is not a drawing is a 422 at once; nothing is
    stored.
    """
    task = registry.get(task_ref or DEFAULT_TASK)
    files = {k: v.encode("utf-8") for k, v in upload.files.items()}
    try:
        folder = set_from_label_table(upload.labels_csv, files, task, set_id=upload.name)
    except CalibrationError as exc:
        raise InputError(str(exc)) from exc
    check_drawings(folder.files)
    return folder.calibration_set, files_artifact(folder.files)


def _calibrate(ctx: ServiceContext, request: CalibrationRequest, requested_by: int) -> str:
    """Run one calibration on the service's render pool and store it; the gate is re-read."""
    run = calibrate(
        request, ctx.settings, ctx.renderer, db=ctx.db, blobs=ctx.blobs, registry=ctx.registry
    )
    run_id = store_run(run, ctx.db, requested_by=requested_by, replace=request.replace)
    ctx.gate.refresh()
    return run_id


@router.post(
    "",
    **started_or_done(
        CalibrationView | JobView, "the stored run (an imported `run`, or with `wait`)"
    ),
)
def create_calibration(
    body: CalibrationBody, ctx: Ctx, caller: Admin, response: Response
) -> CalibrationView | JobView:
    """Import a computed ``run`` (201), or calibrate ``judge`` (202).

    Calibrating answers with a job to poll at ``status_url`` (``wait``: 201 with the stored
    run). The run is stored with its gate decisions, which the jury reads from then on.
    """
    check_task_access(ctx.db, ctx.registry, caller, [body.task] if body.task else [])
    if body.run is not None:
        imported = CalibrationRun.from_dict(body.run)
        run_id = store_run(imported, ctx.db, requested_by=caller.token_id, replace=body.replace)
        ctx.gate.refresh()
        response.status_code = 201
        with ctx.db.read() as s:
            return calibration_view(s, run_id)
    request = _request(body, ctx.registry)
    if body.wait:
        run_id = _calibrate(ctx, request, caller.token_id)
        response.status_code = 201
        with ctx.db.read() as s:
            return calibration_view(s, run_id)

    def work() -> JobFields:
        run_id = _calibrate(ctx, request, caller.token_id)
        return {"calibration_id": run_id, "calibration_url": f"/v1/calibrations/{run_id}"}

    info: JobFields = {"judge": request.judge, "set": request.set_name, "split": request.split}
    job = ctx.job_runner().submit(
        "calibration", work, job_id=f"cj_{uuid.uuid4().hex[:16]}", info=info
    )
    url = JOB_URL.format(job.id)
    response.headers["Location"] = url
    return job.view(url)


@router.get("/jobs", response_model=JobList, response_model_exclude_none=True)
def get_calibration_jobs(ctx: Ctx, _admin: Admin) -> JobList:
    """This process's calibration jobs, newest first (kept in memory: lost on restart)."""
    jobs = ctx.jobs.jobs("calibration") if ctx.jobs is not None else []
    return JobList(jobs=[j.view(JOB_URL.format(j.id)) for j in jobs])


@router.get("/jobs/{job_id}", response_model=JobView, response_model_exclude_none=True)
def get_calibration_job(job_id: str, ctx: Ctx, _admin: Admin) -> JobView:
    """A calibration job and how far it got.

    ``state`` running|done|failed, ``elapsed_s``, ``calibration_id`` (the stored run,
    ``GET /v1/calibrations/{id}``) when done, ``error`` when failed.
    """
    job = ctx.jobs.get(job_id) if ctx.jobs is not None else None
    if job is None or job.kind != "calibration":
        raise NotFoundError(f"no calibration job {job_id!r} (jobs are kept in memory)")
    return job.view(JOB_URL.format(job.id))


@router.get("", response_model=CalibrationList)
def get_calibrations(ctx: Ctx, _admin: Admin) -> CalibrationList:
    """The newest stored calibration runs."""
    with ctx.db.read() as s:
        return CalibrationList(calibrations=list_calibrations(s))


@router.get("/{run_id}", response_model=CalibrationView)
def get_calibration(run_id: str, ctx: Ctx, _admin: Admin) -> CalibrationView:
    """A stored calibration run: every metric with its interval, and its gate decisions."""
    with ctx.db.read() as s:
        return calibration_view(s, run_id)
