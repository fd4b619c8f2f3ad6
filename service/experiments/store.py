"""Storing experiments and their cases (``experiments``, ``experiment_cases``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from regua.errors import ImmutableRecordError, NotFoundError
from service.experiments.generator import GenerationFacts
from service.experiments.plan import Case, Plan, case_key, check_case_keys
from service.experiments.spec import ExperimentFile
from service.storage import Database, ExperimentCaseRow, ExperimentRow, Run, utcnow

DEFAULT_WINDOW = "default"


def experiment_id(name: str, window: str) -> str:
    """``NAME@WINDOW``: one experiment run (a schedule gives each window its own)."""
    return f"{name}@{window}"


def open_experiment(
    db: Database,
    spec: ExperimentFile,
    plan: Plan,
    window: str,
    token_id: int | None,
    *,
    admin: bool = False,
) -> tuple[str, bool]:
    """Store a new experiment run, or find the one to resume; (id, resumed).

    Only its creator resumes it (or an admin; ``token_id`` None is the local command line).
    The same id with another file, or another token's id, is refused
    (:class:`ImmutableRecordError`) with one message that tells neither apart and shows no
    hash: a changed experiment is a new window or a new id, never spliced into the stored one.
    """
    ident = experiment_id(spec.id, window)
    check_case_keys(ident, plan)
    digest = spec.content_hash()
    with db.write() as s:
        row = s.get(ExperimentRow, ident)
        if row is not None:
            owner = admin or token_id is None or row.created_by == token_id
            if row.spec_hash != digest or not owner:
                raise ImmutableRecordError(
                    f"experiment {ident} is already stored, with another file or by another "
                    "token; give a new --window (or 'window') or a new id"
                )
            return ident, True
        s.add(
            ExperimentRow(
                id=ident,
                name=spec.id,
                window=window,
                spec=spec.model_dump(mode="json"),
                spec_hash=digest,
                plan=plan.model_dump(mode="json"),
                seed=spec.seed,
                status="created",
                created_by=token_id,
            )
        )
    return ident, False


def missing_experiment(ident: str) -> NotFoundError:
    """The error for an experiment id that is not stored (or that the caller may not read)."""
    return NotFoundError(
        f"no experiment {ident!r}; an id is NAME@WINDOW (the file's id and the window, "
        f"'{DEFAULT_WINDOW}' unless one was given)"
    )


def get_experiment(db: Database, ident: str) -> ExperimentRow:
    """The stored experiment (:class:`NotFoundError` saying what an id looks like)."""
    with db.read() as s:
        row = s.get(ExperimentRow, ident)
        if row is None:
            raise missing_experiment(ident)
        return row


def windows_of(db: Database, name: str) -> list[ExperimentRow]:
    """Every stored run of the experiment ``name``, oldest first."""
    with db.read() as s:
        rows = s.scalars(
            select(ExperimentRow)
            .where(ExperimentRow.name == name)
            .order_by(ExperimentRow.created_at, ExperimentRow.id)
        )
        return list(rows)


def plan_of(row: ExperimentRow) -> Plan:
    """The stored plan."""
    return Plan.model_validate(row.plan)


def set_status(db: Database, ident: str, status: str, error: str | None = None) -> None:
    """Record the experiment's progress (``generating``, ``evaluating``, ``done``, ...)."""
    with db.write() as s:
        row = s.get(ExperimentRow, ident)
        if row is None:
            raise NotFoundError(f"no experiment {ident!r}")
        row.status, row.error = status, error
        if status == "done":
            row.finished_at = utcnow()


def stored_keys(db: Database, ident: str) -> set[str]:
    """The case keys already stored for the experiment."""
    with db.read() as s:
        keys = s.scalars(
            select(ExperimentCaseRow.case_key).where(ExperimentCaseRow.experiment_id == ident)
        )
        return set(keys)


def add_cases(
    db: Database, ident: str, found: Sequence[tuple[Case, str, GenerationFacts, str]]
) -> int:
    """Store (case, task ref, facts, prompt hash) rows not stored yet; how many were new."""
    with db.write() as s:
        known = set(
            s.scalars(
                select(ExperimentCaseRow.case_key).where(ExperimentCaseRow.experiment_id == ident)
            )
        )
        new = 0
        for case, ref, facts, prompt_hash in found:
            key = case_key(ident, case.arm.name, case.item, case.repeat)
            if key in known:
                continue
            s.add(
                ExperimentCaseRow(
                    experiment_id=ident,
                    case_key=key,
                    arm=case.arm.name,
                    item=case.item,
                    repeat=case.repeat,
                    task_ref=ref,
                    run_id=facts.run_id,
                    prompt_sha256=facts.prompt_sha256 or prompt_hash,
                    latency_ms=facts.latency_ms,
                    cost_usd=facts.cost_usd,
                    input_tokens=facts.input_tokens,
                    output_tokens=facts.output_tokens,
                    timed_out=facts.timed_out,
                )
            )
            new += 1
        return new


@dataclass(frozen=True)
class CaseView:
    """A stored case with its run's state, as the report reads it."""

    arm: str
    item: str
    repeat: int
    task_ref: str
    run_id: str
    outcome: str
    """pass | fail | pending | incomplete, or ``running`` while the run is not done."""
    latency_ms: float | None
    cost_usd: float | None
    timed_out: bool
    prompt_sha256: str | None
    created_at: datetime
    evaluation_id: int | None


def case_views(db: Database, ident: str) -> list[CaseView]:
    """Every stored case of the experiment with its run's current outcome."""
    with db.read() as s:
        rows = s.execute(
            select(ExperimentCaseRow, Run.status, Run.outcome, Run.current_evaluation_id)
            .join(Run, Run.id == ExperimentCaseRow.run_id)
            .where(ExperimentCaseRow.experiment_id == ident)
            .order_by(ExperimentCaseRow.arm, ExperimentCaseRow.item, ExperimentCaseRow.repeat)
        ).all()
    return [
        CaseView(
            c.arm,
            c.item,
            c.repeat,
            c.task_ref,
            c.run_id,
            outcome if status == "done" and outcome else "running",
            c.latency_ms,
            c.cost_usd,
            c.timed_out,
            c.prompt_sha256,
            c.created_at,
            evaluation_id,
        )
        for c, status, outcome, evaluation_id in rows
    ]
