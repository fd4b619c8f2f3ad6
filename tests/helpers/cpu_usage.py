"""Per-test CPU of the whole process tree, for finding where the suite's time goes.

Not loaded by default. Load it with ``-p tests.helpers.cpu_usage`` and name a cgroup v1
``cpuacct`` folder this user may create groups in and a file for the records::

    REGUA_TEST_CPU_CGROUP=/sys/fs/cgroup/cpuacct/suite REGUA_TEST_CPU_OUT=/tmp/cpu.jsonl \\
        .venv/bin/python -m pytest -p tests.helpers.cpu_usage -n 3 --dist loadgroup ...

Each pytest process (the xdist controller and every worker) moves itself into a group of its
own (``main``, ``gw0``, ...), so everything it starts afterwards (servers, fleet workers, CLI
runs, Chromium, bubblewrap) is counted there too. A worker runs one test at a time, so the
growth of its group's ``cpuacct.usage`` over a test's setup, call and teardown is that test's
CPU, whatever else runs on the machine (the last test of a worker also carries the teardown of
its session fixtures, e.g. ``render_pool``). Not counted: the PostgreSQL server's own processes
(they are not the test's children). Each record is a JSON line: ``nodeid``, ``worker``,
``cpu_s``, ``wall_s``, ``start`` (Unix time).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.workers import worker_id

CGROUP_ENV = "REGUA_TEST_CPU_CGROUP"
OUT_ENV = "REGUA_TEST_CPU_OUT"


class _State:
    group: Path | None = None


def _usage_s() -> float:
    assert _State.group is not None
    return int((_State.group / "cpuacct.usage").read_text()) / 1e9


def _record(**fields: Any) -> None:
    out = os.environ.get(OUT_ENV)
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(fields) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    """Move this pytest process into its own group under ``REGUA_TEST_CPU_CGROUP``."""
    del config
    root = os.environ.get(CGROUP_ENV)
    if not root:
        return
    group = Path(root) / worker_id()
    group.mkdir(parents=True, exist_ok=True)
    (group / "cgroup.procs").write_text(str(os.getpid()))
    _State.group = group


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    """Record one test's CPU (setup, call and teardown, with every process it started)."""
    if _State.group is None:
        yield
        return
    cpu, wall, start = _usage_s(), time.monotonic(), time.time()
    yield
    cpu_s, wall_s = _usage_s() - cpu, time.monotonic() - wall
    _record(nodeid=item.nodeid, worker=worker_id(), cpu_s=cpu_s, wall_s=wall_s, start=start)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Record the group's total (collection and session fixtures included)."""
    del config
    if _State.group is not None:
        _record(nodeid=None, worker=worker_id(), cpu_s=_usage_s(), wall_s=None, start=time.time())
