"""Helpers of the re-scoring tests and benchmark: real runs through the pipeline, cheap clones.

``real_runs`` stores runs end to end (checks, sandboxed render on the shared pool, judges).
``clone_run`` copies a stored run's rows N times in bulk: artifacts are content-addressed, so
the clones share the source's blobs (frames, masks, render log) and nothing is rendered again.
``STRICT_PANEL`` is a geometry profile with tighter contact bands, registered like a plugin.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session

import judges
from judges.builtin import GEOMETRY_THRESHOLDS
from judges.calibration import GateDecision
from regua.settings import Settings
from sandbox import WorkerPool
from service.context import ServiceContext
from service.evaluation.evaluator import Evaluator
from service.evaluation.gate import store_decisions
from service.pipeline.check_stage import CHECKER_VERSION
from service.pipeline.render_client import RenderClient, RenderOutput
from service.pipeline.runner import Machinery, advance
from service.pipeline.stages import STAGES
from service.pipeline.submit import Submission
from service.storage import (
    Artifact,
    CheckResultRow,
    CriterionOutcomeRow,
    Database,
    Evaluation,
    JudgeFailureRow,
    RenderRecord,
    Run,
    StageRecord,
    VerdictRow,
)
from tasks import TaskSpec

TASK = "pelican-bicycle-structured@1"
GEOMETRY_CRITERIA = ("B1", "B2", "R1", "R2", "R3")
STRICT_PROFILE = "geometry-strict@1"
STRICT_PANEL = "pelican-bicycle-strict@1"


def register_strict() -> None:
    """A stricter geometry profile (contact pass <= 0.01, uncertain <= 0.03) and its panel."""
    strict = {"contact_pass_max": 0.01, "contact_uncertain_max": 0.03}
    register_geometry_variant(STRICT_PROFILE, STRICT_PANEL, strict, "strict")


def register_geometry_variant(
    profile_id: str, panel_id: str, overrides: Mapping[str, Any], description: str
) -> None:
    """geometry@1 with some thresholds overridden, registered like a plugin, and a panel of the
    static rules plus that profile."""
    base = judges.get_profile("geometry@1")
    thresholds = {**GEOMETRY_THRESHOLDS, **overrides}
    profile = dataclasses.replace(
        base, id=profile_id, thresholds=thresholds, expected_hash=None, description=description
    )
    if profile_id not in {p.id for p in judges.list_profiles()}:
        judges.register_profile(profile)
    judges.register_panel(
        judges.JudgePanel(
            id=panel_id,
            family="pelican-bicycle",
            assignments={"*": ("static@1", profile_id)},
            description=f"Static rules and the {description} geometry profile.",
        )
    )


def grant(db: Database, profiles: tuple[str, ...], set_id: str = "test-synthetic") -> None:
    """Store passing gate decisions (synthetic, for tests that are not about calibration)."""
    decisions = [
        GateDecision(
            p,
            c,
            "pelican-bicycle",
            True,
            ("granted by the test",),
            {},
            {},
            "test",
            set_id,
            None,
            "2026-01-01T00:00:00+00:00",
            profile_hash=judges.get_profile(p).content_hash(),
        )
        for p in profiles
        for c in GEOMETRY_CRITERIA
    ]
    with db.write() as s:
        store_decisions(s, decisions)


class CountingRenderer(RenderClient):
    """The real render client over an existing pool, counting the renders it was asked for."""

    def __init__(self, settings: Settings, pool: WorkerPool, **kw: float) -> None:
        super().__init__(settings, pool, **kw)
        self.calls = 0
        self._count = threading.Lock()

    def render(self, svg_text: str, task: TaskSpec) -> RenderOutput:
        """Render in the sandbox, counting."""
        with self._count:
            self.calls += 1
        return super().render(svg_text, task)


def machinery(ctx: ServiceContext, renderer: RenderClient, panel: str | None = None) -> Machinery:
    """The real checker, ``renderer``, and an evaluator reading the stored gate afresh each run
    (``panel`` fixes the panel; default: the family's)."""
    ctx.gate.ttl_s = 0.0
    evaluator = Evaluator(ctx.gate.current, ctx.settings, panel_id=panel)
    return Machinery(CHECKER_VERSION, renderer, evaluator)


def real_runs(
    ctx: ServiceContext, machine: Machinery, outputs: Mapping[str, str]
) -> dict[str, str]:
    """Submit each output for :data:`TASK` and run the whole pipeline; ``{name: run_id}``."""
    names = list(outputs)
    subs = [Submission(TASK, "m", outputs[n], model_params={"item": n}) for n in names]
    ids = ctx.submit(subs, None)
    for run_id in ids:
        assert advance(ctx.db, ctx.blobs, machine, run_id, STAGES)
    return dict(zip(names, ids, strict=True))


def _row(obj: Any) -> dict[str, Any]:
    return {c.key: getattr(obj, c.key) for c in type(obj).__table__.columns}


def _next_id(s: Any, model: Any) -> int:
    return int(s.scalar(select(func.max(model.id))) or 0) + 1


def clone_run(db: Database, source: str, n: int) -> list[str]:
    """Copy run ``source`` (rows only; blobs are shared by sha256) ``n`` times."""
    with db.write() as s:
        src = _load_source(s, source)
        next_art, next_rr = _next_id(s, Artifact), _next_id(s, RenderRecord)
        next_ev = _next_id(s, Evaluation)
        rows: dict[Any, list[dict[str, Any]]] = {m: [] for m in _ORDER}
        ids: list[str] = []
        for _ in range(n):
            rid = uuid.uuid4().hex
            ids.append(rid)
            maps = _IdMaps(
                arts={a.id: next_art + i for i, a in enumerate(src.arts)},
                renders={r.id: next_rr + i for i, r in enumerate(src.renders)},
                evals={src.ev.id: next_ev},
            )
            next_art += len(src.arts)
            next_rr += len(src.renders)
            next_ev += 1
            _clone_run_rows(rows, src, rid, maps)
            _clone_evaluation_rows(rows, src, rid, maps)
        _insert_rows(s, rows)
        _advance_sequences(s)
    return ids


@dataclasses.dataclass(frozen=True)
class _Source:
    """The stored rows of the run being cloned and of its current evaluation."""

    run: Run
    arts: Sequence[Artifact]
    stages: Sequence[StageRecord]
    renders: Sequence[RenderRecord]
    checks: Sequence[CheckResultRow]
    ev: Evaluation
    verdicts: Sequence[VerdictRow]
    outcomes: Sequence[CriterionOutcomeRow]
    failures: Sequence[JudgeFailureRow]


@dataclasses.dataclass(frozen=True)
class _IdMaps:
    """One clone's new ids for the source's artifacts, render records and evaluation."""

    arts: dict[int, int]
    renders: dict[int, int]
    evals: dict[int, int]


def _load_source(s: Session, source: str) -> _Source:
    """Read run ``source`` and every row a clone copies (it must have a current evaluation)."""
    run = s.get(Run, source)
    assert run is not None and run.current_evaluation_id is not None
    arts = s.scalars(select(Artifact).where(Artifact.run_id == source).order_by(Artifact.id)).all()
    stages = s.scalars(select(StageRecord).where(StageRecord.run_id == source)).all()
    renders = s.scalars(select(RenderRecord).where(RenderRecord.run_id == source)).all()
    checks = s.scalars(select(CheckResultRow).where(CheckResultRow.run_id == source)).all()
    ev = s.get(Evaluation, run.current_evaluation_id)
    assert ev is not None
    verdicts = s.scalars(select(VerdictRow).where(VerdictRow.evaluation_id == ev.id)).all()
    outcomes = s.scalars(
        select(CriterionOutcomeRow).where(CriterionOutcomeRow.evaluation_id == ev.id)
    ).all()
    failures = s.scalars(
        select(JudgeFailureRow).where(JudgeFailureRow.evaluation_id == ev.id)
    ).all()
    return _Source(run, arts, stages, renders, checks, ev, verdicts, outcomes, failures)


def _clone_run_rows(
    rows: dict[Any, list[dict[str, Any]]], src: _Source, rid: str, maps: _IdMaps
) -> None:
    """Append one clone's run, artifact, render, stage and check rows (ids remapped)."""
    amap, rmap = maps.arts, maps.renders
    run = src.run
    params = {**(run.model_params or {}), "clone_of": run.id}
    r = _row(run) | {
        "id": rid,
        "model_params": params,
        "current_evaluation_id": maps.evals[src.ev.id],
    }
    r["raw_artifact_id"] = amap.get(run.raw_artifact_id or -1)
    rows[Run].append(r)
    for a in src.arts:
        parent = amap.get(a.parent_id) if a.parent_id else None
        rows[Artifact].append(_row(a) | {"id": amap[a.id], "run_id": rid, "parent_id": parent})
    for rr in src.renders:
        log = amap.get(rr.log_artifact_id) if rr.log_artifact_id else None
        rows[RenderRecord].append(
            _row(rr) | {"id": rmap[rr.id], "run_id": rid, "log_artifact_id": log}
        )
    for st in src.stages:
        rows[StageRecord].append(
            _row(st)
            | {"id": None, "run_id": rid, "detail": _remap(st.detail, amap, rmap, maps.evals)}
        )
    for c in src.checks:
        rep = amap.get(c.report_artifact_id) if c.report_artifact_id else None
        rows[CheckResultRow].append(
            _row(c) | {"id": None, "run_id": rid, "report_artifact_id": rep}
        )


def _clone_evaluation_rows(
    rows: dict[Any, list[dict[str, Any]]], src: _Source, rid: str, maps: _IdMaps
) -> None:
    """Append one clone's evaluation with its verdicts, outcomes and judge failures."""
    ev = src.ev
    new_ev = maps.evals[ev.id]
    rows[Evaluation].append(
        _row(ev)
        | {
            "id": new_ev,
            "run_id": rid,
            "render_record_id": maps.renders.get(ev.render_record_id or -1),
        }
    )
    for v in src.verdicts:
        raw = maps.arts.get(v.raw_artifact_id) if v.raw_artifact_id else None
        rows[VerdictRow].append(
            _row(v) | {"id": None, "evaluation_id": new_ev, "raw_artifact_id": raw}
        )
    for o in src.outcomes:
        rows[CriterionOutcomeRow].append(_row(o) | {"id": None, "evaluation_id": new_ev})
    for f in src.failures:
        rows[JudgeFailureRow].append(_row(f) | {"id": None, "evaluation_id": new_ev})


def _insert_rows(s: Session, rows: dict[Any, list[dict[str, Any]]]) -> None:
    """Bulk-insert the rows table by table in :data:`_ORDER` (a ``None`` id is left to the
    database)."""
    for model in _ORDER:
        batch = rows[model]
        for row in batch:
            if row.get("id") is None:
                row.pop("id", None)
        if batch:
            s.execute(insert(model), batch)


def _advance_sequences(s: Session) -> None:
    """On PostgreSQL, move the id sequences past the explicit ids the clones were given."""
    if s.get_bind().dialect.name == "postgresql":
        for model in (Artifact, RenderRecord, Evaluation):
            table = model.__tablename__

            s.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT max(id) FROM {table}))"
                )
            )


_ORDER = (
    Run,
    Artifact,
    RenderRecord,
    StageRecord,
    CheckResultRow,
    Evaluation,
    VerdictRow,
    CriterionOutcomeRow,
    JudgeFailureRow,
)


def _remap(detail: Any, amap: dict[int, int], rmap: dict[int, int], emap: dict[int, int]) -> Any:
    if not isinstance(detail, dict):
        return detail
    out = dict(detail)
    for key, value in detail.items():
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if key.endswith("artifact_id"):
            out[key] = amap.get(value, value)
        elif key == "render_record_id":
            out[key] = rmap.get(value, value)
        elif key == "evaluation_id":
            out[key] = emap.get(value, value)
    return out
