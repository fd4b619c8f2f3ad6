"""The ``static`` judge: decidable rules from the static checks and the render log.

F1 (delivery rules) is decided from the checks (every failed check fails F1) and the render log
(blocked requests, a script that executed, a render over the render budget). On an animated
task, a drawing in which the renderer detected no animation at all fails A1 (nothing can turn).
Everything else it leaves to other judges. Pure.
"""

from __future__ import annotations

import time

from judges.inputs import CheckSummary, JudgeInput, RenderSummary
from judges.jury import RENDER_BUDGET_REASON
from judges.model import Evidence, JudgeFailure, JudgeProfile, Verdict, VerdictStatus
from regua.settings import Settings
from tasks import Criterion, Mode, TaskSpec

CHECKS_REF = "checks.json"
RENDER_REF = "render.json"

_Answer = tuple[VerdictStatus, Evidence, dict[str, object]]


class StaticJudge:
    """Deterministic rules; always eligible (no calibration needed)."""

    def __init__(self, profile: JudgeProfile) -> None:
        """Bind the judge to its profile."""
        self.profile = profile

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """F1 on every task; A1 on animated tasks (only to fail a drawing with no animation)."""
        return criterion.id == "F1" or (criterion.id == "A1" and task.mode is Mode.ANIMATED)

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure | None:
        """Decide F1 (or A1 when no animation exists); abstain otherwise."""
        started = time.perf_counter()
        if inp.criterion.id == "F1":
            if inp.checks is None:
                detail = "no static check report was given"
                return JudgeFailure(inp.criterion.id, self.profile.id, "no_checks", detail)
            answer: _Answer | None = _f1(inp.checks, inp.render)
        elif inp.criterion.id == "A1":
            answer = _a1(inp.render)
        else:
            answer = None
        if answer is None:
            return None
        status, evidence, details = answer
        ms = (time.perf_counter() - started) * 1000.0
        return Verdict(inp.criterion.id, status, evidence, self.profile.id, ms, details=details)


def _a1(render: RenderSummary) -> _Answer | None:
    """Fail A1 when a finished render detected no animation at all; abstain otherwise.

    A partial render proves nothing about animation.
    """
    if render.status != "ok" or render.animation_detected is not False:
        return None
    evidence = Evidence(RENDER_REF, None, "the renderer detected no animation at all")
    return VerdictStatus.FAIL, evidence, {"animation": {"detected": False}}


def _f1(checks: CheckSummary, render: RenderSummary) -> _Answer:
    if not checks.svg_found:
        return VerdictStatus.FAIL, Evidence(CHECKS_REF, None, "no SVG in the reply"), {}
    failed = checks.failed
    details: dict[str, object] = {"failed_checks": [r.check_id for r in failed]}
    if failed or checks.status == "fail":
        return _failed_checks(checks, details)
    if render.status == "skipped":
        desc = "static checks pass but no render log to confirm no request or script ran"
        return VerdictStatus.UNCERTAIN, Evidence(CHECKS_REF, None, desc), details
    details["blocked_requests"] = len(render.blocked_requests)
    details["script_executed"] = render.script_executed
    details["navigations"] = len(render.navigations)
    if render.navigations:
        # no task allows a drawing to replace itself: the renderer refused it, the rule fails
        shown = ", ".join(render.navigations[:3])
        desc = f"the drawing tried to navigate the page away ({shown}); the renderer refused it"
        return VerdictStatus.FAIL, Evidence(f"{RENDER_REF}#navigations", None, desc), details
    if render.script_executed:
        ev = Evidence(f"{RENDER_REF}#script_executed", None, "a script executed while rendering")
        return VerdictStatus.FAIL, ev, details
    if render.blocked_requests:
        urls = ", ".join(render.blocked_requests[:3])
        desc = f"{len(render.blocked_requests)} external request(s) attempted and blocked: {urls}"
        return VerdictStatus.FAIL, Evidence(f"{RENDER_REF}#blocked_requests", None, desc), details
    if render.status == "over_budget":
        desc = render.detail or f"{RENDER_BUDGET_REASON} ({render.cause})"
        return VerdictStatus.FAIL, Evidence(RENDER_REF, None, desc), details
    if render.status != "ok":
        desc = f"static checks pass but the render did not finish ({render.cause})"
        return VerdictStatus.UNCERTAIN, Evidence(RENDER_REF, None, desc), details
    desc = f"all {len(checks.results)} static checks pass; no request blocked, no script executed"
    return VerdictStatus.PASS, Evidence(CHECKS_REF, None, desc), details


def _failed_checks(checks: CheckSummary, details: dict[str, object]) -> _Answer:
    failed = checks.failed
    ids = ", ".join(r.check_id for r in failed) or "checks"
    first_id = failed[0].check_id if failed else "checks"
    head = failed[0].evidence[0] if failed and failed[0].evidence else None
    msg = head.message if head is not None else ""
    where = f" (line {head.line})" if head is not None and head.line else ""
    desc = f"static check failed: {ids}" + (f" — {msg}{where}" if msg else "")
    return VerdictStatus.FAIL, Evidence(f"{CHECKS_REF}#{first_id}", None, desc), details


def create_static_judge(profile: JudgeProfile, settings: Settings | None = None) -> StaticJudge:
    """Factory registered for kind ``static`` (settings are not needed)."""
    del settings
    return StaticJudge(profile)
