"""Blinding: opaque run labels and the list of fields a reviewer may never see.

Runs are shown to reviewers under labels derived from a keyed hash of the run id, so the label
says nothing about submission order, the model or the provider. The service keys it with
:func:`blinding_key` of the installation secret (``service.access.secret``, 0600 in the data
folder, different on every installation): knowing run ids does not map items to runs. Plain
integer seeds remain for the pure tests.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from typing import Any

FORBIDDEN_KEYS: frozenset[str] = frozenset(
    {"model", "model_label", "label", "provider", "params", "rank", "ranking", "run_id"}
)
"""Keys that must never appear in a payload sent to a reviewer."""


def blinding_key(secret: bytes) -> int:
    """The review queue's key: 128 bits drawn from the installation secret (never a default)."""
    if len(secret) < 16:
        raise ValueError("the installation secret is too short to key the blinding")
    digest = hmac.new(secret, b"review-blinding", hashlib.sha256).digest()
    return int.from_bytes(digest[:16], "big")


def _digest(seed: int | str, message: str) -> bytes:
    return hmac.new(str(seed).encode(), message.encode(), hashlib.sha256).digest()


def opaque_run_label(seed: int | str, run_id: str) -> str:
    """A short opaque label for a run, e.g. ``W-K3QZ7MHA``; stable for one seed, order-free."""
    code = base64.b32encode(_digest(seed, f"run:{run_id}")).decode()[:8]
    return f"W-{code}"


def opaque_item_id(seed: int | str, run_id: str, criterion_id: str, kind: str) -> str:
    """An opaque, deterministic queue item id (no run id inside, no order)."""
    code = hashlib.sha256(_digest(seed, f"item:{run_id}:{criterion_id}:{kind}")).hexdigest()
    return f"it_{code[:20]}"


def unit_draw(seed: int | str, *parts: str) -> float:
    """A uniform number in [0, 1) drawn from a keyed hash of ``parts`` (the stored seed)."""
    raw = _digest(seed, "draw:" + "\x1f".join(parts))
    return int.from_bytes(raw[:8], "big") / 2**64


def forbidden_keys_in(payload: Any, extra: Iterable[str] = ()) -> list[str]:
    """Every forbidden key found anywhere in a JSON-like payload (for tests and assertions)."""
    forbidden = FORBIDDEN_KEYS | frozenset(extra)
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in forbidden:
                    found.append(str(key))
                walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)

    walk(payload)
    return found
