"""Append-only re-scoring of stored runs with another judge panel or rubric version.

Each run is re-judged from its STORED frames, masks, check report and render log (read from the
artifact store by sha256). Nothing is rendered unless the render profile (or renderer) the new
rubric asks for has no stored render for the run: then the normal render stage runs and the run
is listed in ``rerendered``. Every run gets a new ``Evaluation`` (``kind = "rescore"``,
``supersedes_id`` = the one it replaces); the run's current-outcome pointer moves to it; the old
evaluation stays readable. The batch and its items are recorded in ``rescore_batches`` /
``rescore_items``.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from regua.errors import InputError, NotFoundError
from regua.settings import Settings
from service.artifacts import BlobStore
from service.components import CheckOutput, Components, EvalInput, EvalOutput, Renderer
from service.db import Database, Evaluation, RenderRecord, Run
from service.judgement import resolve_refs, store_judgement
from service.pipeline import Stage, StageContext, load_task, run_stage
from service.scoring.calibration import latest_eligibility
from service.scoring.evaluator import PanelEvaluator
from service.scoring.models import RescoreBatch, RescoreItem
from service.stages import gather_eval_input, render_compute, render_version
from service.static_jury import apply_machinery_rule
from tasks import TaskSpec

_Prepared = tuple[str, TaskSpec, StageContext, EvalInput, dict[str, Any], list[judges.Verdict]]
RENDER_STAGE = Stage("render", render_version, render_compute)
CHUNK = 200


class CachedBlobs:
    """Read-through cache over a blob store (clones of one render share their blobs)."""

    def __init__(self, inner: BlobStore, max_items: int = 4096) -> None:
        self.inner = inner
        self.max_items = max_items
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self.reads = 0

    def put(self, data: bytes) -> str:
        """Store bytes (write-through)."""
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        """Bytes of a blob, from the cache when read before."""
        data = self._cache.get(sha256)
        if data is None:
            self.reads += 1
            data = self.inner.get(sha256)
            self._cache[sha256] = data
            if len(self._cache) > self.max_items:
                self._cache.popitem(last=False)
        return data

    def exists(self, sha256: str) -> bool:
        """Whether the blob exists."""
        return sha256 in self._cache or self.inner.exists(sha256)

    def locate(self, sha256: str) -> str:
        """Where the blob lives."""
        return self.inner.locate(sha256)


class _NoRenderer:
    """Stands in when no renderer was given: version only; rendering is refused."""

    def __init__(self) -> None:
        from service.rendering import RENDERER_VERSION

        self.version = RENDERER_VERSION

    def render(self, svg_text: str, task: TaskSpec) -> Any:
        raise InputError("the render profile changed but no renderer is available")

    def close(self) -> None:
        """Nothing to release."""


class _NoChecker:
    version = "stored"

    def check(self, raw: bytes, task: TaskSpec) -> CheckOutput:
        raise InputError("re-scoring never re-runs the checks")


@dataclass
class RescoreResult:
    """What one re-scoring batch did."""

    batch_id: str
    task_ref: str
    panel_id: str
    appended: list[tuple[str, int, int | None]] = field(default_factory=list)
    rerendered: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    judged: int = 0
    memo_hits: int = 0
    blob_reads: int = 0
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (stored on the batch, returned by the API and CLI)."""
        return {
            "batch_id": self.batch_id,
            "task_ref": self.task_ref,
            "panel_id": self.panel_id,
            "evaluations": [
                {"run_id": r, "evaluation_id": e, "supersedes_id": p} for r, e, p in self.appended
            ],
            "appended": len(self.appended),
            "rerendered": list(self.rerendered),
            "rendered_nothing": not self.rerendered,
            "skipped": dict(self.skipped),
            "judged": self.judged,
            "memo_hits": self.memo_hits,
            "blob_reads": self.blob_reads,
            "elapsed_s": round(self.elapsed_s, 3),
        }


def select_runs(s: Session, task_ref: str, run_ids: Sequence[str] | None) -> list[Run]:
    """Finished runs of a task version (``ID@VERSION``) or of every version (bare ``ID``)."""
    q = select(Run).where(Run.status == "done")
    q = q.where(Run.task_ref == task_ref if "@" in task_ref else Run.task_ref.like(f"{task_ref}@%"))
    if run_ids:
        q = q.where(Run.id.in_(list(run_ids)))
    runs = list(s.scalars(q.order_by(Run.submitted_at, Run.id)).all())
    if run_ids:
        missing = set(run_ids) - {r.id for r in runs}
        if missing:
            raise NotFoundError(f"no finished runs of {task_ref} with ids {sorted(missing)}")
    return runs


def _human(s: Session, run_id: str) -> list[judges.Verdict]:
    try:
        from service.review.store import human_verdicts_for_run
    except ImportError:  # review area absent
        return []
    return list(human_verdicts_for_run(s, run_id))


def rescore(
    db: Database,
    blobs: BlobStore,
    *,
    task_ref: str,
    panel_id: str,
    run_ids: Sequence[str] | None = None,
    rubric: TaskSpec | None = None,
    renderer: Renderer | None = None,
    settings: Settings | None = None,
    requested_by: int | None = None,
    memo: bool = True,
    note: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 2,
) -> RescoreResult:
    """Re-judge the stored runs of ``task_ref`` with ``panel_id`` (and optionally another rubric
    version ``rubric``), appending one evaluation per run. See the module docstring.

    Inputs are read in chunks; ``workers`` threads judge a chunk (OpenCV and NumPy release the
    GIL), then the chunk's evaluations are written in one transaction."""
    started = time.perf_counter()
    panel = judges.get_panel(panel_id)
    with db.read() as s:
        runs = select_runs(s, task_ref, run_ids)
        tasks = {r.id: load_task(s, r) for r in runs}
        eligibility = latest_eligibility(s)
    if rubric is not None and any(t.id != rubric.id for t in tasks.values()):
        raise InputError(f"rubric {rubric.ref} is not a version of the runs' task")
    if any(t.family != panel.family for t in tasks.values()):
        raise InputError(f"panel {panel.id} is for family {panel.family!r}")
    evaluator = PanelEvaluator(panel, eligibility=eligibility, settings=settings, memo=memo)
    cached = CachedBlobs(blobs)
    components = Components(_NoChecker(), renderer or _NoRenderer(), _Unused())
    result = RescoreResult(f"rs_{uuid.uuid4().hex[:16]}", task_ref, panel.id)
    pending: list[tuple[str, TaskSpec, StageContext, EvalInput, EvalOutput, dict[str, Any]]] = []
    with db.write() as s:
        s.add(
            RescoreBatch(
                id=result.batch_id,
                task_ref=task_ref,
                panel_id=panel.id,
                panel=panel.to_dict(),
                requested_by=requested_by,
                summary={"state": "running", "runs": len(runs)},
                note=note,
            )
        )
    prepared: list[_Prepared] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:

        def flush() -> None:
            outs = evaluator.evaluate_many([(p[3], p[5]) for p in prepared], pool)
            for (run_id, task, ctx, inp, stages, _h), out in zip(prepared, outs, strict=True):
                pending.append((run_id, task, ctx, inp, out, stages))
            prepared.clear()
            _write(db, cached, pending, result)

        for n, run in enumerate(runs, 1):
            task = rubric or tasks[run.id]
            ctx = StageContext(db, cached, components, run.id, task)
            with db.read() as s:
                human = _human(s, run.id)
            if _profile_changed(db, ctx):  # the render profile changed: render again, say so
                if renderer is None or not run_stage(ctx, RENDER_STAGE):
                    result.skipped[run.id] = "render profile changed; re-render not possible"
                    continue
                result.rerendered.append(run.id)
            inp, stages = gather_eval_input(ctx)
            prepared.append((run.id, task, ctx, inp, stages, human))
            if len(prepared) >= CHUNK:
                flush()
            if progress is not None:
                progress(n, len(runs))
        flush()
    result.judged, result.memo_hits = evaluator.judged, evaluator.memo_hits
    result.blob_reads = cached.reads
    result.elapsed_s = time.perf_counter() - started
    with db.write() as s:
        batch = s.get(RescoreBatch, result.batch_id)
        assert batch is not None
        summary = result.to_dict()
        summary.pop("evaluations")
        batch.summary = {"state": "done", "runs": len(runs), **summary}
    return result


def _profile_changed(db: Database, ctx: StageContext) -> bool:
    """Whether the run's newest render used another render profile than ``ctx.task`` asks for
    (a new renderer version alone does not count: stored frames stay valid evidence)."""
    detail = ctx.detail("render") or {}
    record_id = detail.get("render_record_id")
    if record_id is None:  # never rendered (nothing to render): nothing changed
        return False
    with db.read() as s:
        rec = s.get(RenderRecord, record_id)
        profile = rec.render_profile_id if rec is not None else None
    return profile != ctx.task.render.id


class _Unused:
    panel_id = "rescore"

    def version_for(self, task: TaskSpec) -> str:
        return "rescore"

    def evaluate(self, inp: EvalInput) -> EvalOutput:
        raise InputError("re-scoring evaluates through PanelEvaluator")


def _write(
    db: Database,
    blobs: BlobStore,
    pending: list[tuple[str, TaskSpec, StageContext, EvalInput, EvalOutput, dict[str, Any]]],
    result: RescoreResult,
) -> None:
    """Append the evaluations of a chunk of runs in one transaction."""
    if not pending:
        return
    resolved = [resolve_refs(ctx, out.verdicts) for _, _, ctx, _, out, _ in pending]
    with db.write() as s:
        for (run_id, task, _ctx, inp, out, stages), verdicts in zip(pending, resolved, strict=True):
            run = s.get(Run, run_id)
            assert run is not None
            previous = s.get(Evaluation, run.current_evaluation_id or -1)
            checks_status = inp.checks.get("status") if inp.checks is not None else None
            outcome = apply_machinery_rule(
                out.outcome,
                checks_status,
                inp.render_status,
                inp.render_cause,
                stages["check"].get("error"),
            )
            record_id = stages["render"].get("render_record_id")
            ev = Evaluation(
                run_id=run_id,
                kind="rescore",
                supersedes_id=run.current_evaluation_id,
                task_ref=task.ref,
                rubric_hash=task.content_hash(),
                checker_version=previous.checker_version if previous else "unknown",
                render_profile_id=task.render.id if record_id else None,
                render_record_id=record_id,
                judge_panel=out.panel,
                outcome=outcome["status"],
                cause=outcome.get("cause"),
                reasons=list(outcome.get("reasons", [])),
            )
            s.add(ev)
            s.flush()
            store_judgement(s, blobs, run_id, ev, verdicts, out.failures, out.criteria)
            s.add(
                RescoreItem(
                    batch_id=result.batch_id,
                    run_id=run_id,
                    evaluation_id=ev.id,
                    previous_evaluation_id=run.current_evaluation_id,
                    rerendered=run_id in result.rerendered,
                )
            )
            result.appended.append((run_id, ev.id, run.current_evaluation_id))
            run.outcome, run.outcome_cause = ev.outcome, ev.cause
            run.current_evaluation_id = ev.id
    pending.clear()
