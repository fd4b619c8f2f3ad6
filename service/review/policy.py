"""The queue policy in force: ``REGUA_REVIEW_*`` settings, keyed by the installation secret."""

from __future__ import annotations

from regua.settings import Settings
from service.review.blinding import blinding_key
from service.review.queue import QueuePolicy


def queue_policy(settings: Settings, secret: bytes) -> QueuePolicy:
    """The queue policy of a service (``REGUA_REVIEW_*`` settings), keyed by its secret.

    The key of item ids, work labels, audit draws and per-reviewer order comes from the secret
    made on first start (``ServiceContext.secret``), never from a default in the source.
    """
    return QueuePolicy(
        seed=blinding_key(secret),
        audit_rate=settings.review_audit_rate,
        reviews_per_item=settings.reviews_per_item,
        reviews_per_audit_item=settings.reviews_per_audit_item,
    )
