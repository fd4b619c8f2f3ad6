"""Running a judge profile over a calibration set and deciding the gate per criterion.

The judge itself is plugged in as ``verdict_fn(item, repeat) -> Verdict | JudgeFailure | str``,
so the service or the CLI can pass the real pipeline (stored artifact → sandboxed render →
judge) while tests pass a plain function. Only the chosen split is read for labels (the gate
uses ``held_out``); base items of perturbation pairs are judged too, when needed, for the
invariance and sensitivity numbers — their human labels are not read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from judges.calibration.agreement import HumanAgreement, human_agreement
from judges.calibration.gate import DEFAULT_GATE, GateConfig, GateDecision, decide
from judges.calibration.metrics import Metrics, ScoredItem, compute_metrics
from judges.calibration.sets import STATUSES, CalibrationItem, CalibrationSet
from judges.model import JudgeFailure, JudgeProfile, Verdict
from regua.errors import CalibrationError

VerdictLike = Verdict | JudgeFailure | str | None
"""What a verdict function returns: a verdict (or a bare status), a judge error, or ``None``
when the judge does not answer this criterion (abstains: the item is left out, not an error)."""
VerdictFn = Callable[[CalibrationItem, int], VerdictLike]
"""``verdict_fn(item, repeat)``. If the callable has a ``prepare(items)`` attribute, it is called
once with every item before judging (e.g. to render all artifacts in parallel)."""


@dataclass(frozen=True)
class ItemResult:
    """The judge's answers on one item over the repeats (None status = judge error)."""

    item_id: str
    criterion: str
    statuses: tuple[str | None, ...]
    errors: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "item_id": self.item_id,
            "criterion": self.criterion,
            "statuses": list(self.statuses),
            "errors": list(self.errors),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemResult:
        """Inverse of :meth:`to_dict`."""
        return cls(
            item_id=str(data["item_id"]),
            criterion=str(data["criterion"]),
            statuses=tuple(None if s is None else str(s) for s in data["statuses"]),
            errors=tuple(str(e) for e in data.get("errors") or ()),
        )


@dataclass(frozen=True)
class CalibrationRun:
    """A stored calibration run: what was measured, on what, how, and the gate decisions."""

    run_id: str
    judge: str
    profile_id: str
    profile_hash: str | None
    set_id: str
    set_hash: str
    task_ref: str
    task_family: str
    split: str
    split_seed: int | None
    repeats: int
    seed: int
    n_boot: int
    started_at: str
    finished_at: str
    results: tuple[ItemResult, ...]
    metrics: Metrics
    per_criterion: Mapping[str, Metrics]
    human: HumanAgreement
    decisions: tuple[GateDecision, ...]
    gate: Mapping[str, Any] = field(default_factory=dict)
    abstained: tuple[str, ...] = ()

    def decision(self, criterion: str) -> GateDecision:
        """The gate decision for one criterion (KeyError when not calibrated)."""
        for d in self.decisions:
            if d.criterion == criterion:
                return d
        raise KeyError(criterion)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (what the service stores)."""
        return {
            "run_id": self.run_id,
            "judge": self.judge,
            "profile_id": self.profile_id,
            "profile_hash": self.profile_hash,
            "set_id": self.set_id,
            "set_hash": self.set_hash,
            "task_ref": self.task_ref,
            "task_family": self.task_family,
            "split": self.split,
            "split_seed": self.split_seed,
            "repeats": self.repeats,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "results": [r.to_dict() for r in self.results],
            "metrics": self.metrics.to_dict(),
            "per_criterion": {k: m.to_dict() for k, m in self.per_criterion.items()},
            "human": self.human.to_dict(),
            "decisions": [d.to_dict() for d in self.decisions],
            "gate": dict(self.gate),
            "abstained": list(self.abstained),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationRun:
        """Inverse of :meth:`to_dict`."""
        seed = data.get("split_seed")
        return cls(
            run_id=str(data["run_id"]),
            judge=str(data["judge"]),
            profile_id=str(data["profile_id"]),
            profile_hash=data.get("profile_hash"),
            set_id=str(data["set_id"]),
            set_hash=str(data["set_hash"]),
            task_ref=str(data["task_ref"]),
            task_family=str(data["task_family"]),
            split=str(data["split"]),
            split_seed=None if seed is None else int(seed),
            repeats=int(data["repeats"]),
            seed=int(data["seed"]),
            n_boot=int(data["n_boot"]),
            started_at=str(data["started_at"]),
            finished_at=str(data["finished_at"]),
            results=tuple(ItemResult.from_dict(r) for r in data["results"]),
            metrics=Metrics.from_dict(data["metrics"]),
            per_criterion={k: Metrics.from_dict(v) for k, v in data["per_criterion"].items()},
            human=HumanAgreement.from_dict(data["human"]),
            decisions=tuple(GateDecision.from_dict(d) for d in data["decisions"]),
            gate=dict(data.get("gate") or {}),
            abstained=tuple(str(x) for x in data.get("abstained") or ()),
        )


def _status(result: VerdictLike) -> tuple[str | None, str | None]:
    if result is None:
        return None, "abstained"
    if isinstance(result, JudgeFailure):
        return None, f"{result.cause}: {result.detail}"
    status = result.status.value if isinstance(result, Verdict) else str(result)
    if status not in STATUSES:
        return None, f"invalid status {status!r}"
    return status, None


SplitName = Literal["held_out", "tuning", "all"]
#: The split names a caller may give as text, to their typed value.
SPLIT_NAMES: dict[str, SplitName] = {"held_out": "held_out", "tuning": "tuning", "all": "all"}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _family(task_ref: str) -> str:
    """Task family from a ref: ``pelican-bicycle-structured@1`` -> ``pelican-bicycle``."""
    from tasks import bundled_registry

    try:
        return bundled_registry().get(task_ref).family
    except Exception:  # an unregistered task still calibrates under its own id
        return task_ref.partition("@")[0]


def _judge_all(
    items: Sequence[CalibrationItem], verdict_fn: VerdictFn, repeats: int
) -> dict[str, ItemResult]:
    prepare = getattr(verdict_fn, "prepare", None)
    if callable(prepare):
        prepare(items)
    results: dict[str, ItemResult] = {}
    for item in items:
        statuses: list[str | None] = []
        errors: list[str] = []
        for r in range(repeats):
            status, error = _status(verdict_fn(item, r))
            statuses.append(status)
            if error:
                errors.append(error)
        results[item.item_id] = ItemResult(
            item.item_id, item.criterion, tuple(statuses), tuple(errors)
        )
    return results


def run_calibration(
    judge: str,
    profile: JudgeProfile | str,
    calibration_set: CalibrationSet,
    verdict_fn: VerdictFn,
    *,
    split: SplitName = "held_out",
    criteria: Sequence[str] | None = None,
    repeats: int = 2,
    seed: int = 0,
    n_boot: int = 1000,
    gate: GateConfig = DEFAULT_GATE,
    task_family: str | None = None,
    clock: Callable[[], str] = _now,
) -> CalibrationRun:
    """Judge every item of one split ``repeats`` times, compute the metrics, decide the gate."""
    if repeats < 1:
        raise CalibrationError("repeats must be >= 1")
    profile_id = profile if isinstance(profile, str) else profile.id
    profile_hash = None if isinstance(profile, str) else profile.content_hash()
    family = task_family or _family(calibration_set.task_ref)
    started = clock()
    wanted = [i for i in calibration_set.part(split) if criteria is None or i.criterion in criteria]
    if not wanted:
        raise CalibrationError(f"set {calibration_set.set_id}: no items in split {split!r}")
    to_run = {i.item_id: i for i in wanted}
    for item in wanted:
        if item.base_item_id and item.base_item_id not in to_run:
            to_run[item.base_item_id] = calibration_set.item(item.base_item_id)
    results = _judge_all([to_run[k] for k in sorted(to_run)], verdict_fn, repeats)
    abstained = tuple(k for k, r in results.items() if r.errors == ("abstained",) * repeats)
    wanted = [i for i in wanted if i.item_id not in abstained]
    base_verdicts = {k: next((s for s in v.statuses if s), None) for k, v in results.items()}
    scored = [
        ScoredItem(
            item_id=i.item_id,
            criterion=i.criterion,
            necessary=i.necessary,
            reference=calibration_set.reference(i.item_id).status,
            statuses=results[i.item_id].statuses,
            style_tags=i.style_tags,
            relation=i.relation,
            base_item_id=i.base_item_id,
        )
        for i in wanted
    ]
    overall = compute_metrics(scored, base_verdicts, seed=seed, n_boot=n_boot)
    per_criterion: dict[str, Metrics] = {}
    decisions: list[GateDecision] = []
    stored = calibration_set.split
    split_seed = None if stored is None or split == "all" else stored.seed
    payload = {
        "profile": profile_id, "hash": profile_hash, "set": calibration_set.content_hash(),
        "split": split, "repeats": repeats, "seed": seed, "started": started,
    }  # fmt: skip
    run_id = "cal-" + hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
    decided_at = clock()

    def _human(criterion: str | None) -> HumanAgreement:
        labels = [
            calibration_set.annotator_labels(i.item_id)
            for i in wanted
            if criterion is None or i.criterion == criterion
        ]
        return human_agreement(labels, seed=seed, n_boot=n_boot)

    for criterion in sorted({s.criterion for s in scored}):
        subset = [s for s in scored if s.criterion == criterion]
        metrics = compute_metrics(subset, base_verdicts, seed=seed, n_boot=n_boot)
        per_criterion[criterion] = metrics
        decisions.append(
            decide(
                profile_id=profile_id,
                criterion=criterion,
                task_family=family,
                metrics=metrics,
                config=gate,
                set_id=calibration_set.set_id,
                split_seed=split_seed,
                decided_at=decided_at,
                necessary=all(s.necessary for s in subset),
                run_id=run_id,
                context={"human_agreement": _human(criterion).to_dict()},
            )
        )
    human = _human(None)
    return CalibrationRun(
        run_id=run_id,
        judge=judge,
        profile_id=profile_id,
        profile_hash=profile_hash,
        set_id=calibration_set.set_id,
        set_hash=calibration_set.content_hash(),
        task_ref=calibration_set.task_ref,
        task_family=family,
        split=split,
        split_seed=split_seed,
        repeats=repeats,
        seed=seed,
        n_boot=n_boot,
        started_at=started,
        finished_at=clock(),
        results=tuple(results[k] for k in sorted(results)),
        metrics=overall,
        per_criterion=per_criterion,
        human=human,
        decisions=tuple(decisions),
        gate=gate.to_dict(),
        abstained=abstained,
    )
