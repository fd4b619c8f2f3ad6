"""``/v1/pairwise``: the pairwise ranking, and jobs that compare stored runs (admin).

The ranking names models, so only admins read it (reviewers never see model names). A POST
starts a comparison job with the service's pairwise judge (its vision model from the
``REGUA_JUDGE_*`` settings), polled at ``/v1/pairwise/jobs/{id}``.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from judges.pairwise import pairwise_registry
from regua.errors import NotFoundError
from regua.views.jobs import JobView
from regua.views.pairwise import RankingView
from service.access.pools import check_task_access
from service.api.deps import Admin, Ctx
from service.api.text import SEED_MAX, Text
from service.pairwise.compare import PairRequest, plan_pairs, run_pairs
from service.pairwise.ranking import RankingQuery, pairwise_ranking
from service.pipeline.jobs import JobFields

router = APIRouter(prefix="/v1/pairwise", tags=["pairwise"])
JOB_URL = "/v1/pairwise/jobs/{}"


class ComparisonBody(BaseModel):
    """Compare stored runs of ``task`` on ``criterion``: given ``runs`` or ``models``."""

    task: Text = Field(max_length=200)
    criterion: Text = Field(max_length=200)
    runs: list[Annotated[Text, Field(max_length=200)]] = Field(default_factory=list, max_length=200)
    models: list[Annotated[Text, Field(max_length=200)]] = Field(
        default_factory=list, max_length=50
    )
    judge: Text = Field("vision-llm", max_length=200)


@router.get("/ranking", response_model=RankingView)
def get_ranking(
    ctx: Ctx,
    _admin: Admin,
    task: str = Query(description="the task version (ID@VERSION) compared"),
    criterion: str = Query(description="the criterion compared (rankings are never merged)"),
    judge: str | None = Query(None, description="the judge identity (needed when several)"),
    source: Literal["judges", "people"] = "judges",
    seed: int = Query(0, ge=0, le=SEED_MAX),
    resamples: int = Query(500, ge=50, le=5000),
) -> RankingView:
    """Bradley-Terry ranking with bootstrap intervals, Elo, marks and the confrontation matrix."""
    ctx.registry.get(task)  # an unknown task version is a 404
    n = ctx.settings.pairwise_min_comparisons
    q = RankingQuery(task, criterion, n, resamples, seed, judge=judge, source=source)
    return RankingView.model_validate(pairwise_ranking(ctx.db, q))


@router.post(
    "/comparisons", status_code=202, response_model=JobView, response_model_exclude_none=True
)
def create_comparisons(
    body: ComparisonBody, ctx: Ctx, caller: Admin, response: Response
) -> JobView:
    """Start a job judging the pairs (checked now: a bad request is a 4xx at once)."""
    check_task_access(ctx.db, ctx.registry, caller, [body.task])
    known = pairwise_registry().kinds()
    if body.judge not in known:
        raise NotFoundError(f"no pairwise judge {body.judge!r} (known: {', '.join(known)})")
    judge = pairwise_registry().create(body.judge, ctx.settings)
    req = PairRequest(body.task, body.criterion, tuple(body.runs), tuple(body.models))
    _task, pairs = plan_pairs(ctx.db, req)

    def work() -> JobFields:
        done = run_pairs(ctx.db, ctx.blobs, judge, req)
        return {
            "compared": done.compared,
            "position_biased": done.position_biased,
            "failures": done.failures,
        }

    info: JobFields = {"task": body.task, "criterion": body.criterion, "pairs": len(pairs)}
    job = ctx.job_runner().submit("pairwise", work, job_id=f"pj_{uuid.uuid4().hex[:16]}", info=info)
    response.headers["Location"] = JOB_URL.format(job.id)
    return job.view(JOB_URL.format(job.id))


@router.get("/jobs/{job_id}", response_model=JobView, response_model_exclude_none=True)
def get_job(job_id: str, ctx: Ctx, _admin: Admin) -> JobView:
    """A comparison job: ``state`` running|done|failed and its counts when done."""
    job = ctx.jobs.get(job_id) if ctx.jobs is not None else None
    if job is None or job.kind != "pairwise":
        raise NotFoundError(f"no pairwise job {job_id!r} (jobs are kept in memory)")
    return job.view(JOB_URL.format(job.id))
