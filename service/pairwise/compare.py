"""Compare stored runs pairwise on one criterion: plan the pairs, judge both orders, store.

The judge sees only what a panel judge sees of a stored run — its rendered frames
(``service.evaluation.inputs``) — plus the frozen task and the criterion, with the two drawings
labelled X and Y; never a run id or a model name. Pairs come from ``--runs`` (every two runs of
different models) or ``--models`` (for every two models, their finished runs of the task matched
in submission order).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from judges.pairwise import PairOutcome, PairwiseJudge, both_orders
from regua.errors import ConfigurationError, InputError, NotFoundError
from service.evaluation.inputs import load_eval_inputs
from service.pairwise.store import PairSide, record_comparison
from service.storage import Artifact, Database, Run, RunRevisionRow, TaskRow
from service.storage.blobs import BlobStore
from tasks import TaskSpec


@dataclass(frozen=True)
class PairRequest:
    """What to compare: a task version, one of its criteria, and runs or models."""

    task_ref: str
    criterion: str
    run_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()


@dataclass
class PairReport:
    """What a comparison job did."""

    compared: int = 0
    failures: int = 0
    position_biased: int = 0
    comparison_ids: list[int] = field(default_factory=list)

    def count(self, comparison_id: int, outcome: PairOutcome) -> None:
        """Count one stored comparison: a failure when it has no result, maybe position-biased."""
        self.comparison_ids.append(comparison_id)
        self.compared += 1
        self.failures += outcome.result is None
        self.position_biased += outcome.position_biased


def _task(s: Session, ref: str) -> TaskSpec:
    spec = s.scalar(select(TaskRow.spec).where(TaskRow.ref == ref))
    if spec is None:
        raise NotFoundError(f"no stored runs of task {ref!r}: submit runs of it first")
    return TaskSpec.model_validate(spec)


def _sides(s: Session, runs: Sequence[Run]) -> dict[str, PairSide]:
    ids = [r.id for r in runs]
    shas = dict(
        s.execute(
            select(Artifact.run_id, Artifact.sha256).where(
                Artifact.run_id.in_(ids), Artifact.kind == "extracted"
            )
        ).all()
    )
    return {r.id: PairSide(r.id, r.model_label, shas.get(r.id)) for r in runs}


def _runs(s: Session, req: PairRequest) -> list[Run]:
    if req.run_ids:
        runs = list(s.scalars(select(Run).where(Run.id.in_(req.run_ids))))
        missing = sorted(set(req.run_ids) - {r.id for r in runs})
        if missing:
            raise NotFoundError(f"no such run(s): {', '.join(missing)}")
        other = [r.id for r in runs if r.task_ref != req.task_ref]
        if other:
            raise InputError(f"run(s) {', '.join(other)} are not runs of {req.task_ref}")
        busy = [r.id for r in runs if r.status != "done"]
        if busy:
            raise InputError(f"run(s) {', '.join(busy)} have not finished: compare them once done")
        return sorted(runs, key=lambda r: (r.submitted_at, r.id))
    query = select(Run).where(
        Run.task_ref == req.task_ref,
        Run.model_label.in_(req.models),
        Run.status == "done",
        Run.id.not_in(select(RunRevisionRow.run_id)),  # first answers only: never a revision
    )
    runs = list(s.scalars(query.order_by(Run.submitted_at, Run.id)))
    absent = sorted(set(req.models) - {r.model_label for r in runs})
    if absent:
        raise InputError(f"no finished runs of model(s) {', '.join(absent)} for {req.task_ref}")
    return runs


def require_configured(judge: PairwiseJudge) -> None:
    """Refuse a judge that says a setting is missing (every call would fail, none would count).

    A judge may offer ``missing_setting() -> str | None`` (the built-in vision judge does).
    """
    check = getattr(judge, "missing_setting", None)
    missing = check() if callable(check) else None
    if missing:
        raise ConfigurationError(
            f"no pairwise judge configured ({judge.judge_id}): set {missing} (and "
            "REGUA_JUDGE_BASE_URL for a local server); nothing was judged or stored"
        )


def plan_pairs(db: Database, req: PairRequest) -> tuple[TaskSpec, list[tuple[PairSide, PairSide]]]:
    """The task and the (a, b) pairs a request compares; a bad request says what to fix."""
    if bool(req.run_ids) == bool(req.models):
        raise InputError("give either runs (--runs) or models (--models), not both or neither")
    with db.read() as s:
        task = _task(s, req.task_ref)
        if req.criterion not in {c.id for c in task.criteria}:
            known = ", ".join(c.id for c in task.criteria)
            raise InputError(f"{req.task_ref} has no criterion {req.criterion!r} (it has {known})")
        runs = _runs(s, req)
        sides = _sides(s, runs)
    by_model: dict[str, list[PairSide]] = {}
    for r in runs:
        by_model.setdefault(r.model_label, []).append(sides[r.id])
    if len(by_model) < 2:
        raise InputError("pairwise comparison needs runs of at least two different models")
    pairs: list[tuple[PairSide, PairSide]] = []
    for m1, m2 in itertools.combinations(sorted(by_model), 2):
        if req.run_ids:
            pairs.extend(itertools.product(by_model[m1], by_model[m2]))
        else:
            pairs.extend(zip(by_model[m1], by_model[m2], strict=False))
    return task, pairs


def run_pairs(
    db: Database,
    blobs: BlobStore,
    judge: PairwiseJudge,
    req: PairRequest,
    progress: Callable[[int, int], None] | None = None,
) -> PairReport:
    """Judge every planned pair in both orders and store each comparison as it is decided."""
    require_configured(judge)
    task, pairs = plan_pairs(db, req)
    criterion = task.criterion(req.criterion)
    ids = sorted({side.run_id for pair in pairs for side in pair if side.run_id})
    frames: dict[str, tuple[judges.FrameImage, ...]] = {
        stored.run_id: stored.inp.frames
        for stored in load_eval_inputs(db, blobs, dict.fromkeys(ids, task), ids)
    }
    report = PairReport()
    for done, (a, b) in enumerate(pairs, start=1):
        outcome = both_orders(
            judge, task, criterion, frames[a.run_id or ""], frames[b.run_id or ""]
        )
        with db.write() as s:
            row = record_comparison(s, blobs, (req.task_ref, req.criterion), (a, b), outcome)
        report.count(row.id, outcome)
        if progress is not None:
            progress(done, len(pairs))
    return report
