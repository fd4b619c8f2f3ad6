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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from judges.calibration.agreement import HumanAgreement, human_agreement
from judges.calibration.gate import DEFAULT_GATE, GateConfig, GateDecision, decide
from judges.calibration.metrics import Metrics, ScoredItem, compute_metrics
from judges.calibration.ordinal import (
    DEFAULT_ORDINAL,
    OrdinalThresholds,
    decide_graded,
    ordinal_metrics,
)
from judges.calibration.results import CalibrationRun, ItemResult
from judges.calibration.sets import STATUSES, CalibrationItem, CalibrationSet
from judges.model import JudgeFailure, JudgeProfile, Verdict
from regua.errors import CalibrationError
from regua.records import field_dict
from tasks import TaskSpec

__all__ = [
    "SPLIT_NAMES",
    "CalibrationRun",
    "ItemResult",
    "SplitName",
    "VerdictFn",
    "VerdictLike",
    "run_calibration",
]

VerdictLike = Verdict | JudgeFailure | str | None
"""What a verdict function returns: a verdict (or a bare status), a judge error, or ``None``.

``None`` means the judge does not answer this criterion (it abstains: the item is left out,
not an error).
"""
VerdictFn = Callable[[CalibrationItem, int], VerdictLike]
"""``verdict_fn(item, repeat)``: the judge under calibration, asked about one item.

If the callable has a ``prepare(items)`` attribute, it is called once with every item before
judging (e.g. to render all artifacts in parallel).
"""


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


def _task(task_ref: str) -> TaskSpec | None:
    """The bundled task of a ref, or None (a set of an unregistered task)."""
    from tasks import bundled_registry

    try:
        return bundled_registry().get(task_ref)
    except Exception:  # an unregistered task has no graded criteria known here
        return None


def _same_side(task: TaskSpec | None) -> Callable[[str, int, int], bool]:
    def same(criterion: str, a: int, b: int) -> bool:
        if task is None:
            return True
        return task.level_status(criterion, a) == task.level_status(criterion, b)

    return same


def _judge_all(
    items: Sequence[CalibrationItem], verdict_fn: VerdictFn, repeats: int
) -> dict[str, ItemResult]:
    prepare = getattr(verdict_fn, "prepare", None)
    if callable(prepare):
        prepare(items)
    results: dict[str, ItemResult] = {}
    for item in items:
        statuses: list[str | None] = []
        levels: list[int | None] = []
        errors: list[str] = []
        for r in range(repeats):
            answer = verdict_fn(item, r)
            status, error = _status(answer)
            statuses.append(status)
            levels.append(answer.level if isinstance(answer, Verdict) else None)
            if error:
                errors.append(error)
        graded = tuple(levels) if any(lv is not None for lv in levels) else ()
        results[item.item_id] = ItemResult(
            item.item_id, item.criterion, tuple(statuses), tuple(errors), graded
        )
    return results


def _items_to_run(
    calibration_set: CalibrationSet, split: SplitName, criteria: Sequence[str] | None
) -> tuple[list[CalibrationItem], list[CalibrationItem]]:
    """The split's items on ``criteria``, and those plus their base items, sorted by id."""
    wanted = [i for i in calibration_set.part(split) if criteria is None or i.criterion in criteria]
    if not wanted:
        raise CalibrationError(f"set {calibration_set.set_id}: no items in split {split!r}")
    to_run = {i.item_id: i for i in wanted}
    for item in wanted:
        if item.base_item_id and item.base_item_id not in to_run:
            to_run[item.base_item_id] = calibration_set.item(item.base_item_id)
    return wanted, [to_run[k] for k in sorted(to_run)]


@dataclass(frozen=True)
class _Calibration:
    """One calibration run's fixed inputs: which judge on which set and split, and how."""

    judge: str
    calibration_set: CalibrationSet
    profile_id: str
    profile_hash: str | None
    family: str
    split: SplitName
    repeats: int
    seed: int
    n_boot: int
    gate: GateConfig
    scales: Mapping[str, tuple[int, int]]
    """Graded criteria of the set's task → their scale (decided by the ordinal gate)."""
    same_side: Callable[[str, int, int], bool]
    """``(criterion, a, b)``: whether two levels meet the rubric's bounds alike."""
    ordinal: OrdinalThresholds

    @property
    def split_seed(self) -> int | None:
        """The seed of the stored split the items come from (None for ``all`` or no split)."""
        stored = self.calibration_set.split
        return None if stored is None or self.split == "all" else stored.seed

    def run_id(self, started: str) -> str:
        """A run id derived from what is calibrated, how, and when it started."""
        payload = {
            "profile": self.profile_id,
            "hash": self.profile_hash,
            "set": self.calibration_set.content_hash(),
            "split": self.split,
            "repeats": self.repeats,
            "seed": self.seed,
            "started": started,
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        return "cal-" + digest[:16]

    def scored(
        self, wanted: Sequence[CalibrationItem], results: Mapping[str, ItemResult]
    ) -> list[ScoredItem]:
        """Each wanted item with its reference label and the judge's statuses."""
        return [
            ScoredItem(
                **field_dict(i, "item_id", "criterion", "necessary", "style_tags", "relation"),
                base_item_id=i.base_item_id,
                reference=self.calibration_set.reference(i.item_id).status,
                statuses=results[i.item_id].statuses,
            )
            for i in wanted
        ]

    def human(self, wanted: Sequence[CalibrationItem], criterion: str | None) -> HumanAgreement:
        """Agreement between the annotators on the wanted items of one criterion (None: all)."""
        labels = [
            self.calibration_set.annotator_labels(i.item_id)
            for i in wanted
            if criterion is None or i.criterion == criterion
        ]
        return human_agreement(labels, seed=self.seed, n_boot=self.n_boot)

    def decide_criteria(
        self,
        wanted: Sequence[CalibrationItem],
        scored: Sequence[ScoredItem],
        base_verdicts: Mapping[str, str | None],
        run_id: str,
        decided_at: str,
        results: Mapping[str, ItemResult],
    ) -> tuple[dict[str, Metrics], list[GateDecision]]:
        """The metrics and the gate decision of every scored criterion, in criterion order."""
        per_criterion: dict[str, Metrics] = {}
        decisions: list[GateDecision] = []
        for criterion in sorted({s.criterion for s in scored}):
            subset = [s for s in scored if s.criterion == criterion]
            metrics = compute_metrics(subset, base_verdicts, seed=self.seed, n_boot=self.n_boot)
            per_criterion[criterion] = metrics
            decisions.append(
                self._graded(
                    criterion,
                    wanted,
                    results,
                    decide(
                        profile_id=self.profile_id,
                        criterion=criterion,
                        task_family=self.family,
                        metrics=metrics,
                        config=self.gate,
                        set_id=self.calibration_set.set_id,
                        split_seed=self.split_seed,
                        decided_at=decided_at,
                        necessary=all(s.necessary for s in subset),
                        run_id=run_id,
                        context={
                            "human_agreement": self.human(wanted, criterion).to_dict(),
                            "label_provenance": self.calibration_set.label_provenance,
                        },
                        profile_hash=self.profile_hash,
                    ),
                )
            )
        return per_criterion, decisions

    def _graded(
        self,
        criterion: str,
        wanted: Sequence[CalibrationItem],
        results: Mapping[str, ItemResult],
        base: GateDecision,
    ) -> GateDecision:
        """``base`` re-decided by the ordinal gate when the criterion is graded."""
        scale = self.scales.get(criterion)
        if scale is None:
            return base
        pairs: list[tuple[int, int | None]] = []
        for item in wanted:
            ref = self.calibration_set.reference_level(item.item_id)
            if item.criterion != criterion or ref is None:
                continue
            given = [lv for lv in results[item.item_id].levels if lv is not None]
            pairs.append((ref, given[0] if given else None))
        metrics = ordinal_metrics(
            pairs,
            scale,
            lambda a, b: self.same_side(criterion, a, b),
            seed=self.seed,
            n_boot=self.n_boot,
        )
        return decide_graded(base=base, metrics=metrics, thresholds=self.ordinal)

    def record(
        self,
        started: str,
        wanted: Sequence[CalibrationItem],
        results: Mapping[str, ItemResult],
        abstained: tuple[str, ...],
        clock: Callable[[], str],
    ) -> CalibrationRun:
        """Score the judged items, decide the gate per criterion and build the stored run."""
        base_verdicts = {k: next((s for s in v.statuses if s), None) for k, v in results.items()}
        scored = self.scored(wanted, results)
        overall = compute_metrics(scored, base_verdicts, seed=self.seed, n_boot=self.n_boot)
        run_id = self.run_id(started)
        per_criterion, decisions = self.decide_criteria(
            wanted, scored, base_verdicts, run_id, clock(), results
        )
        human = self.human(wanted, None)
        return CalibrationRun(
            **field_dict(self, "judge", "profile_id", "profile_hash", "split", "split_seed"),
            **field_dict(self, "repeats", "seed", "n_boot"),
            run_id=run_id,
            set_id=self.calibration_set.set_id,
            set_hash=self.calibration_set.content_hash(),
            task_ref=self.calibration_set.task_ref,
            task_family=self.family,
            started_at=started,
            finished_at=clock(),
            results=tuple(results[k] for k in sorted(results)),
            metrics=overall,
            per_criterion=per_criterion,
            human=human,
            decisions=tuple(decisions),
            gate=self.gate.to_dict(),
            abstained=abstained,
            label_provenance=self.calibration_set.label_provenance,
            disputed=self.disputed(wanted),
        )

    def disputed(self, wanted: Sequence[CalibrationItem]) -> tuple[dict[str, object], ...]:
        """The wanted items whose annotators disagree (no reference: out of the gate)."""
        cal_set = self.calibration_set
        return tuple(
            {
                "item_id": i.item_id,
                "criterion": i.criterion,
                "labels": dict(sorted(cal_set.annotator_labels(i.item_id).items())),
            }
            for i in wanted
            if cal_set.reference(i.item_id).state == "disputed"
        )


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
    task: TaskSpec | None = None,
    ordinal: OrdinalThresholds = DEFAULT_ORDINAL,
) -> CalibrationRun:
    """Judge every item of one split ``repeats`` times, compute the metrics, decide the gate.

    Graded criteria of ``task`` (default: the set's task when it is bundled) are decided by the
    ordinal gate (:mod:`judges.calibration.ordinal`) on the levels given and labelled.
    """
    if repeats < 1:
        raise CalibrationError("repeats must be >= 1")
    spec = task or _task(calibration_set.task_ref)
    calibration = _Calibration(
        judge=judge,
        calibration_set=calibration_set,
        profile_id=profile if isinstance(profile, str) else profile.id,
        profile_hash=None if isinstance(profile, str) else profile.content_hash(),
        family=task_family or _family(calibration_set.task_ref),
        split=split,
        repeats=repeats,
        seed=seed,
        n_boot=n_boot,
        gate=gate,
        scales={} if spec is None else {c.id: c.levels() for c in spec.criteria if c.graded},
        same_side=_same_side(spec),
        ordinal=ordinal,
    )
    started = clock()
    wanted, to_run = _items_to_run(calibration_set, split, criteria)
    results = _judge_all(to_run, verdict_fn, repeats)
    abstained = tuple(k for k, r in results.items() if r.errors == ("abstained",) * repeats)
    wanted = [i for i in wanted if i.item_id not in abstained]
    return calibration.record(started, wanted, results, abstained, clock)
