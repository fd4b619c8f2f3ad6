"""The database adapter of experiment reports: stored rows in, report dicts out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterable
from typing import Any

from sqlalchemy import select

import judges
import regua
from regua.errors import NotFoundError
from service.experiments.history import build_history
from service.experiments.judged_by import judged_by
from service.experiments.report import Report, build_experiment_report
from service.experiments.revision_report import METHOD as FEEDBACK_METHOD
from service.experiments.revision_report import feedback_section
from service.experiments.store import CaseView, case_views, get_experiment, plan_of, windows_of
from service.generation.calls import resent_calls
from service.storage import Database, Evaluation, ExperimentRow, iso


def _judging(db: Database, cases: Iterable[CaseView]) -> dict[str, Any]:
    """The panels (id, content hash) that judged each arm, and their judges' profile hashes."""
    by_eval: dict[int, set[str]] = defaultdict(set)
    for c in cases:
        if c.evaluation_id is not None:
            by_eval[c.evaluation_id].add(c.arm)
    panels: dict[str, dict[str, Any]] = {}
    by_arm: dict[str, set[str]] = defaultdict(set)
    with db.read() as s:
        for ev_id, panel in s.execute(
            select(Evaluation.id, Evaluation.judge_panel).where(Evaluation.id.in_(by_eval))
        ):
            tag = f"{panel.get('id')}#{str(panel.get('content_hash', ''))[:12]}"
            panels[tag] = panel
            for arm in by_eval[ev_id]:
                by_arm[arm].add(tag)
    profiles: dict[str, str | None] = {}
    for panel in panels.values():
        for pids in (panel.get("assignments") or {}).values():
            for pid in pids:
                try:
                    profiles[pid] = judges.get_profile(pid).content_hash()
                except NotFoundError:
                    profiles[pid] = None
    return {
        "panels": [
            {"id": p.get("id"), "content_hash": p.get("content_hash")} for p in panels.values()
        ],
        "judges": dict(sorted(profiles.items())),
        "panels_by_arm": {arm: sorted(tags) for arm, tags in by_arm.items()},
    }


def _meta(row: ExperimentRow, resent: int) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "window": row.window,
        "status": row.status,
        "error": row.error,
        "spec_hash": row.spec_hash,
        "created_at": iso(row.created_at),
        "finished_at": iso(row.finished_at) if row.finished_at else None,
        "regua_version": regua.__version__,
        "resent_calls": resent,
    }


def experiment_report(db: Database, ident: str) -> Report:
    """The report of the stored experiment ``ident`` (``NAME@WINDOW``)."""
    row = get_experiment(db, ident)
    cases = case_views(db, ident)
    judging = _judging(db, cases) | judged_by(db, cases)
    plan = plan_of(row)
    with db.read() as s:
        resent = resent_calls(s, ident)
    report = build_experiment_report(_meta(row, resent), plan, cases, judging)
    report["reproducibility"]["panels_by_arm"] = judging["panels_by_arm"]
    report["feedback"] = feedback_section(db, plan, cases)
    report["methods"]["feedback"] = FEEDBACK_METHOD
    return report


def experiment_history(
    db: Database, name: str, only: Container[str] | None = None
) -> dict[str, Any]:
    """Every window of the experiment ``name`` as series (never spliced across versions).

    ``only``: the experiment ids to include (the windows the caller may read).
    """
    rows = [r for r in windows_of(db, name) if only is None or r.id in only]
    if not rows:
        raise NotFoundError(f"no stored runs of experiment {name!r}")
    windows = []
    for row in rows:
        report = experiment_report(db, row.id)
        rep = report["reproducibility"]
        arms = [
            {
                "arm": a["arm"],
                "model": rep["models"][a["arm"]],
                "task_versions": rep["task_versions"][a["arm"]],
                "panels": rep["panels_by_arm"].get(a["arm"], []),
                "voting_judges": rep["voting_judges_by_arm"].get(a["arm"], []),
                "pass_rate": a["pass_rate"],
                "counts": a["counts"],
                "cases": a["cases"],
            }
            for a in report["arms"]
        ]
        windows.append(
            {
                "window": row.window,
                "experiment_id": row.id,
                "created_at": iso(row.created_at),
                "arms": arms,
            }
        )
    return build_history(name, windows)
