"""The stages of the initial evaluation of a run: check → render → evaluate → finalize.

:data:`STAGES` is the data-driven list the executor walks; re-scoring can reuse
:func:`evaluate_stage` with another evaluator, and each stage is small enough to test alone.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.artifacts import NewArtifact, record_artifact
from service.db import (
    Artifact,
    CheckResultRow,
    Evaluation,
    RenderRecord,
    Run,
    StageRecord,
    utcnow,
)
from service.eval_input import load_eval_inputs
from service.judgement import resolve_refs_by_name, store_judgement, store_measurements
from service.pipeline import Stage, StageContext, Writer, dumps
from service.static_jury import apply_machinery_rule


def _raw_artifact(ctx: StageContext) -> Artifact:
    with ctx.db.read() as s:
        run = s.get(Run, ctx.run_id)
        assert run is not None and run.raw_artifact_id is not None
        art = s.get(Artifact, run.raw_artifact_id)
        assert art is not None
        return art


# --------------------------------------------------------------------------- check


def check_compute(ctx: StageContext) -> Writer:
    """Extract the SVG and run the static checks on the stored raw reply."""
    raw = _raw_artifact(ctx)
    out = ctx.components.checker.check(ctx.blobs.get(raw.sha256), ctx.task)
    if out.svg_text is not None:  # bytes first, outside the writer's transaction (fsync)
        ctx.blobs.put(out.svg_text.encode("utf-8"))
    version = ctx.components.checker.version

    def write(s: Session) -> tuple[str, dict[str, Any]]:
        extracted: Artifact | None = None
        if out.svg_text is not None:
            ex = out.extraction
            extracted = record_artifact(
                s,
                ctx.blobs,
                ctx.run_id,
                NewArtifact(
                    kind="extracted",
                    data=out.svg_text.encode("utf-8"),
                    name="extracted.svg",
                    procedure_id=str(ex.get("procedure_id", "extract")),
                    procedure_version=str(ex.get("procedure_version", version)),
                    parent_id=raw.id,
                    meta={k: ex.get(k) for k in ("method", "candidates", "chosen_index", "policy")},
                ),
            )
        report = record_artifact(
            s,
            ctx.blobs,
            ctx.run_id,
            NewArtifact(
                kind="check_report",
                data=dumps(out.report),
                name="checks.json",
                procedure_id="checks",
                procedure_version=version,
                parent_id=(extracted or raw).id,
            ),
        )
        s.add(
            CheckResultRow(
                run_id=ctx.run_id,
                report_artifact_id=report.id,
                check_id="extract",
                version=str(out.extraction.get("procedure_version", version)),
                status="pass" if out.svg_text is not None else "fail",
                evidence=[out.extraction],
            )
        )
        for result in out.report.get("results", []):
            s.add(
                CheckResultRow(
                    run_id=ctx.run_id,
                    report_artifact_id=report.id,
                    check_id=str(result.get("id")),
                    version=str(result.get("version", "")),
                    status=str(result.get("status")),
                    evidence=list(result.get("evidence", [])),
                )
            )
        render = out.svg_text is not None and out.parsed
        reason = "extracted SVG parsed" if render else "no SVG parsed; nothing to render"
        return "done", {
            "checks_status": out.status,
            "extraction_status": out.extraction.get("status"),
            "extracted_artifact_id": extracted.id if extracted else None,
            "report_artifact_id": report.id,
            "render": render,
            "render_reason": reason,
        }

    return write


# --------------------------------------------------------------------------- render


def render_version(ctx: StageContext) -> str:
    """The render stage changes with the task's render profile and the renderer."""
    return f"{ctx.task.render.id}|{ctx.components.renderer.version}"


def render_compute(ctx: StageContext) -> Writer:
    """Render the extracted SVG in the sandbox and keep frames, masks and the render log."""
    check = ctx.detail("check")
    if not check or check.get("status") != "done" or not check.get("render"):
        reason = (check or {}).get("render_reason", "checks did not finish")

        def skip(_s: Session) -> tuple[str, dict[str, Any]]:
            return "skipped", {"reason": reason}

        return skip
    with ctx.db.read() as s:
        extracted = s.get(Artifact, check["extracted_artifact_id"])
        assert extracted is not None
    svg_text = ctx.blobs.get(extracted.sha256).decode("utf-8")
    res = ctx.components.renderer.render(svg_text, ctx.task)
    for data in res.files.values():  # bytes first, outside the writer's transaction (fsync)
        ctx.blobs.put(data)
    version = ctx.components.renderer.version
    profile = ctx.task.render.id

    def new(kind: str, data: bytes, name: str, parent: int, meta: dict[str, Any]) -> NewArtifact:
        return NewArtifact(kind, data, "render", version, name, None, parent, meta)

    def write(s: Session) -> tuple[str, dict[str, Any]]:
        result = dict(res.result or {})
        status, cause, detail = res.status, res.cause, res.detail
        if status == "ok":
            missing = [f["name"] for f in result.get("frames", []) if f["name"] not in res.files]
            if missing or not result.get("frames"):
                status, cause = "incomplete", "missing_files"
                detail = f"render returned no bytes for {missing or 'any frame'}"
        log_doc = {**result, "sandbox": res.sandbox, "status": status, "cause": cause}
        log_doc["detail"] = detail
        log = record_artifact(
            s,
            ctx.blobs,
            ctx.run_id,
            new("render_log", dumps(log_doc), "render.json", extracted.id, {}),
        )
        rec = RenderRecord(
            run_id=ctx.run_id,
            status=status,
            cause=cause,
            detail=detail[:4000] or None,
            render_profile_id=str(result.get("render_profile_id") or profile),
            browser_version=result.get("browser_version"),
            sandbox=res.sandbox,
            attempts=res.attempts,
            elapsed_ms=res.elapsed_ms,
            log_artifact_id=log.id,
        )
        s.add(rec)
        s.flush()
        if status == "ok":
            frame_ids: dict[float, int] = {}
            for f in result["frames"]:
                t = float(f["time_s"])
                art = record_artifact(
                    s,
                    ctx.blobs,
                    ctx.run_id,
                    new("frame", res.files[f["name"]], f["name"], extracted.id, {"time_s": t}),
                )
                frame_ids[t] = art.id
            for m in result.get("masks", []):
                if m["name"] not in res.files:
                    continue
                meta = {k: m.get(k) for k in ("time_s", "part", "kind", "pixels")}
                parent = frame_ids.get(float(m["time_s"]), extracted.id)
                record_artifact(
                    s,
                    ctx.blobs,
                    ctx.run_id,
                    new("mask", res.files[m["name"]], m["name"], parent, meta),
                )
        return ("done" if status == "ok" else "incomplete"), {
            "render_record_id": rec.id,
            "log_artifact_id": log.id,
            "cause": cause,
        }

    return write


# --------------------------------------------------------------------------- evaluate


def evaluate_compute(ctx: StageContext) -> Writer:
    """Run the judge panel and jury; store the evaluation and set the run's current outcome."""
    stored = load_eval_inputs(ctx.db, ctx.blobs, {ctx.run_id: ctx.task}, [ctx.run_id])[0]
    inp, stages = stored.inp, stored.stages
    out = ctx.components.evaluator.evaluate(inp)
    checks_status = inp.checks.get("status") if inp.checks is not None else None
    check_error = stages["check"].get("error")
    outcome = apply_machinery_rule(
        out.outcome, checks_status, inp.render_status, inp.render_cause, check_error
    )
    record_id = stages["render"].get("render_record_id")
    verdicts = resolve_refs_by_name(out.verdicts, stored.artifact_names)

    def write(s: Session) -> tuple[str, dict[str, Any]]:
        run = s.get(Run, ctx.run_id)
        assert run is not None
        ev = Evaluation(
            run_id=ctx.run_id,
            kind="initial",
            supersedes_id=run.current_evaluation_id,
            task_ref=ctx.task.ref,
            rubric_hash=ctx.task.content_hash(),
            checker_version=ctx.components.checker.version,
            render_profile_id=ctx.task.render.id if record_id else None,
            render_record_id=record_id,
            judge_panel=out.panel,
            outcome=outcome["status"],
            cause=outcome.get("cause"),
            reasons=list(outcome.get("reasons", [])),
        )
        s.add(ev)
        s.flush()
        store_judgement(s, ctx.blobs, ctx.run_id, ev, verdicts, out.failures, out.criteria)
        store_measurements(s, ctx.blobs, ctx.run_id, out.measurements)
        run.outcome, run.outcome_cause = ev.outcome, ev.cause
        run.current_evaluation_id = ev.id
        return "done", {"evaluation_id": ev.id, "outcome": ev.outcome}

    return write


# --------------------------------------------------------------------------- finalize


def finalize_compute(ctx: StageContext) -> Writer:
    """Mark the run done; without an evaluation, record an ``incomplete`` one with the cause."""

    def write(s: Session) -> tuple[str, dict[str, Any]]:
        run = s.get(Run, ctx.run_id)
        assert run is not None
        if run.current_evaluation_id is None:
            broken = s.scalars(
                select(StageRecord)
                .where(StageRecord.run_id == ctx.run_id, StageRecord.status == "incomplete")
                .order_by(StageRecord.id)
            ).first()
            cause = (broken.detail or {}).get("cause") if broken else "no_evaluation"
            ev = Evaluation(
                run_id=ctx.run_id,
                kind="initial",
                task_ref=ctx.task.ref,
                rubric_hash=ctx.task.content_hash(),
                checker_version=ctx.components.checker.version,
                judge_panel={"id": ctx.components.evaluator.version_for(ctx.task)},
                outcome="incomplete",
                cause=str(cause),
                reasons=[],
            )
            s.add(ev)
            s.flush()
            run.outcome, run.outcome_cause, run.current_evaluation_id = (
                "incomplete",
                ev.cause,
                ev.id,
            )
        run.status = "done"
        run.finished_at = utcnow()
        run.lease_owner = None
        run.lease_expires_at = None
        return "done", {"outcome": run.outcome}

    return write


STAGES: list[Stage] = [
    Stage("check", lambda ctx: ctx.components.checker.version, check_compute),
    Stage("render", render_version, render_compute),
    Stage("evaluate", lambda ctx: ctx.components.evaluator.version_for(ctx.task), evaluate_compute),
    Stage("finalize", lambda ctx: "1", finalize_compute),
]
