"""How the suite runs in parallel (pytest-xdist), and what one worker owns.

Loaded by ``tests/conftest.py`` (``pytest_plugins``). ``make test`` runs
``pytest -n N --dist loadgroup -m "not serial"`` and then ``pytest -m serial`` alone; see
``tests/README.md`` for the rules an xdist-safe test keeps. This plugin:

- makes a work unit of every test module (its module fixtures are built once, on one worker)
  or, for tests marked ``xdist_group(NAME)``, of every test in group NAME, wherever it lives;
- puts every test that uses an expensive session fixture named in :data:`SHARED_FIXTURE_GROUPS`
  into that fixture's group, so the fixture is built by one worker only, for any new test too;
- tells the controller's scheduler each grouped test's group through a file
  (:data:`GROUPS_ENV`): xdist 3.8 marks a grouped test by suffixing ``item._nodeid`` with
  ``@NAME``, which pytest 9 no longer reads (its node id lives in ``Node._id``), so without the
  file every group would silently fall apart into its modules;
- skips a ``serial`` test when several workers run (it would disturb the others), saying where
  it runs instead;
- writes the modules that hold ``serial`` tests to the file named by ``REGUA_SERIAL_MODULES``
  (when set), so the serial step of ``make test`` collects only them, not the whole suite again;
- hands out the ``heavy`` work units first (a unit with a test marked ``heavy``, or the users of a
  shared fixture), then the others by their number of tests: a unit of minutes started last
  would leave the other workers idle while it runs (xdist alone orders by number of tests only,
  which puts a module of three long tests near the end).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.workers import worker_count

if TYPE_CHECKING:
    from xdist.scheduler import LoadScopeScheduling

SERIAL = "serial"
"""Marker of a test that must run alone (it restarts a shared server, say)."""
HEAVY = "heavy"
"""Marker of a test of tens of seconds or more: its work unit is handed out first."""

SERIAL_MODULES_ENV = "REGUA_SERIAL_MODULES"
"""Where a run writes the modules of its ``serial`` tests, one path a line (when set)."""

GROUPS_ENV = "REGUA_XDIST_GROUPS"
"""The file where each worker writes the group of every grouped test (JSON, node id -> group
name) for the controller's scheduler; the controller names a fresh one before it starts them."""

SHARED_FIXTURE_GROUPS = ("geometry_calibrated",)
"""Session fixtures worth building once per run rather than once per worker (tens of seconds
each): every test that uses one runs on the same worker, in the group of the fixture's name."""


def pytest_configure(config: pytest.Config) -> None:
    """In the controller of a ``--dist loadgroup`` run: name the file its workers will write
    their tests' groups to (they inherit the environment when it starts them)."""
    if getattr(config.option, "dist", "no") != "loadgroup" or hasattr(config, "workerinput"):
        return
    descriptor, path = tempfile.mkstemp(prefix="regua-xdist-groups-", suffix=".json")
    os.close(descriptor)
    before = os.environ.get(GROUPS_ENV)
    os.environ[GROUPS_ENV] = path

    def forget() -> None:
        Path(path).unlink(missing_ok=True)
        if before is None:
            os.environ.pop(GROUPS_ENV, None)
        else:
            os.environ[GROUPS_ENV] = before

    config.add_cleanup(forget)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the users of shared session fixtures; skip serial tests beside other workers.

    Runs before xdist's own hook, which turns ``xdist_group`` marks into work units."""
    del config
    serial_modules: dict[str, None] = {}
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for name in SHARED_FIXTURE_GROUPS:
            if name in fixtures:
                item.add_marker(pytest.mark.xdist_group(name))
        if item.get_closest_marker(SERIAL) is None:
            continue
        serial_modules[item.nodeid.split("::", 1)[0]] = None
        if worker_count() > 1:
            item.add_marker(
                pytest.mark.skip(
                    reason=f"marked {SERIAL!r}: it must run alone, never beside other xdist "
                    "workers; `make test` runs it in its own step (pytest -m serial)"
                )
            )
    items[:] = heavy_units_first(items)
    out = os.environ.get(SERIAL_MODULES_ENV)
    if out:
        write_lines(Path(out), list(serial_modules))
    groups_out = os.environ.get(GROUPS_ENV)
    if groups_out and os.environ.get("PYTEST_XDIST_WORKER"):
        groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
        write_lines(Path(groups_out), [json.dumps(groups)])


def write_lines(path: Path, lines: list[str]) -> None:
    """Replace ``path`` with ``lines`` at once (every xdist worker writes the same list)."""
    part = path.with_name(f"{path.name}.{os.getpid()}")
    part.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    os.replace(part, path)


def group_of(item: pytest.Item) -> str | None:
    """The ``xdist_group`` of a collected test (its closest mark), if it has one."""
    group = item.get_closest_marker("xdist_group")
    if group is None:
        return None
    return str(group.args[0] if group.args else group.kwargs.get("name", "default"))


def unit_of(item: pytest.Item) -> str:
    """The work unit of a collected test (the same as :func:`work_unit` of its xdist node id)."""
    group = group_of(item)
    return item.nodeid.split("::", 1)[0] if group is None else "group:" + group


def heavy_units_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The tests regrouped by work unit (each unit's tests in their order): units holding a
    ``heavy`` test or a shared fixture's users first, then the others, most tests first."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(unit_of(item), []).append(item)

    def rank(unit: str) -> tuple[int, int]:
        tests = units[unit]
        heavy = unit.removeprefix("group:") in SHARED_FIXTURE_GROUPS or any(
            t.get_closest_marker(HEAVY) is not None for t in tests
        )
        return (0 if heavy else 1, -len(tests))

    return [item for unit in sorted(units, key=rank) for item in units[unit]]


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
    """With ``--dist loadgroup``: work units are groups, else whole modules."""
    if config.getvalue("dist") != "loadgroup":
        return None
    config.option.loadscopereorder = False  # keep the order heavy_units_first chose
    return _module_or_group_scheduling(config, log)


def work_unit(nodeid: str, groups: dict[str, str] | None = None) -> str:
    """The work unit of a test: ``group:NAME`` for a test of ``xdist_group`` NAME (named in
    ``groups``, the workers' file, or by the ``@NAME`` suffix xdist gives its node id where the
    pytest version reads it), else its module's path."""
    if groups and nodeid in groups:
        return "group:" + groups[nodeid]
    at = nodeid.rfind("@")
    if at > nodeid.rfind("]"):  # an ``@`` inside a parameter id is not a group
        return "group:" + nodeid[at + 1 :]
    return nodeid.split("::", 1)[0]


def read_groups() -> dict[str, str]:
    """The groups the workers wrote (empty when there is no file or nothing in it yet)."""
    path = os.environ.get(GROUPS_ENV)
    if not path:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    loaded: dict[str, str] = json.loads(text) if text.strip() else {}
    return loaded


def _module_or_group_scheduling(config: pytest.Config, log: Any) -> LoadScopeScheduling:
    from xdist.scheduler import LoadScopeScheduling

    class ModuleOrGroupScheduling(LoadScopeScheduling):
        """xdist's scope scheduling with one work unit per module or per ``xdist_group``.

        The groups come from the workers' file (:data:`GROUPS_ENV`), read once all of them
        have collected (the scheduler splits the tests only then)."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                self.groups = read_groups()
            return work_unit(nodeid, self.groups)

    return ModuleOrGroupScheduling(config, log)
