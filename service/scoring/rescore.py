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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
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
from service.scoring.evaluator import PanelEvaluator, judging_pool
from service.scoring.models import RescoreBatch, RescoreItem
from service.stages import gather_eval_input, render_compute, render_version
from service.static_jury import apply_machinery_rule
from tasks import TaskSpec

_Prepared = tuple[str, TaskSpec, StageContext, EvalInput, dict[str, Any], list[judges.Verdict]]
_Started = tuple[str, TaskSpec, StageContext, EvalInput, dict[str, Any], Future[EvalOutput] | str]
_Pending = tuple[str, TaskSpec, StageContext, EvalInput, EvalOutput, dict[str, Any]]
RENDER_STAGE = Stage("render", render_version, render_compute)
CHUNK = 200
#: Batches of at least this many runs are judged in worker processes (smaller ones in-process).
PROCESS_MIN = 20
#: With worker processes, judged runs are written once this many are ready.
WRITE_MIN = 8

try:  # the review area is optional (imported once, not inside the first batch)
    from service.review.store import human_verdicts_for_run
except ImportError:  # pragma: no cover - review area absent
    human_verdicts_for_run = None  # type: ignore[assignment]


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
    use_processes: bool = False,
) -> RescoreResult:
    """Re-judge the stored runs of ``task_ref`` with ``panel_id`` (and optionally another rubric
    version ``rubric``), appending one evaluation per run. See the module docstring.

    With ``use_processes`` (off by default: forking a process that runs other threads, such as
    the server's, can deadlock, and on two busy cores it measured no faster), batches of at
    least ``PROCESS_MIN`` runs are judged by ``workers`` forked processes: each
    run is handed over as soon as its stored input is read, and judged runs are written (a few
    per transaction) while later ones are still read and judged. Smaller batches are read in
    chunks, judged by ``workers`` threads, then written in one transaction per chunk."""
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
    inputs = _inputs(db, runs, tasks, rubric, cached, components, renderer, result, progress)
    use_pool = use_processes and len(runs) >= PROCESS_MIN
    procs = judging_pool(evaluator, max(1, workers - 1)) if use_pool else None
    if procs is not None:
        with procs:
            _judge_in_processes(db, cached, evaluator, procs, inputs, result)
    else:
        _judge_in_threads(db, cached, evaluator, max(1, workers), inputs, result)
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


def _inputs(
    db: Database,
    runs: Sequence[Run],
    tasks: dict[str, TaskSpec],
    rubric: TaskSpec | None,
    blobs: BlobStore,
    components: Components,
    renderer: Renderer | None,
    result: RescoreResult,
    progress: Callable[[int, int], None] | None,
) -> Iterator[_Prepared]:
    """Each run's stored evaluation input, rendering first when its render profile changed
    (runs that cannot be re-rendered are recorded in ``result.skipped`` and not yielded)."""
    for n, run in enumerate(runs, 1):
        task = rubric or tasks[run.id]
        ctx = StageContext(db, blobs, components, run.id, task)
        human: list[judges.Verdict] = []
        if human_verdicts_for_run is not None:  # the run's human verdicts are carried forward
            with db.read() as s:
                human = list(human_verdicts_for_run(s, run.id))
        if _profile_changed(db, ctx):  # the render profile changed: render again, say so
            if renderer is None or not run_stage(ctx, RENDER_STAGE):
                result.skipped[run.id] = "render profile changed; re-render not possible"
                continue
            result.rerendered.append(run.id)
        inp, stages = gather_eval_input(ctx)
        yield run.id, task, ctx, inp, stages, human
        if progress is not None:
            progress(n, len(runs))


def _judge_in_threads(
    db: Database,
    blobs: BlobStore,
    evaluator: PanelEvaluator,
    workers: int,
    inputs: Iterator[_Prepared],
    result: RescoreResult,
) -> None:
    """Read a chunk, judge it on ``workers`` threads, write it; until no input is left."""
    prepared: list[_Prepared] = []
    pending: list[_Pending] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:

        def flush() -> None:
            outs = evaluator.evaluate_many([(p[3], p[5]) for p in prepared], pool)
            for (run_id, task, ctx, inp, stages, _h), out in zip(prepared, outs, strict=True):
                pending.append((run_id, task, ctx, inp, out, stages))
            prepared.clear()
            _write(db, blobs, pending, result)

        for item in inputs:
            prepared.append(item)
            if len(prepared) >= CHUNK:
                flush()
        flush()


def _judge_in_processes(
    db: Database,
    blobs: BlobStore,
    evaluator: PanelEvaluator,
    procs: Executor,
    inputs: Iterator[_Prepared],
    result: RescoreResult,
) -> None:
    """Hand each input to the judging processes as soon as it is read; write judged runs (in
    run order) whenever ``WRITE_MIN`` are ready, and the rest at the end."""
    started: list[_Started] = []
    pending: list[_Pending] = []

    def flush(wait: bool) -> None:
        while started and (wait or evaluator.done(started[0][5])):
            run_id, task, ctx, inp, stages, handle = started.pop(0)
            pending.append((run_id, task, ctx, inp, evaluator.finish(handle), stages))
        _write(db, blobs, pending, result)

    for run_id, task, ctx, inp, stages, human in inputs:
        handle = evaluator.start(inp, human, procs)
        started.append((run_id, task, ctx, inp, stages, handle))
        waiting = (i for i, it in enumerate(started) if not evaluator.done(it[5]))
        ready = next(waiting, len(started))  # judged runs at the head of the queue
        if ready >= WRITE_MIN or len(started) >= CHUNK:
            flush(wait=len(started) >= CHUNK)
    flush(wait=True)


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
    pending: list[_Pending],
    result: RescoreResult,
) -> None:
    """Append the evaluations of a chunk of runs in one transaction (evaluations inserted in
    one flush, then their verdicts, failures, outcomes and batch items in another)."""
    if not pending:
        return
    resolved = [resolve_refs(ctx, out.verdicts) for _, _, ctx, _, out, _ in pending]
    with db.write() as s:
        ids = [p[0] for p in pending]
        run_rows = {r.id: r for r in s.scalars(select(Run).where(Run.id.in_(ids)))}
        prev_ids = [r.current_evaluation_id for r in run_rows.values() if r.current_evaluation_id]
        prevs = {e.id: e for e in s.scalars(select(Evaluation).where(Evaluation.id.in_(prev_ids)))}
        added: list[tuple[Run, Evaluation, _Pending, list[dict[str, Any]]]] = []
        for item, verdicts in zip(pending, resolved, strict=True):
            run_id, task, _ctx, inp, out, stages = item
            run = run_rows[run_id]
            previous = prevs.get(run.current_evaluation_id or -1)
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
            added.append((run, ev, item, verdicts))
        s.flush()
        for run, ev, (run_id, *_rest, out, _stages), verdicts in added:
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
