"""A cgroup v2 memory cap for one sandbox's whole process tree, where the host allows one.

``memory_cgroup_base(setting)`` finds where a sandbox's cgroup can be made: an explicit folder
(``SandboxLimits.cgroup`` / ``REGUA_SANDBOX_CGROUP``), or with ``auto`` the host process's own
cgroup v2 folder when it is writable and delegates the ``memory`` controller to its children
(``cgroup.subtree_control``). Each sandbox then gets ``<base>/regua-<pid>-<n>`` with
``memory.max`` = ``memory_mb``, no swap, and ``memory.oom.group`` (the kernel kills the whole
tree at the cap), and bwrap is started inside it (a shell writes its own pid into
``cgroup.procs`` and then execs bwrap, so nothing of the sandbox ever runs outside).

Where no such folder exists (cgroup v1 hosts, containers without delegation) the cap is held by
the host-side watchdog on the tree's private memory (``sandbox.worker``), sampled every
``memory_sample_s``. ``BubblewrapBackend.memory_cap`` says which one is in force, and why.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from pathlib import Path

_COUNTER = itertools.count(1)


def _cgroup2_mount() -> Path | None:
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split(" ", 1)[0] == "cgroup2":
                return Path(left.split()[4])
    except OSError:
        return None
    return None


def _own_cgroup() -> str | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    except OSError:
        return None
    return None


def usable_base(base: Path) -> tuple[bool, str]:
    """Whether sandboxes' memory cgroups can be created under ``base``, and why not."""
    try:
        controllers = (base / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return False, f"{base} is not a cgroup v2 folder ({exc.strerror or exc})"
    if "memory" not in controllers:
        return False, f"{base} does not delegate the memory controller to its children"
    if not os.access(base, os.W_OK):
        return False, f"{base} is not writable"
    return True, f"cgroup v2 under {base}"


def memory_cgroup_base(setting: str) -> tuple[Path | None, str]:
    """Where to create sandbox cgroups (None: use the watchdog), with the reason."""
    if setting == "off":
        return None, "cgroup cap switched off (sandbox_cgroup=off)"
    if setting != "auto":
        base = Path(setting)
        ok, why = usable_base(base)
        return (base if ok else None), why
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        return None, "no cgroup v2 hierarchy for this process"
    base = mount / own.lstrip("/")
    ok, why = usable_base(base)
    return (base if ok else None), why


def create_memory_cgroup(base: Path, memory_mb: int) -> Path:
    """A fresh cgroup under ``base`` capped at ``memory_mb`` (no swap, whole-group OOM kill)."""
    path = base / f"regua-{os.getpid()}-{next(_COUNTER)}"
    path.mkdir(mode=0o755)
    (path / "memory.max").write_text(str(memory_mb * 1024 * 1024))
    for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
        with contextlib.suppress(OSError):
            (path / name).write_text(value)
    return path


def enter_and_exec(path: Path, command: list[str]) -> list[str]:
    """``command`` prefixed so that it starts inside the cgroup at ``path``."""
    script = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
    return ["/bin/sh", "-c", script, "sh", str(path), *command]


def oom_killed(path: Path) -> bool:
    """Whether the kernel killed something in the cgroup at its memory cap."""
    try:
        for line in (path / "memory.events").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and int(value) > 0:
                return True
    except (OSError, ValueError):
        return False
    return False


def remove_cgroup(path: Path) -> None:
    """Kill what is left in the cgroup and remove it (best effort)."""
    with contextlib.suppress(OSError):
        (path / "cgroup.kill").write_text("1")
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.02)
