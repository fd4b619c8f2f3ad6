"""Review resolution, simple agreement and Cohen's kappa between reviewers (pure)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

ReviewStatus = Literal["pass", "fail", "uncertain", "not_applicable"]
REVIEW_STATUSES: tuple[ReviewStatus, ...] = ("pass", "fail", "uncertain", "not_applicable")
ItemState = Literal["open", "disputed", "resolved"]


@dataclass(frozen=True)
class Label:
    """One reviewer's label on one item (``adjudication`` marks the adjudicator's decision)."""

    reviewer_id: str
    status: str
    adjudication: bool = False


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
    adjudications = [lab for lab in labels if lab.adjudication]
    reviews = [lab for lab in labels if not lab.adjudication]
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


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa for two raters over the same items.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` from each rater's marginal label frequencies. None
    when there are no pairs or when ``p_e == 1`` (both raters used one identical label: kappa is
    undefined, although agreement is perfect).
    """
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(1 for a, b in pairs if a == b) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    p_e = sum(left[k] * right[k] for k in set(left) | set(right)) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


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
            if not lab.adjudication and lab.reviewer_id not in first:
                first[lab.reviewer_id] = lab.status
        for a, b in combinations(sorted(first), 2):
            pairs[(a, b)].append((first[a], first[b]))
    return [
        PairAgreement(a, b, len(p), simple_agreement(p), cohen_kappa(p))
        for (a, b), p in sorted(pairs.items())
    ]
