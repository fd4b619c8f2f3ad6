"""Artifacts in an S3-compatible store, against a real S3 server on loopback (moto, server mode).

Keys are content addressed, present bytes are never written again, every read is checked
against its sha256, a missing or unreachable bucket stops the start with what to check, and a
store that refuses a write leaves no row naming the bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from regua.errors import ArtifactIntegrityError, ConfigurationError, NotFoundError, StorageError
from regua.settings import Settings
from service.cli import app
from service.context import ServiceContext
from service.storage import Artifact, Database
from service.storage.blob_registry import blob_schemes, open_blob_store
from service.storage.blobs import LocalBlobStore, NewArtifact, record_artifact
from service.storage.s3_blobs import S3BlobStore, s3_client
from tests.helpers.ports import free_port
from tests.helpers.s3 import S3Server


def _store(server: S3Server, tmp_path: Path, bucket: str) -> S3BlobStore:
    store = open_blob_store(server.settings(tmp_path / "data", bucket))
    assert isinstance(store, S3BlobStore)
    return store


def test_keys_are_content_addressed_under_the_prefix(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    store = _store(s3_server, tmp_path, s3_bucket)
    digest = store.put(b"<svg/>")
    assert digest == hashlib.sha256(b"<svg/>").hexdigest()
    key = f"runs/sha256/{digest[:2]}/{digest[2:]}"
    assert s3_server.keys(s3_bucket) == [key]
    assert store.locate(digest) == f"s3://{s3_bucket}/{key}"
    body = s3_server.client.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
    assert body == b"<svg/>"
    # a second store (another process) finds the object and does not write it again
    other = _store(s3_server, tmp_path, s3_bucket)
    modified = s3_server.client.head_object(Bucket=s3_bucket, Key=key)["ETag"]
    assert other.put(b"<svg/>") == digest and other.get(digest) == b"<svg/>"
    assert s3_server.client.head_object(Bucket=s3_bucket, Key=key)["ETag"] == modified
    assert s3_server.keys(s3_bucket) == [key]


def test_a_changed_object_is_refused_on_read_and_never_rewritten(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    store = _store(s3_server, tmp_path, s3_bucket)
    digest = store.put(b"frame bytes")
    key = f"runs/sha256/{digest[:2]}/{digest[2:]}"
    s3_server.client.put_object(Bucket=s3_bucket, Key=key, Body=b"other bytes")
    with pytest.raises(ArtifactIntegrityError) as err:
        store.get(digest)
    message = str(err.value)
    assert f"s3://{s3_bucket}/{key}" in message and "damaged" in message
    assert hashlib.sha256(b"other bytes").hexdigest() in message and digest in message
    # writing the right bytes again does not paper over the damage: the object is never rewritten
    fresh = _store(s3_server, tmp_path, s3_bucket)
    fresh.put(b"frame bytes")
    with pytest.raises(ArtifactIntegrityError):
        fresh.get(digest)


def test_a_missing_object_names_its_key(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    store = _store(s3_server, tmp_path, s3_bucket)
    with pytest.raises(NotFoundError) as err:
        store.get("ab" * 32)
    assert f"s3://{s3_bucket}/runs/sha256/ab/{'ab' * 31}" in str(err.value)
    assert not store.exists("ab" * 32)


def test_start_up_stops_on_a_missing_bucket(s3_server: S3Server, tmp_path: Path) -> None:
    settings = s3_server.settings(tmp_path / "data", "no-such-bucket")
    with pytest.raises(ConfigurationError) as err:
        ServiceContext.open(settings)
    message = str(err.value)
    assert "s3://no-such-bucket/runs" in message and s3_server.endpoint in message
    assert "does not exist" in message and "create it" in message
    assert not (tmp_path / "data" / "regua.sqlite3").exists()  # stopped before the database


def test_start_up_stops_on_an_unreachable_endpoint(
    s3_server: S3Server, tmp_path: Path, refused_url: str
) -> None:
    dead = refused_url
    settings = s3_server.settings(tmp_path / "data", "b").model_copy(
        update={"s3_endpoint_url": dead}
    )
    with pytest.raises(ConfigurationError) as err:
        open_blob_store(settings)
    message = str(err.value)
    assert "cannot reach the store" in message and dead in message
    assert "REGUA_S3_ENDPOINT_URL" in message
    assert "regua-test-secret" not in message  # credentials are never shown


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3:///prefix-only", "a bucket name is required"),
        ("gs://bucket/prefix", "unknown scheme 'gs'; known: file, s3"),
        ("file://server/share", "not a host"),
    ],
)
def test_artifacts_urls_that_cannot_work(tmp_path: Path, url: str, expected: str) -> None:
    settings = Settings(data_dir=tmp_path, artifacts_url=url)
    with pytest.raises(ConfigurationError) as err:
        open_blob_store(settings)
    assert expected in str(err.value) and url in str(err.value)


def test_local_folder_stays_the_default_and_file_urls_name_a_folder(tmp_path: Path) -> None:
    default = open_blob_store(Settings(data_dir=tmp_path / "d"))
    assert isinstance(default, LocalBlobStore) and default.root == tmp_path / "d" / "artifacts"
    chosen = open_blob_store(Settings(data_dir=tmp_path, artifacts_url=f"file://{tmp_path}/x"))
    assert isinstance(chosen, LocalBlobStore) and chosen.root == tmp_path / "x"
    digest = chosen.put(b"x")
    assert (tmp_path / "x" / digest[:2] / digest[2:4] / digest).read_bytes() == b"x"
    assert {"file", "s3"} <= set(blob_schemes())


def test_a_refused_write_stores_no_row(
    s3_server: S3Server, database_url: str, tmp_path: Path
) -> None:
    """The blob is written before the row: when the store refuses, nothing names the bytes."""
    bucket = s3_server.new_bucket()
    store = _store(s3_server, tmp_path, bucket)
    s3_server.client.delete_bucket(Bucket=bucket)  # the store now refuses every write
    db = Database(database_url)
    new = NewArtifact("review", b'{"x":2}', "test", "1", name="n.json")
    with db.write() as s:
        with pytest.raises(StorageError) as err:
            record_artifact(s, store, None, new)
        # in the very transaction: had the row been added first, it would be visible here
        assert s.scalar(select(func.count(Artifact.id))) == 0
    with db.read() as s:
        assert s.scalar(select(func.count(Artifact.id))) == 0
    assert f"s3://{bucket}/runs" in str(err.value) and "refused to write" in str(err.value)
    db.dispose()


def test_client_uses_the_configured_endpoint_and_region(
    s3_server: S3Server, tmp_path: Path
) -> None:
    client = s3_client(s3_server.settings(tmp_path, "b").model_copy(update={"s3_region": "eu-1"}))
    assert client.meta.endpoint_url == s3_server.endpoint and client.meta.region_name == "eu-1"
    client.close()


def test_regua_serve_refuses_to_start_without_its_bucket(
    s3_server: S3Server, tmp_path: Path
) -> None:
    env = {
        "REGUA_ARTIFACTS_URL": "s3://missing-bucket/regua",
        "REGUA_S3_ENDPOINT_URL": s3_server.endpoint,
        "REGUA_S3_REGION": "us-east-1",
    }
    args = ["serve", "--port", str(free_port()), "--data-dir", str(tmp_path / "data")]
    done = CliRunner().invoke(app, args, env=env)
    assert done.exit_code == 1, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert "error: REGUA_ARTIFACTS_URL=s3://missing-bucket/regua" in done.stderr
    assert "the bucket does not exist; create it" in done.stderr
    assert not (tmp_path / "data" / "regua.sqlite3").exists()
