"""Plain input records of a report and their columnar (numpy) form.

A report never reads the database itself: it is computed from :class:`ReportRow` records (one per
run, with the outcome of the run's current evaluation) plus optional judge records. The service
adapter (:mod:`service.reports.db`) builds these rows; tests and benchmarks build them directly.

Vocabulary used everywhere in this package:

* **item** — one thing a model is asked to do inside a task version, named by ``item_key``
  (the same key for every model, so results can be paired). Runs without an item key are their own
  item (the run id).
* **repeat** — the n-th attempt of the same model on the same item (``repeat`` index).
* **decided** — a run whose outcome is ``pass`` or ``fail``. ``pending`` waits for a person;
  ``incomplete`` is a machinery failure and is never a fail of the work.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

OUTCOMES: tuple[str, ...] = ("pass", "fail", "pending", "incomplete")
"""Run outcomes, in code order (``pass`` = 0 … ``incomplete`` = 3)."""
PASS, FAIL, PENDING, INCOMPLETE = range(4)

CRITERION_STATUSES: tuple[str, ...] = ("pass", "fail", "uncertain", "not_applicable", "missing")
"""Per-criterion statuses in code order; ``missing`` = no status recorded for the run."""
C_PASS, C_FAIL, C_UNCERTAIN, C_NA, C_MISSING = range(5)

_OUTCOME_CODE = {name: i for i, name in enumerate(OUTCOMES)}
_CRIT_CODE = {name: i for i, name in enumerate(CRITERION_STATUSES)}
_EMPTY: Mapping[str, str] = MappingProxyType({})

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class ReportRow(NamedTuple):
    """One run with the outcome of its current evaluation (the unit every figure counts)."""

    run_id: str
    task_ref: str
    """``ID@VERSION``; results of different versions are never merged."""
    family: str
    pool: str
    model: str
    outcome: str
    """``pass`` | ``fail`` | ``pending`` | ``incomplete``."""
    item_key: str | None = None
    repeat: int = 0
    criteria: Mapping[str, str] = _EMPTY
    """Criterion id → ``pass`` | ``fail`` | ``uncertain`` | ``not_applicable``."""
    evaluation_id: str | None = None
    judge_panel_id: str | None = None
    cost_usd: float | None = None
    """Generation cost of the attempt; ``None`` = unknown (never estimated)."""
    latency_ms: float | None = None
    """Latency of the attempt; ``None`` = unknown."""
    timed_out: bool = False
    provider: str | None = None
    judging_cost_usd: float | None = 0.0
    """Cost of the judge calls of the current evaluation; ``None`` = not available."""


@dataclass(frozen=True)
class JudgeVote:
    """One judge's status on one criterion of one run (input of the disagreement view)."""

    run_id: str
    task_ref: str
    criterion: str
    judge_profile_id: str
    status: str


def task_version(task_ref: str) -> tuple[str, int]:
    """Split ``ID@VERSION``; a reference without a numeric version gets version 0."""
    task_id, _, version = task_ref.partition("@")
    return task_id, int(version) if version.isdigit() else 0


def _factorize(values: Iterable[str]) -> tuple[list[str], IntArray]:
    """The sorted distinct values and each value's code (so row order never matters)."""
    listed = list(values)
    distinct = sorted(set(listed))
    index = {v: i for i, v in enumerate(distinct)}
    codes = [index[v] for v in listed]
    return distinct, np.asarray(codes, dtype=np.int64)


@dataclass(frozen=True)
class RowTable:
    """Columnar form of the rows: integer codes and float arrays, one entry per run."""

    tasks: list[str]
    models: list[str]
    criteria: list[str]
    task: IntArray
    model: IntArray
    outcome: IntArray
    item: IntArray
    """Global item code: distinct per (task_ref, item_key)."""
    item_keys: list[str]
    repeat: IntArray
    cost: FloatArray
    """Generation cost; NaN = unknown."""
    judging_cost: FloatArray
    """Judging cost; NaN = not available."""
    latency: FloatArray
    """NaN = unknown."""
    timed_out: BoolArray
    crit: IntArray
    """Shape (runs, criteria): criterion status codes (``missing`` when absent)."""
    family_of: dict[str, str]
    pool_of: dict[str, str]

    @property
    def size(self) -> int:
        """Number of runs."""
        return int(self.task.shape[0])


def _labels(rows: Sequence[ReportRow], group_by: str) -> list[str]:
    if group_by == "model":
        return [r.model for r in rows]
    if group_by == "provider":
        return [r.provider or "(unknown provider)" for r in rows]
    if group_by == "model_provider":
        return [f"{r.model} ({r.provider})" if r.provider else r.model for r in rows]
    raise ValueError(f"group_by must be model, provider or model_provider, got {group_by!r}")


def _criterion_codes(maps: Sequence[Mapping[str, str]]) -> tuple[list[str], IntArray]:
    """The criterion ids and the (runs, criteria) status codes; ValueError on an unknown one."""
    n = len(maps)
    crit_ids = sorted({c for m in maps if m for c in m})
    crit = np.full((n, len(crit_ids)), C_MISSING, dtype=np.int64)
    for j, cid in enumerate(crit_ids):
        values = np.array([m.get(cid, "missing") for m in maps], dtype=object)
        column = crit[:, j]
        known = np.zeros(n, dtype=np.bool_)
        for code, name in enumerate(CRITERION_STATUSES):
            hit = values == name
            column[hit] = code
            known |= hit
        if not known.all():
            bad = values[np.flatnonzero(~known)[0]]
            raise ValueError(
                f"unknown status {bad!r} for criterion {cid}; "
                f"expected one of {CRITERION_STATUSES[:4]}"
            )
    return crit_ids, crit


def build_table(rows: Sequence[ReportRow], group_by: str = "model") -> RowTable:
    """Turn rows into columns; raises ValueError on an unknown outcome or criterion status."""
    n = len(rows)
    tasks, task = _factorize(r.task_ref for r in rows)
    models, model = _factorize(_labels(rows, group_by))
    try:
        outcome = np.fromiter((_OUTCOME_CODE[r.outcome] for r in rows), np.int64, count=n)
    except KeyError as exc:
        raise ValueError(f"unknown outcome {exc.args[0]!r}; expected one of {OUTCOMES}") from exc
    keys, key_code = _factorize(r.run_id if r.item_key is None else r.item_key for r in rows)
    pairs, item = np.unique(task * max(len(keys), 1) + key_code, return_inverse=True)
    item_keys = [keys[int(c)] for c in pairs % max(len(keys), 1)]
    repeat = np.fromiter((r.repeat for r in rows), np.int64, count=n)
    cost = np.fromiter((np.nan if r.cost_usd is None else r.cost_usd for r in rows), float, n)
    judging_cost = np.fromiter(
        (np.nan if r.judging_cost_usd is None else r.judging_cost_usd for r in rows), float, n
    )
    latency = np.fromiter(
        (np.nan if r.latency_ms is None else r.latency_ms for r in rows), float, count=n
    )
    timed_out = np.fromiter((bool(r.timed_out) for r in rows), np.bool_, count=n)
    crit_ids, crit = _criterion_codes([r.criteria for r in rows])
    family_of: dict[str, str] = {}
    pool_of: dict[str, str] = {}
    for r in rows:
        if r.task_ref not in family_of:
            family_of[r.task_ref] = r.family
            pool_of[r.task_ref] = r.pool
    return RowTable(
        tasks=tasks,
        models=models,
        criteria=crit_ids,
        task=task,
        model=model,
        outcome=outcome,
        item=item,
        item_keys=item_keys,
        repeat=repeat,
        cost=cost,
        judging_cost=judging_cost,
        latency=latency,
        timed_out=timed_out,
        crit=crit,
        family_of=family_of,
        pool_of=pool_of,
    )
