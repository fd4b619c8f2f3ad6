"""Proposed template variants (``task_proposals``) and the one decision a person takes on each.

A proposal is stored with the model, the prompt and the reply that made it; it registers
nothing. Accepting it registers its task version (frozen, like any other: a changed task is a
new version) and records the decision with the version registered; rejecting it records the
decision only. A proposal is decided once, and nothing is ever updated or deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from regua.errors import ImmutableRecordError, InputError, NotFoundError, TaskIntegrityError
from regua.records import FromRecord
from service.storage import Database, TaskProposalDecisionRow, TaskProposalRow
from service.tasks_store.registry import StoredTaskRegistry
from service.tasks_store.store import Registration, register_task
from tasks.proposals import build_variant, read_proposal_template

State = Literal["proposed", "accepted", "rejected"]
STATES: tuple[State, ...] = ("proposed", "accepted", "rejected")


class Proposed(BaseModel):
    """What a proposal is: the variant and the model call that proposed it."""

    template: str
    values: dict[str, str]
    proposed: list[str]
    """The dimensions whose values the model proposed (the others were allocated)."""
    ref: str | None
    content_hash: str | None
    problem: str | None
    rationale: str
    api: str
    model: str
    mock: bool
    prompt_sha256: str
    cost_usd: float | None


class NewProposal(Proposed):
    """One variant to store, with the call that proposed it."""

    model_config = ConfigDict(frozen=True)

    template_text: str
    template_sha256: str
    params: dict[str, Any]
    prompt: str
    reply: str


class Decision(BaseModel):
    """A proposal's decision."""

    decision: Literal["accepted", "rejected"]
    reason: str
    registered_ref: str | None
    decided_by: str
    decided_at: datetime


class _StoredProposal(FromRecord):
    id: int
    batch_id: str


class ProposalView(Proposed, _StoredProposal):
    """A stored proposal as the API, the command line and the page show it."""

    created_at: datetime
    state: State
    decision: Decision | None = None


def store_proposals(
    db: Database, batch_id: str, proposals: Sequence[NewProposal], created_by: int | None
) -> list[int]:
    """Store a batch of proposals in one transaction; their ids, in order."""
    with db.write() as s:
        rows = [
            TaskProposalRow(batch_id=batch_id, created_by=created_by, **p.__dict__)
            for p in proposals
        ]
        s.add_all(rows)
        s.flush()
        return [r.id for r in rows]


def _view(row: TaskProposalRow, decision: TaskProposalDecisionRow | None) -> ProposalView:
    found = None
    if decision is not None:
        found = Decision(
            decision="accepted" if decision.decision == "accepted" else "rejected",
            reason=decision.reason,
            registered_ref=decision.registered_ref,
            decided_by=decision.decided_by_name,
            decided_at=decision.decided_at,
        )
    state: State = found.decision if found is not None else "proposed"
    return ProposalView.of(
        row,
        values={str(k): str(v) for k, v in row.values.items()},
        proposed=[str(d) for d in row.proposed],
        state=state,
        decision=found,
    )


def list_proposals(
    db: Database,
    *,
    state: State | None = None,
    template: str | None = None,
    batch_id: str | None = None,
) -> list[ProposalView]:
    """Stored proposals, oldest first, filtered by state, template or batch."""
    if state is not None and state not in STATES:
        raise InputError(f"state must be one of {', '.join(STATES)} (got {state!r})")
    query = (
        select(TaskProposalRow, TaskProposalDecisionRow)
        .outerjoin(
            TaskProposalDecisionRow, TaskProposalDecisionRow.proposal_id == TaskProposalRow.id
        )
        .order_by(TaskProposalRow.id)
    )
    if template is not None:
        query = query.where(TaskProposalRow.template == template)
    if batch_id is not None:
        query = query.where(TaskProposalRow.batch_id == batch_id)
    with db.read() as s:
        views = [_view(row, decision) for row, decision in s.execute(query)]
    return [v for v in views if state is None or v.state == state]


def _load(s: Session, proposal_id: int) -> tuple[TaskProposalRow, TaskProposalDecisionRow | None]:
    row = s.get(TaskProposalRow, proposal_id)
    if row is None:
        raise NotFoundError(f"no task proposal {proposal_id}")
    decision = s.scalar(
        select(TaskProposalDecisionRow).where(TaskProposalDecisionRow.proposal_id == proposal_id)
    )
    return row, decision


def get_proposal(db: Database, proposal_id: int) -> tuple[ProposalView, str, str]:
    """A proposal with the prompt the model was sent and its reply."""
    with db.read() as s:
        row, decision = _load(s, proposal_id)
        return _view(row, decision), row.prompt, row.reply


def _decided(proposal_id: int, decision: TaskProposalDecisionRow) -> ImmutableRecordError:
    return ImmutableRecordError(
        f"task proposal {proposal_id} was already {decision.decision} by "
        f"{decision.decided_by_name or 'someone'}; a decision is final"
    )


@dataclass(frozen=True)
class Decider:
    """Who decides: the token (None on the local command line) and a name to show."""

    token_id: int | None
    name: str


def _record(
    db: Database,
    proposal_id: int,
    decision: str,
    who: Decider,
    reason: str,
    ref: str | None,
) -> None:
    try:
        with db.write() as s:
            s.add(
                TaskProposalDecisionRow(
                    proposal_id=proposal_id,
                    decision=decision,
                    reason=reason[:2000],
                    registered_ref=ref,
                    decided_by=who.token_id,
                    decided_by_name=who.name[:200],
                )
            )
    except IntegrityError:  # decided concurrently: that decision stands
        with db.read() as s:
            _row, found = _load(s, proposal_id)
        if found is None:
            raise
        raise _decided(proposal_id, found) from None


def accept_proposal(
    registry: StoredTaskRegistry, proposal_id: int, who: Decider, reason: str = ""
) -> tuple[ProposalView, Registration]:
    """Register the proposal's task version, then record the acceptance.

    Refused: an unknown id (404), a proposal already decided (409), one that makes no valid
    task (422, it can only be rejected), a version registered meanwhile with other content
    (409, :class:`TaskIntegrityError`, nothing recorded).
    """
    db = registry.db
    with db.read() as s:
        row, decision = _load(s, proposal_id)
    if decision is not None:
        raise _decided(proposal_id, decision)
    if row.problem is not None:
        raise InputError(
            f"task proposal {proposal_id} makes no valid task ({row.problem}); it can only be "
            "rejected"
        )
    template = read_proposal_template(row.template_text, f"proposal {proposal_id}")
    values = {str(k): str(v) for k, v in row.values.items()}
    variant = build_variant(template, values, {}, row.rationale)
    if variant.spec is None or variant.spec.content_hash() != row.content_hash:
        raise TaskIntegrityError(
            f"task proposal {proposal_id} no longer builds the task it proposed "
            f"({variant.problem or 'another content hash'}); reject it and propose again"
        )
    registered = register_task(registry, variant.spec, f"proposal:{proposal_id}")
    _record(db, proposal_id, "accepted", who, reason, registered.ref)
    return get_proposal(db, proposal_id)[0], registered


def reject_proposal(db: Database, proposal_id: int, who: Decider, reason: str = "") -> ProposalView:
    """Record a rejection (nothing is registered); a proposal already decided is refused."""
    with db.read() as s:
        _row, decision = _load(s, proposal_id)
    if decision is not None:
        raise _decided(proposal_id, decision)
    _record(db, proposal_id, "rejected", who, reason, None)
    return get_proposal(db, proposal_id)[0]
