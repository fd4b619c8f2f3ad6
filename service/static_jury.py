"""The static-checks-only jury: what the service decides when no judge panel is installed.

Only the format criterion (static checks) can be decided; every other necessary criterion stays
``uncertain`` with the review reason ``no_reliable_judge``, so outcomes are ``fail`` (a declared
rule was broken), ``pending`` or ``incomplete`` (the machinery failed). It is also the place where
the outcome rule that the service enforces on any panel lives (:func:`apply_machinery_rule`).
"""

from __future__ import annotations

import time
from typing import Any

from service.components import EvalInput, EvalOutput
from tasks import CriterionKind, TaskSpec

#: Criteria decided by the static checks alone (the delivery/format row of the acceptance table).
STATIC_CHECK_CRITERIA = frozenset({"F1"})
PROFILE_ID = "static-checks@1"


def _check_evidence(checks: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    extraction = checks.get("extraction") or {}
    if extraction.get("status") == "no_svg":
        out.append({"artifact_ref": None, "time_s": None, "description": "no SVG in the reply"})
    for result in checks.get("results", []):
        if result.get("status") != "fail":
            continue
        messages = [e.get("message", "") for e in result.get("evidence", [])][:3]
        text = f"check {result.get('id')} failed" + (": " + "; ".join(messages) if messages else "")
        out.append({"artifact_ref": None, "time_s": None, "description": text})
    return out


class StaticJury:
    """Evaluator that uses only the static checks (no judges)."""

    panel_id = "static-only@1"

    def version_for(self, task: TaskSpec) -> str:
        """Always the same panel."""
        del task
        return self.panel_id

    def evaluate(self, inp: EvalInput) -> EvalOutput:
        """Decide F1 from the checks; leave other necessary criteria uncertain."""
        start = time.perf_counter()
        criteria: list[dict[str, Any]] = []
        verdicts: list[dict[str, Any]] = []
        checks = inp.checks
        for c in inp.task.criteria:
            row: dict[str, Any] = {"criterion": c.id, "kind": c.kind.value, "votes": []}
            if not c.applicable:
                row.update(status="not_applicable", review_required=False, review_reason=None)
            elif c.id in STATIC_CHECK_CRITERIA and checks is not None:
                status = "pass" if checks.get("status") == "pass" else "fail"
                evidence = _check_evidence(checks) or [
                    {"artifact_ref": None, "time_s": None, "description": "all static checks pass"}
                ]
                verdicts.append(
                    {
                        "criterion": c.id,
                        "status": status,
                        "evidence": evidence,
                        "judge_profile_id": PROFILE_ID,
                        "latency_ms": (time.perf_counter() - start) * 1000,
                    }
                )
                row.update(status=status, review_required=False, review_reason=None)
                row["votes"] = [
                    {"judge_profile_id": PROFILE_ID, "status": status, "eligible": True}
                ]
            elif c.kind is CriterionKind.NECESSARY:
                row.update(
                    status="uncertain", review_required=True, review_reason="no_reliable_judge"
                )
            else:
                row.update(status="uncertain", review_required=False, review_reason=None)
            criteria.append(row)
        outcome = decide(criteria)
        return EvalOutput(
            outcome=outcome,
            criteria=criteria,
            verdicts=verdicts,
            failures=[],
            panel={"id": self.panel_id, "profiles": [PROFILE_ID]},
        )


def decide(criteria: list[dict[str, Any]]) -> dict[str, Any]:
    """Necessary conditions decide: any fail → fail; all pass → pass; otherwise pending."""
    necessary = [c for c in criteria if c["kind"] == CriterionKind.NECESSARY.value]
    failed = [c["criterion"] for c in necessary if c["status"] == "fail"]
    if failed:
        return {"status": "fail", "reasons": [f"{c} failed" for c in failed], "cause": None}
    open_ = [c["criterion"] for c in necessary if c["status"] == "uncertain"]
    if open_:
        return {"status": "pending", "reasons": [f"{c} uncertain" for c in open_], "cause": None}
    return {"status": "pass", "reasons": [], "cause": None}


def apply_machinery_rule(
    outcome: dict[str, Any],
    checks_status: str | None,
    render_status: str,
    render_cause: str | None,
    checks_cause: str | None = None,
) -> dict[str, Any]:
    """A machinery failure is ``incomplete`` with its cause — unless a declared rule already failed
    the work (the static checks), which stays ``fail``."""
    if checks_status is None:
        cause = f"checks_unavailable: {checks_cause}" if checks_cause else "checks_unavailable"
        return {"status": "incomplete", "reasons": [], "cause": cause[:500]}
    if checks_status == "fail":
        if outcome.get("status") != "fail":
            return {"status": "fail", "reasons": ["static checks failed"], "cause": None}
        return outcome
    if render_status == "incomplete" and outcome.get("status") != "fail":
        cause = f"render_incomplete: {render_cause or 'unknown'}"
        return {"status": "incomplete", "reasons": list(outcome.get("reasons", [])), "cause": cause}
    return outcome
