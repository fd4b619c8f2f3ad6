"""Append-only re-scoring of stored runs with another judge panel or rubric version.

Each run is re-judged from its STORED frames, masks, check report and render log (read from the
artifact store by sha256), with the run's resolved human verdicts carried forward. Nothing is
rendered unless the render profile the new rubric asks for has no stored render for the run:
then the caller's ``rerender`` (the pipeline's render stage) runs and the run is listed in
``rerendered``. Every run gets a new evaluation (``kind = "rescore"``) through the one writer;
the run's current-outcome pointer moves to it; the old evaluation stays readable. The batch
and its items are recorded in ``rescore_batches`` / ``rescore_items``
(:mod:`service.evaluation.batches` keeps the state and progress).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from regua.errors import InputError, NotFoundError
from regua.settings import Settings
from service.evaluation import batches
from service.evaluation.batches import BatchProgress
from service.evaluation.evaluator import Evaluator, gate_source
from service.evaluation.gate import gate_table
from service.evaluation.humans import human_verdicts_for_runs
from service.evaluation.inputs import load_eval_inputs
from service.evaluation.rescore_batch import BatchWork, Prepared
from service.evaluation.rescore_result import RescoreResult

__all__ = [
    "Rerender",
    "RescoreOptions",
    "RescorePlan",
    "RescoreRequest",
    "RescoreResult",
    "plan_rescore",
    "rescore",
    "select_runs",
]
from service.storage import Database, Run, TaskRow
from service.storage.blobs import BlobStore
from service.storage.cached_blobs import CachedBlobs
from tasks import TaskSpec

log = logging.getLogger("regua.rescore")

Rerender = Callable[[str, TaskSpec], bool]
"""``rerender(run_id, task)`` renders a run again under ``task``'s render profile (the
pipeline's render stage); True once a render is recorded."""

READ_CHUNK = 100
"""Runs whose stored inputs are read together (a few queries per chunk, not ~10 per run)."""
PROCESS_MIN = 20
"""Batches of at least this many runs are judged in worker processes (when asked for)."""


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


def plan_rescore(
    db: Database,
    *,
    task_ref: str,
    panel_id: str,
    run_ids: Sequence[str] | None = None,
    rubric: TaskSpec | None = None,
) -> RescorePlan:
    """Check a re-scoring request without changing anything.

    The panel and its profiles exist (:class:`NotFoundError`), so do the selected runs
    (:class:`NotFoundError`), and the rubric and panel fit the runs' task (:class:`InputError`).
    """
    panel = judges.get_panel(panel_id)
    for profile_id in panel.profile_ids():
        judges.get_profile(profile_id)
    with db.read() as s:
        runs = select_runs(s, task_ref, run_ids)
        pks = {r.task_pk for r in runs}  # only the runs' task versions are parsed
        specs = {
            pk: TaskSpec.model_validate(spec)
            for pk, spec in s.execute(select(TaskRow.id, TaskRow.spec).where(TaskRow.id.in_(pks)))
        }
    tasks = {r.id: rubric or specs[r.task_pk] for r in runs}
    if rubric is not None and any(specs[r.task_pk].id != rubric.id for r in runs):
        raise InputError(f"rubric {rubric.ref} is not a version of the runs' task")
    if any(not panel.fits(t.family) for t in tasks.values()):
        raise InputError(f"panel {panel.id} is for family {panel.family!r}")
    return RescorePlan(panel, runs, tasks)


@dataclass
class RescoreOptions:
    """How a batch runs: who asked, its id, threads or processes, and progress reporting."""

    settings: Settings | None = None
    requested_by: int | None = None
    note: str | None = None
    batch_id: str | None = None
    memo: bool = True
    workers: int = 2
    use_processes: bool = False
    """Judge batches of at least :data:`PROCESS_MIN` runs in forked processes (off by default:
    forking a process that runs other threads, such as the server's, can deadlock)."""
    progress: Callable[[int, int], None] | None = None


@dataclass(frozen=True)
class RescoreRequest:
    """Which stored runs to re-judge, with which panel, under which rubric."""

    task_ref: str
    """``ID@VERSION`` (one task version) or a bare ``ID`` (every version)."""
    panel_id: str
    run_ids: Sequence[str] | None = None
    """Only these runs (default: every finished run of the task)."""
    rubric: TaskSpec | None = None
    """Judge under this version of the task instead of the runs' own."""


def rescore(
    db: Database,
    blobs: BlobStore,
    *,
    task_ref: str,
    panel_id: str,
    run_ids: Sequence[str] | None = None,
    rubric: TaskSpec | None = None,
    rerender: Rerender | None = None,
    evaluator: Evaluator | None = None,
    options: RescoreOptions | None = None,
) -> RescoreResult:
    """Re-judge stored runs with another panel, appending one evaluation per run.

    ``rubric`` judges under another version of the task; ``rerender`` renders a run whose
    render profile changed (without it such a run is skipped, with the reason); ``evaluator``
    supplies the gate and the settings (the service's; without one the stored gate is read).
    A batch the caller opened ``running`` under ``options.batch_id`` is taken over. Progress
    is written with the evaluations; if anything raises once the batch is open, it is
    recorded ``failed`` and the error propagates. A request refused by :func:`plan_rescore`
    opens no batch. See the module docstring.
    """
    opts = options or RescoreOptions()
    request = RescoreRequest(task_ref, panel_id, run_ids, rubric)
    started = time.perf_counter()
    result = RescoreResult(opts.batch_id or batches.new_batch_id(), task_ref, panel_id)
    try:
        _run_batch(db, blobs, request, rerender, evaluator, opts, result)
        result.elapsed_s = time.perf_counter() - started
        batches.finish_batch(db, result.batch_id, result.summary(result.done))
    except BaseException as exc:
        try:
            elapsed = time.perf_counter() - started
            batches.fail_batch(db, result.batch_id, exc, result.done, elapsed)
        except Exception:  # the original error matters more than this one
            log.exception("could not record re-scoring batch %s as failed", result.batch_id)
        raise
    return result


def _run_batch(
    db: Database,
    blobs: BlobStore,
    request: RescoreRequest,
    rerender: Rerender | None,
    evaluator: Evaluator | None,
    opts: RescoreOptions,
    result: RescoreResult,
) -> None:
    """Plan, open the batch, then read, judge and append chunk by chunk."""
    plan = plan_rescore(
        db,
        task_ref=request.task_ref,
        panel_id=request.panel_id,
        run_ids=request.run_ids,
        rubric=request.rubric,
    )
    n = len(plan.runs)
    batches.open_batch(
        db,
        result.batch_id,
        task_ref=request.task_ref,
        panel=plan.panel,
        runs=n,
        requested_by=opts.requested_by,
        note=opts.note,
    )
    judge = _evaluator(db, evaluator, opts)
    cached = CachedBlobs(blobs)
    work = BatchWork(db, cached, judge, plan.panel, result, BatchProgress(result.batch_id, n))
    inputs = _inputs(db, cached, plan, rerender, result, opts.progress)
    forked = opts.use_processes and n >= PROCESS_MIN
    pool = judge.process_pool(plan.panel, max(1, opts.workers - 1)) if forked else None
    if pool is not None:
        with pool:
            work.in_processes(pool, inputs)
    else:
        work.in_threads(max(1, opts.workers), inputs)
    result.judged, result.memo_hits = judge.judged, judge.memo_hits
    result.blob_reads = cached.reads


def _evaluator(db: Database, given: Evaluator | None, opts: RescoreOptions) -> Evaluator:
    """A fresh evaluator for the batch, judging it all under one reading of the gate.

    Its memo and counters are the batch's own.
    """
    if given is not None:
        eligibility = given.eligibility()
        return Evaluator(gate_source(eligibility), given.settings, memo=opts.memo)
    with db.read() as s:
        table = gate_table(s)
    return Evaluator(gate_source(table), opts.settings, memo=opts.memo)


def _inputs(
    db: Database,
    blobs: BlobStore,
    plan: RescorePlan,
    rerender: Rerender | None,
    result: RescoreResult,
    progress: Callable[[int, int], None] | None,
) -> Iterator[Prepared]:
    """Yield each run's stored evaluation input with its human verdicts.

    Inputs are read ``READ_CHUNK`` runs at a time. A run whose render profile changed is
    rendered first; one that cannot be rendered again is recorded in ``result.skipped`` and
    not yielded.
    """
    done = 0
    runs = plan.runs
    for start in range(0, len(runs), READ_CHUNK):
        chunk = {r.id: plan.tasks[r.id] for r in runs[start : start + READ_CHUNK]}
        stored = load_eval_inputs(db, blobs, chunk, chunk)
        with db.read() as s:
            humans = human_verdicts_for_runs(s, list(chunk))
        for item in stored:
            task = chunk[item.run_id]
            if item.versions.render_record_id is not None and item.render_profile_id != (
                task.render.id
            ):
                if rerender is None or not rerender(item.run_id, task):
                    result.skipped[item.run_id] = "render profile changed; re-render not possible"
                    continue
                result.rerendered.append(item.run_id)
                (item,) = load_eval_inputs(db, blobs, {item.run_id: task}, [item.run_id])
            yield item, humans.get(item.run_id, [])
            done += 1
            if progress is not None:
                progress(done, len(runs))
