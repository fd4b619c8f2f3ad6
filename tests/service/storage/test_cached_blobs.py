"""The blob caches: a worker's per-run memory of fresh writes, and batched reads.

Against a real local folder and a real S3 server on loopback (moto). A blob written and read
back through a run's view equals the stored bytes; a blob the run did not write is read from the
store; one run's view never serves a blob another run wrote (the store's copy is removed, and
the other run's read fails where the writer's still finds it in memory).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from regua.errors import NotFoundError
from service.storage.blob_registry import open_blob_store
from service.storage.blobs import BlobStore, LocalBlobStore
from service.storage.cached_blobs import CachedBlobs, WrittenBlobs, get_many, put_many
from service.storage.s3_blobs import S3BlobStore
from tests.helpers.s3 import S3Server

FRAME = b"\x89PNG\r\n\x1a\n frame bytes"
MASK = b"\x89PNG\r\n\x1a\n mask bytes"


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[BlobStore, S3Server | None, str]:
    """A real blob store of each kind, with the S3 server and bucket when it is S3."""
    if request.param == "local":
        return LocalBlobStore(tmp_path / "blobs"), None, ""
    server: S3Server = request.getfixturevalue("s3_server")
    bucket: str = request.getfixturevalue("s3_bucket")
    s3 = open_blob_store(server.settings(tmp_path / "data", bucket))
    assert isinstance(s3, S3BlobStore)
    return s3, server, bucket


def _remove(store: BlobStore, server: S3Server | None, bucket: str, sha: str) -> None:
    """Delete a blob's stored copy behind the store's back (as a lost object would be)."""
    if isinstance(store, S3BlobStore):
        assert server is not None
        server.client.delete_object(Bucket=bucket, Key=store.key(sha))
    else:
        Path(store.locate(sha)).unlink()


def test_a_blob_written_through_a_run_reads_back_equal_to_the_stored_one(
    store: tuple[BlobStore, S3Server | None, str],
) -> None:
    inner, _, _ = store
    written = WrittenBlobs(inner)
    run = written.for_run("run_a")
    sha = run.put(FRAME)
    assert sha == hashlib.sha256(FRAME).hexdigest()
    assert inner.get(sha) == FRAME  # written through to the store
    assert run.get(sha) == inner.get(sha)
    assert run.get_many([sha, sha]) == {sha: FRAME}
    assert written.hits == 2 and written.misses == 0


def test_a_miss_falls_back_to_the_store(store: tuple[BlobStore, S3Server | None, str]) -> None:
    inner, _, _ = store
    sha = inner.put(MASK)  # written by another worker: not in this worker's memory
    written = WrittenBlobs(inner)
    run = written.for_run("run_a")
    own = run.put(FRAME)
    assert run.get(sha) == MASK
    assert run.get_many([own, sha]) == {own: FRAME, sha: MASK}
    assert written.misses == 2
    with pytest.raises(NotFoundError):
        run.get("0" * 64)


def test_a_run_never_gets_another_runs_blob_from_memory(
    store: tuple[BlobStore, S3Server | None, str],
) -> None:
    inner, server, bucket = store
    written = WrittenBlobs(inner)
    sha = written.for_run("run_a").put(FRAME)
    _remove(inner, server, bucket, sha)
    assert written.for_run("run_a").get(sha) == FRAME  # the writer's own memory
    with pytest.raises(NotFoundError):
        written.for_run("run_b").get(sha)  # run_b reads the store, where the blob is gone
    with pytest.raises(NotFoundError):
        written.for_run("run_b").get_many([sha])


def test_forgotten_and_evicted_runs_read_from_the_store(tmp_path: Path) -> None:
    inner = LocalBlobStore(tmp_path / "blobs")
    written = WrittenBlobs(inner, cap_bytes=len(FRAME) + len(MASK) - 1)
    a = written.for_run("run_a").put(FRAME)
    b = written.for_run("run_b").put(MASK)  # over the cap: the oldest run is dropped
    assert written.size_bytes == len(MASK)
    assert written.for_run("run_a").get(a) == FRAME
    assert written.misses == 1
    written.forget("run_b")
    assert written.size_bytes == 0
    assert written.for_run("run_b").get(b) == MASK
    assert written.misses == 2 and written.hits == 0


def test_batched_reads_equal_single_reads(store: tuple[BlobStore, S3Server | None, str]) -> None:
    inner, _, _ = store
    datas = [f"blob {i}".encode() for i in range(20)]
    shas = [inner.put(d) for d in datas]
    found = get_many(inner, [*shas, shas[0]])
    assert found == {sha: inner.get(sha) for sha in shas}
    cached = CachedBlobs(inner)
    assert cached.get_many(shas[:5]) == {sha: found[sha] for sha in shas[:5]}
    assert cached.get_many(shas) == found
    assert cached.reads == len(shas)  # each blob read from the store once
    with pytest.raises(NotFoundError):
        get_many(inner, [shas[0], "f" * 64])


def test_identical_bytes_in_one_batch_are_written_once(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    s3 = open_blob_store(s3_server.settings(tmp_path / "data", s3_bucket))
    assert isinstance(s3, S3BlobStore)
    puts: list[str] = []

    def put(**call: object) -> None:
        puts.append(str(call.get("model")))

    s3.client.meta.events.register("before-call.s3.PutObject", put)
    digests = put_many(s3, [MASK, FRAME, MASK, MASK])
    assert digests == [hashlib.sha256(d).hexdigest() for d in (MASK, FRAME, MASK, MASK)]
    assert len(puts) == 2  # two concurrent writes of one address would both upload it
    assert sorted(s3_server.keys(s3_bucket)) == sorted(s3.key(d) for d in set(digests))
