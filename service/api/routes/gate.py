"""``/v1/gate``: who may vote on which criterion of which family, and how that came to be (admin).

Without parameters: the latest decision per judge, criterion and family (what the jury reads).
With ``history=true``: every decision ever stored, oldest first within each judge, family and
criterion, so a demotion (and what replaced what) stays visible; ``judge`` and ``family`` narrow
either view.
"""

from __future__ import annotations

from fastapi import APIRouter, Query
from pydantic import BaseModel

from regua.views.calibrations import GateDecisionView
from service.api.deps import Admin, Ctx
from service.calibration.store import (
    gate_history,
    gate_view,
    judge_matches,
)

router = APIRouter(prefix="/v1/gate", tags=["calibration"])


class GateView(BaseModel):
    """What the jury reads: who may vote on which criterion of which family."""

    history: bool = False
    """True: every decision over time (oldest first per judge, family and criterion)."""
    decisions: list[GateDecisionView]


@router.get("", response_model=GateView)
def get_gate(
    ctx: Ctx,
    _admin: Admin,
    history: bool = Query(False, description="every decision over time, not only the latest"),
    judge: str | None = Query(
        None, description="only this judge (a profile id, or the id it votes under)"
    ),
    family: str | None = Query(None, description="only this task family"),
) -> GateView:
    """The latest gate decision per (profile, criterion, family), or (``history``) all of them."""
    with ctx.db.read() as s:
        if history:
            return GateView(history=True, decisions=gate_history(s, judge, family))
        latest = [
            d
            for d in gate_view(s)
            if (judge is None or judge_matches(d.profile_id, judge))
            and (family is None or d.task_family == family)
        ]
        return GateView(decisions=latest)
