"""Fixtures of the checks area: tasks, and the self-describing sample fixtures."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from checks.findings import Scan
from checks.scan import element_path
from tasks import TaskSpec, bundled_registry

HEADER = re.compile(r"<!-- regua-fixture: task=(\S+) expect=(pass|fail)(?: fails=(\S+))? -->")
SVG_NS = "http://www.w3.org/2000/svg"


@dataclass(frozen=True)
class Fixture:
    """A sample SVG with its declared task and expected outcome (read from its header)."""

    path: Path
    task: str
    expect: str
    fails: str | None


def read_fixture(path: Path) -> Fixture:
    """Parse the ``regua-fixture`` header comment of a sample."""
    m = HEADER.search(path.read_text(encoding="utf-8-sig"))
    assert m is not None, f"{path} has no regua-fixture header"
    return Fixture(path, m.group(1), m.group(2), m.group(3))


def task(ref: str) -> TaskSpec:
    """A bundled task by reference."""
    return bundled_registry().get(ref)


@pytest.fixture(scope="session")
def static_task() -> TaskSpec:
    """pelican-bicycle-static@1."""
    return task("pelican-bicycle-static@1")


def svg(body: str, extra: str = "") -> str:
    """A minimal valid document for the static task around ``body``."""
    return f'<svg xmlns="{SVG_NS}" viewBox="0 0 800 600"{extra}>{body}</svg>'


def scan_state(scan: Scan, *, with_bound: bool) -> tuple[object, ...]:
    """What a walk of the document recorded, to compare two walks of it.

    ``with_bound``: also the values' length bound, which only walks that pool values the same
    way share (the compiled and the column walk; the node walk bounds them differently).
    """
    bound = (scan.value_bound,) if with_bound else ()
    return (
        scan.findings,
        scan.overflow,
        scan.element_count,
        scan.uses_local_refs,
        scan.truncated,
        *bound,
        scan.longest_value,
        {tag: [element_path(e) for e in els] for tag, els in scan.tracked.items()},
    )
