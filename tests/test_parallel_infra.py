"""The parallel-run helpers keep their promises: work units, worker port blocks, dead ports."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import cast

import pytest

from tests.helpers.ports import HOST, dead_port, free_port, worker_block
from tests.helpers.server import loopback_listener
from tests.helpers.xdist import (
    SERIAL_MODULES_ENV,
    SHARED_FIXTURE_GROUPS,
    heavy_units_first,
    pytest_collection_modifyitems,
    work_unit,
)


def test_a_module_is_one_work_unit_and_a_group_spans_modules() -> None:
    assert work_unit("tests/a/test_b.py::test_c") == "tests/a/test_b.py"
    assert work_unit("tests/a/test_b.py::Case::test_c[sqlite]") == "tests/a/test_b.py"
    assert work_unit("tests/a/test_b.py::test_c[user@host]") == "tests/a/test_b.py"
    assert work_unit("tests/a/test_b.py::test_c[x]@calibrated") == "group:calibrated"
    assert work_unit("tests/d/test_e.py::test_f@calibrated") == "group:calibrated"


def test_free_ports_come_from_this_workers_block_and_do_not_repeat() -> None:
    block = worker_block()
    assert block.stop <= 32768  # below the kernel's ephemeral range
    ports = [free_port() for _ in range(20)]
    assert all(p in block for p in ports)
    assert len(set(ports)) == len(ports)  # a port handed out is not handed out again soon
    with socket.socket() as sock:
        sock.bind((HOST, ports[-1]))  # and it was really free


def test_a_served_apps_connections_send_without_waiting_for_acks() -> None:
    """A connection accepted from the tests' listener as uvicorn accepts it (asyncio) has
    TCP_NODELAY: without it every answer of a served app waited ~40 ms for a delayed ACK."""

    async def nodelay_of_accepted() -> int:
        loop = asyncio.get_running_loop()
        seen: asyncio.Future[int] = loop.create_future()

        class Accepted(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        listener = loopback_listener()
        server = await loop.create_server(Accepted, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname())
        try:
            return await asyncio.wait_for(seen, 30)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(nodelay_of_accepted()) != 0


def test_a_dead_port_refuses_connections_while_held() -> None:
    with dead_port() as port, pytest.raises(ConnectionRefusedError):
        socket.create_connection((HOST, port), timeout=10).close()


class _Item:
    """What heavy_units_first reads of a collected test."""

    def __init__(self, nodeid: str, *marks: pytest.Mark) -> None:
        self.nodeid = nodeid
        self._marks = {m.name: m for m in marks}

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self._marks.get(name)

    def add_marker(self, mark: pytest.MarkDecorator) -> None:
        self._marks[mark.name] = mark.mark


def test_heavy_units_are_handed_out_first_and_units_stay_whole() -> None:
    heavy = pytest.mark.heavy.mark
    group = pytest.mark.xdist_group("far").mark
    shared = pytest.mark.xdist_group(SHARED_FIXTURE_GROUPS[0]).mark
    items = [
        _Item("tests/a.py::one"),
        _Item("tests/b.py::x"),
        _Item("tests/b.py::y", heavy),
        _Item("tests/c.py::k", group),
        _Item("tests/a.py::two"),
        _Item("tests/d.py::s", shared),
        _Item("tests/e.py::lone"),
    ]
    ordered = [i.nodeid for i in heavy_units_first(cast(list[pytest.Item], items))]
    assert ordered == [
        "tests/b.py::x",  # a unit with a heavy test, whole and in its order
        "tests/b.py::y",
        "tests/d.py::s",  # a shared fixture's users
        "tests/a.py::one",  # then by number of tests
        "tests/a.py::two",
        "tests/c.py::k",
        "tests/e.py::lone",
    ]


def test_a_run_lists_the_modules_of_its_serial_tests_and_skips_them_beside_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the serial step of ``make test`` collects: each module holding a serial test, once."""
    out = tmp_path / "serial-modules"
    monkeypatch.setenv(SERIAL_MODULES_ENV, str(out))
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
    serial = pytest.mark.serial.mark
    items = [
        _Item("tests/a.py::one"),
        _Item("tests/b.py::x[sqlite]", serial),
        _Item("tests/b.py::y", serial),
        _Item("tests/c.py::z", serial),
    ]
    config = cast(pytest.Config, None)
    pytest_collection_modifyitems(config, cast(list[pytest.Item], items))
    assert out.read_text(encoding="utf-8").splitlines() == ["tests/b.py", "tests/c.py"]
    skipped = {i.nodeid for i in items if i.get_closest_marker("skip") is not None}
    assert skipped == {"tests/b.py::x[sqlite]", "tests/b.py::y", "tests/c.py::z"}
    assert list(tmp_path.iterdir()) == [out]  # no part file left behind
