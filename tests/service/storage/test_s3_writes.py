"""How many requests an S3 write takes (moto in server mode, over HTTP).

A small blob is one conditional ``PUT`` (``If-None-Match: *``) whether it is new or present,
and a present one is never rewritten; a large blob is looked up first (its bytes are not sent
again); a store without conditional writes gets ``HEAD`` + ``PUT`` from then on.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from service.storage.blob_registry import open_blob_store
from service.storage.s3_blobs import CONDITIONAL_MAX_BYTES, S3BlobStore
from tests.helpers.s3 import S3Server


def _counted(server: S3Server, tmp_path: Path, bucket: str) -> tuple[S3BlobStore, Counter[str]]:
    store = open_blob_store(server.settings(tmp_path / "data", bucket))
    assert isinstance(store, S3BlobStore)
    calls: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    store.client.meta.events.register("before-call.s3", count)
    return store, calls


def _versions(server: S3Server, bucket: str) -> int:
    listed = server.client.list_object_versions(Bucket=bucket)
    return len(listed.get("Versions", []))


def test_a_small_blob_is_one_conditional_put_new_or_present(
    s3_server: S3Server, tmp_path: Path
) -> None:
    bucket = s3_server.new_bucket()
    # versioning on: an overwrite, even with identical bytes, would leave a second version
    s3_server.client.put_bucket_versioning(
        Bucket=bucket, VersioningConfiguration={"Status": "Enabled"}
    )
    store, calls = _counted(s3_server, tmp_path, bucket)
    digest = store.put(b"<svg>new</svg>")
    assert calls == Counter({"PutObject": 1})
    other, other_calls = _counted(s3_server, tmp_path, bucket)  # another process
    assert other.put(b"<svg>new</svg>") == digest
    assert other_calls == Counter({"PutObject": 1})  # refused (412): present, no HEAD
    assert _versions(s3_server, bucket) == 1 and other.get(digest) == b"<svg>new</svg>"
    store.put(b"<svg>new</svg>")  # known in this process: no request at all
    assert calls == Counter({"PutObject": 1})


def test_a_large_blob_is_looked_up_before_its_bytes_are_sent(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    big = b"x" * (CONDITIONAL_MAX_BYTES + 1)
    store, calls = _counted(s3_server, tmp_path, s3_bucket)
    digest = store.put(big)
    assert calls == Counter({"HeadObject": 1, "PutObject": 1})
    other, other_calls = _counted(s3_server, tmp_path, s3_bucket)
    assert other.put(big) == digest and other_calls == Counter({"HeadObject": 1})


def test_a_store_without_conditional_writes_gets_head_and_put(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    store, calls = _counted(s3_server, tmp_path, s3_bucket)

    def not_implemented(model: Any, params: dict[str, Any], **_: Any) -> None:
        if model.name == "PutObject" and "If-None-Match" in params["headers"]:
            error = {"Error": {"Code": "NotImplemented", "Message": "no conditions here"}}
            raise ClientError(error, "PutObject")  # type: ignore[arg-type]

    store.client.meta.events.register("before-call.s3", not_implemented)  # after the count
    digest = store.put(b"first")
    assert not store.conditional and store.get(digest) == b"first"
    assert calls == Counter({"PutObject": 2, "HeadObject": 1, "GetObject": 1})
    calls.clear()
    store.put(b"second")  # the store is known not to take them: no conditional try
    assert calls == Counter({"HeadObject": 1, "PutObject": 1})
