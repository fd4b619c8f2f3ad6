"""Calibrating an adjudicated panel as a whole, beside each of its judges alone.

A panel with an adjudicator is more than its judges: its verdict on a criterion is the jury's,
or the adjudicator's where the judges disagree. :func:`panel_agreement` measures, on one label
set, the panel's own verdicts (macro-F1, kappa, missed critical errors… as for one judge), each
judge alone on the same items, and the adjudications: how many were asked and decided, how often
the adjudicator agreed with the majority of the judges (when one existed) and how often with the
label. Every rate carries its bootstrap and Wilson intervals. Pure; it takes the panel's results
per item as plain records (the service runs the panel through the real pipeline).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judges.calibration.estimates import Estimate, bootstrap_rate
from judges.calibration.metrics import Metrics, ScoredItem, compute_metrics
from regua.records import field_dict


@dataclass(frozen=True)
class PanelItem:
    """One labelled item as the panel judged it."""

    item_id: str
    criterion: str
    necessary: bool
    reference: str | None
    """The label's status (None: disputed or unlabelled)."""
    panel: str | None
    """The panel's criterion status (after any adjudication); None: not judged (machinery)."""
    judges: Mapping[str, str] = field(default_factory=dict)
    """Judge id → its own status on the item (each judge alone)."""
    counted: tuple[str, ...] = ()
    """The statuses of the judges whose votes counted (what the adjudicator was shown)."""
    adjudication: str | None = None
    """The adjudicator's status when one was asked (None: not asked, or it failed)."""
    adjudication_decided: bool = False


@dataclass(frozen=True)
class AdjudicationAgreement:
    """How an adjudicator did on a label set: asked, decided, with the majority, with the label."""

    asked: int
    decided: int
    no_majority: int
    """Adjudications where the judges had no strict majority (nothing to agree with)."""
    with_majority: Estimate
    with_label: Estimate

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **field_dict(self, "asked", "decided", "no_majority"),
            "with_majority": self.with_majority.to_dict(),
            "with_label": self.with_label.to_dict(),
        }


@dataclass(frozen=True)
class PanelAgreement:
    """The panel as a whole, each judge alone and the adjudications, on one label set."""

    panel_id: str
    panel_hash: str
    set_id: str
    items: int
    panel: Metrics
    per_criterion: Mapping[str, Metrics]
    judges: Mapping[str, Metrics]
    adjudication: AdjudicationAgreement

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **field_dict(self, "panel_id", "panel_hash", "set_id", "items"),
            "panel": self.panel.to_dict(),
            "per_criterion": {k: v.to_dict() for k, v in self.per_criterion.items()},
            "judges": {k: v.to_dict() for k, v in self.judges.items()},
            "adjudication": self.adjudication.to_dict(),
        }


def majority(statuses: Sequence[str]) -> str | None:
    """The status more than half of the judges gave, or None."""
    if not statuses:
        return None
    status, count = Counter(statuses).most_common(1)[0]
    return status if count * 2 > len(statuses) else None


def _scored(items: Sequence[PanelItem], status_of: Mapping[str, str | None]) -> list[ScoredItem]:
    return [
        ScoredItem(i.item_id, i.criterion, i.necessary, i.reference, (status_of[i.item_id],))
        for i in items
    ]


def _rate(hits: Sequence[bool], seed: int, n_boot: int) -> Estimate:
    return bootstrap_rate([float(h) for h in hits], [1.0] * len(hits), seed=seed, n_boot=n_boot)


def adjudication_agreement(
    items: Sequence[PanelItem], *, seed: int = 0, n_boot: int = 1000
) -> AdjudicationAgreement:
    """The adjudicator against the judges' majority and against the label."""
    asked = [i for i in items if i.adjudication is not None]
    with_majority = [i.adjudication == m for i in asked if (m := majority(i.counted)) is not None]
    with_label = [i.adjudication == i.reference for i in asked if i.reference is not None]
    return AdjudicationAgreement(
        asked=len(asked),
        decided=sum(1 for i in asked if i.adjudication_decided),
        no_majority=len(asked) - len(with_majority),
        with_majority=_rate(with_majority, seed, n_boot),
        with_label=_rate(with_label, seed + 1, n_boot),
    )


def panel_agreement(
    panel_id: str,
    panel_hash: str,
    set_id: str,
    items: Sequence[PanelItem],
    *,
    seed: int = 0,
    n_boot: int = 1000,
) -> PanelAgreement:
    """Measure the panel as a whole, each judge alone and its adjudications (see module text)."""
    as_panel = {i.item_id: i.panel for i in items}
    scored = _scored(items, as_panel)
    per_criterion = {
        c: compute_metrics(
            [s for s in scored if s.criterion == c],
            {},
            seed=seed,
            n_boot=n_boot,
            style_breakdown=False,
        )
        for c in sorted({i.criterion for i in items})
    }
    judge_ids = sorted({j for i in items for j in i.judges})
    alone = {}
    for judge in judge_ids:
        mine = [i for i in items if judge in i.judges]
        alone[judge] = compute_metrics(
            _scored(mine, {i.item_id: i.judges[judge] for i in mine}),
            {},
            seed=seed,
            n_boot=n_boot,
            style_breakdown=False,
        )
    return PanelAgreement(
        panel_id=panel_id,
        panel_hash=panel_hash,
        set_id=set_id,
        items=len(items),
        panel=compute_metrics(scored, {}, seed=seed, n_boot=n_boot, style_breakdown=False),
        per_criterion=per_criterion,
        judges=alone,
        adjudication=adjudication_agreement(items, seed=seed, n_boot=n_boot),
    )
