"""The job watchdog: it kills the renderers at the deadline, the driver when the browser died.

Killing the renderers makes the blocked DevTools call return with an error, so the job can answer
``timeout`` (the pool's wall-clock kill of the whole sandbox stays the last resort). A dead
browser can leave a DevTools call waiting forever (measured: a screenshot pending when the
browser was SIGKILLed ran into the pool's wall clock and read as the drawing's timeout); killing
the driver ends every pending call at once, and the job reports the machinery failure
(:class:`render.failures.BrowserCrashedError`) instead.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

POLL_S = 0.2


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


def _cmdline(pid: int) -> bytes:
    """The command line with spaces for NULs (Chromium's helpers rewrite theirs as one string)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip()
    except OSError:
        return b""


def _kill(pids: list[int]) -> int:
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    return killed


def kill_renderers() -> int:
    """SIGKILL every Chromium renderer process below this process (the job watchdog)."""
    return _kill([p for p in _descendants(os.getpid()) if b"--type=renderer" in _cmdline(p)])


def browser_pids() -> list[int]:
    """Chromium browser processes below this process (not its renderer, GPU … helpers)."""
    found = []
    for pid in _descendants(os.getpid()):
        cmdline = _cmdline(pid)
        name = os.path.basename(cmdline.split(b" ", 1)[0])
        if name in (b"chromium", b"chrome") and b"--type=" not in cmdline:
            found.append(pid)
    return found


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def kill_driver() -> int:
    """SIGKILL Playwright's driver below this process (every pending call then fails)."""
    mine = _descendants(os.getpid())
    return _kill([p for p in mine if b"playwright" in _cmdline(p)])


class Watchdog:
    """Watches one job: its deadline and the browser process."""

    def __init__(self, seconds: float) -> None:
        """Arm (but do not start) a watchdog that fires after ``seconds`` (at least 0.1 s)."""
        self.fired = False
        self.browser_died = False
        self._seconds = max(0.1, seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        deadline = time.monotonic() + self._seconds
        browsers = browser_pids()
        while not self._stop.wait(min(POLL_S, max(0.0, deadline - time.monotonic()))):
            if browsers and not any(_running(p) for p in browsers):
                self.browser_died = True
                kill_driver()
                return
            if time.monotonic() >= deadline:
                self.fired = True
                kill_renderers()  # the blocked call returns; the job answers "timeout"
                return

    def __enter__(self) -> Watchdog:
        """Start watching."""
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop watching (a watchdog that already fired stays ``fired``)."""
        self._stop.set()
        self._thread.join(timeout=1.0)
