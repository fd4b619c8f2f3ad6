"""Who judged an experiment, with what, and what judging cost: read from its runs' records.

* Voting identities: every judge identity (profile id with its model, version and content hash,
  e.g. ``vision-llm-openai+seeing-1@1``) that gave a verdict in a case's current evaluation,
  with its gate decision per criterion (the latest stored when the evaluation was written:
  trusted, untrusted, not calibrated; static rules and people need none).
* Machinery: the renderer versions (the render stage's version: render profile and renderer
  code) and the browser versions (Chromium, from the render records) the runs were drawn with.
* Judging cost of each evaluation (:mod:`service.reports.costs`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.experiments.store import CaseView
from service.reports.costs import judging_costs
from service.reports.votes import gate_word
from service.storage import (
    Database,
    Evaluation,
    GateDecisionRow,
    RenderRecord,
    StageRecord,
    TaskRow,
    VerdictRow,
)

Identity = tuple[str, str | None]
"""(voting id, content hash)."""


def identity_tag(ident: Identity) -> str:
    """``ID#HASH12`` (``#unknown`` when the hash is not recorded), as history keys use it."""
    return f"{ident[0]}#{(ident[1] or 'unknown')[:12]}"


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _seats(panel: Any) -> dict[str, tuple[str | None, str | None]]:
    """Voting id → (content hash, kind) of each seated judge of a stored panel record."""
    seats = panel.get("judges") if isinstance(panel, dict) else None
    return {
        str(j["id"]): (j.get("content_hash"), j.get("kind"))
        for j in seats or []
        if isinstance(j, dict) and "id" in j
    }


def _families(s: Session, evs: Sequence[Evaluation]) -> dict[int, str]:
    """Evaluation id → the task family its gate decisions are looked up under."""
    refs = {ev.task_ref for ev in evs}
    query = select(TaskRow.ref, TaskRow.spec).where(TaskRow.ref.in_(refs))
    specs: dict[str, Any] = {str(ref): spec for ref, spec in s.execute(query)}
    out: dict[int, str] = {}
    for ev in evs:
        family = (ev.judge_panel or {}).get("family")
        if not family or family == "*":
            family = (specs.get(ev.task_ref) or {}).get("family")
        out[ev.id] = str(family or "")
    return out


class _Gates:
    """The stored gate decisions of some identities, looked up as they stood at a time."""

    def __init__(self, s: Session, ids: Iterable[str]) -> None:
        self.rows: dict[tuple[str, str, str], list[GateDecisionRow]] = defaultdict(list)
        query = select(GateDecisionRow).where(GateDecisionRow.profile_id.in_(sorted(set(ids))))
        for row in s.scalars(query):
            self.rows[(row.profile_id, row.criterion, row.task_family)].append(row)
        for rows in self.rows.values():
            rows.sort(key=lambda r: (r.decided_at, r.id))

    def latest(
        self, pid: str, criterion: str, family: str, then: datetime
    ) -> GateDecisionRow | None:
        found = [
            r for r in self.rows.get((pid, criterion, family), []) if _aware(r.created_at) <= then
        ]
        return found[-1] if found else None


def _identities(
    s: Session, by_eval: Mapping[int, set[str]]
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Every voting identity with its votes and gate decisions, and each arm's identity tags."""
    evs = list(s.scalars(select(Evaluation).where(Evaluation.id.in_(list(by_eval)))))
    families = _families(s, evs)
    seats = {ev.id: _seats(ev.judge_panel) for ev in evs}
    when = {ev.id: _aware(ev.created_at) for ev in evs}
    verdicts = s.execute(
        select(VerdictRow.evaluation_id, VerdictRow.judge_profile_id, VerdictRow.criterion).where(
            VerdictRow.evaluation_id.in_(list(by_eval))
        )
    ).all()
    gates = _Gates(s, {pid for _, pid, _ in verdicts})
    entries: dict[Identity, dict[str, Any]] = {}
    states: dict[Identity, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    by_arm: dict[str, set[str]] = defaultdict(set)
    for ev_id, pid, criterion in verdicts:
        content_hash, kind = seats.get(ev_id, {}).get(pid, (None, None))
        if kind is None and pid.startswith("human"):
            kind = "human"
        ident = (pid, content_hash)
        entry = entries.setdefault(
            ident,
            {"id": pid, "content_hash": content_hash, "kind": kind, "votes": 0, "arms": set()},
        )
        entry["votes"] += 1
        entry["arms"] |= by_eval[ev_id]
        latest = gates.latest(pid, criterion, families.get(ev_id, ""), when[ev_id])
        states[ident][criterion].add(gate_word(kind, content_hash, latest))
        for arm in by_eval[ev_id]:
            by_arm[arm].add(identity_tag(ident))
    out = []
    for ident in sorted(entries, key=lambda i: (i[0], i[1] or "")):
        entry = entries[ident]
        per_criterion = {c: ", ".join(sorted(v)) for c, v in sorted(states[ident].items())}
        words = sorted({w for v in states[ident].values() for w in v})
        out.append(
            entry
            | {
                "identity": identity_tag(ident),
                "arms": sorted(entry["arms"]),
                "gate": ", ".join(words),
                "gate_by_criterion": per_criterion,
            }
        )
    return out, {arm: sorted(tags) for arm, tags in by_arm.items()}


def _machinery(s: Session, run_ids: Sequence[str]) -> dict[str, list[str]]:
    """The renderer and browser versions the runs were rendered with (sorted, distinct)."""
    renderers = s.scalars(
        select(StageRecord.version)
        .where(StageRecord.run_id.in_(run_ids), StageRecord.stage == "render")
        .distinct()
    ).all()
    browsers = s.scalars(
        select(RenderRecord.browser_version)
        .where(RenderRecord.run_id.in_(run_ids), RenderRecord.browser_version.is_not(None))
        .distinct()
    ).all()
    return {
        "renderer_versions": sorted(str(v) for v in renderers),
        "browser_versions": sorted(str(v) for v in browsers),
    }


def judged_by(db: Database, cases: Sequence[CaseView]) -> dict[str, Any]:
    """``voting``, ``voting_by_arm``, ``machinery`` and ``costs`` of an experiment's cases."""
    by_eval: dict[int, set[str]] = defaultdict(set)
    for c in cases:
        if c.evaluation_id is not None:
            by_eval[c.evaluation_id].add(c.arm)
    with db.read() as s:
        voting, by_arm = _identities(s, by_eval) if by_eval else ([], {})
        machinery = _machinery(s, sorted({c.run_id for c in cases}))
        costs = {ev: cost.usd for ev, cost in judging_costs(s, by_eval).items()}
    return {"voting": voting, "voting_by_arm": by_arm, "machinery": machinery, "costs": costs}
