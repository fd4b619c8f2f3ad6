"""CPU time of a sandbox's whole process tree: the measure render budgets are kept in.

Wall time depends on how busy the machine is; CPU time (user + system, every process and thread
of the tree) does not, so budgets are kept in CPU time and wall time is only a safety stop.

Two sources, the same quantity:

- :func:`cgroup_cpu_s`: ``usage_usec`` of the sandbox's cgroup v2 ``cpu.stat`` (microseconds,
  exact, one file read, counts processes that already exited) where the host delegates a cgroup
  to each sandbox (``sandbox.cgroup``);
- :class:`TreeCpuMeter`: the process tree's rusage read from ``/proc``: ``utime + stime`` of
  every process (all its threads) seen since the meter started, each process keyed by pid and
  start time. A process that exits keeps the last value read for it: Chromium's helpers reap
  their children with ``SIGCHLD`` ignored, which discards the children's times instead of adding
  them to the parent's ``cutime``, so the tree's total must be kept by the meter. A process that
  exits between two readings loses at most its last interval.

Inside a sandbox (its own pid namespace) ``/proc`` holds only the sandbox's processes, so one scan
of it is cheap (:func:`descendant_ticks`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
Ticks = dict[tuple[int, int], int]
"""CPU clock ticks (utime + stime) by (pid, start time)."""


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state is field 0)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def pid_ticks(pids: Iterable[int]) -> Ticks:
    """CPU ticks of each of ``pids`` that is still running."""
    out: Ticks = {}
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None:
            out[(pid, int(fields[19]))] = int(fields[11]) + int(fields[12])
    return out


def descendant_ticks(root: int | None = None) -> Ticks:
    """CPU ticks of ``root`` (default: this process) and all its descendants, one ``/proc`` scan.

    Inside a sandbox this is the whole sandbox below the worker: the browser, its renderer, GPU
    and utility processes, the driver, and the worker itself.
    """
    top = os.getpid() if root is None else root
    parent: dict[int, int] = {}
    ticks: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat_fields(entry.name)
            if fields is not None:
                pid = int(entry.name)
                parent[pid] = int(fields[1])
                ticks[pid] = (int(fields[19]), int(fields[11]) + int(fields[12]))
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    out: Ticks = {}
    todo = [top]
    while todo:
        pid = todo.pop()
        if pid in ticks:
            start, used = ticks[pid]
            out[(pid, start)] = used
        todo.extend(children.get(pid, ()))
    return out


class TreeCpuMeter:
    """CPU seconds a process tree spent since the meter started (see the module docstring)."""

    def __init__(self, read: Callable[[], Ticks]) -> None:
        """Take the baseline with ``read`` (e.g. :func:`descendant_ticks`)."""
        self._read = read
        self._base = read()
        self._last = dict(self._base)

    def sample(self) -> float:
        """Read the tree again; returns the CPU seconds used since the baseline."""
        self._last.update(self._read())
        return self.used_s()

    def used_s(self) -> float:
        """CPU seconds used since the baseline, as of the last reading."""
        ticks = sum(v - self._base.get(k, 0) for k, v in self._last.items())
        return max(0, ticks) * TICK_S


class CgroupCpuMeter:
    """CPU seconds a cgroup v2 folder's processes spent since the meter started (exact)."""

    def __init__(self, path: Path) -> None:
        """Take the baseline from ``path/cpu.stat``."""
        self._path = path
        self._base = cgroup_cpu_s(path) or 0.0
        self._last = self._base

    def sample(self) -> float:
        """Read ``cpu.stat`` again; returns the CPU seconds used since the baseline."""
        now = cgroup_cpu_s(self._path)
        if now is not None:
            self._last = now
        return self.used_s()

    def used_s(self) -> float:
        """CPU seconds used since the baseline, as of the last reading."""
        return max(0.0, self._last - self._base)


def cgroup_cpu_s(path: Path) -> float | None:
    """``usage_usec`` of a cgroup v2 folder in seconds (None when it cannot be read)."""
    try:
        for line in (path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
    except (OSError, ValueError):
        return None
    return None
