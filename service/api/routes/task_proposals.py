"""``/v1/task-proposals``: model-proposed template variants, accepted or rejected by a person.

Admins only (proposals become task versions). ``POST`` asks the model and stores the batch
(nothing registered); ``accept`` registers a proposal's task version; ``reject`` records why not.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, field_validator

from service.api.deps import Admin, Ctx
from service.api.text import RowId, Text
from service.generation.policy import check_allowed
from service.generation.proposals import ProposalRequest, propose_variants, task_store
from service.generation.request import Api, GenerationParams, http_base_url
from service.tasks_store.proposals import (
    Decider,
    ProposalView,
    accept_proposal,
    get_proposal,
    list_proposals,
    reject_proposal,
)
from tasks.proposals import MAX_PROPOSALS

router = APIRouter(prefix="/v1/task-proposals", tags=["tasks"])


class ProposeRequest(BaseModel):
    """Ask a model for ``n`` variants of a template along the named dimensions."""

    model_config = ConfigDict(extra="forbid")
    template: Text = Field(min_length=1, max_length=200_000, description="The template's text")
    dimensions: list[Text] = Field(min_length=1, max_length=20)
    n: int = Field(default=20, ge=1, le=MAX_PROPOSALS)
    api: Api
    model: Text = Field(min_length=1, max_length=200)
    base_url: Text | None = Field(default=None, max_length=2000)
    api_key_env: Text | None = Field(default=None, max_length=200)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    source: Text = Field(default="<template>", max_length=500, description="The file's name")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return http_base_url(value)

    def params(self) -> GenerationParams:
        """The model configuration."""
        keep = {"api", "model", "base_url", "api_key_env", "temperature", "max_tokens", "timeout_s"}
        return GenerationParams.model_validate(self.model_dump(include=keep))


class ProposalList(BaseModel):
    """Stored proposals, oldest first."""

    proposals: list[ProposalView]


class ProposalDetail(BaseModel):
    """One proposal with exactly what the model was sent and said."""

    proposal: ProposalView
    prompt: str
    reply: str


class DecisionBody(BaseModel):
    """Why (optional for an acceptance)."""

    model_config = ConfigDict(extra="forbid")
    reason: Text = Field(default="", max_length=2000)


class Accepted(BaseModel):
    """The accepted proposal and the task version it registered."""

    proposal: ProposalView
    ref: str
    content_hash: str
    outcome: str


@router.post("", response_model=ProposalList, status_code=201)
def propose(body: ProposeRequest, ctx: Ctx, caller: Admin) -> ProposalList:
    """Ask the model and store every variant as a proposal (201; nothing is registered).

    422 for a bad template, an unknown dimension or a dimension nobody gives values to;
    403 for a key variable sent where it is not bound; 502 when the model gives no usable
    reply (nothing stored).
    """
    params = body.params()
    check_allowed(ctx.settings, params, is_admin=caller.is_admin)
    request = ProposalRequest(body.template, body.dimensions, body.n, params, body.source)
    return ProposalList(proposals=propose_variants(ctx, request, caller.token_id))


@router.get("", response_model=ProposalList)
def proposals(
    ctx: Ctx,
    caller: Admin,
    state: Literal["proposed", "accepted", "rejected"] | None = None,
    template: str | None = None,
    batch: str | None = None,
) -> ProposalList:
    """Stored proposals, filtered by state, template or batch."""
    del caller
    found = list_proposals(ctx.db, state=state, template=template, batch_id=batch)
    return ProposalList(proposals=found)


@router.get("/{proposal_id}", response_model=ProposalDetail)
def proposal(proposal_id: RowId, ctx: Ctx, caller: Admin) -> ProposalDetail:
    """One proposal, with the prompt and the reply that made it."""
    del caller
    view, prompt, reply = get_proposal(ctx.db, proposal_id)
    return ProposalDetail(proposal=view, prompt=prompt, reply=reply)


@router.post("/{proposal_id}/accept", response_model=Accepted)
def accept(
    proposal_id: RowId, ctx: Ctx, caller: Admin, body: DecisionBody | None = None
) -> Accepted:
    """Register the proposal's task version and record the acceptance.

    409 when it was decided already or its version is registered with other content; 422 when
    it makes no valid task.
    """
    who = Decider(caller.token_id, caller.name)
    view, done = accept_proposal(task_store(ctx), proposal_id, who, body.reason if body else "")
    return Accepted(
        proposal=view, ref=done.ref, content_hash=done.content_hash, outcome=done.outcome
    )


@router.post("/{proposal_id}/reject", response_model=ProposalView)
def reject(
    proposal_id: RowId, ctx: Ctx, caller: Admin, body: DecisionBody | None = None
) -> ProposalView:
    """Record a rejection (409 when it was decided already)."""
    who = Decider(caller.token_id, caller.name)
    return reject_proposal(ctx.db, proposal_id, who, body.reason if body else "")
