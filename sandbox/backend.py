"""The backend interface (a Protocol) and the registry of isolation backends.

A backend turns an argv into a process running in isolation. Built-in backends register exactly
like plugins: ``register_backend("name", factory)``; ``get_backend("name")`` builds one.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol, runtime_checkable

from regua.errors import ConfigurationError
from sandbox.limits import SandboxLimits


@runtime_checkable
class SandboxProcess(Protocol):
    """A running sandbox: pipes to its main process plus control over its whole tree."""

    @property
    def pid(self) -> int:
        """Host pid of the outermost process of the sandbox."""
        ...

    @property
    def stdin(self) -> IO[bytes]:
        """Pipe to the sandboxed program's stdin."""
        ...

    @property
    def stdout(self) -> IO[bytes]:
        """Pipe from the sandboxed program's stdout."""
        ...

    def poll(self) -> int | None:
        """Exit status of the sandbox, or ``None`` while it runs."""
        ...

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the sandbox to end and return its exit status."""
        ...

    def kill(self) -> None:
        """Kill the sandbox's whole process tree (idempotent)."""
        ...

    def tree_rss_bytes(self, precise: bool = False) -> int:
        """Private memory of the sandbox's process tree, read on the host.

        The cheap form may over-count shared pages (an upper bound); ``precise`` must not.
        """
        ...

    def stderr_tail(self) -> str:
        """The last few kilobytes the sandbox wrote to stderr."""
        ...


@runtime_checkable
class SandboxBackend(Protocol):
    """An isolation mechanism."""

    name: str

    def check(self) -> tuple[bool, str]:
        """Whether the backend can run here, and why not."""
        ...

    def version(self) -> str:
        """Version string of the isolation tool."""
        ...

    def describe(self) -> dict[str, Any]:
        """What a sandbox of this backend is: ``{"backend", "uid", "network"}``."""
        ...

    def spawn(self, argv: Sequence[str], limits: SandboxLimits) -> SandboxProcess:
        """Start ``argv`` in a fresh sandbox; raise ``SandboxUnavailableError`` if impossible."""
        ...


BackendFactory = Callable[[], SandboxBackend]

BUILTIN_MODULES = ("sandbox.bubblewrap", "sandbox.socket_bridge")
_REGISTRY: dict[str, BackendFactory] = {}
_LOCK = threading.Lock()
_BUILTINS_LOADED = False


def register_backend(name: str, factory: BackendFactory, *, replace: bool = False) -> None:
    """Register a backend factory under ``name`` (plugins and built-ins alike)."""
    with _LOCK:
        if name in _REGISTRY and not replace:
            raise ConfigurationError(f"sandbox backend {name!r} is already registered")
        _REGISTRY[name] = factory


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    for module in BUILTIN_MODULES:  # each registers itself on import, like a plugin would
        importlib.import_module(module)


def available_backends() -> list[str]:
    """Names of the registered backends."""
    _load_builtins()
    with _LOCK:
        return sorted(_REGISTRY)


def get_backend(name: str) -> SandboxBackend:
    """Build the backend registered under ``name``."""
    _load_builtins()
    with _LOCK:
        factory = _REGISTRY.get(name)
    if factory is None:
        known = ", ".join(available_backends()) or "(none)"
        raise ConfigurationError(f"unknown sandbox backend {name!r}; known: {known}")
    return factory()
