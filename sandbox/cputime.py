"""CPU time of a sandbox's whole process tree: the measure render budgets are kept in.

Wall time depends on how busy the machine is; CPU time (user + system, every process and thread
of the tree, including the ones that already exited) does not, so budgets are kept in CPU time
and wall time is only a safety stop.

Two sources, the same quantity:

- :func:`cgroup_cpu_s`: ``usage_usec`` of the sandbox's cgroup v2 ``cpu.stat`` (microseconds,
  exact, one file read) where the host delegates a cgroup to each sandbox (``sandbox.cgroup``);
- :func:`tree_cpu_s`: the process tree's rusage read from ``/proc``: for every live process of
  the tree ``utime + stime`` (all its threads) plus ``cutime + cstime`` (its children that exited
  and were reaped), in clock ticks. A process that exits moves from the first sum into its
  parent's second one, so the total only grows.

Inside a sandbox (its own pid namespace) ``/proc`` holds only the sandbox's processes, so one scan
of it is cheap (:func:`process_tree_cpu_s`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state is field 0)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _cpu_ticks(fields: list[bytes]) -> int:
    """Utime + stime + cutime + cstime (fields 14-17 of ``stat``, here 11-14)."""
    return int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])


def tree_cpu_s(pids: Iterable[int]) -> float:
    """CPU seconds of the processes ``pids`` (a whole tree: root and every descendant)."""
    ticks = 0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None:
            ticks += _cpu_ticks(fields)
    return ticks * _TICK_S


def process_tree_cpu_s(root: int | None = None) -> float:
    """CPU seconds of ``root`` (default: this process) and all its descendants, one ``/proc`` scan.

    Inside a sandbox this is the whole sandbox below the worker: the browser, its renderer, GPU
    and utility processes, the driver, and the worker itself.
    """
    top = os.getpid() if root is None else root
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat_fields(entry.name)
            if fields is not None:
                parent[int(entry.name)] = int(fields[1])
                ticks[int(entry.name)] = _cpu_ticks(fields)
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [top]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total * _TICK_S


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
