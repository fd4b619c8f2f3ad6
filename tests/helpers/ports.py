"""Loopback ports for servers under test that no other xdist worker of the run can pick.

A server started in this process should bind port 0 and report the port it got (uvicorn on a
pre-bound socket in ``tests/helpers/server.py``, moto in ``tests/helpers/s3.py``). A server in a
subprocess needs its port up front: :func:`free_port` gives one from this worker's own block,
below the kernel's ephemeral range (so no outgoing connection takes it meanwhile) and apart from
every other worker's block; :func:`dead_port` gives an address where nothing listens.
"""

from __future__ import annotations

import contextlib
import random
import socket
from collections import deque
from collections.abc import Iterator

from tests.helpers.workers import worker_index

BASE = 20000
"""First port of worker ``gw0``'s block (the ephemeral range starts at 32768)."""
BLOCK = 500
"""Ports per worker: ``gwN`` picks from ``BASE + N * BLOCK`` on (up to 24 workers)."""
HOST = "127.0.0.1"

_rng = random.SystemRandom()  # concurrent test sessions on one machine start at different ports
_recent: deque[int] = deque(maxlen=BLOCK // 4)  # handed out, maybe not bound yet


def worker_block() -> range:
    """The ports this process may hand out."""
    start = BASE + (worker_index() % 24) * BLOCK
    return range(start, start + BLOCK)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """A port of this worker's block that was free a moment ago and was not handed out
    recently by this process (a subprocess given it may not have bound it yet)."""
    block = worker_block()
    for _ in range(4 * BLOCK):
        port = _rng.choice(block)
        if port not in _recent and _bindable(port):
            _recent.append(port)
            return port
    raise RuntimeError(f"no free loopback port in {block.start}-{block.stop - 1}")


@contextlib.contextmanager
def dead_port() -> Iterator[int]:
    """A port held bound but not listening while the block runs: a connection to it is
    refused, and no other server can take it meanwhile."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        yield int(sock.getsockname()[1])
