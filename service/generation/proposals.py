"""Asking a model for template variants (``regua tasks propose``), stored as proposals.

One call through :mod:`regua.llm` (the generation's providers, retries, limits and prices)
asks for N variants along the named dimensions (:mod:`tasks.proposals` plans the slots and
writes the prompt). Every variant is stored as a proposal with the model, prompt and reply,
including the ones that make no valid task (with the problem); nothing is registered until a
person accepts one (:mod:`service.tasks_store.proposals`).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from regua.errors import ConfigurationError, InputError, ModelReplyError
from regua.llm.client import RetryPolicy, call_model
from regua.llm.limits import limiter_for
from regua.llm.prices import cost_of, load_prices
from regua.llm.redact import redactor_for
from regua.llm.registry import provider_for
from service.context import ServiceContext
from service.generation.policy import api_key
from service.generation.request import GenerationParams
from service.generation.runner import run_params
from service.tasks_store.proposals import NewProposal, ProposalView, list_proposals, store_proposals
from service.tasks_store.registry import StoredTaskRegistry
from tasks.proposals import (
    ProposalTemplate,
    Variant,
    build_variant,
    parse_reply,
    plan_slots,
    proposal_prompt,
    read_proposal_template,
)


@dataclass(frozen=True)
class ProposalRequest:
    """What to propose: the template text, the dimensions the model fills, how many, who asks."""

    template_text: str
    dimensions: Sequence[str]
    n: int
    params: GenerationParams
    source: str = "<template>"


def task_store(ctx: ServiceContext) -> StoredTaskRegistry:
    """The service's task store (:class:`ConfigurationError` for a registry without one)."""
    if not isinstance(ctx.registry, StoredTaskRegistry):
        raise ConfigurationError("this service has no task store")
    return ctx.registry


def _problems(ctx: ServiceContext, variants: Sequence[Variant]) -> list[str | None]:
    """Each variant's problem: its own, a repeat within the batch, or a version already taken."""
    seen: dict[str, int] = {}
    out: list[str | None] = []
    for i, v in enumerate(variants):
        if v.spec is None:
            out.append(v.problem)
            continue
        ref = v.spec.ref
        known = task_store(ctx).known_hash(ref)
        if ref in seen:
            out.append(f"repeats variant {seen[ref] + 1} of this batch ({ref})")
        elif known == v.spec.content_hash():
            out.append(f"{ref} is already registered with this content")
        elif known is not None:
            out.append(f"{ref} is registered with other content; a changed task is a new version")
        else:
            out.append(None)
        seen.setdefault(ref, i)
    return out


@dataclass(frozen=True)
class _CallFacts:
    """What every proposal of one call records about the call."""

    params: GenerationParams
    recorded: dict[str, JsonValue]
    prompt: str
    reply: str
    cost_share_usd: float | None
    """The call's cost shared equally by its proposals (None: unknown)."""


def _row(
    template: ProposalTemplate,
    proposed: Sequence[str],
    v: Variant,
    problem: str | None,
    call: _CallFacts,
) -> NewProposal:
    return NewProposal(
        template=template.name,
        template_text=template.text,
        template_sha256=template.sha256,
        values=dict(v.values),
        proposed=list(proposed),
        ref=v.spec.ref if v.spec is not None else None,
        content_hash=v.spec.content_hash() if v.spec is not None else None,
        problem=problem,
        rationale=v.rationale,
        api=call.params.api,
        model=call.params.model,
        params=dict(call.recorded),
        prompt=call.prompt,
        prompt_sha256=hashlib.sha256(call.prompt.encode("utf-8")).hexdigest(),
        reply=call.reply,
        cost_usd=call.cost_share_usd,
        mock=call.params.is_mock,
    )


def propose_variants(
    ctx: ServiceContext, request: ProposalRequest, token_id: int | None
) -> list[ProposalView]:
    """Ask the model, store every variant as a proposal; the stored proposals of the batch.

    Refused before any call: a bad template (:class:`InvalidTaskError`), an unknown dimension,
    ``n`` out of range or a dimension without values nobody proposes (:class:`InputError`), an
    unknown API or an unset key variable. A model that gives no reply or no JSON list is a
    :class:`ModelReplyError` (nothing stored).
    """
    task_store(ctx)
    template = read_proposal_template(request.template_text, request.source)
    plan = plan_slots(template, list(request.dimensions), request.n)
    prompt = proposal_prompt(template, plan)
    params = request.params
    provider = provider_for(params.api)
    prices = load_prices(ctx.settings.price_table)
    call = params.model_call(prompt, 1, api_key(params))
    result = call_model(
        call,
        RetryPolicy.from_settings(ctx.settings),
        limiter=limiter_for(ctx.settings),
        redact=redactor_for(ctx.settings),
    )
    if result.reply is None:
        raise ModelReplyError(f"the model gave no reply: {result.cause}")
    try:
        parsed = parse_reply(result.reply.text, plan)
    except InputError as exc:  # the model's reply, not the caller's input
        raise ModelReplyError(str(exc)) from None
    if not parsed:
        raise ModelReplyError(f"the model proposed no variant: {result.reply.text[:200]!r}")
    variants = [
        build_variant(template, plan.slots[i], values, rationale)
        for i, (values, rationale) in enumerate(parsed)
    ]
    cost = cost_of(None if provider.mock else prices, params.api, params.model, result.reply.usage)
    share = cost.usd / len(variants) if cost.usd is not None else None
    call_facts = _CallFacts(params, run_params(params, provider), prompt, result.reply.text, share)
    rows = [
        _row(template, plan.proposed, v, problem, call_facts)
        for v, problem in zip(variants, _problems(ctx, variants), strict=True)
    ]
    batch = f"prop_{uuid.uuid4().hex[:16]}"
    store_proposals(ctx.db, batch, rows, token_id)
    return list_proposals(ctx.db, batch_id=batch)
