"""Audits of automatic passes, counted per judge profile (pure).

The outcome itself is re-computed with the jury's own rule (:func:`judges.jury.decide_outcome`)
in :mod:`service.review.evaluation`; this module only counts what audits found.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class AuditRecord:
    """A resolved audit item: which judges passed it and what people decided."""

    criterion_id: str
    judge_profile_ids: tuple[str, ...]
    final_label: str


@dataclass(frozen=True)
class JudgeAuditStats:
    """Per judge profile: audited automatic passes, overturned (fail) and not confirmed."""

    judge_profile_id: str
    audited: int
    confirmed: int
    overturned: int
    unconfirmed: int

    @property
    def overturn_rate(self) -> float | None:
        """Overturned / audited (None before any audit)."""
        return self.overturned / self.audited if self.audited else None


def overturns_by_judge(records: Iterable[AuditRecord]) -> list[JudgeAuditStats]:
    """Count audited passes per judge profile: ``fail`` overturns; uncertain/n.a. unconfirmed."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for rec in records:
        for judge in rec.judge_profile_ids:
            row = counts[judge]
            row[0] += 1
            if rec.final_label == "pass":
                row[1] += 1
            elif rec.final_label == "fail":
                row[2] += 1
            else:
                row[3] += 1
    return [JudgeAuditStats(j, *counts[j]) for j in sorted(counts)]
