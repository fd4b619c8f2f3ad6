"""What a judge panel sees of a stored run, read from storage only (never the model's identity).

Many runs at once (:func:`load_eval_inputs`, a handful of queries per chunk of runs: re-scoring
reads 100 at a time, the evaluate stage one). Each :class:`~service.components.EvalInput` is
built by :func:`assemble_eval_input`: the check report, the render log, the frames and masks (in
the order they were stored) and the newest stored measurement memo of the run's masks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.artifacts import BlobStore
from service.components import EvalInput, FrameIn, MaskIn
from service.db import Artifact, Database, RenderRecord, StageRecord
from service.judgement import MEASUREMENTS_KIND
from tasks import TaskSpec


class StoredArtifact(NamedTuple):
    """The columns of an artifact row that evaluation needs."""

    id: int
    kind: str
    name: str
    sha256: str
    meta: dict[str, Any] | None


@dataclass
class StoredRun:
    """One run's evaluation input plus what writing its evaluation needs."""

    run_id: str
    inp: EvalInput
    stages: dict[str, dict[str, Any]]
    artifact_names: dict[str, str] = field(default_factory=dict)
    render_profile_id: str | None = None


def _columns() -> Any:
    return select(
        Artifact.run_id, Artifact.id, Artifact.kind, Artifact.name, Artifact.sha256, Artifact.meta
    )


def assemble_eval_input(
    task: TaskSpec,
    check: Mapping[str, Any],
    render: Mapping[str, Any],
    artifacts: Sequence[StoredArtifact],
    blobs: BlobStore,
    elsewhere: Mapping[int, StoredArtifact] | None = None,
) -> EvalInput:
    """The panel's input from a run's stage details and its artifact rows (ordered by id);
    ``elsewhere`` holds referenced report or log rows that belong to no run of their own."""
    by_id = {**(elsewhere or {}), **{a.id: a for a in artifacts}}
    checks: dict[str, Any] | None = None
    render_doc: dict[str, Any] | None = None
    if check.get("status") == "done":
        checks = json.loads(blobs.get(by_id[check["report_artifact_id"]].sha256))
    if render.get("log_artifact_id"):
        render_doc = json.loads(blobs.get(by_id[render["log_artifact_id"]].sha256))
    frames: list[FrameIn] = []
    masks: list[MaskIn] = []
    measurements: dict[str, Any] | None = None
    if render.get("status") == "done":
        for a in artifacts:
            meta = a.meta or {}
            if a.kind == "frame":
                frames.append(FrameIn(float(meta["time_s"]), blobs.get(a.sha256), a.sha256))
            elif a.kind == "mask":
                png = blobs.get(a.sha256)
                masks.append(
                    MaskIn(float(meta["time_s"]), meta["part"], meta["kind"], png, a.sha256)
                )
            elif a.kind == MEASUREMENTS_KIND:  # the newest one wins (rows come in id order)
                measurements = json.loads(blobs.get(a.sha256))
    render_status = {"done": "ok", "incomplete": "incomplete"}.get(
        str(render.get("status", "")), "skipped"
    )
    render_cause = render.get("cause") if render_status == "incomplete" else None
    return EvalInput(
        task, checks, render_doc, render_status, render_cause, frames, masks, measurements
    )


def _referenced(details: Iterable[Mapping[str, Any]]) -> set[int]:
    """Artifact ids that stage details point at (check report, render log)."""
    keys = ("report_artifact_id", "log_artifact_id")
    return {int(d[k]) for d in details for k in keys if d.get(k) is not None}


def _rows_by_id(s: Session, ids: set[int]) -> dict[int, StoredArtifact]:
    if not ids:
        return {}
    rows = s.execute(_columns().where(Artifact.id.in_(sorted(ids))))
    return {r[1]: StoredArtifact(*r[1:]) for r in rows}


def load_eval_inputs(
    db: Database, blobs: BlobStore, tasks: Mapping[str, TaskSpec], run_ids: Iterable[str]
) -> list[StoredRun]:
    """The stored evaluation input of each run in at most four queries (stage details,
    artifacts, render records), plus the names evidence may refer to and the render profile."""
    ids = list(run_ids)
    details: dict[tuple[str, str], dict[str, Any]] = {}
    arts: dict[str, list[StoredArtifact]] = {r: [] for r in ids}
    with db.read() as s:
        recs = s.execute(
            select(StageRecord.run_id, StageRecord.stage, StageRecord.status, StageRecord.detail)
            .where(StageRecord.run_id.in_(ids), StageRecord.stage.in_(("check", "render")))
            .order_by(StageRecord.id)
        )
        for run_id, stage, status, detail in recs:  # the newest record of a stage wins
            details[(run_id, stage)] = {"status": status, **(detail or {})}
        for row in s.execute(_columns().where(Artifact.run_id.in_(ids)).order_by(Artifact.id)):
            arts[row[0]].append(StoredArtifact(*row[1:]))
        record_ids = [
            d["render_record_id"]
            for (_, stage), d in details.items()
            if stage == "render" and d.get("render_record_id") is not None
        ]
        profiles: dict[int, str | None] = {
            rid: profile
            for rid, profile in s.execute(
                select(RenderRecord.id, RenderRecord.render_profile_id).where(
                    RenderRecord.id.in_(record_ids)
                )
            )
        }
        present = {a.id for rows in arts.values() for a in rows}
        elsewhere = _rows_by_id(s, _referenced(details.values()) - present)
    out: list[StoredRun] = []
    for run_id in ids:
        check = details.get((run_id, "check"), {})
        render = details.get((run_id, "render"), {})
        inp = assemble_eval_input(tasks[run_id], check, render, arts[run_id], blobs, elsewhere)
        names = {a.name: a.sha256 for a in arts[run_id] if a.name}
        record_id = render.get("render_record_id")
        profile = profiles.get(record_id) if record_id is not None else None
        stages = {"check": check, "render": render}
        out.append(StoredRun(run_id, inp, stages, names, profile))
    return out
