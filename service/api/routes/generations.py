"""``/v1/generations``: the service calls a model for a task; each reply becomes a run."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, field_validator

from regua.errors import NotFoundError
from regua.views.jobs import GenerationJobView
from service.access.pools import check_task_access
from service.access.tokens import Principal
from service.api.deps import Ctx, Submitter
from service.api.text import Text
from service.context import ServiceContext
from service.generation import jobs
from service.generation.jobs import GenerationJob
from service.generation.policy import check_allowed
from service.generation.request import Api, GenerationParams, http_base_url
from service.generation.revise import MAX_ROUNDS, ReviseOptions
from service.generation.runner import check_generation

router = APIRouter(prefix="/v1/generations", tags=["generations"])


class GenerationRequest(BaseModel):
    """Call a model ``repeats`` times for a task and evaluate every reply as a run."""

    model_config = ConfigDict(extra="forbid")
    task: Text = Field(min_length=3, max_length=200, description="Task reference ID@VERSION")
    api: Api = Field(description="openai (any OpenAI-compatible chat API), anthropic, or mock")
    model: Text = Field(min_length=1, max_length=200)
    base_url: Text | None = Field(default=None, max_length=2000, description="e.g. .../v1")
    api_key_env: Text | None = Field(
        default=None,
        max_length=200,
        description="Environment variable of the SERVICE holding the key (the key never "
        "travels in a request, and is never logged or stored)",
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    label: Text | None = Field(default=None, max_length=200, description="Model label of runs")
    provider: Text | None = Field(
        default=None, max_length=200, description="Provider of runs (default: base URL's host)"
    )
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    repeats: int = Field(default=1, ge=1, le=1000)
    revise: int = Field(
        default=0,
        ge=0,
        le=MAX_ROUNDS,
        description="Render-and-revise rounds per reply: the model is shown its rendered frames "
        "(never a verdict) and answers again; each round is a run linked to the one it revises",
    )
    revise_findings: bool = Field(
        default=False, description="Also show the static checks' findings in each round"
    )
    wait: bool = Field(
        default=False,
        description="Answer 201 when every run is stored (instead of 202 at once); waited on "
        "without holding a server thread, at most 300 s (then 202: poll the job)",
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return http_base_url(value)

    def revise_options(self) -> ReviseOptions | None:
        """The revision rounds asked for (None: first answers only)."""
        if self.revise == 0:
            return None
        return ReviseOptions(self.revise, findings=self.revise_findings)

    def params(self) -> GenerationParams:
        """The model configuration."""
        not_model = {"task", "repeats", "wait", "revise", "revise_findings"}
        return GenerationParams.model_validate(self.model_dump(exclude=not_model))


def _check(ctx: ServiceContext, body: GenerationRequest, caller: Principal) -> GenerationParams:
    params = body.params()
    check_allowed(ctx.settings, params, is_admin=caller.is_admin)
    check_generation(ctx, body.task, params)
    check_task_access(ctx.db, ctx.registry, caller, [body.task])
    return params


@router.post("", status_code=202, response_model=GenerationJobView)
async def create_generation(
    body: GenerationRequest, ctx: Ctx, caller: Submitter, response: Response
) -> GenerationJobView:
    """Generate ``repeats`` replies and queue each as a run (202 with a job to poll).

    Refused before any call: 403 for a key variable sent anywhere it is not bound to
    (``REGUA_GENERATION_KEY_ENVS``: ``VAR=API[@BASE_URL]``), a submitter's base URL or key
    variable outside the service's allow-lists (``REGUA_GENERATION_BASE_URLS``), or a reserved
    task (admins only: its prompt is never sent for a submitter); the 403 says nothing about
    which variables the service has. 404 for an unknown task; 422 for an admin's key variable
    that is not set. A provider error is not refused: its run is stored ``incomplete`` with
    the cause.
    429 with ``Retry-After`` past a token's share of running generations (4 jobs, 200 model
    calls left); 422 for one generation larger than that share.
    ``wait``: 201 once every run is stored, waited on the event loop (no server thread is held
    while the model answers), 202 after 300 s. ``revise``: N render-and-revise rounds per reply
    (each a run of its own, linked to the one it revises; the job lists the chains).
    """
    params = await run_in_threadpool(_check, ctx, body, caller)
    job = GenerationJob(body.task, params, body.repeats, caller.token_id, body.revise_options())
    await run_in_threadpool(jobs.start, ctx, job)
    if body.wait:
        ended = await jobs.wait_for(ctx, job.id)
        if ended is not None:
            response.status_code = 201
            return ended.view()
    return job.view()


def _readable(ctx: ServiceContext, job_id: str, caller: Principal) -> GenerationJob:
    job = jobs.load(ctx, job_id)
    if job is None or (not caller.is_admin and job.token_id != caller.token_id):
        raise NotFoundError(f"no generation {job_id!r}")
    return job


@router.get("/{job_id}", response_model=GenerationJobView)
def get_generation(job_id: str, ctx: Ctx, caller: Submitter) -> GenerationJobView:
    """A generation job: state, repeats done, run ids once done (stored: any process answers).

    ``interrupted`` (the service stopped while it ran) is ``resumable``. ``resent_calls``:
    model calls sent again after a kill cut them off, each with its first send's
    ``Idempotency-Key`` (a provider that honours it generated once).
    """
    return _readable(ctx, job_id, caller).view()


@router.post("/{job_id}/resume", status_code=202, response_model=GenerationJobView)
def resume_generation(job_id: str, ctx: Ctx, caller: Submitter) -> GenerationJobView:
    """Resume an interrupted generation: repeats already stored are never asked again.

    422 for a job that is not interrupted; 429 past the token's share, as for a new one.
    """
    return jobs.resume(ctx, _readable(ctx, job_id, caller)).view()
