"""Family-weighted pass rates and slices by a task dimension.

Each family weighs the same and, within a family, each task version weighs the same: thirty
variants of one prompt count as one family, not as thirty tasks. Every task version a model ran
enters that model's figures as its own unit (never spliced with another version, never dropped
because another model ran a newer one), and each row lists its versions with the runs each
contributes; a model's figures are computed from its own runs only, so filtering a report by model
never changes them. A task version's figures are over its pass + fail + pending runs: the
pass-rate range ``pass / n`` to ``(pass + pending) / n`` and the decided rate
``pass / (pass + fail)``; incomplete runs are machinery failures and count nowhere.

``by = "family"`` gives one row per (pool, model, family) and a weighted overall per
(pool, model); ``by = "dimension:NAME"`` gives one row per (pool, model, value of NAME), each
value's tasks weighted the same way (each family equally, each task equally within it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from regua.errors import InputError
from service.reports.rows import ReportRow, task_version

WEIGHTING_METHOD = (
    "each family weighs the same; within a family each task version the model ran weighs the "
    "same (every version counted, each on its own; the versions and their runs are listed); "
    "a version's range is pass / n to (pass + pending) / n over its pass + fail + pending runs"
)


def parse_by(by: str) -> str | None:
    """``None`` for ``family``, the dimension name for ``dimension:NAME``; else InputError."""
    if by == "family":
        return None
    kind, _, name = by.partition(":")
    if kind == "dimension" and name:
        return name
    raise InputError(
        f"by must be 'family' or 'dimension:NAME' (e.g. dimension:vehicle), got {by!r}"
    )


@dataclass
class _Tally:
    """pass / fail / pending counts of one (task, model)."""

    passed: int = 0
    failed: int = 0
    pending: int = 0

    @property
    def n(self) -> int:
        return self.passed + self.failed + self.pending

    def rates(self) -> tuple[float, float, float | None]:
        decided = self.passed + self.failed
        return (
            self.passed / self.n,
            (self.passed + self.pending) / self.n,
            self.passed / decided if decided else None,
        )


def _mean(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def _tallies(rows: Sequence[ReportRow]) -> dict[tuple[str, str], _Tally]:
    """Counts by (task version, model) of every decided or pending run."""
    out: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    for r in rows:
        if r.outcome not in ("pass", "fail", "pending"):
            continue
        t = out[(r.task_ref, r.model)]
        t.passed += r.outcome == "pass"
        t.failed += r.outcome == "fail"
        t.pending += r.outcome == "pending"
    return out


def family_weighted(tallies: Mapping[str, _Tally], family_of: Mapping[str, str]) -> dict[str, Any]:
    """The figures of a set of tasks (ref → counts): per family, then the mean of families."""
    by_family: dict[str, list[tuple[float, float, float | None]]] = defaultdict(list)
    for ref, t in tallies.items():
        if t.n:
            by_family[family_of[ref]].append(t.rates())
    families = {
        fam: {
            "tasks": len(rates),
            "lower": _mean(r[0] for r in rates),
            "upper": _mean(r[1] for r in rates),
            "decided_rate": _mean(r[2] for r in rates),
        }
        for fam, rates in sorted(by_family.items())
    }
    pooled = _Tally(
        sum(t.passed for t in tallies.values()),
        sum(t.failed for t in tallies.values()),
        sum(t.pending for t in tallies.values()),
    )
    return {
        "families": families,
        "versions": [
            {"task_ref": ref, "runs": tallies[ref].n}
            for ref in sorted(tallies, key=task_version)
            if tallies[ref].n
        ],
        "lower": _mean(f["lower"] for f in families.values()),
        "upper": _mean(f["upper"] for f in families.values()),
        "decided_rate": _mean(f["decided_rate"] for f in families.values()),
        "runs": pooled.n,
        "runs_pooled_rate": pooled.passed / pooled.n if pooled.n else None,
    }


def weighted_view(
    rows: Sequence[ReportRow], dimensions: Mapping[str, Mapping[str, str]], by: str = "family"
) -> dict[str, Any]:
    """The report's ``weighted`` section: family-weighted figures, or a slice by a dimension.

    Args:
        rows: the report rows.
        dimensions: task ref → its recorded dimensions (``{}`` for a task without any).
        by: ``family`` or ``dimension:NAME``.
    """
    dim = parse_by(by)
    family_of = {r.task_ref: r.family for r in rows}
    pool_of = {r.task_ref: r.pool for r in rows}
    tallies = _tallies(rows)
    cells: dict[tuple[str, str, str], dict[str, _Tally]] = defaultdict(dict)
    without: set[str] = set()
    for (ref, model), t in tallies.items():
        if dim is None:
            key = family_of[ref]
        elif dim in dimensions.get(ref, {}):
            key = dimensions[ref][dim]
        else:
            without.add(ref)
            continue
        cells[(pool_of[ref], model, key)][ref] = t
    out_rows = [
        {"pool": pool, "model": model, "value": key} | family_weighted(tasks, family_of)
        for (pool, model, key), tasks in sorted(cells.items())
    ]
    overall = [
        {"pool": pool, "model": model}
        | family_weighted(
            {ref: t for (ref, m), t in tallies.items() if m == model and pool_of[ref] == pool},
            family_of,
        )
        for pool, model in sorted({(pool_of[ref], m) for ref, m in tallies})
    ]
    return {
        "by": by,
        "dimension": dim,
        "method": WEIGHTING_METHOD,
        "rows": out_rows,
        "overall": overall,
        "tasks_without_dimension": sorted(without),
        "dimensions_available": sorted({k for d in dimensions.values() for k in d}),
    }


def weighted_rows(report: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The ``weighted`` section as a table (``weighted.csv``): its rows, then the overall rows."""
    view = report.get("weighted") or {"rows": [], "overall": [], "by": "family"}
    header = ["by", "pool", "model", "value", "lower", "upper", "decided_rate", "families"]
    header += ["tasks", "runs", "runs_pooled_rate", "versions"]
    out = []
    for row in [*view["rows"], *({**r, "value": "(all)"} for r in view["overall"])]:
        fams = row["families"]
        tasks = sum(f["tasks"] for f in fams.values())
        first = [view["by"], row["pool"], row["model"], row["value"], row["lower"], row["upper"]]
        versions = " ".join(f"{v['task_ref']}:{v['runs']}" for v in row["versions"])
        last = [len(fams), tasks, row["runs"], row["runs_pooled_rate"], versions]
        out.append([*first, row["decided_rate"], *last])
    return header, out
