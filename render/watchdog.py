"""The job watchdog: it stops a job at its CPU budget or wall-clock safety stop, or dead browser.

The budget is CPU time of the whole sandbox below the worker (:mod:`sandbox.cputime`), sampled
every ``POLL_S``; wall time is only a safety stop, several times the budget. Stopping means
killing the renderers: the blocked DevTools call returns with an error, so the job can answer
(``cpu_budget`` or ``timeout``) and the worker serves the next one; the pool's wall-clock kill of
the whole sandbox stays the last resort. A dead browser can leave a DevTools call waiting forever
(measured: a screenshot pending when the browser was SIGKILLed ran into the pool's wall clock and
read as the drawing's timeout); killing the driver ends every pending call at once, and the job
reports the machinery failure (:class:`render.failures.BrowserCrashedError`) instead.

One watchdog thread serves every job of a session (:meth:`Watchdog.watch` arms it for one job),
so a job costs no thread start and no process scan beyond two CPU readings.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sandbox.cputime import TreeCpuMeter, descendant_ticks

POLL_S = 0.1
ESCALATE_S = 2.0
"""How long a stopped job may stay blocked before the driver is killed too."""


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


Stop = Literal["cpu", "wall"]


@dataclass
class JobWatch:
    """What the watchdog saw of one job: why it stopped it (if it did) and the CPU it used."""

    cpu_budget_s: float
    wall_stop_s: float
    started: float = field(default_factory=time.monotonic)
    meter: TreeCpuMeter = field(default_factory=lambda: TreeCpuMeter(descendant_ticks))
    stopped_by: Stop | None = None
    browser_died: bool = False
    driver_killed: bool = False
    """The driver was killed (the browser died, or a stopped job stayed blocked): the session
    cannot serve another job."""
    cpu_s: float = 0.0
    wall_s: float = 0.0

    @property
    def fired(self) -> bool:
        """Whether the watchdog stopped the job (CPU budget or wall-clock safety stop)."""
        return self.stopped_by is not None

    def used_cpu_s(self) -> float:
        """CPU seconds the sandbox spent since the job started (read now)."""
        return self.meter.sample()

    def close(self) -> None:
        """Record the job's CPU and wall time (once it ended)."""
        self.cpu_s = self.used_cpu_s()
        self.wall_s = time.monotonic() - self.started


class Watchdog:
    """One thread watching the current job of a session: CPU budget, wall stop, browser."""

    def __init__(self) -> None:
        """Create the (idle) watchdog; its thread starts with the first job."""
        self._job: JobWatch | None = None
        self._browsers: list[int] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watch(
        self, cpu_budget_s: float, wall_stop_s: float, browsers: list[int]
    ) -> Iterator[JobWatch]:
        """Watch one job (``browsers``: the browser's pids).

        On exit the :class:`JobWatch` holds the job's CPU and wall time.
        """
        job = JobWatch(max(0.01, cpu_budget_s), max(0.1, wall_stop_s))
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True)
                self._thread.start()
            self._browsers = browsers
            self._job = job
            self._wake.notify()
        try:
            yield job
        finally:
            with self._wake:
                self._job = None
            job.close()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while self._job is None or self._job.browser_died or self._job.driver_killed:
                    self._wake.wait()
                job = self._job
                if job.fired:  # still blocked after the renderers died: end every pending call
                    self._wake.wait(ESCALATE_S)
                    if self._job is job:
                        job.driver_killed = kill_driver() > 0
                    continue
                left = job.wall_stop_s - (time.monotonic() - job.started)
                self._wake.wait(min(POLL_S, max(0.0, left)))
                if self._job is job:
                    self._check(job, self._browsers)

    @staticmethod
    def _check(job: JobWatch, browsers: list[int]) -> None:
        if browsers and not any(_running(p) for p in browsers):
            job.browser_died = True
            job.driver_killed = kill_driver() > 0
        elif job.used_cpu_s() >= job.cpu_budget_s:
            job.stopped_by = "cpu"
            kill_renderers()  # the blocked call returns; the job answers "cpu_budget"
        elif time.monotonic() - job.started >= job.wall_stop_s:
            job.stopped_by = "wall"
            kill_renderers()  # the job answers "timeout"
