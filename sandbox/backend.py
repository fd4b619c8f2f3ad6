"""The backend interface (a Protocol) and the registry of isolation backends.

A backend turns an argv into a process running in isolation. Built-in backends register exactly
like plugins: ``register_backend("name", factory)``; ``get_backend("name")`` builds one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol, runtime_checkable

from regua.registry import Registry
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

BACKENDS: Registry[BackendFactory] = Registry(
    "sandbox backend",
    builtins=("sandbox.bubblewrap", "sandbox.socket_bridge"),
    entry_point_group="regua.sandbox_backends",
)
"""Isolation backends by name; the built-in modules register themselves on import."""
register_backend = BACKENDS.register
"""``register_backend(name, factory, *, replace=False)``: plugins and built-ins alike."""
available_backends = BACKENDS.names
"""Names of the registered backends, sorted."""


def get_backend(name: str) -> SandboxBackend:
    """Build the backend registered under ``name`` (:class:`UnknownPluginError` otherwise)."""
    return BACKENDS.get(name)()
