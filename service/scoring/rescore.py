"""Append-only re-scoring of stored runs with another judge panel or rubric version.

Each run is re-judged from its STORED frames, masks, check report and render log (read from the
artifact store by sha256). Nothing is rendered unless the render profile (or renderer) the new
rubric asks for has no stored render for the run: then the normal render stage runs and the run
is listed in ``rerendered``. Every run gets a new ``Evaluation`` (``kind = "rescore"``,
``supersedes_id`` = the one it replaces); the run's current-outcome pointer moves to it; the old
evaluation stays readable. The batch and its items are recorded in ``rescore_batches`` /
``rescore_items``; the batch's state and progress live in its summary
(:mod:`service.scoring.batches`): ``running`` with ``done`` of ``runs``, then ``done`` or
``failed``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

import judges
from regua.errors import InputError, NotFoundError
from regua.settings import Settings
from service.artifacts import BlobStore
from service.components import Components, EvalOutput, Renderer
from service.db import Database, Evaluation, Run
from service.eval_input import StoredRun, load_eval_inputs
from service.judgement import JudgementBatch, resolve_refs_by_name, store_measurements
from service.pipeline import Stage, StageContext, load_task, run_stage
from service.scoring import batches
from service.scoring.batches import BatchProgress
from service.scoring.cached_blobs import CachedBlobs
from service.scoring.calibration import latest_eligibility
from service.scoring.evaluator import PanelEvaluator, judging_pool
from service.scoring.models import RescoreItem
from service.scoring.standins import NoChecker, NoEvaluator, NoRenderer
from service.stages import render_compute, render_version
from service.static_jury import apply_machinery_rule
from tasks import TaskSpec

_Prepared = tuple[StoredRun, TaskSpec, list[judges.Verdict]]
_Started = tuple[StoredRun, TaskSpec, Future[EvalOutput] | str]
_Pending = tuple[StoredRun, TaskSpec, EvalOutput]
log = logging.getLogger("regua.rescore")
RENDER_STAGE = Stage("render", render_version, render_compute)
CHUNK = 200
#: Runs whose stored inputs are read together (a few queries per chunk, not ~10 per run).
READ_CHUNK = 100
#: Batches of at least this many runs are judged in worker processes (smaller ones in-process).
PROCESS_MIN = 20
#: With worker processes, judged runs are written once this many are ready.
WRITE_MIN = 8

HumanVerdicts = Callable[[Session, Sequence[str]], dict[str, list[judges.Verdict]]]


def _human_verdicts_source() -> HumanVerdicts | None:
    """The review area's reader of resolved human labels (None when that area is absent)."""
    try:
        from service.review.store import human_verdicts_for_runs
    except ImportError:  # pragma: no cover - review area absent
        return None
    return human_verdicts_for_runs


#: imported once, not inside the first batch
human_verdicts_for_runs = _human_verdicts_source()


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
    remeasured: int = 0
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
            "remeasured": self.remeasured,
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


@dataclass
class RescorePlan:
    """A checked re-scoring request: the panel, the runs and each run's frozen task."""

    panel: judges.JudgePanel
    runs: list[Run]
    tasks: dict[str, TaskSpec]
    eligibility: dict[tuple[str, str, str], bool]


def plan_rescore(
    db: Database,
    *,
    task_ref: str,
    panel_id: str,
    run_ids: Sequence[str] | None = None,
    rubric: TaskSpec | None = None,
) -> RescorePlan:
    """Check a request without changing anything: the panel and its profiles exist
    (:class:`NotFoundError`), so do the selected runs (:class:`NotFoundError`), and the rubric
    and panel fit the runs' task (:class:`InputError`)."""
    panel = judges.get_panel(panel_id)
    for profile_id in panel.profile_ids():
        judges.get_profile(profile_id)
    with db.read() as s:
        runs = select_runs(s, task_ref, run_ids)
        tasks = {r.id: load_task(s, r) for r in runs}
        eligibility = latest_eligibility(s)
    if rubric is not None and any(t.id != rubric.id for t in tasks.values()):
        raise InputError(f"rubric {rubric.ref} is not a version of the runs' task")
    if any(t.family != panel.family for t in tasks.values()):
        raise InputError(f"panel {panel.id} is for family {panel.family!r}")
    return RescorePlan(panel, runs, tasks, eligibility)


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
    batch_id: str | None = None,
) -> RescoreResult:
    """Re-judge the stored runs of ``task_ref`` with ``panel_id`` (and optionally another rubric
    version ``rubric``), appending one evaluation per run. See the module docstring.

    ``batch_id`` names the batch (a new id by default): a batch the caller opened ``running``
    (:func:`service.scoring.batches.open_batch`, so it could answer with the id before the work
    began) is taken over. Progress (``done`` of ``runs``) is written with the evaluations; if
    anything raises once the batch is open, it is recorded ``failed`` and the error propagates.
    A request refused by :func:`plan_rescore` opens no batch.

    With ``use_processes`` (off by default: forking a process that runs other threads, such as
    the server's, can deadlock, and on two busy cores it measured no faster), batches of at
    least ``PROCESS_MIN`` runs are judged by ``workers`` forked processes: each
    run is handed over as soon as its stored input is read, and judged runs are written (a few
    per transaction) while later ones are still read and judged. Smaller batches are read in
    chunks, judged by ``workers`` threads, then written in one transaction per chunk."""
    started = time.perf_counter()
    result = RescoreResult(batch_id or batches.new_batch_id(), task_ref, panel_id)
    bid = result.batch_id
    try:
        plan = plan_rescore(db, task_ref=task_ref, panel_id=panel_id, run_ids=run_ids,
                            rubric=rubric)  # fmt: skip
        result.panel_id, n = plan.panel.id, len(plan.runs)
        batches.open_batch(db, bid, task_ref=task_ref, panel=plan.panel, runs=n,
                           requested_by=requested_by, note=note)  # fmt: skip
        tracker = BatchProgress(bid, n)
        evaluator = PanelEvaluator(
            plan.panel, eligibility=plan.eligibility, settings=settings, memo=memo
        )
        cached = CachedBlobs(blobs)
        components = Components(NoChecker(), renderer or NoRenderer(), NoEvaluator())
        inputs = _inputs(db, plan.runs, plan.tasks, rubric, cached, components, renderer, result,
                         progress)  # fmt: skip
        use_pool = use_processes and n >= PROCESS_MIN
        procs = judging_pool(evaluator, max(1, workers - 1)) if use_pool else None
        if procs is not None:
            with procs:
                _judge_in_processes(db, cached, evaluator, procs, inputs, result, tracker)
        else:
            _judge_in_threads(db, cached, evaluator, max(1, workers), inputs, result, tracker)
        result.judged, result.memo_hits = evaluator.judged, evaluator.memo_hits
        result.blob_reads = cached.reads
        result.elapsed_s = time.perf_counter() - started
        summary = result.to_dict()
        summary.pop("evaluations")
        batches.finish_batch(db, bid, {"runs": n, "done": _done(result), **summary})
    except BaseException as exc:
        try:
            batches.fail_batch(db, bid, exc, _done(result), time.perf_counter() - started)
        except Exception:  # the original error matters more than this one
            log.exception("could not record re-scoring batch %s as failed", bid)
        raise
    return result


def _done(result: RescoreResult) -> int:
    """Runs of the batch finished so far: appended or skipped."""
    return len(result.appended) + len(result.skipped)


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
    """Each run's stored evaluation input (read ``READ_CHUNK`` runs at a time), rendering first
    when its render profile changed (runs that cannot be re-rendered are recorded in
    ``result.skipped`` and not yielded)."""
    done = 0
    for start in range(0, len(runs), READ_CHUNK):
        chunk = {r.id: rubric or tasks[r.id] for r in runs[start : start + READ_CHUNK]}
        stored = load_eval_inputs(db, blobs, chunk, chunk)
        humans: dict[str, list[judges.Verdict]] = {}
        if human_verdicts_for_runs is not None:  # the runs' human verdicts are carried forward
            with db.read() as s:
                humans = human_verdicts_for_runs(s, list(chunk))
        for item in stored:
            task = chunk[item.run_id]
            record_id = item.stages["render"].get("render_record_id")
            if record_id is not None and item.render_profile_id != task.render.id:
                # the render profile changed: render again, and say so
                ctx = StageContext(db, blobs, components, item.run_id, task)
                if renderer is None or not run_stage(ctx, RENDER_STAGE):
                    result.skipped[item.run_id] = "render profile changed; re-render not possible"
                    continue
                result.rerendered.append(item.run_id)
                item = load_eval_inputs(db, blobs, {item.run_id: task}, [item.run_id])[0]
            yield item, task, humans.get(item.run_id, [])
            done += 1
            if progress is not None:
                progress(done, len(runs))


def _judge_in_threads(
    db: Database,
    blobs: BlobStore,
    evaluator: PanelEvaluator,
    workers: int,
    inputs: Iterator[_Prepared],
    result: RescoreResult,
    tracker: BatchProgress,
) -> None:
    """Read a chunk, judge it on ``workers`` threads, write it; until no input is left."""
    prepared: list[_Prepared] = []
    pending: list[_Pending] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:

        def flush() -> None:
            outs = evaluator.evaluate_many([(p[0].inp, p[2]) for p in prepared], pool)
            for (item, task, _human), out in zip(prepared, outs, strict=True):
                pending.append((item, task, out))
            prepared.clear()
            _write(db, blobs, pending, result, tracker)

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
    tracker: BatchProgress,
) -> None:
    """Hand each input to the judging processes as soon as it is read; write judged runs (in
    run order) whenever ``WRITE_MIN`` are ready, and the rest at the end."""
    started: list[_Started] = []
    pending: list[_Pending] = []

    def flush(wait: bool) -> None:
        while started and (wait or evaluator.done(started[0][2])):
            item, task, handle = started.pop(0)
            pending.append((item, task, evaluator.finish(handle)))
        _write(db, blobs, pending, result, tracker)

    for item, task, human in inputs:
        started.append((item, task, evaluator.start(item.inp, human, procs)))
        waiting = (i for i, it in enumerate(started) if not evaluator.done(it[2]))
        ready = next(waiting, len(started))  # judged runs at the head of the queue
        if ready >= WRITE_MIN or len(started) >= CHUNK:
            flush(wait=len(started) >= CHUNK)
    flush(wait=True)


def _write(
    db: Database,
    blobs: BlobStore,
    pending: list[_Pending],
    result: RescoreResult,
    tracker: BatchProgress,
) -> None:
    """Append the evaluations of a chunk of runs in one transaction (evaluations inserted in
    one flush, then their verdicts, failures, outcomes and batch items in one statement each,
    and the batch's progress when due)."""
    if not pending:
        return
    with db.write() as s:
        ids = [item.run_id for item, _, _ in pending]
        run_rows = {r.id: r for r in s.scalars(select(Run).where(Run.id.in_(ids)))}
        prev_ids = [r.current_evaluation_id for r in run_rows.values() if r.current_evaluation_id]
        prevs = {e.id: e for e in s.scalars(select(Evaluation).where(Evaluation.id.in_(prev_ids)))}
        added: list[tuple[Run, Evaluation, _Pending]] = []
        for entry in pending:
            item, task, out = entry
            inp, stages = item.inp, item.stages
            run = run_rows[item.run_id]
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
                run_id=item.run_id,
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
            added.append((run, ev, entry))
        s.flush()
        judgements = JudgementBatch()
        items: list[dict[str, Any]] = []
        for run, ev, (item, _task, out) in added:
            verdicts = resolve_refs_by_name(out.verdicts, item.artifact_names)
            judgements.add(s, blobs, item.run_id, ev.id, verdicts, out.failures, out.criteria)
            if out.measurements:  # judging measured something its stored memo lacked
                store_measurements(s, blobs, item.run_id, out.measurements)
                result.remeasured += 1
            items.append(
                {
                    "batch_id": result.batch_id,
                    "run_id": item.run_id,
                    "evaluation_id": ev.id,
                    "previous_evaluation_id": run.current_evaluation_id,
                    "rerendered": item.run_id in result.rerendered,
                }
            )
            result.appended.append((item.run_id, ev.id, run.current_evaluation_id))
            run.outcome, run.outcome_cause = ev.outcome, ev.cause
            run.current_evaluation_id = ev.id
        judgements.flush(s)
        s.execute(insert(RescoreItem), items)
        tracker.write_if_due(s, _done(result))
    pending.clear()
