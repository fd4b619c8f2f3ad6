"""Killing a real ``regua serve`` mid-call: a fake model that holds calls, and a hard kill.

:class:`Gate` answers the first ``free`` calls at once and holds every later one until the test
opens it, so a test knows exactly which calls are in flight when it kills the server (SIGKILL
to its whole process group, as a crashed machine would lose it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from regua.llm.testing import FakeModelServer, Reply, Request
from service.storage import Database
from tests.helpers.api_client import JsonClient
from tests.helpers.server import Served

SVG = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


class Gate:
    """Answers ``reply(request)`` (default: the SVG); calls past the first ``free`` wait for
    :meth:`open` (``held`` counts the calls waiting)."""

    def __init__(self, free: int, reply: Callable[[Request], str] | None = None) -> None:
        self.free = free
        self.reply = reply or (lambda _r: SVG)
        self.calls = 0
        self.held = 0
        self.opened = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            self.calls += 1
            hold = self.calls > self.free and not self.opened.is_set()
            self.held += hold
        if hold:
            assert self.opened.wait(120), "the test never opened the gate"
        return Reply(text=self.reply(request))

    def open(self) -> None:
        """Answer every held call and every later one at once."""
        self.opened.set()


def keys_sent(model: FakeModelServer[Gate]) -> Counter[str | None]:
    """How often the server saw each ``Idempotency-Key``."""
    return Counter(r.headers.get("idempotency-key") for r in model.requests)


def kill_hard(served: Served) -> None:
    """SIGKILL the server's whole process group (its render workers too) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(served.proc.pid, signal.SIGKILL)
    served.proc.wait(30)
    served.log.close()


def wait_until(what: Callable[[], bool], timeout_s: float, label: str) -> None:
    """Poll ``what`` until true; fail naming ``label`` at the deadline (it only bounds a hang)."""
    deadline = time.monotonic() + timeout_s
    while not what():
        assert time.monotonic() < deadline, f"timed out waiting for {label}"
        time.sleep(0.05)


def sqlite_db(data: Path) -> Database:
    """The served data folder's database, opened by the test (no migration)."""
    return Database(f"sqlite:///{data / 'regua.sqlite3'}", migrate=False)


def finished_generation(client: JsonClient, job_id: str, timeout_s: float) -> dict[str, Any]:
    """The view of generation ``job_id`` once the server ``client`` talks to has ended it."""

    def ended() -> bool:
        return bool(client.generation(job_id)["state"] != "running")

    wait_until(ended, timeout_s, "the job")
    return client.generation(job_id)
