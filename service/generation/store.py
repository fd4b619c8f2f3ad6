"""Writing a generation's record with its run, and reading it back for the run's JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue
from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.llm.client import CallResult
from regua.llm.prices import Cost
from regua.records import field_dict
from regua.views.submissions import GenerationView
from service.storage import Database, GenerationRow, StageRecord
from service.storage.details import StageDetail

GENERATION_FAILED = "generation_failed"
"""Cause prefix of a run whose provider gave no reply (the run is ``incomplete``)."""


@dataclass(frozen=True)
class GenerationRecord:
    """Everything stored about one call, besides the reply (the run's raw artifact)."""

    api: str
    model: str
    repeat: int
    call: CallResult
    cost: Cost
    params: dict[str, JsonValue]
    prompt_sha256: str
    mock: bool
    case_key: str | None
    checker_version: str
    """The check stage's version: a run without a reply gets its check stage ``incomplete``."""


def write_record(s: Session, run_id: str, rec: GenerationRecord) -> None:
    """Add the ``generations`` row of ``run_id`` (in the transaction storing the run).

    A provider that gave no reply leaves no SVG to judge and no rule broken: the run's check
    stage is recorded ``incomplete`` with the cause, so the pipeline ends it ``incomplete``.
    """
    reply = rec.call.reply
    s.add(
        GenerationRow(
            run_id=run_id,
            **field_dict(rec, "api", "model", "repeat", "params", "prompt_sha256", "mock"),
            **field_dict(rec.call, "latency_ms", "elapsed_ms", "attempts", "timed_out", "cause"),
            input_tokens=reply.usage.input_tokens if reply else None,
            output_tokens=reply.usage.output_tokens if reply else None,
            finish_reason=reply.finish_reason if reply else None,
            cost_usd=rec.cost.usd,
            price_table_version=rec.cost.table_version,
            refusal=bool(reply and reply.refusal),
            case_key=rec.case_key,
        )
    )
    if reply is None:
        detail = StageDetail(cause=f"{GENERATION_FAILED}: {rec.call.cause}")
        s.add(
            StageRecord(
                run_id=run_id,
                stage="check",
                version=rec.checker_version,
                status="incomplete",
                detail=detail.model_dump(mode="json"),
                attempts=0,
            )
        )


def runs_of_cases(db: Database, case_keys: Sequence[str]) -> dict[str, str]:
    """The run already generated for each stored case key (``case_key`` → run id)."""
    if not case_keys:
        return {}
    with db.read() as s:
        rows = s.execute(
            select(GenerationRow.case_key, GenerationRow.run_id).where(
                GenerationRow.case_key.in_(list(case_keys))
            )
        ).all()
    return {str(key): str(run_id) for key, run_id in rows}


def generation_view(s: Session, run_id: str) -> GenerationView | None:
    """The generation behind a run, if regua generated it."""
    row = s.scalar(select(GenerationRow).where(GenerationRow.run_id == run_id))
    if row is None:
        return None
    return GenerationView(
        api=row.api,
        model=row.model,
        repeat=row.repeat,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        latency_ms=row.latency_ms,
        elapsed_ms=row.elapsed_ms,
        finish_reason=row.finish_reason,
        attempts=row.attempts,
        cost_usd=row.cost_usd,
        price_table_version=row.price_table_version,
        timed_out=row.timed_out,
        refusal=row.refusal,
        params=row.params,
        prompt_sha256=row.prompt_sha256,
        cause=row.cause,
        mock=row.mock,
        case_key=row.case_key,
    )
