"""Blob caches in front of a blob store: a read-through one and a per-run one of fresh writes.

:class:`CachedBlobs` is a read-through cache for re-scoring (clones of one render share blobs).
:class:`WrittenBlobs` is a worker's memory of the blobs its stages have just written, kept per
run: the evaluate stage finds the frames, masks, check report and render log the check and
render stages of the same run wrote on this worker without fetching them back from the store
(an S3 round trip each). A run's view (:meth:`WrittenBlobs.for_run`) serves only blobs written
through that same view; anything else is read from the store, and reads of several blobs
(:func:`get_many`) go to the store concurrently.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from service.storage.blobs import BlobStore, LocalBlobStore

READ_THREADS = 16
"""Blobs read from the store at once by :func:`get_many` (S3 reads are round-trip bound)."""
WRITTEN_CAP_BYTES = 64 * 1024 * 1024
"""Bytes of freshly written blobs a worker keeps (the oldest runs' blobs are dropped first)."""

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The process's blob transfer threads, started once (not up to 16 per batch of blobs)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="regua-blobs")
        return _POOL


def _forget_pool() -> None:
    """In a forked child: the parent's threads are not there, so start new ones when needed."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def get_many(blobs: BlobStore, shas: Sequence[str]) -> dict[str, bytes]:
    """The bytes of every blob in ``shas`` (each distinct one read once).

    Uses the store's own ``get_many`` when it has one; otherwise reads the blobs on a few
    threads at once (a local folder or S3 client is thread-safe).
    """
    distinct = list(dict.fromkeys(shas))
    batch = getattr(blobs, "get_many", None)
    if callable(batch):
        found = batch(distinct)
        assert isinstance(found, dict)
        return found
    return _fetch(blobs, distinct)


def _fetch(blobs: BlobStore, distinct: Sequence[str]) -> dict[str, bytes]:
    if len(distinct) <= 1 or isinstance(blobs, LocalBlobStore):  # a file read needs no thread
        return {sha: blobs.get(sha) for sha in distinct}
    return dict(zip(distinct, _pool().map(blobs.get, distinct), strict=True))


def put_many(blobs: BlobStore, datas: Sequence[bytes]) -> list[str]:
    """Store every blob of ``datas`` (several at once: an S3 write is two round trips).

    Identical bytes (a render's empty masks, frames of a still drawing) are written once: two
    concurrent writes of one address would both find it missing and both upload it.
    Returns their sha256 in order.
    """
    distinct = list(dict.fromkeys(datas))
    if len(distinct) <= 1:
        digests = [blobs.put(d) for d in distinct]
    else:
        digests = list(_pool().map(blobs.put, distinct))
    by_data = dict(zip(distinct, digests, strict=True))
    return [by_data[d] for d in datas]


class CachedBlobs:
    """Read-through cache over a blob store (clones of one render share their blobs)."""

    def __init__(self, inner: BlobStore, max_items: int = 4096) -> None:
        """Cache reads of ``inner``, keeping the ``max_items`` most recently read blobs."""
        self.inner = inner
        self.max_items = max_items
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self.reads = 0

    def put(self, data: bytes) -> str:
        """Store bytes (write-through)."""
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        """Bytes of a blob, from the cache when read before."""
        data = self._cache.get(sha256)
        if data is None:
            self.reads += 1
            data = self.inner.get(sha256)
            self._keep(sha256, data)
        return data

    def get_many(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Bytes of several blobs: cached ones from memory, the rest read at once."""
        out = {sha: self._cache[sha] for sha in shas if sha in self._cache}
        missing = [sha for sha in dict.fromkeys(shas) if sha not in out]
        self.reads += len(missing)
        for sha, data in get_many(self.inner, missing).items():
            self._keep(sha, data)
            out[sha] = data
        return out

    def _keep(self, sha256: str, data: bytes) -> None:
        self._cache[sha256] = data
        if len(self._cache) > self.max_items:
            self._cache.popitem(last=False)

    def exists(self, sha256: str) -> bool:
        """Whether the blob exists."""
        return sha256 in self._cache or self.inner.exists(sha256)

    def locate(self, sha256: str) -> str:
        """Where the blob lives."""
        return self.inner.locate(sha256)


class WrittenBlobs:
    """A worker's blobs just written, per run, in memory (bounded in bytes, oldest run first).

    Thread-safe: the stage jobs of many runs share one. Writes always reach the store first;
    the memory only saves reading them back.
    """

    def __init__(self, inner: BlobStore, cap_bytes: int = WRITTEN_CAP_BYTES) -> None:
        """Remember up to ``cap_bytes`` of blobs written through :meth:`for_run` views."""
        self.inner = inner
        self.cap_bytes = cap_bytes
        self._runs: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def for_run(self, run_id: str) -> RunBlobs:
        """The store as ``run_id``'s stages see it (serving that run's own fresh writes)."""
        return RunBlobs(self, run_id)

    def remember(self, run_id: str, sha256: str, data: bytes) -> None:
        """Keep ``data`` (already stored) for ``run_id``'s later reads."""
        if len(data) > self.cap_bytes:
            return
        with self._lock:
            blobs = self._runs.setdefault(run_id, {})
            self._runs.move_to_end(run_id)
            if sha256 not in blobs:
                blobs[sha256] = data
                self._bytes += len(data)
            while self._bytes > self.cap_bytes and self._runs:
                _, dropped = self._runs.popitem(last=False)
                self._bytes -= sum(len(b) for b in dropped.values())

    def recall(self, run_id: str, sha256: str) -> bytes | None:
        """The bytes ``run_id`` wrote under ``sha256`` on this worker (None: not here)."""
        with self._lock:
            data = self._runs.get(run_id, {}).get(sha256)
            if data is None:
                self.misses += 1
            else:
                self.hits += 1
            return data

    def forget(self, run_id: str) -> None:
        """Drop what ``run_id`` wrote (its evaluation is stored)."""
        with self._lock:
            dropped = self._runs.pop(run_id, {})
            self._bytes -= sum(len(b) for b in dropped.values())

    @property
    def size_bytes(self) -> int:
        """Bytes held now."""
        with self._lock:
            return self._bytes


class RunBlobs:
    """One run's view of a :class:`WrittenBlobs`: a :class:`BlobStore` serving its own writes."""

    def __init__(self, written: WrittenBlobs, run_id: str) -> None:
        """The view of ``run_id`` on ``written``."""
        self.written = written
        self.run_id = run_id

    def put(self, data: bytes) -> str:
        """Store ``data`` (write-through), then keep it for this run's reads."""
        digest = self.written.inner.put(data)
        self.written.remember(self.run_id, digest, data)
        return digest

    def get(self, sha256: str) -> bytes:
        """This run's fresh write when kept, else the store's bytes."""
        data = self.written.recall(self.run_id, sha256)
        return data if data is not None else self.written.inner.get(sha256)

    def get_many(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Several blobs: this run's fresh writes from memory, the rest read at once."""
        out: dict[str, bytes] = {}
        for sha in dict.fromkeys(shas):
            data = self.written.recall(self.run_id, sha)
            if data is not None:
                out[sha] = data
        missing = [sha for sha in dict.fromkeys(shas) if sha not in out]
        out.update(get_many(self.written.inner, missing))
        return out

    def exists(self, sha256: str) -> bool:
        """Whether the blob is in the store."""
        return self.written.inner.exists(sha256)

    def locate(self, sha256: str) -> str:
        """Where the blob lives in the store."""
        return self.written.inner.locate(sha256)
