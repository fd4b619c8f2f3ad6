"""One judging configuration per experiment: its panel, resolved once, seated by the service.

When an experiment starts, the service resolves the panel of every task version it asks for
(the panel the file names, else the version's default panel in this service), seats its judges
with the service's settings and records each panel (``id#hash``) and each judge's voting
identity on the experiment's plan. Its runs then ask for exactly that panel, so they are judged
by one configuration: the service's, whatever process submitted the file.

A panel the file names must be seatable: every model judge configured (a model named by its
profile or ``REGUA_JUDGE_MODEL``) and every voting judge trusted by its calibration gate on at
least one criterion of the task it would judge. Otherwise the experiment refuses to start
(:class:`PanelNotSeatedError`, 422) naming the judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import judges
from judges.jury import ALWAYS_ELIGIBLE_KINDS
from regua.errors import PanelNotSeatedError
from service.experiments.plan import Plan, PlanJudging
from tasks import TaskSpec

if TYPE_CHECKING:
    from service.context import ServiceContext


def identity(profile: judges.JudgeProfile) -> str:
    """The identity a judge votes under: its effective profile id and content hash."""
    return f"{profile.id}#{profile.content_hash()[:12]}"


def _needs_model(profile: judges.JudgeProfile) -> bool:
    return "llm" in profile.kind


def _check_seat(
    ctx: ServiceContext,
    panel: judges.JudgePanel,
    task: TaskSpec,
    pid: str,
    judge: judges.Judge,
) -> None:
    """Refuse a judge of a named panel that is not configured or not trusted (named)."""
    profile = judge.profile
    if _needs_model(profile) and not profile.model:
        raise PanelNotSeatedError(
            f"panel {panel.id}: judge {pid} is not configured in this service (no model: set "
            "REGUA_JUDGE_MODEL and REGUA_JUDGE_BASE_URL, or name the model in its profile)"
        )
    if profile.kind in ALWAYS_ELIGIBLE_KINDS or pid == panel.adjudicator:
        return
    criteria = [c.id for c in task.criteria if pid in panel.profiles_for(c.id)]
    table = ctx.gate.current()
    if not any(judges.is_eligible(table, profile, c, task.family) for c in criteria):
        raise PanelNotSeatedError(
            f"panel {panel.id}: judge {profile.id} is not trusted by its calibration gate on "
            f"any criterion of {task.ref}; calibrate it (regua calibrate --judge {pid}) or "
            "name another panel"
        )


def resolve_judging(ctx: ServiceContext, plan: Plan) -> Plan:
    """The plan with each task version's panel and judges' identities recorded.

    Raises:
        PanelNotSeatedError: the file names a panel whose judge this service cannot seat.
    """
    refs = sorted({ref for arm in plan.arms for ref in arm.refs.values()})
    judging: dict[str, PlanJudging] = {}
    for ref in refs:
        task = ctx.registry.get(ref)
        panel = ctx.evaluator.panel_for(task, plan.panel)
        seated = judges.seat_panel(panel, ctx.settings)
        if plan.panel is not None:
            for pid, judge in sorted(seated.items()):
                _check_seat(ctx, panel, task, pid, judge)
        judging[ref] = PlanJudging(
            panel=panel.id,
            panel_hash=panel.content_hash(),
            judges={
                pid: f"{j.profile.id}#{j.profile.content_hash()[:12]}" for pid, j in seated.items()
            },
        )
    return plan.model_copy(update={"judging": judging})


def check_judging(ctx: ServiceContext, plan: Plan) -> None:
    """Refuse to resume an experiment whose recorded panel this service can no longer seat."""
    if plan.panel is None:
        return
    for ref in sorted(plan.judging):
        task = ctx.registry.get(ref)
        panel = judges.require_panel(plan.judging[ref].panel)
        for pid, judge in sorted(judges.seat_panel(panel, ctx.settings).items()):
            _check_seat(ctx, panel, task, pid, judge)


def panel_of(plan: Plan, ref: str) -> str | None:
    """The panel recorded for a task version (the plan's own for a plan recorded without)."""
    found = plan.judging.get(ref)
    return found.panel if found is not None else plan.panel
