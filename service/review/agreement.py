"""Review resolution and the agreement between reviewers (pure).

A reviewer's label is a :class:`judges.calibration.Label` (the same record a calibration set
holds, so reviewed items can become calibration data); kappa is
:func:`judges.calibration.metrics.cohen_kappa`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from judges.calibration import Label
from judges.calibration.metrics import cohen_kappa

ReviewStatus = Literal["pass", "fail", "uncertain", "not_applicable"]
REVIEW_STATUSES: tuple[ReviewStatus, ...] = ("pass", "fail", "uncertain", "not_applicable")
ItemState = Literal["open", "disputed", "resolved"]

__all__ = [
    "REVIEW_STATUSES",
    "Label",
    "PairAgreement",
    "Resolution",
    "ReviewStatus",
    "pairwise_agreement",
    "resolve",
    "simple_agreement",
]


@dataclass(frozen=True)
class Resolution:
    """Where an item stands after its labels so far."""

    state: ItemState
    label: str | None
    reviews: int
    needed: int


def resolve(labels: Sequence[Label], needed: int) -> Resolution:
    """Resolve an item: an adjudication wins; enough agreeing reviews resolve; else open/disputed.

    Disagreement among the independent reviews marks the item ``disputed`` until an
    adjudicating reviewer decides; the outcome then uses the adjudicated label.
    """
    adjudications = [lab for lab in labels if lab.role == "adjudicator"]
    reviews = [lab for lab in labels if lab.role != "adjudicator"]
    if adjudications:
        return Resolution("resolved", adjudications[-1].status, len(reviews), needed)
    distinct = {lab.status for lab in reviews}
    if len(distinct) > 1:
        return Resolution("disputed", None, len(reviews), needed)
    if len(reviews) >= needed and distinct:
        return Resolution("resolved", reviews[0].status, len(reviews), needed)
    return Resolution("open", None, len(reviews), needed)


def simple_agreement(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Share of pairs on which both reviewers gave the same label (None without pairs)."""
    if not pairs:
        return None
    return sum(1 for a, b in pairs if a == b) / len(pairs)


@dataclass(frozen=True)
class PairAgreement:
    """Agreement between two reviewers on the items both labelled independently."""

    reviewer_a: str
    reviewer_b: str
    items: int
    agreement: float | None
    kappa: float | None


def pairwise_agreement(labels_by_item: Mapping[str, Iterable[Label]]) -> list[PairAgreement]:
    """Agreement and kappa for every pair of reviewers who labelled common items.

    Adjudications are left out: they are decisions on a dispute, not independent labels.
    """
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for labels in labels_by_item.values():
        first: dict[str, str] = {}
        for lab in labels:
            if lab.role != "adjudicator" and lab.annotator not in first:
                first[lab.annotator] = lab.status
        for a, b in combinations(sorted(first), 2):
            pairs[(a, b)].append((first[a], first[b]))
    return [
        PairAgreement(
            a, b, len(p), simple_agreement(p), cohen_kappa([x for x, _ in p], [y for _, y in p])
        )
        for (a, b), p in sorted(pairs.items())
    ]
