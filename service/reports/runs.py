"""The run view built from stored records (what the API returns and the pages render).

Each builder returns a read model of :mod:`regua.views.runs`; stored JSON that is free
by nature (details, evidence, metadata) is passed on as it is stored, and evidence entries that
are not objects are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.records import field_dict
from regua.views.runs import (
    ArtifactView,
    CheckResultView,
    ChecksView,
    CriterionView,
    EvaluationLine,
    EvaluationView,
    EvidenceView,
    JudgeFailureView,
    ModelView,
    OutcomeView,
    ProcedureRef,
    RenderView,
    RunCostView,
    RunLine,
    RunRecord,
    StageView,
    VerdictView,
    VersionsView,
    VoteView,
)
from service.reports.costs import (
    JUDGING_COST_METHOD,
    TOTAL_COST_METHOD,
    generation_costs,
    judging_costs,
    stated_cost,
    total_cost,
)
from service.reports.grading_views import adjudication_views, rubric_view
from service.reports.leaks import leak_views
from service.reports.votes import vote_views
from service.storage import (
    Artifact,
    CheckResultRow,
    CriterionOutcomeRow,
    Evaluation,
    JudgeFailureRow,
    RenderRecord,
    Run,
    StageRecord,
    VerdictRow,
    iso,
)


def artifact_view(a: Artifact, parents: dict[int, str]) -> ArtifactView:
    """One artifact with its parent's address and the procedure that made it."""
    return ArtifactView.of(
        a,
        parent_sha256=parents.get(a.parent_id) if a.parent_id else None,
        procedure=ProcedureRef(id=a.procedure_id, version=a.procedure_version),
        meta=a.meta or {},
        url=f"/v1/artifacts/{a.sha256}",
    )


def evaluation_view(s: Session, ev: Evaluation, raw_sha: dict[int, str]) -> EvaluationView:
    """An evaluation with its versions, criteria, verdicts (with evidence) and judge failures."""
    verdicts = s.scalars(
        select(VerdictRow).where(VerdictRow.evaluation_id == ev.id).order_by(VerdictRow.id)
    ).all()
    outcomes = s.scalars(
        select(CriterionOutcomeRow)
        .where(CriterionOutcomeRow.evaluation_id == ev.id)
        .order_by(CriterionOutcomeRow.id)
    ).all()
    failures = s.scalars(
        select(JudgeFailureRow).where(JudgeFailureRow.evaluation_id == ev.id)
    ).all()
    votes = vote_views(s, ev, {c.criterion: c.votes or [] for c in outcomes})
    adjudications = adjudication_views(s, ev.id, raw_sha)
    return EvaluationView(
        id=ev.id,
        kind=ev.kind,
        created_at=iso(ev.created_at),
        supersedes_id=ev.supersedes_id,
        outcome=OutcomeView(status=ev.outcome, cause=ev.cause, reasons=ev.reasons),
        versions=VersionsView(
            task=ev.task_ref,
            rubric_hash=ev.rubric_hash,
            checker=ev.checker_version,
            render_profile=ev.render_profile_id,
            judge_panel=ev.judge_panel,
        ),
        criteria=[
            _criterion_view(c, verdicts, raw_sha, votes[c.criterion]).model_copy(
                update={"adjudication": adjudications.get(c.criterion)}
            )
            for c in outcomes
        ],
        judge_failures=[JudgeFailureView.of(f) for f in failures],
        rubric=rubric_view(s, ev.id),
    )


def _evidence(stored: Sequence[Any]) -> list[EvidenceView]:
    """The stored evidence entries of a verdict (objects only; unknown keys are not shown)."""
    return [
        EvidenceView(
            artifact_ref=e.get("artifact_ref"),
            time_s=e.get("time_s"),
            artifact_name=e.get("artifact_name"),
            description=str(e.get("description") or ""),
        )
        for e in stored
        if isinstance(e, dict)
    ]


def _criterion_view(
    c: CriterionOutcomeRow,
    verdicts: Sequence[VerdictRow],
    raw_sha: dict[int, str],
    votes: list[VoteView],
) -> CriterionView:
    """One criterion's outcome with the verdicts given on it.

    Each vote carries whether it was eligible and the gate decision behind that
    (:mod:`service.reports.votes`).
    """
    return CriterionView.of(
        c,
        votes=votes,
        adjudication=None,
        verdicts=[
            VerdictView.of(
                v,
                evidence=_evidence(v.evidence or []),
                raw_artifact=raw_sha.get(v.raw_artifact_id or -1),
            )
            for v in verdicts
            if v.criterion == c.criterion
        ],
    )


def _checks(stages: Sequence[StageRecord], checks: Sequence[CheckResultRow]) -> ChecksView:
    detail = next((st.detail or {} for st in stages if st.stage == "check"), {})
    return ChecksView(
        status=detail.get("checks_status"),
        results=[
            CheckResultView(id=c.check_id, version=c.version, status=c.status, evidence=c.evidence)
            for c in checks
        ],
    )


def run_view(s: Session, run: Run, *, include_model: bool, leaks: bool = False) -> RunRecord:
    """The full record of a run.

    ``include_model`` is False for anyone who must stay blind; ``leaks`` adds the run's leak
    flags (for admins).
    """
    arts = s.scalars(select(Artifact).where(Artifact.run_id == run.id).order_by(Artifact.id)).all()
    sha_by_id = _artifact_shas(s, arts)
    stages = s.scalars(
        select(StageRecord).where(StageRecord.run_id == run.id).order_by(StageRecord.id)
    ).all()
    checks = s.scalars(
        select(CheckResultRow).where(CheckResultRow.run_id == run.id).order_by(CheckResultRow.id)
    ).all()
    render = s.scalars(
        select(RenderRecord).where(RenderRecord.run_id == run.id).order_by(RenderRecord.id.desc())
    ).first()
    evaluations = s.scalars(
        select(Evaluation).where(Evaluation.run_id == run.id).order_by(Evaluation.id)
    ).all()
    current = next((e for e in evaluations if e.id == run.current_evaluation_id), None)
    return RunRecord(
        run_id=run.id,
        task=run.task_ref,
        submitted_at=iso(run.submitted_at),
        finished_at=iso(run.finished_at),
        status=run.status,
        outcome=(
            OutcomeView(status=run.outcome, cause=run.outcome_cause, reasons=current.reasons)
            if run.outcome and current
            else None
        ),
        stages=[
            StageView(stage=st.stage, version=st.version, status=st.status, detail=st.detail)
            for st in stages
        ],
        checks=_checks(stages, checks),
        render=None if render is None else _render_view(render),
        evaluation=evaluation_view(s, current, sha_by_id) if current else None,
        evaluations=_evaluation_history(evaluations),
        artifacts=[artifact_view(a, sha_by_id) for a in arts],
        model=(
            ModelView(label=run.model_label, provider=run.model_provider, params=run.model_params)
            if include_model
            else None
        ),
        leaks=leak_views(s, run.id) if leaks else None,
        costs=run_costs(s, run) if include_model else None,
    )


def run_costs(s: Session, run: Run) -> RunCostView:
    """Generation, judging (current evaluation) and total cost of one run, never estimated."""
    generated = generation_costs(s, [run.id])
    generation = generated[run.id] if run.id in generated else stated_cost(run.model_params)
    ev = run.current_evaluation_id
    judging = judging_costs(s, [ev])[ev] if ev is not None else None
    judging_usd = judging.usd if judging is not None else 0.0
    return RunCostView(
        generation_cost_usd=generation,
        judging_cost_usd=judging_usd,
        total_cost_usd=total_cost(generation, judging_usd),
        judging_calls=judging.calls if judging else 0,
        judging_calls_unpriced=judging.unpriced if judging else 0,
        method=f"{JUDGING_COST_METHOD}; {TOTAL_COST_METHOD}",
    )


def _artifact_shas(s: Session, arts: Sequence[Artifact]) -> dict[int, str]:
    """Sha256 by artifact id of ``arts`` and of their parents stored outside the run."""
    sha_by_id = {a.id: a.sha256 for a in arts}
    missing_parents = {a.parent_id for a in arts if a.parent_id and a.parent_id not in sha_by_id}
    for pid in missing_parents:
        parent = s.get(Artifact, pid)
        if parent is not None:
            sha_by_id[pid] = parent.sha256
    return sha_by_id


def _render_view(render: RenderRecord) -> RenderView:
    """The newest render record of a run: status, cause, profile, browser and sandbox."""
    return RenderView.of(render)


def _evaluation_history(evaluations: Sequence[Evaluation]) -> list[EvaluationLine]:
    """Every evaluation of a run, oldest first, each marked when a later one superseded it."""
    superseded = {e.supersedes_id for e in evaluations if e.supersedes_id}
    return [
        EvaluationLine.of(e, created_at=iso(e.created_at), superseded=e.id in superseded)
        for e in evaluations
    ]


def run_summary(run: Run, *, include_model: bool) -> RunLine:
    """A short line for run listings."""
    return RunLine(
        **field_dict(run, "status", "outcome"),
        run_id=run.id,
        task=run.task_ref,
        cause=run.outcome_cause,
        submitted_at=iso(run.submitted_at),
        model=run.model_label if include_model else None,
    )
