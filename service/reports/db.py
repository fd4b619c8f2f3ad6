"""Reading report inputs from the service database (the only module here that touches SQL).

One :class:`ReportRow` per finished run, taken from the run's *current* evaluation (older
evaluations stay in the database and are not counted twice). Conventions for fields the service
schema does not have a column for — all optional, read from the run's ``model.params``:

* ``item`` (str): the item key shared by every model answering the same item (else: the run id);
* ``repeat`` (int): the attempt number of that model on that item (else 0);
* ``cost_usd`` (float), ``latency_ms`` (float), ``timed_out`` (bool): the generation's cost and
  latency as the submitter measured them (else unknown — never estimated). A run regua generated
  takes its cost from its stored generation instead; every run's judging cost is its current
  evaluation's priced judge calls (:mod:`service.reports.costs`).

Family and pool come from the stored task spec; the judge panel id from ``evaluation.judge_panel``
(``id``, else a hash of the panel).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.orm import Session

from regua.errors import NotFoundError
from service.access.pools import hidden_refs, retirements
from service.reports.build import ReportConfig, build_report
from service.reports.costs import with_costs
from service.reports.leaks import leak_report
from service.reports.revisions import revision_section, split_first_answers
from service.reports.rows import JudgeVote, ReportRow
from service.reports.scores import read_scores, score_section
from service.review.outcome import AuditRecord
from service.storage.models import CriterionOutcomeRow, Evaluation, Run, TaskRow, VerdictRow
from service.storage.review_models import ReviewItem
from service.storage.workflow_models import RunRevisionRow


@dataclass
class ReportInputs:
    """Everything a report is computed from, as read from the database."""

    rows: list[ReportRow] = field(default_factory=list)
    votes: list[JudgeVote] = field(default_factory=list)
    audits: list[AuditRecord] = field(default_factory=list)
    task_hashes: dict[str, str] = field(default_factory=dict)
    task_dimensions: dict[str, dict[str, str]] = field(default_factory=dict)
    """Task ref → the dimensions recorded in its spec (template variants; ``{}`` otherwise)."""
    unfinished_runs: int = 0
    """Runs matching the filters that have no outcome yet (queued or running): not counted."""
    revised: list[ReportRow] = field(default_factory=list)
    """Rows of revised runs (render-and-revise rounds): never in ``rows``, reported apart."""
    rounds: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Revised run id → (round, the chain's first run id)."""


def panel_id(panel: Any) -> str | None:
    """The judge panel's id, or ``sha256:<12 hex>`` of its canonical JSON when it has none."""
    if isinstance(panel, dict) and isinstance(panel.get("id"), str):
        return str(panel["id"])
    if not panel:
        return None
    text = json.dumps(panel, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _task_filter(query: Select[Any], tasks: Sequence[str]) -> Select[Any]:
    """``ID@VERSION`` selects one version; a bare ``ID`` selects every version of the task."""
    if not tasks:
        return query
    exact = [t for t in tasks if "@" in t]
    bare = [t for t in tasks if "@" not in t]
    conds = []
    if exact:
        conds.append(Run.task_ref.in_(exact))
    if bare:
        conds.append(TaskRow.task_id.in_(bare))
    return query.where(or_(*conds))


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _selection(
    tasks: Sequence[str], models: Sequence[str], submitted_by: int | None, hidden: Sequence[str]
) -> Select[Any]:
    """Ids of the runs matching the task, model and submitter filters (any status).

    A submitter's selection never holds a run of a ``hidden`` (reserved) task, whoever
    submitted it: its family and results are for admins.
    """
    query = _task_filter(select(Run.id).join(TaskRow, TaskRow.id == Run.task_pk), tasks)
    if models:
        query = query.where(Run.model_label.in_(list(models)))
    if submitted_by is not None:
        query = query.where(Run.submitted_by == submitted_by, Run.task_ref.not_in(list(hidden)))
    return query


def load_report_inputs(
    session: Session,
    tasks: Sequence[str] = (),
    *,
    models: Sequence[str] = (),
    submitted_by: int | None = None,
    include_votes: bool = True,
    include_audits: bool = True,
) -> ReportInputs:
    """Read the rows (and judge votes and resolved audits) of the selected runs.

    ``submitted_by`` restricts to one token's runs (a submitter sees only its own runs).
    """
    out = ReportInputs()
    scope = and_(Run.outcome.is_not(None), Run.status == "done")
    hidden = sorted(hidden_refs(session)) if submitted_by is not None else []
    matching = _selection(tasks, models, submitted_by, hidden)
    unfinished = matching.where(~scope)
    out.unfinished_runs = int(
        session.execute(select(func.count()).select_from(unfinished.subquery())).scalar_one()
    )
    selected = select(matching.where(scope).subquery().c.id)
    task_info = _task_info(session, out.task_hashes, out.task_dimensions)
    rows = with_costs(
        session, _read_rows(session, selected, task_info, _criterion_statuses(session, selected))
    )
    out.rounds = revision_rounds(session, selected)
    out.rows = split_first_answers(rows, out.rounds)
    out.revised = [r for r in rows if r.run_id in out.rounds]
    refs = {r.run_id: r.task_ref for r in rows}
    if include_votes:
        out.votes = _read_votes(session, selected, refs)
    if include_audits:
        out.audits = _read_audits(session, selected)
    return out


def revision_rounds(session: Session, selected: Select[Any]) -> dict[str, tuple[int, str]]:
    """Revised run id → (round, first run id) among the selected runs."""
    query = select(RunRevisionRow.run_id, RunRevisionRow.round, RunRevisionRow.first_run_id).where(
        RunRevisionRow.run_id.in_(selected)
    )
    return {str(rid): (int(rnd), str(first)) for rid, rnd, first in session.execute(query)}


def _task_info(
    session: Session, hashes: dict[str, str], dims: dict[str, dict[str, str]]
) -> dict[int, tuple[str, str, str]]:
    """Ref, family and pool of every stored task by row id; fills ``hashes`` and ``dims``."""
    task_info: dict[int, tuple[str, str, str]] = {}
    for pk, ref, content_hash, spec in session.execute(
        select(TaskRow.id, TaskRow.ref, TaskRow.content_hash, TaskRow.spec)
    ):
        task_info[pk] = (ref, str(spec.get("family", "")), str(spec.get("pool", "")))
        hashes[ref] = content_hash
        found = spec.get("dimensions")
        dims[ref] = {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
    return task_info


def _criterion_statuses(session: Session, selected: Select[Any]) -> dict[int, dict[str, str]]:
    """Criterion → status of the current evaluation of each selected run, by evaluation id."""
    crit: dict[int, dict[str, str]] = defaultdict(dict)
    crit_q = (
        select(
            CriterionOutcomeRow.evaluation_id,
            CriterionOutcomeRow.criterion,
            CriterionOutcomeRow.status,
        )
        .join(Run, Run.current_evaluation_id == CriterionOutcomeRow.evaluation_id)
        .where(Run.id.in_(selected))
    )
    for ev_id, criterion, status in session.execute(crit_q):
        crit[ev_id][criterion] = status
    return crit


def _read_rows(
    session: Session,
    selected: Select[Any],
    task_info: dict[int, tuple[str, str, str]],
    crit: dict[int, dict[str, str]],
) -> list[ReportRow]:
    """One report row per selected run, in run id order, with its current evaluation's figures."""
    run_q = (
        select(
            Run.id,
            Run.task_pk,
            Run.model_label,
            Run.model_provider,
            Run.model_params,
            Run.outcome,
            Run.current_evaluation_id,
            Evaluation.outcome,
            Evaluation.judge_panel,
        )
        .outerjoin(Evaluation, Evaluation.id == Run.current_evaluation_id)
        .where(Run.id.in_(selected))
        .order_by(Run.id)
    )
    panels: dict[str, str | None] = {}
    rows: list[ReportRow] = []
    for rid, task_pk, label, provider, params, run_out, ev_id, ev_out, panel in session.execute(
        run_q
    ):
        ref, family, pool = task_info[task_pk]
        judged_by = _cached_panel_id(panel, panels)
        p = params if isinstance(params, dict) else {}
        item = p.get("item")
        repeat = p.get("repeat")
        rows.append(
            ReportRow(
                run_id=rid,
                task_ref=ref,
                family=family,
                pool=pool,
                model=report_model_label(label, judged_by),
                outcome=ev_out or run_out,
                item_key=str(item) if item is not None else None,
                repeat=repeat if isinstance(repeat, int) and not isinstance(repeat, bool) else 0,
                criteria=crit.get(ev_id, {}) if ev_id is not None else {},
                evaluation_id=str(ev_id) if ev_id is not None else None,
                judge_panel_id=judged_by,
                cost_usd=_num(p.get("cost_usd")),
                latency_ms=_num(p.get("latency_ms")),
                timed_out=p.get("timed_out") is True,
                provider=provider,
            )
        )
    return rows


MOCK_PANEL_MARK = "-mock@"
"""A panel whose id holds this seats a mock judge (the demo's ``pelican-bicycle-mock@1``)."""


def report_model_label(label: str, judged_by: str | None) -> str:
    """The model a run is reported under: runs judged by a mock panel never pool with others.

    A mock panel's runs are grouped as ``LABEL [MOCK PANEL-ID]``, apart from the same label's
    runs judged by any live panel.
    """
    if judged_by and MOCK_PANEL_MARK in judged_by:
        return f"{label} [MOCK {judged_by}]"
    return label


def _cached_panel_id(panel: Any, cache: dict[str, str | None]) -> str | None:
    """:func:`panel_id`, computed once per distinct panel without an id (``cache`` by JSON)."""
    if isinstance(panel, dict) and isinstance(panel.get("id"), str):
        pid: str | None = panel["id"]
        return pid
    key = json.dumps(panel, sort_keys=True) if panel else ""
    if key not in cache:
        cache[key] = panel_id(panel)
    return cache[key]


def _read_votes(session: Session, selected: Select[Any], refs: dict[str, str]) -> list[JudgeVote]:
    """Every judge verdict of the selected runs' current evaluations."""
    vote_q = (
        select(Run.id, VerdictRow.criterion, VerdictRow.judge_profile_id, VerdictRow.status)
        .join(Run, Run.current_evaluation_id == VerdictRow.evaluation_id)
        .where(Run.id.in_(selected))
    )
    return [
        JudgeVote(rid, refs.get(rid, ""), criterion, judge, status)
        for rid, criterion, judge, status in session.execute(vote_q)
    ]


def _read_audits(session: Session, selected: Select[Any]) -> list[AuditRecord]:
    """The resolved audits of the selected runs (criterion, audited judges, final label)."""
    audit_q = select(ReviewItem.criterion, ReviewItem.audited_judges, ReviewItem.final_label).where(
        ReviewItem.kind == "audit",
        ReviewItem.state == "resolved",
        ReviewItem.run_id.in_(selected),
    )
    return [
        AuditRecord(criterion, tuple(judges or ()), label or "")
        for criterion, judges, label in session.execute(audit_q)
    ]


def generate_report(
    session: Session,
    tasks: Sequence[str] = (),
    config: ReportConfig | None = None,
    *,
    models: Sequence[str] = (),
    submitted_by: int | None = None,
) -> tuple[dict[str, Any], ReportInputs]:
    """Read the selected runs and build their report; raises NotFoundError when none match."""
    inputs = load_report_inputs(session, tasks, models=models, submitted_by=submitted_by)
    if not inputs.rows:
        what = ", ".join(tasks) or "any task"
        raise NotFoundError(
            f"no finished runs for {what}"
            + (
                f" ({inputs.unfinished_runs} still queued or running)"
                if inputs.unfinished_runs
                else ""
            )
        )
    cfg = config or ReportConfig()
    filters = dict(cfg.filters) | {
        "task": list(tasks),
        "model": list(models),
        "unfinished_runs_left_out": inputs.unfinished_runs,
    }
    if submitted_by is not None:
        filters["submitted_by_token"] = submitted_by
    cfg = replace(cfg, filters=filters)
    used = {row.task_ref for row in inputs.rows}
    report = build_report(
        inputs.rows,
        cfg,
        audits=inputs.audits,
        votes=inputs.votes,
        task_hashes={r: h for r, h in inputs.task_hashes.items() if r in used},
        task_dimensions={r: d for r, d in inputs.task_dimensions.items() if r in used},
    )
    mark_retired(session, report)
    graded = score_section(read_scores(session, inputs.rows))
    if graded:  # tasks with a rubric: score distributions beside the pass rates
        report["scores"] = graded
    report["revisions"] = revision_section([*inputs.rows, *inputs.revised], inputs.rounds)
    if submitted_by is None:  # admins: replies that carried a reserved task
        reported = {row.run_id for row in inputs.rows}
        report["leaks"] = [entry.model_dump() for entry in leak_report(session, reported)]
    return report, inputs


def mark_retired(session: Session, report: dict[str, Any]) -> None:
    """Say on each retired task version of the report that it is retired, and why.

    Its runs stay in the report (a retired version stays readable); ``retired`` is None for an
    active one.
    """
    notes = retirements(session)
    for tv in report.get("task_versions", ()):
        found = notes.get(tv["task_ref"])
        tv["retired"] = None if found is None else f"retired by {found.retired_by}: {found.note}"
