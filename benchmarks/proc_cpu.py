"""CPU time by process type and peak memory of a render pool's sandboxes, from ``/proc``.

A sandboxed render worker is a tree of processes: bubblewrap, the worker's Python, Playwright's
node driver, and Chromium's browser, GPU, renderer, utility and zygote processes. A
:class:`TreeSnapshot` before and one after a run tell which of them spent the run's CPU time.

A process is keyed by pid and start time. One that started during the run counts whole; one that
ended during it is missing from the second snapshot, so its last stretch is not counted (Chromium
reaps its helpers with ``SIGCHLD`` ignored: their times reach no parent's ``cutime``). The
remainder of the tree's total is printed as ``unattributed`` when it is not zero.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
_TYPE = re.compile(rb"--type=([a-z-]+)")
_SUBTYPE = re.compile(rb"--utility-sub-type=([\w.]+)")


def process_type(cmdline: bytes) -> str:
    """A short name for a process of a render sandbox, from its command line.

    Chromium's helpers rewrite their command line as one string (spaces, not NULs, and its start
    may be cut), so they are told by their ``--type=`` switch.
    """
    kind = _TYPE.search(cmdline)
    if kind is not None:
        sub = _SUBTYPE.search(cmdline) if kind.group(1) == b"utility" else None
        return f"chromium-{kind.group(1).decode()}" + (f":{sub.group(1).decode()}" if sub else "")
    argv0 = os.path.basename(cmdline.split(b"\0", 1)[0].split(b" ", 1)[0]).decode(errors="replace")
    if argv0 == "node":
        return "playwright-driver"
    if argv0.startswith("python"):
        return "worker-python"
    if argv0 in ("chromium", "chrome"):
        return "chromium-browser"
    return argv0 or "?"


def _processes() -> Iterator[tuple[int, list[bytes], bytes]]:
    """``(pid, stat fields after the command name, command line)`` of every process now.

    The fields start at the state (``fields[1]`` is the parent's pid); a process that ends
    while it is read is left out.
    """
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_bytes()
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
        except OSError:
            continue
        yield int(entry.name), stat[stat.rfind(b")") + 2 :].split(), cmdline


@dataclass(frozen=True)
class _Proc:
    ppid: int
    ticks: int
    kind: str


class TreeSnapshot:
    """The CPU ticks and type of every process below ``root`` (``root`` itself excluded)."""

    def __init__(self, root: int | None = None) -> None:
        """Read ``/proc`` now."""
        self.root = os.getpid() if root is None else root
        every: dict[tuple[int, int], _Proc] = {}
        for pid, fields, cmdline in _processes():
            key = (pid, int(fields[19]))
            ticks = int(fields[11]) + int(fields[12])
            every[key] = _Proc(int(fields[1]), ticks, process_type(cmdline))
        children: dict[int, list[tuple[int, int]]] = {}
        for key, proc in every.items():
            children.setdefault(proc.ppid, []).append(key)
        self.procs: dict[tuple[int, int], _Proc] = {}
        todo = list(children.get(self.root, ()))
        while todo:
            key = todo.pop()
            self.procs[key] = every[key]
            todo.extend(children.get(key[0], ()))


def cpu_by_type(before: TreeSnapshot, after: TreeSnapshot) -> dict[str, float]:
    """CPU seconds each process type spent between two snapshots, largest first.

    A process's type is read at the second snapshot (a renderer forked from Chromium's zygote
    renames itself after the fork).
    """
    spent: Counter[str] = Counter()
    for key, proc in after.procs.items():
        old = before.procs.get(key)
        spent[proc.kind] += proc.ticks - (old.ticks if old is not None else 0)
    return {kind: ticks * TICK_S for kind, ticks in spent.most_common()}


class RssSampler:
    """Peak private RSS per sandbox (bwrap child of this process), sampled inside ``with`` blocks.

    The same sampler may be entered again: the peaks are kept across its blocks.
    """

    def __init__(self) -> None:
        """No sample yet; a sampling thread runs during each ``with`` block."""
        self.peaks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        from sandbox.bubblewrap import tree_rss_bytes

        me = os.getpid()
        while not self._stop.wait(0.2):
            for pid, fields, cmdline in _processes():
                if int(fields[1]) == me and b"bwrap" in cmdline[:40]:
                    self.peaks[pid] = max(self.peaks.get(pid, 0), tree_rss_bytes(pid))

    def __enter__(self) -> RssSampler:
        """Start sampling every 0.2 s."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop sampling."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
