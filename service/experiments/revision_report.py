"""The render-and-revise part of an experiment's report: rounds of an arm as separate series.

An arm with ``revise: N`` is compared with the other arms on its first answers only (its cases
are its first answers). Its revisions are shown here, one series per round, with how many rounds
each case needed to pass; a series after feedback is never paired, compared or ranked with any
other arm's series or with its own first answers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from service.experiments.paired import count_outcomes
from service.experiments.plan import Plan
from service.experiments.store import CaseView
from service.generation.revision_store import chains_of
from service.reports.revisions import rounds_to_pass, series_label
from service.storage import Database, Run

METHOD = (
    "per arm that revises: round 0 is the arm's first answers (the cases compared above); "
    "round k the answers after k rounds of seeing their own rendered frames; each round is "
    "its own series, never paired, compared or ranked with another series; 'not generated': "
    "a chain that stopped before the round (the model gave no reply)"
)


def _outcomes(db: Database, run_ids: Sequence[str]) -> dict[str, str]:
    """Run id → its outcome, or ``running`` while it is not done."""
    out: dict[str, str] = {}
    with db.read() as s:
        for chunk in (list(run_ids)[i : i + 500] for i in range(0, len(run_ids), 500)):
            for rid, status, outcome in s.execute(
                select(Run.id, Run.status, Run.outcome).where(Run.id.in_(chunk))
            ):
                out[str(rid)] = str(outcome) if status == "done" and outcome else "running"
    return out


def feedback_section(db: Database, plan: Plan, cases: Sequence[CaseView]) -> list[dict[str, Any]]:
    """One entry per revising arm: its series by round and the rounds its cases needed."""
    arms = [a for a in plan.arms if a.revise]
    if not arms:
        return []
    by_arm: dict[str, list[str]] = defaultdict(list)
    for c in cases:
        by_arm[c.arm].append(c.run_id)
    firsts = [r for a in arms for r in by_arm[a.name]]
    with db.read() as s:
        chains = chains_of(s, firsts)
    outcome = _outcomes(db, [r for chain in chains.values() for r in chain.values()])
    out = []
    for arm in arms:
        per_case = [
            {k: outcome.get(rid, "running") for k, rid in chains[first].items()}
            for first in by_arm[arm.name]
        ]
        series = []
        for rnd in range(arm.revise + 1):
            present = [c[rnd] for c in per_case if rnd in c]
            counts = count_outcomes(present)
            series.append(
                {
                    "round": rnd,
                    "series": series_label(rnd),
                    "counts": {
                        **counts.by_outcome(),
                        "not_generated": len(per_case) - len(present),
                    },
                    "pass_rate": counts.pass_rate,
                    "pass_range": counts.range_text(),
                }
            )
        needed = Counter(rounds_to_pass(c, arm.revise) for c in per_case)
        out.append(
            {
                "arm": arm.name,
                "rounds": arm.revise,
                "findings_shown": arm.revise_findings,
                "cases": len(per_case),
                "series": series,
                "rounds_to_pass": dict(sorted(needed.items())),
            }
        )
    return out


def summary_lines(section: Sequence[dict[str, Any]]) -> list[str]:
    """The section as terminal lines."""
    lines = []
    for arm in section:
        lines.append(f"  {arm['arm']} with feedback (apart, never compared):")
        for s in arm["series"]:
            c = s["counts"]
            lines.append(
                f"    {s['series']}: pass {c['pass']}/{arm['cases']} ({s['pass_range']}), "
                f"fail {c['fail']}, pending {c['pending']}, running {c['running']}"
            )
        needed = ", ".join(f"{k}: {v}" for k, v in arm["rounds_to_pass"].items())
        lines.append(f"    rounds to pass: {needed}")
    return lines
