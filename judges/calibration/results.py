"""What a calibration run stores: the judge's answers per item and the run with its decisions.

Plain dataclasses with ``to_dict``/``from_dict``; :mod:`judges.calibration.runner` produces them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judges.calibration.agreement import HumanAgreement
from judges.calibration.gate import GateDecision
from judges.calibration.metrics import Metrics
from regua.records import fields_of


@dataclass(frozen=True)
class ItemResult:
    """The judge's answers on one item over the repeats (None status = judge error)."""

    item_id: str
    criterion: str
    statuses: tuple[str | None, ...]
    errors: tuple[str, ...] = ()
    levels: tuple[int | None, ...] = ()
    """The levels given on a graded criterion, per repeat (empty: a pass/fail criterion)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``levels`` only on a graded criterion)."""
        out: dict[str, Any] = {
            "item_id": self.item_id,
            "criterion": self.criterion,
            "statuses": list(self.statuses),
            "errors": list(self.errors),
        }
        if self.levels:
            out["levels"] = list(self.levels)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemResult:
        """Inverse of :meth:`to_dict`."""
        return cls(
            item_id=str(data["item_id"]),
            criterion=str(data["criterion"]),
            statuses=tuple(None if s is None else str(s) for s in data["statuses"]),
            errors=tuple(str(e) for e in data.get("errors") or ()),
            levels=tuple(None if v is None else int(v) for v in data.get("levels") or ()),
        )


_TEXT_FIELDS = (
    "run_id judge profile_id set_id set_hash task_ref task_family split started_at finished_at"
)
"""The fields of a stored calibration run that are text (read back with ``str``)."""


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
    label_provenance: str = "human"
    """``human`` or ``project`` (labels written by regua's authors: never called human)."""
    disputed: tuple[Mapping[str, Any], ...] = ()
    """Items the annotators disagree on (kept out of the gate): id, criterion, labels."""

    def decision(self, criterion: str) -> GateDecision:
        """The gate decision for one criterion (KeyError when not calibrated)."""
        for d in self.decisions:
            if d.criterion == criterion:
                return d
        raise KeyError(criterion)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (what the service stores)."""
        return {
            **fields_of(self),
            "results": [r.to_dict() for r in self.results],
            "metrics": self.metrics.to_dict(),
            "per_criterion": {k: m.to_dict() for k, m in self.per_criterion.items()},
            "human": self.human.to_dict(),
            "decisions": [d.to_dict() for d in self.decisions],
            "gate": dict(self.gate),
            "abstained": list(self.abstained),
            "disputed": [dict(d) for d in self.disputed],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationRun:
        """Inverse of :meth:`to_dict`."""
        seed = data.get("split_seed")
        read: dict[str, Any] = {name: str(data[name]) for name in _TEXT_FIELDS.split()}
        read.update({name: int(data[name]) for name in ("repeats", "seed", "n_boot")})
        return cls(
            **read,
            profile_hash=data.get("profile_hash"),
            split_seed=None if seed is None else int(seed),
            results=tuple(ItemResult.from_dict(r) for r in data["results"]),
            metrics=Metrics.from_dict(data["metrics"]),
            per_criterion={k: Metrics.from_dict(v) for k, v in data["per_criterion"].items()},
            human=HumanAgreement.from_dict(data["human"]),
            decisions=tuple(GateDecision.from_dict(d) for d in data["decisions"]),
            gate=dict(data.get("gate") or {}),
            abstained=tuple(str(x) for x in data.get("abstained") or ()),
            label_provenance=str(data.get("label_provenance") or "human"),
            disputed=tuple(dict(d) for d in data.get("disputed") or ()),
        )
