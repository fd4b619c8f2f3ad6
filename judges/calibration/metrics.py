"""Reliability metrics of a judge against human labels, each rate with a bootstrap interval.

Conventions (rows = human reference, columns = judge; statuses in :data:`STATUSES` order):

- *missed critical error*: the judge says ``pass`` on a necessary criterion humans failed;
  rate = missed / items humans failed on a necessary criterion;
- *false reject*: the judge says ``fail`` where humans said ``pass``; rate over human passes;
- *uncertain rate*: judge ``uncertain`` over judged items; *judge errors* are counted apart;
- *invariance violation*: on a ``must_not_change`` pair the variant's verdict differs from the
  base's verdict (same judge, same criterion); *sensitivity*: on a ``must_change`` pair it does;
- *repeat agreement*: share of items whose repeated runs all gave the same status.

Macro-F1 averages F1 over the statuses present in the reference (the labels); F1 of every
status either side used is reported too (``per_class_f1``). Cohen's kappa is None when chance
agreement is 1 (a single status everywhere). Every interval is a seeded percentile bootstrap at
95 % (stratified by reference status for macro-F1 and kappa; see
:mod:`judges.calibration.estimates`). Accuracy is reported only
next to these numbers, never alone. Pure functions; numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judges.calibration.estimates import (
    Estimate,
    IntArray,
    bootstrap_pair_stat,
    bootstrap_rate,
    cohen_kappa,
    confusion_matrix,
    encode,
    f1_estimate,
    kappa_estimate,
    macro_f1,
    per_class_f1,
    stratified_indices,
    wilson_interval,
)
from judges.calibration.sets import STATUSES

__all__ = [
    "Estimate",
    "IntArray",
    "Metrics",
    "ScoredItem",
    "bootstrap_pair_stat",
    "bootstrap_rate",
    "cohen_kappa",
    "compute_metrics",
    "confusion_matrix",
    "encode",
    "f1_estimate",
    "kappa_estimate",
    "macro_f1",
    "per_class_f1",
    "stratified_indices",
    "wilson_interval",
]


@dataclass(frozen=True)
class ScoredItem:
    """One labelled item with the judge's status on each repeat (None = judge error)."""

    item_id: str
    criterion: str
    necessary: bool
    reference: str | None
    statuses: tuple[str | None, ...]
    style_tags: tuple[str, ...] = ()
    relation: str | None = None
    base_item_id: str | None = None

    @property
    def verdict(self) -> str | None:
        """The first repeat that produced a verdict (None when every repeat errored)."""
        return next((s for s in self.statuses if s is not None), None)


@dataclass(frozen=True)
class Metrics:
    """Every reliability number of one judge on one slice of a calibration set."""

    n_items: int
    n_scored: int
    n_disputed: int
    n_judge_errors: int
    confusion: list[list[int]]
    accuracy: Estimate
    macro_f1: Estimate
    kappa: Estimate
    missed_critical: Estimate
    false_reject: Estimate
    uncertain_rate: Estimate
    judge_error_rate: Estimate
    invariance_violation: Estimate
    sensitivity: Estimate
    repeat_agreement: Estimate
    by_style: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    per_class_f1: Mapping[str, Estimate] = field(default_factory=dict)

    _ESTIMATES = (
        "accuracy",
        "macro_f1",
        "kappa",
        "missed_critical",
        "false_reject",
        "uncertain_rate",
        "judge_error_rate",
        "invariance_violation",
        "sensitivity",
        "repeat_agreement",
    )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the confusion matrix carries its status labels)."""
        out: dict[str, Any] = {
            "n_items": self.n_items,
            "n_scored": self.n_scored,
            "n_disputed": self.n_disputed,
            "n_judge_errors": self.n_judge_errors,
            "confusion": {"labels": list(STATUSES), "rows": "human", "matrix": self.confusion},
            "by_style": {k: dict(v) for k, v in self.by_style.items()},
            "per_class_f1": {k: v.to_dict() for k, v in self.per_class_f1.items()},
        }
        for name in self._ESTIMATES:
            out[name] = getattr(self, name).to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Metrics:
        """Inverse of :meth:`to_dict`."""
        estimates = {name: Estimate.from_dict(data[name]) for name in cls._ESTIMATES}
        return cls(
            n_items=int(data["n_items"]),
            n_scored=int(data["n_scored"]),
            n_disputed=int(data["n_disputed"]),
            n_judge_errors=int(data["n_judge_errors"]),
            confusion=[[int(v) for v in row] for row in data["confusion"]["matrix"]],
            by_style={str(k): dict(v) for k, v in (data.get("by_style") or {}).items()},
            per_class_f1={
                str(k): Estimate.from_dict(v) for k, v in (data.get("per_class_f1") or {}).items()
            },
            **estimates,
        )


def _label_metrics(scored: Sequence[ScoredItem], seed: int, n_boot: int) -> dict[str, Estimate]:
    pairs = [(s, s.reference, s.verdict) for s in scored]
    ok = [(s, r, v) for s, r, v in pairs if r is not None and v is not None]
    refs = [r for _, r, _ in ok]
    preds = [v for _, _, v in ok]
    crit = [s.necessary and r == "fail" for s, r, _ in ok]
    return {
        "accuracy": bootstrap_rate(
            [float(r == p) for r, p in zip(refs, preds, strict=True)],
            [1.0] * len(refs),
            seed=seed,
            n_boot=n_boot,
        ),
        "macro_f1": f1_estimate(refs, preds, seed=seed + 1, n_boot=n_boot),
        "kappa": kappa_estimate(refs, preds, seed=seed + 2, n_boot=n_boot),
        "missed_critical": bootstrap_rate(
            [float(c and p == "pass") for c, p in zip(crit, preds, strict=True)],
            [float(c) for c in crit],
            seed=seed + 3,
            n_boot=n_boot,
        ),
        "false_reject": bootstrap_rate(
            [float(r == "pass" and p == "fail") for r, p in zip(refs, preds, strict=True)],
            [float(r == "pass") for r in refs],
            seed=seed + 4,
            n_boot=n_boot,
        ),
    }


def _base_pairs(
    judged: Sequence[ScoredItem], base_verdicts: Mapping[str, str | None]
) -> tuple[list[tuple[str | None, str]], list[tuple[str | None, str]]]:
    """(variant verdict, base verdict) pairs for ``must_not_change`` and ``must_change`` items."""
    pairs = [
        (s.relation, s.verdict, base_verdicts.get(s.base_item_id))
        for s in judged
        if s.base_item_id and s.relation in ("must_change", "must_not_change")
    ]
    keep = [(v, b) for rel, v, b in pairs if rel == "must_not_change" and b is not None]
    change = [(v, b) for rel, v, b in pairs if rel == "must_change" and b is not None]
    return keep, change


def _style_metrics(
    scored: Sequence[ScoredItem], seed: int, n_boot: int
) -> dict[str, dict[str, Any]]:
    """The label metrics of each style tag's items, by tag."""
    by_style: dict[str, dict[str, Any]] = {}
    for tag in sorted({t for s in scored for t in s.style_tags}):
        subset = [s for s in scored if tag in s.style_tags]
        sub = _label_metrics(subset, seed, n_boot)
        by_style[tag] = {"n_items": len(subset), **{k: v.to_dict() for k, v in sub.items()}}
    return by_style


def compute_metrics(
    scored: Sequence[ScoredItem],
    base_verdicts: Mapping[str, str | None],
    *,
    seed: int = 0,
    n_boot: int = 1000,
    style_breakdown: bool = True,
) -> Metrics:
    """All metrics of one slice; ``base_verdicts`` maps base item ids to the judge's status."""
    judged = [s for s in scored if s.verdict is not None]
    labelled = [s for s in judged if s.reference is not None]
    main = _label_metrics(scored, seed, n_boot)
    keep, change = _base_pairs(judged, base_verdicts)
    repeated = [s for s in scored if sum(x is not None for x in s.statuses) >= 2]
    by_style = _style_metrics(scored, seed, n_boot) if style_breakdown else {}
    return Metrics(
        n_items=len(scored),
        n_scored=len(labelled),
        n_disputed=sum(1 for s in scored if s.reference is None),
        n_judge_errors=len(scored) - len(judged),
        confusion=confusion_matrix(
            [s.reference for s in labelled if s.reference is not None],
            [s.verdict for s in labelled if s.verdict is not None],
        ),
        uncertain_rate=bootstrap_rate(
            [float(s.verdict == "uncertain") for s in judged],
            [1.0] * len(judged),
            seed=seed + 5,
            n_boot=n_boot,
        ),
        judge_error_rate=bootstrap_rate(
            [float(s.verdict is None) for s in scored],
            [1.0] * len(scored),
            seed=seed + 6,
            n_boot=n_boot,
        ),
        invariance_violation=bootstrap_rate(
            [float(v != b) for v, b in keep], [1.0] * len(keep), seed=seed + 7, n_boot=n_boot
        ),
        sensitivity=bootstrap_rate(
            [float(v != b) for v, b in change], [1.0] * len(change), seed=seed + 8, n_boot=n_boot
        ),
        repeat_agreement=bootstrap_rate(
            [float(len({x for x in s.statuses if x is not None}) == 1) for s in repeated],
            [1.0] * len(repeated),
            seed=seed + 9,
            n_boot=n_boot,
        ),
        by_style=by_style,
        per_class_f1=per_class_f1(
            [s.reference for s in labelled if s.reference is not None],
            [s.verdict for s in labelled if s.verdict is not None],
            seed=seed + 10,
            n_boot=n_boot,
        ),
        **main,
    )
