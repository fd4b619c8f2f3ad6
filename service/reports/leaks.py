"""Leak flags in views and reports: replies carrying a reserved task's canary, prompt or 8-grams.

Flags are written by the check stage (:mod:`service.pipeline.leak_check`); they are shown to
admins only (a run's JSON and page, the report's ``leaks`` section), one entry per reserved task.
"""

from __future__ import annotations

from collections.abc import Container

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.views.runs import LeakSummary, LeakView
from service.storage import LeakFlag, iso


def leak_views(session: Session, run_id: str) -> list[LeakView]:
    """The leak flags of one run: which reserved task, found how (canary, prompt, overlap), when."""
    rows = session.scalars(
        select(LeakFlag).where(LeakFlag.run_id == run_id).order_by(LeakFlag.id)
    ).all()
    return [
        LeakView(
            task=r.task_ref,
            kind=r.kind,
            flagged_at=iso(r.created_at),
            overlap=r.overlap,
            share=r.share,
        )
        for r in rows
    ]


def leak_report(session: Session, only: Container[str] | None = None) -> list[LeakSummary]:
    """Per reserved task: how many flags of each kind, and which runs (of ``only`` when given)."""
    by_task: dict[str, LeakSummary] = {}
    for row in session.scalars(select(LeakFlag).order_by(LeakFlag.task_ref, LeakFlag.id)):
        if only is not None and row.run_id not in only:
            continue
        entry = by_task.setdefault(
            row.task_ref, LeakSummary(task=row.task_ref, canary=0, prompt=0, runs=[])
        )
        if row.kind == "canary":
            entry.canary += 1
        elif row.kind == "prompt":
            entry.prompt += 1
        elif row.kind == "overlap":
            entry.overlap += 1
        if row.run_id not in entry.runs:
            entry.runs.append(row.run_id)
    return list(by_task.values())
