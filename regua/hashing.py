"""The one content address of regua: the hex sha256 of bytes."""

from __future__ import annotations

import hashlib


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data`` (how artifacts, drawings and frames are addressed)."""
    return hashlib.sha256(data).hexdigest()
