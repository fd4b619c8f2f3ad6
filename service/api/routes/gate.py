"""``/v1/gate``: the latest gate decision per judge, criterion and family (admin)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from service.api.deps import Admin, Ctx
from service.calibration.store import GateDecisionView, gate_view

router = APIRouter(prefix="/v1/gate", tags=["calibration"])


class GateView(BaseModel):
    """What the jury reads: who may vote on which criterion of which family."""

    decisions: list[GateDecisionView]


@router.get("", response_model=GateView)
def get_gate(ctx: Ctx, _admin: Admin) -> GateView:
    """The latest gate decision per (profile, criterion, family): what the jury reads."""
    with ctx.db.read() as s:
        return GateView(decisions=gate_view(s))
