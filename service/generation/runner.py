"""``generate_runs``: call a model ``repeats`` times for a task; each reply becomes a run.

Every reply goes through the normal submit path (:meth:`ServiceContext.submit`) with its
``generations`` record written in the same transaction; the pipeline then checks, renders and
judges it like any submission. A provider that gave no reply leaves an ``incomplete`` run with
the cause. With ``case_keys``, a case already stored returns its run without a new call, and
every call is recorded before it is sent and sent with its case's ``Idempotency-Key``
(:mod:`service.generation.calls`): a call cut off by a kill is sent again with the same key and
counted as re-sent.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Required, TypedDict

from pydantic import JsonValue
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from regua.errors import BackpressureError, InputError
from regua.llm.client import CallResult, RetryPolicy, call_model
from regua.llm.limits import Limiter, limiter_for
from regua.llm.prices import PriceTable, cost_of, load_prices
from regua.llm.provider import Provider
from regua.llm.redact import Redactor, redactor_for
from regua.llm.registry import provider_for
from service.context import GenerateInterruptedError, ServiceContext
from service.generation.calls import CallSlot, mark_done, record_send
from service.generation.policy import api_key
from service.generation.request import GenerationParams
from service.generation.store import GenerationRecord, runs_of_cases, write_record
from service.pipeline.submit import Submission

MAX_BACKPRESSURE_WAIT_S = 600.0
"""How long a generated reply waits for room in the queue before the generation gives up."""
MAX_CASE_KEY = 200
"""Longest case key (``generations.case_key``)."""
Progress = Callable[[int, int], None]


class RunOptions(TypedDict, total=False):
    """The keyword options of :func:`generate_runs` (its parameters say what each does)."""

    token_id: Required[int | None]
    prompt: str | None
    case_keys: Sequence[str] | None
    on_progress: Progress | None
    panel: str | None
    stop: threading.Event | None
    job: str | None


@dataclass(frozen=True)
class GenerationPlan:
    """What every call of one generation shares (render-and-revise rounds too)."""

    ctx: ServiceContext
    task_ref: str
    params: GenerationParams
    provider: Provider
    prompt: str
    prompt_sha256: str
    key: str | None
    prices: PriceTable | None
    policy: RetryPolicy
    limiter: Limiter
    redact: Redactor
    token_id: int | None
    panel: str | None = None
    """The judge panel the runs ask for (None: each task version's default)."""
    job: str | None = None
    """The job the calls belong to (a generation job, an experiment): re-sends count under it."""

    def slot(self, case_key: str | None, round_: int) -> CallSlot | None:
        """The recorded call of a case's round (None without a case key: not recorded)."""
        if case_key is None:
            return None
        return CallSlot(self.job or case_key, case_key, round_)


def run_params(params: GenerationParams, provider: Provider) -> dict[str, JsonValue]:
    """The exact request parameters recorded with the run (never the key, only its variable)."""
    recorded: dict[str, JsonValue] = {
        "api": params.api,
        **provider.request_params(params.model_call("", 1, None)),
        "base_url": params.base_url,
        "api_key_env": params.api_key_env,
        "timeout_s": params.timeout_s,
        "mock": provider.mock,
    }
    return recorded


def check_generation(ctx: ServiceContext, task_ref: str, params: GenerationParams) -> None:
    """Refuse a generation that cannot start: unknown task, unknown API, key variable unset.

    Also reads the price table, so a broken one is reported before any call.
    """
    ctx.registry.get(task_ref)
    provider_for(params.api)
    api_key(params)
    load_prices(ctx.settings.price_table)


def plan_generation(
    ctx: ServiceContext,
    task_ref: str,
    params: GenerationParams,
    *,
    token_id: int | None,
    prompt: str | None = None,
    panel: str | None = None,
    job: str | None = None,
) -> GenerationPlan:
    """What the calls of one generation share: task, provider, prompt, key, limits, prices."""
    spec = ctx.registry.get(task_ref)
    provider = provider_for(params.api)
    text = spec.prompt if prompt is None else prompt
    return GenerationPlan(
        ctx,
        spec.ref,
        params,
        provider,
        text,
        hashlib.sha256(text.encode("utf-8")).hexdigest(),
        api_key(params),
        load_prices(ctx.settings.price_table),
        RetryPolicy.from_settings(ctx.settings),
        limiter_for(ctx.settings),
        redactor_for(ctx.settings),
        token_id,
        panel,
        job,
    )


def generate_runs(
    ctx: ServiceContext,
    task_ref: str,
    params: GenerationParams,
    repeats: int,
    *,
    token_id: int | None,
    prompt: str | None = None,
    case_keys: Sequence[str] | None = None,
    on_progress: Progress | None = None,
    panel: str | None = None,
    stop: threading.Event | None = None,
    job: str | None = None,
) -> list[str]:
    """Call the model ``repeats`` times and store each reply as a run; run ids in repeat order.

    Once ``stop`` is set no new call starts (calls in flight are stored) and
    :class:`GenerateInterruptedError` is raised; with ``case_keys`` a later call resumes.

    Checked before any call: the task exists (:class:`UnknownTaskError`), the API is known and
    its key variable is set (:class:`GenerationSetupError`), ``case_keys`` has one key per
    repeat (:class:`InputError`). ``prompt`` defaults to the task's prompt; its sha256 is
    recorded. Calls run concurrently within the provider's limits (``REGUA_GENERATION_*``).
    A keyed call is recorded under ``job`` (default: its case key) before it is sent.
    """
    if repeats < 1:
        raise InputError(f"repeats must be at least 1 (got {repeats})")
    if case_keys is not None and len(case_keys) != repeats:
        raise InputError(f"{len(case_keys)} case keys for {repeats} repeats; give one per repeat")
    if case_keys is not None and any(not 0 < len(k) <= MAX_CASE_KEY for k in case_keys):
        raise InputError(f"a case key must have 1 to {MAX_CASE_KEY} characters")
    plan = plan_generation(
        ctx, task_ref, params, token_id=token_id, prompt=prompt, panel=panel, job=job
    )
    keys: list[str | None] = list(case_keys) if case_keys is not None else [None] * repeats
    stored = runs_of_cases(ctx.db, [k for k in keys if k is not None])
    results: list[str | None] = [stored.get(k) if k else None for k in keys]
    todo = [i for i, r in enumerate(results) if r is None]
    progress = _Counter(repeats - len(todo), repeats, on_progress)
    if todo:
        workers = min(ctx.settings.generation_concurrency, len(todo))
        with ThreadPoolExecutor(workers, thread_name_prefix="regua-generate") as pool:
            futures = {pool.submit(_one, plan, i + 1, keys[i], stop): i for i in todo}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if results[futures[future]] is not None:
                    progress.step()
    if any(r is None for r in results):
        raise GenerateInterruptedError(
            f"generation of {task_ref} stopped after {progress.done} of {repeats} repeat(s)"
        )
    return [r for r in results if r is not None]


class _Counter:
    """Reports ``done`` of ``total`` (already stored cases count as done from the start)."""

    def __init__(self, done: int, total: int, on_progress: Progress | None) -> None:
        self.done, self.total, self.on_progress = done, total, on_progress
        self._lock = threading.Lock()
        self._report()

    def step(self) -> None:
        with self._lock:
            self.done += 1
        self._report()

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.done, self.total)


def _one(
    plan: GenerationPlan, repeat: int, case_key: str | None, stop: threading.Event | None = None
) -> str | None:
    """One call within the endpoint's limits, then its run; the run id (None: stopped first).

    A keyed call is recorded before it is sent and marked done with its run.
    """
    if stop is not None and stop.is_set():
        return None
    slot = plan.slot(case_key, 0)
    if slot is not None:
        record_send(plan.ctx.db, slot)
    key = slot.key if slot is not None else None
    call = plan.params.model_call(plan.prompt, repeat, plan.key, key)
    result = call_model(call, plan.policy, limiter=plan.limiter, redact=plan.redact)
    return store_reply(plan, repeat, case_key, result, slot=slot)


StoredHook = Callable[[Session, str], None]
"""Called in the transaction that stores a run, with the run id (more rows to write with it)."""


def store_reply(
    plan: GenerationPlan,
    repeat: int,
    case_key: str | None,
    result: CallResult,
    *,
    prompt_sha256: str | None = None,
    also: StoredHook | None = None,
    slot: CallSlot | None = None,
) -> str:
    """Submit the reply (an empty one when there is none) with its generation record.

    ``prompt_sha256`` replaces the plan's (a revision round records its conversation's);
    ``also`` writes more rows in the same transaction; the recorded call ``slot`` is marked
    done in it.
    """
    params, provider = plan.params, plan.provider
    reply = result.reply
    recorded = run_params(params, provider)
    record = GenerationRecord(
        api=params.api,
        model=params.model,
        repeat=repeat,
        call=result,
        cost=cost_of(
            None if provider.mock else plan.prices,
            params.api,
            params.model,
            reply.usage if reply else None,
        ),
        params=recorded,
        prompt_sha256=prompt_sha256 or plan.prompt_sha256,
        mock=provider.mock,
        case_key=case_key,
        checker_version=plan.ctx.machinery.checker_version,
    )
    item = Submission(
        task=plan.task_ref,
        model_label=params.model_label(),
        output=reply.text if reply else "",
        model_provider=params.vendor(),
        model_params={**recorded, "repeat": repeat},
        panel=plan.panel,
    )

    def hook(s: Session, ids: Sequence[str]) -> None:
        write_record(s, ids[0], record)
        if slot is not None:
            mark_done(s, slot, ids[0])
        if also is not None:
            also(s, ids[0])

    return _submit_waiting(plan, item, hook, case_key)


def _submit_waiting(
    plan: GenerationPlan,
    item: Submission,
    hook: Callable[[Session, Sequence[str]], None],
    key: str | None,
) -> str:
    """Submit, waiting out a full queue or the token's rate (a reply is never dropped)."""
    deadline = time.monotonic() + MAX_BACKPRESSURE_WAIT_S
    while True:
        try:
            (run_id,) = plan.ctx.submit([item], plan.token_id, on_stored=hook)
            return run_id
        except BackpressureError as exc:
            if time.monotonic() + exc.retry_after_s > deadline:
                raise
            time.sleep(max(0.05, float(exc.retry_after_s)))
        except IntegrityError:  # the same case was stored concurrently: that run is the case's
            existing = runs_of_cases(plan.ctx.db, [key]) if key else {}
            if key is None or key not in existing:
                raise
            return existing[key]
