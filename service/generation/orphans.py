"""Generation and experiment jobs a killed process left behind, found when the API starts.

A process killed while it ran a generate job leaves the job's row ``running`` (a generation) or
``created``/``generating`` (an experiment) with nobody running it. :func:`recover_generate_jobs`
runs when the API starts (:func:`service.server.app.create_app`'s lifespan):

- embedded (the API process runs its own generate jobs and is the only one on its database, so
  any job still ``running`` lost its process): a generation is resumed on this process's
  generate runner (the repeats and rounds already stored are not asked again; a call cut off
  by the kill is sent again with its ``Idempotency-Key`` and counted as re-sent); an
  experiment, whose generator is not stored, becomes ``interrupted`` with the cause (posting
  the same file again resumes it);
- procrastinate: only jobs whose ``generate`` queue job is neither waiting nor running are
  touched (a worker runs the others, or takes them over once their worker's heartbeat is
  stale): they become ``interrupted`` with the cause, resumable by ``POST .../resume``.

The runs already stored stay in every case.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from sqlalchemy import select, update

from service.context import ServiceContext
from service.generation import jobs as generation_jobs
from service.pipeline.pgqueue import live_generate_jobs
from service.storage import ExperimentRow, GenerationJobRow, utcnow

log = logging.getLogger("regua.generation")
EXPERIMENT_KIND = "experiment"
"""The generate-job kind of experiments (``service.experiments.jobs.KIND``)."""
EXPERIMENT_GENERATING = ("created", "generating")
"""Experiment states of a job still generating (``service.experiments.jobs.GENERATING``)."""
KILLED_CAUSE = "the process running it stopped before its end (killed); resume it to go on"
EXPERIMENT_CAUSE = (
    "the process generating it stopped before its end (killed); post the same file again to go on"
)


@dataclass
class Recovered:
    """What the start found: generations resumed, generations and experiments interrupted."""

    resumed: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    experiments_interrupted: list[str] = field(default_factory=list)


def _left_running(ctx: ServiceContext) -> tuple[list[str], list[str]]:
    """Ids of generations still ``running`` and experiments still generating."""
    with ctx.db.read() as s:
        gens = list(
            s.scalars(select(GenerationJobRow.id).where(GenerationJobRow.state == "running"))
        )
        exps = list(
            s.scalars(
                select(ExperimentRow.id).where(ExperimentRow.status.in_(EXPERIMENT_GENERATING))
            )
        )
    return gens, exps


def _live_on_queue(ctx: ServiceContext) -> tuple[set[str], set[str]]:
    """Generation and experiment ids whose ``generate`` queue job waits or runs."""
    with ctx.db.read() as s:
        live = live_generate_jobs(s)
    gens = {str(a.get("job_id")) for k, a in live if k == generation_jobs.KIND}
    exps = {str(a.get("experiment_id")) for k, a in live if k == EXPERIMENT_KIND}
    return gens, exps


def _interrupt(ctx: ServiceContext, gens: list[str], exps: list[str]) -> None:
    with ctx.db.write() as s:
        if gens:
            s.execute(
                update(GenerationJobRow)
                .where(GenerationJobRow.id.in_(gens), GenerationJobRow.state == "running")
                .values(state="interrupted", error=KILLED_CAUSE, updated_at=utcnow())
            )
        if exps:
            s.execute(
                update(ExperimentRow)
                .where(
                    ExperimentRow.id.in_(exps),
                    ExperimentRow.status.in_(EXPERIMENT_GENERATING),
                )
                .values(status="interrupted", error=EXPERIMENT_CAUSE)
            )


def recover_generate_jobs(ctx: ServiceContext) -> Recovered:
    """Resume or interrupt the generate jobs a killed process left; what was done.

    Call it once when the API starts, before it takes requests (see the module docstring).
    """
    gens, exps = _left_running(ctx)
    found = Recovered()
    if ctx.dispatcher.name == "embedded":
        found.experiments_interrupted = exps
        _interrupt(ctx, [], exps)
        for job_id in gens:
            ctx.start_generate(generation_jobs.KIND, {"job_id": job_id}, job_id)
            found.resumed.append(job_id)
    else:
        live_gens, live_exps = _live_on_queue(ctx)
        found.interrupted = [g for g in gens if g not in live_gens]
        found.experiments_interrupted = [e for e in exps if e not in live_exps]
        _interrupt(ctx, found.interrupted, found.experiments_interrupted)
    for what, ids in (
        ("resumed generation", found.resumed),
        ("interrupted generation", found.interrupted),
        ("interrupted experiment", found.experiments_interrupted),
    ):
        for ident in ids:
            log.warning("%s %s: its process was killed before the job's end", what, ident)
    return found
