"""The one redaction step of provider text: no key is ever stored or shown.

Every text that comes from a model provider (an error message, a reply body, a cause) passes
:class:`Redactor` before anything keeps it: the values of every configured key variable (and
the call's own key) are replaced by ``[redacted]``, and so is anything a provider echoes after
an ``Authorization``, ``x-api-key`` or ``api-key`` header name or after ``Bearer``, and the
credentials of a URL (``https://user:key@host``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from regua.llm.keys import key_values, parse_bindings
from regua.settings import Settings

REDACTED = "[redacted]"
MIN_SECRET = 6
"""Shorter values are not secrets worth matching (they would blank out ordinary words)."""
_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization|\bx-api-key|\bapi[-_]key)"
    r"(\W{0,3}[:=]\W{0,3})"
    r"((?:bearer|basic|token)\s+)?[^\s\"',;}\]]+"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
"""Credentials written into a URL (``https://user:key@host``)."""
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?=[A-Za-z._~+/=]*[0-9_-])[A-Za-z0-9._~+/=-]{12,}")
"""A bearer token: 12 or more token characters with a digit, ``-`` or ``_`` (not a word)."""


class Redactor:
    """Removes a fixed set of secret values and any header echo from text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        """Redact these values (longest first, so a key containing another goes whole)."""
        kept = {s for s in secrets if s and len(s) >= MIN_SECRET}
        self._secrets = sorted(kept, key=len, reverse=True)

    def with_secrets(self, *secrets: str | None) -> Redactor:
        """This redactor with more values to remove."""
        return Redactor([*self._secrets, *secrets])

    def __call__(self, text: str) -> str:
        """``text`` without any secret value or header echo."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        low = text.lower()  # the patterns run only where their words occur (replies are long)
        if "authorization" in low or "api-key" in low or "api_key" in low:
            text = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        if "@" in low and "://" in low:
            text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
        if "bearer" in low:
            text = _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
        return text

    def optional(self, text: str | None) -> str | None:
        """:meth:`__call__` on a text that may be absent."""
        return None if text is None else self(text)


def configured_key_vars(settings: Settings | None) -> list[str]:
    """The key variables the settings bind to endpoints (``REGUA_GENERATION_KEY_ENVS``)."""
    if settings is None:
        return []
    return sorted({b.var for b in parse_bindings(settings.generation_key_envs)})


def redactor_for(settings: Settings | None, *extra: str | None) -> Redactor:
    """The redactor of the process: every configured key's value, the judge key, ``extra``."""
    values = key_values(configured_key_vars(settings))
    judge_key = settings.judge_api_key if settings is not None else None
    return Redactor([*values, judge_key, *extra])
