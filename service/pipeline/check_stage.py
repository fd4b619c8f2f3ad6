"""Stage 1, check: extract the SVG from the stored raw reply and run the static checks."""

from __future__ import annotations

import json

from sqlalchemy import select, update
from sqlalchemy.orm import Session

import checks
from service.pipeline.lanes import estimate
from service.pipeline.leak_check import match_leaks, record_leaks, watched_now
from service.pipeline.runner import StageContext, Writer, Written
from service.storage import Artifact, CheckResultRow, Run
from service.storage.blobs import NewArtifact, record_artifact
from service.storage.cached_blobs import put_many
from service.storage.details import CheckDetail

CHECKER_VERSION = f"checks@{checks.CHECKER_VERSION}"
PARSE_CHECK = "parse"
"""The check whose failure means the SVG did not parse (then nothing is rendered)."""


def raw_artifact(ctx: StageContext, session: Session | None = None) -> Artifact:
    """The run's stored raw reply (one query: the run's row names it), in ``session`` if given."""
    if session is None:
        with ctx.db.read() as s:
            return raw_artifact(ctx, s)
    art = session.scalar(
        select(Artifact).join(Run, Run.raw_artifact_id == Artifact.id).where(Run.id == ctx.run_id)
    )
    assert art is not None
    return art


def check_version(ctx: StageContext) -> str:
    """The check stage changes with the checker."""
    return ctx.machinery.checker_version


def _report_bytes(report: checks.CheckReport) -> bytes:
    return json.dumps(report.to_dict(), sort_keys=True, indent=1).encode("utf-8")


def check_compute(ctx: StageContext) -> Writer:
    """Extract and check the stored raw reply.

    The writer stores the extracted SVG, the report (``checks.json``) and one row per check
    result.
    """
    known = ctx.machinery.known_tasks()
    with ctx.db.read() as s:  # the raw reply's row and what the leak check watches
        raw = raw_artifact(ctx, s)
        watched = watched_now(ctx.db, s, known)
    reply = ctx.blobs.get(raw.sha256)
    report = checks.check_reply(reply, ctx.task)
    leaks = match_leaks(reply, watched, ctx.task.ref)
    extraction = report.extraction
    svg_text = extraction.svg_text if extraction is not None else None
    report_bytes = _report_bytes(report)
    # bytes first, outside the writer's transaction (an fsync, an S3 round trip), both at once
    svg_bytes = [] if svg_text is None else [svg_text.encode("utf-8")]
    put_many(ctx.blobs, [report_bytes, *svg_bytes])
    version = ctx.machinery.checker_version

    def write(s: Session) -> Written:
        extracted = _record_extracted(s, ctx, raw, report, svg_text)
        stored = record_artifact(
            s,
            ctx.blobs,
            ctx.run_id,
            NewArtifact(
                kind="check_report",
                data=report_bytes,
                name="checks.json",
                procedure_id="checks",
                procedure_version=version,
                parent_id=(extracted or raw).id,
            ),
        )
        _record_results(s, ctx.run_id, stored.id, report, version)
        record_leaks(s, ctx.run_id, leaks)
        render, reason = render_decision(report, svg_text)
        _record_lane(s, ctx, svg_text, render)
        return "done", CheckDetail(
            checker_version=version,
            checks_status=report.status,
            extraction_status=extraction.status if extraction is not None else "no_svg",
            extracted_artifact_id=extracted.id if extracted else None,
            report_artifact_id=stored.id,
            render=render,
            render_reason=reason,
        )

    return write


def _record_lane(s: Session, ctx: StageContext, svg_text: str | None, render: bool) -> None:
    """Put the run in the lane of its estimated render cost (the scheduler reads it)."""
    cost = estimate(ctx.task, svg_text, will_render=render)
    s.execute(
        update(Run).where(Run.id == ctx.run_id).values(lane=cost.lane, render_cost=cost.units)
    )


def render_decision(report: checks.CheckReport, svg_text: str | None) -> tuple[bool, str]:
    """Whether the extracted SVG is rendered, and why (or why not).

    Nothing is rendered when no SVG parsed, or when a resource-limit check failed: the work
    already fails by that declared rule, and a bomb would only spend the sandbox.
    """
    over = [
        r.id for r in report.results if r.id in checks.RESOURCE_LIMIT_CHECKS and r.status == "fail"
    ]
    if over:
        return False, f"not rendered: resource limits ({', '.join(over)})"
    parsed = report.result(PARSE_CHECK)
    if svg_text is None or (parsed is not None and parsed.status != "pass"):
        return False, "no SVG parsed; nothing to render"
    return True, "extracted SVG parsed"


def _record_extracted(
    s: Session, ctx: StageContext, raw: Artifact, report: checks.CheckReport, svg: str | None
) -> Artifact | None:
    ex = report.extraction
    if svg is None or ex is None:
        return None
    return record_artifact(
        s,
        ctx.blobs,
        ctx.run_id,
        NewArtifact(
            kind="extracted",
            data=svg.encode("utf-8"),
            name="extracted.svg",
            procedure_id=ex.procedure_id,
            procedure_version=ex.procedure_version,
            parent_id=raw.id,
            meta={
                "method": ex.method,
                "candidates": ex.candidates,
                "chosen_index": ex.chosen_index,
                "policy": ex.policy,
            },
        ),
    )


def _record_results(
    s: Session, run_id: str, report_id: int, report: checks.CheckReport, version: str
) -> None:
    """One row for the extraction, then one per check with its evidence."""
    ex = report.extraction
    s.add(
        CheckResultRow(
            run_id=run_id,
            report_artifact_id=report_id,
            check_id="extract",
            version=ex.procedure_version if ex is not None else version,
            status="pass" if ex is not None and ex.status == "found" else "fail",
            evidence=[ex.to_dict()] if ex is not None else [],
        )
    )
    for result in report.results:
        s.add(
            CheckResultRow(
                run_id=run_id,
                report_artifact_id=report_id,
                check_id=result.id,
                version=result.version,
                status=result.status,
                evidence=[e.to_dict() for e in result.evidence],
            )
        )
