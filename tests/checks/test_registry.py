"""The Check protocol and registry: plugins register like built-ins; nothing escapes run_checks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from checks import (
    Check,
    CheckResult,
    CheckStatus,
    Document,
    Evidence,
    register_check,
    registered_checks,
    run_checks,
    unregister_check,
)
from regua.registry import DuplicatePluginError
from tasks import TaskSpec
from tests.checks.conftest import svg

BUILTIN_IDS = [
    "parse",
    "root",
    "viewbox",
    "size",
    "script",
    "event-handler",
    "javascript-url",
    "external-ref",
    "foreign-object",
    "raster-image",
    "animation",
    "doctype",
    "required-ids",
    "render-cost",
]


@dataclass(frozen=True)
class TitleCheck:
    """A plugin: fails documents without a <title>."""

    id: str = "plugin-title"
    version: str = "7"
    needs_tree: bool = True

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        del task  # Check protocol; a title is needed under every task
        assert doc.root is not None
        titles = [el for el in doc.root.iter() if str(el.tag).endswith("}title")]
        status: CheckStatus = "pass" if titles else "fail"
        return CheckResult(self.id, self.version, status, (Evidence(f"{len(titles)} titles"),))


@dataclass(frozen=True)
class Exploding:
    id: str = "plugin-explodes"
    version: str = "1"
    needs_tree: bool = False

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        del doc, task  # Check protocol; this plugin only ever raises
        raise RuntimeError("boom")


@dataclass(frozen=True)
class Liar:
    id: str = "plugin-liar"
    version: str = "1"
    needs_tree: bool = False

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        del doc, task  # Check protocol; this plugin answers the same nonsense for everything
        bogus: Any = "maybe"
        return CheckResult(self.id, self.version, bogus, ())


@pytest.fixture
def plugins() -> Iterator[None]:
    yield
    for cid in ("plugin-title", "plugin-explodes", "plugin-liar"):
        unregister_check(cid)


def test_builtins_are_registered_in_order() -> None:
    assert [c.id for c in registered_checks()][: len(BUILTIN_IDS)] == BUILTIN_IDS
    assert all(isinstance(c, Check) for c in registered_checks())
    assert all(c.version for c in registered_checks())


@pytest.mark.usefixtures("plugins")
def test_plugin_runs_like_a_builtin(static_task: TaskSpec) -> None:
    register_check(TitleCheck())
    report = run_checks(svg("<rect/>"), static_task)
    result = report.result("plugin-title")
    assert result is not None and result.status == "fail" and result.version == "7"
    assert run_checks(svg("<title>t</title>"), static_task).status == "pass"
    assert register_check(TitleCheck()) == TitleCheck()  # the same content again: a no-op
    with pytest.raises(DuplicatePluginError, match="plugin-title is already registered"):
        register_check(TitleCheck(version="8"))  # other content under a taken id: refused


@pytest.mark.usefixtures("plugins")
def test_a_raising_or_lying_check_fails_closed(static_task: TaskSpec) -> None:
    register_check(Exploding())
    register_check(Liar())
    report = run_checks(svg("<rect/>"), static_task)
    boom = report.result("plugin-explodes")
    liar = report.result("plugin-liar")
    assert boom is not None and boom.status == "fail" and "RuntimeError" in boom.evidence[0].message
    assert (
        liar is not None and liar.status == "fail" and "invalid result" in liar.evidence[0].message
    )
    assert report.status == "fail"


@pytest.mark.usefixtures("plugins")
def test_the_suite_follows_every_change_of_the_registry(static_task: TaskSpec) -> None:
    before = registered_checks()
    assert registered_checks() is before  # unchanged registry: the same tuple, not rebuilt
    register_check(TitleCheck())
    assert [c.id for c in registered_checks()] == [c.id for c in before] + ["plugin-title"]
    assert run_checks(svg("<rect/>"), static_task).result("plugin-title") is not None
    register_check(TitleCheck(version="8"), replace=True)
    assert registered_checks()[-1] == TitleCheck(version="8")
    unregister_check("plugin-title")
    assert registered_checks() == before
    assert run_checks(svg("<rect/>"), static_task).result("plugin-title") is None


def test_tree_checks_are_skipped_when_parse_fails(static_task: TaskSpec) -> None:
    report = run_checks("<svg", static_task)
    assert [r.id for r in report.results] == ["parse", "size", "doctype"]
    assert report.failed == ("parse",)


def test_report_dict_is_json_shaped(static_task: TaskSpec) -> None:
    import json

    d = run_checks(svg("<rect/>"), static_task).to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["status"] == "pass" and d["task"] == "pelican-bicycle-static@1"
    assert [c["id"] for c in d["checks"]] == BUILTIN_IDS
    assert set(d["checks"][0]) == {"id", "version", "status", "evidence"}
    assert set(d["checks"][0]["evidence"][0]) == {"message", "line", "path", "snippet"}
