"""A token's share of experiments: 2 generating at once, and a cap on their cases left.

An experiment's cases are its runs to generate: arms x items x repeats (``planned``, as its
progress counts them). Counted in flight are the cases not stored yet of the token's
experiments that are ``created`` or ``generating`` (their model calls are still to come); the
runs already generated are counted by the run queue's own share (``REGUA_SUBMITTER_QUEUE_SHARE``).
One experiment with more cases than ``REGUA_EXPERIMENT_CASES_PER_TOKEN`` answers 422 naming the
count and the cap; one that does not fit beside the token's experiments in flight answers 429
``queue_share_full`` with ``Retry-After: 60``. A resumed experiment asks only for its cases not
stored yet. The rule is :class:`service.generation.share.Share`, as for generations.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from regua.settings import Settings
from service.experiments.plan import Plan
from service.generation.share import Share
from service.storage import ExperimentCaseRow, ExperimentRow

if TYPE_CHECKING:
    from service.context import ServiceContext

MAX_RUNNING_PER_TOKEN = 2
"""Experiments one token may have generating at once (stored ``created`` or ``generating``)."""
RETRY_AFTER_S = 60
GENERATING = ("created", "generating")
CAP_SETTING = "REGUA_EXPERIMENT_CASES_PER_TOKEN"


def share_of(settings: Settings) -> Share:
    """The experiment share in force."""
    return Share(
        MAX_RUNNING_PER_TOKEN,
        settings.experiment_cases_per_token,
        "experiment",
        "generating",
        "case",
        RETRY_AFTER_S,
        setting=CAP_SETTING,
    )


def planned_cases(plan: Plan) -> int:
    """The cases (runs to generate) of a plan: arms x items x repeats."""
    return len(plan.arms) * len(plan.items) * plan.repeats


def _stored_counts(s: Session, idents: Collection[str]) -> dict[str, int]:
    """Cases stored per experiment id."""
    if not idents:
        return {}
    rows = s.execute(
        select(ExperimentCaseRow.experiment_id, func.count())
        .where(ExperimentCaseRow.experiment_id.in_(list(idents)))
        .group_by(ExperimentCaseRow.experiment_id)
    ).all()
    return {ident: int(count) for ident, count in rows}


def admit_experiment(ctx: ServiceContext, plan: Plan, token_id: int | None, ident: str) -> None:
    """Refuse ``plan`` (to be stored or resumed as ``ident``) over its token's share.

    422 when it alone has more cases than the cap; 429 when the token's other experiments in
    flight leave no room. Experiments without a token (the service's own) are not counted.
    Call it under :data:`service.generation.share.ADMIT_LOCK`, then store.
    """
    share = share_of(ctx.settings)
    planned = planned_cases(plan)
    counted = f"arms x items x repeats ({len(plan.arms)} x {len(plan.items)} x {plan.repeats})"
    share.check_size(planned, counted)
    if token_id is None:
        return
    with ctx.db.read() as s:
        others = s.execute(
            select(ExperimentRow.id, ExperimentRow.plan).where(
                ExperimentRow.created_by == token_id,
                ExperimentRow.status.in_(GENERATING),
                ExperimentRow.id != ident,
            )
        ).all()
        stored = _stored_counts(s, [ident, *(row_id for row_id, _ in others)])
    held = sum(
        max(0, planned_cases(Plan.model_validate(doc)) - stored.get(row_id, 0))
        for row_id, doc in others
    )
    wanted = max(0, planned - stored.get(ident, 0))
    share.check_room(len(others), held, wanted)
