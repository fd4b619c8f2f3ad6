"""Import a bundle into this installation (``regua import bundle FILE``).

Order: the bundle is read and verified whole (every file's sha256, every artifact against its
address, every artifact row's bytes present); its task versions are checked against the ones
registered here (a ref registered with other content refuses the bundle, nothing stored); the
task versions unknown here are registered; the artifact bytes go to the blob store (content-
addressed: storing twice is a no-op); then every row is written in one transaction with new
integer ids. A run already stored here is left as it is with all its rows, so importing the same
bundle twice stores nothing the second time. Review labels keep their reviewer's name under an
imported, revoked token per reviewer (no one can log in with it).
"""

from __future__ import annotations

import hashlib
import secrets
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import ArtifactIntegrityError, ConfigurationError, TaskIntegrityError
from service.bundles.archive import Contents
from service.bundles.tables import (
    DROPPED_REFS,
    GATE,
    KEPT_KEYS,
    LOCAL_RUN_FIELDS,
    RUN_POINTERS,
    TABLES,
    TableSpec,
    decode_row,
    foreign_keys,
    integer_key,
    remap_detail,
)
from service.storage import ApiToken, Database, GateDecisionRow, Run, TaskRow, utcnow
from service.storage.blobs import BlobStore
from service.tasks_store import StoredTaskRegistry, register_task
from tasks import TaskRegistry, TaskSpec

GATE_KEY = ("profile_id", "profile_hash", "criterion", "task_family", "gate_id", "decided_at")


@dataclass
class ImportResult:
    """What an import stored: new runs, runs already here, rows and artifact bytes written."""

    runs: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    artifacts_stored: int = 0
    tasks_registered: list[str] = field(default_factory=list)


def verify_rows(contents: Contents) -> None:
    """Check the rows before anything is stored (schema, artifact bytes, task hashes)."""
    for table in (*TABLES, GATE):
        for row in contents.tables.get(table.name, []):
            decode_row(table, row)
    for row in contents.tables.get("artifacts", []):
        if row["sha256"] not in contents.artifacts:
            raise ArtifactIntegrityError(f"artifact {row['sha256']} is referenced, not bundled")
    for row in contents.tables.get("tasks", []):
        spec = TaskSpec.model_validate(row["spec"])
        if spec.content_hash() != row["content_hash"] or spec.ref != row["ref"]:
            raise ArtifactIntegrityError(f"task {row['ref']} does not match its content hash")


def check_tasks(registry: TaskRegistry, contents: Contents) -> list[str]:
    """Refuse conflicting task versions; register unknown ones. Returns the refs registered."""
    if not isinstance(registry, StoredTaskRegistry):
        raise ConfigurationError("importing a bundle needs the service's task store")
    specs = [TaskSpec.model_validate(r["spec"]) for r in contents.tables.get("tasks", [])]
    for spec in specs:
        known = registry.known_hash(spec.ref)
        if known is not None and known != spec.content_hash():
            raise TaskIntegrityError(
                f"{spec.ref} is registered here with other content ({known[:12]}); the bundle "
                f"has {spec.content_hash()[:12]}: nothing imported"
            )
    with registry.db.read() as s:
        for spec in specs:
            used = s.scalar(select(TaskRow.content_hash).where(TaskRow.ref == spec.ref))
            if used is not None and used != spec.content_hash():
                raise TaskIntegrityError(f"{spec.ref}: runs here use other content; refused")
    added = []
    for spec in specs:
        if registry.known_hash(spec.ref) is None:
            register_task(registry, spec, "bundle")
            added.append(spec.ref)
    return added


class _Writer:
    """Rows of one import, written with new ids (see the module)."""

    def __init__(self, session: Session, contents: Contents) -> None:
        self.s = session
        self.contents = contents
        self.ids: dict[str, dict[Any, Any]] = defaultdict(dict)
        self.result = ImportResult()
        self.new_runs: set[str] = set()
        self.new_items: set[str] = set()
        self.pointers: dict[str, dict[str, Any]] = {}

    def tasks(self) -> None:
        for row in self.contents.tables.get("tasks", []):
            found = self.s.scalar(select(TaskRow).where(TaskRow.ref == row["ref"]))
            if found is None:
                values = decode_row(TABLES[0], row)
                values.pop("id")
                found = TaskRow(**values)
                self.s.add(found)
                self.s.flush()
            self.ids["tasks"][row["id"]] = found.id

    def reviewer(self, old: int, rows: list[dict[str, Any]]) -> int:
        """The imported (revoked) token standing for reviewer ``old`` of the source."""
        if old not in self.ids["api_tokens"]:
            name = next((r["reviewer_name"] for r in rows if r["reviewer_id"] == old), "")
            token = ApiToken(
                name=f"imported:{name}"[:200],
                role="reviewer",
                token_hash=hashlib.sha256(secrets.token_bytes(32)).hexdigest(),
                prefix="imported",
                revoked_at=utcnow(),
            )
            self.s.add(token)
            self.s.flush()
            self.ids["api_tokens"][old] = token.id
        return int(self.ids["api_tokens"][old])

    def keep(self, spec: TableSpec, row: Mapping[str, Any]) -> bool:
        """Whether a bundled row belongs to a run this import adds."""
        if spec.name == "runs":
            return row["id"] in self.new_runs
        if spec.key == "run_id":
            return row["run_id"] in self.new_runs
        if spec.key == "evaluation_id":
            return row["evaluation_id"] in self.ids["evaluations"]
        return row["item_id"] in self.new_items

    def table(self, spec: TableSpec) -> None:
        rows = self.contents.tables.get(spec.name, [])
        fks = foreign_keys(spec)
        count = 0
        for row in rows:
            if not self.keep(spec, row):
                continue
            values = decode_row(spec, row)
            for col, target in fks.items():
                values[col] = self._ref(target, values.get(col), rows, spec)
            if spec.name == "stage_records":
                values["detail"] = remap_detail(values.get("detail"), self.ids["artifacts"])
            if spec.name == "runs":
                values = self._run(values)
            old = values.pop("id") if integer_key(spec) else None
            obj = spec.model(**values)
            self.s.add(obj)
            self.s.flush()
            if old is not None:
                self.ids[spec.name][old] = obj.id  # type: ignore[attr-defined]
            if spec.name == "review_items":
                self.new_items.add(row["id"])
            count += 1
        self.result.rows[spec.name] = count

    def _ref(self, target: str, value: Any, rows: list[dict[str, Any]], spec: TableSpec) -> Any:
        if value is None or target in KEPT_KEYS:
            return value
        if target in DROPPED_REFS:
            return None
        if target == "api_tokens":
            return self.reviewer(value, rows) if spec.name == "reviews" else None
        return self.ids[target][value]

    def _run(self, values: dict[str, Any]) -> dict[str, Any]:
        for name in LOCAL_RUN_FIELDS:
            values[name] = 0 if name == "claims" else None
        values["submitted_by"] = None
        self.pointers[values["id"]] = {k: values.pop(k) for k in RUN_POINTERS}
        return values

    def finish_runs(self) -> None:
        """Point each new run at its raw artifact and current evaluation (new ids)."""
        for run_id, old in self.pointers.items():
            run = self.s.get(Run, run_id)
            assert run is not None
            for col, table in RUN_POINTERS.items():
                value = old[col]
                setattr(run, col, None if value is None else self.ids[table][value])

    def gate(self) -> None:
        existing = {
            tuple(getattr(g, k) for k in GATE_KEY) for g in self.s.scalars(select(GateDecisionRow))
        }
        count = 0
        for row in self.contents.tables.get(GATE.name, []):
            values = decode_row(GATE, row)
            if tuple(values.get(k) for k in GATE_KEY) in existing:
                continue
            values.pop("id")
            values["calibration_run_id"] = None
            self.s.add(GateDecisionRow(**values))
            count += 1
        self.result.rows[GATE.name] = count


def restore(
    db: Database, blobs: BlobStore, registry: TaskRegistry, contents: Contents
) -> ImportResult:
    """Import verified ``contents`` (see the module for the order and what is refused)."""
    verify_rows(contents)
    registered = check_tasks(registry, contents)
    stored = 0
    for sha, data in contents.artifacts.items():
        if not blobs.exists(sha):
            blobs.put(data)
            stored += 1
    with db.write() as s:
        writer = _Writer(s, contents)
        bundled = [r["id"] for r in contents.tables.get("runs", [])]
        here = set(s.scalars(select(Run.id).where(Run.id.in_(bundled))))
        writer.new_runs = set(bundled) - here
        writer.tasks()
        for spec in TABLES[1:]:
            writer.table(spec)
        writer.finish_runs()
        writer.gate()
        result = writer.result
    result.runs = sorted(writer.new_runs)
    result.already = sorted(here)
    result.artifacts_stored = stored
    result.tasks_registered = registered
    return result
