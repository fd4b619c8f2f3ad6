"""What a judge panel sees of a stored run, read from storage only (never the model's identity).

:func:`load_eval_inputs` reads many runs at once (a handful of queries per chunk: re-scoring
reads 100 at a time, the evaluate stage one) and returns one :class:`StoredRun` per run: the
:class:`judges.EvalInput` (check report, render log, frames and masks in the order they were
stored, the newest stored measurement memo) plus what writing an evaluation of it needs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from regua.errors import ReguaError
from service.evaluation.record import MEASUREMENTS_KIND, EvaluationVersions
from service.storage import Artifact, Database, RenderRecord, Run, StageRecord
from service.storage.blobs import BlobStore
from service.storage.cached_blobs import get_many
from service.storage.details import CheckDetail, RenderDetail, read_detail
from tasks import TaskSpec


class StoredArtifact(NamedTuple):
    """The columns of an artifact row that evaluation needs."""

    id: int
    kind: str
    name: str
    sha256: str
    time_s: float | None
    part: str | None
    mask_kind: str | None


@dataclass(frozen=True)
class StoredRun:
    """One run's evaluation input plus what writing its evaluation needs."""

    run_id: str
    inp: judges.EvalInput
    versions: EvaluationVersions
    """Task, rubric, checker and render versions an evaluation of this input records."""
    artifact_names: Mapping[str, str] = field(default_factory=dict)
    """File name → sha256 of the run's artifacts (evidence may name ``checks.json`` …)."""
    render_profile_id: str | None = None
    """The render profile of the stored render (None when nothing was rendered)."""
    panel_id: str | None = None
    """The judge panel the submission asked for (None: the service's or the task's default)."""


@dataclass
class _StageRows:
    """The newest check and render stage records of one run."""

    check: StageRecord | None = None
    render: StageRecord | None = None


_COLUMNS = (
    Artifact.run_id,
    Artifact.id,
    Artifact.kind,
    Artifact.name,
    Artifact.sha256,
    Artifact.meta["time_s"].as_float(),
    Artifact.meta["part"].as_string(),
    Artifact.meta["kind"].as_string(),
)
"""An artifact row with the three fields of its ``meta`` evaluation reads, taken out by the
database (decoding every mask's ``meta`` document costs more than the rest of the row)."""


def _artifact(
    row: tuple[str | None, int, str, str, str, float | None, str | None, str | None],
) -> StoredArtifact:
    _run, art_id, kind, name, sha, time_s, part, mask_kind = row
    return StoredArtifact(art_id, kind, name, sha, time_s, part, mask_kind)


def _checks(
    stage: StageRecord | None,
    detail: CheckDetail,
    by_id: Mapping[int, StoredArtifact],
    blobs: BlobStore,
) -> tuple[judges.CheckSummary | None, str | None]:
    """The check summary, or ``None`` with the cause when the checks did not finish."""
    if stage is None or stage.status != "done" or detail.report_artifact_id is None:
        why = (detail.error or detail.cause) if stage is not None else "no check stage"
        return None, f"checks_unavailable: {why}" if why else "checks_unavailable"
    return _check_summary(blobs.get(by_id[detail.report_artifact_id].sha256)), None


@lru_cache(maxsize=256)
def _check_summary(report: bytes) -> judges.CheckSummary:
    """A stored check report, decoded once per content (runs of a batch often share one)."""
    return judges.CheckSummary.from_doc(json.loads(report))


@lru_cache(maxsize=256)
def _render_summary(log: bytes) -> judges.RenderSummary:
    """A stored render log, decoded once per content (clones of a run share theirs)."""
    return judges.RenderSummary.from_doc(json.loads(log))


def _render(
    stage: StageRecord | None,
    detail: RenderDetail,
    by_id: Mapping[int, StoredArtifact],
    blobs: BlobStore,
) -> judges.RenderSummary:
    if stage is None:
        return judges.RenderSummary()
    if detail.log_artifact_id is not None:
        summary = _render_summary(blobs.get(by_id[detail.log_artifact_id].sha256))
        if stage.status == "incomplete" and summary.status == "ok":  # gave up after writing
            return judges.RenderSummary("incomplete", detail.cause or "render_error")
        return summary
    if stage.status == "incomplete":
        return judges.RenderSummary(
            "incomplete", detail.cause or "render_error", detail.error or ""
        )
    return judges.RenderSummary("skipped", detail.reason)


def _images(
    artifacts: Sequence[StoredArtifact], blobs: BlobStore
) -> tuple[list[judges.FrameImage], list[judges.MaskImage], judges.MeasurementMemo | None]:
    frames: list[judges.FrameImage] = []
    masks: list[judges.MaskImage] = []
    newest: StoredArtifact | None = None
    for a in artifacts:
        if a.kind == "frame" and a.time_s is not None:
            frames.append(judges.FrameImage(a.time_s, blobs.get(a.sha256), a.sha256))
        elif a.kind == "mask" and a.time_s is not None and a.part and a.mask_kind:
            kind = judges.mask_kind(a.mask_kind)
            masks.append(judges.MaskImage(a.time_s, a.part, kind, blobs.get(a.sha256), a.sha256))
        elif a.kind == MEASUREMENTS_KIND:  # the newest one wins (rows come in id order)
            newest = a
    memo_doc: object = None if newest is None else json.loads(blobs.get(newest.sha256))
    memo = judges.MeasurementMemo.from_doc(memo_doc if isinstance(memo_doc, dict) else None)
    return frames, masks, memo


def assemble_eval_input(
    task: TaskSpec,
    stages: _StageRows,
    artifacts: Sequence[StoredArtifact],
    blobs: BlobStore,
    elsewhere: Mapping[int, StoredArtifact],
) -> judges.EvalInput:
    """The panel's input from a run's stage records and its artifact rows (ordered by id).

    ``elsewhere`` holds referenced report or log rows that belong to no run of their own.
    """
    by_id = {**elsewhere, **{a.id: a for a in artifacts}}
    check_detail = read_detail(stages.check, CheckDetail)
    render_detail = read_detail(stages.render, RenderDetail)
    checks, machinery_error = _checks(stages.check, check_detail, by_id, blobs)
    render = _render(stages.render, render_detail, by_id, blobs)
    frames: list[judges.FrameImage] = []
    masks: list[judges.MaskImage] = []
    memo = judges.MeasurementMemo()
    if render.status == "ok":
        frames, masks, found = _images(artifacts, blobs)
        memo = found or memo
    return judges.EvalInput(
        task, checks, render, tuple(frames), tuple(masks), memo, machinery_error
    )


def _referenced(stages: Iterable[_StageRows]) -> set[int]:
    """Artifact ids that stage details point at (check report, render log)."""
    ids: set[int] = set()
    for rows in stages:
        check = read_detail(rows.check, CheckDetail).report_artifact_id
        log = read_detail(rows.render, RenderDetail).log_artifact_id
        ids.update(i for i in (check, log) if i is not None)
    return ids


def checker_version(stage: StageRecord | None) -> str:
    """The checker a run's check stage ran (its detail, else the stage version)."""
    if stage is None:
        return "unknown"
    return read_detail(stage, CheckDetail).checker_version or stage.version


def load_eval_inputs(
    db: Database, blobs: BlobStore, tasks: Mapping[str, TaskSpec], run_ids: Iterable[str]
) -> list[StoredRun]:
    """The stored evaluation input of each run, read in one short read transaction."""
    with db.read() as s:
        return read_eval_inputs(s, blobs, tasks, run_ids)


def read_eval_inputs(
    s: Session, blobs: BlobStore, tasks: Mapping[str, TaskSpec], run_ids: Iterable[str]
) -> list[StoredRun]:
    """The stored evaluation input of each run, loaded in a few queries.

    The queries read stage records, artifacts and render records; each input comes with the
    names evidence may refer to and the versions to record.
    """
    ids = list(run_ids)
    stages = _stage_rows(s, ids)
    arts: dict[str, list[StoredArtifact]] = {r: [] for r in ids}
    query = select(*_COLUMNS).where(Artifact.run_id.in_(ids)).order_by(Artifact.id)
    for row in s.execute(query):
        arts[str(row[0])].append(_artifact(row))
    details = {r: read_detail(rows.render, RenderDetail) for r, rows in stages.items()}
    record_ids = [d.render_record_id for d in details.values() if d.render_record_id is not None]
    profiles = dict(
        s.execute(
            select(RenderRecord.id, RenderRecord.render_profile_id).where(
                RenderRecord.id.in_(record_ids)
            )
        ).all()
    )
    submitted = {
        str(r[0]): (r[1], r[2])
        for r in s.execute(select(Run.id, Run.model_provider, Run.panel_id).where(Run.id.in_(ids)))
    }
    present = {a.id for rows in arts.values() for a in rows}
    referenced = _referenced(stages.values())
    wanted = referenced - present
    elsewhere: dict[int, StoredArtifact] = {}
    if wanted:
        query = select(*_COLUMNS).where(Artifact.id.in_(sorted(wanted)))
        elsewhere = {row[1]: _artifact(row) for row in s.execute(query)}
    blobs = _prefetched(blobs, arts.values(), elsewhere, referenced)
    return [
        _stored_run(
            run_id,
            tasks[run_id],
            stages.get(run_id, _StageRows()),
            arts[run_id],
            blobs,
            elsewhere,
            profiles,
            submitted.get(run_id, (None, None)),
        )
        for run_id in ids
    ]


_READ_KINDS = frozenset({"frame", "mask", MEASUREMENTS_KIND})


class _Prefetched:
    """A blob store whose blobs named up front were read at once (the rest: one by one)."""

    def __init__(self, inner: BlobStore, data: Mapping[str, bytes]) -> None:
        self.inner, self.data = inner, data

    def put(self, data: bytes) -> str:
        """Store bytes (in the store)."""
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        """The blob read up front, else from the store."""
        found = self.data.get(sha256)
        return found if found is not None else self.inner.get(sha256)

    def exists(self, sha256: str) -> bool:
        """Whether the blob is in the store."""
        return sha256 in self.data or self.inner.exists(sha256)

    def locate(self, sha256: str) -> str:
        """Where the blob lives in the store."""
        return self.inner.locate(sha256)


def _read(rows: Sequence[StoredArtifact]) -> Iterable[StoredArtifact]:
    """A run's rows whose blobs assembling its input reads: its newest measurement memo only."""
    memos = [a for a in rows if a.kind == MEASUREMENTS_KIND]
    return [a for a in rows if a.kind != MEASUREMENTS_KIND or a is memos[-1]]


def _prefetched(
    blobs: BlobStore,
    arts: Iterable[Sequence[StoredArtifact]],
    elsewhere: Mapping[int, StoredArtifact],
    referenced: set[int],
) -> BlobStore:
    """``blobs`` with every blob the inputs will read fetched in one batch.

    The frames, masks and measurement memos of the runs and the check reports and render logs
    their stage records name: one concurrent batch instead of a round trip per blob.
    """
    shas = [
        a.sha256
        for rows in arts
        for a in _read(rows)
        if a.kind in _READ_KINDS or a.id in referenced
    ]
    shas += [a.sha256 for a in elsewhere.values()]
    if not shas:
        return blobs
    try:
        return _Prefetched(blobs, get_many(blobs, shas))
    except ReguaError:  # a missing or damaged blob: read one by one, failing where it is used
        return blobs


def _stored_run(
    run_id: str,
    task: TaskSpec,
    rows: _StageRows,
    artifacts: Sequence[StoredArtifact],
    blobs: BlobStore,
    elsewhere: Mapping[int, StoredArtifact],
    profiles: Mapping[int, str],
    submitted: tuple[str | None, str | None],
) -> StoredRun:
    provider, panel_id = submitted
    inp = assemble_eval_input(task, rows, artifacts, blobs, elsewhere)
    if provider:  # only to keep a same-provider judge off a panel that says so; never shown
        inp = dataclasses.replace(inp, provider=provider)
    record_id = read_detail(rows.render, RenderDetail).render_record_id
    versions = EvaluationVersions(
        task_ref=task.ref,
        rubric_hash=rubric_hash(task),
        checker_version=checker_version(rows.check),
        render_profile_id=task.render.id if record_id is not None else None,
        render_record_id=record_id,
    )
    names = {a.name: a.sha256 for a in artifacts if a.name}
    profile = profiles.get(record_id) if record_id is not None else None
    return StoredRun(run_id, inp, versions, names, profile, panel_id)


_HASHES: dict[int, tuple[TaskSpec, str]] = {}
"""Content hashes of the task objects seen lately, by identity (the object is kept with it)."""


def rubric_hash(task: TaskSpec) -> str:
    """``task.content_hash()``, computed once per task object (a batch shares a few)."""
    found = _HASHES.get(id(task))
    if found is not None and found[0] is task:
        return found[1]
    digest = task.content_hash()
    if len(_HASHES) >= 256:
        _HASHES.clear()
    _HASHES[id(task)] = (task, digest)
    return digest


def _stage_rows(s: Session, ids: Sequence[str]) -> dict[str, _StageRows]:
    """The newest check and render stage record of each run."""
    out: dict[str, _StageRows] = {}
    query = (
        select(StageRecord)
        .where(StageRecord.run_id.in_(ids), StageRecord.stage.in_(("check", "render")))
        .order_by(StageRecord.id)
    )
    for rec in s.scalars(query):  # the newest record of a stage wins
        rows = out.setdefault(rec.run_id, _StageRows())
        if rec.stage == "check":
            rows.check = rec
        else:
            rows.render = rec
    return out
