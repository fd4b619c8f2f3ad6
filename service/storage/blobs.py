"""The content-addressed artifact store (sha256) and the artifact records that link blobs to runs.

Blobs live behind :class:`BlobStore`; :class:`LocalBlobStore` keeps them in a folder
(``ab/cd/abcdef…``); :class:`~service.storage.s3_blobs.S3BlobStore` keeps them in an S3-compatible
store, and ``blob_registry.open_blob_store`` picks one from ``REGUA_ARTIFACTS_URL``. Blobs are
written before the database row that names them, so a crash between the two leaves at most an
unreferenced blob, never a row without its bytes. Nothing is overwritten and nothing is deleted.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import NotFoundError, StorageError
from regua.hashing import sha256_hex
from service.storage.files import PRIVATE_DIR, private_dir
from service.storage.models import Artifact

MEDIA_TYPES = {
    "raw": "text/plain; charset=utf-8",
    "extracted": "image/svg+xml",
    "normalized": "image/svg+xml",
    "check_report": "application/json",
    "frame": "image/png",
    "mask": "image/png",
    "render_log": "application/json",
    "judge_raw": "application/json",
    "review": "application/json",
    "measurements": "application/json",
}


_ADDRESS = re.compile(r"[0-9a-f]{64}")
"""A blob's address: a lowercase hex sha256."""


class BlobStore(Protocol):
    """Where artifact bytes live, addressed by their sha256."""

    def put(self, data: bytes) -> str:
        """Store ``data`` (idempotent) and return its sha256."""
        ...

    def get(self, sha256: str) -> bytes:
        """The bytes of ``sha256``; raises :class:`NotFoundError`."""
        ...

    def exists(self, sha256: str) -> bool:
        """Whether the blob is present."""
        ...

    def locate(self, sha256: str) -> str:
        """A human-readable location (path or URL) of the blob."""
        ...


class LocalBlobStore:
    """Blobs in a local folder, written atomically (temp file + rename), never overwritten.

    Folders are ``0700`` and files ``0600``: artifacts are readable by the service's user only.
    """

    def __init__(self, root: Path) -> None:
        """Keep blobs under ``root``, creating the folder (``0700``) when missing."""
        self.root = private_dir(root)
        self._root = str(self.root)

    def _file(self, sha256: str) -> str:
        """The blob's file path as a string (a read names hundreds: no Path objects)."""
        if _ADDRESS.fullmatch(sha256) is None:
            raise NotFoundError(f"not an artifact address: {sha256!r}")
        return f"{self._root}/{sha256[:2]}/{sha256[2:4]}/{sha256}"

    def _path(self, sha256: str) -> Path:
        return Path(self._file(sha256))

    def put(self, data: bytes) -> str:
        """Store ``data`` under its sha256 (no-op when already present)."""
        digest = sha256_hex(data)
        path = self._path(digest)
        if path.exists():
            return digest
        try:
            for folder in (path.parent.parent, path.parent):
                folder.mkdir(mode=PRIVATE_DIR, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # created 0600
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise StorageError(f"cannot write artifact {digest}: {exc}") from exc
        return digest

    def get(self, sha256: str) -> bytes:
        """The stored bytes."""
        try:
            with open(self._file(sha256), "rb") as handle:
                return handle.read()
        except FileNotFoundError as exc:
            raise NotFoundError(f"artifact {sha256} is not in the store") from exc

    def exists(self, sha256: str) -> bool:
        """Whether the blob file exists."""
        return self._path(sha256).exists()

    def locate(self, sha256: str) -> str:
        """The blob's file path."""
        return str(self._path(sha256))


@dataclass(frozen=True)
class NewArtifact:
    """What a stage wants stored: bytes plus their description."""

    kind: str
    data: bytes
    procedure_id: str
    procedure_version: str
    name: str = ""
    media_type: str | None = None
    parent_id: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def text(cls, kind: str, text: str, name: str, procedure: tuple[str, str]) -> NewArtifact:
        """A text stored as UTF-8, made by ``procedure`` (its id and version)."""
        return cls(
            kind=kind,
            data=text.encode("utf-8"),
            name=name,
            procedure_id=procedure[0],
            procedure_version=procedure[1],
        )


def record_artifact(
    session: Session,
    blobs: BlobStore,
    run_id: str | None,
    new: NewArtifact,
    *,
    fresh_run: bool = False,
) -> Artifact:
    """Write the blob, then add (or find, when already recorded) its row in ``session``.

    Idempotent per (run, kind, name, sha256): re-running a stage after a crash finds the row
    instead of duplicating it. ``fresh_run`` skips that lookup for a run created in this very
    transaction (nothing can exist yet).
    """
    (row,) = record_artifacts(session, blobs, run_id, [new], fresh_run=fresh_run)
    return row


ArtifactKey = tuple[str, str, str]
"""What identifies an artifact of a run: (kind, name, sha256)."""


def record_artifacts(
    session: Session,
    blobs: BlobStore,
    run_id: str | None,
    news: Sequence[NewArtifact],
    *,
    fresh_run: bool = False,
) -> list[Artifact]:
    """:func:`record_artifact` for many artifacts at once: their rows, in order.

    Writes every blob, looks the already recorded ones up in one query (unless ``fresh_run``)
    and inserts the others in one flush (one ``INSERT`` for rows of the same shape), so a
    stage's statements do not grow with its number of artifacts. A repeated key within
    ``news`` gets the same row.
    """
    keys: list[ArtifactKey] = [(n.kind, n.name, blobs.put(n.data)) for n in news]
    found = {} if fresh_run or not keys else _recorded(session, run_id, keys)
    added: list[Artifact] = []
    for new, key in zip(news, keys, strict=True):
        if key in found:
            continue
        row = Artifact(
            sha256=key[2],
            run_id=run_id,
            kind=new.kind,
            name=new.name,
            media_type=new.media_type or MEDIA_TYPES.get(new.kind, "application/octet-stream"),
            size=len(new.data),
            parent_id=new.parent_id,
            procedure_id=new.procedure_id,
            procedure_version=new.procedure_version,
            meta=new.meta or None,
        )
        found[key] = row
        added.append(row)
    if added:
        session.add_all(added)
        session.flush()
    return [found[key] for key in keys]


def _recorded(
    session: Session, run_id: str | None, keys: Sequence[ArtifactKey]
) -> dict[ArtifactKey, Artifact]:
    """The rows of ``run_id`` already recorded under any of ``keys`` (one query)."""
    query = select(Artifact).where(
        Artifact.run_id == run_id,
        Artifact.kind.in_({k for k, _, _ in keys}),
        Artifact.sha256.in_({d for _, _, d in keys}),
    )
    wanted = set(keys)
    rows = (((a.kind, a.name, a.sha256), a) for a in session.scalars(query))
    return {key: a for key, a in rows if key in wanted}
