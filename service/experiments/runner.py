"""Running an experiment resumably: generate each missing case, then wait for its runs.

Each (arm, item) asks the generator for its repeats under stable case keys
(``EXPERIMENT:ARM:ITEM:REPEAT``); a case whose key is stored is skipped, and a key the generator
already generated (the process died before the case row was written) comes back as its
existing run without a second call to the model. So an interrupted experiment continues where
it stopped and nothing is generated twice.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import func, or_, select

from service.experiments.generator import CaseOptions, Generator
from service.experiments.judging import panel_of
from service.experiments.plan import Case, case_key, prompt_for, prompt_sha256
from service.experiments.store import add_cases, get_experiment, plan_of, set_status, stored_keys
from service.generation.revise import ReviseOptions
from service.generation.runner import Progress
from service.storage import ExperimentCaseRow, Run, RunRevisionRow

if TYPE_CHECKING:
    from service.context import ServiceContext


@dataclass(frozen=True)
class RunResult:
    """How a call of :func:`run_experiment` ended."""

    experiment_id: str
    status: str
    """``done``, ``evaluating`` (runs not judged when the wait ended) or ``interrupted``."""
    generated: int
    """Cases stored by this call (a resumed experiment counts only the missing ones)."""
    planned: int


def generate_cases(
    ctx: ServiceContext,
    ident: str,
    generator: Generator,
    *,
    token_id: int | None,
    stop: threading.Event | None = None,
    on_progress: Progress | None = None,
) -> tuple[int, bool]:
    """Generate every case not stored yet; (cases stored now, whether it finished).

    ``on_progress`` is called with (cases stored, cases planned).
    """
    plan = plan_of(get_experiment(ctx.db, ident))
    done = stored_keys(ctx.db, ident)
    planned = len(plan.arms) * len(plan.items) * plan.repeats
    new = 0
    set_status(ctx.db, ident, "generating")
    if on_progress is not None:
        on_progress(len(done), planned)
    for arm in plan.arms:
        for item in plan.items:
            if stop is not None and stop.is_set():
                set_status(ctx.db, ident, "interrupted")
                return new, False
            keys = [case_key(ident, arm.name, item, r) for r in range(plan.repeats)]
            if all(k in done for k in keys):
                continue
            task = ctx.registry.get(arm.refs[item])
            options: CaseOptions = {
                "token_id": token_id,
                "prompt": prompt_for(arm, task),
                "panel": panel_of(plan, task.ref),
                "case_keys": keys,
                "job": ident,
            }
            if arm.revise:
                options["revise"] = ReviseOptions(arm.revise, findings=arm.revise_findings)
            run_ids = generator.generate(ctx, task.ref, arm.model, plan.repeats, **options)
            facts = generator.facts(ctx, run_ids)
            digest = prompt_sha256(arm, task)
            rows = [
                (Case(arm, item, r), task.ref, facts[run_id], digest)
                for r, run_id in enumerate(run_ids)
            ]
            new += add_cases(ctx.db, ident, rows)
            done.update(keys)
            if on_progress is not None:
                on_progress(len(done), planned)
    set_status(ctx.db, ident, "evaluating")
    return new, True


def runs_left(ctx: ServiceContext, ident: str) -> int:
    """How many of the experiment's runs (revision rounds included) are not done yet."""
    cases = select(ExperimentCaseRow.run_id).where(ExperimentCaseRow.experiment_id == ident)
    revised = select(RunRevisionRow.run_id).where(RunRevisionRow.first_run_id.in_(cases))
    with ctx.db.read() as s:
        left = s.scalar(
            select(func.count())
            .select_from(Run)
            .where(or_(Run.id.in_(cases), Run.id.in_(revised)), Run.status != "done")
        )
    return int(left or 0)


def wait_for_runs(
    ctx: ServiceContext,
    ident: str,
    *,
    timeout_s: float,
    stop: threading.Event | None = None,
    poll_s: float = 0.2,
) -> bool:
    """Wait until every run of the experiment is done (then mark it done); True when it is."""
    deadline = time.monotonic() + timeout_s
    while runs_left(ctx, ident) > 0:
        if time.monotonic() > deadline or (stop is not None and stop.is_set()):
            return False
        time.sleep(poll_s)
    set_status(ctx.db, ident, "done")
    return True


def run_experiment(
    ctx: ServiceContext,
    ident: str,
    generator: Generator,
    *,
    token_id: int | None,
    stop: threading.Event | None = None,
    wait_s: float = 3600.0,
    on_progress: Progress | None = None,
) -> RunResult:
    """Generate what is missing, then wait up to ``wait_s`` for the runs to be judged."""
    plan = plan_of(get_experiment(ctx.db, ident))
    planned = len(plan.arms) * len(plan.items) * plan.repeats
    new, finished = generate_cases(
        ctx, ident, generator, token_id=token_id, stop=stop, on_progress=on_progress
    )
    if not finished:
        return RunResult(ident, "interrupted", new, planned)
    if wait_for_runs(ctx, ident, timeout_s=wait_s, stop=stop):
        return RunResult(ident, "done", new, planned)
    if stop is not None and stop.is_set():
        set_status(ctx.db, ident, "interrupted")
        return RunResult(ident, "interrupted", new, planned)
    return RunResult(ident, "evaluating", new, planned)
