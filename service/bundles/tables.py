"""Which tables a run bundle carries, how their rows become JSON and back, and how ids move.

A bundle holds the rows of a set of runs exactly as stored, table by table, in an order where
every row's references come before it. On import, integer primary keys are new (the target
installation numbers its own rows); every foreign key is translated through the ids given so
far, as are the artifact ids inside stage details (``*_artifact_id``) and the run's pointers
to its raw artifact and current evaluation. String keys (run ids, review item ids) are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Table

from regua.errors import InputError
from service.storage import (
    AdjudicationRow,
    Artifact,
    Base,
    CheckResultRow,
    CriterionOutcomeRow,
    Evaluation,
    GateDecisionRow,
    JudgeFailureRow,
    LeakFlag,
    RenderRecord,
    ReviewItem,
    ReviewRow,
    ReviewScan,
    RubricScoreRow,
    Run,
    StageRecord,
    TaskRow,
    VerdictRow,
)


def table_of(model: type[Base]) -> Table:
    """The model's table."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


@dataclass(frozen=True)
class TableSpec:
    """One table of a bundle: its model and the column that ties its rows to the runs."""

    model: type[Base]
    key: str
    """``run_id``, ``evaluation_id`` or ``item_id`` (rows of the exported runs), or ``ref``."""

    @property
    def name(self) -> str:
        """The table's name (also the bundle's file name, ``tables/NAME.jsonl``)."""
        return table_of(self.model).name


TABLES = (
    TableSpec(TaskRow, "ref"),
    TableSpec(Run, "id"),
    TableSpec(Artifact, "run_id"),
    TableSpec(StageRecord, "run_id"),
    TableSpec(CheckResultRow, "run_id"),
    TableSpec(RenderRecord, "run_id"),
    TableSpec(Evaluation, "run_id"),
    TableSpec(VerdictRow, "evaluation_id"),
    TableSpec(JudgeFailureRow, "evaluation_id"),
    TableSpec(CriterionOutcomeRow, "evaluation_id"),
    TableSpec(AdjudicationRow, "evaluation_id"),
    TableSpec(RubricScoreRow, "evaluation_id"),
    TableSpec(ReviewScan, "evaluation_id"),
    TableSpec(ReviewItem, "run_id"),
    TableSpec(ReviewRow, "item_id"),
    TableSpec(LeakFlag, "run_id"),
)
"""Every table of the runs, in an order where references come first."""

GATE = TableSpec(GateDecisionRow, "task_family")
"""Gate decisions of the exported tasks' families (their calibration runs stay behind)."""

KEPT_KEYS = frozenset({"runs", "review_items"})
"""Tables whose string primary keys travel unchanged."""
DROPPED_REFS = frozenset({"calibration_runs"})
"""References a bundle does not carry (set to null on import)."""
RUN_POINTERS = {"raw_artifact_id": "artifacts", "current_evaluation_id": "evaluations"}
"""Integer columns of ``runs`` that point at rows without a foreign key."""
LOCAL_RUN_FIELDS = ("lease_owner", "lease_expires_at", "claims")
"""Columns of ``runs`` that describe this installation's queue, reset on import."""


def encode_row(row: Base) -> dict[str, Any]:
    """A row as JSON: every column by name, times as ISO strings."""
    out: dict[str, Any] = {}
    for col in table_of(type(row)).columns:
        value = getattr(row, col.key)
        out[col.name] = value.isoformat() if isinstance(value, datetime) else value
    return out


def decode_row(spec: TableSpec, data: Mapping[str, Any]) -> dict[str, Any]:
    """Column values of a bundled row (times parsed back), keyed by attribute name.

    A column this installation does not have (a bundle from a newer schema) refuses the row
    rather than dropping what it holds.
    """
    unknown = sorted(set(data) - {c.name for c in table_of(spec.model).columns})
    if unknown:
        raise InputError(
            f"{spec.name} rows of the bundle have columns this installation lacks ({unknown}): "
            "it was made by a newer regua; upgrade this one first"
        )
    out: dict[str, Any] = {}
    for col in table_of(spec.model).columns:
        if col.name not in data:
            continue
        value = data[col.name]
        if isinstance(col.type, DateTime) and isinstance(value, str):
            value = datetime.fromisoformat(value)
        out[col.key] = value
    return out


def integer_key(spec: TableSpec) -> bool:
    """Whether the table numbers its rows itself (an integer ``id`` primary key)."""
    pk = list(table_of(spec.model).primary_key.columns)
    return len(pk) == 1 and pk[0].name == "id" and pk[0].type.python_type is int


def foreign_keys(spec: TableSpec) -> dict[str, str]:
    """Attribute name → referenced table of every foreign-key column."""
    out: dict[str, str] = {}
    for col in table_of(spec.model).columns:
        for fk in col.foreign_keys:
            out[col.key] = fk.column.table.name
    return out


def remap_detail(detail: Any, artifacts: Mapping[int, int]) -> Any:
    """A stage detail with its ``*_artifact_id`` values translated to the new artifact ids."""
    if isinstance(detail, dict):
        return {
            k: (
                artifacts.get(v, v)
                if k.endswith("_artifact_id") and isinstance(v, int)
                else remap_detail(v, artifacts)
            )
            for k, v in detail.items()
        }
    if isinstance(detail, list):
        return [remap_detail(v, artifacts) for v in detail]
    return detail
