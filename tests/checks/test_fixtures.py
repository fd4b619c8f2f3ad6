"""The project's own fixtures: each failing sample fails exactly the check it is named for."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import check_reply, registered_checks
from tests.checks.conftest import read_fixture, task

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "checks"
FAIL = sorted((SAMPLES / "fail").glob("*.svg"))
PASS = sorted((SAMPLES / "pass").glob("*.svg"))


def test_every_check_id_has_a_failing_fixture() -> None:
    named = {p.name.split("--")[0].removesuffix(".svg") for p in FAIL}
    assert {c.id for c in registered_checks()} <= named


@pytest.mark.parametrize("path", FAIL, ids=lambda p: p.name)
def test_failing_fixture_fails_exactly_its_check(path: Path) -> None:
    fx = read_fixture(path)
    expected = path.name.split("--")[0].removesuffix(".svg")
    assert fx.expect == "fail" and fx.fails == expected
    report = check_reply(path.read_bytes(), task(fx.task))
    assert report.status == "fail"
    assert report.failed == (expected,), report.to_dict()
    failing = report.result(expected)
    assert failing is not None and failing.evidence
    assert all(e.message for e in failing.evidence)
    if expected not in {"required-ids", "size", "doctype", "parse"}:
        assert failing.evidence[0].line is not None


@pytest.mark.parametrize("path", PASS, ids=lambda p: p.name)
def test_clean_pelicans_pass(path: Path) -> None:
    fx = read_fixture(path)
    report = check_reply(path.read_bytes(), task(fx.task))
    assert report.status == "pass", report.to_dict()
    statuses = {r.id: r.status for r in report.results}
    assert len(statuses) == len(registered_checks())
    assert set(statuses.values()) <= {"pass", "not_applicable"}


def test_animated_pelican_is_not_applicable_for_animation_and_fails_static() -> None:
    body = (SAMPLES / "pass" / "pelican-animated.svg").read_bytes()
    animated = check_reply(body, task("pelican-bicycle-animated@1"))
    result = animated.result("animation")
    assert result is not None and result.status == "not_applicable"
    static = check_reply(body, task("pelican-bicycle-static@1"))
    assert static.failed == ("animation",)


def test_bundled_structured_sample_passes() -> None:
    sample = Path(__file__).resolve().parents[2] / "samples" / "outputs" / "structured-good.svg"
    report = check_reply(sample.read_bytes(), task("pelican-bicycle-structured@1"))
    assert report.status == "pass", report.failed
