"""HTTP: ``/v1/calibrations``, ``/v1/gate`` and ``/v1/evaluations`` (admin only).

Mounted through ``service.api.app.OPTIONAL_ROUTERS`` as ``service.scoring.api:router``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from judges.calibration import CalibrationRun, GateConfig
from service.api.deps import Caller, Ctx
from service.scoring.calibrate import calibrate, store_run
from service.scoring.calibration import calibration_view, gate_view, list_calibrations
from service.scoring.diff import diff_evaluations
from service.scoring.rescore import rescore

router = APIRouter(prefix="/v1", tags=["calibration"])


class CalibrationRequest(BaseModel):
    """Calibrate ``judge`` on ``set`` now (minutes: renders every artifact in the sandbox), or
    store an already computed ``run`` (``CalibrationRun.to_dict()``)."""

    judge: str | None = None
    set: str = "bundled"
    split: str = Field("held_out", pattern="^(held_out|tuning|all)$")
    repeats: int = Field(2, ge=1, le=10)
    seed: int = 0
    n_boot: int = Field(1000, ge=100, le=100_000)
    gate: dict[str, Any] | None = None
    run: dict[str, Any] | None = None


class RescoreRequest(BaseModel):
    """Re-judge stored runs of ``task`` with ``panel`` (optionally under another rubric)."""

    task: str
    panel: str
    runs: list[str] | None = None
    rubric: str | None = None
    note: str | None = None


@router.post("/calibrations", status_code=201)
def create_calibration(body: CalibrationRequest, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """Run (or import) a calibration; store it with its gate decisions; return it."""
    caller.require("admin")
    if body.run is not None:
        run = CalibrationRun.from_dict(body.run)
    else:
        from regua.errors import InputError

        if not body.judge:
            raise InputError("give 'judge' (a profile id) or a computed 'run'")
        gate = GateConfig.from_dict(body.gate) if body.gate else None
        run = calibrate(
            body.judge,
            body.set,
            split=body.split,
            repeats=body.repeats,
            seed=body.seed,
            n_boot=body.n_boot,
            gate=gate,
            db=ctx.db,
            blobs=ctx.blobs,
        )
    store_run(run, db=ctx.db, requested_by=caller.token_id)
    with ctx.db.read() as s:
        return calibration_view(s, run.run_id)


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


@router.post("/evaluations", status_code=201)
def create_evaluations(body: RescoreRequest, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """Re-score stored runs from stored frames and masks; one new evaluation per run."""
    caller.require("admin")
    rubric = ctx.registry.get(body.rubric) if body.rubric else None
    renderer = ctx.components.renderer if ctx.components is not None else None
    result = rescore(
        ctx.db,
        ctx.blobs,
        task_ref=body.task,
        panel_id=body.panel,
        run_ids=body.runs,
        rubric=rubric,
        renderer=renderer,
        settings=ctx.settings,
        requested_by=caller.token_id,
        note=body.note,
    )
    return result.to_dict()


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
