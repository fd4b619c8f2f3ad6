"""Where two sets of evaluations disagree: per criterion, how many verdicts moved and which runs.

A selector names a set of evaluations, one per run:

- a re-scoring batch id (``rs_…``): the evaluations it appended;
- ``previous:<batch id>``: the evaluations that batch superseded;
- a judge panel id (``NAME@VERSION``): each run's newest evaluation made with that panel;
- an evaluation id (digits): that one evaluation.

Runs present in both sets are compared on the jury's per-criterion status and on the outcome.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import NotFoundError
from service.storage import CriterionOutcomeRow, Evaluation, RescoreBatch, RescoreItem


class CriterionDiff(BaseModel):
    """How one criterion's status moved between two sets of evaluations."""

    compared: int = 0
    moved: int = 0
    transitions: dict[str, int] = Field(default_factory=dict)
    """``before->after`` → runs, e.g. ``pass->fail``."""
    runs: list[str] = Field(default_factory=list)


class OutcomeDiff(BaseModel):
    """How the runs' outcomes moved."""

    moved: int
    transitions: dict[str, int]
    runs: list[str]


class EvaluationDiff(BaseModel):
    """Per criterion and for the outcome: how many runs moved between a and b, and which."""

    a: str
    b: str
    runs_compared: int
    only_in_a: int
    only_in_b: int
    criteria: dict[str, CriterionDiff]
    outcome: OutcomeDiff
    moved_runs: list[str]


def resolve_selector(s: Session, selector: str, task_ref: str | None = None) -> dict[str, int]:
    """``{run_id: evaluation_id}`` for a selector (see the module docstring)."""
    if selector.isdigit():
        ev = s.get(Evaluation, int(selector))
        if ev is None:
            raise NotFoundError(f"no evaluation {selector}")
        return {ev.run_id: ev.id}
    previous = selector.startswith("previous:")
    batch_id = selector.removeprefix("previous:")
    if s.get(RescoreBatch, batch_id) is not None:
        rows = s.execute(
            select(
                RescoreItem.run_id, RescoreItem.evaluation_id, RescoreItem.previous_evaluation_id
            )
            .where(RescoreItem.batch_id == batch_id)
            .order_by(RescoreItem.id)
        ).all()
        if previous:
            return {run: prev for run, _ev, prev in rows if prev is not None}
        return {run: ev for run, ev, _prev in rows}
    if previous:
        raise NotFoundError(f"no re-scoring batch {batch_id!r}")
    q = select(Evaluation.run_id, Evaluation.id, Evaluation.judge_panel).order_by(Evaluation.id)
    if task_ref:
        q = q.where(Evaluation.task_ref == task_ref)
    out: dict[str, int] = {}
    for run_id, ev_id, panel in s.execute(q):
        if isinstance(panel, dict) and panel.get("id") == selector:
            out[run_id] = ev_id  # ordered by id: the newest wins
    if not out:
        raise NotFoundError(f"{selector!r} names no batch, panel or evaluation with results")
    return out


def _statuses(s: Session, ids: list[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = defaultdict(dict)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = s.execute(
            select(
                CriterionOutcomeRow.evaluation_id,
                CriterionOutcomeRow.criterion,
                CriterionOutcomeRow.status,
            ).where(CriterionOutcomeRow.evaluation_id.in_(chunk))
        )
        for ev_id, criterion, status in rows:
            out[ev_id][criterion] = status
    return out


def diff_evaluations(s: Session, a: str, b: str, task_ref: str | None = None) -> EvaluationDiff:
    """Per criterion: runs compared, verdicts moved, transitions (``pass->fail``) and the runs."""
    left, right = resolve_selector(s, a, task_ref), resolve_selector(s, b, task_ref)
    common = sorted(set(left) & set(right))
    ids = sorted({left[r] for r in common} | {right[r] for r in common})
    statuses = _statuses(s, ids)
    outcomes = dict(
        s.execute(select(Evaluation.id, Evaluation.outcome).where(Evaluation.id.in_(ids))).all()
    )
    per: dict[str, CriterionDiff] = {}
    moved_runs: set[str] = set()
    outcome_moves: Counter[str] = Counter()
    outcome_runs: list[str] = []
    for run in common:
        sa, sb = statuses.get(left[run], {}), statuses.get(right[run], {})
        for criterion in sorted(set(sa) | set(sb)):
            entry = per.setdefault(criterion, CriterionDiff())
            entry.compared += 1
            before, after = sa.get(criterion, "absent"), sb.get(criterion, "absent")
            if before != after:
                entry.moved += 1
                key = f"{before}->{after}"
                entry.transitions[key] = entry.transitions.get(key, 0) + 1
                entry.runs.append(run)
                moved_runs.add(run)
        oa, ob = outcomes.get(left[run]), outcomes.get(right[run])
        if oa != ob:
            outcome_moves[f"{oa}->{ob}"] += 1
            outcome_runs.append(run)
    for entry in per.values():
        entry.transitions = dict(sorted(entry.transitions.items()))
    return EvaluationDiff(
        a=a,
        b=b,
        runs_compared=len(common),
        only_in_a=len(set(left) - set(right)),
        only_in_b=len(set(right) - set(left)),
        criteria=dict(sorted(per.items())),
        outcome=OutcomeDiff(
            moved=len(outcome_runs),
            transitions=dict(sorted(outcome_moves.items())),
            runs=outcome_runs,
        ),
        moved_runs=sorted(moved_runs),
    )
