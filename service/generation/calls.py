"""Model calls at most once per case: each call recorded before it is sent, re-sends counted.

A generation's call belongs to a job (a generation job or an experiment), a case (its case key)
and a round (0: the first answer, ``k``: the k-th revision round). Before a call is sent a row
of ``model_calls`` records the send (job, case key, round, attempt, ``Idempotency-Key``,
``sent_at``); the transaction that stores the answer's run marks it done. The
``Idempotency-Key`` is derived from job, case key and round, so it is the same for every send
of one call: a provider that honours it generates once however often a call is sent again.

A process killed while a call was in flight leaves its row recorded and not done; the resumed
job sends that call again with the same key, as attempt 2, and :func:`resent_calls` counts it,
so a provider that ignores the key is seen to have been asked twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.storage import Database, ModelCallRow, utcnow

FIRST_ANSWER = 0
"""The round of a case's first answer (revision rounds are 1, 2, ...)."""
_RECORD_TRIES = 3


def idempotency_key(job: str, case_key: str, round_: int) -> str:
    """The ``Idempotency-Key`` of one call: stable per (job, case key, round)."""
    digest = hashlib.sha256(f"{job}\x1f{case_key}\x1f{round_}".encode()).hexdigest()
    return f"regua-{digest[:40]}"


@dataclass(frozen=True)
class CallSlot:
    """Which call this is: the job, the case and the round."""

    job: str
    case_key: str
    round: int = FIRST_ANSWER

    @property
    def key(self) -> str:
        """Its ``Idempotency-Key``."""
        return idempotency_key(self.job, self.case_key, self.round)


def record_send(db: Database, slot: CallSlot) -> int:
    """Record that ``slot``'s call is about to be sent; its attempt (2 and more: sent again).

    Committed before the call leaves, so a kill during the call leaves the row behind.
    """
    for _ in range(_RECORD_TRIES):
        try:
            with db.write() as s:
                last = s.scalar(
                    select(func.max(ModelCallRow.attempt)).where(
                        ModelCallRow.idempotency_key == slot.key
                    )
                )
                attempt = int(last or 0) + 1
                s.add(
                    ModelCallRow(
                        job=slot.job,
                        case_key=slot.case_key,
                        round=slot.round,
                        attempt=attempt,
                        idempotency_key=slot.key,
                        sent_at=utcnow(),
                    )
                )
            return attempt
        except IntegrityError:  # another process recorded the same send first: count after it
            continue
    raise RuntimeError(f"could not record the model call {slot.key}")


def mark_done(s: Session, slot: CallSlot, run_id: str) -> None:
    """Mark the sends of ``slot``'s call done (in the transaction that stores its run)."""
    s.execute(
        update(ModelCallRow)
        .where(ModelCallRow.idempotency_key == slot.key, ModelCallRow.done_at.is_(None))
        .values(done_at=utcnow(), run_id=run_id)
    )


def resent_calls(s: Session, job: str) -> int:
    """How many calls of ``job`` were sent again (sends after a call's first)."""
    found = s.scalar(
        select(func.count())
        .select_from(ModelCallRow)
        .where(ModelCallRow.job == job, ModelCallRow.attempt > 1)
    )
    return int(found or 0)
