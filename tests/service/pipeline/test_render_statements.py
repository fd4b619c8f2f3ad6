"""The render stage's write: its SQL statements do not grow with the frames and masks it stores.

A render's frames and masks are recorded in two batches (the log with the frames, then the
masks whose parents they are), so a 37-frame animation costs the database as many round trips
as a static drawing. Counted with a SQLAlchemy ``before_cursor_execute`` listener on the real
context on PostgreSQL, where each statement is a round trip (SQLite, in-process, inserts row by
row: it has no ordered ``RETURNING`` for a batch), on synthetic render outputs (no browser).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event, select

from regua.settings import Settings
from service.context import ServiceContext
from service.pipeline.render_client import RenderOutput
from service.pipeline.render_log import FrameEntry, MaskEntry, RenderLog
from service.pipeline.render_stage import record_render
from service.pipeline.runner import StageContext
from service.pipeline.submit import Submission
from service.storage import Artifact, RenderRecord, Run
from tests.helpers.pg import reset_pg_schema
from tests.helpers.runs import TASK

pytestmark = pytest.mark.postgres

PARTS = ("body", "wheel")


@pytest.fixture
def service(tmp_path: Path, pg_url: str) -> Iterator[ServiceContext]:
    """A context on an emptied PostgreSQL schema; nothing is rendered."""
    reset_pg_schema(pg_url)
    context = ServiceContext.open(Settings(data_dir=tmp_path / "data", database_url=pg_url))
    yield context
    context.close()


def _output(frames: int, tag: str) -> RenderOutput:
    """A finished render of ``frames`` frames, each with a visible and an alone mask per part."""
    files: dict[str, bytes] = {}
    log = RenderLog(status="ok", render_profile_id="static-512")
    for i in range(frames):
        name = f"frame-{i}.png"
        files[name] = f"{tag} frame {i}".encode()
        log.frames.append(FrameEntry(time_s=float(i), name=name, sha256="-"))
        for part in PARTS:
            for kind in ("visible", "alone"):
                mask = f"mask-{i}-{part}-{kind}.png"
                files[mask] = f"{tag} {mask}".encode()
                log.masks.append(
                    MaskEntry(time_s=float(i), part=part, kind=kind, name=mask, sha256="-")
                )
    return RenderOutput(status="ok", log=log, files=files)


def _record(service: ServiceContext, out: RenderOutput) -> tuple[int, StageContext]:
    """Record ``out`` for a fresh run; the statements its write sent."""
    (run_id,) = service.submit([Submission(TASK, "m", f"<svg/><!-- {id(out)} -->")], None)
    with service.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.raw_artifact_id is not None
        parent = run.raw_artifact_id
    task = service.registry.get(TASK)
    ctx = StageContext(service.db, service.blobs, service.machinery, run_id, task)
    statements: list[str] = []

    def count(*args: object) -> None:
        statements.append(str(args[2]))

    event.listen(service.db.engine, "before_cursor_execute", count)
    try:
        with service.db.write() as s:
            record_render(s, ctx, out, parent)
    finally:
        event.remove(service.db.engine, "before_cursor_execute", count)
    return len(statements), ctx


def test_statements_do_not_grow_with_frames_and_masks(service: ServiceContext) -> None:
    small, _ = _record(service, _output(1, "small"))
    large, ctx = _record(service, _output(12, "large"))
    assert large == small
    with service.db.read() as s:
        arts = s.scalars(select(Artifact).where(Artifact.run_id == ctx.run_id)).all()
        record = s.scalar(select(RenderRecord).where(RenderRecord.run_id == ctx.run_id))
    frames = {a.meta["time_s"]: a for a in arts if a.kind == "frame" and a.meta}
    masks = [a for a in arts if a.kind == "mask"]
    assert len(frames) == 12 and len(masks) == 12 * 2 * len(PARTS)
    assert all(a.meta and a.parent_id == frames[a.meta["time_s"]].id for a in masks)
    (log,) = [a for a in arts if a.kind == "render_log"]
    assert record is not None and record.log_artifact_id == log.id


def test_recording_again_finds_the_same_rows(service: ServiceContext) -> None:
    out = _output(3, "again")
    _, ctx = _record(service, out)
    with service.db.read() as s:
        before = {a.id for a in s.scalars(select(Artifact).where(Artifact.run_id == ctx.run_id))}
        extracted = min(before)
    with service.db.write() as s:
        record_render(s, ctx, out, extracted)  # a stage re-run after a crash before its record
    with service.db.read() as s:
        after = {a.id for a in s.scalars(select(Artifact).where(Artifact.run_id == ctx.run_id))}
    assert after == before and len(before) == 1 + 1 + 3 + 3 * 2 * len(PARTS)
