"""The stored reliability gate: decisions in, eligibility out (what the jury reads).

A decision says whether a judge — by the id it votes under and its profile's content hash — may
vote on a criterion of a task family. The latest decision of each (id, criterion, family) wins; a
decision recorded with a hash only counts for a profile with that very hash (a decision stored
before hashes were recorded counts for the id). :class:`StoredEligibility` is the callable the
evaluator hands to :func:`judges.evaluate`, re-reading the table at most every ``ttl_s``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from judges.calibration import GateDecision
from judges.calibration.trust import Need, as_gate_status
from regua.records import field_dict
from service.storage import Database, GateDecisionRow

GateKey = tuple[str, str, str]
"""``(profile_id, criterion, family)``."""


_AS_STORED = (
    "profile_id",
    "profile_hash",
    "criterion",
    "task_family",
    "passed",
    "gate_id",
    "set_id",
    "split_seed",
    "set_size",
    "decided_at",
)
"""The fields a decision and its stored row hold alike (the others are converted)."""


def store_decisions(
    s: Session, decisions: Iterable[GateDecision], *, calibration_run_id: str | None = None
) -> list[GateDecisionRow]:
    """Insert gate decisions (a calibration run's, or imported from another installation)."""
    rows = [
        GateDecisionRow(
            **field_dict(d, *_AS_STORED),
            status=d.status,
            needs=[n.to_dict() for n in d.needs],
            reasons=list(d.reasons),
            metrics=dict(d.metrics),
            thresholds=dict(d.thresholds),
            calibration_run_id=calibration_run_id or d.run_id,
        )
        for d in decisions
    ]
    s.add_all(rows)
    s.flush()
    return rows


def decision_of(row: GateDecisionRow) -> GateDecision:
    """The pure decision record of a stored row."""
    return GateDecision(
        **field_dict(row, *_AS_STORED),
        status=as_gate_status(row.status, row.passed),
        needs=tuple(Need.from_dict(n) for n in row.needs or ()),
        reasons=tuple(str(r) for r in row.reasons),
        metrics=dict(row.metrics),
        thresholds=dict(row.thresholds),
        run_id=row.calibration_run_id,
    )


def stored_decisions(s: Session) -> list[GateDecision]:
    """Every stored decision, oldest first (insertion order breaks ties of ``decided_at``)."""
    rows = s.scalars(select(GateDecisionRow).order_by(GateDecisionRow.id)).all()
    return [decision_of(r) for r in rows]


def latest_decisions(s: Session) -> dict[GateKey, GateDecision]:
    """The latest decision per (profile id, criterion, family)."""
    latest: dict[GateKey, GateDecision] = {}
    for d in sorted(stored_decisions(s), key=lambda d: d.decided_at):
        latest[(d.profile_id, d.criterion, d.task_family)] = d
    return latest


class GateTable:
    """The jury's eligibility callable over a set of latest decisions."""

    def __init__(self, latest: Mapping[GateKey, GateDecision]) -> None:
        """Wrap the latest decision of each key."""
        self.latest = dict(latest)

    def decision(
        self, profile: judges.JudgeProfile, criterion: str, family: str
    ) -> GateDecision | None:
        """The decision behind a judge's vote on a criterion.

        None when the judge was never calibrated, or was calibrated as a profile with other
        content.
        """
        found = self.latest.get((profile.id, criterion, family))
        if found is None:
            return None
        if found.profile_hash is not None and found.profile_hash != profile.content_hash():
            return None
        return found

    def __call__(self, profile: judges.JudgeProfile, criterion: str, family: str) -> bool:
        """Whether the judge may vote on the criterion (only a ``trusted`` decision votes)."""
        found = self.decision(profile, criterion, family)
        return found is not None and found.passed and found.status == "trusted"

    def __len__(self) -> int:
        """How many keys have a decision."""
        return len(self.latest)


def gate_table(s: Session) -> GateTable:
    """The eligibility callable of the decisions stored now."""
    return GateTable(latest_decisions(s))


class StoredEligibility:
    """The gate table of one database, re-read when older than ``ttl_s`` seconds."""

    def __init__(self, db: Database, ttl_s: float = 5.0) -> None:
        """Read ``db`` lazily."""
        self.db = db
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._value = GateTable({})
        self._at = float("-inf")

    def current(self) -> GateTable:
        """The latest gate table (re-read when older than ``ttl_s``)."""
        with self._lock:
            if time.monotonic() - self._at >= self.ttl_s:
                with self.db.read() as s:
                    self._value = gate_table(s)
                self._at = time.monotonic()
            return self._value

    def refresh(self) -> None:
        """Forget the cached table (after a new calibration was stored)."""
        with self._lock:
            self._at = float("-inf")
