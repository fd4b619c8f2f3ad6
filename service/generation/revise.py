"""Render-and-revise: the model sees its own rendered drawing and answers again, N rounds.

Each first answer (a generated run, round 0) starts a chain. A round waits for the previous
run's render, shows the model its frames (and, when asked, the static checks' findings —
never a verdict), and stores the revised reply as a new run linked to the previous one
(``run_revisions``: ``revision_of``, the round, the conversation as an artifact). Every round
is its own run, judged like any other; reports keep "first answer" and "after k rounds" apart.

Rounds always run to ``N`` (a revision is never stopped because a judge liked the drawing: the
loop never reads a verdict); a chain stops early only when the model gave no reply or the
previous run was never rendered in time, with the reason kept. A chain already stored in part
(an experiment resumed) continues from its last stored round without asking the model again.
Each round's call has its own ``Idempotency-Key`` and is recorded before it is sent
(:mod:`service.generation.calls`): a round cut off by a kill is sent again with its key and
counted as re-sent; a stored round is never asked again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Unpack

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from regua.errors import InputError
from regua.llm.call import Message
from regua.llm.client import call_model
from service.context import GenerateInterruptedError
from service.evaluation.inputs import load_eval_inputs
from service.generation.calls import CallSlot, record_send
from service.generation.feedback import REVISE_VERSION, Feedback, build_feedback
from service.generation.feedback import conversation_document as _document
from service.generation.request import GenerationParams
from service.generation.revision_store import (
    RevisionLink,
    reply_of,
    stored_rounds,
    write_link,
)
from service.generation.runner import (
    GenerationPlan,
    RunOptions,
    generate_runs,
    plan_generation,
    store_reply,
)
from service.storage import Run, StageRecord

if TYPE_CHECKING:
    from service.context import ServiceContext

MAX_ROUNDS = 5
"""The most revision rounds one generation may ask for."""
DEFAULT_WAIT_S = 900.0
"""How long a round waits for the previous run's render before its chain stops."""
RoundDone = Callable[[], None]


@dataclass(frozen=True)
class ReviseOptions:
    """How many rounds, and whether the static checks' findings are shown with the frames."""

    rounds: int
    findings: bool = False
    wait_s: float = DEFAULT_WAIT_S

    def __post_init__(self) -> None:
        """Refuse a round count outside 1..MAX_ROUNDS (before anything is called)."""
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise InputError(f"revise must be 1 to {MAX_ROUNDS} rounds (got {self.rounds})")


@dataclass
class Chain:
    """One first answer and its revisions, round by round, and why it stopped early (if so)."""

    first_run_id: str
    run_ids: list[str] = field(default_factory=list)
    stopped: str | None = None


def wait_for_render(plan: GenerationPlan, run_id: str, wait_s: float) -> bool:
    """Wait until ``run_id`` has its render stage recorded (or is done); False on the deadline."""
    deadline = time.monotonic() + wait_s
    while True:
        with plan.ctx.db.read() as s:
            status = s.scalar(select(Run.status).where(Run.id == run_id))
            rendered = s.scalar(
                select(func.count())
                .select_from(StageRecord)
                .where(StageRecord.run_id == run_id, StageRecord.stage == "render")
            )
        if rendered or status == "done":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def _feedback(plan: GenerationPlan, run_id: str, findings: bool) -> Feedback:
    """The feedback on a stored run, from its stored evidence (the judges' inputs, no verdict)."""
    task = plan.ctx.registry.get(plan.task_ref)
    (stored,) = load_eval_inputs(plan.ctx.db, plan.ctx.blobs, {run_id: task}, [run_id])
    return build_feedback(stored.inp, findings=findings)


def _reply(plan: GenerationPlan, run_id: str) -> tuple[str, str | None]:
    with plan.ctx.db.read() as s:
        return reply_of(s, plan.ctx.blobs, run_id)


def _ask(
    plan: GenerationPlan,
    repeat: int,
    messages: list[Message],
    link: Callable[[bytes], RevisionLink],
    frames: dict[bytes, str],
    slot: CallSlot | None = None,
) -> str:
    """Call the model with the conversation and store its reply as the round's run.

    The round's call ``slot`` (when the chain has a case key) is recorded before it is sent.
    """
    if slot is not None:
        record_send(plan.ctx.db, slot)
    base = plan.params.model_call("", repeat, plan.key, slot.key if slot is not None else None)
    call = dataclasses.replace(base, messages=tuple(messages))
    sent = _document(messages, None, frames)
    result = call_model(call, plan.policy, limiter=plan.limiter, redact=plan.redact)
    reply = result.reply.text if result.reply is not None else None
    stored = link(_document(messages, reply, frames))

    def also(s: Session, run_id: str) -> None:
        write_link(s, plan.ctx.blobs, run_id, stored)

    digest = hashlib.sha256(sent).hexdigest()
    return store_reply(plan, repeat, None, result, prompt_sha256=digest, also=also, slot=slot)


def revise_chain(
    plan: GenerationPlan,
    first_run_id: str,
    repeat: int,
    options: ReviseOptions,
    on_round: RoundDone | None = None,
    case_key: str | None = None,
    stop: threading.Event | None = None,
) -> Chain:
    """Run (or continue) the revision rounds of one first answer; the chain's runs in order.

    ``case_key`` (the first answer's) keys each round's call; once ``stop`` is set no new round
    is asked (:class:`GenerateInterruptedError`: a later call continues the chain).
    """
    chain = Chain(first_run_id, [first_run_id])
    with plan.ctx.db.read() as s:
        done = stored_rounds(s, first_run_id)
    messages = [Message.text("user", plan.prompt)]
    frames: dict[bytes, str] = {}
    """Every image sent so far → the frame artifact it was read from."""
    previous = first_run_id
    for rnd in range(1, options.rounds + 1):
        reply, cause = _reply(plan, previous)
        if cause is not None:
            chain.stopped = f"round {rnd - 1}: the model gave no reply ({cause})"
            break
        if not wait_for_render(plan, previous, options.wait_s):
            chain.stopped = f"round {rnd - 1}: run {previous} was not rendered in time"
            break
        fb = _feedback(plan, previous, options.findings)
        messages += [Message.text("assistant", reply), fb.message()]
        frames.update({f.png: f.artifact_ref for f in fb.frames})
        if rnd not in done:
            if stop is not None and stop.is_set():
                raise GenerateInterruptedError(f"revision of {first_run_id} stopped at round {rnd}")
            link = _linker(previous, first_run_id, rnd, fb, options)
            done[rnd] = _ask(plan, repeat, messages, link, frames, plan.slot(case_key, rnd))
        chain.run_ids.append(done[rnd])
        previous = done[rnd]
        if on_round is not None:
            on_round()
    if chain.stopped is None:
        _, cause = _reply(plan, previous)
        if cause is not None:
            chain.stopped = f"round {len(chain.run_ids) - 1}: the model gave no reply ({cause})"
    return chain


def _linker(
    previous: str, first: str, rnd: int, fb: Feedback, options: ReviseOptions
) -> Callable[[bytes], RevisionLink]:
    def link(conversation: bytes) -> RevisionLink:
        return RevisionLink(
            revision_of=previous,
            first_run_id=first,
            round=rnd,
            frames_shown=len(fb.frames),
            findings_shown=options.findings,
            conversation=conversation,
            procedure_version=REVISE_VERSION,
        )

    return link


def revise_all(
    plan: GenerationPlan,
    first_run_ids: Sequence[str],
    options: ReviseOptions,
    on_round: RoundDone | None = None,
    case_keys: Sequence[str] | None = None,
    stop: threading.Event | None = None,
) -> list[Chain]:
    """Every chain, concurrently within the generation's concurrency; chains in input order.

    ``case_keys`` are the first answers' (one per first run): each round's call is keyed by it.
    """
    if not first_run_ids:
        return []
    lock = threading.Lock()

    def counted() -> None:
        if on_round is not None:
            with lock:
                on_round()

    keys: list[str | None] = list(case_keys) if case_keys else [None] * len(first_run_ids)
    workers = min(plan.ctx.settings.generation_concurrency, len(first_run_ids))
    with ThreadPoolExecutor(workers, thread_name_prefix="regua-revise") as pool:
        futures = [
            pool.submit(revise_chain, plan, run_id, i + 1, options, counted, keys[i], stop)
            for i, run_id in enumerate(first_run_ids)
        ]
        return [f.result() for f in futures]


def generate_and_revise(
    ctx: ServiceContext,
    task_ref: str,
    params: GenerationParams,
    repeats: int,
    options: ReviseOptions,
    *,
    on_round: RoundDone | None = None,
    **run: Unpack[RunOptions],
) -> list[Chain]:
    """First answers (:func:`generate_runs` with the options ``run``), then every chain's rounds.

    ``run["stop"]`` stops the rounds too; calls are recorded under ``run["job"]`` (see
    :mod:`service.generation.calls`).
    """
    first = generate_runs(ctx, task_ref, params, repeats, **run)
    plan = plan_generation(
        ctx,
        task_ref,
        params,
        token_id=run["token_id"],
        prompt=run.get("prompt"),
        panel=run.get("panel"),
        job=run.get("job"),
    )
    return revise_all(plan, first, options, on_round, run.get("case_keys"), run.get("stop"))
