"""The parallel-run helpers keep their promises: work units, worker port blocks, dead ports."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from tests.helpers.ports import HOST, dead_port, free_port, worker_block
from tests.helpers.server import loopback_listener
from tests.helpers.xdist import (
    GROUPS_ENV,
    SERIAL_MODULES_ENV,
    SHARED_FIXTURE_GROUPS,
    heavy_units_first,
    pytest_collection_modifyitems,
    read_groups,
    work_unit,
)

REPO = Path(__file__).resolve().parent.parent


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


GROUPED_MODULE = """import os, pathlib, pytest
def record(name):
    pathlib.Path(%r, name).write_text(os.environ["PYTEST_XDIST_WORKER"])
@pytest.mark.xdist_group("together")
def test_grouped():
    record(__name__ + "-grouped")
def test_alone():
    record(__name__ + "-alone")
"""
"""A module of the inner suite below: it records which worker ran each of its two tests."""


def test_a_group_spanning_modules_runs_on_one_worker_under_loadgroup(tmp_path: Path) -> None:
    """A real ``pytest -n 2 --dist loadgroup`` run of six modules, each with one test of group
    ``together`` and one ungrouped test: every grouped test runs on the same worker (split by
    module, as when the workers' groups never reach the scheduler, they would run on both)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    seen = tmp_path / "seen"
    seen.mkdir()
    for index in range(6):
        (suite / f"test_m{index}.py").write_text(GROUPED_MODULE % str(seen), encoding="utf-8")
    scratch = tmp_path / "tmp"  # where the inner controller names its groups file
    scratch.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": str(scratch),
    }
    env.pop(GROUPS_ENV, None)
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.helpers.xdist",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            str(suite),
        ],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    workers = {p.name: p.read_text() for p in seen.iterdir()}
    assert len(workers) == 12
    grouped = {w for name, w in workers.items() if name.endswith("-grouped")}
    assert len(grouped) == 1, workers
    assert len(set(workers.values())) == 2  # both workers ran tests: the group is not all
    assert not list(scratch.glob("regua-xdist-groups-*"))  # the controller removed its file


def test_the_scheduler_reads_no_groups_where_no_worker_wrote_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GROUPS_ENV, str(tmp_path / "absent.json"))
    assert read_groups() == {}
    (tmp_path / "absent.json").write_text("", encoding="utf-8")
    assert read_groups() == {}
    (tmp_path / "absent.json").write_text('{"t.py::x": "g"}', encoding="utf-8")
    assert read_groups() == {"t.py::x": "g"}
    assert work_unit("t.py::x", read_groups()) == "group:g"
    assert work_unit("t.py::y", read_groups()) == "t.py"
