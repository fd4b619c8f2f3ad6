"""``/v1/judges`` and ``/v1/panels``: the judge profiles and panels this service can seat.

Built-in ones and those declared in the judge files of ``REGUA_JUDGES_DIR``. Any role may read
them; no key is ever listed (a profile names the environment variable that holds its key).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, JsonValue

import judges
from judges.listing import describe_panel, describe_profile
from service.api.deps import Caller, Ctx

router = APIRouter(tags=["judges"])


class VotesAs(BaseModel):
    """The identity a profile votes (and is calibrated and gated) under with these settings."""

    id: str
    content_hash: str


class JudgeLine(BaseModel):
    """One judge profile."""

    id: str
    kind: str
    model: str | None
    prompt_version: str | None
    params: dict[str, JsonValue]
    thresholds: dict[str, JsonValue]
    description: str
    content_hash: str
    source: str
    votes_as: VotesAs | None
    problem: str | None = None


class JudgeList(BaseModel):
    """Every registered judge profile, sorted by id."""

    judges: list[JudgeLine]


class PanelLine(BaseModel):
    """One panel: which profiles judge which criterion of one task family."""

    id: str
    family: str
    assignments: dict[str, list[str]]
    exclude_own_provider: bool
    description: str
    content_hash: str
    source: str
    service_panel: bool
    """Whether the service judges with it by default (``REGUA_PANEL``)."""
    default_for_tasks: list[str]
    """Task versions it judges when neither the submission nor the service names a panel."""
    adjudicator: str | None = None
    """The profile asked when the judges of a criterion disagree (docs/grading.md)."""
    disagreement: str = "split"
    max_level_spread: float = 1.5


class PanelList(BaseModel):
    """Every registered panel, sorted by id."""

    panels: list[PanelLine]


@router.get("/v1/judges", response_model=JudgeList)
def list_judges(ctx: Ctx, caller: Caller) -> JudgeList:
    """Every judge profile, with its content hash and the identity it votes under here."""
    del caller  # any role may read the judges
    lines = [describe_profile(p, ctx.settings) for p in judges.list_profiles()]
    return JudgeList.model_validate({"judges": lines})


@router.get("/v1/panels", response_model=PanelList)
def list_panels(ctx: Ctx, caller: Caller) -> PanelList:
    """Every panel with its id, family and assignments; which one the service uses by default."""
    del caller
    defaults: dict[str, list[str]] = {}
    for task in ctx.registry.all():
        defaults.setdefault(judges.panel_for_task(task, ctx.settings).id, []).append(task.ref)
    lines: list[dict[str, Any]] = [
        {
            **describe_panel(p),
            "service_panel": p.id == ctx.evaluator.panel_id,
            "default_for_tasks": defaults.get(p.id, []),
        }
        for p in judges.list_panels()
    ]
    return PanelList.model_validate({"panels": lines})
