"""Data behind the run, runs-list and report pages (reads the service's records)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

from pydantic import JsonValue
from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from regua.errors import NotFoundError
from regua.records import field_dict
from regua.views.runs import EvaluationView
from service.access.pools import runs_readable_by
from service.access.tokens import Principal
from service.reports.runs import evaluation_view, run_view
from service.reports.stats import pass_range
from service.review.store import reviews_of
from service.review.views import frames_of, task_spec
from service.storage import Artifact, CriterionOutcomeRow, Evaluation, RenderRecord, Run
from service.storage.blobs import BlobStore
from service.storage.review_models import ReviewItem
from service.web.rows import (
    CriterionCounts,
    HistoryLine,
    LabelLine,
    ModelCounts,
    ReviewLine,
    RunPage,
    TaskCounts,
)

OUTCOMES = ("pass", "fail", "pending", "incomplete")
MAX_TEXT = 200_000


def _text(blobs: BlobStore, session: Session, run_id: str, kind: str) -> str:
    art = session.scalars(
        select(Artifact)
        .where(Artifact.run_id == run_id, Artifact.kind == kind)
        .order_by(Artifact.id)
    ).first()
    if art is None:
        return "(not stored)"
    data = blobs.get(art.sha256)
    text = data[:MAX_TEXT].decode("utf-8", errors="replace")
    if len(data) > MAX_TEXT:
        text += f"\n… ({len(data) - MAX_TEXT} more bytes; fetch the artifact {art.sha256})"
    return text


def readable_runs(principal: Principal, session: Session) -> Select[Run]:
    """A query of the runs this caller may read (see :func:`runs_readable_by`)."""
    principal.require("submitter")
    return select(Run).where(runs_readable_by(principal, session))


def run_page(
    session: Session,
    blobs: BlobStore,
    principal: Principal,
    run_id: str,
    evaluation_id: int | None = None,
) -> RunPage:
    """Everything the run page shows: texts, checks, frames, criteria, versions and history.

    ``evaluation_id`` shows the criteria and versions of an earlier (superseded) evaluation.
    """
    run = session.scalar(readable_runs(principal, session).where(Run.id == run_id))
    if run is None:
        raise NotFoundError(f"no run {run_id!r} readable with this token")
    view = run_view(session, run, include_model=True, leaks=principal.is_admin)
    spec = task_spec(session, run.task_ref)
    evaluation, shown_id = _shown_evaluation(session, run, view.evaluation, evaluation_id)
    evaluations = session.scalars(
        select(Evaluation).where(Evaluation.run_id == run.id).order_by(Evaluation.id.desc())
    ).all()
    current = next((e for e in evaluations if e.id == shown_id), None)
    render = session.scalars(
        select(RenderRecord).where(RenderRecord.run_id == run.id).order_by(RenderRecord.id.desc())
    ).first()
    return RunPage(
        run=run,
        current=current,
        is_latest=shown_id == run.current_evaluation_id,
        latest_id=run.current_evaluation_id,
        render=render,
        panel_text=_panel_text(current.judge_panel if current else {}),
        frames=frames_of(session, run.id),
        evaluation=evaluation,
        questions={c.id: c.question for c in spec.criteria} if spec else {},
        history=_history(session, evaluations),
        checks=view.checks.results,
        reviews=review_items_of(session, run.id, principal.is_admin),
        leaks=view.leaks or [],
        raw_text=_text(blobs, session, run.id, "raw"),
        svg_text=_text(blobs, session, run.id, "extracted"),
        costs=view.costs,
    )


def _shown_evaluation(
    session: Session, run: Run, current: EvaluationView | None, evaluation_id: int | None
) -> tuple[EvaluationView | None, int | None]:
    """The evaluation the page shows (the current one unless ``evaluation_id``) and its id."""
    if evaluation_id is None or evaluation_id == run.current_evaluation_id:
        return current, run.current_evaluation_id
    chosen = session.get(Evaluation, evaluation_id)
    if chosen is None or chosen.run_id != run.id:
        raise NotFoundError(f"run {run.id} has no evaluation {evaluation_id}")
    shas = {
        a.id: a.sha256 for a in session.scalars(select(Artifact).where(Artifact.run_id == run.id))
    }
    return evaluation_view(session, chosen, shas), chosen.id


def _history(session: Session, evaluations: Sequence[Evaluation]) -> list[HistoryLine]:
    """Every evaluation of the run, newest first, with its necessary criteria's statuses."""
    statuses: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for row in session.scalars(
        select(CriterionOutcomeRow)
        .where(CriterionOutcomeRow.evaluation_id.in_([e.id for e in evaluations]))
        .order_by(CriterionOutcomeRow.id)
    ):
        if row.kind == "necessary":
            statuses[row.evaluation_id].append((row.criterion, row.status))
    return [
        HistoryLine(
            **field_dict(e, "id", "kind", "created_at", "outcome", "supersedes_id"),
            statuses=statuses.get(e.id, []),
        )
        for e in evaluations
    ]


def _panel_text(panel: Mapping[str, JsonValue]) -> str:
    """The judge panel as one line: its id (when it has one), then its profiles; ``—`` if empty."""
    profiles = panel.get("profiles")
    named = [panel.get("id")] if panel.get("id") else []
    return (
        ", ".join(str(x) for x in named + (profiles if isinstance(profiles, list) else [])) or "—"
    )


def review_items_of(session: Session, run_id: str, names: bool) -> list[ReviewLine]:
    """The run's review items with every label (for submitters and admins, never reviewers).

    Reviewer names are shown to admins only (``names``); submitters see a pseudonym. A label
    given by an admin (who can see model identities) is marked ``unblinded``.
    """
    items = session.scalars(
        select(ReviewItem).where(ReviewItem.run_id == run_id).order_by(ReviewItem.criterion)
    )
    return [
        ReviewLine(
            **field_dict(item, "criterion", "kind", "state"),
            needed=item.reviews_needed,
            final=item.final_label,
            evaluation=item.resolved_evaluation_id,
            labels=[
                LabelLine(
                    who=r.reviewer_name if names else f"reviewer-{r.reviewer_id}",
                    **field_dict(r, "status", "note", "time_s", "adjudication", "unblinded"),
                )
                for r in reviews_of(session, item.id)
            ],
        )
        for item in items
    ]


def runs_list(
    session: Session, principal: Principal, filters: dict[str, str], limit: int = 500
) -> list[Run]:
    """Runs for the listing page, newest first, filtered as the page's form asks.

    Filters: ``task``, ``model`` and ``outcome``, and a criterion's status in the run's current
    evaluation (``criterion`` + ``status``).
    """
    query = readable_runs(principal, session)
    if filters.get("task"):
        query = query.where(Run.task_ref == filters["task"])
    if filters.get("model"):
        query = query.where(Run.model_label == filters["model"])
    if filters.get("outcome"):
        query = query.where(Run.outcome == filters["outcome"])
    if filters.get("criterion"):
        query = query.join(
            CriterionOutcomeRow, CriterionOutcomeRow.evaluation_id == Run.current_evaluation_id
        ).where(CriterionOutcomeRow.criterion == filters["criterion"])
        if filters.get("status"):
            query = query.where(CriterionOutcomeRow.status == filters["status"])
    return list(session.scalars(query.order_by(Run.submitted_at.desc()).limit(limit)))


def _bar(counts: Counter[str], total: int) -> str:
    """A small stacked bar (server-drawn SVG; presentation attributes only, no styles)."""
    colours = {"pass": "#1b7f3b", "fail": "#b42318", "pending": "#a15c00", "incomplete": "#5b6673"}
    width, x, parts = 160.0, 0.0, []
    for k in OUTCOMES:
        w = width * counts[k] / total if total else 0.0
        if w > 0:
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="14" fill="{colours[k]}">'
                f"<title>{k}: {counts[k]}</title></rect>"
            )
        x += w
    return (
        f'<svg class="bar" width="{int(width)}" height="14" viewBox="0 0 {int(width)} 14" '
        f'role="img" aria-label="pass fail pending incomplete shares">{"".join(parts)}</svg>'
    )


def _levels(counts: Counter[str]) -> dict[str, int]:
    """Heat level 1..4 of each status's share among a criterion's runs."""
    total = sum(counts.values()) or 1
    return {k: max(1, min(4, round(4 * v / total))) for k, v in counts.items()}


def report_page(session: Session, principal: Principal) -> list[TaskCounts]:
    """Per task version and model: outcome counts, the pending range, per-criterion counts."""
    runs = list(session.scalars(readable_runs(principal, session).where(Run.outcome.is_not(None))))
    by_task: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    current_ids: dict[str, list[int]] = defaultdict(list)
    for r in runs:
        by_task[r.task_ref][r.model_label][r.outcome or "pending"] += 1
        if r.current_evaluation_id is not None:
            current_ids[r.task_ref].append(r.current_evaluation_id)
    return [
        TaskCounts(
            ref=ref,
            models=[_model_counts(ref, m, by_task[ref][m]) for m in sorted(by_task[ref])],
            criteria=_criterion_counts(session, ref, current_ids[ref]),
        )
        for ref in sorted(by_task)
    ]


def _model_counts(ref: str, model: str, c: Counter[str]) -> ModelCounts:
    """One model's outcome counts on a task version, linking to the runs behind each."""
    n = sum(c.values())
    base = {"task": ref, "model": model}
    links = {"all": "/runs?" + urlencode(base)}
    links |= {k: "/runs?" + urlencode({**base, "outcome": k}) for k in OUTCOMES}
    rng = pass_range(c["pass"], c["fail"], c["pending"])
    return ModelCounts(
        model=model,
        n=n,
        counts={k: c[k] for k in OUTCOMES},
        links=links,
        range_text=rng.text(),
        bar=_bar(c, n),
    )


def _criterion_counts(
    session: Session, ref: str, evaluation_ids: Sequence[int]
) -> list[CriterionCounts]:
    """Each criterion's status counts in these current evaluations, in the task's order."""
    crit: dict[str, Counter[str]] = defaultdict(Counter)
    kinds: dict[str, str] = {}
    for row in session.scalars(
        select(CriterionOutcomeRow).where(CriterionOutcomeRow.evaluation_id.in_(evaluation_ids))
    ):
        crit[row.criterion][row.status] += 1
        kinds[row.criterion] = row.kind
    spec = task_spec(session, ref)
    order = [c.id for c in spec.criteria] if spec else sorted(crit)
    return [
        CriterionCounts(
            id=cid,
            kind=kinds.get(cid, ""),
            counts=dict(crit[cid]),
            levels=_levels(crit[cid]),
            links={
                k: "/runs?" + urlencode({"task": ref, "criterion": cid, "status": k})
                for k in crit[cid]
            },
        )
        for cid in order
        if cid in crit
    ]
