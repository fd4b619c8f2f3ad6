"""Helpers of the re-scoring tests and benchmark: real runs through the pipeline, cheap clones.

``real_runs`` stores runs end to end (checks, sandboxed render on the shared pool, judges).
``clone_run`` copies a stored run's rows N times in bulk: artifacts are content-addressed, so
the clones share the source's blobs (frames, masks, render log) and nothing is rendered again.
``STRICT_PANEL`` is a geometry profile with tighter contact bands, registered like a plugin.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, insert, select, text

import judges
from judges.builtin import GEOMETRY_THRESHOLDS
from judges.calibration import GateDecision
from service.adapters import ChecksAdapter, JudgesEvaluator
from service.components import Components, RenderResult
from service.context import ServiceContext
from service.db import (
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
from service.pipeline import advance
from service.scoring.calibration import StoredEligibility, store_decisions
from service.stages import STAGES
from service.submission import Submission, submit
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
        GateDecision(p, c, "pelican-bicycle", True, ("granted by the test",), {}, {}, "test",
                     set_id, None, "2026-01-01T00:00:00+00:00")
        for p in profiles
        for c in GEOMETRY_CRITERIA
    ]  # fmt: skip
    with db.write() as s:
        store_decisions(s, decisions)


class PoolRenderer:
    """A :class:`service.components.Renderer` over an existing worker pool; counts renders."""

    def __init__(self, pool: Any) -> None:
        from service import rendering

        self._rendering = rendering
        self.pool = pool
        self.version = rendering.RENDERER_VERSION
        self.calls = 0

    def render(self, svg_text: str, task: TaskSpec) -> RenderResult:
        """Render in the sandbox."""
        self.calls += 1
        out = self._rendering.render_artifact(svg_text, task, self.pool)
        return RenderResult(
            out.status, out.result, out.files, out.cause, out.detail, out.attempts,
            out.elapsed_ms, out.sandbox,
        )  # fmt: skip

    def close(self) -> None:
        """The pool belongs to the caller."""


def components(ctx: ServiceContext, renderer: Any) -> Components:
    """Real checker, the given renderer, the default panel with the stored gate's eligibility."""
    return Components(
        ChecksAdapter(), renderer, JudgesEvaluator(eligibility=StoredEligibility(ctx.db, 0.0))
    )


def real_runs(ctx: ServiceContext, comps: Components, outputs: Mapping[str, str]) -> dict[str, str]:
    """Submit each output for :data:`TASK` and run the whole pipeline; ``{name: run_id}``."""
    names = list(outputs)
    subs = [Submission(TASK, "m", outputs[n], model_params={"item": n}) for n in names]
    ids = submit(ctx, subs, None)
    for run_id in ids:
        assert advance(ctx.db, ctx.blobs, comps, run_id, STAGES)
    return dict(zip(names, ids, strict=True))


def _row(obj: Any) -> dict[str, Any]:
    return {c.key: getattr(obj, c.key) for c in type(obj).__table__.columns}


def _next_id(s: Any, model: Any) -> int:
    return int(s.scalar(select(func.max(model.id))) or 0) + 1


def clone_run(db: Database, source: str, n: int) -> list[str]:
    """Copy run ``source`` (rows only; blobs are shared by sha256) ``n`` times."""
    with db.write() as s:
        run = s.get(Run, source)
        assert run is not None and run.current_evaluation_id is not None
        arts = s.scalars(
            select(Artifact).where(Artifact.run_id == source).order_by(Artifact.id)
        ).all()
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
        next_art, next_rr = _next_id(s, Artifact), _next_id(s, RenderRecord)
        next_ev = _next_id(s, Evaluation)
        rows: dict[Any, list[dict[str, Any]]] = {m: [] for m in _ORDER}
        ids: list[str] = []
        for _ in range(n):
            rid = uuid.uuid4().hex
            ids.append(rid)
            amap = {a.id: next_art + i for i, a in enumerate(arts)}
            next_art += len(arts)
            rmap = {r.id: next_rr + i for i, r in enumerate(renders)}
            next_rr += len(renders)
            emap = {ev.id: next_ev}
            next_ev += 1
            params = {**(run.model_params or {}), "clone_of": source}
            r = _row(run) | {
                "id": rid,
                "model_params": params,
                "current_evaluation_id": next_ev - 1,
            }
            r["raw_artifact_id"] = amap.get(run.raw_artifact_id or -1)
            rows[Run].append(r)
            for a in arts:
                parent = amap.get(a.parent_id) if a.parent_id else None
                rows[Artifact].append(
                    _row(a) | {"id": amap[a.id], "run_id": rid, "parent_id": parent}
                )
            for rr in renders:
                log = amap.get(rr.log_artifact_id) if rr.log_artifact_id else None
                rows[RenderRecord].append(
                    _row(rr) | {"id": rmap[rr.id], "run_id": rid, "log_artifact_id": log}
                )
            for st in stages:
                rows[StageRecord].append(
                    _row(st)
                    | {"id": None, "run_id": rid, "detail": _remap(st.detail, amap, rmap, emap)}
                )
            for c in checks:
                rep = amap.get(c.report_artifact_id) if c.report_artifact_id else None
                rows[CheckResultRow].append(
                    _row(c) | {"id": None, "run_id": rid, "report_artifact_id": rep}
                )
            rows[Evaluation].append(
                _row(ev)
                | {
                    "id": emap[ev.id],
                    "run_id": rid,
                    "render_record_id": rmap.get(ev.render_record_id or -1),
                }
            )
            for v in verdicts:
                raw = amap.get(v.raw_artifact_id) if v.raw_artifact_id else None
                rows[VerdictRow].append(
                    _row(v) | {"id": None, "evaluation_id": emap[ev.id], "raw_artifact_id": raw}
                )
            for o in outcomes:
                rows[CriterionOutcomeRow].append(
                    _row(o) | {"id": None, "evaluation_id": emap[ev.id]}
                )
            for f in failures:
                rows[JudgeFailureRow].append(_row(f) | {"id": None, "evaluation_id": emap[ev.id]})
        for model in _ORDER:
            batch = rows[model]
            for row in batch:
                if row.get("id") is None:
                    row.pop("id", None)
            if batch:
                s.execute(insert(model), batch)
        if s.get_bind().dialect.name == "postgresql":  # explicit ids: move the sequences on
            for model in (Artifact, RenderRecord, Evaluation):
                table = model.__table__.name
                s.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT max(id) FROM {table}))"
                    )
                )
    return ids


_ORDER = (Run, Artifact, RenderRecord, StageRecord, CheckResultRow, Evaluation, VerdictRow,
          CriterionOutcomeRow, JudgeFailureRow)  # fmt: skip


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
