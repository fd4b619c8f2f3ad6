"""Artifacts in an S3-compatible store (AWS S3, MinIO, Ceph RGW) through boto3.

``REGUA_ARTIFACTS_URL=s3://BUCKET/PREFIX`` keeps each blob at ``PREFIX/sha256/ab/cdef…`` (the
first two hex digits, then the rest). Writes are idempotent (present bytes are never written
again: a blob up to :data:`CONDITIONAL_MAX_BYTES` is sent as one conditional ``PUT`` with
``If-None-Match: *``, which the store refuses when the object exists; a larger one, or any blob
on a store without conditional writes, is looked up with a ``HEAD`` first) and finish before the
database row that names them is written; every read is checked against its sha256.
Credentials come from boto3's standard chain (``AWS_*`` variables, ``~/.aws``, an instance
role): regua neither stores nor logs them.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from regua.errors import ArtifactIntegrityError, ConfigurationError, NotFoundError, StorageError
from regua.hashing import sha256_hex
from regua.settings import Settings
from service.storage.blob_registry import register_blob_scheme

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

MISSING_CODES = frozenset({"404", "NoSuchKey", "NotFound"})
PRESENT_CODES = frozenset({"412", "PreconditionFailed"})
"""A conditional ``PUT`` refused because the object exists."""
UNCONDITIONAL_CODES = frozenset({"501", "NotImplemented", "409", "ConditionalRequestConflict"})
"""A conditional ``PUT`` the store cannot take (no support; or a concurrent conditional write of
the same key, whose bytes are the same): the write goes the ``HEAD`` + ``PUT`` way instead."""
CONDITIONAL_MAX_BYTES = 256 * 1024
"""Blobs up to this size are written with one conditional ``PUT`` (one round trip, where a
``HEAD`` then a ``PUT`` take two); a larger one is looked up first, so bytes already present are
not sent again."""
KNOWN_CAP = 200_000
"""Addresses remembered as present (skipping their ``HEAD``) before the memory is cleared."""
_SESSION: boto3.session.Session | None = None
_SESSION_LOCK = threading.Lock()
CREDENTIALS_HINT = (
    "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
)


def _code(exc: ClientError) -> str:
    error = exc.response.get("Error", {})
    return str(error.get("Code") or exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode"))


class S3BlobStore:
    """Blobs as objects of one bucket under one prefix, addressed by their sha256."""

    def __init__(
        self, bucket: str, prefix: str, client: S3Client, *, endpoint: str | None = None
    ) -> None:
        """Keep blobs in ``bucket`` under ``prefix`` through ``client``.

        Args:
            bucket: the bucket's name.
            prefix: the key prefix (no leading or trailing slash; may be empty).
            client: a boto3 S3 client (thread-safe; shared by every thread of the process).
            endpoint: the endpoint the client talks to, named in error messages.
        """
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.client = client
        self.endpoint = endpoint or "AWS S3"
        self._known: set[str] = set()
        self._lock = threading.Lock()
        self.conditional = True
        """Whether the store takes conditional writes (off after it refused one as unknown)."""

    @property
    def url(self) -> str:
        """``s3://BUCKET/PREFIX`` of the store."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, sha256: str) -> str:
        """The object key of a blob: ``PREFIX/sha256/ab/cdef…``."""
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise NotFoundError(f"not an artifact address: {sha256!r}")
        head = f"{self.prefix}/" if self.prefix else ""
        return f"{head}sha256/{sha256[:2]}/{sha256[2:]}"

    def locate(self, sha256: str) -> str:
        """The blob's ``s3://`` URL."""
        return f"s3://{self.bucket}/{self.key(sha256)}"

    def _unreachable(self, action: str, where: str, exc: Exception) -> StorageError:
        return StorageError(
            f"artifact store {self.url} at {self.endpoint} refused to {action} {where}: {exc}; "
            f"check that the bucket exists and REGUA_S3_ENDPOINT_URL answers, and "
            f"{CREDENTIALS_HINT}"
        )

    def check(self) -> None:
        """Fail with what to check when the bucket is missing, refused or unreachable.

        Raises:
            ConfigurationError: naming the bucket, the endpoint and what to check.
        """
        where = f"REGUA_ARTIFACTS_URL={self.url} at {self.endpoint}"
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except NoCredentialsError as exc:
            hint = f"{where}: no S3 credentials found; {CREDENTIALS_HINT}"
            raise ConfigurationError(hint) from exc
        except ClientError as exc:
            code = _code(exc)
            if code in ("404", "NoSuchBucket", "NotFound"):
                reason = "the bucket does not exist; create it (e.g. `mc mb`, `aws s3 mb`)"
            elif code in ("403", "AccessDenied", "Forbidden"):
                reason = f"access to the bucket was refused; {CREDENTIALS_HINT}"
            else:
                reason = f"the store answered {code}; {CREDENTIALS_HINT}"
            raise ConfigurationError(f"{where}: {reason}") from exc
        except BotoCoreError as exc:
            raise ConfigurationError(
                f"{where}: cannot reach the store ({exc}); check REGUA_S3_ENDPOINT_URL and that "
                "the store is running and reachable from this machine"
            ) from exc

    def _remember(self, sha256: str) -> None:
        with self._lock:
            if len(self._known) >= KNOWN_CAP:
                self._known.clear()
            self._known.add(sha256)

    def exists(self, sha256: str) -> bool:
        """Whether the object is present (a ``HEAD``)."""
        key = self.key(sha256)
        with self._lock:
            if sha256 in self._known:
                return True
        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _code(exc) in MISSING_CODES:
                return False
            raise self._unreachable("look up", f"s3://{self.bucket}/{key}", exc) from exc
        except BotoCoreError as exc:
            raise self._unreachable("look up", f"s3://{self.bucket}/{key}", exc) from exc
        self._remember(sha256)
        return True

    def put(self, data: bytes) -> str:
        """Store ``data`` under its sha256 (no write when already present); its sha256."""
        digest = sha256_hex(data)
        with self._lock:
            if digest in self._known:
                return digest
        small = len(data) <= CONDITIONAL_MAX_BYTES
        settled = small and self.conditional and self._put_if_absent(digest, data)
        if not settled and not self.exists(digest):
            self._write(digest, data)
        self._remember(digest)
        return digest

    def _put_if_absent(self, digest: str, data: bytes) -> bool:
        """One conditional ``PUT``; False when the store cannot take it (then nothing is known)."""
        try:
            self._put_object(digest, data, conditional=True)
        except ClientError as exc:
            code = _code(exc)
            if code in PRESENT_CODES:
                return True
            if code in UNCONDITIONAL_CODES:
                if code in ("501", "NotImplemented"):
                    self.conditional = False
                return False
            raise self._unreachable("write", self.locate(digest), exc) from exc
        except BotoCoreError as exc:
            raise self._unreachable("write", self.locate(digest), exc) from exc
        return True

    def _write(self, digest: str, data: bytes) -> None:
        try:
            self._put_object(digest, data, conditional=False)
        except (ClientError, BotoCoreError) as exc:
            raise self._unreachable("write", self.locate(digest), exc) from exc

    def _put_object(self, digest: str, data: bytes, *, conditional: bool) -> None:
        key, meta = self.key(digest), {"sha256": digest}
        kind = "application/octet-stream"
        if conditional:
            self.client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=data,
                ContentType=kind,
                Metadata=meta,
                IfNoneMatch="*",
            )
        else:
            self.client.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentType=kind, Metadata=meta
            )

    def get(self, sha256: str) -> bytes:
        """The stored bytes, checked against their address.

        Raises:
            NotFoundError: no object at the blob's key.
            ArtifactIntegrityError: the object's bytes hash to something else.
            StorageError: the store cannot be reached or refused the read.
        """
        key = self.key(sha256)
        where = f"s3://{self.bucket}/{key}"
        try:
            data = self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if _code(exc) in MISSING_CODES:
                raise NotFoundError(f"artifact {sha256} is not in the store ({where})") from exc
            raise self._unreachable("read", where, exc) from exc
        except BotoCoreError as exc:
            raise self._unreachable("read", where, exc) from exc
        actual = sha256_hex(data)
        if actual != sha256:
            raise ArtifactIntegrityError(
                f"artifact {where} is damaged: its {len(data)} bytes hash to sha256 {actual}, "
                f"not to its address {sha256}; the object was changed outside regua — restore "
                "it from a backup of the bucket"
            )
        self._remember(sha256)  # a later put of the same bytes needs no round trip
        return data


def s3_client(settings: Settings) -> S3Client:
    """A boto3 S3 client for the settings' endpoint and region (credentials: boto3's chain)."""
    config = Config(
        connect_timeout=5,
        read_timeout=60,
        retries={"max_attempts": 4, "mode": "standard"},
        max_pool_connections=64,
        s3={"addressing_style": "path"} if settings.s3_endpoint_url else None,
    )
    global _SESSION
    with _SESSION_LOCK:  # one session per process: its loaded service model is reused
        if _SESSION is None:
            _SESSION = boto3.session.Session()
        return _SESSION.client(
            "s3",
            endpoint_url=settings.s3_endpoint_url,
            region_name=settings.s3_region,
            config=config,
        )


def open_s3(url: str, settings: Settings) -> S3BlobStore:
    """The store of ``s3://BUCKET/PREFIX``, checked to answer (see :meth:`S3BlobStore.check`)."""
    parts = urlsplit(url)
    if not parts.netloc or parts.query or parts.fragment:
        raise ConfigurationError(
            f"REGUA_ARTIFACTS_URL={url!r} is not s3://BUCKET/PREFIX (a bucket name is required)"
        )
    store = S3BlobStore(
        parts.netloc, parts.path, s3_client(settings), endpoint=settings.s3_endpoint_url
    )
    store.check()
    return store


register_blob_scheme("s3", open_s3)
