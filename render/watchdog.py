"""The job watchdog: at the deadline it kills the worker's Chromium renderers.

Killing them makes the blocked DevTools call return with an error, so the job can answer
``timeout`` (the pool's wall-clock kill of the whole sandbox stays the last resort).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path


def _descendants(root: int) -> list[int]:
    """Pids of ``root``'s descendants (Chromium runs under Playwright's driver process)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_bytes()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def kill_renderers() -> int:
    """SIGKILL every Chromium renderer process below this process (the job watchdog)."""
    killed = 0
    for pid in _descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"--type=renderer" in cmdline:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


class Watchdog:
    """Kills the renderers when a job passes its deadline, so the blocked call returns."""

    def __init__(self, seconds: float) -> None:
        """Arm (but do not start) a timer that fires after ``seconds`` (at least 0.1 s)."""
        self.fired = False
        self._timer = threading.Timer(max(0.1, seconds), self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        kill_renderers()

    def __enter__(self) -> Watchdog:
        """Start the timer."""
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Cancel the timer (a watchdog that already fired stays ``fired``)."""
        self._timer.cancel()
