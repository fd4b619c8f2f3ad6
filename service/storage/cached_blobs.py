"""A read-through cache over a blob store, for re-scoring (clones of one render share blobs)."""

from __future__ import annotations

from collections import OrderedDict

from service.storage.blobs import BlobStore


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
            self._cache[sha256] = data
            if len(self._cache) > self.max_items:
                self._cache.popitem(last=False)
        return data

    def exists(self, sha256: str) -> bool:
        """Whether the blob exists."""
        return sha256 in self._cache or self.inner.exists(sha256)

    def locate(self, sha256: str) -> str:
        """Where the blob lives."""
        return self.inner.locate(sha256)
