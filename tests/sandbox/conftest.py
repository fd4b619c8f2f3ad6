"""Fixtures of the sandbox tests: skip only when bubblewrap is absent."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandbox.hostproc import tree_pids


def backend_unavailable(name: str) -> str | None:
    """Why backend ``name`` cannot run here, or ``None``."""
    if name == "bubblewrap" and shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed (Debian package 'bubblewrap')"
    from sandbox import get_backend

    ok, why = get_backend(name).check()
    return None if ok else f"sandbox backend {name!r} unusable here: {why}"


def require_backend(name: str) -> None:
    """Skip the test with a clear reason when backend ``name`` cannot run."""
    reason = backend_unavailable(name)
    if reason is not None:
        pytest.skip(reason)


def worker_pids(handler: str = "sandbox.probe:create_handler") -> list[int]:
    """Host pids of sandboxed ``handler`` workers (and their forks) started by this process."""
    pids = []
    for pid in tree_pids(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if (
            b"sandbox.worker_main" in cmdline
            and handler.encode() in cmdline
            and not (cmdline.startswith(b"/usr/bin/bwrap"))
        ):
            pids.append(pid)
    return pids
