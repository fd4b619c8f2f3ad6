"""Queue item construction (pure): which (run, criterion) pairs people must look at.

Two kinds of item:

* ``uncertain`` — every necessary criterion left ``uncertain`` by the jury in a ``pending`` run;
* ``audit`` — a random sample (rate ``audit_rate``, drawn with a stored seed) of necessary criteria
  that eligible judges passed automatically, in any decided or pending run (an unbiased sample
  of automatic passes, so errors hiding among them — and each judge's overturn rate — are found).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from service.review.blinding import opaque_item_id, unit_draw

ItemKind = Literal["uncertain", "audit"]
ITEM_KINDS: tuple[ItemKind, ...] = ("uncertain", "audit")


@dataclass(frozen=True)
class Vote:
    """One judge's verdict on a criterion, as the queue needs it."""

    judge_profile_id: str
    judge_kind: str
    status: str
    description: str = ""
    eligible: bool = True
    """False for a judge kept for inspection only (not calibrated): it decided nothing."""


@dataclass(frozen=True)
class CriterionState:
    """The jury's result for one criterion of one evaluation."""

    criterion_id: str
    kind: str
    status: str
    votes: tuple[Vote, ...] = ()
    review_reason: str | None = None


@dataclass(frozen=True)
class RunSnapshot:
    """The latest evaluation of a run, reduced to what the queue needs."""

    run_id: str
    evaluation_id: str
    outcome: str
    criteria: tuple[CriterionState, ...]
    human_reviewed: frozenset[str] = field(default_factory=frozenset)
    """Criterion ids that already carry a human verdict (never queued again)."""


@dataclass(frozen=True)
class QueuePolicy:
    """Configurable knobs of the queue (defaults from the method).

    ``seed`` has no default: the service passes the blinding key drawn from the installation
    secret (``service.review.policy``), so item ids and audit draws never rest on a constant.
    """

    seed: int
    audit_rate: float = 0.05
    reviews_per_item: int = 1
    reviews_per_audit_item: int = 2

    def reviews_needed(self, kind: ItemKind) -> int:
        """How many independent reviews an item of this kind needs."""
        return self.reviews_per_audit_item if kind == "audit" else self.reviews_per_item


@dataclass(frozen=True)
class ItemSpec:
    """A queue item to create (idempotent on ``item_id``)."""

    item_id: str
    run_id: str
    criterion_id: str
    evaluation_id: str
    kind: ItemKind
    original_status: str
    reviews_needed: int
    reason: str
    suggestion: str | None
    audited_judges: tuple[str, ...]


def is_audited(policy: QueuePolicy, run_id: str, criterion_id: str) -> bool:
    """Whether the stored-seed draw puts this automatic pass into the audit sample."""
    if policy.audit_rate <= 0:
        return False
    return unit_draw(policy.seed, "audit", run_id, criterion_id) < policy.audit_rate


def _automatic_passers(state: CriterionState) -> tuple[str, ...]:
    return tuple(
        sorted(
            {
                v.judge_profile_id
                for v in state.votes
                if v.status == "pass" and v.judge_kind != "human" and v.eligible
            }
        )
    )


def items_for_run(snapshot: RunSnapshot, policy: QueuePolicy) -> list[ItemSpec]:
    """The queue items one run's latest evaluation calls for."""
    items: list[ItemSpec] = []
    for state in snapshot.criteria:
        if state.kind != "necessary" or state.criterion_id in snapshot.human_reviewed:
            continue
        kind: ItemKind | None = None
        if state.status == "uncertain" and snapshot.outcome == "pending":
            kind = "uncertain"
            reason = state.review_reason or "the jury could not decide this criterion"
        elif (
            state.status == "pass"
            and snapshot.outcome != "incomplete"
            and _automatic_passers(state)
            and is_audited(policy, snapshot.run_id, state.criterion_id)
        ):
            kind = "audit"
            reason = "random audit of an automatic pass"
        if kind is None:
            continue
        items.append(
            ItemSpec(
                item_id=opaque_item_id(policy.seed, snapshot.run_id, state.criterion_id, kind),
                run_id=snapshot.run_id,
                criterion_id=state.criterion_id,
                evaluation_id=snapshot.evaluation_id,
                kind=kind,
                original_status=state.status,
                reviews_needed=policy.reviews_needed(kind),
                reason=reason,
                suggestion=_suggestion(state),
                audited_judges=_automatic_passers(state) if kind == "audit" else (),
            )
        )
    return items


def _suggestion(state: CriterionState) -> str | None:
    """The judges' suggested verdict (shown, never preselected): the jury status if voted."""
    return state.status if state.votes else None


def build_items(snapshots: Iterable[RunSnapshot], policy: QueuePolicy) -> list[ItemSpec]:
    """Items for many runs, in a stable order (by item id, which is unrelated to submission)."""
    out: list[ItemSpec] = []
    for snapshot in snapshots:
        out.extend(items_for_run(snapshot, policy))
    return sorted(out, key=lambda i: i.item_id)


def order_key(item_id: str) -> int:
    """An item's place in every shuffle: 60 bits of its opaque id (itself a keyed hash).

    Ids that are not ``it_<hex>`` (pure tests) are hashed instead.
    """
    try:
        return int(item_id[3:18], 16)
    except ValueError:
        return int.from_bytes(hashlib.sha256(item_id.encode()).digest()[:8], "big") >> 4


def reviewer_mask(seed: int | str, reviewer_id: str) -> int:
    """A reviewer's 60-bit key: XOR-ed with each :func:`order_key` it orders the queue."""
    return int(unit_draw(seed, "order", reviewer_id) * 2**60)


def order_for_reviewer(item_ids: Sequence[str], seed: int | str, reviewer_id: str) -> list[str]:
    """A per-reviewer shuffled order of open items, so no two reviewers march in lockstep.

    The order is ``order_key(id) XOR reviewer_mask``: a different permutation per reviewer,
    computed without a keyed hash per item (so a queue of 10,000 items orders in milliseconds).
    """
    mask = reviewer_mask(seed, reviewer_id)
    return sorted(item_ids, key=lambda i: order_key(i) ^ mask)
