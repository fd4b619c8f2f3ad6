"""A :class:`TaskRegistry` that also reads the task store, so every process sees added tasks.

The bundled specs are registered at start; rows of ``task_versions`` are read on a miss and
before every listing, only those newer than the last row read (one indexed query).
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import select

from regua.errors import TaskIntegrityError
from regua.storable import check_storable
from service.storage import Database, TaskVersionRow
from tasks import TaskRegistry, TaskSpec
from tasks.authoring import TASK_TEXT_MAX

log = logging.getLogger(__name__)


class StoredTaskRegistry(TaskRegistry):
    """The bundled task versions plus every version registered in the database."""

    def __init__(self, db: Database, base: TaskRegistry) -> None:
        """Start from ``base`` (the bundled specs) and read the store of ``db`` lazily."""
        super().__init__(base.all())
        self.db = db
        self.bundled = frozenset(base.refs())
        self._last_row = 0
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Read the rows registered since the last read (by any process)."""
        with self._lock:
            with self.db.read() as s:
                rows = s.execute(
                    select(TaskVersionRow.id, TaskVersionRow.spec, TaskVersionRow.content_hash)
                    .where(TaskVersionRow.id > self._last_row)
                    .order_by(TaskVersionRow.id)
                ).all()
            for row_id, doc, digest in rows:
                self._last_row = max(self._last_row, row_id)
                self._add_row(row_id, doc, digest)

    def _add_row(self, row_id: int, doc: object, digest: str) -> None:
        """Register one stored row; a row that no longer validates or conflicts is skipped.

        So is a row holding text that cannot be answered (a lone surrogate stored before such
        text was refused): listings skip it, and the log names it, instead of answering 500.
        """
        try:
            check_storable(doc, max_chars=TASK_TEXT_MAX)
            spec = TaskSpec.model_validate(doc)
            if spec.content_hash() != digest:
                raise TaskIntegrityError(f"{spec.ref}: stored hash {digest[:12]} does not match")
            super().register(spec)
        except (ValueError, TaskIntegrityError) as exc:
            log.error("task store row %s left out: %s", row_id, exc)

    def known_hash(self, ref: str) -> str | None:
        """The content hash registered for ``ref`` (bundled or stored), None when unknown."""
        if ref not in self._hashes:
            self.refresh()
        return self._hashes.get(ref)

    def get(self, ref: str) -> TaskSpec:
        """The task for ``ID@VERSION``, reading the store on a miss."""
        if ref not in self._specs:
            self.refresh()
        return super().get(ref)

    def refs(self) -> list[str]:
        """Every registered reference (bundled and stored), sorted."""
        self.refresh()
        return sorted(self._specs)

    def versions(self, task_id: str) -> list[TaskSpec]:
        """Every registered version of one task id, oldest first."""
        self.refresh()
        found = [s for s in list(self._specs.values()) if s.id == task_id]
        return sorted(found, key=lambda s: s.version)
