"""Seed a real service database with finished runs and their evaluations, without rendering.

Each run is stored the way the pipeline stores one — raw reply, a passing check report, a render
log, one frame, the check and render stage records — with a hand-made first evaluation whose
necessary criteria have the statuses a test asks for (decided by ``geometry@1``, counted)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

from PIL import Image, ImageDraw
from pydantic import JsonValue
from sqlalchemy.orm import Session

from service.storage import (
    ApiToken,
    CriterionOutcomeRow,
    Database,
    Evaluation,
    Run,
    StageRecord,
    TaskRow,
    VerdictRow,
)
from service.storage.blobs import BlobStore, LocalBlobStore, NewArtifact, record_artifact
from service.storage.details import CheckDetail, RenderDetail
from tasks import TaskSpec, bundled_registry

TASK_REF = "pelican-bicycle-structured@1"
SECRET_MODEL = "zz-secret-model-QX7"
SECRET_PROVIDER = "zz-provider-KV9"


def png(colour: str, text: str = "") -> bytes:
    """A small PNG frame."""
    img = Image.new("RGB", (400, 300), "white")
    draw = ImageDraw.Draw(img)
    draw.ellipse((120, 60, 280, 220), fill=colour)
    draw.text((10, 10), text, fill="black")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


OPENED: list[Database] = []
"""Databases :func:`open_db` opened; ``dispose_opened`` (an autouse fixture) closes them."""


def open_db(tmp: Path, url: str | None = None) -> tuple[Database, LocalBlobStore]:
    """A migrated database (SQLite under ``tmp`` unless ``url``) and a blob store under ``tmp``."""
    db = Database(url or f"sqlite:///{tmp / 'regua.sqlite3'}")
    OPENED.append(db)
    return db, LocalBlobStore(tmp / "artifacts")


def dispose_opened() -> None:
    """Close every database :func:`open_db` opened."""
    while OPENED:
        OPENED.pop().dispose()


def add_token(db: Database, name: str, role: str) -> int:
    """A token row (the hash of the name stands in for a real token)."""
    with db.write() as s:
        row = ApiToken(
            name=name, role=role, token_hash=hashlib.sha256(name.encode()).hexdigest(), prefix=name
        )
        s.add(row)
        s.flush()
        return row.id


def add_run(
    db: Database,
    blobs: BlobStore,
    run_id: str,
    statuses: dict[str, str],
    *,
    outcome: str,
    model: str = SECRET_MODEL,
    render_cause: str | None = None,
) -> int:
    """A finished run whose current evaluation has these necessary-criterion statuses;
    ``render_cause`` stores its render as incomplete with that cause (a machinery failure)."""
    task = bundled_registry().get(TASK_REF)
    with db.write() as s:
        row = _task_row(s, task)
        run = Run(
            id=run_id,
            task_ref=TASK_REF,
            task_pk=row.id,
            model_label=model,
            model_provider=SECRET_PROVIDER,
            status="done",
            outcome=outcome,
        )
        s.add(run)
        s.flush()
        raw = record_artifact(
            s, blobs, run_id, NewArtifact("raw", f"{model} says: <svg/>".encode(), "submit", "1")
        )
        run.raw_artifact_id = raw.id
        _stages(s, blobs, run_id, task, raw.id, render_cause)
        _frames(s, blobs, run_id, raw.id)
        ev = _evaluation(s, run_id, task, outcome)
        _criterion_rows(s, ev.id, task, statuses)
        s.flush()
        run.current_evaluation_id = ev.id
        return ev.id


def _task_row(s: Session, task: TaskSpec) -> TaskRow:
    """The stored row of :data:`TASK_REF` (added on first use)."""
    row = s.query(TaskRow).filter_by(ref=TASK_REF).one_or_none()
    if row is None:
        row = TaskRow(
            ref=TASK_REF,
            task_id=task.id,
            version=task.version,
            content_hash=task.content_hash(),
            spec=task.to_wire(),
        )
        s.add(row)
        s.flush()
    return row


def _frames(s: Session, blobs: BlobStore, run_id: str, raw_id: int) -> None:
    """The rendered frame artifacts of a run (one red frame at 0 s, labelled with the run id)."""
    for t, colour in ((0.0, "#d33"),):
        record_artifact(
            s,
            blobs,
            run_id,
            NewArtifact(
                "frame",
                png(colour, run_id),
                f"frame-{int(t * 1000)}.png",
                "render",
                "1",
                parent_id=raw_id,
                meta={"time_s": t},
            ),
        )


def _evaluation(s: Session, run_id: str, task: TaskSpec, outcome: str) -> Evaluation:
    """The run's first evaluation (flushed, so it has an id), decided by ``geometry@1``."""
    ev = Evaluation(
        run_id=run_id,
        kind="initial",
        task_ref=TASK_REF,
        rubric_hash=task.content_hash(),
        checker_version="checks@1",
        render_profile_id=task.render.id,
        judge_panel={
            "id": "test@1",
            "family": "pelican-bicycle",
            "assignments": {"*": ["geometry@1"]},
        },
        outcome=outcome,
        reasons=[],
    )
    s.add(ev)
    s.flush()
    return ev


def _criterion_rows(
    s: Session, evaluation_id: int, task: TaskSpec, statuses: dict[str, str]
) -> None:
    """Each criterion's outcome (``statuses``, else pass / not applicable; optional ones
    uncertain), and geometry@1's verdict on each applicable necessary criterion."""
    for c in task.criteria:
        status = statuses.get(c.id, "pass" if c.applicable else "not_applicable")
        if c.kind.value == "optional":
            status = "uncertain"
        s.add(
            CriterionOutcomeRow(
                evaluation_id=evaluation_id,
                criterion=c.id,
                kind=c.kind.value,
                status=status,
                review_required=status == "uncertain" and c.kind.value == "necessary",
                review_reason="no_reliable_judge" if status == "uncertain" else None,
                votes=_votes(c.id, status) if c.kind.value == "necessary" else [],
            )
        )
        if c.applicable and c.kind.value == "necessary":
            s.add(
                VerdictRow(
                    evaluation_id=evaluation_id,
                    criterion=c.id,
                    judge_profile_id="geometry@1",
                    status=status,
                    evidence=[{"artifact_ref": None, "time_s": 0.0, "description": f"{c.id} seen"}],
                )
            )


def _votes(criterion: str, status: str) -> list[dict[str, object]]:
    """The jury's record of geometry@1's counted vote (an uncertain criterion had no judge)."""
    del criterion
    if status == "uncertain":
        return [{"judge_profile_id": "geometry@1", "status": status, "eligible": False}]
    return [{"judge_profile_id": "geometry@1", "status": status, "eligible": True}]


def _stages(
    s: Session,
    blobs: BlobStore,
    run_id: str,
    task: TaskSpec,
    raw_id: int,
    render_cause: str | None,
) -> None:
    """The check and render records (and their artifacts) of a run that passed its checks and
    rendered (or whose render the machinery could not finish, with ``render_cause``)."""
    report = {"task": task.ref, "status": "pass", "extraction": {"status": "found"}, "checks": []}
    rep = record_artifact(
        s,
        blobs,
        run_id,
        NewArtifact(
            "check_report",
            json.dumps(report).encode(),
            "checks",
            "checks@test",
            "checks.json",
            parent_id=raw_id,
        ),
    )
    log: dict[str, JsonValue] = {
        "status": "incomplete" if render_cause else "ok",
        "cause": render_cause,
        "frames": [],
    }

    rend = record_artifact(
        s,
        blobs,
        run_id,
        NewArtifact("render_log", json.dumps(log).encode(), "render", "render@1", "render.json"),
    )
    check = CheckDetail(
        checker_version="checks@test", checks_status="pass", report_artifact_id=rep.id, render=True
    )
    s.add(
        StageRecord(
            run_id=run_id,
            stage="check",
            version="checks@test",
            status="done",
            detail=check.model_dump(mode="json"),
        )
    )
    render = RenderDetail(log_artifact_id=rend.id, cause=render_cause)
    s.add(
        StageRecord(
            run_id=run_id,
            stage="render",
            version="render@1",
            status="incomplete" if render_cause else "done",
            detail=render.model_dump(mode="json"),
        )
    )
