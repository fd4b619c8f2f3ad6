"""Host-side process helpers: the spawner thread, process trees and their memory, from /proc."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class Spawner:
    """One long-lived thread that starts every sandbox.

    ``--die-with-parent`` is ``PR_SET_PDEATHSIG``, which fires when the *thread* that forked bwrap
    exits — a sandbox started from a short-lived thread (a request, a warm-up executor) would be
    killed with it. All ``Popen`` calls therefore happen on this thread, which lives as long as
    the process.
    """

    def __init__(self) -> None:
        """Create the job queue; the spawning thread starts on first use."""
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while True:
            func, future = self._jobs.get()
            try:
                future.set_result(func())
            except BaseException as exc:
                future.set_exception(exc)

    def call(self, func: Callable[[], Any]) -> Any:
        """Run ``func`` on the spawner thread and return its result."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="regua-spawner", daemon=True
                )
                self._thread.start()
        future: Future[Any] = Future()
        self._jobs.put((func, future))
        return future.result()


SPAWNER = Spawner()


_HAS_CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` from ``/proc/PID/task/*/children`` (each thread's forks)."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def tree_pids(root: int) -> list[int]:
    """``root`` and all its descendants (host pids), read from ``/proc``.

    Walks the tree's own ``children`` files where the kernel has them (cost: the tree's size,
    so the memory watchdog can sample often); otherwise scans every process once.
    """
    if _HAS_CHILDREN_FILES:
        pids, todo = [], [root]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo.extend(_children(pid))
        return pids
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, ()))
    return pids


def tree_rss_bytes(root: int, precise: bool = False) -> int:
    """Private memory of ``root``'s process tree.

    Cheap form: the sum of ``RssAnon + RssShmem`` from ``/proc/PID/status`` — an upper bound,
    because a page shared by n processes (copy-on-write after ``fork``, Chromium's shared memory)
    counts n times. ``precise``: the sum of ``Pss_Anon + Pss_Shmem`` from ``smaps_rollup``, which
    counts such a page 1/n in each process (slower: it walks the page tables).
    """
    source = "smaps_rollup" if precise else "status"
    keys = (b"Pss_Anon:", b"Pss_Shmem:") if precise else (b"RssAnon:", b"RssShmem:")
    total = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/{source}", "rb") as fh:
                for line in fh:
                    if line.startswith(keys):
                        total += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return total
