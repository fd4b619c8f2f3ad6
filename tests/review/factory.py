"""Seed a real (SQLite) service database with runs and evaluations, without the pipeline."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from PIL import Image, ImageDraw

from service.artifacts import LocalBlobStore, NewArtifact, record_artifact
from service.db import (
    ApiToken,
    CriterionOutcomeRow,
    Database,
    Evaluation,
    Run,
    TaskRow,
    VerdictRow,
)
from tasks import bundled_registry

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


def open_db(tmp: Path, url: str | None = None) -> tuple[Database, LocalBlobStore]:
    """A migrated database (SQLite under ``tmp`` unless ``url``) and a blob store under ``tmp``."""
    db = Database(url or f"sqlite:///{tmp / 'regua.sqlite3'}")
    return db, LocalBlobStore(tmp / "artifacts")


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
    blobs: LocalBlobStore,
    run_id: str,
    statuses: dict[str, str],
    *,
    outcome: str,
    model: str = SECRET_MODEL,
) -> int:
    """A finished run whose current evaluation has these necessary-criterion statuses."""
    task = bundled_registry().get(TASK_REF)
    with db.write() as s:
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
                    parent_id=raw.id,
                    meta={"time_s": t},
                ),
            )
        ev = Evaluation(
            run_id=run_id,
            kind="initial",
            task_ref=TASK_REF,
            rubric_hash=task.content_hash(),
            checker_version="checks@1",
            render_profile_id=task.render.id,
            judge_panel={"id": "test@1", "profiles": ["static-checks@1", "geometry@1"]},
            outcome=outcome,
            reasons=[],
        )
        s.add(ev)
        s.flush()
        for c in task.criteria:
            status = statuses.get(c.id, "pass" if c.applicable else "not_applicable")
            if c.kind.value == "optional":
                status = "uncertain"
            s.add(
                CriterionOutcomeRow(
                    evaluation_id=ev.id,
                    criterion=c.id,
                    kind=c.kind.value,
                    status=status,
                    review_required=status == "uncertain" and c.kind.value == "necessary",
                    review_reason="no_reliable_judge" if status == "uncertain" else None,
                    votes=[],
                )
            )
            if c.applicable and c.kind.value == "necessary":
                s.add(
                    VerdictRow(
                        evaluation_id=ev.id,
                        criterion=c.id,
                        judge_profile_id="geometry@1",
                        status=status,
                        evidence=[
                            {"artifact_ref": None, "time_s": 0.0, "description": f"{c.id} seen"}
                        ],
                    )
                )
        s.flush()
        run.current_evaluation_id = ev.id
        return ev.id
