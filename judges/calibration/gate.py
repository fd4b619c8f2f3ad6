"""The reliability gate: a published rule deciding which judge earns a vote on a criterion.

The rule is configuration (:class:`GateConfig`: default thresholds plus per-criterion overrides)
and is copied into every :class:`GateDecision`, so a decision can always be re-read with the rule
that made it. Defaults: macro-F1 > 0.5, judge-label kappa > 0, missed-critical-error rate
<= 5 %, and the lower 95 % bound of each class's recall >= 0.5, on the held-out split. Each
criterion ends ``trusted`` (may vote), ``not_trusted`` or ``inconclusive`` (the labels cannot
tell yet: the decision says how many more labels of which class would decide it); only trusted
votes. A judge measured on no failed necessary item cannot show that it catches failures, so it
is at best inconclusive. Plain accuracy never decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from judges.calibration.metrics import Metrics
from judges.calibration.trust import (
    Check,
    GateStatus,
    Need,
    as_gate_status,
    combine,
    rate_check,
    recall_check,
)
from regua.errors import CalibrationError
from regua.records import field_dict


@dataclass(frozen=True)
class GateThresholds:
    """Thresholds for one criterion. ``None`` disables an optional check."""

    min_macro_f1: float = 0.5
    """Macro-F1 must be strictly greater."""
    max_missed_critical_rate: float = 0.05
    """Missed-critical-error rate must be at most this."""
    min_items: int = 1
    min_critical_items: int = 1
    use_upper_bound: bool = False
    """Compare the upper 95 % bound of the missed-critical rate instead of its point value.

    The bound is the larger of bootstrap and Wilson: the cautious rule for small sets.
    """
    max_invariance_violation_rate: float | None = None
    min_repeat_agreement: float | None = None
    min_recall_lower: float | None = 0.5
    """The lower Wilson 95 % bound of each class's recall (TPR on pass, TNR on fail) must
    reach this for ``trusted``; an upper bound below it means ``not_trusted``."""
    min_kappa: float | None = 0.0
    """Judge-to-label Cohen's kappa must be strictly greater (0: better than chance)."""
    max_false_reject_rate: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateThresholds:
        """Inverse of :meth:`to_dict` (unknown keys ignored, missing keys defaulted)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class GateConfig:
    """The gate rule: an id (recorded with each decision), defaults and overrides."""

    id: str = "regua-gate@1"
    default: GateThresholds = field(default_factory=GateThresholds)
    per_criterion: Mapping[str, GateThresholds] = field(default_factory=dict)

    def for_criterion(self, criterion: str) -> GateThresholds:
        """Thresholds that apply to one criterion."""
        return self.per_criterion.get(criterion, self.default)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "id": self.id,
            "default": self.default.to_dict(),
            "per_criterion": {k: v.to_dict() for k, v in sorted(self.per_criterion.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateConfig:
        """Inverse of :meth:`to_dict`."""
        return cls(
            id=str(data.get("id") or "regua-gate@1"),
            default=GateThresholds.from_dict(data.get("default") or {}),
            per_criterion={
                str(k): GateThresholds.from_dict(v)
                for k, v in (data.get("per_criterion") or {}).items()
            },
        )


DEFAULT_GATE = GateConfig()


@dataclass(frozen=True)
class GateDecision:
    """One gate decision: may this judge profile vote on this criterion of this task family?"""

    profile_id: str
    criterion: str
    task_family: str
    passed: bool
    reasons: tuple[str, ...]
    metrics: Mapping[str, Any]
    thresholds: Mapping[str, Any]
    gate_id: str
    set_id: str
    split_seed: int | None
    decided_at: str
    run_id: str | None = None
    profile_hash: str | None = None
    """Content hash of the profile that was calibrated (``None`` in older records)."""
    status: GateStatus | None = None
    """trusted | not_trusted | inconclusive (``None`` given: read from ``passed``)."""
    needs: tuple[Need, ...] = ()
    """For an inconclusive decision: how many more labels of which class would decide it."""
    set_size: int | None = None
    """How many labelled items of this criterion the decision was measured on (disputed items
    left out); ``None`` in records made before it was kept (read from the metrics then)."""

    def __post_init__(self) -> None:
        """Fill the status of records made before it existed, and check it matches ``passed``."""
        status = as_gate_status(self.status, self.passed)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "needs", tuple(self.needs))
        if self.set_size is None:
            object.__setattr__(self, "set_size", labelled_items(self.metrics))
        if self.passed != (status == "trusted"):
            raise CalibrationError(f"gate decision: passed={self.passed} but status {status}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **field_dict(self, "profile_id", "profile_hash", "criterion", "task_family", "passed"),
            "status": self.status,
            "needs": [n.to_dict() for n in self.needs],
            "set_size": self.set_size,
            "reasons": list(self.reasons),
            "metrics": dict(self.metrics),
            "thresholds": dict(self.thresholds),
            **field_dict(self, "gate_id", "set_id", "split_seed", "decided_at", "run_id"),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateDecision:
        """Inverse of :meth:`to_dict`."""
        seed = data.get("split_seed")
        texts = ("profile_id", "criterion", "task_family", "set_id", "decided_at")
        return cls(
            **{name: str(data[name]) for name in texts},
            passed=bool(data["passed"]),
            reasons=tuple(str(r) for r in data.get("reasons") or ()),
            metrics=dict(data.get("metrics") or {}),
            thresholds=dict(data.get("thresholds") or {}),
            gate_id=str(data.get("gate_id") or ""),
            split_seed=None if seed is None else int(seed),
            run_id=data.get("run_id"),
            profile_hash=data.get("profile_hash"),
            status=as_gate_status(data.get("status"), bool(data["passed"])),
            needs=tuple(Need.from_dict(n) for n in data.get("needs") or ()),
            set_size=None if data.get("set_size") is None else int(data["set_size"]),
        )


def labelled_items(metrics: Mapping[str, Any]) -> int | None:
    """Labelled items behind a decision's metrics (items minus disputed), None when unknown."""
    items, disputed = metrics.get("n_items"), metrics.get("n_disputed")
    if not isinstance(items, int):
        return None
    return items - (disputed if isinstance(disputed, int) else 0)


def _fmt(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.3f}"


def _min_check(name: str, value: float | None, limit: float, *, strict: bool = True) -> Check:
    if value is None:
        return Check("unsure", f"{name} is undefined (one status everywhere)")
    ok = value > limit if strict else value >= limit
    return Check("ok") if ok else Check("bad", f"{name} {_fmt(value)} is not > {limit}")


def gate_checks(metrics: Metrics, t: GateThresholds, *, necessary: bool = True) -> list[Check]:
    """Every check of the rule on one criterion's metrics (see :mod:`~.trust`)."""
    checks: list[Check] = []
    if metrics.n_scored < t.min_items:
        more = t.min_items - metrics.n_scored
        why = f"only {metrics.n_scored} labelled items judged (< {t.min_items})"
        checks.append(Check("unsure", why, (Need("pass or fail", more, "labelled items"),)))
    checks.append(_min_check("macro-F1", metrics.macro_f1.value, t.min_macro_f1))
    if t.min_kappa is not None:
        checks.append(_min_check("judge-label kappa", metrics.kappa.value, t.min_kappa))
    if necessary:
        n_crit = metrics.missed_critical.denominator or 0
        if n_crit < t.min_critical_items:
            more = t.min_critical_items - n_crit
            why = (
                f"only {n_crit} necessary items labelled fail (< {t.min_critical_items}): "
                "missed critical errors cannot be measured"
            )
            checks.append(Check("unsure", why, (Need("fail", more, "missed critical errors"),)))
    missed_limit = t.max_missed_critical_rate if necessary else None
    rates = (
        ("missed-critical-error rate", metrics.missed_critical, missed_limit, "fail"),
        ("false-reject rate", metrics.false_reject, t.max_false_reject_rate, "pass"),
    )
    for name, rate, limit, label in rates:
        if limit is not None:
            checks.append(rate_check(name, rate, limit, use_upper=t.use_upper_bound, label=label))
    if t.min_recall_lower is not None:
        for label in ("fail", "pass"):
            checks.append(recall_check(metrics.confusion, label, t.min_recall_lower))
    inv = metrics.invariance_violation.value
    limit = t.max_invariance_violation_rate
    if limit is not None and inv is not None and inv > limit:
        checks.append(Check("bad", f"invariance violation rate {_fmt(inv)} > {limit}"))
    rep = metrics.repeat_agreement.value
    if t.min_repeat_agreement is not None and rep is not None and rep < t.min_repeat_agreement:
        checks.append(Check("bad", f"repeat agreement {_fmt(rep)} < {t.min_repeat_agreement}"))
    return checks


def gate_reasons(metrics: Metrics, t: GateThresholds, *, necessary: bool = True) -> list[str]:
    """Every reason the metrics do not earn ``trusted`` (empty list = trusted)."""
    return [c.reason for c in gate_checks(metrics, t, necessary=necessary) if c.state != "ok"]


def decide(
    *,
    profile_id: str,
    criterion: str,
    task_family: str,
    metrics: Metrics,
    config: GateConfig,
    set_id: str,
    split_seed: int | None,
    decided_at: str,
    necessary: bool = True,
    run_id: str | None = None,
    context: Mapping[str, Any] | None = None,
    profile_hash: str | None = None,
) -> GateDecision:
    """Apply the gate rule to one criterion's held-out metrics.

    ``context`` adds read-only numbers to the recorded metrics (e.g. human-to-human agreement
    on the same items); they never enter the rule.
    """
    thresholds = config.for_criterion(criterion)
    status, reasons, needs = combine(gate_checks(metrics, thresholds, necessary=necessary))
    return GateDecision(
        profile_id=profile_id,
        criterion=criterion,
        task_family=task_family,
        passed=status == "trusted",
        reasons=reasons,
        status=status,
        needs=needs,
        metrics={**metrics.to_dict(), **(context or {})},
        thresholds={"gate_id": config.id, **thresholds.to_dict()},
        gate_id=config.id,
        set_id=set_id,
        split_seed=split_seed,
        decided_at=decided_at,
        run_id=run_id,
        profile_hash=profile_hash,
        set_size=metrics.n_items - metrics.n_disputed,
    )


def latest_decisions(
    decisions: Iterable[GateDecision],
) -> dict[tuple[str, str, str], GateDecision]:
    """The latest decision per ``(profile_id, criterion, task_family)`` (by ``decided_at``)."""
    out: dict[tuple[str, str, str], GateDecision] = {}
    for d in sorted(decisions, key=lambda d: d.decided_at):
        out[(d.profile_id, d.criterion, d.task_family)] = d
    return out


def eligibility_table(decisions: Iterable[GateDecision]) -> dict[tuple[str, str, str], bool]:
    """What the jury reads (``judges.jury.Eligibility`` mapping form) from the latest decisions."""
    return {key: d.passed for key, d in latest_decisions(decisions).items()}
