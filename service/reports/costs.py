"""What a run cost: its generation and its judging, read from storage, never estimated.

* Generation: the stored generation's ``cost_usd`` (``generations`` row: usage times the price
  table), else the cost a submitter stated in ``model.params.cost_usd``; ``None`` = unknown.
* Judging: the sum of the judge calls' ``cost_usd`` in the run's current evaluation (each
  verdict of a model judge is one call, priced from ``REGUA_PRICE_TABLE`` like generation, or
  the provider's own stated cost). Static, geometry and human verdicts call no model and cost
  nothing. The judging cost is ``None`` ("not available") when any model call of the evaluation
  has no price: a model judge's verdict without ``cost_usd``, or an adjudication call (its usage
  is not stored). A judge that failed (no verdict) left no usage and is not counted.
* Total: generation + judging; ``None`` when either is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.reports.figures import JUDGING_COST_METHOD as JUDGING_COST_METHOD
from service.reports.figures import TOTAL_COST_METHOD as TOTAL_COST_METHOD
from service.reports.rows import ReportRow
from service.storage import AdjudicationRow, Evaluation, GenerationRow, VerdictRow

MODEL_KINDS = frozenset({"vision-llm"})
"""Judge kinds whose every verdict is a model call (a verdict with usage or a cost is one too)."""
_CHUNK = 500


@dataclass(frozen=True)
class JudgingCost:
    """The judging cost of one evaluation: USD (None: not available) and its model calls."""

    usd: float | None
    calls: int
    unpriced: int


def _chunks(ids: Iterable[int]) -> Iterable[list[int]]:
    ordered = sorted(set(ids))
    for i in range(0, len(ordered), _CHUNK):
        yield ordered[i : i + _CHUNK]


def _seat_kinds(panel: Any) -> dict[str, str]:
    """Voting id → judge kind, from a stored panel record."""
    seats = panel.get("judges") if isinstance(panel, dict) else None
    return {
        str(j["id"]): str(j.get("kind") or "")
        for j in seats or []
        if isinstance(j, dict) and "id" in j
    }


def is_model_call(kind: str | None, usage: Any, cost_usd: float | None) -> bool:
    """Whether a stored verdict came from a model call (so it has, or lacks, a price)."""
    return cost_usd is not None or bool(usage) or (kind or "") in MODEL_KINDS


def judging_costs(s: Session, evaluation_ids: Iterable[int]) -> dict[int, JudgingCost]:
    """Evaluation id → its judging cost (every id asked for gets an entry)."""
    total: dict[int, float] = defaultdict(float)
    calls: dict[int, int] = defaultdict(int)
    unpriced: dict[int, int] = defaultdict(int)
    asked: list[int] = []
    for chunk in _chunks(evaluation_ids):
        asked.extend(chunk)
        kinds = {
            ev_id: _seat_kinds(panel)
            for ev_id, panel in s.execute(
                select(Evaluation.id, Evaluation.judge_panel).where(Evaluation.id.in_(chunk))
            )
        }
        verdicts = select(
            VerdictRow.evaluation_id,
            VerdictRow.judge_profile_id,
            VerdictRow.usage,
            VerdictRow.cost_usd,
        ).where(VerdictRow.evaluation_id.in_(chunk))
        for ev_id, judge, usage, cost in s.execute(verdicts):
            if not is_model_call(kinds.get(ev_id, {}).get(judge), usage, cost):
                continue
            calls[ev_id] += 1
            if cost is None:
                unpriced[ev_id] += 1
            else:
                total[ev_id] += cost
        adjudications = select(AdjudicationRow.evaluation_id).where(
            AdjudicationRow.evaluation_id.in_(chunk),
            AdjudicationRow.prompt_artifact_id.is_not(None),
        )
        for (ev_id,) in s.execute(adjudications):
            calls[ev_id] += 1
            unpriced[ev_id] += 1
    return {
        ev_id: JudgingCost(
            None if unpriced[ev_id] else round(total[ev_id], 10), calls[ev_id], unpriced[ev_id]
        )
        for ev_id in asked
    }


def generation_costs(s: Session, run_ids: Iterable[str]) -> dict[str, float | None]:
    """Run id → the stored generation's cost (only runs that came from a generation)."""
    out: dict[str, float | None] = {}
    ordered = sorted(set(run_ids))
    for i in range(0, len(ordered), _CHUNK):
        chunk = ordered[i : i + _CHUNK]
        for run_id, cost in s.execute(
            select(GenerationRow.run_id, GenerationRow.cost_usd).where(
                GenerationRow.run_id.in_(chunk)
            )
        ):
            out[str(run_id)] = cost
    return out


def stated_cost(params: Any) -> float | None:
    """The cost a submitter stated in ``model.params.cost_usd`` (None: not stated)."""
    value = params.get("cost_usd") if isinstance(params, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def total_cost(generation: float | None, judging: float | None) -> float | None:
    """Generation + judging, or None when either is unknown."""
    if generation is None or judging is None:
        return None
    return round(generation + judging, 10)


def judging_usd(costs: Mapping[int, JudgingCost], evaluation_id: int | None) -> float | None:
    """The judging cost of one evaluation; a run not judged yet cost nothing to judge."""
    if evaluation_id is None:
        return 0.0
    found = costs.get(evaluation_id)
    return found.usd if found is not None else 0.0


def with_costs(s: Session, rows: Sequence[ReportRow]) -> list[ReportRow]:
    """The rows with their generation cost and their current evaluation's judging cost.

    A run regua generated takes the stored generation's cost; others keep the stated one.
    """
    generated = generation_costs(s, [r.run_id for r in rows])
    judged = judging_costs(s, [int(r.evaluation_id) for r in rows if r.evaluation_id])
    return [
        r._replace(
            cost_usd=generated.get(r.run_id, r.cost_usd),
            judging_cost_usd=judging_usd(judged, _ev(r.evaluation_id)),
        )
        for r in rows
    ]


def _ev(evaluation_id: str | None) -> int | None:
    return int(evaluation_id) if evaluation_id else None
