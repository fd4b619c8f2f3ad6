"""Each vote of an evaluation with the reason it did or did not count (the run view's votes).

A vote counts when its judge is eligible: static rules and people always are; any other judge
only by a gate decision for the very id and content hash it voted under, on that criterion of
that task family. On a criterion that asks for something recognisable, a pass counts only from
a recognising judge (the jury's ``note`` on the vote says so). Beside each stored vote the view
shows the judge's identity (id, hash, kind) and the gate decision that was in force when the
evaluation was written (the latest one stored by then), or why there was none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from regua.views.runs import GateView, VoteView
from service.storage import Evaluation, GateDecisionRow, TaskRow, iso

MOCK_GATE_PREFIX = "mock-"
"""Gate ids of declared decisions (the demo's mock judge), never a calibration's."""
ALWAYS = {"static": "static rules need no calibration", "human": "people decide by review"}


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _family(s: Session, ev: Evaluation, panel: judges.PanelRecord) -> str:
    if panel.family and panel.family != "*":
        return panel.family
    spec = s.scalar(select(TaskRow.spec).where(TaskRow.ref == ev.task_ref)) or {}
    return str(spec.get("family") or "")


def _decisions_then(
    s: Session, ev: Evaluation, ids: Iterable[str], family: str
) -> dict[tuple[str, str], list[GateDecisionRow]]:
    """(profile id, criterion) → the decisions stored before the evaluation, oldest first."""
    rows = s.scalars(
        select(GateDecisionRow)
        .where(GateDecisionRow.profile_id.in_(sorted(set(ids))))
        .where(GateDecisionRow.task_family == family)
        .order_by(GateDecisionRow.id)
    ).all()
    then = _aware(ev.created_at)
    out: dict[tuple[str, str], list[GateDecisionRow]] = {}
    for row in sorted(
        (r for r in rows if _aware(r.created_at) <= then), key=lambda r: (r.decided_at, r.id)
    ):
        out.setdefault((row.profile_id, row.criterion), []).append(row)
    return out


def _gate(row: GateDecisionRow) -> GateView:
    return GateView.of(
        row,
        stored_at=iso(row.created_at),
        reasons=[str(r) for r in row.reasons or []],
    )


def _basis(
    kind: str | None, seat: judges.SeatedJudge | None, decisions: Sequence[GateDecisionRow]
) -> tuple[str, GateView | None]:
    """Why the vote counted or not, and the gate decision behind it."""
    if kind in ALWAYS:
        return ALWAYS[kind], None
    if not decisions:
        return "never calibrated for this criterion and family: no vote", None
    latest = decisions[-1]
    if seat is not None and latest.profile_hash not in (None, seat.content_hash):
        return "calibrated with other content (another profile hash): no vote", _gate(latest)
    if latest.passed and str(latest.gate_id).startswith(MOCK_GATE_PREFIX):
        return "MOCK judge: trusted by the demo's declaration, not by a calibration", _gate(latest)
    if latest.passed:
        return "the gate passed its calibration", _gate(latest)
    return "the gate rejected its calibration: no vote", _gate(latest)


GATE_WORDS = ("trusted", "untrusted", "not calibrated", "not needed")
"""A voting identity's gate decision in one word, as records and history show it."""


def gate_word(kind: str | None, content_hash: str | None, latest: GateDecisionRow | None) -> str:
    """The gate decision in force for a vote, in the words of :data:`GATE_WORDS`.

    The same rules as the run view's basis: static rules and people need none; a decision for
    other content (another profile hash) is no calibration of this identity; a declared MOCK
    decision counts as trusted (the run view says MOCK).
    """
    if kind in ALWAYS:
        return "not needed"
    if latest is None:
        return "not calibrated"
    if content_hash is not None and latest.profile_hash not in (None, content_hash):
        return "not calibrated"
    return "trusted" if latest.passed else "untrusted"


def vote_views(
    s: Session, ev: Evaluation, votes: Mapping[str, Sequence[Any]]
) -> dict[str, list[VoteView]]:
    """Criterion → its stored votes, each with the judge's identity, eligibility and gate decision.

    ``votes`` are the stored vote objects (``judges.Vote.to_dict()``); anything else is skipped.
    """
    panel = judges.PanelRecord.from_dict(ev.judge_panel or {})
    seats = {j.id: j for j in panel.judges}
    family = _family(s, ev, panel)
    stored = {c: [v for v in vs if isinstance(v, dict)] for c, vs in votes.items()}
    ids = {str(v["judge_profile_id"]) for vs in stored.values() for v in vs}
    decisions = _decisions_then(s, ev, ids, family)
    out: dict[str, list[VoteView]] = {}
    for criterion, items in stored.items():
        lines = []
        for vote in items:
            pid = str(vote["judge_profile_id"])
            seat = seats.get(pid)
            kind = seat.kind if seat else ("human" if pid.startswith("human") else None)
            basis, gate = _basis(kind, seat, decisions.get((pid, criterion), []))
            note = vote.get("note")
            if note:  # the jury's own reason not to count it (recognition)
                basis = f"{note} ({basis})"
            lines.append(
                VoteView(
                    judge_profile_id=pid,
                    status=vote["status"],
                    eligible=bool(vote.get("eligible")),
                    note=note,
                    kind=kind,
                    profile_hash=seat.content_hash if seat else None,
                    basis=basis,
                    gate=gate,
                    level=vote.get("level"),
                )
            )
        out[criterion] = lines
    return out
