"""regua: sandbox — process isolation backends, worker lifecycle, limits and the wire protocol.

Generic: knows nothing about rendering. See ``docs/contracts.md`` (section *sandbox*) and
``docs/sandbox.md``.
"""

from sandbox.backend import (
    SandboxBackend,
    SandboxProcess,
    available_backends,
    get_backend,
    register_backend,
)
from sandbox.limits import SandboxLimits
from sandbox.pool import WorkerPool
from sandbox.worker import JobOutcome, Worker, WorkerStartError

__all__ = [
    "JobOutcome",
    "SandboxBackend",
    "SandboxLimits",
    "SandboxProcess",
    "Worker",
    "WorkerPool",
    "WorkerStartError",
    "available_backends",
    "get_backend",
    "register_backend",
]
