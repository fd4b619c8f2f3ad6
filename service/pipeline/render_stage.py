"""Stage 2, render: render the extracted SVG in the sandbox; keep frames, masks and the log."""

from __future__ import annotations

from pydantic import JsonValue
from sqlalchemy.orm import Session

from service.pipeline.render_client import RenderOutput
from service.pipeline.runner import StageContext, Writer, Written
from service.storage import Artifact, RenderRecord
from service.storage.blobs import NewArtifact, record_artifacts
from service.storage.cached_blobs import put_many
from service.storage.details import CheckDetail, RenderDetail


def render_version(ctx: StageContext) -> str:
    """The render stage changes with the task's render profile and the renderer."""
    return f"{ctx.task.render.id}|{ctx.machinery.renderer.version}"


def render_compute(ctx: StageContext) -> Writer:
    """Render the extracted SVG unless the check stage said there is nothing to render."""
    with ctx.db.read() as s:  # the check's record and the SVG it extracted: one session
        status, check = ctx.detail("check", CheckDetail, s)
        rendered = status == "done" and check.render and check.extracted_artifact_id is not None
        extracted = s.get(Artifact, check.extracted_artifact_id) if rendered else None
        assert extracted is not None or not rendered
    if extracted is None:
        reason = check.render_reason or "checks did not finish"

        def skip(_s: Session) -> Written:
            return "skipped", RenderDetail(reason=reason)

        return skip
    svg_text = ctx.blobs.get(extracted.sha256).decode("utf-8")
    out = ctx.machinery.renderer.render(svg_text, ctx.task)
    log_json = out.log.to_json()
    put_many(ctx.blobs, [log_json, *out.files.values()])  # bytes first, outside the transaction

    def write(s: Session) -> Written:
        return record_render(s, ctx, out, extracted.id, log_json)

    return write


def _new(
    ctx: StageContext,
    kind: str,
    data: bytes,
    name: str,
    parent: int,
    meta: dict[str, JsonValue] | None = None,
) -> NewArtifact:
    version = ctx.machinery.renderer.version
    return NewArtifact(kind, data, "render", version, name, None, parent, meta or {})


def record_render(
    s: Session,
    ctx: StageContext,
    out: RenderOutput,
    extracted_id: int,
    log_json: bytes | None = None,
) -> Written:
    """Store the render log, its record, and (when it finished) every frame and mask.

    The log and the frames are recorded in one batch, then the masks (whose parents are the
    frames) in another: the statements do not grow with the number of frames and masks.
    ``log_json``: the log's bytes (``out.log.to_json()``) when the caller already wrote them.
    """
    data = out.log.to_json() if log_json is None else log_json
    new_log = _new(ctx, "render_log", data, "render.json", extracted_id)
    frames = out.log.frames if out.status == "ok" else []
    news = [new_log] + [
        _new(ctx, "frame", out.files[f.name], f.name, extracted_id, {"time_s": f.time_s})
        for f in frames
    ]
    log, *frame_rows = record_artifacts(s, ctx.blobs, ctx.run_id, news)
    rec = RenderRecord(
        run_id=ctx.run_id,
        status=out.status,
        cause=out.cause,
        detail=out.detail[:4000] or None,
        render_profile_id=out.log.render_profile_id or ctx.task.render.id,
        browser_version=out.log.browser_version,
        sandbox=out.sandbox,
        attempts=out.attempts,
        elapsed_ms=out.elapsed_ms,
        cpu_ms=out.cpu_ms,
        queue_wait_ms=out.queue_wait_ms,
        log_artifact_id=log.id,
    )
    s.add(rec)
    if out.status == "ok":
        frame_ids = {f.time_s: art.id for f, art in zip(frames, frame_rows, strict=True)}
        masks = [
            _new(
                ctx,
                "mask",
                out.files[m.name],
                m.name,
                frame_ids.get(m.time_s, extracted_id),
                {"time_s": m.time_s, "part": m.part, "kind": m.kind, "pixels": m.pixels},
            )
            for m in out.log.masks
            if m.name in out.files
        ]
        record_artifacts(s, ctx.blobs, ctx.run_id, masks)
    s.flush()
    detail = RenderDetail(render_record_id=rec.id, log_artifact_id=log.id, cause=out.cause)
    # a render over its budget is a finished measurement of the drawing, not a machinery failure
    return ("incomplete" if out.status == "incomplete" else "done"), detail
