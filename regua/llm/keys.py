"""Key variables bound to endpoints: ``REGUA_GENERATION_KEY_ENVS`` entries ``VAR=API[@BASE_URL]``.

Each entry names an environment variable of the service holding an API key and one endpoint it
may be sent to: ``OPENAI_API_KEY=openai`` (the API's own base URL),
``VLLM_KEY=openai@http://gpu:8000/v1`` (that server; with or without ``/v1``, see
:mod:`regua.llm.endpoint`). A variable may be bound to several endpoints by several entries.
A key is never sent anywhere its variable is not bound to.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from regua.llm.endpoint import same_endpoint

_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_API = re.compile(r"[a-z][a-z0-9_-]*")
FORM = (
    "VAR=API or VAR=API@BASE_URL (e.g. OPENAI_API_KEY=openai, VLLM_KEY=openai@http://gpu:8000/v1)"
)


@dataclass(frozen=True)
class KeyBinding:
    """One key variable and one endpoint it may be sent to (None: the API's default URL)."""

    var: str
    api: str
    base_url: str | None = None

    def allows(self, api: str, base_url: str | None) -> bool:
        """Whether this binding lets its key go to ``api`` at ``base_url``."""
        return api == self.api and same_endpoint(api, self.base_url, base_url)

    def entry(self) -> str:
        """The setting entry of this binding."""
        return f"{self.var}={self.api}" + (f"@{self.base_url}" if self.base_url else "")


def parse_binding(entry: str) -> KeyBinding:
    """One ``VAR=API[@BASE_URL]`` entry (ValueError naming the expected form otherwise)."""
    var, eq, rest = entry.strip().partition("=")
    api, at, url = rest.partition("@")
    var, api, url = var.strip(), api.strip(), url.strip()
    if not eq or not _VAR.fullmatch(var) or not _API.fullmatch(api) or (at and not url):
        raise ValueError(f"key binding {entry!r} is not of the form {FORM}")
    if url and not url.startswith(("http://", "https://")):
        raise ValueError(f"key binding {entry!r}: the base URL must start with http:// or https://")
    return KeyBinding(var, api, url or None)


def parse_bindings(entries: Iterable[str]) -> tuple[KeyBinding, ...]:
    """Every entry parsed (the first bad one raises ValueError)."""
    return tuple(parse_binding(e) for e in entries)


def bound_vars(bindings: Sequence[KeyBinding]) -> frozenset[str]:
    """The variables bound to some endpoint."""
    return frozenset(b.var for b in bindings)


def may_send(bindings: Sequence[KeyBinding], var: str, api: str, base_url: str | None) -> bool:
    """Whether ``var``'s key may go to ``api`` at ``base_url``."""
    return any(b.var == var and b.allows(api, base_url) for b in bindings)


def key_values(names: Iterable[str]) -> list[str]:
    """The values of the named variables that are set (for redaction; never logged)."""
    return [v for v in (os.environ.get(n) for n in names) if v]
