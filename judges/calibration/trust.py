"""Three-way gate outcome: trusted, not trusted, or inconclusive (the set cannot tell yet).

Each check of the rule has a *cautious* reading (the one that must hold for ``trusted``) and an
*optimistic* one (if even that fails, the judge is ``not_trusted``); in between the check is
``inconclusive``. Recall of each class (the judge's ``pass`` on items labelled ``pass``, its
``fail`` on items labelled ``fail``: TPR and TNR) is read by the lower bound of its Wilson 95 %
interval for ``trusted`` and by the upper bound for ``not_trusted``. An inconclusive check says
how many more labels of which class would decide it, assuming the judge keeps its observed rate
(for a class with no label yet: that it answers all of them right).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from judges.calibration.metrics import Estimate, wilson_interval
from judges.calibration.sets import STATUSES

GateStatus = Literal["trusted", "not_trusted", "inconclusive"]
GATE_STATUSES: tuple[GateStatus, ...] = ("trusted", "not_trusted", "inconclusive")
CheckState = Literal["ok", "bad", "unsure"]
MAX_MORE = 10_000
"""Beyond this many more labels a check counts as undecidable by more labels."""
CLASS_WORDS = {"pass": "labelled pass", "fail": "labelled fail"}


def as_gate_status(value: object, passed: bool) -> GateStatus:
    """A stored status (older records have none: ``passed`` reads as trusted/not trusted)."""
    for s in GATE_STATUSES:
        if value == s:
            return s
    return "trusted" if passed else "not_trusted"


@dataclass(frozen=True)
class Need:
    """What would decide an inconclusive check: ``more`` labels of class ``label``."""

    label: str
    more: int | None
    """None when no number of such labels would decide it at the observed rate."""
    check: str

    def text(self) -> str:
        """One line for a person."""
        if self.more is None:
            return (
                f"{self.check}: more '{self.label}' labels at the observed rate would not decide it"
            )
        items = "item" if self.more == 1 else "items"
        return (
            f"{self.check}: about {self.more} more {items} labelled '{self.label}' would decide it"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"label": self.label, "more": self.more, "check": self.check}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Need:
        """Inverse of :meth:`to_dict`."""
        more = data.get("more")
        return cls(str(data["label"]), None if more is None else int(more), str(data["check"]))


def _smallest(predicate: Callable[[int], bool]) -> int | None:
    """Smallest m in 1..MAX_MORE with predicate(m) (predicate monotone), or None."""
    if not predicate(MAX_MORE):
        return None
    lo, hi = 1, MAX_MORE
    while lo < hi:
        mid = (lo + hi) // 2
        if predicate(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def more_for_lower_bound(k: int, n: int, threshold: float) -> int | None:
    """More labels (at rate k/n; 1.0 when n = 0) until the Wilson lower bound reaches it."""
    p = 1.0 if n == 0 else k / n
    return _smallest(lambda m: wilson_interval(k + p * m, n + m)[0] >= threshold)


def more_for_upper_bound(k: int, n: int, threshold: float) -> int | None:
    """More labels (at rate k/n) until the Wilson upper bound falls below ``threshold``."""
    if n == 0:
        return None
    p = k / n
    return _smallest(lambda m: wilson_interval(k + p * m, n + m)[1] < threshold)


@dataclass(frozen=True)
class Check:
    """One check's state, its reason (when not ok) and what would decide it."""

    state: CheckState
    reason: str = ""
    needs: tuple[Need, ...] = ()


def recall_counts(confusion: list[list[int]], label: str) -> tuple[int, int]:
    """(judge said ``label``, humans said ``label``) from a confusion matrix (rows = humans)."""
    i = STATUSES.index(label)
    row = confusion[i]
    return int(row[i]), int(sum(row))


def recall_check(confusion: list[list[int]], label: str, threshold: float) -> Check:
    """Recall of one class by its Wilson interval: lower >= t ok, upper < t bad."""
    k, n = recall_counts(confusion, label)
    name = f"recall of '{label}'"
    if n == 0:
        more = more_for_lower_bound(0, 0, threshold)
        why = f"{name} cannot be measured: no item is {CLASS_WORDS.get(label, label)}"
        return Check("unsure", why, (Need(label, more, name),))
    lo, hi = wilson_interval(k, n)
    if lo >= threshold:
        return Check("ok")
    if hi < threshold:
        return Check("bad", f"{name} {k}/{n}: upper 95% bound {hi:.2f} < {threshold}")
    need = Need(label, more_for_lower_bound(k, n, threshold), name)
    if k / n < threshold:
        need = Need(label, more_for_upper_bound(k, n, threshold), name)
    why = f"{name} {k}/{n}: 95% interval [{lo:.2f}, {hi:.2f}] straddles {threshold}"
    return Check("unsure", why, (need,))


def rate_check(name: str, est: Estimate, limit: float, *, use_upper: bool, label: str) -> Check:
    """A rate that must stay at most ``limit`` (point, or upper bound when ``use_upper``)."""
    k, n = est.numerator or 0, est.denominator or 0
    if est.value is None or n == 0:
        return Check("ok")
    lo = wilson_interval(k, n)[0]
    bounds = [b for b in (est.ci_high, est.wilson_high) if b is not None]
    cautious = max(bounds) if use_upper and bounds else est.value
    if cautious <= limit:
        return Check("ok")
    which = "upper 95% bound of " if use_upper else ""
    text = f"{which}{name} {cautious:.3f} ({k}/{n}) > {limit}"
    if lo > limit or not use_upper:
        return Check("bad", text)
    return Check("unsure", text, (Need(label, more_for_upper_bound(k, n, limit), name),))


def combine(checks: list[Check]) -> tuple[GateStatus, tuple[str, ...], tuple[Need, ...]]:
    """Any bad check: not trusted; else any unsure: inconclusive; else trusted."""
    reasons = tuple(c.reason for c in checks if c.state != "ok")
    by_label: dict[str, Need] = {}
    for need in (n for c in checks if c.state == "unsure" for n in c.needs):
        known = by_label.get(need.label)
        if known is None or (known.more is not None and (need.more or MAX_MORE) > known.more):
            by_label[need.label] = need
    needs = tuple(by_label[k] for k in sorted(by_label))
    if any(c.state == "bad" for c in checks):
        return "not_trusted", reasons, ()
    if any(c.state == "unsure" for c in checks):
        return "inconclusive", reasons + tuple(n.text() for n in needs), needs
    return "trusted", ("all thresholds met",), ()
