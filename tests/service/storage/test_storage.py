"""Storage: migrations match the models on both databases; the artifact store never overwrites."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, select

from regua.errors import NotFoundError
from service.storage import (
    ApiToken,
    Artifact,
    Base,
    CheckResultRow,
    CriterionOutcomeRow,
    Database,
    Evaluation,
    JudgeFailureRow,
    RenderRecord,
    Run,
    StageAttempt,
    StageRecord,
    TaskRow,
    VerdictRow,
)
from service.storage.blob_registry import open_blob_store
from service.storage.blobs import BlobStore, LocalBlobStore, NewArtifact, record_artifact
from tests.helpers.s3 import S3Server

MODELS = (
    ApiToken,
    Artifact,
    CheckResultRow,
    CriterionOutcomeRow,
    Evaluation,
    JudgeFailureRow,
    RenderRecord,
    Run,
    StageAttempt,
    StageRecord,
    TaskRow,
    VerdictRow,
)


def test_migrations_create_exactly_the_models(database_url: str) -> None:
    """Every table of storage (runs, review, calibration, re-scoring) is what the migrations
    build, column for column, on both databases."""
    db = Database(database_url)
    Database(database_url).dispose()  # a second start-up is a no-op
    ours = {m.__tablename__ for m in MODELS}
    assert ours <= set(db.table_names())
    assert set(Base.metadata.tables) <= set(db.table_names())
    with db.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert [d for d in diffs if _table_of(d) in Base.metadata.tables] == []
    db.dispose()


def _table_of(diff: Any) -> str | None:
    """The table an Alembic autogenerate diff is about."""
    if isinstance(diff, list):  # modify_* ops come grouped
        return str(diff[0][2])
    op, obj = diff[0], diff[1]
    if op.endswith("_table"):
        return str(obj.name)
    if op.endswith("_column"):
        return str(diff[2])
    if op.endswith("_fk"):
        return str(obj.parent.name)
    table = getattr(obj, "table", None)
    return str(table.name) if table is not None else None


@pytest.fixture(params=["local", "s3"])
def blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    """Each blob store: the local folder, and an S3 bucket on the session's moto server."""
    if request.param == "local":
        return LocalBlobStore(tmp_path / "a")
    server: S3Server = request.getfixturevalue("s3_server")
    bucket = server.new_bucket()
    return open_blob_store(server.settings(tmp_path / "data", bucket))


def test_blob_store_is_content_addressed_and_atomic(blob_store: BlobStore, tmp_path: Path) -> None:
    store = blob_store
    digest = store.put(b"hello")
    assert digest == hashlib.sha256(b"hello").hexdigest()
    assert store.put(b"hello") == digest and store.get(digest) == b"hello"
    assert store.exists(digest) and store.locate(digest).endswith(digest[2:])
    assert not store.exists("1" * 64)
    assert not [p for p in tmp_path.rglob(".tmp-*")]
    with pytest.raises(NotFoundError):
        store.get("0" * 64)
    with pytest.raises(NotFoundError):
        store.get("../../etc/passwd")
    assert not hasattr(store, "delete")


def test_artifact_rows_are_idempotent(database_url: str, blob_store: BlobStore) -> None:
    db = Database(database_url)
    store = blob_store
    new = NewArtifact("review", b'{"x":1}', "test", "1", name="n.json")
    with db.write() as s:
        a = record_artifact(s, store, None, new)
        b = record_artifact(s, store, None, new)
        assert a.id == b.id and a.media_type == "application/json" and a.size == 7
    with db.write() as s:
        record_artifact(s, store, None, new)
    with db.read() as s:
        assert s.scalar(select(func.count(Artifact.id))) == 1
    db.dispose()
