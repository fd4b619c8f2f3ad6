"""Calibration that cannot be undone by accident: no silent demotion by a smaller set.

A new decision that would take a judge from ``trusted`` to ``not_trusted`` or ``inconclusive``
on a criterion is refused when it was measured on fewer labelled items than the decision that
earned the trust (a one-drawing upload never overrules 297 bundled items by mistake). Asked to
replace (``--replace``, ``"replace": true``) it is stored, and the decision says what it replaced.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sqlalchemy.orm import Session

from judges.calibration import CalibrationRun, GateDecision
from regua.errors import GateDemotionError
from service.evaluation.gate import latest_decisions


@dataclass(frozen=True)
class Demotion:
    """A trusted decision that a new, smaller measurement would overturn."""

    current: GateDecision
    new: GateDecision

    def describe(self) -> str:
        """One sentence naming the judge, the criterion and both sets with their sizes."""
        c, n = self.current, self.new
        return (
            f"{n.profile_id} on {n.criterion} (family {n.task_family}): trusted since "
            f"{c.decided_at} on set {c.set_id!r} ({_items(c.set_size)}), would become "
            f"{n.status} on set {n.set_id!r} ({_items(n.set_size)})"
        )


def _items(n: int | None) -> str:
    return "size unknown" if n is None else f"{n} labelled item{'s' if n != 1 else ''}"


def _same_judge(current: GateDecision, new: GateDecision) -> bool:
    """The decisions are about one judge (same id; same content when both hashes are known)."""
    if current.profile_hash is None or new.profile_hash is None:
        return True
    return current.profile_hash == new.profile_hash


def demotions(s: Session, run: CalibrationRun) -> list[Demotion]:
    """The run's decisions that would demote a trusted judge on a smaller set."""
    latest = latest_decisions(s)
    found = []
    for new in run.decisions:
        current = latest.get((new.profile_id, new.criterion, new.task_family))
        if current is None or current.status != "trusted" or new.status == "trusted":
            continue
        if not _same_judge(current, new):
            continue
        if (current.set_size or 0) > (new.set_size or 0):
            found.append(Demotion(current, new))
    return found


def refusal(found: list[Demotion]) -> GateDemotionError:
    """The error that refuses a run which would demote (nothing of it is stored)."""
    lines = "; ".join(d.describe() for d in found)
    return GateDemotionError(
        f"calibration not stored: a smaller set would demote a trusted judge ({lines}). "
        "Measure on at least as many labelled items, or give --replace (HTTP: "
        '"replace": true) to store it anyway'
    )


def guarded(s: Session, run: CalibrationRun, *, replace: bool) -> CalibrationRun:
    """The run to store: refused (:class:`GateDemotionError`) when it would demote by accident.

    With ``replace`` each demoting decision keeps, as its last reason, the trusted decision it
    replaced (set and size), so the gate's history says why the trust went.
    """
    found = demotions(s, run)
    if not found:
        return run
    if not replace:
        raise refusal(found)
    noted = {
        d.new.criterion: (
            f"replaces (--replace) the trusted decision of {d.current.decided_at} on set "
            f"{d.current.set_id!r} ({_items(d.current.set_size)})"
        )
        for d in found
    }
    decisions = tuple(
        dataclasses.replace(d, reasons=(*d.reasons, noted[d.criterion]))
        if d.criterion in noted
        else d
        for d in run.decisions
    )
    return dataclasses.replace(run, decisions=decisions)
