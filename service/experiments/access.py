"""Who reads a stored experiment: its creator (or an admin), and only while it shows no hidden task.

Another token's experiment answers exactly like an unknown one (404), so ids of other tokens'
experiments cannot be probed. An experiment over a hidden (reserved) task is read by admins
only, whoever created it: its report carries prompt hashes, families and runs of that task.
"""

from __future__ import annotations

from collections.abc import Iterable

from regua.errors import NotFoundError
from service.access.pools import hidden_refs, sees_hidden
from service.access.tokens import Principal
from service.experiments.plan import Plan
from service.experiments.store import get_experiment, missing_experiment, plan_of, windows_of
from service.storage import Database, ExperimentRow


def plan_refs(plan: Plan) -> set[str]:
    """Every task version the plan's arms ask for."""
    return {ref for arm in plan.arms for ref in arm.refs.values()}


def _readable(
    db: Database, found: Iterable[ExperimentRow], caller: Principal
) -> list[ExperimentRow]:
    rows = list(found)
    if sees_hidden(caller.role):
        return rows
    with db.read() as s:
        hidden = hidden_refs(s)
    return [
        r for r in rows if r.created_by == caller.token_id and not plan_refs(plan_of(r)) & hidden
    ]


def readable_experiment(db: Database, ident: str, caller: Principal) -> ExperimentRow:
    """The stored experiment ``ident`` when ``caller`` may read it; else the unknown id's 404."""
    caller.require("submitter")
    found = _readable(db, [get_experiment(db, ident)], caller)
    if not found:
        raise missing_experiment(ident)
    return found[0]


def readable_windows(db: Database, name: str, caller: Principal) -> list[ExperimentRow]:
    """The windows of experiment ``name`` that ``caller`` may read (404 when there is none)."""
    caller.require("submitter")
    rows = _readable(db, windows_of(db, name), caller)
    if not rows:
        raise NotFoundError(f"no stored runs of experiment {name!r}")
    return rows
