"""Synthetic report rows with known structure (for the benchmark, examples and tests).

Model ``k`` has a latent skill; each item has a difficulty; a run passes with probability
``sigmoid(skill - difficulty)``, and a share of runs is left pending or incomplete. Nothing here is
real data, and nothing here is used by a real report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import insert

from service.reports.rows import ReportRow
from service.storage import CriterionOutcomeRow, Database, Evaluation, Run, TaskRow, VerdictRow

_CRITERIA = ("C1", "C2", "C3", "C4", "C5")


def synthetic_rows(
    models: int = 5,
    tasks: tuple[tuple[str, str, str], ...] = (
        ("pelican-bicycle@1", "pelican", "core"),
        ("pelican-bicycle@2", "pelican", "core"),
        ("heron-skateboard@1", "animals", "core"),
        ("crab-kite@1", "animals", "rotating"),
    ),
    items: int = 40,
    repeats: int = 2,
    pending_share: float = 0.08,
    incomplete_share: float = 0.02,
    seed: int = 7,
) -> list[ReportRow]:
    """Rows for every (model, task, item, repeat) (task = (ref, family, pool))."""
    rng = np.random.default_rng(seed)
    skills = np.linspace(1.5, -1.0, models)
    rows: list[ReportRow] = []
    for ref, family, pool in tasks:
        difficulty = rng.normal(0.0, 1.0, items)
        for m in range(models):
            label = f"model-{chr(ord('a') + m)}" if models <= 26 else f"model-{m:02d}"
            prob = 1.0 / (1.0 + np.exp(-(skills[m] - difficulty)))
            for r in range(repeats):
                u = rng.random(items)
                extra = rng.random(items)
                lat = rng.lognormal(8.0, 0.4, items)
                for i in range(items):
                    outcome = _outcome(u[i] < prob[i], extra[i], incomplete_share, pending_share)
                    timed_out = bool(extra[i] > 0.99)
                    run_id = f"{ref}-{label}-{i}-{r}"
                    rows.append(
                        ReportRow(
                            run_id=run_id,
                            task_ref=ref,
                            family=family,
                            pool=pool,
                            model=label,
                            outcome=outcome,
                            item_key=f"item-{i:04d}",
                            repeat=r,
                            criteria=_criteria(outcome, i),
                            evaluation_id=f"ev-{run_id}",
                            judge_panel_id="panel-geometry@1",
                            cost_usd=0.002 + 0.001 * m,
                            latency_ms=None if timed_out else float(lat[i]),
                            timed_out=timed_out,
                        )
                    )
    return rows


def _outcome(passed: bool, extra: float, incomplete_share: float, pending_share: float) -> str:
    """A run's outcome: pass or fail, unless ``extra`` (uniform on [0, 1)) falls in the
    incomplete share or, just above it, the pending share."""
    outcome = "pass" if passed else "fail"
    if extra < incomplete_share:
        outcome = "incomplete"
    elif extra < incomplete_share + pending_share:
        outcome = "pending"
    return outcome


def _criteria(outcome: str, item: int) -> dict[str, str]:
    """Criterion statuses matching ``outcome``: a fail fails one criterion (chosen by the item),
    a pending run's are uncertain, an incomplete run has none."""
    crit = {c: outcome if outcome in ("pass", "fail") else "uncertain" for c in _CRITERIA}
    if outcome == "fail":
        crit = {c: "pass" for c in _CRITERIA} | {_CRITERIA[item % 5]: "fail"}
    if outcome == "incomplete":
        crit = {}
    return crit


def seed_database(db: Database, rows: Sequence[ReportRow], *, judges: int = 0) -> None:
    """Store rows as real service records (tasks, runs, evaluations, criterion outcomes).

    Bulk inserts with the service's own tables (benchmarks and tests only). Item key, repeat,
    cost, latency and timeouts go into ``model.params`` as :mod:`service.reports.db` expects.
    With ``judges`` > 0, each criterion also gets that many judge verdicts (rule judges agreeing
    with the criterion status, except judge 1 which says ``uncertain`` on every fifth run).
    """
    now = datetime.now(UTC)
    task_pk, task_rows = _task_rows(rows, now)
    runs: list[dict[str, Any]] = []
    evals: list[dict[str, Any]] = []
    crits: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    for n, r in enumerate(rows, start=1):
        runs.append(_run_row(r, n, task_pk[r.task_ref], now))
        evals.append(_evaluation_row(r, n, now))
        _add_criterion_rows(r, n, judges, crits, verdicts)
    with db.write() as session:
        for table, batch in (
            (TaskRow, task_rows),
            (Run, runs),
            (Evaluation, evals),
            (CriterionOutcomeRow, crits),
            (VerdictRow, verdicts),
        ):
            for start in range(0, len(batch), 20_000):
                if batch[start : start + 20_000]:
                    session.execute(insert(table), batch[start : start + 20_000])


def _task_rows(
    rows: Sequence[ReportRow], now: datetime
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """The task rows the report rows name (in order of first use) and each ref's primary key."""
    task_pk: dict[str, int] = {}
    task_rows: list[dict[str, Any]] = []
    for r in rows:
        if r.task_ref not in task_pk:
            task_pk[r.task_ref] = len(task_pk) + 1
            task_id, _, version = r.task_ref.partition("@")
            task_rows.append(
                {
                    "id": task_pk[r.task_ref],
                    "ref": r.task_ref,
                    "task_id": task_id,
                    "version": int(version or 0),
                    "content_hash": hashlib.sha256(r.task_ref.encode()).hexdigest(),
                    "spec": {"id": task_id, "family": r.family, "pool": r.pool},
                    "created_at": now,
                }
            )
    return task_pk, task_rows


def _model_params(r: ReportRow) -> dict[str, Any]:
    """Item key, repeat, and (when known) cost, latency and a timeout, as the reports read them."""
    params: dict[str, Any] = {"item": r.item_key, "repeat": r.repeat}
    for key, value in (("cost_usd", r.cost_usd), ("latency_ms", r.latency_ms)):
        if value is not None:
            params[key] = value
    if r.timed_out:
        params["timed_out"] = True
    return params


def _run_row(r: ReportRow, n: int, task_pk: int, now: datetime) -> dict[str, Any]:
    """A finished run whose current evaluation is number ``n``."""
    return {
        "id": r.run_id,
        "task_ref": r.task_ref,
        "task_pk": task_pk,
        "model_label": r.model,
        "model_provider": r.provider,
        "model_params": _model_params(r),
        "submitted_at": now,
        "status": "done",
        "outcome": r.outcome,
        "current_evaluation_id": n,
        "claims": 1,
    }


def _evaluation_row(r: ReportRow, n: int, now: datetime) -> dict[str, Any]:
    """Evaluation number ``n``: the run's first, with its outcome and panel."""
    return {
        "id": n,
        "run_id": r.run_id,
        "kind": "initial",
        "task_ref": r.task_ref,
        "rubric_hash": "0" * 64,
        "checker_version": "bench",
        "judge_panel": {"id": r.judge_panel_id or "panel"},
        "outcome": r.outcome,
        "reasons": [],
        "created_at": now,
    }


def _add_criterion_rows(
    r: ReportRow,
    n: int,
    judges: int,
    crits: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
) -> None:
    """Append evaluation ``n``'s criterion outcomes and ``judges`` verdicts on each (judge 1 says
    ``uncertain`` on every fifth (evaluation, criterion) pair, the others agree)."""
    for k, (criterion, status) in enumerate(r.criteria.items()):
        crits.append(
            {"evaluation_id": n, "criterion": criterion, "kind": "necessary", "status": status}
        )
        for j in range(judges):
            said = "uncertain" if j == 1 and (n + k) % 5 == 0 else status
            verdicts.append(
                {
                    "evaluation_id": n,
                    "criterion": criterion,
                    "judge_profile_id": f"judge-{j}",
                    "status": said,
                    "evidence": [],
                }
            )
