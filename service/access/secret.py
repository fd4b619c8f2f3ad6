"""The installation secret: 32 random bytes made on first start, kept ``0600`` in the data folder.

It keys every hash that must not be recomputable from public facts or from a copy of the
database alone: token hashes, web session ids, CSRF tokens and the review queue's blinding
(item ids, work labels, audit draws, per-reviewer order). It is never the report seed.

Service code binds it to its :class:`Database` once (:func:`bind_secret`, done by
``ServiceContext.open``); the token and session functions find it there.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
import weakref
from pathlib import Path

from regua.errors import ConfigurationError
from regua.settings import Settings
from service.storage import Database
from service.storage.files import PRIVATE_FILE, tighten, write_private

SECRET_BYTES = 32
_BOUND: weakref.WeakKeyDictionary[Database, bytes] = weakref.WeakKeyDictionary()


def _read(path: Path) -> bytes | None:
    """The secret stored in ``path`` (None while the file is missing or still empty)."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    if not text:
        return None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) < SECRET_BYTES:
        raise ConfigurationError(
            f"{path} does not hold an installation secret ({SECRET_BYTES * 2}+ hex digits)"
        )
    return secret


def load_or_create_secret(path: Path) -> bytes:
    """The secret in ``path``, created (``0600``, exclusively: never overwritten) when missing."""
    found = _read(path)
    if found is None:
        write_private(path, (secrets.token_hex(SECRET_BYTES) + "\n").encode(), exclusive=True)
        for _ in range(50):  # another process may have linked it a moment ago
            found = _read(path)
            if found is not None:
                break
            time.sleep(0.01)
    if found is None:
        raise ConfigurationError(f"cannot read the installation secret in {path}")
    tighten(path, PRIVATE_FILE)
    return found


def installation_secret(settings: Settings) -> bytes:
    """The installation secret of ``settings`` (``REGUA_SECRET_FILE``, else data_dir/secret)."""
    return load_or_create_secret(settings.resolved_secret_file())


def bind_secret(db: Database, secret: bytes) -> None:
    """Make ``secret`` the key of every token and session operation on ``db``."""
    if len(secret) < SECRET_BYTES:
        raise ConfigurationError("the installation secret is too short")
    _BOUND[db] = secret


def secret_of(db: Database) -> bytes:
    """The secret bound to ``db``; raises :class:`ConfigurationError` when none is."""
    try:
        return _BOUND[db]
    except KeyError:
        raise ConfigurationError(
            "no installation secret is bound to this database (open it with ServiceContext.open "
            "or service.access.secret.open_database)"
        ) from None


def open_database(settings: Settings) -> Database:
    """The database of ``settings`` (migrated) with the installation secret bound to it."""
    db = Database(settings.resolved_database_url())
    bind_secret(db, installation_secret(settings))
    return db


def keyed_hash(secret: bytes, purpose: str, value: str) -> str:
    """HMAC-SHA256 of ``value`` for one ``purpose`` (hex); purposes never share a digest."""
    message = purpose.encode() + b"\x1f" + value.encode("utf-8")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()
