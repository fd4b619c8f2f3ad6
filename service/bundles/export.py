"""Export runs of a task with their evidence as a bundle (``regua export``, ``GET /v1/exports``).

A bundle holds the runs of the asked task versions (optionally of some models) that the caller
may read, with every evaluation, verdict, judge failure, criterion outcome, review item and
label, the check and render records, every artifact those rows reference (bytes included), and
the gate decisions of the tasks' families. A reserved task that is not retired is exported
only for an admin who asks for it (``include_reserved``); otherwise it is refused, never
silently left out. Non-admins get reviewer names as pseudonyms.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import inspect, select, text
from sqlalchemy.orm import Session

import regua
from regua.errors import NotFoundError, PermissionDeniedError
from service.access.pools import hidden_refs, runs_readable_by, sees_hidden
from service.access.tokens import Principal
from service.bundles.archive import mode_for, pack
from service.bundles.tables import GATE, TABLES, TableSpec, encode_row, table_of
from service.storage import Artifact, Run, TaskRow
from service.storage.blobs import BlobStore


def _refs(session: Session, tasks: Sequence[str]) -> list[str]:
    """Stored task versions named by ``tasks`` (``ID@VERSION`` or ``ID``: every version)."""
    stored = list(session.scalars(select(TaskRow.ref)))
    out = sorted({r for r in stored for t in tasks if r == t or r.split("@")[0] == t})
    if not out:
        raise NotFoundError(f"no stored runs of {', '.join(tasks)}")
    return out


def _check_reserved(
    session: Session, principal: Principal, refs: Sequence[str], include_reserved: bool
) -> None:
    """Refuse hidden tasks unless an admin asked for them."""
    hidden = sorted(set(refs) & hidden_refs(session))
    if not hidden:
        return
    if not sees_hidden(principal.role):
        raise PermissionDeniedError(f"{', '.join(hidden)}: reserved; only an admin exports it")
    if not include_reserved:
        raise PermissionDeniedError(
            f"{', '.join(hidden)} is reserved: its prompt and drawings leave only with "
            "--include-reserved (include_reserved=true)"
        )


def _rows(session: Session, spec: TableSpec, keys: Sequence[Any]) -> list[Any]:
    column = getattr(spec.model, spec.key)
    pk = next(iter(table_of(spec.model).primary_key.columns))
    query = select(spec.model).where(column.in_(list(keys))).order_by(pk)
    return list(session.scalars(query))


def collect(
    session: Session,
    principal: Principal,
    tasks: Sequence[str],
    models: Sequence[str] = (),
    include_reserved: bool = False,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The manifest's versions and the rows of every bundled table."""
    principal.require("submitter")
    refs = _refs(session, tasks)
    _check_reserved(session, principal, refs, include_reserved)
    query = select(Run.id).where(Run.task_ref.in_(refs), runs_readable_by(principal, session))
    if models:
        query = query.where(Run.model_label.in_(list(models)))
    run_ids = list(session.scalars(query.order_by(Run.id)))
    tables: dict[str, list[dict[str, Any]]] = {}
    evaluations: list[int] = []
    items: list[str] = []
    for spec in TABLES:
        keys: Sequence[Any] = {"ref": refs, "id": run_ids, "run_id": run_ids}.get(spec.key, [])
        if spec.key == "evaluation_id":
            keys = evaluations
        elif spec.key == "item_id":
            keys = items
        rows = _rows(session, spec, keys)
        tables[spec.name] = [encode_row(r) for r in rows]
        if spec.name == "evaluations":
            evaluations = [r.id for r in rows]
        elif spec.name == "review_items":
            items = [r.id for r in rows]
    if not principal.is_admin:
        for row in tables["reviews"]:
            row["reviewer_name"] = f"reviewer-{row['reviewer_id']}"
    families = sorted({str((r["spec"] or {}).get("family") or "") for r in tables["tasks"]})
    tables[GATE.name] = [encode_row(r) for r in _rows(session, GATE, families)]
    meta = {
        "created_at": datetime.now(UTC).isoformat(),
        "regua_version": regua.__version__,
        "schema_revision": _schema_revision(session),
        "task_versions": {r["ref"]: r["content_hash"] for r in tables["tasks"]},
        "runs": run_ids,
        "models": sorted(models),
        "include_reserved": include_reserved,
    }
    return meta, tables


def _schema_revision(session: Session) -> str | None:
    """The database's migration head (None when the table is absent)."""
    if not inspect(session.get_bind()).has_table("alembic_version"):
        return None
    found = session.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if found is None else str(found)


def artifact_bytes(session: Session, blobs: BlobStore, run_ids: Sequence[str]) -> dict[str, bytes]:
    """The bytes of every artifact of these runs, by sha256."""
    shas = session.scalars(select(Artifact.sha256).where(Artifact.run_id.in_(list(run_ids))))
    return {sha: blobs.get(sha) for sha in sorted(set(shas))}


def export_bundle(
    session: Session,
    blobs: BlobStore,
    principal: Principal,
    tasks: Sequence[str],
    *,
    models: Sequence[str] = (),
    include_reserved: bool = False,
    name: str = "bundle.tar.gz",
) -> tuple[bytes, dict[str, Any]]:
    """The bundle's bytes (compressed as ``name`` says) and its row counts."""
    mode = mode_for(name)
    meta, tables = collect(session, principal, tasks, models, include_reserved)
    data = pack(meta, tables, artifact_bytes(session, blobs, meta["runs"]), mode)
    return data, {"runs": len(meta["runs"]), "rows": {k: len(v) for k, v in tables.items()}}
