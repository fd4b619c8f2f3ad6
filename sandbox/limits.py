"""Resource limits applied to one sandbox (one long-lived worker and its whole process tree)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class SandboxLimits:
    """Bounds on a sandbox.

    ``memory_mb`` bounds memory in two ways: ``RLIMIT_DATA`` (private writable memory per
    process; ``RLIMIT_AS`` is not used because Chromium and V8 reserve terabytes of address space
    up front and refuse to start under any useful ``RLIMIT_AS``) and a host-side watchdog on the
    RSS of the sandbox's whole process tree, which kills the sandbox (cause ``oom``).
    ``cpu_s`` is ``RLIMIT_CPU`` per process, ``max_processes`` is ``RLIMIT_NPROC`` (processes *and
    threads* of the sandbox uid inside its user namespace), ``max_open_files`` is
    ``RLIMIT_NOFILE``, ``wall_timeout_s`` the default wall-clock limit of one job, and
    ``max_output_bytes`` the cap on one job's result (JSON plus files).
    ``memory_sample_s`` is how often the watchdog samples the tree's memory while a job runs
    (fast enough to hold the cap against a drawing that allocates quickly), and ``cgroup`` where
    a cgroup v2 cap for the whole tree is made: ``auto`` (the host process's own cgroup when it
    delegates the memory controller), ``off``, or a cgroup v2 folder (see ``sandbox.cgroup``).
    """

    memory_mb: int = 4096
    cpu_s: int = 600
    max_processes: int = 512
    max_open_files: int = 1024
    wall_timeout_s: float = 30.0
    max_output_bytes: int = 64 * 1024 * 1024
    tmpfs_mb: int = 256
    memory_sample_s: float = 0.1
    cgroup: str = "auto"

    def __post_init__(self) -> None:
        """Refuse any limit that is not positive."""
        for name, value in asdict(self).items():
            if isinstance(value, int | float) and value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (recorded with results)."""
        return asdict(self)
