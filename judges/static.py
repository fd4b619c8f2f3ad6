"""The ``static`` judge: decidable rules from the static checks and the render log.

F1 (delivery rules) is decided from ``CheckReport.to_dict()`` (every failed check fails F1)
and ``render.json`` (blocked requests, script executed). On an animated task, a drawing in
which the renderer detected no animation at all fails A1 (nothing can turn). Everything else
it leaves to other judges. Pure.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from judges.model import Evidence, JudgeFailure, JudgeInput, JudgeProfile, Verdict, VerdictStatus
from regua.settings import Settings
from tasks import Criterion, Mode, TaskSpec

CHECKS_REF = "checks.json"
RENDER_REF = "render.json"


class StaticJudge:
    """Deterministic rules; always eligible (no calibration needed)."""

    def __init__(self, profile: JudgeProfile) -> None:
        self.profile = profile

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """F1 on every task; A1 on animated tasks (only to fail a drawing with no animation)."""
        return criterion.id == "F1" or (criterion.id == "A1" and task.mode is Mode.ANIMATED)

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure | None:
        """Decide F1 (or A1 when no animation exists); abstain otherwise."""
        started = time.perf_counter()
        if inp.criterion.id == "F1":
            status, evidence, details = self._f1(inp.checks, inp.render)
        elif inp.criterion.id == "A1":
            anim = inp.render.get("animation") if inp.render else None
            if not _render_complete(inp.render):
                return None  # a partial render proves nothing about animation
            if not isinstance(anim, Mapping) or anim.get("detected") is not False:
                return None
            status = VerdictStatus.FAIL
            evidence = Evidence(RENDER_REF, None, "the renderer detected no animation at all")
            details = {"animation": dict(anim)}
        else:
            return None
        if status is None:
            return JudgeFailure(
                inp.criterion.id, self.profile.id, "no_checks", evidence.description
            )
        ms = (time.perf_counter() - started) * 1000.0
        return Verdict(inp.criterion.id, status, evidence, self.profile.id, ms, details=details)

    def _f1(
        self, checks: Mapping[str, Any], render: Mapping[str, Any]
    ) -> tuple[VerdictStatus | None, Evidence, dict[str, Any]]:
        if not checks:
            return None, Evidence(None, None, "no static check report was given"), {}
        extraction = checks.get("extraction") or {}
        if isinstance(extraction, Mapping) and extraction.get("status") == "no_svg":
            return VerdictStatus.FAIL, Evidence(CHECKS_REF, None, "no SVG in the reply"), {}
        results = _results(checks)
        failed = [r for r in results if r.get("status") == "fail"]
        details: dict[str, Any] = {"failed_checks": [r.get("id") for r in failed]}
        if failed or checks.get("status") == "fail":
            first = failed[0] if failed else {"id": "checks", "evidence": []}
            items = list(first.get("evidence") or [])
            head = items[0] if items and isinstance(items[0], Mapping) else {}
            msg = str(head.get("message") or "")
            where = f" (line {head['line']})" if head.get("line") else ""
            ids = ", ".join(str(r.get("id")) for r in failed) or "checks"
            desc = f"static check failed: {ids}" + (f" — {msg}{where}" if msg else "")
            return (
                VerdictStatus.FAIL,
                Evidence(f"{CHECKS_REF}#{first.get('id')}", None, desc),
                details,
            )
        if not render:
            desc = "static checks pass but no render log to confirm no request or script ran"
            return VerdictStatus.UNCERTAIN, Evidence(CHECKS_REF, None, desc), details
        blocked = list(render.get("blocked_requests") or [])
        details["blocked_requests"] = len(blocked)
        details["script_executed"] = bool(render.get("script_executed"))
        if render.get("script_executed"):
            ev = Evidence(
                f"{RENDER_REF}#script_executed", None, "a script executed while rendering"
            )
            return VerdictStatus.FAIL, ev, details
        if blocked:
            urls = ", ".join(str(b.get("url")) for b in blocked[:3])
            desc = f"{len(blocked)} external request(s) attempted and blocked: {urls}"
            return (
                VerdictStatus.FAIL,
                Evidence(f"{RENDER_REF}#blocked_requests", None, desc),
                details,
            )
        if not _render_complete(render):
            desc = f"static checks pass but the render did not finish ({render.get('cause')})"
            return VerdictStatus.UNCERTAIN, Evidence(RENDER_REF, None, desc), details
        n = len(results)
        desc = f"all {n} static checks pass; no request blocked, no script executed"
        return VerdictStatus.PASS, Evidence(CHECKS_REF, None, desc), details


def _render_complete(render: Mapping[str, Any]) -> bool:
    """False when ``render.json`` says the render did not finish (its log is partial)."""
    return str(render.get("status") or "ok") == "ok"


def _results(checks: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The check results: ``checks`` in ``CheckReport.to_dict()``, ``results`` in the contract."""
    items = checks.get("checks")
    if not isinstance(items, list | tuple):
        items = checks.get("results") or ()
    return [r for r in items if isinstance(r, Mapping)]


def create_static_judge(profile: JudgeProfile, settings: Settings | None = None) -> StaticJudge:
    """Factory registered for kind ``static``."""
    return StaticJudge(profile)
