"""Starting and watching experiments inside the service (``POST /v1/experiments``).

The cases are generated on the service's job runner; an experiment is ``evaluating`` until its
runs are judged by the executor, then ``done``. Stopping the service interrupts the job at the
next item (the experiment is ``interrupted``); posting the same file again resumes it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from regua.errors import QueueShareError
from service.access.pools import check_task_access, hidden_refs, sees_hidden
from service.access.tokens import Principal
from service.experiments.access import plan_refs
from service.experiments.generator import get_generator
from service.experiments.plan import resolve_plan
from service.experiments.runner import generate_cases, runs_left
from service.experiments.spec import ExperimentFile
from service.experiments.store import (
    get_experiment,
    open_experiment,
    plan_of,
    set_status,
    stored_keys,
)
from service.pipeline.jobs import Job, JobFields

if TYPE_CHECKING:
    from service.context import ServiceContext

MAX_RUNNING_PER_TOKEN = 2
"""Experiments one token may have generating at once (each holds a job of the runner)."""
RETRY_AFTER_S = 60
_RUNNING: dict[int | None, int] = {}
_RUNNING_LOCK = threading.Lock()


def _take_slot(token_id: int | None) -> None:
    """Count one more running experiment of ``token_id``; 429 past its share."""
    with _RUNNING_LOCK:
        running = _RUNNING.get(token_id, 0)
        if token_id is not None and running >= MAX_RUNNING_PER_TOKEN:
            raise QueueShareError(
                f"this token has {running} experiment(s) generating (at most "
                f"{MAX_RUNNING_PER_TOKEN}); retry when one finishes",
                RETRY_AFTER_S,
            )
        _RUNNING[token_id] = running + 1


def _free_slot(token_id: int | None) -> None:
    with _RUNNING_LOCK:
        _RUNNING[token_id] = max(0, _RUNNING.get(token_id, 0) - 1)


@dataclass(frozen=True)
class Started:
    """An experiment accepted by the service."""

    experiment_id: str
    resumed: bool
    job_id: str


def start_experiment(
    ctx: ServiceContext,
    spec: ExperimentFile,
    *,
    window: str,
    generator: str | None,
    caller: Principal,
) -> Started:
    """Check and store (or find) the experiment, then generate its missing cases in the background.

    Everything that can refuse the request (the file's tasks, versions, panel, the generator,
    a reserved task or an arm the caller may not run, a changed file or another token's
    experiment under a stored id) is checked before anything is stored.
    """
    gen = get_generator(generator)
    hidden: frozenset[str] = frozenset()
    if not sees_hidden(caller.role):
        with ctx.db.read() as s:
            hidden = hidden_refs(s, ctx.registry.all())
    plan = resolve_plan(spec, ctx.registry, hidden=hidden)
    check_task_access(ctx.db, ctx.registry, caller, plan_refs(plan))
    for arm in plan.arms:
        gen.check(ctx, next(iter(arm.refs.values())), arm.model, is_admin=caller.is_admin)
    token_id = caller.token_id
    _take_slot(token_id)  # before anything is stored
    try:
        ident, resumed = open_experiment(
            ctx.db, spec, plan, window, token_id, admin=caller.is_admin
        )
    except BaseException:
        _free_slot(token_id)
        raise
    stop = threading.Event()
    slot = threading.Lock()  # held while the slot is taken: freed exactly once
    slot.acquire()

    def free() -> None:
        if slot.locked():
            slot.release()
            _free_slot(token_id)

    def work() -> JobFields:
        try:
            new, finished = generate_cases(ctx, ident, gen, token_id=token_id, stop=stop)
        finally:
            free()
        return {"experiment_id": ident, "generated": new, "finished": finished}

    def cancelled(_job: Job) -> None:
        stop.set()

    try:
        job = ctx.job_runner().submit(
            "experiment", work, info={"experiment_id": ident}, on_cancel=cancelled
        )
    except BaseException:
        free()
        raise
    return Started(ident, resumed, job.id)


@dataclass(frozen=True)
class Progress:
    """How far an experiment got."""

    experiment_id: str
    status: str
    planned: int
    generated: int
    runs_left: int
    error: str | None


def experiment_progress(ctx: ServiceContext, ident: str) -> Progress:
    """The stored progress (an ``evaluating`` experiment whose runs are all done is ``done``)."""
    row = get_experiment(ctx.db, ident)
    plan = plan_of(row)
    planned = len(plan.arms) * len(plan.items) * plan.repeats
    generated = len(stored_keys(ctx.db, ident))
    left = runs_left(ctx, ident)
    status = row.status
    if status == "evaluating" and left == 0 and generated == planned:
        set_status(ctx.db, ident, "done")
        status = "done"
    return Progress(ident, status, planned, generated, left, row.error)
